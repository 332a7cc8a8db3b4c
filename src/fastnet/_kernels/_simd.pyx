"""The register-tiled layer products (AVX2, AVX-512) and the one choice among them.

The CPU check and the level it sets live here only (see _simd.h); the other
kernel modules call :c:func:`simd_gemm` through ``cimport`` (a function pointer
that Cython hands over as a capsule), so the choice is made once per process,
when this module is imported.
"""
cdef extern from *:
    """
    #define FASTNET_SIMD_MODULE 1  /* the one module that compiles _simd.h */
    """

cdef extern from "_simd.h" nogil:
    int fn_simd_init()
    int fn_simd_level()
    int fn_simd_compiled()
    int fn_simd_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                     const double* A, Py_ssize_t lda, const double* B, Py_ssize_t ldb,
                     double beta, double* C, Py_ssize_t ldc, const double* bias,
                     const double* scale, Py_ssize_t lds)
    int fn_simd_gemm_f32(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                         const float* A, Py_ssize_t lda, const float* B, Py_ssize_t ldb,
                         double beta, float* C, Py_ssize_t ldc, const float* bias,
                         const float* scale, Py_ssize_t lds)

# Decide once, at import (before any kernel can run, and outside threads).
fn_simd_init()

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer

ctypedef void (*dgemm_t)(char*, char*, int*, int*, int*, double*, double*, int*, double*,
                         int*, double*, double*, int*) noexcept nogil
ctypedef void (*dgemv_t)(char*, int*, int*, double*, double*, int*, double*, int*, double*,
                         double*, int*) noexcept nogil
ctypedef void (*dsyrk_t)(char*, char*, int*, int*, double*, double*, int*, double*, double*,
                         int*) noexcept nogil
ctypedef void (*sgemm_t)(char*, char*, int*, int*, int*, float*, float*, int*, float*,
                         int*, float*, float*, int*) noexcept nogil
ctypedef void (*dpotrf_t)(char*, int*, double*, int*, int*) noexcept nogil
ctypedef void (*dpotrs_t)(char*, int*, int*, double*, int*, double*, int*, int*) noexcept nogil

cdef dgemm_t _dgemm
cdef dgemv_t _dgemv
cdef dsyrk_t _dsyrk
cdef sgemm_t _sgemm
cdef dpotrf_t _dpotrf
cdef dpotrs_t _dpotrs


cdef void* _scipy_routine(module, str name) except NULL:
    # SciPy exports each routine as a capsule named by its C signature (Cython's
    # __pyx_capi__, the interface scipy.linalg.cython_blas documents for C callers).
    capsule = module.__pyx_capi__[name]
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


def _load_scipy_routines():
    from scipy.linalg import cython_blas, cython_lapack
    global _dgemm, _dgemv, _dsyrk, _sgemm, _dpotrf, _dpotrs
    _dgemm = <dgemm_t>_scipy_routine(cython_blas, "dgemm")
    _dgemv = <dgemv_t>_scipy_routine(cython_blas, "dgemv")
    _dsyrk = <dsyrk_t>_scipy_routine(cython_blas, "dsyrk")
    _sgemm = <sgemm_t>_scipy_routine(cython_blas, "sgemm")
    _dpotrf = <dpotrf_t>_scipy_routine(cython_lapack, "dpotrf")
    _dpotrs = <dpotrs_t>_scipy_routine(cython_lapack, "dpotrs")


_load_scipy_routines()


cdef void blas_dgemm(char* transa, char* transb, int* m, int* n, int* k, double* alpha,
                     double* a, int* lda, double* b, int* ldb, double* beta, double* c,
                     int* ldc) noexcept nogil:
    """BLAS dgemm (column-major), SciPy's."""
    _dgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef void blas_dgemv(char* trans, int* m, int* n, double* alpha, double* a, int* lda,
                     double* x, int* incx, double* beta, double* y, int* incy) noexcept nogil:
    """BLAS dgemv, SciPy's."""
    _dgemv(trans, m, n, alpha, a, lda, x, incx, beta, y, incy)


cdef void blas_dsyrk(char* uplo, char* trans, int* n, int* k, double* alpha, double* a,
                     int* lda, double* beta, double* c, int* ldc) noexcept nogil:
    """BLAS dsyrk, SciPy's."""
    _dsyrk(uplo, trans, n, k, alpha, a, lda, beta, c, ldc)


cdef void blas_sgemm(char* transa, char* transb, int* m, int* n, int* k, float* alpha,
                     float* a, int* lda, float* b, int* ldb, float* beta, float* c,
                     int* ldc) noexcept nogil:
    """BLAS sgemm (column-major), SciPy's."""
    _sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


cdef void lapack_dpotrf(char* uplo, int* n, double* a, int* lda, int* info) noexcept nogil:
    """LAPACK dpotrf (Cholesky factor), SciPy's."""
    _dpotrf(uplo, n, a, lda, info)


cdef void lapack_dpotrs(char* uplo, int* n, int* nrhs, double* a, int* lda, double* b,
                        int* ldb, int* info) noexcept nogil:
    """LAPACK dpotrs (solve with a Cholesky factor), SciPy's."""
    _dpotrs(uplo, n, nrhs, a, lda, b, ldb, info)

_NAMES = {2: "avx512", 1: "avx2"}


