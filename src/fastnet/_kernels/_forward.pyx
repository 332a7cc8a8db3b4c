"""Forward pass over a batch of examples (see _types.pxd for the layout).

Every pass is written once over the value type (``real_t``: double, float); each
``def`` entry takes the arrays of one call in float64 or float32, all of one type
(`value_bits`, `check_dtypes`: a TypeError naming the argument otherwise), and runs
that type's instance. Squared-error sums are accumulated in double at both types
(Proben1's error measures must not drift with the number of examples).
"""
from fastnet._kernels._types cimport (
    real_t, L_START, L_SIZE, L_SRC_LO, L_SRC_HI, L_W_OFF, L_B_OFF, L_ACT, L_NCOLS,
    N_ACTIVATIONS, ACT_LINEAR, ACT_PROBEN1, ACT_SOFTMAX,
    NARROW_LAYER, gemm_forward, fn_loops_proben1, fn_loops_linear, fn_loops_activate,
    fn_loops_softmax, fn_loops_activate_at, fn_loops_load_rows, fn_loops_all_finite,
)
from libc.stdint cimport uintptr_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

import numpy as np

# Which products this process runs is decided once, in fastnet._kernels._simd
# (imported with this module); its answers, under their long-standing names here:
from fastnet._kernels._simd import simd_compiled, simd_level


cdef object F64 = np.dtype(np.float64)
cdef object F32 = np.dtype(np.float32)


cdef int value_bits(object a, str name) except -1:
    """The value type of a call, from its leading array a: 64 (float64) or 32
    (float32). An object without a dtype is taken as float64 (its typed view
    then decides, as before the value types); another dtype is a TypeError."""
    d = getattr(a, "dtype", None)
    if d is F64:
        return 64
    if d is F32:
        return 32
    if d is None or d == F64:
        return 64
    if d == F32:
        return 32
    raise TypeError(f"`{name}` must be a float64 or float32 array, got dtype {d}")


cdef int check_dtypes(int bits, tuple arrays, str names) except -1:
    """Every array of `arrays` (named by the words of `names`, in order) is of the
    call's value type `bits` (objects without a dtype are left to their views)."""
    cdef Py_ssize_t i
    want = F64 if bits == 64 else F32
    for i in range(len(arrays)):
        d = getattr(arrays[i], "dtype", None)
        if d is want or d is None or d == want:
            continue
        name = names.split()[i]
        raise TypeError(f"`{name}` must be {want} like the call's other arrays, got dtype {d}")
    return 0


cdef void forward_rows(const Py_ssize_t* layers, Py_ssize_t n_layers,
                       const real_t* w, real_t* A, Py_ssize_t lda,
                       real_t* D, Py_ssize_t ldd, Py_ssize_t n_in,
                       Py_ssize_t nb, Py_ssize_t blas_min) noexcept nogil:
    """Propagate `nb` activation rows (inputs already in columns [0, n_in)).

    Fills the non-input columns of A and, unless D is NULL, the derivatives
    f'(net) into D (column = unit - n_in); softmax outputs put log y there.
    """
    forward_rows_from(layers, n_layers, w, NULL, 0, A, lda, D, ldd, n_in, nb, blas_min, NULL)


