from fastnet._kernels._types cimport real_t

# The forward pass over either value type (real_t: double or float; the
# pointers' type picks the instance).
cdef void forward_rows(const Py_ssize_t* layers, Py_ssize_t n_layers,
                       const real_t* w, real_t* A, Py_ssize_t lda,
                       real_t* D, Py_ssize_t ldd, Py_ssize_t n_in,
                       Py_ssize_t nb, Py_ssize_t blas_min) noexcept nogil

cdef int check_buffers(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                       Py_ssize_t n_rows, Py_ssize_t n_units, Py_ssize_t n_w,
                       Py_ssize_t t_rows, Py_ssize_t t_cols,
                       Py_ssize_t d_rows, Py_ssize_t d_cols) except -1

cdef int check_order(const Py_ssize_t[:, ::1] order, Py_ssize_t n_epochs,
                     Py_ssize_t n) except -1

cdef double forward_blocks(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                           const real_t[::1] w, real_t[:, ::1] A, const real_t* T,
                           Py_ssize_t block, Py_ssize_t blas_min) noexcept nogil

cdef int check_activation_rows(int code, Py_ssize_t rows, Py_ssize_t cols, bint has_d,
                               Py_ssize_t d_rows, Py_ssize_t d_cols) except -1

# The value type of a kernel call at the Python boundary: value_bits gives 64
# (float64) or 32 (float32) from the call's leading array; check_dtypes raises
# TypeError, naming the argument, for an array of the other type.
cdef int value_bits(object a, str name) except -1
cdef int check_dtypes(int bits, tuple arrays, str names) except -1
