# The body of _trials.pyx (float64) and _trials32.pyx (float32), written once over
# real_t, which the includer defines (ctypedef double / float) after defining, for
# float, FN_LANES_F32 before _trials.h (_lanes.h: the lanes of each value type).

from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libc.string cimport memcpy
from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS,
                             PyBUF_FORMAT, PyBUF_WRITABLE)
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.pyport cimport PY_SSIZE_T_MAX

from fastnet._kernels._forward cimport check_buffers
from fastnet._kernels._rules cimport FN_RULE_BACKPROP, FN_RULE_IRPROP_PLUS, Rule, fn_rule
from fastnet._kernels._rules import NAMES
from fastnet._kernels._types cimport ACT_SOFTMAX, L_ACT, L_SRC_HI, L_SRC_LO, L_START

cdef extern from "_trials.h" nogil:
    enum: FN_TL
    enum: FN_TBLOCK
    int fn_trials_tiny(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                       Py_ssize_t n_w, Py_ssize_t n_out)
    void fn_trials_sse(Py_ssize_t n_groups, const Py_ssize_t* layers, Py_ssize_t n_layers,
                       Py_ssize_t n_in, Py_ssize_t n_w, Py_ssize_t n, const real_t* X,
                       const real_t* T, Py_ssize_t n_out, const real_t* w, real_t* work,
                       double* sse)
    void fn_trials_gradient(Py_ssize_t n_groups, const Py_ssize_t* layers, Py_ssize_t n_layers,
                            Py_ssize_t n_in, Py_ssize_t n_units, Py_ssize_t n_w, Py_ssize_t n,
                            const real_t* X, const real_t* T, Py_ssize_t n_out, const real_t* w,
                            real_t* g, real_t* work, double* sse, double r_c, double analog,
                            int64_t* ok_bits)
    void fn_trials_outputs(Py_ssize_t n_groups, const Py_ssize_t* layers, Py_ssize_t n_layers,
                           Py_ssize_t n_in, Py_ssize_t n_w, Py_ssize_t n, const real_t* X,
                           Py_ssize_t n_out, const real_t* w, real_t* work, real_t* Y)
    ctypedef struct fn_trials_state:
        Py_ssize_t n_groups
        real_t* w
        real_t* g
        real_t* g_prev
        real_t* dw_prev
        real_t* step
        double* last_error
        int64_t* status
    ctypedef struct fn_trials_epochs:
        Py_ssize_t n_epochs, ld, check_every
        double* sse_out
        double sse_scale, r_c, analog
        Py_ssize_t t0, t_max
        double w_limit
        double* sse_max
    int64_t FN_STATUS_BEYOND
    void fn_trials_rule_step(Py_ssize_t n_w, real_t* w, const real_t* g, real_t* g_prev,
                             real_t* dw_prev, real_t* step, const fn_rule* rule,
                             const int64_t* rose, Py_ssize_t t, Py_ssize_t t_max)
    unsigned fn_trials_check(Py_ssize_t n, Py_ssize_t n_out, const real_t* Y, const real_t* T,
                             double r_c, double analog)
    void fn_trials_train(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                         Py_ssize_t n_units, Py_ssize_t n_w, Py_ssize_t n, const real_t* X,
                         const real_t* T, Py_ssize_t n_out, const fn_trials_state* state,
                         const fn_rule* rule, const fn_trials_epochs* run, real_t* work,
                         int special)

cdef extern from "_orders.h" nogil:
    ctypedef struct fn_bitgen:
        pass
    void fn_permutation(fn_bitgen* b, Py_ssize_t n, int64_t* out)

cdef extern from "_trials.h" nogil:
    ctypedef struct fn_trials_queue:
        Py_ssize_t n_trials, next
        const real_t* w0
        const real_t* step0
        Py_ssize_t step_rows
        real_t* w_out
        int64_t* epochs
        int64_t* status
        int64_t* top_epoch
        double* first
        double* top
        double* low
        double* history
        Py_ssize_t ld
        double below
        Py_ssize_t below_every
        int64_t* orders
        fn_bitgen* const* bitgens
    void fn_trials_queue_run(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                             Py_ssize_t n_units, Py_ssize_t n_w, Py_ssize_t n, const real_t* X,
                             const real_t* T, Py_ssize_t n_out, const fn_trials_state* state,
                             const fn_rule* rule, const fn_trials_epochs* run,
                             fn_trials_queue* q, real_t* work, int special)