cdef void forward_rows_from(const Py_ssize_t* layers, Py_ssize_t n_layers,
                            const real_t* w, const real_t* X, Py_ssize_t ldx,
                            real_t* A, Py_ssize_t lda, real_t* D, Py_ssize_t ldd,
                            Py_ssize_t n_in, Py_ssize_t nb, Py_ssize_t blas_min,
                            bint* first_nonfinite) noexcept nogil:
    """forward_rows, with the layers that read inputs only reading them from the
    rows of X (row stride ldx) when X is not NULL; a layer that reads inputs and
    units together (a shortcut) still reads A, which must then hold the inputs.

    Unless first_nonfinite is NULL, it is set when the first layer's first unit
    has a net input (before its bias and activation) that is not finite: with
    every input feeding that unit, a NaN or infinite input always makes it so
    (inf times any weight, 0 included, is infinite or NaN), and otherwise only
    an overflow does. One column of the block, instead of every input."""
    cdef Py_ssize_t j, start, size, lo, hi, code, r
    cdef real_t v
    cdef const Py_ssize_t* lay
    cdef const real_t* b
    cdef const real_t* src
    cdef Py_ssize_t ld
    for j in range(n_layers):
        lay = layers + j * L_NCOLS
        start = lay[L_START]; size = lay[L_SIZE]
        lo = lay[L_SRC_LO]; hi = lay[L_SRC_HI]
        code = lay[L_ACT]
        b = w + lay[L_B_OFF]
        if X != NULL and hi <= n_in:
            src, ld = X + lo, ldx
        else:
            src, ld = A + lo, lda
        if gemm_forward(nb, size, hi - lo, src, ld, w + lay[L_W_OFF], b,
                        A + start, lda, blas_min):
            b = NULL   # the product kernel added the biases already
        if j == 0 and first_nonfinite != NULL:
            for r in range(nb):
                v = A[start + r * lda]
                if v - v != 0.0:       # (NaN for NaN and +-inf)
                    first_nonfinite[0] = True
        if code == ACT_PROBEN1:
            # The common cases run switch-free, vectorised C loops.
            fn_loops_proben1(nb, size, A + start, lda, b,
                             D + (start - n_in) if D != NULL else NULL, ldd)
        elif code == ACT_LINEAR:
            fn_loops_linear(nb, size, A + start, lda, b,
                            D + (start - n_in) if D != NULL else NULL, ldd)
        elif code == ACT_SOFTMAX:
            fn_loops_softmax(nb, size, A + start, lda, b,
                             D + (start - n_in) if D != NULL else NULL, ldd)
        else:
            # logistic, tanh, relu: the vector functions of _activations.h
            fn_loops_activate(<int>code, nb, size, A + start, lda, b,
                              D + (start - n_in) if D != NULL else NULL, ldd)


cdef int check_buffers(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                       Py_ssize_t n_rows, Py_ssize_t n_units, Py_ssize_t n_w,
                       Py_ssize_t t_rows, Py_ssize_t t_cols,
                       Py_ssize_t d_rows, Py_ssize_t d_cols) except -1:
    """Check that every buffer fits the layer table before nogil code runs.

    Activation rows (n_units columns here) may be longer than the layers need.

    The kernels run with boundscheck off; this is their memory-safety gate.
    Pass -1 for a buffer that the caller does not use.
    """
    cdef Py_ssize_t j, L = layers.shape[0], last_unit = n_in, last_w = 0
    if layers.shape[1] != L_NCOLS or L < 1 or n_in < 1:
        raise ValueError("kernel: malformed layer table")
    for j in range(L):
        if (layers[j, L_START] != last_unit or layers[j, L_SIZE] < 1
                or layers[j, L_SRC_LO] < 0 or layers[j, L_SRC_HI] > layers[j, L_START]
                or layers[j, L_SRC_LO] >= layers[j, L_SRC_HI]
                or layers[j, L_W_OFF] != last_w
                or layers[j, L_B_OFF] != last_w + layers[j, L_SIZE] * (layers[j, L_SRC_HI] - layers[j, L_SRC_LO])
                or layers[j, L_ACT] < 0 or layers[j, L_ACT] >= N_ACTIVATIONS
                or (layers[j, L_ACT] == ACT_SOFTMAX and j < L - 1)):
            raise ValueError(f"kernel: inconsistent layer table row {j}")
        last_unit = layers[j, L_START] + layers[j, L_SIZE]
        last_w = layers[j, L_B_OFF] + layers[j, L_SIZE]
    if n_units < last_unit:
        raise ValueError(f"kernel: activation rows have {n_units} columns, the layers need {last_unit}")
    if n_w != last_w:
        raise ValueError(f"kernel: weight vectors have length {n_w}, the layers need {last_w}")
    if t_rows != -1 and (t_rows != n_rows or t_cols != layers[L - 1, L_SIZE]):
        raise ValueError("kernel: targets do not match the activations/outputs")
    if d_rows != -1 and (d_rows < 1 or d_cols != last_unit - n_in):
        raise ValueError(f"kernel: workspaces need {last_unit - n_in} columns and >= 1 row")
    return 0


cdef int check_order(const Py_ssize_t[:, ::1] order, Py_ssize_t n_epochs,
                     Py_ssize_t n) except -1:
    """Refuse a presentation order (an epoch's rows of n patterns per row) that is
    not (>= n_epochs, n) or holds a row index outside [0, n)."""
    cdef Py_ssize_t e, p
    if order.shape[0] < n_epochs or order.shape[1] != n:
        raise ValueError("kernel: presentation order has the wrong shape")
    for e in range(n_epochs):
        for p in range(n):
            if order[e, p] < 0 or order[e, p] >= n:
                raise ValueError("kernel: presentation order out of range")
    return 0


