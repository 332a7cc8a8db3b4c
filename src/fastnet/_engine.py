"""How one network runs: memory layout, cache blocks, the BLAS threshold, kernel calls.

An :class:`~fastnet.network.MLP` holds topology (its layer table) and weights.
This module alone decides how they are executed -- activation rows padded to
cache lines, training sets cut into cache-sized blocks, small products kept
away from BLAS -- and it alone calls the single-network kernels, so that
trainers, evaluation and prediction share one execution policy.
(:func:`fastnet.train_rprop_many`'s lanes kernel lays trials side by side and
has its own layout in ``fastnet.training._lanes``.)
"""
import warnings
from collections import namedtuple

import numpy as np

from fastnet._blas import kernels_blas, single_threaded_blas
from fastnet._kernels import _backprop, _backward, _forward, _jacobian, _per_weight
from fastnet._kernels._simd import simd_level
from fastnet._validation import check_matrix

__all__ = ["DEFAULT_BLAS_MIN", "BLOCK_BYTES", "MIN_BLOCK", "MAX_BLOCK", "ROW_ALIGN",
           "PREDICT_BLAS_MIN", "NORMAL_BLOCK", "RuleArgs", "OnlineArgs", "activations", "block_rows", "Workspace",
           "Evaluator",
           "NormalEquations", "predict",
           "sum_squared_error"]

# Products with m*n*k below this go to plain loops instead of BLAS: the call
# overhead of dgemm outweighs its speed on tiny layers. Measured, see benchmarks/.
DEFAULT_BLAS_MIN = 4096
# predict's products: where the CPU has the register tiles (fastnet._kernels._simd)
# they take every product of a block of >= 8 rows, and smaller blocks (a few
# patterns) run the loops, so predict never calls BLAS and needs no BLAS thread
# limit (a process-wide setting that costs microseconds to change). Other CPUs
# keep BLAS for large products, under the limit.
PREDICT_BLAS_MIN = DEFAULT_BLAS_MIN if simd_level() == "default" else np.iinfo(np.intp).max
# Cache blocking: rows per block so that a block's activations, derivatives and
# deltas take about this many bytes (kept within L2).
BLOCK_BYTES = 256 * 1024
MIN_BLOCK, MAX_BLOCK = 128, 2048
# Activation rows are padded to a multiple of this many doubles (64 bytes) in a
# 64-byte aligned buffer, so every row starts on a cache line: vector loads that
# straddle two lines cost the AVX-512 kernels about 30 % (benchmark case E).
# float32 networks pad to the same 64 bytes (ROW_BYTES), 16 floats.
ROW_ALIGN = 8
ROW_BYTES = 64
_FLOAT64 = np.dtype(np.float64)

# Examples per block of the normal equations (their n_out Jacobian rows each are
# formed, used and dropped). Measured on cancer1 4+2 and thyroid1 16+8 with
# shortcuts (benchmarks/lm_epoch.py): 16-256 are within 10 %; 64 is best on both.
NORMAL_BLOCK = 64


