cdef double output_deltas(const double* A, Py_ssize_t lda, const double* T,
                          Py_ssize_t ldt, const double* D, double* Dl,
                          Py_ssize_t ldd, Py_ssize_t n_out, Py_ssize_t nb) noexcept nogil

cdef void backward_rows(const Py_ssize_t* layers, Py_ssize_t n_layers,
                        const double* w, const double* A, Py_ssize_t lda,
                        const double* D, double* Dl, Py_ssize_t ldd,
                        Py_ssize_t n_in, Py_ssize_t nb, double* g,
                        Py_ssize_t blas_min) noexcept nogil

cdef double output_objective(int loss, int act, const double* A, Py_ssize_t lda,
                             const double* T, Py_ssize_t ldt, const double* D, double* Dl,
                             Py_ssize_t ldd, Py_ssize_t n_out, Py_ssize_t nb) noexcept nogil

cdef double add_weight_decay(const double* w, double* g, Py_ssize_t n_w,
                             double decay) noexcept nogil

cdef double epoch_objective(const Py_ssize_t* layers, Py_ssize_t n_layers,
                            Py_ssize_t n_in, double* A, Py_ssize_t n_rows,
                            Py_ssize_t lda, const double* T, Py_ssize_t ldt,
                            const double* w, double* g, Py_ssize_t n_w,
                            double* D, double* Dl, Py_ssize_t ldd,
                            Py_ssize_t block, Py_ssize_t blas_min, int loss,
                            double decay) noexcept nogil

cdef int check_objective(const Py_ssize_t[:, ::1] layers, int loss, double decay) except -1
