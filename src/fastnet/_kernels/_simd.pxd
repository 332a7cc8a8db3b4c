# The register-tiled layer products and the choice among them (_simd.h), compiled
# into this one module; _types.pxd's gemm_* call them through simd_gemm:
#     from fastnet._kernels._simd cimport simd_gemm
# and the BLAS and LAPACK routines the kernels use, SciPy's (scipy.linalg.cython_blas,
# cython_lapack), found when this module is imported rather than cimported at build
# time: the build then needs no SciPy, and a new SciPy in the build environment does
# not make every module that uses them compile again.

# The value types of the kernels (float64, float32): one fused type for every
# kernel written over both (fastnet._kernels._types cimports it from here, the
# module every other one cimports).
ctypedef fused real_t:
    double
    float

cdef bint simd_gemm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                    const double* A, Py_ssize_t lda, const double* B, Py_ssize_t ldb,
                    double beta, double* C, Py_ssize_t ldc, const double* bias,
                    const double* scale, Py_ssize_t lds) noexcept nogil
cdef bint simd_gemm_f32(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                        const float* A, Py_ssize_t lda, const float* B, Py_ssize_t ldb,
                        double beta, float* C, Py_ssize_t ldc, const float* bias,
                        const float* scale, Py_ssize_t lds) noexcept nogil

cdef void blas_dgemm(char* transa, char* transb, int* m, int* n, int* k, double* alpha,
                     double* a, int* lda, double* b, int* ldb, double* beta, double* c,
                     int* ldc) noexcept nogil
cdef void blas_dgemv(char* trans, int* m, int* n, double* alpha, double* a, int* lda,
                     double* x, int* incx, double* beta, double* y, int* incy) noexcept nogil
cdef void blas_dsyrk(char* uplo, char* trans, int* n, int* k, double* alpha, double* a,
                     int* lda, double* beta, double* c, int* ldc) noexcept nogil
cdef void blas_sgemm(char* transa, char* transb, int* m, int* n, int* k, float* alpha,
                     float* a, int* lda, float* b, int* ldb, float* beta, float* c,
                     int* ldc) noexcept nogil
cdef void lapack_dpotrf(char* uplo, int* n, double* a, int* lda, int* info) noexcept nogil
cdef void lapack_dpotrs(char* uplo, int* n, int* nrhs, double* a, int* lda, double* b,
                        int* ldb, int* info) noexcept nogil
