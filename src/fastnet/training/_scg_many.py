"""Scaled conjugate gradient (Møller 1993) for many trials at once: a success study's fast path.

One trial at a time, SCG's iteration is a few dozen NumPy calls on vectors of C
numbers and three passes of the single-network kernels, and Hamey's check
(Hamey 1992) a fourth: about 30 microseconds an epoch on XOR, most of it Python.
Here every trial still training takes its iteration together: the scalars of
Møller's iteration (λ, λ̄, δ, μ, α, Δ, success) are arrays by trial, the vectors
(w, r, p) are (C, S) arrays, one column per slot, and each pass is one call of the
lanes' kernels for all of them (``trials_gradient`` at the probe points and at the
trial points ``w + αp``, ``trials_outputs`` for the check), which read and write
(G, C, LANES) blocks (slot j in lane j % LANES of group j // LANES, as
:mod:`fastnet.training._lanes` keeps them). The branches of the iteration are
masks. Trials that stop leave at once (their slots are masked), and the slots left
are packed into fewer groups as they empty.

Each trial follows the iteration of :class:`fastnet.training._batch_rules.SCG`
step for step (bit for bit where that class is given the lanes' gradients and its
dot products sum in order, as BLAS does below 16 terms); the lanes' sums differ
from the single-network kernels' in the last bits, so a trial's result agrees with
its run alone to rounding, which SCG's probe magnifies (see docs/algorithms.md).
At the trial point the lanes compute the gradient where the single-network path
computes the error alone, and keep it when the step is taken: the traversals
counted are those of the run alone (an error evaluation, then a gradient pass if
the step is taken).
"""
import time

import numpy as np

from fastnet._engine import Workspace
from fastnet._kernels import _trials
from fastnet.exceptions import DivergenceError
from fastnet.measures import _check_analog, _winner_takes_all_error, hamey_correct
from fastnet.stopping import Correct
from fastnet.training._backends import Backend
from fastnet.training._batch_rules import SCG
from fastnet.training._divergence import diverged, growth_limit, hinted
from fastnet.training._lanes import LANES, aligned, safe_weight, to_lanes
from fastnet.training._loop import QUEUE_MAX_HISTORY, StripLoop

__all__ = ["scg_applies", "scg_loop", "train_scg_batched"]

_INF = float("inf")
#: An unsigned integer of LANES bytes (LANES booleans), if there is one.
_LANE_WORD = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(LANES)
_SUM, _ANY, _ALL = np.add.reduce, np.logical_or.reduce, np.logical_and.reduce
_MAX, _MIN = np.maximum.reduce, np.minimum.reduce


def scg_applies(net, algorithm, sets, run):
    """Whether a batch trains in the batched SCG path: every trial SCG, the stop
    ``Correct`` alone checked every epoch (``strip=1``), no validation or test set,
    no callback, the summed squared error as the objective, no softmax outputs."""
    return (type(algorithm) is SCG and type(run.stop) is Correct and run.strip == 1
            and sets.X_val is None and sets.X_test is None and run.callback is None
            and run.squared_error and net.output_activation != "softmax")


