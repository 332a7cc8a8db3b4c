"""Backward pass: the gradient of the summed squared error E = sum (y - t)**2,
or of another training objective (cross-entropy, L2 weight decay).

The gradient has no factor 1/2 in E, so dE/dy = 2 (y - t) (the error has no 1/2).

Written once over the value type (real_t: double, float); the objective (the
squared error, cross-entropy, the decay's sum of squares) is accumulated in
double at both types, the gradient in the value type.
"""
from libc.float cimport DBL_MIN, FLT_MIN
from libc.math cimport log
from libc.string cimport memset

from fastnet._kernels._types cimport (
    fn_ftz_begin, fn_ftz_end,
    real_t, gemm_tiles, L_START, L_SIZE, L_SRC_LO, L_SRC_HI, L_W_OFF, L_B_OFF, L_ACT, L_NCOLS, SIMD_MIN_ROWS,
    ACT_LOGISTIC, ACT_SOFTMAX, LOSS_SSE, LOSS_CROSS_ENTROPY, gemm_gradient, gemm_backprop,
    fn_loops_deltas_bias, fn_loops_output_deltas,
)
from fastnet._kernels._forward cimport check_buffers, check_dtypes, forward_rows, value_bits


cdef double output_deltas(const real_t* A, Py_ssize_t lda, const real_t* T,
                          Py_ssize_t ldt, const real_t* D, real_t* Dl,
                          Py_ssize_t ldd, Py_ssize_t n_out, Py_ssize_t nb) noexcept nogil:
    """Set the output deltas 2 (y - t) f'(net) of nb rows; return their SSE.

    The output units are the last n_out columns of D and Dl (ldd = units - inputs,
    no padding) and so the columns [n_in + ldd - n_out, n_in + ldd) of A, whose rows
    may be padded past the last unit (lda >= n_in + ldd). A points at the first
    output column.
    """
    return fn_loops_output_deltas(nb, n_out, A, lda, T, ldt,
                                  D + (ldd - n_out), Dl + (ldd - n_out), ldd)


cdef inline double log_probability(real_t p) noexcept nogil:
    """log p in double, p raised to the smallest normal value of its type first
    (a probability that rounded to 0 costs -log(DBL_MIN) = 708.4 in double,
    -log(FLT_MIN) = 87.3 in float, not infinity; NaN passes)."""
    if real_t is double:
        return log(DBL_MIN if p < DBL_MIN else p)
    else:
        return log(<double>(FLT_MIN if p < FLT_MIN else p))


cdef double output_objective(int loss, int act, const real_t* A, Py_ssize_t lda,
                             const real_t* T, Py_ssize_t ldt, const real_t* D, real_t* Dl,
                             Py_ssize_t ldd, Py_ssize_t n_out, Py_ssize_t nb) noexcept nogil:
    """Set the output deltas dE/dnet of nb rows for the objective `loss`, output
    activation `act`; return the rows' loss (arguments as output_deltas).

    SSE with elementwise outputs is output_deltas itself. SSE with softmax
    outputs: delta_k = y_k (e_k - sum_i e_i y_i), e = 2 (y - t). Cross-entropy
    with softmax outputs, -sum t log y (log y from the forward pass, in D):
    delta_k = y_k sum_i t_i - t_k (y - t for one-hot rows); with logistic outputs,
    -sum [t log y + (1 - t) log(1 - y)]: delta = y - t. A term whose factor t
    (or 1 - t) is 0 adds nothing (0 log 0 = 0).
    """
    cdef Py_ssize_t r, k, c0 = ldd - n_out
    cdef const real_t* y
    cdef const real_t* t
    cdef const real_t* d
    cdef real_t* dl
    cdef real_t s, e
    cdef double row, total = 0.0
    if loss == LOSS_SSE and act != ACT_SOFTMAX:
        return output_deltas(A, lda, T, ldt, D, Dl, ldd, n_out, nb)
    for r in range(nb):
        y = A + r * lda
        t = T + r * ldt
        d = D + r * ldd + c0
        dl = Dl + r * ldd + c0
        row = 0.0
        s = 0.0
        if loss == LOSS_SSE:                       # softmax outputs
            for k in range(n_out):
                e = y[k] - t[k]
                row += <double>e * e
                s += 2.0 * e * y[k]
            for k in range(n_out):
                dl[k] = y[k] * (2.0 * (y[k] - t[k]) - s)
        elif act == ACT_SOFTMAX:
            for k in range(n_out):
                s += t[k]
                if t[k] != 0.0:
                    row -= <double>t[k] * d[k]
            for k in range(n_out):
                dl[k] = y[k] * s - t[k]
        else:                                      # logistic outputs
            for k in range(n_out):
                if t[k] != 0.0:
                    row -= t[k] * log_probability(y[k])
                if t[k] != 1.0:
                    row -= (1.0 - t[k]) * log_probability(<real_t>(1.0 - y[k]))
                dl[k] = y[k] - t[k]
        total += row
    return total


