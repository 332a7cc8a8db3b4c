"""The strip loop: one policy for K trials (K = 1 is `train_rprop`).

Python decides (strips, validation and best weights, criteria, callbacks,
warnings, divergence, history, results); the backends compute whole strips of
epochs per call (see :mod:`fastnet.training._backends`). The loop alone owns
Proben1's policy (Prechelt 1994) and Hamey's success check (Hamey 1992).
"""
import copy
import time
import warnings
from functools import partial

import numpy as np

from fastnet.exceptions import NoConvergenceWarning
from fastnet.measures import _check_analog, threshold_correct
from fastnet.stopping import Correct, TrainingState
from fastnet.training._algorithms import NO_CHECK
from fastnet.training._backends import HANDOFF_EPOCHS
from fastnet.training._divergence import check_finite, check_growth_rows, diverged, growth_limit
from fastnet.training._results import Columns, SetColumns

__all__ = ["MAX_EPOCHS_PER_CALL", "StripLoop"]

# Without strips (no validation, no criterion, no callback) the kernels still
# return to Python every this many epochs, so Ctrl-C stays responsive.
MAX_EPOCHS_PER_CALL = 1000


def _grown(history, needed, limit):
    """``history`` with room for ``needed`` columns (doubled, at most ``limit``;
    zeros where nothing was written, which the growth check reads as such)."""
    if needed <= history.shape[1]:
        return history
    grown = np.zeros((history.shape[0], min(limit, max(needed, 2 * history.shape[1]))))
    grown[:, :history.shape[1]] = history
    return grown


