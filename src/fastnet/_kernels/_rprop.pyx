"""RPROP's step of every weight of one network (Riedmiller & Braun 1993; variants after
Igel & Hüsken 2000), for other Cython extensions (_rprop.pxd), and Hamey's success
check of one network, for the epoch loops (_per_weight.pyx, _backprop.pyx). The
epochs themselves run in _per_weight.pyx's loop, with every per-weight rule."""
from libc.math cimport isfinite

from fastnet._kernels._forward cimport forward_blocks
from fastnet._kernels._types cimport L_START

# Variant codes RPROP_PLUS .. IRPROP_PLUS are declared in _rprop.pxd, from the
# rules' table (_rules.h; fastnet.rprop.VARIANTS maps names to them). The rule and the
# success check are written once, in C, in _rules.h; _rule.h is their instance
# for one value (the lanes' for many trials at once are in _lanes.h).
cdef extern from "_rule.h" nogil:
    ctypedef struct fn_rprop_steps:
        double eta_plus, eta_minus, step_min, step_max
    void fn_rprop_1(int variant, double* w, const double* g, double* g_prev, double* step,
                    double* dw_prev, const int* rose, const fn_rprop_steps* k)
    void fn_correct_1(int* ok, const double* y, double t, double r_c, double analog)


cdef void rprop_update(int variant, Py_ssize_t n, double* w, double* g,
                       double* g_prev, double* dw_prev, double* step,
                       double eta_plus, double eta_minus, double step_min,
                       double step_max, bint error_rose) noexcept nogil:
    """One RPROP step of every weight, given the epoch gradient g (Riedmiller & Braun 1993;
    Igel & Hüsken 2000): fn_rprop_1 of _rule.h for each."""
    cdef Py_ssize_t i
    cdef int rose = error_rose
    cdef fn_rprop_steps k
    k.eta_plus, k.eta_minus, k.step_min, k.step_max = eta_plus, eta_minus, step_min, step_max
    for i in range(n):
        fn_rprop_1(variant, &w[i], &g[i], &g_prev[i], &step[i], &dw_prev[i], &rose, &k)


def rprop_step(int variant, double[::1] w, double[::1] g, double[::1] g_prev,
               double[::1] dw_prev, double[::1] step, double eta_plus,
               double eta_minus, double step_min, double step_max,
               bint error_rose):
    """Python twin of the RPROP update for tests (all vectors of equal length).

    Returns
    -------
    status : int, 0.
    """
    cdef Py_ssize_t n = w.shape[0]
    if g.shape[0] != n or g_prev.shape[0] != n or dw_prev.shape[0] != n or step.shape[0] != n:
        raise ValueError("kernel: RPROP vectors differ in length")
    if variant < 0 or variant > 3:
        raise ValueError("kernel: unknown RPROP variant")
    if n == 0:
        return 0
    with nogil:
        rprop_update(variant, w.shape[0], &w[0], &g[0], &g_prev[0], &dw_prev[0],
                     &step[0], eta_plus, eta_minus, step_min, step_max, error_rose)
    return 0


cdef bint network_correct(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                          const double[::1] w, double[:, ::1] A, const double[:, ::1] T,
                          Py_ssize_t block, Py_ssize_t blas_min, double r_c,
                          double analog) noexcept nogil:
    """Hamey's success check at the current weights: a forward pass over A, then
    every output right by the threshold rule (fn_correct_1 of _rule.h)."""
    cdef Py_ssize_t r, k, n_out = T.shape[1]
    cdef Py_ssize_t out0 = layers[layers.shape[0] - 1, L_START]
    cdef int ok = 1
    forward_blocks(layers, n_in, w, A, NULL, block, blas_min)
    for r in range(A.shape[0]):
        for k in range(n_out):
            fn_correct_1(&ok, &A[r, out0 + k], T[r, k], r_c, analog)
            if not ok:
                return False
    return True
