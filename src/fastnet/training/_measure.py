"""Measurement at strip ends: the validation and test errors of K trials, and
each trial's best weights so far (Prechelt 1994's relevant epoch)."""
import math

import numpy as np

from fastnet.training._divergence import check_finite, diverged
from fastnet.training._lanes import aligned as aligned_array

__all__ = ["new_history", "grown", "StripMeasures"]


def new_history(shape, aligned, zero=False):
    """A history of ``shape`` (zeroed or not); at a 64-byte boundary if ``aligned``."""
    if aligned:
        return aligned_array(shape, zero=zero)
    return np.zeros(shape) if zero else np.empty(shape)


def grown(history, needed, limit, aligned=False, fill=0.0):
    """``history`` with room for ``needed`` columns (doubled, at most ``limit``), the
    new ones holding ``fill``."""
    if needed <= history.shape[1]:
        return history
    wider = new_history((history.shape[0], min(limit, max(needed, 2 * history.shape[1]))),
                        aligned, zero=True)
    if fill != 0.0:
        wider.fill(fill)
    wider[:, :history.shape[1]] = history
    return wider


class StripMeasures:
    """The validation and test errors of K trials at every strip end, and each
    trial's weights at its lowest validation error.

    Parameters
    ----------
    K, C : int
        Trials and connections.
    sets : Sets
        The checked data sets (at least one of the validation and test sets given).
    run : RunOptions
    single : bool
        A single run (`train_rprop`): its messages name no trial.

    Attributes
    ----------
    val, test : ndarray of shape (K, strips) or None
        The errors (squared error percentages) at strip ends; columns grow as
        strips are measured. NaN until measured: a trial's first
        ``epochs // strip`` columns are all measured (a rule that stops its
        trial at a strip end has it measured too), and a column read before
        it is written shows as NaN, never as a stale number.
    strip_epochs : ndarray
        The epoch of each column.
    best_val, best_epoch : list
        Each trial's lowest validation error and its epoch (None: not yet).
    best_rows : ndarray of shape (K, C) or None
        The weights at ``best_epoch`` (with a validation set).
    """

    def __init__(self, K, C, sets, run, single):
        self.run, self.single = run, single
        n_out = sets.Y.shape[1]
        cap = min(max(1, run.max_epochs // run.strip), 64)
        self.val = self.test = self.best_rows = None
        self.val_scale = self.test_scale = 0.0
        if sets.X_val is not None:
            self.val = np.full((K, cap), np.nan)
            self.val_scale = run.scale(sets.n_val, n_out)
            self.best_rows = np.empty((K, C), sets.X.dtype)      # (the network's dtype)
        if sets.X_test is not None:
            self.test = np.full((K, cap), np.nan)
            self.test_scale = run.scale(sets.n_test, n_out)
        self.strip_epochs = run.strip * np.arange(1, cap + 1)
        self.best_val, self.best_epoch = [np.inf] * K, [None] * K

    def measure(self, backend, idx, epoch):
        """Validation and test errors of the trials ``idx`` at the strip end ``epoch``."""
        j = epoch // self.run.strip - 1            # (every trial still training has all before)
        if j >= self.strip_epochs.size:
            limit = max(1, self.run.max_epochs // self.run.strip)
            self.val, self.test = (None if h is None else grown(h, j + 1, limit, fill=np.nan)
                                   for h in (self.val, self.test))
            self.strip_epochs = self.run.strip * np.arange(1, (self.val if self.val is not None
                                                               else self.test).shape[1] + 1)
        if idx.size == 1:
            self._measure_one(backend, int(idx[0]), j, epoch)
            return
        if self.val is not None:
            e_va = backend.sse("val", idx) * self.val_scale
            if not np.isfinite(e_va).all():
                check_finite(e_va, epoch, "the validation error", None if self.single else idx)
            self.val[idx, j] = e_va
            best = self.best_val
            better = [(i, e) for i, e in zip(idx.tolist(), e_va.tolist()) if e < best[i]]
            if better:
                won = [i for i, _ in better]
                self.best_rows[won] = backend.weights(np.array(won, dtype=np.intp))
                for i, e in better:
                    best[i], self.best_epoch[i] = e, epoch
        if self.test is not None:
            e_te = backend.sse("test", idx) * self.test_scale
            if not np.isfinite(e_te).all():
                check_finite(e_te, epoch, "the test error", None if self.single else idx)
            self.test[idx, j] = e_te

    def _measure_one(self, backend, i, j, epoch):
        """`measure` of one trial ``i``, in floats."""
        if self.val is not None:
            e = backend.sse_one("val", i) * self.val_scale
            if not math.isfinite(e):
                raise diverged(epoch, "the validation error", None if self.single else i)
            self.val[i, j] = e
            if e < self.best_val[i]:
                self.best_rows[i] = backend.row(i)
                self.best_val[i], self.best_epoch[i] = e, epoch
        if self.test is not None:
            e = backend.sse_one("test", i) * self.test_scale
            if not math.isfinite(e):
                raise diverged(epoch, "the test error", None if self.single else i)
            self.test[i, j] = e

    def curves(self, i, epoch):
        """Trial ``i``'s (val errors, their epochs, test errors) up to ``epoch``
        (None where a set is not given), for its `TrainingState`."""
        n = epoch // self.run.strip
        val, test = self.val, self.test
        return (val[i, :n] if val is not None else None,
                self.strip_epochs[:n] if val is not None else None,
                test[i, :n] if test is not None else None)

    def relevant(self, rows, epochs):
        """``rows`` (K, C, changed in place) and the epochs (a copy) of each
        trial's relevant weights: at its lowest validation error where it was
        measured, else where it stopped."""
        relevant = epochs.copy()
        has = [i for i, b in enumerate(self.best_epoch) if b is not None]
        rows[has] = self.best_rows[has]
        relevant[has] = [self.best_epoch[i] for i in has]
        return relevant
