"""Scaled conjugate gradient (Møller 1993) for many trials at once, side by side in
vector lanes, each lane taking trial after trial from a queue (see _scg_lanes.h)."""
import numpy as np

from libc.stdint cimport int64_t
from cpython.pyport cimport PY_SSIZE_T_MAX

from fastnet._kernels._forward cimport check_buffers
from fastnet._kernels._types cimport ACT_SOFTMAX, L_ACT, L_SRC_HI, L_SRC_LO, L_START

cdef extern from "_scg_lanes.h" nogil:
    enum: FN_TL
    enum: FN_TBLOCK
    enum: FN_SCG_BLOCKS
    enum: FN_SCG_DONE
    enum: FN_SCG_UNSAFE
    enum: FN_SCG_MAX_EPOCHS
    enum: FN_SCG_CORRECT
    enum: FN_SCG_CONVERGED
    enum: FN_SCG_ABNORMAL
    enum: FN_SCG_DIVERGED_INITIAL
    enum: FN_SCG_DIVERGED
    enum: FN_SCG_BELOW
    ctypedef struct fn_scg_params:
        double sigma, lambda1, w_limit, r_c, analog
        int check
        double below
        Py_ssize_t t_max, restart
    ctypedef struct fn_scg_queue:
        Py_ssize_t n_trials, next
        const double* w0
        double* w_out
        int64_t* epochs
        int64_t* checks
        int64_t* reason
        int64_t* counts
        double* first
        double* low
        double* history
        Py_ssize_t ld
        double sse_scale
    int fn_scg_run(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                   Py_ssize_t n_units, Py_ssize_t n_w, Py_ssize_t n, const double* X,
                   const double* T, Py_ssize_t n_out, const fn_scg_params* par,
                   fn_scg_queue* q, double* state, double* work)

#: Trials per group (lanes of one vector).
LANES = FN_TL
#: What scg_queue returns: every trial trained, or a trial point beyond w_limit.
DONE, UNSAFE = FN_SCG_DONE, FN_SCG_UNSAFE
#: Why a trial stopped (scg_queue's ``reason``), by code.
REASONS = {FN_SCG_MAX_EPOCHS: "max_epochs", FN_SCG_CORRECT: "correct",
           FN_SCG_CONVERGED: "converged", FN_SCG_ABNORMAL: "abnormal",
           FN_SCG_DIVERGED_INITIAL: "diverged_initial", FN_SCG_DIVERGED: "diverged",
           FN_SCG_BELOW: "error_below"}


def work_size(Py_ssize_t n_units):
    """Doubles of scratch the passes need (trials_gradient's: activations, f'(net)
    and dE/da of a block of examples in every lane)."""
    return 3 * FN_TBLOCK * n_units * FN_TL


def state_size(Py_ssize_t n_w):
    """Doubles of the group's state: w, r, p, the pass point and two gradients,
    (n_w, LANES) each."""
    return FN_SCG_BLOCKS * n_w * FN_TL


cdef Py_ssize_t _check_net(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                           const double[:, ::1] X, const double[:, ::1] T,
                           Py_ssize_t n_w) except -1:
    """The network half of the memory-safety gate (as the other lanes kernels'):
    returns the unit count."""
    cdef Py_ssize_t L = layers.shape[0], j
    check_buffers(layers, n_in, X.shape[0], PY_SSIZE_T_MAX, n_w, T.shape[0], T.shape[1], -1, -1)
    for j in range(1, L):
        # (the lanes' backward pass completes a layer's dE/dnet in the layer after it)
        if (layers[j, L_SRC_HI] != layers[j, L_START]
                or layers[j, L_SRC_LO] > layers[j - 1, L_START]):
            raise ValueError("kernel: in the lanes each layer must read the whole layer "
                             "before it, as its last sources")
    if X.shape[1] != n_in or X.shape[0] < 1:
        raise ValueError("kernel: inputs do not match the network")
    if layers[L - 1, L_ACT] == ACT_SOFTMAX:
        raise ValueError("kernel: the lanes have no softmax units")
    return layers[L - 1, 0] + layers[L - 1, 1]


