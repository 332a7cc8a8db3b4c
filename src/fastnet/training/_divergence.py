"""Divergence: non-finite numbers, or a training error that runs away.

A run that diverges raises `DivergenceError` (a FloatingPointError naming the
epoch, and the trial in a batch); no result with NaN or run-away errors is
ever returned.
"""
import numpy as np

from fastnet._netfile import MAX_WEIGHT
from fastnet.exceptions import DivergenceError
from fastnet.training import _status
from fastnet.training._specs import parse_spec, spec_of

__all__ = ["DIVERGENCE_GROWTH", "DIVERGENCE_FLOOR", "diverged", "beyond_max_weight", "hinted",
           "check_finite", "growth_limit", "grew", "check_growth_rows", "GrowthWatch"]

#: Divergence by growth: a run whose training error E_tr(t) exceeds
#: DIVERGENCE_GROWTH * max(E_tr(1), DIVERGENCE_FLOOR) raises DivergenceError, as
#: one whose errors become non-finite does. Outputs that stay within the target
#: range keep E below 100 % (400 % for tanh outputs), so only unbounded
#: (linear) outputs running away reach it: batch backpropagation on cancer1
#: with learning rate 0.01 and momentum 0.9 grows from 58 % to 1e24 % and
#: would otherwise stop at a normal-looking GL2. The floor (in percent) keeps a
#: start that is already nearly perfect from tripping on a small rise.
DIVERGENCE_GROWTH = 1e6
DIVERGENCE_FLOOR = 1.0


def diverged(epoch, what="the training error", trial=None):
    """The DivergenceError of a run that produced non-finite ``what`` by ``epoch``."""
    who = "" if trial is None else f" of trial {trial}"
    return DivergenceError(
        f"{what}{who} became non-finite in epoch {epoch}: training diverged.",
        epoch, trial)


def beyond_max_weight(epoch, largest, trial=None):
    """The DivergenceError of a run whose finite weights grew beyond MAX_WEIGHT
    (which no MLP takes: it could neither be set nor loaded again)."""
    who = "" if trial is None else f" of trial {trial}"
    return DivergenceError(
        f"a weight{who} grew to {largest:.4g} by epoch {epoch}, beyond MAX_WEIGHT = "
        f"{MAX_WEIGHT:g} (the largest a network takes): training diverged.",
        epoch, trial)


#: Data beyond this magnitude are named first in a divergence's message: their
#: products with the weights overflow whatever the algorithm's parameters.
LARGE_DATA = 1e100


