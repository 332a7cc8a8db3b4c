# Shared declarations and inline helpers of the fastnet kernels.
#
# Memory layout (see fastnet/network.py for the Python side):
#
# * One activation row per example holds every unit of the network:
#   [inputs | hidden layer 1 | ... | hidden layer k | outputs]. A layer reads a
#   *contiguous* column range [src_lo, src_hi) of that row: with shortcut
#   connections the range is [0, start) (every earlier unit), without it is the
#   previous layer only. So shortcuts cost no copies.
# * Weights are one flat float64 vector. Layer j owns W_j, row-major of shape
#   (size_j, src_hi - src_lo), at offset w_off, followed by its biases at b_off.
# * Derivatives f'(net) and back-propagated errors dE/da are kept for non-input
#   units only, in (block, n_units - n_in) buffers.
#
# Helpers here are `noexcept nogil` (Cython 3 would otherwise add exception
# checks to every call).

# The value types (float64, float32) as one fused type: a pass written over
# real_t compiles once per type, and the helpers below take either (each calls
# the C function of its type; the float64 specialisation is the call it always
# was). Every real-valued array of one call has one type.
from fastnet._kernels._simd cimport (real_t, blas_dgemm, blas_sgemm, simd_gemm,
                                     simd_gemm_f32)

cdef extern from "_loops.h" nogil:
    # Narrow-layer loops in C, written once over the value type and compiled per
    # CPU level (see _loops.h): fn_loops_x over double (declared here as
    # fn_loops_x_f64), fn_loops_x_f32 over float; the fused fn_loops_x below
    # takes either.
    void fn_loops_forward_f64 "fn_loops_forward"(
        Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src, const double* A, Py_ssize_t lda,
        const double* W, double* Z, Py_ssize_t ldz)
    void fn_loops_forward_f32(
        Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src, const float* A, Py_ssize_t lda,
        const float* W, float* Z, Py_ssize_t ldz)
    void fn_loops_gradient_f64 "fn_loops_gradient"(
        Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src, const double* Delta, Py_ssize_t ldd,
        const double* A, Py_ssize_t lda, double* G)
    void fn_loops_gradient_f32(
        Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src, const float* Delta, Py_ssize_t ldd,
        const float* A, Py_ssize_t lda, float* G)
    void fn_loops_backprop_f64 "fn_loops_backprop"(
        Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src, const double* Delta, Py_ssize_t ldd,
        const double* W, Py_ssize_t ldw, double* dA, Py_ssize_t ldda)
    void fn_loops_backprop_f32(
        Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src, const float* Delta, Py_ssize_t ldd,
        const float* W, Py_ssize_t ldw, float* dA, Py_ssize_t ldda)
    void fn_loops_proben1_f64 "fn_loops_proben1"(
        Py_ssize_t nb, Py_ssize_t size, double* Z, Py_ssize_t ldz, const double* b, double* D,
        Py_ssize_t ldd)
    void fn_loops_proben1_f32(
        Py_ssize_t nb, Py_ssize_t size, float* Z, Py_ssize_t ldz, const float* b, float* D,
        Py_ssize_t ldd)
    void fn_loops_linear_f64 "fn_loops_linear"(
        Py_ssize_t nb, Py_ssize_t size, double* Z, Py_ssize_t ldz, const double* b, double* D,
        Py_ssize_t ldd)
    void fn_loops_linear_f32(
        Py_ssize_t nb, Py_ssize_t size, float* Z, Py_ssize_t ldz, const float* b, float* D,
        Py_ssize_t ldd)
    # Every other activation through the vector functions of _activations.h.
    void fn_loops_activate_f64 "fn_loops_activate"(
        int code, Py_ssize_t nb, Py_ssize_t size, double* Z, Py_ssize_t ldz, const double* b,
        double* D, Py_ssize_t ldd)
    void fn_loops_activate_f32(
        int code, Py_ssize_t nb, Py_ssize_t size, float* Z, Py_ssize_t ldz, const float* b,
        float* D, Py_ssize_t ldd)
    int fn_loops_activate_at_f64 "fn_loops_activate_at"(
        int level, int code, Py_ssize_t nb, Py_ssize_t size, double* Z, Py_ssize_t ldz,
        const double* b, double* D, Py_ssize_t ldd)
    int fn_loops_activate_at_f32(
        int level, int code, Py_ssize_t nb, Py_ssize_t size, float* Z, Py_ssize_t ldz,
        const float* b, float* D, Py_ssize_t ldd)
    int fn_loops_load_rows_f64 "fn_loops_load_rows"(
        Py_ssize_t nb, Py_ssize_t n, const double* X, double* A, Py_ssize_t lda)
    int fn_loops_load_rows_f32(
        Py_ssize_t nb, Py_ssize_t n, const float* X, float* A, Py_ssize_t lda)
    int fn_loops_all_finite_f64 "fn_loops_all_finite"(Py_ssize_t n, const double* X)
    int fn_loops_all_finite_f32(Py_ssize_t n, const float* X)
    void fn_loops_softmax_f64 "fn_loops_softmax"(
        Py_ssize_t nb, Py_ssize_t size, double* Z, Py_ssize_t ldz, const double* b, double* D,
        Py_ssize_t ldd)
    void fn_loops_softmax_f32(
        Py_ssize_t nb, Py_ssize_t size, float* Z, Py_ssize_t ldz, const float* b, float* D,
        Py_ssize_t ldd)
    void fn_loops_deltas_bias_f64 "fn_loops_deltas_bias"(
        Py_ssize_t nb, Py_ssize_t size, double* Delta, Py_ssize_t ldd, const double* D,
        double* gb)
    void fn_loops_deltas_bias_f32(
        Py_ssize_t nb, Py_ssize_t size, float* Delta, Py_ssize_t ldd, const float* D, float* gb)
    # (the squared error in double at both types)
    double fn_loops_output_deltas_f64 "fn_loops_output_deltas"(
        Py_ssize_t nb, Py_ssize_t n_out, const double* Y, Py_ssize_t ldy, const double* T,
        Py_ssize_t ldt, const double* D, double* Delta, Py_ssize_t ldd)
    double fn_loops_output_deltas_f32(
        Py_ssize_t nb, Py_ssize_t n_out, const float* Y, Py_ssize_t ldy, const float* T,
        Py_ssize_t ldt, const float* D, float* Delta, Py_ssize_t ldd)