cdef double add_weight_decay(const real_t* w, real_t* g, Py_ssize_t n_w,
                             double decay) noexcept nogil:
    """g += 2 decay w; return decay * sum w**2 (every weight and bias; the sum in
    double, 2 decay taken to the value type once)."""
    cdef Py_ssize_t i
    cdef double sq = 0.0
    cdef real_t twice = 2.0 * decay
    for i in range(n_w):
        sq += <double>w[i] * w[i]
        g[i] += twice * w[i]
    return decay * sq


cdef inline void zero_columns(real_t* Dl, Py_ssize_t ldd, Py_ssize_t nb, Py_ssize_t c0,
                              Py_ssize_t c1) noexcept nogil:
    """Dl[r, c0:c1] = 0 for the nb rows."""
    cdef Py_ssize_t r
    if c1 > c0:
        for r in range(nb):
            memset(Dl + r * ldd + c0, 0, (c1 - c0) * sizeof(real_t))


cdef inline void scale_columns(real_t* Dl, const real_t* D, Py_ssize_t ldd, Py_ssize_t nb,
                               Py_ssize_t c0, Py_ssize_t c1) noexcept nogil:
    """Dl[r, c0:c1] *= D[r, c0:c1] for the nb rows (dE/da times f'(net))."""
    cdef Py_ssize_t r, s
    for r in range(nb):
        for s in range(c0, c1):
            Dl[r * ldd + s] *= D[r * ldd + s]


cdef void backprop_pieces(Py_ssize_t nb, Py_ssize_t n_out, const real_t* delta,
                          Py_ssize_t ldd, const real_t* W, Py_ssize_t ldw, real_t* Dl,
                          const real_t* D, Py_ssize_t s0, Py_ssize_t s1, Py_ssize_t ready,
                          Py_ssize_t p0, Py_ssize_t p1, bint fuse,
                          Py_ssize_t blas_min) noexcept nogil:
    """dE/da of the columns [s0, s1) of Dl: Dl[:, s] (+)= delta @ W[:, s - s0]
    (W's rows of stride ldw start at column s0), stored below `ready` (the
    columns not written yet) and added from it on; with fuse, the columns
    [p0, p1) are then multiplied by f'(net) (D). The tiles take the pieces
    apart, multiplying as they store; BLAS and the loops take the whole range
    at once (its unwritten columns cleared first) and the multiplication in a
    pass of its own, as before the pieces (BLAS's sums depend on the shape)."""
    cdef Py_ssize_t cuts[5]
    cdef Py_ssize_t n_cuts = 2, i, k, a, b
    cdef bint scaled
    cuts[0] = s0
    cuts[1] = s1
    for k in range(3):
        a = ready if k == 0 else (p0 if k == 1 else p1)
        if (k == 0 or fuse) and s0 < a < s1:
            cuts[n_cuts] = a
            n_cuts += 1
    for i in range(1, n_cuts):                     # (insertion sort of <= 5 values)
        a = cuts[i]
        k = i
        while k > 0 and cuts[k - 1] > a:
            cuts[k] = cuts[k - 1]
            k -= 1
        cuts[k] = a
    if nb >= SIMD_MIN_ROWS:
        for i in range(n_cuts - 1):
            a = cuts[i]
            b = cuts[i + 1]
            if b == a:
                continue
            scaled = fuse and p0 <= a and b <= p1
            # (c'N': a fused call takes no bytes literal for a char)
            if gemm_tiles(c'N', c'N', nb, b - a, n_out, delta, ldd, W + (a - s0), ldw,
                          1.0 if a >= ready else 0.0, Dl + a, ldd, NULL,
                          D + a if scaled else NULL, ldd):
                continue
            if i == 0:
                break      # no tiles at this level (nothing written yet)
            # (the tiles take all pieces or none; were one declined, it alone:)
            if a < ready:
                zero_columns(Dl, ldd, nb, a, b)
            gemm_backprop(nb, n_out, b - a, delta, ldd, W + (a - s0), ldw, Dl + a, ldd,
                          blas_min)
            if scaled:
                scale_columns(Dl, D, ldd, nb, a, b)
        else:
            return
    zero_columns(Dl, ldd, nb, s0, ready if ready < s1 else s1)
    gemm_backprop(nb, n_out, s1 - s0, delta, ldd, W, ldw, Dl + s0, ldd, blas_min)
    if fuse:
        scale_columns(Dl, D, ldd, nb, p0, p1)


