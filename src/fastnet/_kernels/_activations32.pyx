"""The float32 activation functions, for tests and benchmarks (_activations32.h).

The activation template of _activations.h at the value type float (sixteen lanes
per AVX-512 vector, eight per AVX2, four in the baseline), reached at each CPU level
this process runs, as ``_forward.activation_at_level`` reaches the float64 forms; and
exp rows of either type.
"""
from fastnet._kernels._forward cimport check_activation_rows

cdef extern from "_activations32.h" nogil:
    int fn_a32_activate_at(int level, int code, Py_ssize_t nb, Py_ssize_t size, float* Z, float* D)
    int fn_a32_exp_at(int level, Py_ssize_t n, float* z)
    int fn_a32_exp64_at(int level, Py_ssize_t n, double* z)


def activation32_at_level(int level, int code, float[:, ::1] Z, float[:, ::1] D=None):
    """Apply an elementwise activation to float32 rows in place, at one CPU level.

    Parameters
    ----------
    level : 2 x86-64-v4 (AVX-512), 1 x86-64-v3 (AVX2 + FMA), 0 the portable baseline;
        -1 the level this process runs at.
    code : activation code (``fastnet.network.ACTIVATIONS``; not softmax).
    Z : (rows, units) float32, overwritten with f(Z).
    D : None, or float32 of Z's shape: overwritten with f'(Z).

    Returns
    -------
    done : bool, False when this build or CPU has no such level (Z untouched).
    """
    check_activation_rows(code, Z.shape[0], Z.shape[1], D is not None,
                          D.shape[0] if D is not None else 0, D.shape[1] if D is not None else 0)
    cdef int done
    cdef Py_ssize_t nb = Z.shape[0], size = Z.shape[1]
    if nb == 0 or size == 0:
        return True
    cdef float* dp = &D[0, 0] if D is not None else NULL
    with nogil:
        done = fn_a32_activate_at(level, code, nb, size, &Z[0, 0], dp)
    return bool(done)


ctypedef fused real:
    float
    double


def exp_at_level(int level, real[::1] z):
    """exp of a float32 or float64 vector in place, at one CPU level.

    Parameters
    ----------
    level : 2 x86-64-v4 (AVX-512), 1 x86-64-v3 (AVX2 + FMA), 0 the portable baseline;
        -1 the level this process runs at.
    z : (n,) float32 or float64, overwritten with exp(z) (float32: the template's
        float forms; float64: the ones softmax runs).

    Returns
    -------
    done : bool, False when this build or CPU has no such level (z untouched).
    """
    cdef int done
    cdef Py_ssize_t n = z.shape[0]
    if n == 0:
        return True
    with nogil:
        if real is float:
            done = fn_a32_exp_at(level, n, &z[0])
        else:
            done = fn_a32_exp64_at(level, n, &z[0])
    return bool(done)