# The layer-table columns and activation codes, written once in _constants.h
# (the C headers of the lanes include it too). Layer table: an intp array of
# shape (n_layers, L_NCOLS).
cdef extern from "_constants.h":
    enum:
        L_START "FN_L_START"      # column of the layer's first unit in an activation row
        L_SIZE "FN_L_SIZE"        # number of units
        L_SRC_LO "FN_L_SRC_LO"    # first source column
        L_SRC_HI "FN_L_SRC_HI"    # one past the last source column
        L_W_OFF "FN_L_W_OFF"      # offset of W_j in the flat weight vector
        L_B_OFF "FN_L_B_OFF"      # offset of the biases
        L_ACT "FN_L_ACT"          # activation code
        L_NCOLS "FN_L_NCOLS"
    # Activation codes (fastnet.network.ACTIVATIONS maps names to these).
    enum:
        ACT_LINEAR "FN_ACT_LINEAR"
        ACT_PROBEN1 "FN_ACT_PROBEN1"
        ACT_LOGISTIC "FN_ACT_LOGISTIC"
        ACT_TANH "FN_ACT_TANH"
        ACT_RELU "FN_ACT_RELU"
        ACT_SOFTMAX "FN_ACT_SOFTMAX"
        N_ACTIVATIONS "FN_N_ACTIVATIONS"
    # Training objectives (fastnet.training._checks.LOSSES maps names to these).
    enum:
        LOSS_SSE "FN_LOSS_SSE"
        LOSS_CROSS_ENTROPY "FN_LOSS_CROSS_ENTROPY"