cdef void backward_rows(const Py_ssize_t* layers, Py_ssize_t n_layers,
                        const real_t* w, const real_t* A, Py_ssize_t lda,
                        const real_t* D, real_t* Dl, Py_ssize_t ldd,
                        Py_ssize_t n_in, Py_ssize_t nb, real_t* g,
                        Py_ssize_t blas_min) noexcept nogil:
    """Accumulate dE/dw of nb rows into g.

    On entry Dl holds the output deltas; its hidden columns are written here,
    whatever they held. The layers are visited from the outputs back; when
    layer j is reached, every later layer has sent its dE/da to j's columns, and
    multiplying by f'(net) turns them into deltas. A layer's back-propagation
    stores into the columns no later layer has written yet (the first to write
    them: no clearing pass) and adds to the others; and in the columns of the
    layer just before it, when it reads all of them (every fastnet network), it
    is their last writer and multiplies by f'(net) as it stores them. Columns
    that no layer reads get delta 0.
    """
    cdef Py_ssize_t j, c, start, size, lo, hi, s0, s1, p0 = 0, p1 = 0
    cdef Py_ssize_t ready          # the hidden columns from `ready` on are written
    cdef const Py_ssize_t* lay
    cdef const Py_ssize_t* prev
    cdef real_t* delta
    cdef bint fuse = False         # this layer's columns hold deltas already
    ready = layers[(n_layers - 1) * L_NCOLS + L_START] - n_in
    for j in range(n_layers - 1, -1, -1):
        lay = layers + j * L_NCOLS
        start = lay[L_START]; size = lay[L_SIZE]
        lo = lay[L_SRC_LO]; hi = lay[L_SRC_HI]
        c = start - n_in
        delta = Dl + c
        if j < n_layers - 1 and ready > c:
            zero_columns(Dl, ldd, nb, c, ready)     # units no later layer reads
            ready = c
        # Hidden layers not made deltas by the layer after them: dE/da times f'(net)
        # (output deltas are set already); then the bias gradient, in the same pass.
        fn_loops_deltas_bias(nb, size, delta, ldd,
                             D + c if j < n_layers - 1 and not fuse else NULL,
                             g + lay[L_B_OFF])
        gemm_gradient(nb, size, hi - lo, delta, ldd, A + lo, lda,
                      g + lay[L_W_OFF], blas_min)
        # Send the error back to hidden sources only: inputs need no delta.
        s0 = (lo if lo > n_in else n_in) - n_in
        s1 = hi - n_in
        fuse = False
        if s1 <= s0:
            continue
        if ready > s1:
            zero_columns(Dl, ldd, nb, s1, ready)    # (keeps the written columns whole)
            ready = s1
        if j > 0:
            prev = lay - L_NCOLS
            p0 = prev[L_START] - n_in
            p1 = p0 + prev[L_SIZE]
            fuse = s0 <= p0 and p1 <= s1
        backprop_pieces(nb, size, delta, ldd, w + lay[L_W_OFF] + (s0 + n_in - lo), hi - lo,
                        Dl, D, s0, s1, ready, p0, p1, fuse, blas_min)
        if s0 < ready:
            ready = s0


