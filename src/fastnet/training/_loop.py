"""The strip loop: one policy for K trials (K = 1 is `train_rprop`).

Python decides, the backends compute whole strips of epochs per call (see
:mod:`fastnet.training._backends`). The loop puts together parts with one job
each: the stopping policy (`StopPolicy`: Proben1's criteria, Prechelt 1994, the
callback and Hamey's success check, Hamey 1992), the measurement at strip ends
(`StripMeasures`), the divergence checks (`GrowthWatch`) and the training-error
history; it owns the order of their calls, the trials still training and the
assembly of the results.

A strip is begun (`StripLoop._begin`: its epochs, the history's room) and ended
(`StripLoop._end`: divergence, stops, the strip end's policy) in one place. The
loop itself calls the backend between the two; a rule that runs a loop of its own
(`Algorithm.drive`: SciPy's L-BFGS, which cannot pause) calls them from inside
that loop instead, in the caller's thread, its trials one after another.

What an exception leaves (the callback's, KeyboardInterrupt, a divergence): a
loop that keeps them (``keep``) holds in ``safe`` each trial's weights at the
last strip end it took in (`StripLoop._end`, before the callback), the weights
a trial stopped with once it stopped, its initial weights before any; the
caller writes them to its networks whatever was interrupted (a kernel call, a
hand-off between backends, SciPy's loop), so every path leaves the same.
"""
import math
import time

import numpy as np

from fastnet._netfile import MAX_WEIGHT, within_max_weight
from fastnet.exceptions import DivergenceError
from fastnet.stopping import TrainingState
from fastnet.training import _status
from fastnet.training._algorithms import counts_itself, drives_itself
from fastnet.training._backends import MAX_EPOCHS_PER_CALL
from fastnet.training._divergence import (GrowthWatch, beyond_max_weight, check_finite,
                                          diverged, growth_limit, hinted)
from fastnet.training._measure import StripMeasures, grown, new_history
from fastnet.training._policy import StopPolicy
from fastnet.training._results import Columns, SetColumns

__all__ = ["MAX_EPOCHS_PER_CALL", "StripLoop"]

_ANY, _ALL, _MIN = np.logical_or.reduce, np.logical_and.reduce, np.minimum.reduce

#: The queue (`StripLoop.train_queued`) keeps each trial's errors by epoch, K x
#: max_epochs values, where the history is kept: beyond this many the strips train
#: (their history grows with the epochs trained). Without a history (a timing study's
#: ``history=False``) the queue holds O(K) values and takes any K x max_epochs.
QUEUE_MAX_HISTORY = 2 ** 26


def _finite(a):
    """Whether every value of ``a`` is finite (without ndarray.all's Python wrapper)."""
    return bool(_ALL(np.isfinite(a), axis=None))