def hinted(exc, algorithm, weight_decay, sets=None):
    """``exc`` (a DivergenceError) with what to change: data of huge magnitude (the
    checked `Sets`), else the parameters actually given (``weight_decay`` and the
    algorithm's that differ from their defaults), not a guess at one algorithm's step
    size."""
    if sets is not None:
        largest = max(float(np.abs(a).max(initial=0.0)) for a in
                      (sets.X, sets.Y, sets.X_val, sets.Y_val, sets.X_test, sets.Y_test)
                      if a is not None)
        if largest > LARGE_DATA:
            return DivergenceError(
                f"{exc} The data reach {largest:.3g} in magnitude, beyond what a network's "
                "sums hold: scale them (e.g. to [0, 1] or unit variance).", exc.epoch,
                exc.trial)

    try:
        name, given = parse_spec(spec_of(algorithm))
    except (TypeError, ValueError):                 # (a user's unregistered rule)
        name, given = type(algorithm).__name__, {}
    parts = [f"weight_decay={weight_decay:g}"] if weight_decay else []
    parts += [f"{k}={v!r}" for k, v in given.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if parts:
        hint = (f"Lower what was given ({', '.join(parts)}) or the initial weights' scale, "
                "or scale the data.")
    else:
        hint = (f"{name} diverged at its default parameters: give it smaller steps, smaller "
                "initial weights, or scale the data.")
    return DivergenceError(f"{exc} {hint}", exc.epoch, exc.trial)


def check_finite(values, epoch, what, trials=None):
    """Raise DivergenceError for the first value that is not finite (``trials[k]``
    names the trial of ``values[k]``, None: a single run; ``epoch`` a number or
    one per value)."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        raise diverged(int(epoch[k]) if np.ndim(epoch) else epoch, what,
                       trial=None if trials is None else int(trials[k]))


def growth_limit(first_error):
    """The training error beyond which a run that started at ``first_error`` (a
    number or an array by trial) diverged."""
    if isinstance(first_error, np.ndarray):
        with np.errstate(over="ignore"):           # (a start beyond 1.8e302 % has no limit)
            return DIVERGENCE_GROWTH * np.maximum(first_error, DIVERGENCE_FLOOR)
    return DIVERGENCE_GROWTH * max(float(first_error), DIVERGENCE_FLOOR)


def grew(epoch, first, error, trial=None):
    """The DivergenceError of a run whose training error grew from ``first`` to
    ``error`` by ``epoch`` (see DIVERGENCE_GROWTH)."""
    who = "" if trial is None else f" of trial {trial}"
    return DivergenceError(
        f"the training error{who} grew from {first:.4g} % in epoch 1 to {error:.4g} % in "
        f"epoch {epoch}, more than {DIVERGENCE_GROWTH:g} times max(E_tr(1), "
        f"{DIVERGENCE_FLOOR:g} %): training diverged.",
        epoch, trial)


def check_growth_rows(rows, done, limits, first_epoch, firsts, trials, single=False):
    """Raise `grew` for the first trial (in row order) whose training error grew
    too much: row k of ``rows`` holds trial ``trials[k]``'s errors from epoch
    ``first_epoch`` (or ``first_epoch[k]``) on, its first ``done[k]``
    meaningful; ``limits`` and ``firsts`` by trial. ``single``: name no trial."""
    over = (rows > limits[trials, None]) & (np.arange(rows.shape[1]) < done[:, None])
    if over.any():
        k, j = divmod(int(np.argmax(over)), rows.shape[1])
        i = int(trials[k])
        e0 = int(first_epoch[k]) if np.ndim(first_epoch) else first_epoch
        raise grew(e0 + j, float(firsts[i]), float(rows[k, j]), None if single else i)


# (the reductions without ndarray.max's Python wrapper: the loop runs them per strip)
_FMAX, _MIN, _ANY = np.fmax.reduce, np.minimum.reduce, np.logical_or.reduce


class GrowthWatch:
    """Divergence of K trials by growth of their training errors (see
    DIVERGENCE_GROWTH), and by a non-finite error a kernel reported.

    Each trial's limit comes from its first epoch's error (``first``, taken at
    the first call); ``lowest`` is the smallest limit, so that one comparison
    per call clears every trial whose errors stayed below it.

    Parameters
    ----------
    K : int
        The trials.
    single : bool
        A single run (`train_rprop`): its messages name no trial.
    """

    def __init__(self, K, single):
        self.K, self.single = K, single
        self.first = self.lowest = None
        self._limits = None

    @property
    def limits(self):
        """Each trial's training error beyond which it diverged (built when needed)."""
        if self._limits is None:
            self._limits = growth_limit(self.first)
        return self._limits

    def who(self, trial):
        """The trial a message names (None for a single run)."""
        return None if self.single else int(trial)

    def raise_diverged(self, idx, status, epoch):
        """Raise `diverged` for the first of ``idx`` whose kernel status says its
        training error was not finite in a call that started at ``epoch``."""
        k = _status.first_diverged(status)
        if k is not None:
            raise diverged(epoch + int(status[k]), trial=self.who(idx[k]))

    def _start(self, history, idx):
        """The first errors of the trials ``idx`` after their first call: all K
        together, or some after others (trials trained one after another: the
        smallest limit so far stays the first filter)."""
        K = self.K
        if idx.size == K:
            self.first = history[:K, 0].copy()
            self.lowest = growth_limit(float(self.first[0]) if K == 1 else float(_MIN(self.first)))
            return
        if self.first is None:
            self.first = np.full(K, np.nan)
        self.first[idx] = history[idx, 0]
        lowest = growth_limit(float(_MIN(self.first[idx])))
        self.lowest = lowest if self.lowest is None else min(self.lowest, lowest)
        self._limits = None

    def check(self, history, idx, status, epoch, n, top=None):
        """After a call of ``n`` epochs from ``epoch``: raise `grew` for the first
        of ``idx`` whose errors in ``history`` grew beyond its limit (``top``: the
        largest error the call wrote, if a kernel kept it)."""
        K = self.K
        if epoch == 0:
            self._start(history, idx)
        # (else one pass, fmax: the epochs of trials that have stopped hold whatever
        # was there. One trial: Python's max of a strip's few floats, a third of
        # fmax's call; the call's first epoch always trained, so a NaN left after
        # a stop cannot lead)
        if top is None:
            top = (max(history[0, epoch:epoch + n].tolist()) if K == 1
                   else _FMAX(history[:K, epoch:epoch + n], axis=None))
        if top > self.lowest:
            done = _status.epochs_trained(status, n)
            check_growth_rows(history[idx, epoch:epoch + n], done, self.limits, epoch + 1,
                              self.first, idx, self.single)

    def check_final(self, errors, top, relevant):
        """The final training errors (K,) of the returned weights (``top``: their
        largest as a float, or None): the last update may have run away."""
        if (top if top is not None else _FMAX(errors)) > self.lowest and _ANY(
                errors > self.limits):
            check_growth_rows(errors[:, None], np.ones(self.K, np.intp), self.limits,
                              relevant + 1, self.first, np.arange(self.K), self.single)