# ---------------------------------------------------------------------------
# The three matrix products of a layer, in row-major terms, all through gemm_rm:
# each goes to the register tiles (simd_gemm, where the CPU has them), else to
# BLAS (scipy.linalg.cython_blas's dgemm or sgemm through blas_gemm_rm) when m*n*k >= blas_min
# and the layer is wide enough, and to the loop kernels of _loops.h otherwise: BLAS
# call overhead dominates tiny layers and single examples (online training), and
# BLAS wastes its width on layers of a few units.
# Measured on the benchmark cases A-G (benchmarks/peers.py) (ms per epoch, same machine, alternating runs):
# forward and back-propagation loops win up to NARROW_LAYER units; the gradient
# loops (one pass over the rows updates a block of G that stays in L1) win up to
# GRAD_LOOP_UNITS units (D 0.213 -> 0.187, C 0.52 -> 0.48, G 4.23 -> 4.07).
cdef enum:
    NARROW_LAYER = 4
    GRAD_LOOP_UNITS = 32
    # The register tiles, where the CPU has them (fastnet._kernels._simd): they
    # take every product of >= SIMD_MIN_ROWS rows (fewer, as in online training,
    # gain nothing, and the forward kernels pack W^T per call). AVX-512: every
    # such product, forward products of layers of < 8 units (less than one
    # vector) as 8-lane dot products, or on few sources as masked vectors of
    # units (FN_BROADCAST_NARROW in _simd.h). They beat the loops and BLAS on every
    # benchmark case A-G, tiny layers included (case A 0.0168 -> 0.0111
    # ms/epoch), and OpenBLAS's own AVX-512 kernels on wide layers (256-256-10:
    # 6.2 against 8.3 ms/epoch). AVX2 (CPUs without AVX-512): the same products,
    # but forward ones only for layers of >= 4 units (one 4-lane vector);
    # simd_gemm declines narrower ones, which keep the loops, whose dot products
    # suit them.
    SIMD_MIN_ROWS = 8


cdef inline void blas_gemm_rm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                          const real_t* A, Py_ssize_t lda, const real_t* B, Py_ssize_t ldb,
                          double beta, real_t* C, Py_ssize_t ldc) noexcept nogil:
    """Row-major C (m x n) = op(A) op(B) + beta C through column-major BLAS (dgemm, sgemm).

    op(X) is X for 'N', X^T for 'T'. A row-major matrix is its transpose in
    column-major terms, so BLAS computes C^T = op(B)^T op(A)^T: the operands
    swap places and keep their transpose flags.
    """
    cdef int im = <int>m, i_n = <int>n, ik = <int>k
    cdef int ia = <int>lda, ib = <int>ldb, ic = <int>ldc
    cdef double one = 1.0
    cdef float one_f = 1.0, beta_f = <float>beta
    if real_t is double:
        blas_dgemm(&tb, &ta, &i_n, &im, &ik, &one, <double*>B, &ib, <double*>A, &ia, &beta, C,
                   &ic)
    else:
        blas_sgemm(&tb, &ta, &i_n, &im, &ik, &one_f, <float*>B, &ib, <float*>A, &ia, &beta_f,
                   C, &ic)


cdef inline bint gemm_tiles(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                            const real_t* A, Py_ssize_t lda, const real_t* B, Py_ssize_t ldb,
                            double beta, real_t* C, Py_ssize_t ldc, const real_t* bias,
                            const real_t* scale, Py_ssize_t lds) noexcept nogil:
    """The register tiles' product of the value type (_simd's simd_gemm, simd_gemm_f32)."""
    if real_t is double:
        return simd_gemm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc, bias, scale, lds)
    else:
        return simd_gemm_f32(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc, bias, scale, lds)


cdef enum:
    # Which kernel computed a product (gemm_rm's answer).
    GEMM_LOOPS = 0   # neither of the two: the caller's loops must
    GEMM_BLAS = 1    # BLAS (biases not added)
    GEMM_TILES = 2   # the register tiles (biases added)


cdef inline int gemm_rm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k,
                        const real_t* A, Py_ssize_t lda, const real_t* B, Py_ssize_t ldb,
                        double beta, real_t* C, Py_ssize_t ldc, const real_t* bias,
                        Py_ssize_t rows, bint blas_wide, Py_ssize_t blas_min) noexcept nogil:
    """Row-major C = op(A) op(B) + beta C (+ bias) with the first kernel that takes it.

    The register tiles for blocks of >= SIMD_MIN_ROWS rows (where the CPU has
    them and they do not decline the product), else BLAS if blas_wide and
    m*n*k >= blas_min. Returns GEMM_TILES, GEMM_BLAS or GEMM_LOOPS (nothing done).
    """
    if rows >= SIMD_MIN_ROWS and gemm_tiles(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc,
                                            bias, NULL, 0):
        return GEMM_TILES
    if blas_wide and m * n * k >= blas_min:
        blas_gemm_rm(ta, tb, m, n, k, A, lda, B, ldb, beta, C, ldc)
        return GEMM_BLAS
    return GEMM_LOOPS


