# The register-tiled layer products and the choice among them (_simd.h), compiled
# into this one module; _types.pxd's gemm_* call them through simd_gemm:
#     from fastnet._kernels._simd cimport simd_gemm

cdef bint simd_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                    const double* A, Py_ssize_t lda, const double* B, Py_ssize_t ldb,
                    double beta, double* C, Py_ssize_t ldc, const double* bias) noexcept nogil