def _scg_queue64(const Py_ssize_t[:, ::1] layers not None, Py_ssize_t n_in,
              const double[:, ::1] X not None, const double[:, ::1] T not None,
              const double[:, ::1] w0 not None, double[:, ::1] w_out not None,
              int64_t[::1] epochs not None, int64_t[::1] checks not None,
              int64_t[::1] reason not None, int64_t[:, ::1] counts not None,
              double[::1] first not None, double[::1] low not None, double[:, ::1] history,
              double[::1] state not None, double[::1] work not None, double sigma,
              double lambda1, double w_limit, double r_c, double analog, Py_ssize_t t_max,
              double sse_scale=1.0, bint check=True, double below=-1.0):
    """scg_queue in float64 (its gate and kernel)."""
    cdef Py_ssize_t K = w0.shape[0], n_w = w0.shape[1]
    cdef Py_ssize_t n_units = _check_net(layers, n_in, X, T, n_w)
    if w_out.shape[0] != K or w_out.shape[1] != n_w:
        raise ValueError("kernel: w0 and w_out must be (K, n_w)")
    if not (epochs.shape[0] == checks.shape[0] == reason.shape[0] == first.shape[0]
            == low.shape[0] == K) or counts.shape[0] != 3 or counts.shape[1] != K:
        raise ValueError("kernel: per-trial vectors must hold one value per trial, counts (3, K)")
    if history is not None and (history.shape[0] != K or history.shape[1] < t_max):
        raise ValueError("kernel: history must be (K, >= t_max)")
    if state.shape[0] < state_size(n_w) or work.shape[0] < work_size(n_units):
        raise ValueError("kernel: state or work buffer too small")
    if not (sigma > 0.0 and lambda1 > 0.0 and 0.0 < r_c <= 0.5 and t_max >= 1):
        raise ValueError("kernel: SCG needs sigma > 0, lambda1 > 0, r_c in (0, 0.5], "
                         "t_max >= 1")
    if K == 0:
        return FN_SCG_DONE
    cdef fn_scg_params par = fn_scg_params(sigma, lambda1, w_limit, r_c, analog, check, below,
                                           t_max, n_w)
    cdef double* rows = NULL
    cdef Py_ssize_t ld = 0
    if history is not None:
        rows, ld = &history[0, 0], history.shape[1]
    cdef fn_scg_queue q = fn_scg_queue(K, 0, &w0[0, 0], &w_out[0, 0], &epochs[0], &checks[0],
                                       &reason[0], &counts[0, 0], &first[0], &low[0], rows, ld,
                                       sse_scale)
    cdef int status
    with nogil:
        status = fn_scg_run(&layers[0, 0], layers.shape[0], n_in, n_units, n_w, X.shape[0],
                            &X[0, 0], &T[0, 0], T.shape[1], &par, &q, &state[0], &work[0])
    return status


#: The arguments of scg_queue, in order.
_QUEUE_ARGS = ("layers", "n_in", "X", "T", "w0", "w_out", "epochs", "checks", "reason", "counts",
               "first", "low", "history", "state", "work")


def scg_queue(*args, **kw):
    """Train every trial of a queue by SCG, each from its initial weights until it
    stops, in the lanes of one group (each lane takes trial after trial; see
    _scg_lanes.h).

    Parameters
    ----------
    layers, n_in : the network's layer table and input count.
    X, T : (n, n_in) inputs and (n, n_out) targets, shared by all trials.
    w0 : (K, n_w) each trial's initial weights.
    w_out : (K, n_w) the weights each trial stopped with.
    epochs, checks, reason : (K,) int64: the epochs it trained, the success checks
        run, why it stopped (a key of REASONS).
    counts : (3, K) int64: its probe passes, error evaluations, gradient passes.
    first, low : (K,) its initial error, its smallest at an iteration's start.
    history : (K, ld >= t_max) its error at each iteration's start times
        sse_scale, or None.
    state : state_size(n_w) doubles of scratch; work : work_size(n_units).
    sigma, lambda1 : SCG's σ > 0 and λ₁ > 0.
    w_limit : a trial point with a weight of this magnitude or more (or NaN) ends
        the run (UNSAFE).
    r_c, analog : Hamey's check (r_c in (0, 0.5]; analog < 0: only targets 0
        and 1 can be right).
    t_max : the most epochs a trial trains (>= 1).
    check : whether Hamey's check runs after every epoch (stopping the trials
        that pass it, "correct"); without it ``checks`` are 0.
    below : a trial whose error at an iteration's start times sse_scale is below
        it stops after that iteration, "error_below" (< 0: never).

    float32 X, T, w0, w_out, state and work (all of them) train in float64: the data
    and the initial weights converted once, the weights each trial stopped with rounded
    to float32 into w_out, the scratch of float64 made here (SCG's float32 trials run
    through the float64 kernel; the lanes' rules have float32 kernels of their own,
    _trials32).

    Returns
    -------
    status : int, DONE or UNSAFE (the outputs then incomplete).
    """
    given = dict(zip(_QUEUE_ARGS, args))
    X = given["X"] if "X" in given else kw.get("X")
    if getattr(getattr(X, "dtype", None), "char", "d") != "f":
        return _scg_queue64(*args, **kw)
    given.update({k: v for k, v in kw.items() if k in _QUEUE_ARGS})
    others = {k: v for k, v in kw.items() if k not in _QUEUE_ARGS}
    for name in ("T", "w0", "w_out", "state", "work"):
        dt = getattr(given.get(name), "dtype", None)
        if dt is not None and dt.char != "f":
            raise TypeError(f"kernel: `{name}` must be float32 as `X` is (all the real-valued "
                            f"arrays but the errors of one scg_queue call share a dtype), got "
                            f"{dt.name}")
    w_out = given["w_out"]
    w64 = np.empty(w_out.shape)
    for name in ("X", "T", "w0"):
        given[name] = np.ascontiguousarray(given[name], np.float64)
    given["state"], given["work"] = np.zeros(len(given["state"])), np.zeros(len(given["work"]))
    given["w_out"] = w64
    status = _scg_queue64(*[given[name] for name in _QUEUE_ARGS], *args[len(_QUEUE_ARGS):],
                          **others)
    w_out[...] = w64
    return status