cdef inline bint gemm_forward(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src,
                              const real_t* Ain, Py_ssize_t lda,
                              const real_t* W, const real_t* b, real_t* Z, Py_ssize_t ldz,
                              Py_ssize_t blas_min) noexcept nogil:
    """Z[r, u] = sum_s Ain[r, s] * W[u, s]  (Z = Ain @ W.T; W is (n_out, n_src)).

    The tiled kernels also add the biases b (to the finished sums, as the
    caller's activation pass would); returns True when they did, False when the
    caller must add them.
    """
    cdef int done = gemm_rm(c'N', c'T', nb, n_out, n_src, Ain, lda, W, n_src, 0.0, Z, ldz, b,
                            nb, n_out > NARROW_LAYER, blas_min)
    if done == GEMM_LOOPS:
        fn_loops_forward(nb, n_out, n_src, Ain, lda, W, Z, ldz)
    return done == GEMM_TILES


cdef inline void gemm_gradient(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src,
                               const real_t* Delta, Py_ssize_t ldd,
                               const real_t* Ain, Py_ssize_t lda,
                               real_t* G, Py_ssize_t blas_min) noexcept nogil:
    """G[u, s] += sum_r Delta[r, u] * Ain[r, s]  (G += Delta.T @ Ain; G is (n_out, n_src))."""
    if gemm_rm(c'T', c'N', n_out, n_src, nb, Delta, ldd, Ain, lda, 1.0, G, n_src, NULL,
               nb, n_out > GRAD_LOOP_UNITS, blas_min) == GEMM_LOOPS:
        fn_loops_gradient(nb, n_out, n_src, Delta, ldd, Ain, lda, G)


cdef inline void gemm_backprop(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src,
                               const real_t* Delta, Py_ssize_t ldd,
                               const real_t* W, Py_ssize_t ldw,
                               real_t* dA, Py_ssize_t ldda,
                               Py_ssize_t blas_min) noexcept nogil:
    """dA[r, s] += sum_u Delta[r, u] * W[u, s]  (dA += Delta @ W; W rows have stride ldw)."""
    if gemm_rm(c'N', c'N', nb, n_src, n_out, Delta, ldd, W, ldw, 1.0, dA, ldda, NULL,
               nb, n_out > NARROW_LAYER, blas_min) == GEMM_LOOPS:
        fn_loops_backprop(nb, n_out, n_src, Delta, ldd, W, ldw, dA, ldda)


# ---------------------------------------------------------------------------
# The loops of _loops.h over either value type (fused: the C function of the
# arrays' type).

cdef inline void fn_loops_forward(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src,
                                  const real_t* A, Py_ssize_t lda, const real_t* W, real_t* Z,
                                  Py_ssize_t ldz) noexcept nogil:
    if real_t is double:
        fn_loops_forward_f64(nb, n_out, n_src, A, lda, W, Z, ldz)
    else:
        fn_loops_forward_f32(nb, n_out, n_src, A, lda, W, Z, ldz)


cdef inline void fn_loops_gradient(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src,
                                   const real_t* Delta, Py_ssize_t ldd, const real_t* A,
                                   Py_ssize_t lda, real_t* G) noexcept nogil:
    if real_t is double:
        fn_loops_gradient_f64(nb, n_out, n_src, Delta, ldd, A, lda, G)
    else:
        fn_loops_gradient_f32(nb, n_out, n_src, Delta, ldd, A, lda, G)


cdef inline void fn_loops_backprop(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t n_src,
                                   const real_t* Delta, Py_ssize_t ldd, const real_t* W,
                                   Py_ssize_t ldw, real_t* dA, Py_ssize_t ldda) noexcept nogil:
    if real_t is double:
        fn_loops_backprop_f64(nb, n_out, n_src, Delta, ldd, W, ldw, dA, ldda)
    else:
        fn_loops_backprop_f32(nb, n_out, n_src, Delta, ldd, W, ldw, dA, ldda)