cdef double forward_blocks(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                          const real_t[::1] w, real_t[:, ::1] A, const real_t* T,
                          Py_ssize_t block, Py_ssize_t blas_min) noexcept nogil:
    """Forward pass over every row of A in blocks; with targets T (else NULL),
    also return the summed squared error of the outputs, added block by block
    (in double: each difference y - t of the value type, squared and summed in
    double)."""
    cdef Py_ssize_t n = A.shape[0], lda = A.shape[1], n_out = layers[layers.shape[0] - 1, L_SIZE]
    cdef Py_ssize_t r0 = 0, nb, r, k, out0 = layers[layers.shape[0] - 1, L_START]
    cdef double sse = 0.0, e
    while r0 < n:
        nb = min(block, n - r0)
        forward_rows(&layers[0, 0], layers.shape[0], &w[0], &A[r0, 0], lda,
                     NULL, 0, n_in, nb, blas_min)
        if T != NULL:
            for r in range(r0, r0 + nb):
                for k in range(n_out):
                    e = <double>A[r, out0 + k] - <double>T[r * n_out + k]
                    sse += e * e
        r0 += nb
    return sse


def forward(A, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, Py_ssize_t block,
            Py_ssize_t blas_min):
    """Forward pass in place over every row of A.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 or float32 (rows may be padded past the
        units; the padding is not read), inputs in columns [0, n_in); the other
        columns are overwritten with the activations.
    layers : (n_layers, 7) intp layer table.
    n_in : number of inputs.
    w : flat weights, of A's dtype.
    block : rows per block (cache blocking).
    blas_min : use BLAS for products with m*n*k >= blas_min.

    Returns
    -------
    status : int, 0 on success.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (w,), "w")
    if bits == 32:
        return forward_t[float](A, layers, n_in, w, block, blas_min)
    return forward_t[double](A, layers, n_in, w, block, blas_min)


cdef object forward_t(real_t[:, ::1] A, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                      const real_t[::1] w, Py_ssize_t block, Py_ssize_t blas_min):
    """`forward` at one value type."""
    check_buffers(layers, n_in, A.shape[0], A.shape[1], w.shape[0], -1, -1, -1, -1)
    if block < 1:
        raise ValueError("kernel: block must be >= 1")
    if A.shape[0] > 0:
        with nogil:
            forward_blocks(layers, n_in, w, A, NULL, block, blas_min)
    return 0


def sum_squared_error(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w,
                      Py_ssize_t block, Py_ssize_t blas_min):
    """Forward pass over A and the summed squared error against T.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 or float32 workspace with the inputs
        filled in (rows may be padded past the units; the padding is not read).
    T : (n_patterns, n_out) targets, of A's dtype.
    layers, n_in, w, block, blas_min : as in :func:`forward` (w of A's dtype).

    Returns
    -------
    sse : float, sum over patterns and outputs of (y - t)**2, accumulated in
        double at both value types.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w), "T w")
    if bits == 32:
        return sse_t[float](A, T, layers, n_in, w, block, blas_min)
    return sse_t[double](A, T, layers, n_in, w, block, blas_min)


cdef double sse_t(real_t[:, ::1] A, const real_t[:, ::1] T, const Py_ssize_t[:, ::1] layers,
                  Py_ssize_t n_in, const real_t[::1] w, Py_ssize_t block,
                  Py_ssize_t blas_min) except? -1.0:
    """`sum_squared_error` at one value type."""
    cdef double sse = 0.0
    check_buffers(layers, n_in, A.shape[0], A.shape[1], w.shape[0], T.shape[0], T.shape[1],
                  -1, -1)
    if block < 1:
        raise ValueError("kernel: block must be >= 1")
    if A.shape[0] > 0:
        with nogil:
            sse = forward_blocks(layers, n_in, w, A, &T[0, 0], block, blas_min)
    return sse


cdef enum:
    # predict propagates batches of up to this many doubles' bytes (rows x row
    # stride; twice as many floats) in a buffer on the C stack (32 KiB): nothing is allocated per call for one
    # pattern or a few; larger batches take one heap block of `block` rows.
    PREDICT_STACK_DOUBLES = 4096
    # Activation rows start on 64-byte cache lines (fastnet._engine.ROW_ALIGN):
    # the stack buffer has that many bytes (8 doubles) more to align its start.
    ROW_ALIGN_BYTES = 64
    ROW_ALIGN_DOUBLES = 8


