"""The strip loop: one policy for K trials (K = 1 is `train_rprop`).

Python decides (strips, validation and best weights, criteria, callbacks,
warnings, divergence, history, results); the backends compute whole strips of
epochs per call (see :mod:`fastnet.training._backends`). The loop alone owns
Proben1's policy (Prechelt 1994) and Hamey's success check (Hamey 1992).
"""
import copy
import math
import time
import warnings
from functools import partial

import numpy as np

from fastnet._netfile import MAX_WEIGHT, within_max_weight
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.measures import _check_analog, threshold_correct
from fastnet.stopping import Correct, TrainingState
from fastnet.training._algorithms import NO_CHECK, Algorithm
from fastnet.training._backends import HANDOFF_EPOCHS
from fastnet.training._divergence import (beyond_max_weight, check_finite, check_growth_rows,
                                          diverged, growth_limit, hinted)
from fastnet.training._lanes import aligned
from fastnet.training._results import Columns, SetColumns

__all__ = ["MAX_EPOCHS_PER_CALL", "StripLoop"]

# (the reductions without ndarray.max's Python wrapper: the loop runs them per strip)
_FMAX, _MIN = np.fmax.reduce, np.minimum.reduce
_ANY, _ALL = np.logical_or.reduce, np.logical_and.reduce

# Without strips (no validation, no criterion, no callback) the kernels still
# return to Python every this many epochs, so Ctrl-C stays responsive.
MAX_EPOCHS_PER_CALL = 1000


def _finite(a):
    """Whether every value of ``a`` is finite."""
    return bool(_ALL(np.isfinite(a), axis=None))


def _history(shape, lanes, zero=False):
    """A history of ``shape`` (zeroed or not); at a 64-byte boundary for the lanes."""
    if lanes:
        return aligned(shape, zero=zero)
    return np.zeros(shape) if zero else np.empty(shape)


def _grown(history, needed, limit, lanes=False):
    """``history`` with room for ``needed`` columns (doubled, at most ``limit``)."""
    if needed <= history.shape[1]:
        return history
    grown = _history((history.shape[0], min(limit, max(needed, 2 * history.shape[1]))), lanes,
                     zero=True)
    grown[:, :history.shape[1]] = history
    return grown