cdef bint simd_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                    const double* A, Py_ssize_t lda, const double* B, Py_ssize_t ldb,
                    double beta, double* C, Py_ssize_t ldc, const double* bias,
                    const double* scale, Py_ssize_t lds) noexcept nogil:
    """Row-major C (m x n) = op(A) op(B) + beta C (+ bias[j] per row) with the tiles.

    op(X) is X for ``'N'``, X^T for ``'T'``; op(A) is m x k, op(B) k x n; beta
    0 or 1. With ``scale`` (``'N','N'`` only) each finished element is multiplied
    by ``scale[i * lds + j]`` before it is stored. Returns True when the tiles
    computed it, False when the caller must (C untouched): no tiles at this
    level, or a product they decline.
    """
    return fn_simd_gemm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc, bias, scale, lds) != 0


cdef bint simd_gemm_f32(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                        const float* A, Py_ssize_t lda, const float* B, Py_ssize_t ldb,
                        double beta, float* C, Py_ssize_t ldc, const float* bias,
                        const float* scale, Py_ssize_t lds) noexcept nogil:
    """simd_gemm over float32 (the same contract)."""
    return fn_simd_gemm_f32(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc, bias, scale,
                            lds) != 0


def simd_level():
    """Return the layer products this process uses: ``"avx512"``, ``"avx2"`` or ``"default"``.

    ``"avx512"`` and ``"avx2"`` are the register-tiled kernels of _tiles.h for
    that instruction set; ``"default"`` the loops of _loops.h (compiled per CPU
    level and chosen by the loader) and BLAS. The CPU decides; ``FASTNET_SIMD=avx2``
    or ``FASTNET_SIMD=none`` in the environment before import caps the level.
    """
    return _NAMES.get(fn_simd_level(), "default")


def simd_compiled():
    """The highest level this build contains (``"avx512"``, ``"avx2"`` or ``"default"``):
    GCC >= 10 on x86-64 builds both sets of tiles unless FASTNET_NO_SIMD_TILES is defined."""
    return _NAMES.get(fn_simd_compiled(), "default")


cdef Py_ssize_t _row_stride(const real_t[:, :] X) except -1:
    """The row stride of X in elements; its elements must be contiguous."""
    cdef Py_ssize_t s = sizeof(real_t)
    if X.strides[1] != s or X.strides[0] % s or X.strides[0] < X.shape[1] * s:
        raise ValueError("rows must be contiguous, with a stride of whole elements")
    return X.strides[0] // s


def gemm(ta, tb, A, B, C, double beta=0.0, bias=None, scale=None):
    """C = (op(A) @ op(B) + beta C (+ bias)) (* scale) in place with the tiles; True if they ran.

    For tests: ``ta``/``tb`` are ``"N"`` or ``"T"``; the arrays all float64 or all
    float32 (:c:func:`simd_gemm_f32`); rows may be strided (views
    of padded arrays), elements must be contiguous; ``scale`` (C's shape)
    multiplies each element before it is stored. False (C untouched) where the
    tiles decline, as :c:func:`simd_gemm` does.
    """
    for name, X in (("B", B), ("C", C), ("bias", bias), ("scale", scale)):
        if X is not None and getattr(X, "dtype", None) != A.dtype:
            raise TypeError(f"`{name}` must have the dtype of `A` ({A.dtype}), got "
                            f"{getattr(X, 'dtype', type(X).__name__)}")
    return _gemm(ta, tb, A, B, C, beta, bias, scale)


def _gemm(ta, tb, const real_t[:, :] A, const real_t[:, :] B, real_t[:, :] C,
          double beta=0.0, const real_t[:] bias=None, const real_t[:, :] scale=None):
    """gemm over one value type (the arrays checked to share it)."""
    if ta not in ("N", "T") or tb not in ("N", "T"):
        raise ValueError("ta and tb must be 'N' or 'T'")
    cdef Py_ssize_t m = A.shape[1] if ta == "T" else A.shape[0]
    cdef Py_ssize_t k = A.shape[0] if ta == "T" else A.shape[1]
    cdef Py_ssize_t kb = B.shape[1] if tb == "T" else B.shape[0]
    cdef Py_ssize_t n = B.shape[0] if tb == "T" else B.shape[1]
    if kb != k or C.shape[0] != m or C.shape[1] != n:
        raise ValueError(f"shapes do not fit: op(A) {m}x{k}, op(B) {kb}x{n}, C {C.shape[0]}x{C.shape[1]}")
    if bias is not None and bias.shape[0] != n:
        raise ValueError("bias must have one value per column of C")
    cdef Py_ssize_t lda = _row_stride(A), ldb = _row_stride(B), ldc = _row_stride(C)
    if bias is not None and bias.strides[0] != sizeof(real_t):
        raise ValueError("bias must be contiguous")
    if scale is not None and (scale.shape[0] != m or scale.shape[1] != n):
        raise ValueError(f"scale must have C's shape {m}x{n}, got {scale.shape[0]}x{scale.shape[1]}")
    cdef Py_ssize_t lds = _row_stride(scale) if scale is not None else 0
    if m == 0 or n == 0 or k == 0:
        return False
    cdef char cta = b"T" if ta == "T" else b"N"
    cdef char ctb = b"T" if tb == "T" else b"N"
    cdef const real_t* b = &bias[0] if bias is not None else NULL
    cdef const real_t* sp = &scale[0, 0] if scale is not None else NULL
    cdef bint done
    with nogil:
        if real_t is double:
            done = simd_gemm(cta, ctb, m, n, k, &A[0, 0], lda, &B[0, 0], ldb, beta, &C[0, 0],
                             ldc, b, sp, lds)
        else:
            done = simd_gemm_f32(cta, ctb, m, n, k, &A[0, 0], lda, &B[0, 0], ldb, beta,
                                 &C[0, 0], ldc, b, sp, lds)
    return done
