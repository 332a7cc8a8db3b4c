"""Scaled conjugate gradient (Møller 1993) for many trials at once: a success study's fast path.

One trial at a time, SCG's iteration is a few dozen NumPy calls on vectors of C
numbers and three passes of the single-network kernels, and Hamey's check
(Hamey 1992) a fourth: about 30 microseconds an epoch on XOR, most of it Python.
Here the whole study is one kernel call (``_kernels._scg.scg_queue``, see
``_kernels/_scg_lanes.h``): the trials side by side in the lanes of a vector, one
lane per trial, each lane taking the next waiting trial as soon as its trial
stops (a queue, as the per-weight rules' ``trials_queue``), so that a stopped
trial costs nothing more. Møller's scalars (λ, λ̄, δ, μ, α, Δ, success) are
vectors of the lanes, the branches of the iteration masks, and each iteration of
the lanes runs at most two passes: the gradients at the probe points w + σ_k p,
and at the trial points w + αp together with Hamey's check of their outputs.

Each trial follows the iteration of :class:`fastnet.training._batch_rules.SCG`
step for step (bit for bit where that class is given the lanes' gradients and its
dot products sum in order, as BLAS does below 16 terms: the kernel sums each dot
product in order and fuses no product into a multiply-add); the lanes' sums
differ from the single-network kernels' in the last bits, so a trial's result
agrees with its run alone to rounding, which SCG's probe magnifies (see
docs/algorithms.md). At the trial point the lanes compute the gradient where the
single-network path computes the error alone, and keep it when the step is
taken: the traversals counted are those of the run alone (an error evaluation,
then a gradient pass if the step is taken).

A float32 network's batch runs through the same kernel in float64 (its data and
initial weights widened once, each trial's final weights rounded to float32): where
fastnet.train runs SCG's passes in float32, this batch's trials follow float64's
arithmetic, as the lanes' SCG has no float32 instance.
"""
import time

import numpy as np

from fastnet._engine import Workspace
from fastnet._kernels import _scg
from fastnet.exceptions import DivergenceError
from fastnet.measures import _check_analog, _winner_takes_all_error
from fastnet.stopping import Correct, ErrorBelow
from fastnet.training._algorithms import NO_CHECK
from fastnet.training._backends import Backend
from fastnet.training._batch_rules import SCG
from fastnet.training._divergence import diverged, growth_limit, hinted
from fastnet.training._lanes import (aligned, lanes_kernels, lanes_per_group, lanes_take,
                                     safe_weight, to_lanes)
from fastnet.training._loop import QUEUE_MAX_HISTORY, StripLoop

__all__ = ["scg_applies", "scg_loop", "train_scg_batched"]

_REASON_CODES = {name: code for code, name in _scg.REASONS.items()}
_MAX_EPOCHS, _DIVERGED_INITIAL, _DIVERGED, _BELOW = (
    _REASON_CODES[k] for k in ("max_epochs", "diverged_initial", "diverged", "error_below"))