cdef double epoch_objective(const net_objective* o, real_t* A, Py_ssize_t n_rows,
                            Py_ssize_t lda, const real_t* T, Py_ssize_t ldt, const real_t* w,
                            real_t* g, Py_ssize_t n_w, real_t* D, real_t* Dl,
                            Py_ssize_t ldd) noexcept nogil:
    """g = dE/dw of the objective (``o.loss`` over all rows, processed in blocks of
    ``o.block`` rows, plus ``o.decay`` * sum w**2); return E."""
    cdef const Py_ssize_t* layers = o.layers
    cdef Py_ssize_t r0 = 0, nb, n_layers = o.n_layers, n_in = o.n_in, block = o.block
    cdef Py_ssize_t blas_min = o.blas_min
    cdef int loss = o.loss
    cdef double decay = o.decay
    cdef int act = <int>layers[(n_layers - 1) * L_NCOLS + L_ACT]
    cdef bint squared = loss == LOSS_SSE and act != ACT_SOFTMAX
    cdef double total = 0.0
    memset(g, 0, n_w * sizeof(real_t))
    while r0 < n_rows:
        nb = block if block < n_rows - r0 else n_rows - r0
        forward_rows(layers, n_layers, w, A + r0 * lda, lda, D, ldd, n_in, nb, blas_min)
        if squared:         # (the common case, without output_objective's dispatch)
            total += output_deltas(A + r0 * lda + (n_in + ldd - ldt), lda, T + r0 * ldt, ldt,
                                   D, Dl, ldd, ldt, nb)
        else:
            total += output_objective(loss, act, A + r0 * lda + (n_in + ldd - ldt), lda,
                                      T + r0 * ldt, ldt, D, Dl, ldd, ldt, nb)
        backward_rows(layers, n_layers, w, A + r0 * lda, lda, D, Dl, ldd, n_in, nb, g,
                      blas_min)
        r0 += nb
    if decay != 0.0:
        total += add_weight_decay(w, g, n_w, decay)
    return total


def gradient(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, g, D, Dl,
             Py_ssize_t blas_min, int loss=LOSS_SSE, double decay=0.0):
    """Gradient of the summed squared error (or of the objective) over all rows of A.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 or float32, inputs filled in; activations
        overwritten (rows may be padded past the units; the padding is not read).
    T : (n_patterns, n_out) targets.
    layers, n_in : layer table and input count.
    w : flat weights; g : output, same length (overwritten).
    D, Dl : (block, n_units - n_in) workspaces; their row count is the block size.
    blas_min : BLAS threshold on m*n*k.
    loss : objective code (LOSS_SSE, LOSS_CROSS_ENTROPY of _constants.h).
    decay : L2 weight decay lambda >= 0 (adds lambda * sum w**2).

    Every array is of A's dtype (TypeError otherwise).

    Returns
    -------
    sse : float, the summed squared error (the objective) at w, accumulated in
        double at both value types.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w, g, D, Dl), "T w g D Dl")
    if bits == 32:
        return gradient_t[float](A, T, layers, n_in, w, g, D, Dl, blas_min, loss, decay)
    return gradient_t[double](A, T, layers, n_in, w, g, D, Dl, blas_min, loss, decay)


cdef double gradient_t(real_t[:, ::1] A, const real_t[:, ::1] T,
                       const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                       const real_t[::1] w, real_t[::1] g, real_t[:, ::1] D,
                       real_t[:, ::1] Dl, Py_ssize_t blas_min, int loss,
                       double decay) except? -1.0:
    """`gradient` at one value type."""
    cdef double sse
    cdef net_objective o
    cdef unsigned long mode
    check_buffers(layers, n_in, A.shape[0], A.shape[1], w.shape[0], T.shape[0], T.shape[1],
                  D.shape[0], D.shape[1])
    if g.shape[0] != w.shape[0] or Dl.shape[0] != D.shape[0] or Dl.shape[1] != D.shape[1]:
        raise ValueError("kernel: gradient or delta workspace does not match")
    check_objective(layers, loss, decay)
    if A.shape[0] == 0:
        g[:] = 0.0
        return 0.0
    o = net_objective_of(layers, n_in, D.shape[0], blas_min, loss, decay)
    with nogil:
        mode = fn_ftz_begin(real_t is float)
        sse = epoch_objective(&o, &A[0, 0], A.shape[0], A.shape[1], &T[0, 0], T.shape[1],
                              &w[0], &g[0], g.shape[0], &D[0, 0], &Dl[0, 0], D.shape[1])
        fn_ftz_end(mode)
    return sse


def objective(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, D, Dl,
              Py_ssize_t blas_min, int loss, double decay):
    """The objective at w over all rows of A: a forward pass, no gradient.

    Parameters
    ----------
    A, T, layers, n_in, w, D, Dl, blas_min, loss, decay : as in :func:`gradient`
        (D, Dl are overwritten: D with f'(net), Dl with the output deltas).

    Returns
    -------
    value : float, the objective (loss plus decay * sum w**2), as gradient returns it.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w, D, Dl), "T w D Dl")
    if bits == 32:
        return objective_t[float](A, T, layers, n_in, w, D, Dl, blas_min, loss, decay)
    return objective_t[double](A, T, layers, n_in, w, D, Dl, blas_min, loss, decay)