class BatchedSCG(Backend):
    """The trials of a batched SCG run: their initial weights, and after training
    their final weights, counts and stop reasons (the strip loop's `Backend`
    interface for its results; the training itself is `train_scg_batched`)."""

    lanes = serial = handoff = None

    def __init__(self, net, algorithm, sets, run, W):
        self.net, self.algorithm, self.sets, self.run, self.W = net, algorithm, sets, run, W
        self.handoffs, self.repacks = [], []
        self.rows = self.count_rows = None
        self.reasons = {}
        self._block = None

    @property
    def block_size(self):
        """Patterns per cache block of the single-network kernels (the set-up record
        gives what the run alone would use)."""
        if self._block is None:
            s, run = self.sets, self.run
            self._block = Workspace(self.net, s.X, s.Y, self.algorithm.block_size(run.block_size),
                                    run.blas_min).block_size
        return self._block

    def weights(self, trials):
        # (before the batch has trained: the initial weights)
        return (self.W if self.rows is None else self.rows)[trials]

    def row(self, i):
        return (self.W if self.rows is None else self.rows)[i]

    def stop_reason(self, i):
        return self.reasons.get(int(i))

    def counts(self, trials):
        return self.count_rows[trials]

    def final(self, which, rows, classification, current=False):
        """(SSE, classification error or None) of ``rows`` on the training set, in the lanes."""
        net, X, Y = self.net, self.sets.X, self.sets.Y
        K, C = rows.shape
        G = -(-K // LANES)
        w, work = to_lanes(rows, G, C), aligned((_trials.work_size(net.n_units),))
        sse = np.empty(G * LANES)
        _trials.trials_sse(net.layer_table, net.n_in, X, Y, w, work, sse)
        cls = None
        if classification:
            out = aligned((G, X.shape[0], Y.shape[1], LANES))
            _trials.trials_outputs(net.layer_table, net.n_in, X, w, work, out)
            out = out.transpose(0, 3, 1, 2).reshape(G * LANES, X.shape[0], Y.shape[1])
            cls = np.array([_winner_takes_all_error(out[k], Y) for k in range(K)])
        return sse[:K], cls


def scg_loop(net, algorithm, sets, run, W, history=True, keep=False):
    """A `StripLoop` over a `BatchedSCG` backend for the K trials of initial
    weights ``W`` (K, C), or None where the batched path does not apply (``keep``:
    as `StripLoop`'s: an interrupted batch leaves the initial weights)."""
    K = W.shape[0]
    if not scg_applies(net, algorithm, sets, run) or (
            history and K * run.max_epochs > QUEUE_MAX_HISTORY):
        return None
    try:            # (a layer table the lanes do not take: one at a time)
        _trials.trials_sse(net.layer_table, net.n_in, sets.X[:1], sets.Y[:1],
                           aligned((1, net.n_connections, LANES)),
                           aligned((_trials.work_size(net.n_units),)), np.empty(LANES))
    except ValueError:
        return None
    return StripLoop(BatchedSCG(net, algorithm, sets, run, W), K, net, algorithm, sets, run, K,
                     keep=keep)


class _Trials:
    """The SCG state of the trials still training (``ids[j]``: the trial in slot j;
    slots beyond the trials are padding, never live). The vectors w, r, p are (C, S)
    arrays, slot j in column j, so that each slot's scalar broadcasts along a
    contiguous row; the kernels read and write (G, C, LANES) blocks (slot j in lane
    j % LANES of group j // LANES), which `lanes` and `columns` convert."""

    def __init__(self, W, ids, C):
        self.C = C
        self.pack(W, None, ids)

    def pack(self, rows, state, ids):
        """Put trials ``ids`` in as few groups as they need: ``rows`` their weights
        (n, C) at the start (``state`` None), else ``state`` holds the slots kept."""
        C, n = self.C, ids.size
        G = -(-n // LANES)
        S = G * LANES
        self.G, self.ids, self.n_live = G, ids, n
        self.live = np.zeros(S, bool)
        self.live[:n] = True
        # (the kernels' weights and gradients, at the probe and the trial points)
        self.w_probe, self.w_trial = aligned((G, C, LANES)), aligned((G, C, LANES))
        self.g_probe, self.g_trial = aligned((G, C, LANES)), aligned((G, C, LANES))
        self.E_probe, self.E_trial = np.empty(S), np.empty(S)
        self.out = None
        if state is None:
            self.w = np.zeros((C, S))
            self.w[:, :n] = rows.T
            return
        keep, old = state
        self.w_max = old.w_max
        for name in ("w", "r", "p"):
            new = np.zeros((C, S))
            new[:, :n] = getattr(old, name)[:, keep]
            setattr(self, name, new)
        for name in ("E", "lam", "lam_bar", "delta", "success", "n_probe", "n_error",
                     "n_grad", "low"):
            v = getattr(old, name)
            new = np.zeros(S, v.dtype)
            new[:n] = v[keep]
            setattr(self, name, new)

    def rows(self, slots):
        """The weights of ``slots`` as (len(slots), C) rows."""
        return self.w[:, slots].T

    def lanes(self, x, out, add=None):
        """(C, S) columns ``x`` (plus ``add``) -> the kernels' (G, C, LANES) blocks ``out``."""
        shape, view = (self.C, self.G, LANES), out.transpose(1, 0, 2)
        if add is None:
            np.copyto(view, x.reshape(shape))
        else:
            np.add(x.reshape(shape), add.reshape(shape), out=view)
        return out

    def columns(self, blocks, negate=False, add=None):
        """The kernels' (G, C, LANES) blocks -> (C, S) columns (negated if ``negate``,
        plus the columns ``add``)."""
        view, shape = blocks.transpose(1, 0, 2), (self.C, self.G, LANES)
        if add is not None:
            x = np.add(view, add.reshape(shape), order="C")
        else:
            x = np.negative(view, order="C") if negate else np.array(view, order="C")
        return x.reshape(self.C, self.G * LANES)


def _dot(a, b):
    """Each slot's a·b over the connections: (C, S) -> (S,)."""
    return _SUM(a * b, axis=0)


class _Run:
    """One batched SCG run's kernels, check and bookkeeping."""

    def __init__(self, loop):
        net, s, run = loop.trials.net, loop.sets, loop.run
        self.loop, self.algorithm = loop, loop.algorithm
        self.args = (net.layer_table, net.n_in, s.X, s.Y)
        self.work = aligned((_trials.work_size(net.n_units),))
        self.w_safe = safe_weight(net.n_units, len(net.layer_table), s.X.shape[0],
                                  max(float(np.abs(s.X).max(initial=0.0)),
                                      float(np.abs(s.Y).max(initial=0.0))))
        self.limit = self.w_safe - 2.0 * self.algorithm.sigma
        stop, Y = run.stop, s.Y
        binary = (Y == 0.0) | (Y == 1.0)
        self.check = (stop.r_c, _check_analog(binary, stop.analog),
                      Y[None, :, :, None], binary[None, :, :, None])
        self.threshold = np.where(Y == 1.0, 1.0 - stop.r_c, stop.r_c)[None, :, :, None]
        self.sign = np.where(Y == 1.0, 1.0, -1.0)[None, :, :, None]
        self._tiled = None
        self.C, self.N = net.n_connections, s.X.shape[0]

    def gradient(self, w, g, E, check=False):
        """Every slot's E and gradient at ``w`` into ``E`` and ``g``. With ``check``
        (not at a probe point, within σ of weights checked), raise `_Unsafe` where a
        weight is beyond the lanes' safe range (less 2σ) or not a number: the runs
        alone then decide."""
        if check and not (_MAX(w, axis=None) <= self.limit and -_MIN(w, axis=None) <= self.limit):
            raise _Unsafe
        _trials.trials_gradient(*self.args, w, g, self.work, E)
        return E, g

    def correct(self, st, w):
        """Whether each slot's weights in ``w`` (G, C, LANES) pass Hamey's check.

        (Every output is finite there: the error at those weights, from the same
        forward pass, was finite, or the trial diverged before.)"""
        X, Y = self.args[2], self.args[3]
        G, m = st.G, Y.size
        if st.out is None:
            st.out = aligned((G, X.shape[0], Y.shape[1], LANES))
        out = st.out
        _trials.trials_outputs(self.args[0], self.args[1], X, w, self.work, out)
        r_c, tol, Yb, binary = self.check
        if tol is None:
            # (binary targets: y > 1 - r_c for 1, y < r_c for 0, as (y - t')s > 0, exactly)
            threshold, sign = self._thresholds(G)
            right = (out.reshape(G, m * LANES) - threshold) * sign > 0.0
        else:
            right = hamey_correct(out, Yb, r_c, tol, binary)
        if _LANE_WORD is None:
            return _ALL(right.reshape(G, m, LANES), axis=1).ravel()
        # (each example's LANES booleans as one machine word: the AND over the
        # examples is then a reduction along a contiguous axis)
        words = np.bitwise_and.reduce(right.reshape(G, m * LANES).view(_LANE_WORD), axis=1)
        return words.view(bool)

    def _thresholds(self, G):
        """t' and s of the binary check, tiled to (G, m * LANES)."""
        if self._tiled is None or self._tiled[0].shape[0] != G:
            t = np.repeat(self.threshold.ravel(), LANES)
            sg = np.repeat(self.sign.ravel(), LANES)
            self._tiled = (np.tile(t, (G, 1)), np.tile(sg, (G, 1)))
        return self._tiled


class _Unsafe(Exception):
    """A trial's weights left the lanes' safe range (see `safe_weight`)."""


def train_scg_batched(loop, history=True):
    """Train the trials of ``loop`` (from `scg_loop`) by SCG all at once; fill the
    loop's state as its strips would. Returns (cpu seconds, wall seconds), None
    where the loop is not a batched SCG loop, or False where a trial's weights left
    the lanes' safe range (then nothing was kept: the trials train one at a time)."""
    if not isinstance(loop.trials, BatchedSCG):
        return None
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        out = _train(_Run(loop), history)
    except _Unsafe:
        return False
    except DivergenceError as exc:
        raise hinted(exc, loop.algorithm, loop.run.weight_decay, loop.sets) from None
    _fill(loop, *out)
    return time.process_time() - cpu0, time.perf_counter() - wall0


def _fill(loop, rows, epochs, reasons, counts, checks, hist, first, low):
    """The loop's state after training, as its strips leave it."""
    K, NC, C = loop.K, loop.N * loop.C, loop.C
    backend, policy = loop.trials, loop.policy
    backend.rows = rows
    n_probe, n_error, n_grad = counts
    c = np.zeros((K, 4), np.int64)
    c[:, 0] = NC * (n_probe + n_error + n_grad)
    c[:, 1] = NC * (n_probe + n_grad)
    c[:, 2] = C * (n_probe + n_error)
    backend.count_rows = loop.counts = c
    for i, why in reasons.items():
        backend.reasons[i] = why
        policy.reasons[i] = why
    policy.fired[list(reasons)] = True
    policy.checks[:] = checks
    loop.epochs[:], loop.last_rows = epochs, rows
    if loop.safe is not None:
        loop.safe = np.ascontiguousarray(rows)
    g = loop.growth
    g.first, g.lowest = first, growth_limit(float(first.min()))
    if hist is None:
        loop.history, loop.min_train = np.empty((K, 0)), low
    else:
        loop.history = hist
    loop.training, loop.epoch = loop.training[:0], loop.run.max_epochs


class _Book:
    """Each trial's outcome as it stops: weights, epochs, reason, checks, counts."""

    def __init__(self, K, C):
        self.rows = np.empty((K, C))
        self.epochs = np.zeros(K, np.intp)
        self.checks = np.zeros(K, np.intp)
        self.counts = np.zeros((3, K), np.int64)
        self.low = np.empty(K)
        self.reasons = {}

    def stop(self, st, slots, epochs, checks, reason=None):
        """The trials in ``slots`` stop after ``epochs`` with ``checks`` success checks
        run (``reason`` None: max_epochs)."""
        if not slots.size:
            return
        ids = st.ids[slots]
        self.rows[ids] = st.rows(slots)
        self.epochs[ids], self.checks[ids] = epochs, checks
        self.counts[:, ids] = st.n_probe[slots], st.n_error[slots], st.n_grad[slots]
        self.low[ids] = st.low[slots]
        if reason is not None:
            self.reasons.update(dict.fromkeys(ids.tolist(), reason))
        st.live[slots] = False
        st.n_live -= slots.size
        st.p[:, slots] = st.r[:, slots] = 0.0


def _start(run, W):
    """The trials' state at the start of Møller's iteration (r = p = -g(w₁), λ = λ₁,
    λ̄ = 0, success); one gradient pass counted."""
    K, C = W.shape
    st = _Trials(W, np.arange(K), C)
    S = st.G * LANES
    st.E, g = run.gradient(st.lanes(st.w, st.w_trial), st.g_trial, st.E_trial.copy(), check=True)
    st.r = st.columns(g, negate=True)
    st.r[:, K:] = 0.0                               # (padding: see `_iterate`)
    st.p = st.r.copy()
    st.w_max = float(_MAX(np.abs(st.w), axis=None))
    st.delta, st.lam_bar = np.zeros(S), np.zeros(S)
    st.lam = np.full(S, run.algorithm.lambda1)
    st.success = np.ones(S, bool)
    st.n_probe, st.n_error = np.zeros(S, np.int64), np.zeros(S, np.int64)
    st.n_grad = np.ones(S, np.int64)
    st.low = st.E.copy()
    return st


def _train(run, history):
    """Every trial until it stops; the outcome as `_fill` takes it."""
    loop = run.loop
    K, T = loop.K, loop.run.max_epochs
    scale = loop.run.scale(run.N, loop.sets.Y.shape[1])
    book = _Book(K, run.C)
    hist = np.empty((K, T)) if history else None
    with np.errstate(all="ignore"):
        st = _start(run, loop.trials.W)
        first = st.E[:K] * scale
        for epoch in range(T):
            if not st.n_live:
                break
            if hist is not None:
                lv = np.flatnonzero(st.live)
                hist[st.ids[lv], epoch] = st.E[lv] * scale
            if epoch == 0:
                lv = np.flatnonzero(st.live)
                # (the start's error and gradient: the iteration checks its own later)
                bad = lv[~np.isfinite(st.E[lv])]
                if bad.size:
                    raise diverged(1, trial=int(st.ids[bad].min()))
                book.stop(st, lv[~st.r[:, lv].any(axis=0)], 1, 0, "converged")
            np.minimum(st.low, st.E, out=st.low)
            _iterate(run, st, book, epoch)
            _pack(st)
        lv = np.flatnonzero(st.live)
        book.stop(st, lv, T, T)
    return (book.rows, book.epochs, book.reasons, book.counts, book.checks, hist, first,
            book.low * scale)


def _pack(st):
    """Pack the trials still training into fewer groups whenever a group would be
    freed (a pack costs about what one iteration's vector work does; a group's lanes
    cost every kernel call)."""
    G = -(-st.n_live // LANES)
    if st.n_live and G < st.G:
        keep = np.flatnonzero(st.live)
        new = _Trials.__new__(_Trials)
        new.C = st.C
        new.pack(None, (keep, st), st.ids[keep])
        st.__dict__.update(new.__dict__)




def _iterate(run, st, book, epoch):
    """One iteration of every live trial (steps 1-7 of `SCG`'s notes, each trial's
    branches as masks), then Hamey's check on the weights of those still training.

    Slots that do not train (stopped, padding) hold p = r = 0 (`_Book.stop`), so
    that their probe and trial points are their weights, with no mask on the vectors.
    The rare stops (a scalar out of range, r = 0) are sorted out only when one occurs.
    (For booleans, ``a > b`` is ``a & ~b``.)
    """
    sigma = run.algorithm.sigma
    live, w, p, r = st.live, st.w, st.p, st.r
    n = epoch + 1
    p2 = _dot(p, p)
    a1 = live & (p2 > 0.0) & (p2 < _INF)
    if _ANY(live > a1):
        _stop_p2(st, book, live > a1, p2, n, epoch)
    probe = a1 & st.success                                     # (1)
    delta = st.delta
    root = np.sqrt(p2)
    if _ANY(probe):
        # (s itself is never read again: only δ = p·s, which steps 2-3 keep up to date)
        sigma_k = np.where(probe, sigma / root, 0.0)
        _, gp = run.gradient(st.lanes(w, st.w_probe, add=sigma_k * p), st.g_probe, st.E_probe)
        st.n_probe += probe
        delta = np.where(probe, _dot(p, st.columns(gp, add=r) / sigma_k), delta)  # (g(w) = -r)
    d = st.lam - st.lam_bar                                     # (2)
    delta = delta + d * p2
    lam, lam_bar = st.lam, st.lam_bar
    neg = a1 & (delta <= 0.0)                                   # (3)
    if _ANY(neg):
        lam_bar = np.where(neg, 2.0 * (lam - delta / p2), lam_bar)
        delta = np.where(neg, -delta + lam * p2, delta)
        lam = np.where(neg, lam_bar, lam)
    mu = _dot(p, r)                                             # (4)
    alpha = mu / delta
    a2 = a1 & (delta > 0.0) & (delta < _INF) & (np.abs(alpha) < _INF) & (mu != 0.0)
    if _ANY(a1 > a2):
        _stop_mu(st, book, a1 > a2, delta, mu, n, epoch)
    alpha = np.where(a2, alpha, 0.0)
    trial = w + alpha * p
    # (the trial points' weights are at most max|w| + |α|‖p‖: checked one by one only
    # when that bound leaves the lanes' safe range)
    reach = st.w_max + _MAX(np.abs(alpha) * root)
    exact = not reach <= run.limit
    E_new, g_new = run.gradient(st.lanes(trial, st.w_trial), st.g_trial, st.E_trial,
                                check=exact)                    # (5)
    st.n_error += a2
    mu2 = mu * mu
    a3 = a2 & (E_new < _INF) & (mu2 > 0.0) & (mu2 < _INF)
    if _ANY(a2 > a3):
        bad = a2 & ~(E_new < _INF)
        if _ANY(bad):
            raise diverged(n, trial=int(st.ids[bad].min()))
        book.stop(st, np.flatnonzero(a2 & (mu2 == _INF)), n, epoch, "abnormal")
        book.stop(st, np.flatnonzero(a2 & (mu2 == 0.0)), n, epoch, "converged")
    Delta = 2.0 * delta * (st.E - E_new) / mu2
    acc = a3 & (Delta >= 0.0)                                   # (6)
    st.E = np.where(acc, E_new, st.E)
    st.n_grad += acc
    r_new = st.columns(g_new, negate=True)
    rr = _dot(r_new, r_new)
    p_new = r_new if n % run.C == 0 else r_new + ((rr - _dot(r_new, r)) / mu) * p  # (k = n)
    np.copyto(w, trial, where=acc)
    np.copyto(p, p_new, where=acc)
    np.copyto(r, r_new, where=acc)
    st.w_max = float(_MAX(np.abs(w), axis=None)) if exact else reach
    st.lam_bar = np.where(acc, 0.0, lam)
    st.success = acc
    lam = np.where(acc & (Delta >= 0.75), lam / 4.0, lam)
    st.lam = np.where(Delta < 0.25, lam + delta * (1.0 - Delta) / p2, lam)   # (7)
    st.delta = delta
    zero = acc & (rr == 0.0)            # (r' = 0; r'·r' also underflows for tiny nonzero r')
    if _ANY(a3 > (np.abs(st.lam) < _INF)) or _ANY(zero):
        _stop_converged(st, book, a3, zero, n, epoch)
    if st.n_live:                                               # (the check)
        # (the trial points are the weights where the step was taken; elsewhere the
        # weights did not change since their last check, but at the first epoch)
        correct = run.correct(st, st.w_trial) & acc & live
        if epoch == 0:
            correct |= run.correct(st, st.lanes(w, st.w_probe)) & live & ~acc
        if _ANY(correct):
            book.stop(st, np.flatnonzero(correct), n, n, "correct")


def _stop_p2(st, book, out, p2, n, epoch):
    """Stop the trials ``out`` whose ‖p‖² left (0, ∞): "converged" at 0, else "abnormal"."""
    book.stop(st, np.flatnonzero(out & (p2 == 0.0)), n, epoch, "converged")
    book.stop(st, np.flatnonzero(out & (p2 != 0.0)), n, epoch, "abnormal")


def _stop_mu(st, book, out, delta, mu, n, epoch):
    """Stop the trials ``out`` whose δ, μ or α left the range, in `SCG`'s order: δ
    not in (0, ∞) or μ not finite "abnormal", else μ = 0 "converged", else (α not
    finite) "abnormal"."""
    first = out & ~((delta > 0.0) & (delta < _INF) & (np.abs(mu) < _INF))
    zero = out & ~first & (mu == 0.0)
    book.stop(st, np.flatnonzero(first | (out & ~first & ~zero)), n, epoch, "abnormal")
    book.stop(st, np.flatnonzero(zero), n, epoch, "converged")


def _stop_converged(st, book, a3, zero, n, epoch):
    """Stop, "converged", the trials of ``a3`` whose λ is no longer finite or whose
    new r is exactly zero (``zero``: those whose g·g is 0)."""
    if _ANY(zero):
        idx = np.flatnonzero(zero)
        zero[idx] = ~st.r[:, idx].any(axis=0)
    book.stop(st, np.flatnonzero(a3 & (~(np.abs(st.lam) < _INF) | zero)), n, epoch, "converged")
