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
                     double beta, double* C, Py_ssize_t ldc, const double* bias)

# Decide once, at import (before any kernel can run, and outside threads).
fn_simd_init()

_NAMES = {2: "avx512", 1: "avx2"}


cdef bint simd_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                    const double* A, Py_ssize_t lda, const double* B, Py_ssize_t ldb,
                    double beta, double* C, Py_ssize_t ldc, const double* bias) noexcept nogil:
    """Row-major C (m x n) = op(A) op(B) + beta C (+ bias[j] per row) with the tiles.

    op(X) is X for ``'N'``, X^T for ``'T'``; op(A) is m x k, op(B) k x n; beta
    0 or 1. Returns True when the tiles computed it, False when the caller must
    (C untouched): no tiles at this level, or a product they decline.
    """
    return fn_simd_gemm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc, bias) != 0


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