# predict's answers when it wrote nothing usable (see predict)
PREDICT_NOT_PREPARED = 1
PREDICT_NOT_FINITE = 2
PREDICT_NEEDS_BLAS_LIMIT = 3
PREDICT_OUTPUTS_NOT_FINITE = 4

cdef enum:
    # predict_blocks' answers
    BLOCKS_DONE = 0
    BLOCKS_INPUT_NOT_FINITE = 1
    BLOCKS_OUTPUT_NOT_FINITE = 2


cdef int predict_blocks(const Py_ssize_t[:, ::1] layers, const real_t* w,
                        const real_t* X, Py_ssize_t n, Py_ssize_t n_in,
                        real_t* Y, Py_ssize_t n_out, real_t* A, Py_ssize_t stride,
                        Py_ssize_t block, Py_ssize_t blas_min, bint check_outputs) noexcept nogil:
    """Outputs Y (n x n_out) of the inputs X (n x n_in), `block` rows at a time
    through the activation rows A (block x stride, 64-byte aligned). Returns
    BLOCKS_INPUT_NOT_FINITE when an input is not finite (Y then partly
    written); else, if check_outputs, BLOCKS_OUTPUT_NOT_FINITE when an output
    is not finite (finite inputs that overflowed; Y written whole); else
    BLOCKS_DONE."""
    cdef Py_ssize_t L = layers.shape[0], r0 = 0, nb, r, j
    cdef Py_ssize_t out0 = layers[L - 1, L_START], n_units = out0 + n_out
    cdef bint outputs_finite = True
    # Only a shortcut from the inputs past the first layer needs them beside the
    # units; otherwise the first layer reads X where it lies (no copy).
    cdef bint copy_inputs = False, first_nonfinite
    cdef bint all_inputs_first = layers[0, L_SRC_LO] == 0 and layers[0, L_SRC_HI] == n_in
    for j in range(1, L):
        copy_inputs = copy_inputs or layers[j, L_SRC_LO] < n_in
    for r in range(min(block, n)):          # the padding is never written: zero it once
        memset(A + r * stride + n_units, 0, (stride - n_units) * sizeof(real_t))
    while r0 < n:
        nb = min(block, n - r0)
        if copy_inputs:
            if not fn_loops_load_rows(nb, n_in, X + r0 * n_in, A, stride):
                return BLOCKS_INPUT_NOT_FINITE
            forward_rows(&layers[0, 0], L, w, A, stride, NULL, 0, n_in, nb, blas_min)
        else:
            # The inputs' check rides on the first layer's product, which reads
            # them anyway (a pass of its own over X cost 6 % of a 32-32-4 tanh
            # network's predict): a non-finite net input there is a non-finite
            # input or an overflow, which the inputs themselves then tell apart.
            # (every input must feed the first layer; else the inputs are checked)
            first_nonfinite = not all_inputs_first
            forward_rows_from(&layers[0, 0], L, w, X + r0 * n_in, n_in, A, stride, NULL, 0,
                              n_in, nb, blas_min, &first_nonfinite)
            if first_nonfinite and not fn_loops_all_finite(nb * n_in, X + r0 * n_in):
                return BLOCKS_INPUT_NOT_FINITE
        for r in range(nb):
            memcpy(Y + (r0 + r) * n_out, A + r * stride + out0, n_out * sizeof(real_t))
        if check_outputs and outputs_finite:
            # (the block's outputs lie together in Y: one vector pass)
            outputs_finite = fn_loops_all_finite(nb * n_out, Y + r0 * n_out)
        r0 += nb
    return BLOCKS_DONE if outputs_finite else BLOCKS_OUTPUT_NOT_FINITE


