"""Trials of a lanes batch that fill too little of their lanes, one at a time.

Trials of a batch stop at different epochs (early stopping), but a group of
vector lanes costs the same however few of its lanes still train. Whenever the
trials still training fill too little of the last group of lanes they need,
:func:`fastnet.train_rprop_many` (method ``"mixed"``) hands that group's trials
to the single-network kernels, each with its RPROP state as the lanes left it
(weights, previous gradient and change, steps, last error), so that each goes
on in the kernel :func:`train_rprop` uses; the others stay in full groups.
"""
import time
import warnings
from dataclasses import replace

import numpy as np

from fastnet._batch import TrainResults, batch_record, time_shares
from fastnet._engine import Evaluator, Workspace, activations
from fastnet._training import late_runs
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.rprop import train_rprop

__all__ = ["HANDOFF_FILL", "HANDOFF_EPOCHS", "lanes_fill", "SerialTrials", "train_serial",
           "warn_late"]

#: A batch of method "mixed" hands the trials of the last group of lanes they
#: need to the single-network kernels when they fill less than this share of it.
#: Lanes train 1.2-1.5x faster than one network at a time per trial-epoch on the
#: Proben1 pivot networks beyond the narrow lanes' limit (16 trials, full lanes),
#: so below about 3/4 full one at a time is faster (see docs/performance.md).
HANDOFF_FILL = 0.75

#: With the success check in the kernel (no strips to return at), a batch of
#: method "mixed" still returns every this many epochs (rounded to strips) to
#: see whether the trials left should be handed off.
HANDOFF_EPOCHS = 20


def lanes_fill(n, lanes):
    """The share of the lanes that ``n`` trials fill, packed into as few groups as they need."""
    return n / (lanes * -(-n // lanes)) if n else 0.0


class SerialTrials:
    """Trials taken out of the lanes, each with its own single-network workspace.

    Each trial trains in its network's own weight vector (``nets[i]._w``), as
    :func:`train_rprop` would; its validation and test errors come from the
    single-network evaluator. The activation buffers of the training,
    validation and test sets are shared by the trials (every pass rewrites
    them whole).
    """

    def __init__(self, nets, X, Y, X_val, Y_val, X_test, Y_test, block_size, blas_min, params):
        self.nets = nets
        self.args = params
        self.ws, self.g_prev, self.step, self.last = {}, {}, {}, {}
        self.val, self.test = {}, {}
        self.X, self.Y, self.block_size, self.blas_min = X, Y, block_size, blas_min
        first = nets[0]
        self._A = None
        self._A_val = activations(first, X_val) if X_val is not None else None
        self._A_test = activations(first, X_test) if X_test is not None else None
        self.Y_val, self.Y_test = Y_val, Y_test

    def take_from_lanes(self, lanes, trials):
        """Take ``trials`` (an index array) out of ``lanes`` (a fastnet._lanes.Lanes),
        each with its weights and RPROP state as the lanes left them."""
        L = lanes.w.shape[2]
        for i in np.asarray(trials).tolist():
            s = int(lanes.slot[i])
            g, k = divmod(s, L)
            self.take(i, lanes.w[g, :, k], lanes.g_prev[g, :, k], lanes.dw_prev[g, :, k],
                      lanes.step[g, :, k], lanes.last_error[s])

    def run(self, trials, n, check, scale):
        """``n`` epochs of each of ``trials``: (status, sse) with one kernel status per
        trial and the (len(trials), n) training errors times ``scale`` (the epochs a
        trial did not train are 0)."""
        status = np.zeros(len(trials), np.int64)
        sse = np.zeros((len(trials), n))
        for j, i in enumerate(trials.tolist()):
            status[j] = self.train(i, sse[j], check)
            done = -status[j] if status[j] < 0 else n
            sse[j, :done] *= scale          # as train_rprop scales them
        return status, sse

    def take(self, i, w, g_prev, dw_prev, step, last_error):
        """Trial ``i`` leaves the lanes with this state (copied)."""
        net = self.nets[i]
        net._w[:] = w
        ws = Workspace(net, self.X, self.Y, self.block_size, self.blas_min)
        if self._A is None:
            self._A = ws.A
        else:
            ws.A = self._A                  # the inputs are the same, the rest is rewritten
        ws.dw_prev[:] = dw_prev
        self.ws[i] = ws
        self.g_prev[i] = np.array(g_prev, dtype=float)
        self.step[i] = np.array(step, dtype=float)
        self.last[i] = np.array([last_error], dtype=float)
        if self._A_val is not None:
            self.val[i] = Evaluator(net, None, self.Y_val, self.blas_min, A=self._A_val)
        if self._A_test is not None:
            self.test[i] = Evaluator(net, None, self.Y_test, self.blas_min, A=self._A_test)

    def train(self, i, sse_out, check):
        """Train trial ``i`` for len(sse_out) epochs (unscaled SSE into sse_out);
        ``check``: (every, r_c, analog) or None. Returns the kernel status."""
        every, r_c, analog = check if check is not None else (0, 0.4, -1.0)
        return self.ws[i].rprop_epochs(self.g_prev[i], self.step[i], self.args, self.last[i],
                                       sse_out, every, r_c, analog)

    def weights(self, i):
        """Trial ``i``'s current weights (its network's own vector, not a copy)."""
        return self.nets[i]._w

    def rows(self, trials):
        """The current weights of ``trials``: (len(trials), n_connections), a copy."""
        out = np.empty((len(trials), self.nets[0].n_connections))
        for j, i in enumerate(np.asarray(trials).tolist()):
            out[j] = self.nets[i]._w
        return out

    def sse(self, which, trials):
        """Summed squared errors of ``trials`` on the validation or test set."""
        evaluators = self.val if which == "val" else self.test
        return np.array([evaluators[i].sse() for i in trials], dtype=float)


def warn_late(criterion, n_late, K, max_epochs):
    """The one NoConvergenceWarning of a batch (for train_rprop_many's caller): how
    many trials reached ``max_epochs`` before ``criterion`` (a name; None: no
    criterion, no warning)."""
    if criterion is not None and n_late:
        warnings.warn(f"{n_late} of {K} trials reached max_epochs={max_epochs} before the "
                      f"stopping criterion {criterion} held.", NoConvergenceWarning,
                      stacklevel=4)


def train_serial(nets, seeds, X, Y, kwargs, callback, clocks):
    """train_rprop_many's method "serial": ``train_rprop(nets[i], X, Y, seed=seeds[i],
    **kwargs)`` one after another; a DivergenceError names its trial, and the trials
    that reached max_epochs first give one NoConvergenceWarning for the batch."""
    results = []
    with late_runs() as late:          # (one warning for the batch, below)
        for i, (net, seed) in enumerate(zip(nets, seeds)):
            cb = (None if callback is None
                  else (lambda epoch, state, i=i: callback(i, epoch, state)))
            try:
                results.append(train_rprop(net, X, Y, seed=seed, callback=cb, **kwargs))
            except DivergenceError as exc:
                raise DivergenceError(f"trial {i} (nets[{i}]): {exc}", exc.epoch, i) from None
    setup = results[0].setup
    warn_late(setup["stopping"], len(late), len(results), setup["max_epochs"])
    cpu, wall = time.process_time() - clocks[0], time.perf_counter() - clocks[1]
    shares = time_shares([r.epochs for r in results])
    batch = batch_record("serial", len(nets), cpu, wall)
    return TrainResults([replace(r, cpu_time=cpu * f, wall_time=wall * f,
                                 setup=dict(r.setup, batch=batch))
                         for r, f in zip(results, shares)])
