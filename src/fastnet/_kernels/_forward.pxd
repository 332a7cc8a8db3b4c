cdef void forward_rows(const Py_ssize_t* layers, Py_ssize_t n_layers,
                       const double* w, double* A, Py_ssize_t lda,
                       double* D, Py_ssize_t ldd, Py_ssize_t n_in,
                       Py_ssize_t nb, Py_ssize_t blas_min) noexcept nogil

cdef int check_buffers(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                       Py_ssize_t n_rows, Py_ssize_t n_units, Py_ssize_t n_w,
                       Py_ssize_t t_rows, Py_ssize_t t_cols,
                       Py_ssize_t d_rows, Py_ssize_t d_cols) except -1

cdef int check_order(const Py_ssize_t[:, ::1] order, Py_ssize_t n_epochs,
                     Py_ssize_t n) except -1

cdef double forward_blocks(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                           const double[::1] w, double[:, ::1] A, const double* T,
                           Py_ssize_t block, Py_ssize_t blas_min) noexcept nogil

cdef int check_activation_rows(int code, Py_ssize_t rows, Py_ssize_t cols, bint has_d,
                               Py_ssize_t d_rows, Py_ssize_t d_cols) except -1