def row_stride(net, dtype=None):
    """Values per activation row: ``net.n_units`` rounded up to a multiple of 64 bytes
    (ROW_ALIGN doubles, or 16 floats) of ``dtype`` (default: the network's)."""
    align = ROW_BYTES // (net.dtype if dtype is None else np.dtype(dtype)).itemsize
    return -(-net.n_units // align) * align


def block_rows(net):
    """Patterns per cache block (activations, derivatives and deltas in BLOCK_BYTES)."""
    row_bytes = net.dtype.itemsize * (row_stride(net) + 2 * (net.n_units - net.n_in))
    return max(MIN_BLOCK, min(MAX_BLOCK, BLOCK_BYTES // row_bytes))


def activations(net, X, dtype=None):
    """An activation buffer with the inputs X in its first columns, of ``dtype``
    (default: the network's).

    Shape (n_patterns, stride) with stride >= n_units (see ROW_ALIGN); the
    units are columns [0, n_units), the padding after them is zero and unused.
    """
    dtype = net.dtype if dtype is None else np.dtype(dtype)
    n, stride, size = X.shape[0], row_stride(net, dtype), dtype.itemsize
    raw = np.empty(n * stride + ROW_BYTES // size, dtype)
    first = (-raw.ctypes.data % ROW_BYTES) // size    # NumPy aligns to 16 bytes only
    A = raw[first:first + n * stride].reshape(n, stride)
    A[:, :net.n_in] = X
    A[:, net.n_units:] = 0.0
    return A


def _outputs(net, A):
    return A[:, net.n_units - net.n_out:net.n_units]


class Workspace:
    """Buffers of one training call, allocated once, and the kernel calls on them.

    Attributes
    ----------
    net : MLP
    w : ndarray
        The weight vector trained in place: ``w`` (the network's own buffer,
        ``fastnet.network.weight_buffer(net)``, or a trial's row of a batch), or
        a copy of the network's weights if ``w`` is not given.
    layers, n_in
        The kernels' layer table (``net.layer_table``) and the input count.
    A, Y : ndarray
        Activations (inputs in the first columns) and targets of the training set.
    D, Dl : ndarray
        Derivatives and deltas of one block of patterns.
    g, dw_prev : ndarray
        The epoch's gradient and the previous weight change, one per connection.
        Every buffer has the weights' dtype (the network's).
    blas_min : int
    objective : (int, float)
        The training objective: loss code and L2 weight decay (``(0, 0.0)``: the
        summed squared error). The epochs' errors are its values.
    """

    def __init__(self, net, X, Y, block_size=None, blas_min=None, *, w=None, A=None,
                 objective=(0, 0.0)):
        # A: an activation buffer that already holds X (shared by trials, no copy);
        # objective: the kernels' (loss code, weight decay), see training._checks.LOSSES
        self.net = net
        self.objective = objective
        # (the network's own buffer comes from fastnet.network.weight_buffer, by the
        # caller: this module reads a network through its public, read-only forms)
        self.w = np.array(net.weights) if w is None else w
        self.layers, self.n_in = net.layer_table, net.n_in
        self.Y = Y
        self.A = activations(net, X) if A is None else A
        n = X.shape[0]
        self.check_block = block_rows(net)
        if block_size is None:
            # Equal blocks: no tiny remainder block that costs a full set of calls.
            n_blocks = -(-n // self.check_block)
            block = -(-n // n_blocks)
        else:
            block = block_size
        block = max(1, min(block, n))
        n_nonin, dtype = net.n_units - net.n_in, self.w.dtype
        self.D = np.zeros((block, n_nonin), dtype)
        self.Dl = np.zeros((block, n_nonin), dtype)
        self.g = np.zeros(net.n_connections, dtype)
        self.dw_prev = np.zeros(net.n_connections, dtype)
        self.blas_min = DEFAULT_BLAS_MIN if blas_min is None else blas_min
        self.batch = None           # Adam's mini-batch buffers, made when first needed

    @property
    def block_size(self):
        """Patterns per block of the training kernels."""
        return self.D.shape[0]

    def forward(self):
        """Forward pass over the training set; returns a view of the outputs."""
        _forward.forward(self.A, self.layers, self.n_in, self.w, self.check_block, self.blas_min)
        return _outputs(self.net, self.A)

    def outputs(self):
        """The outputs left in the activation buffer by the last pass (a view)."""
        return _outputs(self.net, self.A)

    def evaluator(self):
        """An :class:`Evaluator` of the training set on this workspace's buffer."""
        return Evaluator(self.net, None, self.Y, self.blas_min, A=self.A, w=self.w,
                         block=self.check_block)

    def epochs(self, args, sse_out, check):
        """Epochs of a kernel rule, one per entry of ``sse_out`` (the training errors,
        unscaled), on this workspace's weights: ``args`` a `RuleArgs` (the epoch loop
        of every per-weight rule) or `OnlineArgs` (online backpropagation);
        ``check``: Hamey's success check (every, r_c, analog). Returns the kernel
        status (``training._status``)."""
        run = _online_epochs if isinstance(args, OnlineArgs) else _rule_epochs
        return run(self, args, sse_out, *check)

    def gradient(self, w=None, g=None):
        """Summed squared error (the objective) at ``w`` (default: the trained weights
        ``self.w``) over the training set, and its gradient into ``g`` (default ``self.g``).
        A ``w`` of another dtype (an outer step's float64 point for a float32 network)
        is rounded to the network's first; ``g`` has the network's dtype."""
        w = self.w if w is None else self._own(w)
        return _backward.gradient(self.A, self.Y, self.layers, self.n_in, w,
                                  self.g if g is None else g,
                                  self.D, self.Dl, self.blas_min, *self.objective)

    def _own(self, w):
        """``w`` in the workspace's dtype (rounded if it is a float64 point of a float32 run)."""
        if w.dtype == self.w.dtype:
            return w
        with np.errstate(over="ignore"):      # (beyond float32's range: inf, as the kernels see)
            return w.astype(self.w.dtype)

    def sse(self, w=None):
        """Summed squared error (the objective) at ``w`` (default ``self.w``) over the
        training set: a forward pass. ``w`` of another dtype is rounded first."""
        w = self.w if w is None else self._own(w)
        if self.objective != (0, 0.0):
            return _backward.objective(self.A, self.Y, self.layers, self.n_in, w, self.D,
                                       self.Dl, self.blas_min, *self.objective)
        return _forward.sum_squared_error(self.A, self.Y, self.layers, self.n_in, w,
                                          self.check_block, self.blas_min)


#: The single network's epoch loop of a per-weight rule (``_per_weight.train_epochs``):
#: the rule's record (``_kernels._rules.Rule``), the arrays it keeps (``g_prev``,
#: ``step``, ``dw_prev``; the others empty), its updates so far ``t`` (advanced) and
#: horizon ``t_max``, the error of its last update ``last_error`` (irprop+), and a
#: mini-batch presentation order (``order``, (0, 0): whole-set epochs) with
#: ``batch`` rows per mini-batch.
RuleArgs = namedtuple("RuleArgs", "rule g_prev step dw_prev t t_max last_error order batch")
#: Online backpropagation's epochs (``_backprop.online_epochs``): the rate of each
#: epoch or, ``per_update``, of each update; momentum; the epochs' orders.
OnlineArgs = namedtuple("OnlineArgs", "rates momentum order per_update")
# (whole-set epochs: the loop reads no mini-batch buffers; one pair per dtype)
_NO_BATCH = {np.dtype(t): (np.zeros((1, 1), t), np.zeros((1, 1), t)) for t in (np.float64, np.float32)}


def _rule_epochs(ws, a, sse_out, every, r_c, analog):
    if a.order.shape[0]:
        rows, dtype = min(a.batch, ws.A.shape[0]), ws.A.dtype
        if ws.batch is None or ws.batch[0].shape[0] != rows:
            ws.batch = (np.zeros((rows, ws.A.shape[1]), dtype), np.zeros((rows, ws.net.n_out), dtype))
        B, TB = ws.batch
    else:
        B, TB = _NO_BATCH[ws.A.dtype]
    return _per_weight.train_epochs(ws.A, ws.Y, ws.layers, ws.n_in, ws.w, ws.g, a.g_prev, a.step,
                                    a.dw_prev, ws.D, ws.Dl, a.rule, a.t, a.t_max, a.last_error,
                                    a.order, B, TB, sse_out, ws.blas_min, every, r_c, analog,
                                    ws.check_block, *ws.objective)


def _online_epochs(ws, a, sse_out, every, r_c, analog):
    return _backprop.online_epochs(ws.A, ws.Y, ws.layers, ws.n_in, ws.w, ws.g, ws.dw_prev, ws.D,
                                   ws.Dl, a.rates, a.momentum, a.order, sse_out, ws.blas_min,
                                   *ws.objective, a.per_update)


class Evaluator:
    """SSE of a fixed data set at the network's current weights (validation, test sets)."""

    def __init__(self, net, X, Y, blas_min, *, A=None, w=None, block=None):
        # A: an activation buffer that already holds X (a workspace's own, no copy);
        # w: the weights to evaluate (default: the network's own); block: the
        # network's block_rows, if known
        self.net = net
        self.w = net.weights if w is None else w
        self.layers, self.n_in = net.layer_table, net.n_in
        self.Y = Y
        self.A = activations(net, X) if A is None else A
        self.blas_min = blas_min
        self.n = Y.shape[0]
        self.block = block_rows(net) if block is None else block

    def sse(self):
        """Summed squared error; leaves the outputs in ``self.A`` (see :meth:`outputs`)."""
        return _forward.sum_squared_error(self.A, self.Y, self.layers, self.n_in, self.w,
                                          self.block, self.blas_min)

    def outputs(self):
        """The outputs of the last :meth:`sse` (a view)."""
        return _outputs(self.net, self.A)


class NormalEquations:
    """Buffers and kernels of one Levenberg-Marquardt epoch on one data set, allocated once.

    The passes (forward, the Jacobian's backward passes, the trial evaluations) and
    the weights are of the network's dtype; the normal equations are float64 at both
    dtypes (H, r, the factor L, dw, mu and their workspaces Jb, e, R): J^T J squares
    the condition number of the Jacobian, which float32's 7 digits do not hold, so
    the kernel accumulates it in double from the float32 rows and solves it by
    LAPACK's double Cholesky.

    ``compute()`` returns ``(H, r, sse)``: H = J^T J (C x C) in its upper triangle
    (row-major, diagonal included; the strict lower triangle is unspecified), r = J^T e with
    e = vec(O - T) (half the gradient of the SSE) and the SSE, at the network's current
    weights; H and r are this object's buffers, overwritten by the next call.
    ``solve(mu)`` gives dw = -(H + mu D)^-1 r (Cholesky), ``sse(w)`` the SSE at trial
    weights w without setting them. The caller keeps BLAS single-threaded
    (``single_threaded_blas``) around its loop. ``factored=False`` forms J^T J by
    BLAS dsyrk on the Jacobian's rows instead of through their outer-product
    structure (2.2x slower on thyroid1 16+8, 1.3x on cancer1 4+2: kept for tests
    and benchmarks).
    """

    def __init__(self, net, X, Y, block=None, factored=True):
        n, n_out, C = X.shape[0], net.n_out, net.n_connections
        self.net, self.Y, dtype = net, Y, net.dtype
        self.layers, self.n_in = net.layer_table, net.n_in
        self.A = activations(net, X)
        block = NORMAL_BLOCK if block is None else block
        block = max(1, min(block, n))
        n_nonin = net.n_units - net.n_in
        self.D = np.empty((block, n_nonin), dtype)
        self.V = np.empty((block * n_out, n_nonin), dtype)
        self.factored = factored
        # factored: the products' workspace R (block x C), G_p (block x nu x (nu + 1)), ones;
        # else one block of Jacobian rows, Jb.
        self.Jb = np.empty((0 if factored else block * n_out, C))
        self.R = np.empty(block * (C + n_nonin * (n_nonin + 1) + 1) if factored else 0)
        self.e = np.empty(block * n_out)
        self.H, self.r = np.empty((C, C)), np.empty(C)
        self.L, self.dw = np.empty((C, C)), np.empty(C)
        self.eval_block = block_rows(net)
        self._trial = None                  # (lm_epochs' trial weights, made on first use)

    def compute(self, w=None):
        """(H, r, sse) at the weight vector ``w`` (default: the network's own)."""
        w = self.net.weights if w is None else self._own(w)
        sse = _jacobian.normal_equations(self.A, self.Y, self.layers, self.n_in, w, self.H,
                                         self.r, self.D, self.V, self.Jb, self.e, self.R,
                                         self.factored, DEFAULT_BLAS_MIN)
        return self.H, self.r, sse

    def solve(self, mu, marquardt=False):
        """dw = -(H + mu D)^-1 r for the last ``compute()`` (D = I, or diag(H) if
        ``marquardt``); None if H + mu D is not positive definite (numerically)."""
        info = _jacobian.solve_damped(self.H, self.r, mu, marquardt, self.L, self.dw)
        return None if info else self.dw

    def lm_epochs(self, w, mu, mu_dec, mu_inc, mu_max, marquardt, sse_out, solves, tries):
        """Levenberg-Marquardt epochs at the weight vector ``w`` (updated), one per
        entry of ``sse_out``, in the kernel (see ``_jacobian.lm_epochs``): ``mu`` (a
        length-1 array) the damping, updated; each epoch's Cholesky ``solves`` and
        trial-weight evaluations ``tries`` into those arrays. Returns the kernel status.
        ``w`` has the network's dtype (each trial point w + dw is rounded to it)."""
        if self._trial is None:
            self._trial = np.empty(self.net.n_connections, self.net.dtype)
        return _jacobian.lm_epochs(self.A, self.Y, self.layers, self.n_in, w, self._trial,
                                   self.H, self.r, self.D, self.V, self.Jb, self.e, self.R,
                                   self.factored, self.L, self.dw, mu, mu_dec, mu_inc, mu_max,
                                   marquardt, sse_out, solves, tries, self.eval_block,
                                   DEFAULT_BLAS_MIN)

    def _own(self, w):
        """``w`` in the network's dtype (rounded if it is a float64 point of a float32 net)."""
        if w.dtype == self.net.dtype:
            return w
        with np.errstate(over="ignore"):      # (beyond float32's range: inf, as the kernels see)
            return w.astype(self.net.dtype)

    def sse(self, w):
        """SSE at the weight vector ``w`` (C-contiguous; of another dtype: rounded to the
        network's first; the net is not changed)."""
        w = self._own(w)
        return _forward.sum_squared_error(self.A, self.Y, self.layers, self.n_in, w,
                                          self.eval_block, DEFAULT_BLAS_MIN)


def predict(net, X, out, w, layers, stride, block, warn=True):
    """Outputs of ``net``'s topology with the weights ``w`` for the inputs ``X``,
    written into ``out`` (a new array if None); ``layers``, ``stride`` and
    ``block``: the network's layer table, `row_stride` and `block_rows` (given
    by ``fastnet.network``, which holds them).

    A C-contiguous ``X`` of the network's dtype and width (and ``out`` of the
    right shape) goes straight to the kernel, which checks the sizes and that
    every input is finite as it copies the rows; anything else is checked,
    explained or converted here (to the network's dtype), then run. Outputs that overflowed (finite
    inputs, an output inf or NaN) come back as computed with a RuntimeWarning
    (as NumPy's overflow warning) if ``warn``, silently otherwise.
    """
    # (the kernel answers PREDICT_NOT_PREPARED for X or out of another dtype than w's:
    # they are converted or explained below)
    Y = _forward.predict(X, out, layers, w, stride, block, PREDICT_BLAS_MIN, False, warn)
    if type(Y) is int and Y == _forward.PREDICT_NEEDS_BLAS_LIMIT:
        # (CPUs without the tiles: large products go to BLAS, held at one thread)
        with single_threaded_blas():
            Y = _forward.predict(X, out, layers, w, stride, block, PREDICT_BLAS_MIN, True, warn)
    if type(Y) is int and Y != _forward.PREDICT_OUTPUTS_NOT_FINITE:
        X = check_matrix(X, "X", n_cols=net.n_in, what="inputs", allow_empty=True, dtype=w.dtype)
        if out is not None:
            check_out(out, X, net.n_out, w.dtype)
        with kernels_blas(net, X.shape[0], PREDICT_BLAS_MIN):
            Y = _forward.predict(X, out, layers, w, stride, block, PREDICT_BLAS_MIN, True, warn)
    if type(Y) is int:
        # (finite inputs, X and out as the kernel takes them: the rare overflow
        # runs again, unchecked, and is reported)
        with kernels_blas(net, X.shape[0], PREDICT_BLAS_MIN):
            Y = _forward.predict(X, out, layers, w, stride, block, PREDICT_BLAS_MIN, True, False)
        n_bad = int(np.count_nonzero(~np.isfinite(Y)))
        warnings.warn(f"predict: {n_bad} of the {Y.size} outputs overflowed to inf or NaN "
                      f"(the inputs are finite, the largest of magnitude "
                      f"{float(np.max(np.abs(X))):.3g}); they are returned as computed.",
                      RuntimeWarning, stacklevel=3)
    return Y


def check_out(out, X, n_out, dtype=_FLOAT64):
    """Refuse an ``out`` array that the predict kernel cannot write as given (``dtype``:
    the network's)."""
    shape = (X.shape[0], n_out)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"`out` must be a numpy.ndarray of shape {shape} and dtype {dtype}, "
                        f"got {type(out).__name__}.")
    if out.dtype != dtype:
        raise TypeError(f"`out` must have dtype {dtype}, got {out.dtype} (the outputs have the network's dtype).")
    if out.shape != shape:
        raise ValueError(f"`out` must have shape {shape} (the patterns of `X`, the network's "
                         f"outputs), got {out.shape}.")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("`out` must be C-contiguous and writeable (np.empty(shape) is).")
    if np.may_share_memory(out, X):
        raise ValueError("`out` must not share memory with `X` (outputs are written while inputs "
                         "are read).")


def sum_squared_error(net, X, Y, w):
    """Summed squared error of ``net``'s topology with the weights ``w`` on checked
    ``X``, ``Y`` of the weights' dtype (no factor 1/2; accumulated in float64)."""
    with single_threaded_blas():
        return float(Evaluator(net, X, Y, DEFAULT_BLAS_MIN, w=w).sse())