cdef double objective_t(real_t[:, ::1] A, const real_t[:, ::1] T,
                        const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                        const real_t[::1] w, real_t[:, ::1] D, real_t[:, ::1] Dl,
                        Py_ssize_t blas_min, int loss, double decay) except? -1.0:
    """`objective` at one value type."""
    cdef Py_ssize_t r0 = 0, nb, i, n = A.shape[0], lda = A.shape[1], ldd = D.shape[1]
    cdef Py_ssize_t ldt = T.shape[1], L = layers.shape[0]
    cdef int act = <int>layers[L - 1, L_ACT]
    cdef double total = 0.0, sq = 0.0
    cdef unsigned long mode
    check_buffers(layers, n_in, A.shape[0], A.shape[1], w.shape[0], T.shape[0], T.shape[1],
                  D.shape[0], D.shape[1])
    if Dl.shape[0] != D.shape[0] or Dl.shape[1] != D.shape[1]:
        raise ValueError("kernel: delta workspace does not match")
    check_objective(layers, loss, decay)
    with nogil:
        mode = fn_ftz_begin(real_t is float)
        while r0 < n:
            nb = D.shape[0] if D.shape[0] < n - r0 else n - r0
            forward_rows(&layers[0, 0], L, &w[0], &A[r0, 0], lda, &D[0, 0], ldd, n_in, nb,
                         blas_min)
            total += output_objective(loss, act, &A[r0, n_in + ldd - ldt], lda, &T[r0, 0], ldt,
                                      &D[0, 0], &Dl[0, 0], ldd, ldt, nb)
            r0 += nb
        fn_ftz_end(mode)
        if decay != 0.0:
            for i in range(w.shape[0]):
                sq += <double>w[i] * w[i]
            total += decay * sq
    return total


cdef int check_objective(const Py_ssize_t[:, ::1] layers, int loss, double decay) except -1:
    """The objective's codes before nogil code runs: a known loss, cross-entropy
    only with softmax or logistic outputs, decay >= 0."""
    cdef Py_ssize_t act = layers[layers.shape[0] - 1, L_ACT]
    if loss != LOSS_SSE and loss != LOSS_CROSS_ENTROPY:
        raise ValueError("kernel: unknown loss code")
    if loss == LOSS_CROSS_ENTROPY and act != ACT_SOFTMAX and act != ACT_LOGISTIC:
        raise ValueError("kernel: cross-entropy needs softmax or logistic outputs")
    if not decay >= 0.0:
        raise ValueError("kernel: weight decay must be >= 0")
    return 0