class StripLoop:
    """Train K trials in strips of epochs until each stops.

    Parameters
    ----------
    trials : fastnet.training._backends.Trials
        Where the trials train.
    K, net, algorithm, sets, run
        The trial count, the topology, the `Algorithm`, the checked `Sets` and
        `RunOptions` (``run.callback`` is called ``callback(i, epoch, state)``).
    rows : int
        Rows of the training-error history (at least K; the lanes write theirs
        in place, padding rows included).
    single : bool
        A single run (`train_rprop`): its messages name no trial.

    The caller holds BLAS at one thread (``fastnet._blas.single_threaded_blas``)
    around :meth:`train` and :meth:`columns`.
    """

    def __init__(self, trials, K, net, algorithm, sets, run, rows, single=False):
        self.trials, self.K, self.sets, self.run, self.single = trials, K, sets, run, single
        self.N, self.C = sets.X.shape[0], net.n_connections
        self.updates = algorithm.updates_per_epoch(self.N, self.C)
        stop = run.stop
        self.criteria = [None] * K
        if stop is not None:
            for i in range(K):
                self.criteria[i] = copy.deepcopy(stop)
                self.criteria[i].reset()
        self.in_strips = (sets.X_val is not None or sets.X_test is not None or stop is not None
                          or run.callback is not None)
        self.kernel_check = (type(stop) is Correct and sets.X_val is None
                             and sets.X_test is None and run.callback is None
                             and algorithm.kernel_check)
        self.check, self.step = None, run.strip if self.in_strips else MAX_EPOCHS_PER_CALL
        if self.kernel_check:
            analog = _check_analog((sets.Y == 0.0) | (sets.Y == 1.0), stop.analog)
            self.check = (run.strip, stop.r_c, NO_CHECK[2] if analog is None else analog)
            # (a batch that hands trials off returns more often, to notice stopped trials)
            every = MAX_EPOCHS_PER_CALL if trials.handoff is None else HANDOFF_EPOCHS
            self.step = run.strip * max(1, every // run.strip)
        self.history = np.zeros((rows, min(run.max_epochs, 1024)))
        self.epoch = 0                              # epochs trained by the trials still training
        self.epochs = np.zeros(K, np.intp)          # (set when a trial stops, and at the end)
        self.stopped = np.zeros(K, bool)
        self.training = np.arange(K)                # the trials still training
        self.fired = np.zeros(K, bool)              # stopped by their criterion
        self.called_off = np.zeros(K, bool)         # stopped by the callback
        self.reasons = ["max_epochs"] * K
        self.checks = np.zeros(K, np.int64)         # success checks run from the loop, per trial
        self.last_rows = np.empty((K, self.C))      # each trial's weights when it stopped
        # (forward, backward, update, flops) of rules whose cost varies by epoch
        self.counts = np.zeros((K, 4), np.int64) if algorithm.variable_cost else None
        self._strip_sets(K)
        self._masks = {}

    def _strip_sets(self, K):
        s, n_out = self.sets, self.sets.Y.shape[1]
        cap = min(max(1, self.run.max_epochs // self.run.strip), 64)
        self.val = np.empty((K, cap)) if s.X_val is not None else None
        self.test = np.empty((K, cap)) if s.X_test is not None else None
        self.strip_epochs = self.run.strip * np.arange(1, cap + 1)
        self.val_scale = self.run.scale(s.n_val, n_out) if s.X_val is not None else 0.0
        self.test_scale = self.run.scale(s.n_test, n_out) if s.X_test is not None else 0.0
        self.best_val = [np.inf] * K
        self.best_epoch = [None] * K
        self.best_rows = np.empty((K, self.C)) if s.X_val is not None else None

    def _who(self, trial):
        return None if self.single else int(trial)

    # ------------------------------------------------------------------ the loop

    def train(self):
        """Train every trial until it stops; returns (cpu seconds, wall seconds)."""
        run, trials = self.run, self.trials
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while self.epoch < run.max_epochs and self.training.size:
            epoch = self.epoch
            n = min(self.step - epoch % self.step, run.max_epochs - epoch)
            if trials.lanes is not None:
                trials.hand_off(~self.stopped, n)
            idx = self.training
            if epoch + n > self.history.shape[1]:
                self.history = _grown(self.history, epoch + n, run.max_epochs)
            status = trials.run(idx, n, self.check, self.history, epoch)
            stopping = np.count_nonzero(status)
            if stopping:
                self._diverged(idx, status, epoch)
            self._check_growth(idx, status, epoch, n)
            self.epoch = epoch + n
            if stopping:
                self._succeeded(idx, status, epoch)
            if self.in_strips and not self.kernel_check:
                self._strip_end(self.training, self.epoch)
            if trials.lanes is not None:
                trials.pack(~self.stopped)
        self._finish(self.training, self.epoch)
        return time.process_time() - cpu0, time.perf_counter() - wall0

    def _diverged(self, idx, status, epoch):
        """Kernel status k > 0: the training error of epoch k of the call was not finite."""
        if np.any(status > 0):
            k = int(np.flatnonzero(status > 0)[0])
            raise diverged(epoch + int(status[k]), trial=self._who(idx[k]))

    def _check_growth(self, idx, status, epoch, n):
        """Divergence by growth (see fastnet.training._divergence): one pass over
        the call's errors, then the trial that grew."""
        K, history = self.K, self.history
        if epoch == 0:
            self.first = history[:K, 0].copy()
            self.limits = growth_limit(self.first)
            self.lowest = self.limits.min()
        if history[:K, epoch:epoch + n].max() > self.lowest:
            done = np.where(status < 0, -status, n)
            check_growth_rows(history[idx, epoch:epoch + n], done, self.limits, epoch + 1,
                              self.first, idx, self.single)

    def _succeeded(self, idx, status, epoch):
        """Kernel status -k: the success check held after epoch k of the call, or
        the rule stopped itself there (its own reason, e.g. "converged"); the
        trial stops there."""
        won = idx[status < 0]
        self.fired[won] = True
        for i in won.tolist():
            self.reasons[i] = self.trials.stop_reason(i) or self.run.stop.name
        self._finish(won, epoch - status[status < 0])

    def _finish(self, trials, epochs):
        """``trials`` stop after ``epochs`` (one number or one per trial): they leave
        their weights in ``last_rows`` and train no more."""
        if trials.size:
            self.epochs[trials] = epochs
            self.last_rows[trials] = self.trials.weights(trials)
            if self.counts is not None:
                self.counts[trials] = self.trials.counts(trials)
            self.trials.stopped(trials)
            self.stopped[trials] = True
            self.training = np.flatnonzero(~self.stopped)

    # ------------------------------------------------------------ strip ends

    def _strip_end(self, idx, epoch):
        """Measure, test the criteria and call the callback at a strip end."""
        at_end = epoch % self.run.strip == 0
        if at_end and (self.val is not None or self.test is not None):
            self._measure(idx, epoch)
        run, fired, ended = self.run, self.fired, []
        for i in idx.tolist():
            state = self._state(i, epoch)
            crit = self.criteria[i]
            if crit is not None and at_end and crit.update(state):
                self.reasons[i] = crit.fired or crit.name
                fired[i] = True
            # The callback sees every strip end, the last one included.
            if run.callback is not None and run.callback(i, epoch, state) and not fired[i]:
                self.reasons[i] = "callback"
                self.called_off[i] = True
                ended.append(i)
            elif fired[i]:
                ended.append(i)
        if ended:
            self._finish(np.array(ended, dtype=np.intp), epoch)

    def _measure(self, idx, epoch):
        """Validation and test errors of the trials ``idx`` at the strip end ``epoch``."""
        j = epoch // self.run.strip - 1            # (every trial still training has all before)
        if j >= self.strip_epochs.size:
            limit = max(1, self.run.max_epochs // self.run.strip)
            self.val, self.test = (None if h is None else _grown(h, j + 1, limit)
                                   for h in (self.val, self.test))
            self.strip_epochs = self.run.strip * np.arange(1, (self.val if self.val is not None
                                                               else self.test).shape[1] + 1)
        if self.val is not None:
            e_va = self.trials.sse("val", idx) * self.val_scale
            if not np.isfinite(e_va).all():
                check_finite(e_va, epoch, "the validation error", None if self.single else idx)
            self.val[idx, j] = e_va
            best = self.best_val
            better = [(i, e) for i, e in zip(idx.tolist(), e_va.tolist()) if e < best[i]]
            if better:
                won = [i for i, _ in better]
                self.best_rows[won] = self.trials.weights(np.array(won, dtype=np.intp))
                for i, e in better:
                    best[i], self.best_epoch[i] = e, epoch
        if self.test is not None:
            e_te = self.trials.sse("test", idx) * self.test_scale
            if not np.isfinite(e_te).all():
                check_finite(e_te, epoch, "the test error", None if self.single else idx)
            self.test[idx, j] = e_te

    def _state(self, i, epoch):
        n = epoch // self.run.strip if (self.val is not None or self.test is not None) else 0
        return TrainingState(
            epoch=epoch, strip=self.run.strip, train_errors=self.history[i, :epoch],
            val_errors=self.val[i, :n] if self.val is not None else None,
            val_epochs=self.strip_epochs[:n] if self.val is not None else None,
            test_errors=self.test[i, :n] if self.test is not None else None,
            best_epoch=self.best_epoch[i], is_correct=partial(self._is_correct, i))

    def _is_correct(self, i, r_c, analog):
        # Hamey's success check on trial i's weights (a forward pass, counted as
        # evaluation); the target masks are built (and the arguments checked) once.
        self.checks[i] += 1
        outputs = self.trials.train_outputs(i)
        if not np.isfinite(outputs).all():
            raise diverged(self.epoch, "the network's outputs", self._who(i))
        Y = self.sets.Y
        if (r_c, analog) not in self._masks:
            threshold_correct(outputs, Y, r_c=r_c, analog=analog)  # validates
            one, zero = Y == 1.0, Y == 0.0
            other = ~(one | zero)
            self._masks[(r_c, analog)] = (one, zero, other if other.any() else None)
        one, zero, other = self._masks[(r_c, analog)]
        if not (np.all(outputs[one] > 1.0 - r_c) and np.all(outputs[zero] < r_c)):
            return False
        return other is None or bool(np.all(np.abs(outputs[other] - Y[other]) <= analog))

    def evaluation(self):
        """Evaluation traversals of each trial (Prechelt 1994): a forward pass over
        the validation and test sets at every strip end it trained through, and
        over the training set for every success check."""
        s, strips = self.sets, self.epochs // self.run.strip
        checks = strips if self.kernel_check else self.checks
        per_strip = 0 if self.kernel_check or not self.in_strips else s.n_val + s.n_test
        return (strips * per_strip + checks * self.N) * self.C

    # ---------------------------------------------------------------- results

    def columns(self, clocks, stacklevel, store=None):
        """The loop's outcome as `Columns`, after the checks of the end of a run:
        finite weights, the no-convergence warning, the relevant epoch's weights
        (given to ``store(rows)``), the final errors. ``clocks``: (cpu, wall)
        seconds per trial (arrays of shape (K,))."""
        epochs, rows = self.epochs, self.last_rows
        if not np.isfinite(rows).all():
            k = int(np.flatnonzero(~np.isfinite(rows).all(axis=1))[0])
            raise diverged(int(epochs[k]), "the weights", self._who(k))
        self._warn(stacklevel)
        relevant = epochs.copy()
        if self.best_rows is not None:
            has = [i for i, b in enumerate(self.best_epoch) if b is not None]
            rows[has] = self.best_rows[has]
            relevant[has] = [self.best_epoch[i] for i in has]
        if store is not None:
            store(rows)
        s, run = self.sets, self.run
        finals = tuple(self._final(which, Y, relevant) for which, Y in
                       (("train", s.Y), ("val", s.Y_val), ("test", s.Y_test)))
        measured = self.val is not None or self.test is not None
        return Columns(
            epochs=epochs, relevant_epoch=relevant, stop_reason=tuple(self.reasons),
            train_error=self.history, val_error=self.val, test_error=self.test,
            strip_epochs=self.strip_epochs if measured else None,
            n_strips=epochs // run.strip if measured else None, weights=rows, finals=finals,
            evaluation=self.evaluation(), n_train=self.N, updates_per_epoch=self.updates,
            cpu_time=clocks[0], wall_time=clocks[1], counts=self.counts)

    def _final(self, which, Y, relevant):
        # Errors of the returned weights (after the clock, as in train_rprop).
        if Y is None:
            return None
        sse, cls = self.trials.final(which, self.last_rows, self.run.classification)
        e = 100.0 * (self.run.target_range[1] - self.run.target_range[0]) / Y.size * sse
        # finite weights can still overflow in the forward pass (inf - inf)
        if not np.isfinite(e).all():
            check_finite(e, self.epochs, "the error of the trained network",
                         None if self.single else np.arange(self.K))
        if which == "train" and (e > self.limits).any():    # the last update ran away
            check_growth_rows(e[:, None], np.ones(self.K, np.intp), self.limits, relevant + 1,
                              self.first, np.arange(self.K), self.single)
        return SetColumns(e, cls, Y.shape[0])

    def _warn(self, stacklevel):
        stop = self.run.stop
        late = ~(self.fired | self.called_off) if stop is not None else None
        if late is None or not late.any():
            return
        if self.single:
            message = (f"training reached max_epochs={self.run.max_epochs} before the stopping "
                       f"criterion {stop.name} held.")
        else:
            message = (f"{int(np.count_nonzero(late))} of {self.K} trials reached "
                       f"max_epochs={self.run.max_epochs} before the stopping criterion "
                       f"{stop.name} held.")
        warnings.warn(message, NoConvergenceWarning, stacklevel=stacklevel)