def predict(object X, object Y, const Py_ssize_t[:, ::1] layers, object w,
            Py_ssize_t stride, Py_ssize_t block, Py_ssize_t blas_min, bint blas_allowed,
            bint check_outputs=True):
    """The network's outputs for the inputs X, written into Y (a new array if None).

    The fast path of ``MLP.predict``: it takes X and Y only as they come from a
    caller who prepared them (C-contiguous, of the weights' dtype, float64 or
    float32, X of n_in columns, Y of X's rows and n_out columns, not overlapping
    X), and returns a code for anything else -- and for inputs that are not
    finite -- so that the caller checks and explains. The GIL is released while
    the network runs.

    Parameters
    ----------
    X : object, (n_patterns, n_in) inputs.
    Y : object, None or the (n_patterns, n_out) output array.
    layers : (n_layers, 7) intp layer table.
    w : flat weights, float64 or float32: the value type of the pass (a new Y
        is of this type).
    stride : values per activation row (>= n_units, a multiple of 8).
    block : rows per block for batches larger than the stack buffer.
    blas_min : products with m*n*k >= blas_min may go to BLAS.
    blas_allowed : whether the caller holds BLAS at one thread; if not, and some
        product could reach BLAS, PREDICT_NEEDS_BLAS_LIMIT is returned before anything
        runs.
    check_outputs : whether to answer PREDICT_OUTPUTS_NOT_FINITE when an output is
        not finite (the inputs were finite: an overflow); if not, Y is returned.

    Returns
    -------
    Y : ndarray, or an int when nothing usable was written: PREDICT_NOT_PREPARED (X or
        Y not as described), PREDICT_NOT_FINITE (an input is NaN or infinite),
        PREDICT_NEEDS_BLAS_LIMIT, PREDICT_OUTPUTS_NOT_FINITE (an output overflowed,
        with check_outputs: the caller runs again without and says so).
    """
    if value_bits(w, "w") == 32:
        return predict_t[float](X, Y, layers, w, stride, block, blas_min, blas_allowed,
                                check_outputs)
    return predict_t[double](X, Y, layers, w, stride, block, blas_min, blas_allowed,
                             check_outputs)


cdef object predict_t(object X, object Y, const Py_ssize_t[:, ::1] layers, const real_t[::1] w,
                      Py_ssize_t stride, Py_ssize_t block, Py_ssize_t blas_min,
                      bint blas_allowed, bint check_outputs):
    """`predict` at one value type."""
    cdef const real_t[:, ::1] Xv
    cdef real_t[:, ::1] Yv
    cdef Py_ssize_t L = layers.shape[0], j, n, n_in, n_out, nb
    # (the stack buffer holds PREDICT_STACK_DOUBLES doubles' bytes of either type)
    cdef Py_ssize_t stack_values = PREDICT_STACK_DOUBLES * sizeof(double) // sizeof(real_t)
    cdef double stack[PREDICT_STACK_DOUBLES + ROW_ALIGN_DOUBLES]
    cdef real_t* raw = NULL
    cdef real_t* A
    cdef int status
    cdef uintptr_t x0, x1, y0, y1
    if L < 1 or layers.shape[1] != L_NCOLS:     # (the full check follows, before any nogil code)
        raise ValueError("kernel: malformed layer table")
    n_in, n_out = layers[0, L_START], layers[L - 1, L_SIZE]
    try:
        Xv = X
    except (TypeError, ValueError, BufferError):
        return PREDICT_NOT_PREPARED
    n = Xv.shape[0]
    if Xv.shape[1] != n_in:
        return PREDICT_NOT_PREPARED
    nb = n if n * stride <= stack_values else min(block, n)
    if not blas_allowed:
        for j in range(L):
            if (layers[j, L_SIZE] > NARROW_LAYER and
                    nb * layers[j, L_SIZE] * (layers[j, L_SRC_HI] - layers[j, L_SRC_LO]) >= blas_min):
                return PREDICT_NEEDS_BLAS_LIMIT
    if Y is None:
        Y = np.empty((n, n_out)) if real_t is double else np.empty((n, n_out), np.float32)
    try:
        Yv = Y
    except (TypeError, ValueError, BufferError):
        return PREDICT_NOT_PREPARED
    if Yv.shape[0] != n or Yv.shape[1] != n_out:
        return PREDICT_NOT_PREPARED
    if n == 0:
        return Y
    check_buffers(layers, n_in, n, stride, w.shape[0], n, n_out, -1, -1)
    if stride % 8 or block < 1:
        raise ValueError("kernel: the row stride must be a multiple of 8 and block >= 1")
    x0 = <uintptr_t>&Xv[0, 0]; x1 = x0 + n * n_in * sizeof(real_t)
    y0 = <uintptr_t>&Yv[0, 0]; y1 = y0 + n * n_out * sizeof(real_t)
    if x0 < y1 and y0 < x1:
        return PREDICT_NOT_PREPARED
    if n * stride <= stack_values:
        A = <real_t*>stack
    else:
        raw = <real_t*>malloc((nb * stride) * sizeof(real_t) + ROW_ALIGN_BYTES)
        if raw == NULL:
            raise MemoryError(f"predict: no memory for {nb} activation rows of {stride} values")
        A = raw
    A = <real_t*>((<uintptr_t>A + ROW_ALIGN_BYTES - 1) & ~(<uintptr_t>ROW_ALIGN_BYTES - 1))
    with nogil:
        status = predict_blocks(layers, &w[0], &Xv[0, 0], n, n_in, &Yv[0, 0], n_out, A, stride,
                                nb, blas_min, check_outputs)
    free(raw)
    if status == BLOCKS_INPUT_NOT_FINITE:
        return PREDICT_NOT_FINITE
    if status == BLOCKS_OUTPUT_NOT_FINITE:
        return PREDICT_OUTPUTS_NOT_FINITE
    return Y