class StripLoop:
    """Train K trials in strips of epochs until each stops.

    Parameters
    ----------
    trials : fastnet.training._backends.Backend
        Where the trials train (a `Serial` backend alone where every trial
        trains in it; `Trials` with lanes).
    K, net, algorithm, sets, run
        The trial count, the topology, the `Algorithm`, the checked `Sets` and
        `RunOptions` (``run.callback`` is called ``callback(i, epoch, state)``).
    rows : int
        Rows of the training-error history (at least K; the lanes write theirs
        in place, padding rows included).
    single : bool
        A single run (`train_rprop`): its messages name no trial.
    keep : bool
        Keep ``safe``, (K, C): each trial's weights at the last strip end the loop
        took in (those it stopped with once it stopped; its initial weights before
        any), what the caller leaves in its networks when an exception ends the
        run (a copy of the trials' weights per strip).

    The caller holds BLAS at one thread (``fastnet._blas.single_threaded_blas``)
    around :meth:`train` and :meth:`columns`.
    """

    def __init__(self, trials, K, net, algorithm, sets, run, rows, single=False, keep=False):
        self.trials, self.K, self.sets, self.run, self.single = trials, K, sets, run, single
        self.algorithm = algorithm
        self.N, self.C = sets.X.shape[0], net.n_connections
        self.updates = algorithm.updates_per_epoch(self.N, self.C)
        self.policy = StopPolicy(K, algorithm, sets, run, trials, single, MAX_EPOCHS_PER_CALL)
        self.growth = GrowthWatch(K, single)
        measured = sets.X_val is not None or sets.X_test is not None
        self.measures = StripMeasures(K, self.C, sets, run, single) if measured else None
        # The training errors (not zeroed: the backends write every epoch a trial
        # trains, and nothing reads an epoch before it is written, but the growth
        # check, which ignores NaN). It grows as epochs run (doubling), never
        # allocated for max_epochs at once: max_epochs=10**12 trains, and memory
        # follows the epochs trained.
        self.history = new_history((rows, min(run.max_epochs, 1024)), trials.aligned)
        self.epoch = 0                              # epochs trained by the trials still training
        # epochs: set when a trial stops, and at the end
        self.epochs = np.zeros(K, np.intp)
        self.stopped = np.zeros(K, bool)
        self.training = np.arange(K)                # the trials still training
        self.last_rows = None                       # each trial's weights when it stopped
        # (forward, backward, update, flops) of rules whose cost varies by epoch
        self.counts = np.zeros((K, 4), np.int64) if counts_itself(algorithm) else None
        self.min_train = None               # (each trial's lowest E_tr where no history is kept)
        # the rule drives its strips from a loop of its own (`Algorithm.drive`)
        self.drives = drives_itself(algorithm)
        self._strip_ends = self.policy.in_strips and not self.policy.kernel_check
        # (what an exception leaves: the initial weights until a strip is taken in)
        self.safe = np.array(trials.weights(self.training), order="C", ndmin=2) if keep else None

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
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if self.drives:
            # The rule runs its own loop (SciPy's L-BFGS), which cannot pause: the
            # trials train one after another, each calling its strips from that loop.
            for i in range(self.K):
                self.training, self.epoch = np.array([i], np.intp), 0
                self.trials.drive(i, self._strips_of(i))
                self._finish(self.training, self.epoch, last=True)
        else:
            run = self.trials.run
            strip = self._begin()
            while strip is not None:
                self._end(strip, run(*strip))
                strip = self._begin()
            self._finish(self.training, self.epoch, last=True)
        return time.process_time() - cpu0, time.perf_counter() - wall0

    def _begin(self):
        """The next strip of the trials still training, as the arguments of
        `Backend.run` (trials, n, check, history, epoch), or None: training ends."""
        epoch, max_epochs = self.epoch, self.run.max_epochs
        if epoch >= max_epochs or not self.training.size:
            return None
        step = self.policy.step
        n = min(step - epoch % step, max_epochs - epoch)
        n = self.trials.hand_off(self.stopped, n)
        if epoch + n > self.history.shape[1]:
            self.history = grown(self.history, epoch + n, max_epochs, self.trials.aligned)
        return self.training, n, self.policy.check, self.history, epoch

    def _end(self, strip, status):
        """The strip (from `_begin`) trained, each trial's kernel status in ``status``:
        divergence, the trials that stopped, the strip end's criteria and callback."""
        idx, n, _, _, epoch = strip
        stopping = status[0] if status.size == 1 else _ANY(status)
        if stopping:
            self.growth.raise_diverged(idx, status, epoch)
        self.growth.check(self.history, idx, status, epoch, n, self.trials.top)
        self.epoch = epoch + n
        if stopping:
            early = _status.stopped(status)
            won, ends = idx[early], epoch + _status.stopped_after(status[early])
            self.policy.succeeded(won)
            if self._strip_ends:
                # A rule that stops its trial at a strip end has that strip end
                # measured like any other, at the weights it stops with (its
                # criteria and callback are not asked: it has stopped).
                self._measure(won[ends == self.epoch], self.epoch)
            self._finish(won, ends)
        if self.safe is not None and self.training.size:
            self._keep()            # (the strip is taken in: what an exception leaves)
        if self._strip_ends:
            self._strip_end(self.training, self.epoch)
        if self.training.size and self.epoch < self.run.max_epochs:
            self.trials.pack(self.stopped)

    def _keep(self):
        """The weights of the trials still training into ``safe``, after their strip."""
        idx, safe = self.training, self.safe
        if self.K == 1:
            safe[0] = self.trials.row(0)        # (a view: copied here)
        elif idx.size == self.K:
            np.copyto(safe, self.trials.weights(idx))
        else:
            safe[idx] = self.trials.weights(idx)

    def _strips_of(self, i):
        """Trial ``i``'s strips for a rule that drives them from its own loop
        (`Algorithm.drive`): ``next_strip(status)`` ends the strip trained with that
        kernel status (None: no strip yet) as the loop ends any strip (it raises
        what the loop raises), and returns the next strip's training errors to
        write, a view of the history, or None: the trial trains no more."""
        strip = None

        def next_strip(status=None):
            nonlocal strip
            if strip is not None:
                self._end(strip, np.array([status], np.int64))
            strip = self._begin()
            if strip is None:
                return None
            n, epoch = strip[1], strip[4]
            return strip[3][i, epoch:epoch + n]
        return next_strip

    def _finish(self, trials, epochs, last=False):
        """``trials`` stop after ``epochs`` (one number or one per trial): they leave
        their weights in ``last_rows`` and train no more (``last``: the loop has
        ended for them, at max_epochs)."""
        if trials.size == self.K:                   # all of them (ascending: 0 .. K - 1)
            self.epochs[:] = epochs
            # (one trial: its row, copied as a (1, C) array, without the gathering)
            self.last_rows = (np.array(self.trials.row(0), ndmin=2) if self.K == 1
                              else np.ascontiguousarray(self.trials.weights(trials)))
        elif trials.size:
            if self.last_rows is None:
                self.last_rows = np.empty((self.K, self.C), self.sets.X.dtype)   # (the net's)
            self.epochs[trials] = epochs
            self.last_rows[trials] = self.trials.weights(trials)
        if trials.size:
            if self.safe is not None:
                self.safe[trials] = self.last_rows[trials]
            if self.counts is not None:
                self.counts[trials] = self.trials.counts(trials)
            if last:
                self.training = trials[:0]
                return
            self.trials.stopped(trials)
            self.stopped[trials] = True
            self.training = self.training[~self.stopped[self.training]]

    def _measure(self, idx, epoch):
        """The validation and test errors of ``idx`` at ``epoch``, if a strip end."""
        if self.measures is not None and idx.size and epoch % self.run.strip == 0:
            self.measures.measure(self.trials, idx, epoch)

    def _strip_end(self, idx, epoch):
        """Measure, test the criteria and call the callback at a strip end."""
        self._measure(idx, epoch)
        ended = self.policy.strip_end(idx, epoch, self._state)
        if ended:
            self._finish(np.array(ended, dtype=np.intp), epoch)

    def _state(self, i, epoch):
        m = self.measures
        val, val_epochs, test = (None, None, None) if m is None else m.curves(i, epoch)
        return TrainingState(
            epoch=epoch, strip=self.run.strip, train_errors=self.history[i, :epoch],
            val_errors=val, val_epochs=val_epochs, test_errors=test,
            best_epoch=None if m is None else m.best_epoch[i],
            is_correct=self.policy.checker(i))

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
        self.policy.warn(stacklevel)
        m = self.measures
        current = m is None or m.best_rows is None      # the weights each trial stopped at
        relevant = epochs if current else m.relevant(rows, epochs)
        if store is not None:
            store(rows)
        s, run = self.sets, self.run
        finals = (final_errors(self, "train", s.Y, relevant, current),
                  None if s.Y_val is None else final_errors(self, "val", s.Y_val, relevant, current),
                  None if s.Y_test is None else final_errors(self, "test", s.Y_test, relevant,
                                                            current))
        return Columns(
            epochs=epochs, relevant_epoch=relevant, stop_reason=tuple(self.policy.reasons),
            train_error=self.history, val_error=None if m is None else m.val,
            test_error=None if m is None else m.test,
            strip_epochs=None if m is None else m.strip_epochs,
            n_strips=None if m is None else epochs // run.strip, weights=rows, finals=finals,
            evaluation=self.policy.evaluation(epochs, self.C), n_train=self.N, updates_per_epoch=self.updates,
            cpu_time=clocks[0], wall_time=clocks[1], counts=self.counts, min_train=self.min_train)