#: A lane stopped at trials_train's w_limit has status BEYOND + the epochs it trained.
BEYOND = FN_STATUS_BEYOND

#: Trials per group (lanes of one vector).
LANES = FN_TL
#: Examples per block of the training pass.
BLOCK = FN_TBLOCK


def work_size(Py_ssize_t n_units, Py_ssize_t n=0, Py_ssize_t n_in=0):
    """Values (of the weights' dtype) of scratch the kernels need for n_units units (and,
    for trials_rprop, n training examples of n_in inputs: the tiny-network
    kernels keep the inputs broadcast to the lanes there)."""
    return max(3 * FN_TBLOCK * n_units * FN_TL, n * n_in * FN_TL)


cdef int _acquire(object array, Py_buffer* view, Py_ssize_t n, int flags) except -1:
    """A C-contiguous buffer of n values (real_t) of `array` (released by the caller)."""
    PyObject_GetBuffer(array, view, flags | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
    cdef bytes fmt = view.format if view.format != NULL else b""
    cdef Py_ssize_t size = sizeof(real_t)
    if (view.itemsize != size or view.len != n * size
            or fmt.lstrip(b"@=<") != (b"d" if size == 8 else b"f")):
        PyBuffer_Release(view)
        raise ValueError(f"kernel: expected {n} contiguous {DTYPE} values")
    return 0


def gather_rows(list arrays, real_t[:, ::1] out):
    """out[i] = arrays[i] for vectors (of out's dtype) of out.shape[1] values (the weights
    of many networks into one matrix, without a NumPy call per network)."""
    cdef Py_ssize_t i, n = out.shape[1]
    cdef Py_buffer view
    if len(arrays) != out.shape[0]:
        raise ValueError("kernel: one array per row")
    for i in range(out.shape[0]):
        _acquire(arrays[i], &view, n, 0)
        memcpy(&out[i, 0], view.buf, n * sizeof(real_t))
        PyBuffer_Release(&view)


def scatter_rows(const real_t[:, ::1] rows, list arrays):
    """arrays[i][:] = rows[i] (the inverse of gather_rows)."""
    cdef Py_ssize_t i, n = rows.shape[1]
    cdef Py_buffer view
    if len(arrays) != rows.shape[0]:
        raise ValueError("kernel: one array per row")
    for i in range(rows.shape[0]):
        _acquire(arrays[i], &view, n, PyBUF_WRITABLE)
        memcpy(view.buf, &rows[i, 0], n * sizeof(real_t))
        PyBuffer_Release(&view)


cdef extern from "_cpu.h" nogil:
    int fn_cpu_level()
    enum: FN_CPU_LEVELS


def lanes_level():
    """The CPU level the lanes run at in this process: 2 x86-64-v4 (AVX-512), 1
    x86-64-v3 (AVX2), 0 the baseline (every other CPU or build; FASTNET_SIMD caps it)."""
    return fn_cpu_level() if FN_CPU_LEVELS else 0


def tiny_kernel(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, Py_ssize_t n_out):
    """Whether trials_rprop trains networks of this layer table in a kernel
    compiled for their shape and activations at this process's level (_tiny.h:
    more activation pairs at x86-64-v4 than below it)."""
    cdef Py_ssize_t L = layers.shape[0]
    if L < 1 or layers.shape[1] != 7:
        return False
    cdef Py_ssize_t n_w = layers[L - 1, 5] + layers[L - 1, 1]
    return bool(fn_trials_tiny(&layers[0, 0], L, n_in, n_w, n_out))


cdef Py_ssize_t _check(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                       const real_t[:, ::1] X, Py_ssize_t t_rows, Py_ssize_t t_cols,
                       const real_t[:, :, ::1] w, real_t[::1] work) except -1:
    """The memory-safety gate of both kernels; returns the unit count."""
    cdef Py_ssize_t L = layers.shape[0], j
    # (activation rows live in `work` here: their width is checked below)
    check_buffers(layers, n_in, X.shape[0], PY_SSIZE_T_MAX, w.shape[1], t_rows, t_cols, -1, -1)
    for j in range(1, L):
        # the backward pass completes a layer's dE/dnet in the tiles of the layer
        # after it, which must read all of it, last (every MLP's layers do)
        if (layers[j, L_SRC_HI] != layers[j, L_START]
                or layers[j, L_SRC_LO] > layers[j - 1, L_START]):
            raise ValueError("kernel: in the lanes each layer must read the whole layer "
                             "before it, as its last sources")
    cdef Py_ssize_t n_units = layers[L - 1, 0] + layers[L - 1, 1]
    if X.shape[1] != n_in or X.shape[0] < 1:
        raise ValueError("kernel: inputs do not match the network")
    if w.shape[2] != FN_TL or w.shape[0] < 1:
        raise ValueError(f"kernel: per-trial blocks must be (n_groups, n_w, {FN_TL})")
    if work.shape[0] < work_size(n_units):
        raise ValueError("kernel: work buffer too small")
    if layers[L - 1, L_ACT] == ACT_SOFTMAX:
        raise ValueError("kernel: the lanes have no softmax units (train them one at a time)")
    return n_units


def _rprop_rule(Py_ssize_t variant, double eta_plus, double eta_minus, double step_min,
                double step_max):
    """RPROP's record of variant code 0-3 (the legacy entries' positional parameters)."""
    if variant < 0 or variant > FN_RULE_IRPROP_PLUS:
        raise ValueError("kernel: unknown RPROP variant")
    return Rule(NAMES[variant], eta_plus=eta_plus, eta_minus=eta_minus, delta_min=step_min,
                delta_max=step_max)


cdef int _check_rows(double[:, :] sse_out) except -1:
    """Refuse an error-history array whose rows are not contiguous or overlap (the
    kernels write each lane's row as a run of doubles)."""
    if sse_out.strides[1] != sizeof(double) or sse_out.strides[0] % sizeof(double) != 0 \
            or sse_out.strides[0] < sse_out.shape[1] * <Py_ssize_t>sizeof(double):
        raise ValueError("kernel: sse_out rows must be contiguous and not overlap")
    return 0


cdef bint _same_shape(const real_t[:, :, ::1] a, const real_t[:, :, ::1] b):
    return a.shape[0] == b.shape[0] and a.shape[1] == b.shape[1] and a.shape[2] == b.shape[2]


cdef int _check_state(fn_rule r, Py_ssize_t n_units, Py_ssize_t n_in,
                      const real_t[:, ::1] X, const real_t[:, :, ::1] w,
                      const real_t[:, :, ::1] g, const real_t[:, :, ::1] g_prev,
                      const real_t[:, :, ::1] dw_prev, const real_t[:, :, ::1] step,
                      const double[::1] last_error, const real_t[::1] work,
                      Py_ssize_t check_every, double r_c, double w_limit,
                      bint special) except -1:
    """The gate of the training kernels (trials_train, trials_queue) beyond `_check`:
    the rule's state, the scratch, the check's threshold and w_limit."""
    if work.shape[0] < work_size(n_units, X.shape[0], n_in):
        raise ValueError("kernel: work buffer too small")
    if not (_same_shape(g, w) and _same_shape(g_prev, w) and _same_shape(dw_prev, w)
            and _same_shape(step, w)):
        raise ValueError("kernel: the rule's state does not match the weights")
    if last_error.shape[0] != w.shape[0] * FN_TL:
        raise ValueError("kernel: last_error must hold one value per lane")
    if check_every < 0 or (check_every > 0 and not 0.0 < r_c <= 0.5):
        raise ValueError("kernel: success check needs r_c in (0, 0.5]")
    if w_limit > 0.0 and special and r.code <= FN_RULE_IRPROP_PLUS:
        raise ValueError("kernel: w_limit needs special=False for RPROP")
    return 0


cdef bint _strip_runs(Py_ssize_t n_groups, const int64_t[::1] status, double[:, :] sse_out,
                      Py_ssize_t t0, Py_ssize_t t_max) except -1:
    """The gate of trials_train and trials_online for the lane status, the error
    history and the epochs; whether the call trains any epoch."""
    if status.shape[0] != n_groups * FN_TL or sse_out.shape[0] != n_groups * FN_TL:
        raise ValueError("kernel: per-lane vectors must hold one value per lane")
    if t0 < 0 or t_max < 1:
        raise ValueError("kernel: t0 must be >= 0 and t_max >= 1")
    if sse_out.shape[1] == 0:
        return False
    _check_rows(sse_out)
    return True


cdef fn_trials_epochs _strip_epochs(double[:, :] sse_out, Py_ssize_t check_every,
                                    double sse_scale, double r_c, double analog, Py_ssize_t t0,
                                    Py_ssize_t t_max, double w_limit, double* top):
    """The record of a call of sse_out.shape[1] epochs (``_strip_runs`` passed)."""
    return fn_trials_epochs(sse_out.shape[1], sse_out.strides[0] // sizeof(double), check_every,
                            &sse_out[0, 0], sse_scale, r_c, analog, t0, t_max, w_limit, top)


def trials_sse(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[:, ::1] X,
               const real_t[:, ::1] T, const real_t[:, :, ::1] w, real_t[::1] work,
               double[::1] sse_out):
    """Summed squared error of every trial on (X, T), forward pass alone.

    Parameters
    ----------
    layers, n_in : the network's layer table and input count.
    X, T : (n, n_in) inputs and (n, n_out) targets, shared by all trials.
    w : (n_groups, n_w, LANES) weights, trial g * LANES + k in lane k of group g.
    work : scratch of at least work_size(n_units) values (of the weights' dtype).
    sse_out : (n_groups * LANES,) output.

    Returns
    -------
    status : int, 0.
    """
    _check(layers, n_in, X, T.shape[0], T.shape[1], w, work)
    if sse_out.shape[0] != w.shape[0] * FN_TL:
        raise ValueError("kernel: sse_out must hold one value per lane")
    with nogil:
        fn_trials_sse(w.shape[0], &layers[0, 0], layers.shape[0], n_in, w.shape[1],
                      X.shape[0], &X[0, 0], &T[0, 0], T.shape[1], &w[0, 0, 0], &work[0],
                      &sse_out[0])
    return 0


def trials_gradient(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[:, ::1] X,
                    const real_t[:, ::1] T, const real_t[:, :, ::1] w, real_t[:, :, ::1] g,
                    real_t[::1] work, double[::1] sse_out, int64_t[::1] ok_out=None,
                    double r_c=0.4, double analog=-1.0):
    """Summed squared error and its gradient of every trial on (X, T).

    Parameters
    ----------
    layers, n_in, X, T, w : as trials_sse.
    g : (n_groups, n_w, LANES) output: dE/dw of each trial (E = sum (y - t)^2).
    work : scratch of at least work_size(n_units) values (of the weights' dtype).
    sse_out : (n_groups * LANES,) output.
    ok_out : (n_groups,) int64 output, optional: Hamey's check of the outputs of the
        forward pass (those of ``w``), bit k of word g set where trial g * LANES + k
        is right on every output (thresholds ``r_c`` in (0, 0.5] and ``analog``,
        negative: every target 0 or 1), as the lanes' rules check.

    Returns
    -------
    status : int, 0.
    """
    cdef Py_ssize_t n_units = _check(layers, n_in, X, T.shape[0], T.shape[1], w, work)
    if not _same_shape(g, w):
        raise ValueError("kernel: the gradient must match the weights")
    if sse_out.shape[0] != w.shape[0] * FN_TL:
        raise ValueError("kernel: sse_out must hold one value per lane")
    cdef int64_t* ok = NULL
    if ok_out is not None:
        if ok_out.shape[0] != w.shape[0]:
            raise ValueError("kernel: ok_out must hold one word per group")
        if not 0.0 < r_c <= 0.5:
            raise ValueError("kernel: the check needs r_c in (0, 0.5]")
        ok = &ok_out[0]
    with nogil:
        fn_trials_gradient(w.shape[0], &layers[0, 0], layers.shape[0], n_in, n_units, w.shape[1],
                           X.shape[0], &X[0, 0], &T[0, 0], T.shape[1], &w[0, 0, 0], &g[0, 0, 0],
                           &work[0], &sse_out[0], r_c, analog, ok)
    return 0


def trials_outputs(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[:, ::1] X,
                   const real_t[:, :, ::1] w, real_t[::1] work, real_t[:, :, :, ::1] Y):
    """Outputs of every trial on X, forward pass alone.

    Parameters
    ----------
    layers, n_in, X, w, work : as trials_sse.
    Y : (n_groups, n, n_out, LANES) output.

    Returns
    -------
    status : int, 0.
    """
    _check(layers, n_in, X, Y.shape[1], Y.shape[2], w, work)
    if Y.shape[0] != w.shape[0] or Y.shape[3] != FN_TL:
        raise ValueError("kernel: outputs must be (n_groups, n, n_out, LANES)")
    with nogil:
        fn_trials_outputs(w.shape[0], &layers[0, 0], layers.shape[0], n_in, w.shape[1],
                          X.shape[0], &X[0, 0], Y.shape[2], &w[0, 0, 0], &work[0],
                          &Y[0, 0, 0, 0])
    return 0


def trials_train(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[:, ::1] X,
                 const real_t[:, ::1] T, real_t[:, :, ::1] w, real_t[:, :, ::1] g,
                 real_t[:, :, ::1] g_prev, real_t[:, :, ::1] dw_prev, real_t[:, :, ::1] step,
                 double[::1] last_error, int64_t[::1] status, real_t[::1] work, Rule rule,
                 double[:, :] sse_out, Py_ssize_t check_every=0, double r_c=0.4,
                 double analog=-1.0, bint special=True, double sse_scale=1.0, Py_ssize_t t0=0,
                 Py_ssize_t t_max=1, double w_limit=0.0):
    """Run sse_out.shape[1] epochs of a lanes rule for every lane whose status is 0.

    Parameters
    ----------
    layers, n_in : the network's layer table and input count.
    X, T : training inputs and targets, shared by all trials.
    w, g, g_prev, dw_prev, step : (n_groups, n_w, LANES) weights, gradient and
        the rule's three state arrays (see fn_trials_state in _lanes.h), read
        and updated in place (frozen lanes are left unchanged).
    last_error : (n_groups * LANES,) previous epoch's SSE per lane (irprop+).
    status : (n_groups * LANES,) int64, 0 = train; see _lanes.h for what the
        kernel writes (k > 0: non-finite error in epoch k of this call; -k: the
        success check held after epoch k).
    work : scratch of at least work_size(n_units, n, n_in) values (of the weights' dtype).
    rule : fastnet._kernels._rules.Rule, the rule's record (any rule of the table).
    sse_out : (n_groups * LANES, n_epochs), rows contiguous (any row stride):
        the training SSE per lane (trial g * LANES + lane) and epoch, times
        sse_scale (only the epochs a lane trained are meaningful).
    check_every, r_c, analog : Hamey's success check after every check_every-th
        epoch (0: none), as in _per_weight.train_epochs.
    special : RPROP on tiny shapes in their own kernels (see _tiny.h).
    t0, t_max : the epochs trained before the call (Adam's bias corrections,
        backprop's decay) and backprop's decay horizon (>= 1).
    w_limit : > 0: a lane with a weight of this magnitude or more (or NaN)
        stops before its next epoch with status BEYOND + the epochs it trained
        in the call (the generic kernel: not with ``special`` RPROP shapes).

    Returns
    -------
    top : float, the largest value written to sse_out (NaN not counted; frozen
        and padding lanes included), -inf if none.
    """
    cdef fn_rule r = rule.c
    cdef Py_ssize_t n_units = _check(layers, n_in, X, T.shape[0], T.shape[1], w, work)
    cdef Py_ssize_t n_groups = w.shape[0], n_w = w.shape[1]
    _check_state(r, n_units, n_in, X, w, g, g_prev, dw_prev, step, last_error, work,
                 check_every, r_c, w_limit, special)
    if not _strip_runs(n_groups, status, sse_out, t0, t_max):
        return -INFINITY
    cdef fn_trials_state state = fn_trials_state(
        n_groups, &w[0, 0, 0], &g[0, 0, 0], &g_prev[0, 0, 0], &dw_prev[0, 0, 0],
        &step[0, 0, 0], &last_error[0], &status[0])
    cdef double top = -INFINITY
    cdef fn_trials_epochs run = _strip_epochs(sse_out, check_every, sse_scale, r_c, analog, t0,
                                              t_max, w_limit, &top)
    with nogil:
        fn_trials_train(&layers[0, 0], layers.shape[0], n_in, n_units, n_w, X.shape[0],
                        &X[0, 0], &T[0, 0], T.shape[1], &state, &r, &run, &work[0], special)
    return top


def trials_queue(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[:, ::1] X,
                 const real_t[:, ::1] T, real_t[:, :, ::1] w, real_t[:, :, ::1] g,
                 real_t[:, :, ::1] g_prev, real_t[:, :, ::1] dw_prev, real_t[:, :, ::1] step,
                 double[::1] last_error, real_t[::1] work, Rule rule,
                 const real_t[:, ::1] w0, const real_t[:, ::1] step0, real_t[:, ::1] w_out,
                 int64_t[::1] epochs, int64_t[::1] status, int64_t[::1] top_epoch,
                 double[::1] first, double[::1] top, double[::1] low, double[:, ::1] history,
                 Py_ssize_t check_every=0, double r_c=0.4, double analog=-1.0,
                 bint special=True, double sse_scale=1.0, Py_ssize_t t_max=1,
                 double w_limit=0.0, double below=-1.0, Py_ssize_t below_every=0,
                 int64_t[:, ::1] orders=None, const size_t[::1] bitgens=None):
    """Train every trial of a queue, each from its start until it stops, in the
    lanes of the groups of w (each lane takes trial after trial: a lane whose
    trial stopped takes the next waiting one at once; see fn_trials_queue in
    _trials.h).

    Parameters
    ----------
    layers, n_in, X, T, rule, check_every, r_c, analog, special, sse_scale :
        as trials_train's (check_every: Hamey's check on the outputs of the
        forward pass of each epoch, i.e. of the weights after the epoch before).
    w, g, g_prev, dw_prev, step : (n_groups, n_w, LANES) scratch for the lanes'
        weights, gradient and rule state (their values are not read).
    last_error : (n_groups * LANES,) scratch.
    work : scratch of at least work_size(n_units, n, n_in) values (of the weights' dtype).
    w0 : (K, n_w) each trial's initial weights.
    step0 : (K, n_w) or (1, n_w) initial steps, or None (zeros).
    w_out : (K, n_w) the weights each trial stopped with.
    epochs, status, top_epoch : (K,) int64: epochs trained; why it stopped (0:
        t_max reached; -t: the check held after epoch t; k > 0: non-finite
        error in epoch k); the (1-based) epoch of its largest error.
    first, top, low : (K,) its error (times sse_scale) of its first epoch, its
        largest, its smallest (NaN: none).
    history : (K, ld) its error by epoch (times sse_scale), ld >= t_max, or None.
    t_max : the most epochs a trial trains (>= 1; backprop's decay horizon).
    w_limit : > 0: a trial with a weight of this magnitude or more (or NaN) stops
        before its next epoch with status BEYOND + the epochs it trained (the
        generic kernel: not with ``special`` RPROP shapes).
    below, below_every : with below_every > 0, a trial whose error (times
        sse_scale) of an epoch that ends a strip of below_every epochs is below
        ``below`` stops after that epoch (status -its epochs).
    orders, bitgens : online backpropagation (rule backprop, decay 0, 1 or 2:
        see trials_online), or None: (n_groups * LANES, n) int64 scratch for the
        lanes' orders, and (K,) the bitgen_address of each trial's generator
        (whose locks the caller holds), from which its lane draws the order of
        each of its epochs. Hamey's check then reads a forward pass of its own
        at the weights after the epoch (every check_every-th of the trial's);
        status k > 0: non-finite error in epoch k (its updates made); BEYOND +
        t: a weight reached w_limit (or NaN) after t epochs or within epoch t
        + 1 (its weights those of after epoch t). work: at least
        online_work_size(n_units, n_w) values as well.

    Returns
    -------
    top : float, the largest error recorded, -inf if none.
    """
    cdef fn_rule r = rule.c
    cdef Py_ssize_t n_units = _check(layers, n_in, X, T.shape[0], T.shape[1], w, work)
    cdef Py_ssize_t n_groups = w.shape[0], n_w = w.shape[1], K = w0.shape[0]
    _check_state(r, n_units, n_in, X, w, g, g_prev, dw_prev, step, last_error, work,
                 check_every, r_c, w_limit, special)
    if t_max < 1 or below_every < 0:
        raise ValueError("kernel: t_max must be >= 1 and below_every >= 0")
    if w0.shape[1] != n_w or w_out.shape[0] != K or w_out.shape[1] != n_w:
        raise ValueError("kernel: w0 and w_out must be (K, n_w)")
    if step0 is not None and (step0.shape[1] != n_w or step0.shape[0] not in (1, K)):
        raise ValueError("kernel: step0 must be (1, n_w) or (K, n_w)")
    if not (epochs.shape[0] == status.shape[0] == top_epoch.shape[0] == first.shape[0]
            == top.shape[0] == low.shape[0] == K):
        raise ValueError("kernel: per-trial vectors must hold one value per trial")
    if history is not None and (history.shape[0] != K or history.shape[1] < t_max):
        raise ValueError("kernel: history must be (K, >= t_max)")
    cdef Py_ssize_t i
    if bitgens is not None or orders is not None:
        _check_online(r, work, n_units, n_w)
        _check_orders(n_groups, X.shape[0], orders, bitgens, K)
        for i in range(K):
            if bitgens[i] == 0:
                raise ValueError("kernel: a trial has no generator")
    cdef double largest = -INFINITY
    if K == 0:
        return largest
    cdef fn_trials_state state = fn_trials_state(
        n_groups, &w[0, 0, 0], &g[0, 0, 0], &g_prev[0, 0, 0], &dw_prev[0, 0, 0],
        &step[0, 0, 0], &last_error[0], NULL)
    cdef fn_trials_epochs run = fn_trials_epochs(
        0, 0, check_every, NULL, sse_scale, r_c, analog, 0, t_max, w_limit, &largest)
    cdef const real_t* steps = NULL
    cdef double* rows = NULL
    cdef Py_ssize_t step_rows = 0, ld = 0
    if step0 is not None:
        steps, step_rows = &step0[0, 0], step0.shape[0]
    if history is not None:
        rows, ld = &history[0, 0], history.shape[1]
    cdef fn_trials_queue q = fn_trials_queue(
        K, 0, &w0[0, 0], steps, step_rows, &w_out[0, 0], &epochs[0], &status[0],
        &top_epoch[0], &first[0], &top[0], &low[0], rows, ld, below, below_every, NULL, NULL)
    if bitgens is not None:
        q.orders, q.bitgens = &orders[0, 0], <fn_bitgen* const*>&bitgens[0]
    with nogil:
        fn_trials_queue_run(&layers[0, 0], layers.shape[0], n_in, n_units, n_w, X.shape[0],
                            &X[0, 0], &T[0, 0], T.shape[1], &state, &r, &run, &q, &work[0],
                            special)
    return largest


def trials_rprop(layers, Py_ssize_t n_in, X, T, w, g, g_prev, dw_prev, step, last_error,
                 status, work, int variant, double eta_plus, double eta_minus, double step_min,
                 double step_max, sse_out, Py_ssize_t check_every=0, double r_c=0.4,
                 double analog=-1.0, bint special=True, double sse_scale=1.0):
    """trials_train for RPROP: ``variant`` (0-3), eta_plus, eta_minus, step_min
    and step_max as train_epochs in _rprop; the rest as trials_train's.

    Returns
    -------
    top : float, as trials_train's.
    """
    return trials_train(layers, n_in, X, T, w, g, g_prev, dw_prev, step, last_error, status,
                        work, _rprop_rule(variant, eta_plus, eta_minus, step_min, step_max), sse_out,
                        check_every, r_c, analog, special, sse_scale)


def rule_step(int variant, w, g, g_prev, dw_prev, step, double eta_plus, double eta_minus,
              double step_min, double step_max, rose):
    """Python twin of the lanes' RPROP rule for tests: one step of (n_w, LANES)
    blocks in place (as _rprop.rprop_step, lane k with error_rose = rose[k] != 0).

    Returns
    -------
    status : int, 0.
    """
    return lanes_rule_step(_rprop_rule(variant, eta_plus, eta_minus, step_min, step_max), w, g, g_prev,
                           dw_prev, step, rose)


def lanes_rule_step(Rule rule, real_t[:, ::1] w, const real_t[:, ::1] g,
                    real_t[:, ::1] g_prev, real_t[:, ::1] dw_prev, real_t[:, ::1] step,
                    const int64_t[::1] rose, Py_ssize_t t=0, Py_ssize_t t_max=1):
    """Python twin of any lanes rule for tests: one step of (n_w, LANES) blocks
    in place, the epoch after the trials' t-th (``rule`` and ``t_max`` as in
    trials_train; rose[k] != 0: lane k's error rose, for irprop+).

    Returns
    -------
    status : int, 0.
    """
    cdef fn_rule r = rule.c
    cdef Py_ssize_t n = w.shape[0]
    if (w.shape[1] != FN_TL or g.shape[0] != n or g.shape[1] != FN_TL or g_prev.shape[0] != n
            or g_prev.shape[1] != FN_TL or dw_prev.shape[0] != n or dw_prev.shape[1] != FN_TL
            or step.shape[0] != n or step.shape[1] != FN_TL or rose.shape[0] != FN_TL):
        raise ValueError(f"kernel: rule blocks must all be (n_w, {FN_TL}), rose ({FN_TL},)")
    if t < 0 or t_max < 1:
        raise ValueError("kernel: t must be >= 0 and t_max >= 1")
    if n == 0:
        return 0
    with nogil:
        fn_trials_rule_step(n, &w[0, 0], &g[0, 0], &g_prev[0, 0], &dw_prev[0, 0], &step[0, 0],
                            &r, &rose[0], t, t_max)
    return 0


def check_lanes(const real_t[:, :, ::1] Y, const real_t[:, ::1] T, double r_c, double analog):
    """Python twin of the lanes' success check for tests: for outputs Y (n, n_out,
    LANES) and targets T (n, n_out), a bool per lane (every output right)."""
    if Y.shape[0] != T.shape[0] or Y.shape[1] != T.shape[1] or Y.shape[2] != FN_TL:
        raise ValueError(f"kernel: outputs must be (n, n_out, {FN_TL}) for targets (n, n_out)")
    cdef unsigned bits = (1u << FN_TL) - 1
    if Y.shape[0] * Y.shape[1] > 0:
        with nogil:
            bits = fn_trials_check(Y.shape[0], Y.shape[1], &Y[0, 0, 0], &T[0, 0], r_c, analog)
    return [bool(bits >> k & 1) for k in range(FN_TL)]


include "_trials_online.pxi"