def scg_applies(net, algorithm, sets, run):
    """Whether a batch trains in the batched SCG path: every trial SCG, the stop
    ``Correct`` or ``ErrorBelow`` on the training error alone, tested every epoch
    (``strip=1``), no validation or test set, no callback, the summed squared error
    as the objective, no softmax outputs."""
    stop = run.stop
    return (type(algorithm) is SCG and run.strip == 1
            and (type(stop) is Correct or (type(stop) is ErrorBelow and stop.on == "train"))
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
        rows = rows.astype(net.dtype, copy=False)
        LANES = lanes_per_group(net.dtype)
        G = -(-K // LANES)
        k = lanes_kernels(net.dtype)
        w, work = to_lanes(rows, G, C), aligned((k.work_size(net.n_units),), dtype=net.dtype)
        sse = np.empty(G * LANES)
        k.trials_sse(net.layer_table, net.n_in, X, Y, w, work, sse)
        cls = None
        if classification:
            out = aligned((G, X.shape[0], Y.shape[1], LANES), dtype=net.dtype)
            k.trials_outputs(net.layer_table, net.n_in, X, w, work, out)
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
    if not lanes_take(net, sets.X, sets.Y):     # (a layer table the lanes do not take)
        return None
    return StripLoop(BatchedSCG(net, algorithm, sets, run, W), K, net, algorithm, sets, run, K,
                     keep=keep)


class _Run:
    """One batched SCG run's kernel arguments, check and safe range."""

    def __init__(self, loop):
        net, s, run = loop.trials.net, loop.sets, loop.run
        self.loop, self.algorithm = loop, loop.algorithm
        self.args = (net.layer_table, net.n_in, s.X, s.Y)
        # (a float32 batch: every array float32, which the kernel trains in float64 and
        # rounds back into the final weights; see _scg.scg_queue)
        self.work = aligned((_scg.work_size(net.n_units),), zero=False, dtype=net.dtype)
        self.state = aligned((_scg.state_size(net.n_connections),), dtype=net.dtype)
        self.w_safe = safe_weight(net.n_units, len(net.layer_table), s.X.shape[0],
                                  max(float(np.abs(s.X).max(initial=0.0)),
                                      float(np.abs(s.Y).max(initial=0.0))), net.dtype)
        self.dtype = net.dtype
        # (the trial points are checked; the probe points lie within sigma of them)
        self.limit = self.w_safe - 2.0 * self.algorithm.sigma
        stop, Y = run.stop, s.Y
        # (Hamey's check: r_c and analog; or ErrorBelow's threshold on the training error)
        self.check, self.below = (NO_CHECK[1], NO_CHECK[2]), -1.0
        self.correct = type(stop) is Correct
        if self.correct:
            analog = _check_analog((Y == 0.0) | (Y == 1.0), stop.analog)
            self.check = (stop.r_c, NO_CHECK[2] if analog is None else analog)
        else:
            self.below = stop.threshold
        self.stop_name = stop.name
        self.C, self.N = net.n_connections, s.X.shape[0]


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


def _train(run, history):
    """Every trial until it stops (the kernel's queue); the outcome as `_fill` takes
    it. Raises `_Unsafe` where a trial's weights leave the lanes' safe range, the
    run's DivergenceError where a trial's error became non-finite (the first in
    epoch order, as the trials alone would in turn)."""
    loop, algorithm = run.loop, run.algorithm
    K, T, C = loop.K, loop.run.max_epochs, run.C
    W = np.ascontiguousarray(loop.trials.W, dtype=run.dtype)
    if not float(np.abs(W).max(initial=0.0)) <= run.limit:        # (NaN too)
        raise _Unsafe
    scale = loop.run.scale(run.N, loop.sets.Y.shape[1])
    rows = np.empty((K, C), run.dtype)
    epochs, checks, reason = np.empty((3, K), np.int64)
    counts = np.empty((3, K), np.int64)
    first, low = np.empty(K), np.empty(K)
    hist = np.empty((K, T)) if history else None
    status = _scg.scg_queue(*run.args, W, rows, epochs, checks, reason, counts, first, low,
                             hist, run.state, run.work, algorithm.sigma, algorithm.lambda1,
                             run.limit, *run.check, T, sse_scale=scale, check=run.correct,
                             below=run.below)
    if status == _scg.UNSAFE:
        raise _Unsafe
    names = {**_scg.REASONS, _BELOW: run.stop_name}
    bad = np.flatnonzero(np.isin(reason, (_DIVERGED_INITIAL, _DIVERGED)))
    if bad.size:
        # (the earliest epoch; in it, a start before an iteration; then the lowest trial)
        i = bad[np.lexsort((bad, reason[bad] != _DIVERGED_INITIAL, epochs[bad]))[0]]
        raise diverged(int(epochs[i]), trial=int(i))
    reasons = {int(i): names[int(reason[i])] for i in np.flatnonzero(reason != _MAX_EPOCHS)}
    return rows, epochs, reasons, counts, checks, hist, first * scale, low * scale