cdef inline void fn_loops_proben1(Py_ssize_t nb, Py_ssize_t size, real_t* Z, Py_ssize_t ldz,
                                  const real_t* b, real_t* D, Py_ssize_t ldd) noexcept nogil:
    if real_t is double:
        fn_loops_proben1_f64(nb, size, Z, ldz, b, D, ldd)
    else:
        fn_loops_proben1_f32(nb, size, Z, ldz, b, D, ldd)


cdef inline void fn_loops_linear(Py_ssize_t nb, Py_ssize_t size, real_t* Z, Py_ssize_t ldz,
                                 const real_t* b, real_t* D, Py_ssize_t ldd) noexcept nogil:
    if real_t is double:
        fn_loops_linear_f64(nb, size, Z, ldz, b, D, ldd)
    else:
        fn_loops_linear_f32(nb, size, Z, ldz, b, D, ldd)


cdef inline void fn_loops_activate(int code, Py_ssize_t nb, Py_ssize_t size, real_t* Z,
                                   Py_ssize_t ldz, const real_t* b, real_t* D,
                                   Py_ssize_t ldd) noexcept nogil:
    if real_t is double:
        fn_loops_activate_f64(code, nb, size, Z, ldz, b, D, ldd)
    else:
        fn_loops_activate_f32(code, nb, size, Z, ldz, b, D, ldd)


cdef inline int fn_loops_activate_at(int level, int code, Py_ssize_t nb, Py_ssize_t size,
                                     real_t* Z, Py_ssize_t ldz, const real_t* b, real_t* D,
                                     Py_ssize_t ldd) noexcept nogil:
    if real_t is double:
        return fn_loops_activate_at_f64(level, code, nb, size, Z, ldz, b, D, ldd)
    else:
        return fn_loops_activate_at_f32(level, code, nb, size, Z, ldz, b, D, ldd)


cdef inline int fn_loops_load_rows(Py_ssize_t nb, Py_ssize_t n, const real_t* X, real_t* A,
                                   Py_ssize_t lda) noexcept nogil:
    if real_t is double:
        return fn_loops_load_rows_f64(nb, n, X, A, lda)
    else:
        return fn_loops_load_rows_f32(nb, n, X, A, lda)


cdef inline int fn_loops_all_finite(Py_ssize_t n, const real_t* X) noexcept nogil:
    if real_t is double:
        return fn_loops_all_finite_f64(n, X)
    else:
        return fn_loops_all_finite_f32(n, X)


cdef inline void fn_loops_softmax(Py_ssize_t nb, Py_ssize_t size, real_t* Z, Py_ssize_t ldz,
                                  const real_t* b, real_t* D, Py_ssize_t ldd) noexcept nogil:
    if real_t is double:
        fn_loops_softmax_f64(nb, size, Z, ldz, b, D, ldd)
    else:
        fn_loops_softmax_f32(nb, size, Z, ldz, b, D, ldd)


cdef inline void fn_loops_deltas_bias(Py_ssize_t nb, Py_ssize_t size, real_t* Delta,
                                      Py_ssize_t ldd, const real_t* D, real_t* gb) noexcept nogil:
    if real_t is double:
        fn_loops_deltas_bias_f64(nb, size, Delta, ldd, D, gb)
    else:
        fn_loops_deltas_bias_f32(nb, size, Delta, ldd, D, gb)


cdef inline double fn_loops_output_deltas(Py_ssize_t nb, Py_ssize_t n_out, const real_t* Y,
                                          Py_ssize_t ldy, const real_t* T, Py_ssize_t ldt,
                                          const real_t* D, real_t* Delta,
                                          Py_ssize_t ldd) noexcept nogil:
    """The output deltas 2 (y - t) f'(net); returns the squared error, summed in double."""
    if real_t is double:
        return fn_loops_output_deltas_f64(nb, n_out, Y, ldy, T, ldt, D, Delta, ldd)
    else:
        return fn_loops_output_deltas_f32(nb, n_out, Y, ldy, T, ldt, D, Delta, ldd)


# float32 training with subnormal results flushed to zero (_ftz.h): the caller's mode
# back after the call; flush 0 (float64) changes nothing.
cdef extern from "_ftz.h" nogil:
    unsigned long fn_ftz_begin(int flush)
    void fn_ftz_end(unsigned long saved)