class StripLoop:
    """Train K trials in strips of epochs until each stops.

    Parameters
    ----------
    trials : fastnet.training._backends.Trials or fastnet.training._serial.Serial
        Where the trials train (a `Serial` backend alone where every trial
        trains in it).
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
        self.algorithm = algorithm
        self.N, self.C = N, C = sets.X.shape[0], net.n_connections
        self.updates = algorithm.updates_per_epoch(N, C)
        stop, measured = run.stop, sets.X_val is not None or sets.X_test is not None
        self.criteria = [None] * K
        if stop is not None:
            for i in range(K):
                self.criteria[i] = copy.deepcopy(stop)
                self.criteria[i].reset()
        self.measured = measured                   # a validation or test set
        self.in_strips = measured or stop is not None or run.callback is not None
        self.kernel_check = (type(stop) is Correct and not measured and run.callback is None
                             and algorithm.kernel_check)
        self.check, self.step = None, run.strip if self.in_strips else MAX_EPOCHS_PER_CALL
        if self.kernel_check:
            analog = _check_analog((sets.Y == 0.0) | (sets.Y == 1.0), stop.analog)
            self.check = (run.strip, stop.r_c, NO_CHECK[2] if analog is None else analog)
            # (a batch that hands trials off returns more often, to notice stopped trials)
            every = MAX_EPOCHS_PER_CALL if trials.handoff is None else HANDOFF_EPOCHS
            self.step = run.strip * max(1, every // run.strip)
        # (not zeroed: the backends write every epoch a trial trains, and nothing
        # reads an epoch before it is written, but the growth check, which ignores
        # NaN). It grows as epochs run (doubling), never allocated for max_epochs at
        # once: max_epochs=10**12 trains, and memory follows the epochs trained.
        # Where lanes train, at a 64-byte boundary: their tiny kernels stream whole
        # cache lines of it to memory.
        self.history = _history((rows, min(run.max_epochs, 1024)), trials.lanes is not None)
        self.epoch = 0                              # epochs trained by the trials still training
        # epochs: set when a trial stops, and at the end; checks: success checks run
        # from the loop, per trial
        # (one array each: unpacking one array of rows costs more than making them)
        self.epochs, self.checks = np.zeros(K, np.intp), np.zeros(K, np.intp)
        # stopped; fired: by their criterion; called_off: by the callback
        self.stopped, self.fired, self.called_off = (np.zeros(K, bool), np.zeros(K, bool),
                                                     np.zeros(K, bool))
        self.training = np.arange(K)                # the trials still training
        self.reasons = ["max_epochs"] * K
        self.last_rows = None                       # each trial's weights when it stopped
        # (forward, backward, update, flops) of rules whose cost varies by epoch
        self.counts = np.zeros((K, 4), np.int64) if algorithm.variable_cost else None
        # the rule's states hold something to release when a trial stops (L-BFGS's thread)
        self._closes = type(algorithm).close is not Algorithm.close
        self.best_val, self.best_epoch = [np.inf] * K, [None] * K
        self.val = self.test = self.strip_epochs = self.best_rows = None
        self.val_scale = self.test_scale = 0.0
        if measured:
            self._strip_sets(K)
        self._masks, self._checkers = {}, {}
        self._limits = None

    def _strip_sets(self, K):
        """The validation and test errors' columns (at least one of the sets is given)."""
        s, run, n_out = self.sets, self.run, self.sets.Y.shape[1]
        cap = min(max(1, run.max_epochs // run.strip), 64)
        if s.X_val is not None:
            self.val = np.empty((K, cap))
            self.val_scale = run.scale(s.n_val, n_out)
            self.best_rows = np.empty((K, self.C))
        if s.X_test is not None:
            self.test = np.empty((K, cap))
            self.test_scale = run.scale(s.n_test, n_out)
        self.strip_epochs = run.strip * np.arange(1, cap + 1)

    def _who(self, trial):
        return None if self.single else int(trial)

    # ------------------------------------------------------------------ the loop

    def train(self):
        """Train every trial until it stops; returns (cpu seconds, wall seconds).
        A divergence names what to change (`hinted`)."""
        try:
            return self._train()
        except DivergenceError as exc:
            raise hinted(exc, self.algorithm, self.run.weight_decay, self.sets) from None

    def _train(self):
        run, trials, lanes = self.run, self.trials, self.trials.lanes is not None
        strip_ends = self.in_strips and not self.kernel_check
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while self.epoch < run.max_epochs and self.training.size:
            epoch = self.epoch
            n = min(self.step - epoch % self.step, run.max_epochs - epoch)
            if lanes:
                trials.hand_off(~self.stopped, n)
            idx = self.training
            if epoch + n > self.history.shape[1]:
                self.history = _grown(self.history, epoch + n, run.max_epochs, lanes)
            status = trials.run(idx, n, self.check, self.history, epoch)
            stopping = status[0] if status.size == 1 else _ANY(status)
            if stopping:
                self._diverged(idx, status, epoch)
            self._check_growth(idx, status, epoch, n)
            self.epoch = epoch + n
            if stopping:
                self._succeeded(idx, status, epoch)
            if strip_ends:
                self._strip_end(self.training, self.epoch)
            if lanes and self.training.size and self.epoch < run.max_epochs:
                trials.pack(~self.stopped)
        self._finish(self.training, self.epoch, last=True)
        return time.process_time() - cpu0, time.perf_counter() - wall0

    @property
    def limits(self):
        """Each trial's training error beyond which it diverged (see fastnet.training._divergence)."""
        if self._limits is None:
            self._limits = growth_limit(self.first)
        return self._limits

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
            # the smallest of the trials' `limits` (built when needed)
            self.lowest = growth_limit(float(self.first[0]) if K == 1 else float(_MIN(self.first)))
        # (the lanes' kernel keeps the largest error it wrote; else one pass, fmax:
        # the epochs of trials that have stopped hold whatever was there. One trial:
        # Python's max of a strip's few floats, a third of fmax's call; the call's
        # first epoch always trained, so a NaN left after a stop cannot lead)
        top = self.trials.top
        if top is None:
            top = (max(history[0, epoch:epoch + n].tolist()) if K == 1
                   else _FMAX(history[:K, epoch:epoch + n], axis=None))
        if top > self.lowest:
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

    def _finish(self, trials, epochs, last=False):
        """``trials`` stop after ``epochs`` (one number or one per trial): they leave
        their weights in ``last_rows`` and train no more (``last``: the loop has
        ended, nothing trains any more)."""
        if trials.size == self.K:                   # all of them (ascending: 0 .. K - 1)
            self.epochs[:] = epochs
            # (one trial: its row, copied as a (1, C) array, without the gathering)
            self.last_rows = (np.array(self.trials.row(0), ndmin=2) if self.K == 1
                              else np.ascontiguousarray(self.trials.weights(trials)))
        elif trials.size:
            if self.last_rows is None:
                self.last_rows = np.empty((self.K, self.C))
            self.epochs[trials] = epochs
            self.last_rows[trials] = self.trials.weights(trials)
        if trials.size:
            if self.counts is not None:
                self.counts[trials] = self.trials.counts(trials)
            if last:
                if self._closes:
                    self.trials.stopped(trials)
                self.training = trials[:0]
                return
            self.trials.stopped(trials)
            self.stopped[trials] = True
            self.training = np.flatnonzero(~self.stopped)

    # ------------------------------------------------------------ strip ends

    def _strip_end(self, idx, epoch):
        """Measure, test the criteria and call the callback at a strip end."""
        at_end = epoch % self.run.strip == 0
        if at_end and self.measured:
            self._measure(idx, epoch)
        run, fired, ended = self.run, self.fired, []
        if self.criteria[0] is None and run.callback is None:
            return                          # (nobody to show the state to)
        for i in idx.tolist():
            state = self._state(i, epoch)
            crit = self.criteria[i]
            hit = crit is not None and at_end and crit.update(state)
            if hit:
                self.reasons[i] = crit.fired or crit.name
                fired[i] = True
            # The callback sees every strip end, the last one included.
            if run.callback is not None and run.callback(i, epoch, state) and not hit:
                self.reasons[i] = "callback"
                self.called_off[i] = True
                ended.append(i)
            elif hit:
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
        if idx.size == 1:
            self._measure_one(idx, j, epoch)
            return
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

    def _measure_one(self, idx, j, epoch):
        """`_measure` of one trial (``idx`` of size 1), in floats."""
        i = int(idx[0])
        who = None if self.single else i
        if self.val is not None:
            e = self.trials.sse_one("val", i) * self.val_scale
            if not math.isfinite(e):
                raise diverged(epoch, "the validation error", who)
            self.val[i, j] = e
            if e < self.best_val[i]:
                self.best_rows[i] = self.trials.row(i)
                self.best_val[i], self.best_epoch[i] = e, epoch
        if self.test is not None:
            e = self.trials.sse_one("test", i) * self.test_scale
            if not math.isfinite(e):
                raise diverged(epoch, "the test error", who)
            self.test[i, j] = e

    def _state(self, i, epoch):
        strip, val, test = self.run.strip, self.val, self.test
        n = epoch // strip if (val is not None or test is not None) else 0
        return TrainingState(
            epoch=epoch, strip=strip, train_errors=self.history[i, :epoch],
            val_errors=val[i, :n] if val is not None else None,
            val_epochs=self.strip_epochs[:n] if val is not None else None,
            test_errors=test[i, :n] if test is not None else None,
            best_epoch=self.best_epoch[i], is_correct=self._checker(i))

    def _checker(self, i):
        """Trial ``i``'s ``is_correct`` (made once)."""
        checker = self._checkers.get(i)
        if checker is None:
            checker = self._checkers[i] = partial(self._is_correct, i)
        return checker

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
        s, NC = self.sets, self.N * self.C
        if self.kernel_check:
            return self.epochs // self.run.strip * NC
        per_strip = s.n_val + s.n_test if self.in_strips else 0
        if not per_strip:
            return self.checks * NC
        return self.epochs // self.run.strip * (per_strip * self.C) + self.checks * NC

    # ---------------------------------------------------------------- results

    def columns(self, clocks, stacklevel, store=None):
        """The loop's outcome as `Columns`, after the checks of the end of a run:
        weights an MLP takes (finite, within MAX_WEIGHT), the no-convergence
        warning, the relevant epoch's weights (given to ``store(rows)``), the
        final errors. ``clocks``: (cpu, wall) seconds per trial (arrays of
        shape (K,))."""
        try:
            return self._columns(clocks, stacklevel + 1, store)
        except DivergenceError as exc:
            raise hinted(exc, self.algorithm, self.run.weight_decay, self.sets) from None

    def _columns(self, clocks, stacklevel, store):
        epochs, rows = self.epochs, self.last_rows
        if not within_max_weight(rows):
            k = int(np.flatnonzero(~(np.abs(rows) <= MAX_WEIGHT).all(axis=1))[0])
            if _finite(rows[k]):
                raise beyond_max_weight(int(epochs[k]), float(np.abs(rows[k]).max()),
                                        self._who(k))
            raise diverged(int(epochs[k]), "the weights", self._who(k))
        self._warn(stacklevel)
        current = self.best_rows is None            # the weights each trial stopped at
        relevant = epochs if current else epochs.copy()
        if not current:
            has = [i for i, b in enumerate(self.best_epoch) if b is not None]
            rows[has] = self.best_rows[has]
            relevant[has] = [self.best_epoch[i] for i in has]
        if store is not None:
            store(rows)
        s, run = self.sets, self.run
        finals = (self._final("train", s.Y, relevant, current),
                  None if s.Y_val is None else self._final("val", s.Y_val, relevant, current),
                  None if s.Y_test is None else self._final("test", s.Y_test, relevant,
                                                            current))
        measured = self.val is not None or self.test is not None
        return Columns(
            epochs=epochs, relevant_epoch=relevant, stop_reason=tuple(self.reasons),
            train_error=self.history, val_error=self.val, test_error=self.test,
            strip_epochs=self.strip_epochs if measured else None,
            n_strips=epochs // run.strip if measured else None, weights=rows, finals=finals,
            evaluation=self.evaluation(), n_train=self.N, updates_per_epoch=self.updates,
            cpu_time=clocks[0], wall_time=clocks[1], counts=self.counts)

    def _final(self, which, Y, relevant, current):
        # Errors of the returned weights (after the clock, as in train_rprop).
        sse, cls = self.trials.final(which, self.last_rows, self.run.classification, current)
        # NMSE (Lawrence et al. 1997): SSE over that of the one mean target, as measures.nmse
        spread = float(np.sum((Y - Y.mean()) ** 2)) if Y.size else 0.0
        nmse = sse / spread if spread > 0.0 else None
        low, high = self.run.target_range
        factor = 100.0 * (high - low) / Y.size
        # (one trial: in a float, the same product)
        if self.K == 1:
            top = sse[0] = factor * float(sse[0])
            e = sse
        else:
            top, e = None, factor * sse
        # finite weights can still overflow in the forward pass (inf - inf)
        if not (math.isfinite(top) if top is not None else _finite(e)):
            check_finite(e, self.epochs, "the error of the trained network",
                         None if self.single else np.arange(self.K))
        # the last update ran away
        if which == "train" and (top if top is not None else _FMAX(e)) > self.lowest and _ANY(
                e > self.limits):
            check_growth_rows(e[:, None], np.ones(self.K, np.intp), self.limits, relevant + 1,
                              self.first, np.arange(self.K), self.single)
        return SetColumns(e, cls, Y.shape[0], nmse)

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