def train_queued(self, history=True):
    """Train every trial in the lanes' queue (`LanesBackend.queue`: a lane
    whose trial stopped takes the next waiting trial at once, Hamey's check
    on each epoch's forward pass; online training's on a pass of its own)
    where the policy leaves nothing to Python between epochs: the trials all
    in lanes, stopped by ``Correct`` or ``ErrorBelow`` on the training error
    alone (`StopPolicy.queue_stop`), no validation or test set, no callback.
    Returns (cpu seconds, wall seconds); None where it does not apply. A trial
    that came near overflow (the kernel's ``w_limit``, `safe_weight`) trains again
    from its start in the strips (`train_again`); False where that cannot be done
    for some trials alone (online training; every trial came near) and where a
    trial diverged (the strips then raise the error they raise, naming the trial
    and epoch they name): nothing was kept (online training's generators put back)
    and a new loop trains the strips. ``history`` False: no errors by epoch, each
    trial's lowest alone (``self.min_train``)."""
    lanes = self.trials.lanes
    if (lanes is None or self.trials.serial is not None or self.trials.handoff is not None
            or self.policy.queue_stop is None or self.drives
            or self.counts is not None
            or (history and self.K * self.run.max_epochs > QUEUE_MAX_HISTORY)):
        return None
    cpu0, wall0 = time.process_time(), time.perf_counter()
    T = self.run.max_epochs
    history = new_history((self.K, T), True) if history else None
    rows, epochs, status, first, top, top_epoch, low = lanes.queue(*self.policy.queue_stop, T, history)
    # Trials whose weights reached the bound the lanes vouch to (`safe_weight`) train
    # again in the strips, which hand them to the single-network kernels; the others
    # keep what the queue gave them, as the strips would have (the same kernels).
    again = status >= _status.BEYOND
    g = self.growth
    g.first, g.lowest = first, growth_limit(float(_MIN(first)))
    # A trial that diverged (non-finite errors, or errors that grew beyond their limit:
    # the queue keeps each trial's largest, not the epoch it first passed the limit) or,
    # online, one that came near overflow: the strips train them all again, and raise
    # what they raise, where they raise it (the epoch the growth check fired, and the
    # trial the strips name first).
    if (_ANY((status > 0) & ~again) or _ANY((top > g.limits) & ~again)
            or (_ANY(again) and (lanes.online or _ALL(again)))):
        lanes.rewind()                  # (online trials' generators back to their start)
        return False
    self.policy.succeeded(np.flatnonzero(status < 0))
    self.policy.queued(epochs)
    self.epochs[:], self.last_rows = epochs, rows
    if self.safe is not None:
        self.safe = np.ascontiguousarray(rows)
    if history is None:
        history, self.min_train = np.empty((self.K, 0)), low
    self.history = history
    self.training, self.epoch = self.training[:0], T
    if _ANY(again):
        train_again(self, np.flatnonzero(again))
    return time.process_time() - cpu0, time.perf_counter() - wall0


