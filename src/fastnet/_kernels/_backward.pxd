from fastnet._kernels._types cimport real_t

# The backward pass over either value type (real_t: double or float; the
# pointers' type picks the instance). Objectives are returned in double.
cdef double output_deltas(const real_t* A, Py_ssize_t lda, const real_t* T,
                          Py_ssize_t ldt, const real_t* D, real_t* Dl,
                          Py_ssize_t ldd, Py_ssize_t n_out, Py_ssize_t nb) noexcept nogil

cdef void backward_rows(const Py_ssize_t* layers, Py_ssize_t n_layers,
                        const real_t* w, const real_t* A, Py_ssize_t lda,
                        const real_t* D, real_t* Dl, Py_ssize_t ldd,
                        Py_ssize_t n_in, Py_ssize_t nb, real_t* g,
                        Py_ssize_t blas_min) noexcept nogil

cdef double output_objective(int loss, int act, const real_t* A, Py_ssize_t lda,
                             const real_t* T, Py_ssize_t ldt, const real_t* D, real_t* Dl,
                             Py_ssize_t ldd, Py_ssize_t n_out, Py_ssize_t nb) noexcept nogil

cdef double add_weight_decay(const real_t* w, real_t* g, Py_ssize_t n_w,
                             double decay) noexcept nogil

# What an epoch_objective call trains on besides its arrays, by name: the network
# (its layer table and input count), the blocking and the objective. Built once
# per kernel call with net_objective_of; the arrays, of either value type, travel
# beside it.
ctypedef struct net_objective:
    const Py_ssize_t* layers
    Py_ssize_t n_layers
    Py_ssize_t n_in
    Py_ssize_t block        # rows per forward/backward block (the workspaces' rows)
    Py_ssize_t blas_min     # BLAS threshold on m*n*k
    int loss                # objective code (LOSS_* of _constants.h)
    double decay            # L2 weight decay lambda >= 0

cdef inline net_objective net_objective_of(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                                          Py_ssize_t block, Py_ssize_t blas_min, int loss,
                                          double decay) noexcept nogil:
    cdef net_objective o
    o.layers = &layers[0, 0]
    o.n_layers = layers.shape[0]
    o.n_in = n_in
    o.block = block
    o.blas_min = blas_min
    o.loss = loss
    o.decay = decay
    return o

cdef double epoch_objective(const net_objective* o, real_t* A, Py_ssize_t n_rows,
                            Py_ssize_t lda, const real_t* T, Py_ssize_t ldt, const real_t* w,
                            real_t* g, Py_ssize_t n_w, real_t* D, real_t* Dl,
                            Py_ssize_t ldd) noexcept nogil

cdef int check_objective(const Py_ssize_t[:, ::1] layers, int loss, double decay) except -1