cdef int check_activation_rows(int code, Py_ssize_t rows, Py_ssize_t cols, bint has_d,
                               Py_ssize_t d_rows, Py_ssize_t d_cols) except -1:
    """The gate of the activation test entries (both value types): an elementwise
    activation code, and derivative rows D (has_d) of the shape of Z's."""
    if code < 0 or code >= N_ACTIVATIONS or code == ACT_SOFTMAX:
        raise ValueError(f"`code` must be an elementwise activation code, got {code}")
    if has_d and (d_rows != rows or d_cols != cols):
        raise ValueError(f"`D` must have Z's shape {(rows, cols)}, got {(d_rows, d_cols)}")
    return 0


def activation_at_level(int level, int code, Z, D=None):
    """Apply an elementwise activation to the rows of Z in place, at one CPU level.

    For the tests of the vector functions (_activations.h) at every level this
    CPU runs, whichever the loader would pick; rows narrower than a vector are
    taken across the rows, as in the forward pass.

    Parameters
    ----------
    level : 2 x86-64-v4 (AVX-512), 1 x86-64-v3 (AVX2 + FMA), 0 the portable baseline;
        -1 the level this process runs at.
    code : activation code (not softmax).
    Z : (rows, units) float64 or float32 values, overwritten with f(Z).
    D : None, or of Z's shape and dtype: overwritten with f'(Z).

    Returns
    -------
    done : bool, False when this build or CPU has no such level (Z untouched).
    """
    cdef int bits = value_bits(Z, "Z")
    if D is not None:
        check_dtypes(bits, (D,), "D")
    if bits == 32:
        return activation_t[float](level, code, Z, D)
    return activation_t[double](level, code, Z, D)


cdef object activation_t(int level, int code, real_t[:, ::1] Z, real_t[:, ::1] D):
    """`activation_at_level` at one value type."""
    check_activation_rows(code, Z.shape[0], Z.shape[1], D is not None,
                          D.shape[0] if D is not None else 0, D.shape[1] if D is not None else 0)
    cdef int done
    cdef Py_ssize_t nb = Z.shape[0], size = Z.shape[1]
    if nb == 0 or size == 0:
        return True
    cdef real_t* dp = &D[0, 0] if D is not None else NULL
    with nogil:
        done = fn_loops_activate_at(level, code, nb, size, &Z[0, 0], size, NULL, dp, size)
    return bool(done)


cdef extern from "_loops.h" nogil:
    int fn_loops_exp_at_f64 "fn_loops_exp_at"(int level, Py_ssize_t n, double* z)
    int fn_loops_exp_at_f32(int level, Py_ssize_t n, float* z)


def exp_at_level(int level, z):
    """exp of a float64 or float32 vector in place, at one CPU level.

    The exp that softmax runs, which no activation code reaches alone; for the
    tests and benchmarks of the vector functions (_activations.h).

    Parameters
    ----------
    level : 2 x86-64-v4 (AVX-512), 1 x86-64-v3 (AVX2 + FMA), 0 the portable baseline;
        -1 the level this process runs at.
    z : (n,) float64 or float32, overwritten with exp(z).

    Returns
    -------
    done : bool, False when this build or CPU has no such level (z untouched).
    """
    if value_bits(z, "z") == 32:
        return exp_t[float](level, z)
    return exp_t[double](level, z)


cdef object exp_t(int level, real_t[::1] z):
    """`exp_at_level` at one value type."""
    cdef int done
    cdef Py_ssize_t n = z.shape[0]
    if n == 0:
        return True
    with nogil:
        if real_t is double:
            done = fn_loops_exp_at_f64(level, n, &z[0])
        else:
            done = fn_loops_exp_at_f32(level, n, &z[0])
    return bool(done)