def train_again(self, again):
    """After the queue: train the trials ``again`` once more from their start, in the
    strips, alone in the lanes (each reached the bound of `safe_weight` in the queue, and
    the strips hand such a trial to the single-network kernels). Where no history is
    kept, their lowest errors come from the strips' history."""
    kept = self.history.shape[1] > 0
    lanes = self.trials.lanes                   # (not online: its orders stay as they are)
    lanes.lanes.restart(again, lanes.start[0][again])
    self.stopped[:] = True
    self.stopped[again] = False
    self.training, self.epoch = again, 0
    if not kept:
        self.history = new_history((self.K, min(self.run.max_epochs, 1024)), True)
    self.train()
    if not kept:
        self.min_train[again] = _lowest(self.history[again], self.epochs[again])
        self.history = np.empty((self.K, 0))


def drop_history(self):
    """Keep each trial's lowest training error (``min_train``) in place of its
    errors by epoch (after training)."""
    if self.min_train is None:
        kept = getattr(self.trials, "lowest", None)     # (a backend that keeps them itself)
        self.min_train = (np.where(np.isfinite(kept), kept, np.nan) if kept is not None
                          else _lowest(self.history[:self.K], self.epochs))
    self.history = np.empty((self.K, 0))


def _lowest(history, epochs):
    """Each row's lowest error among its first ``epochs`` entries (NaN where none is
    finite)."""
    trained = np.arange(history.shape[1]) < epochs[:, None]
    low = np.where(trained, history, np.inf).min(axis=1, initial=np.inf)
    return np.where(np.isfinite(low), low, np.nan)


def final_errors(self, which, Y, relevant, current):
    """The errors of loop ``self``'s returned weights on one set (`SetColumns`)."""
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
    if which == "train":
        self.growth.check_final(e, top, relevant)       # the last update ran away
    return SetColumns(e, cls, Y.shape[0], nmse)
