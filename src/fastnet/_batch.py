"""The results of a batch of trials (``train_rprop_many``): `TrainResults`.

A timing study of a thousand tiny networks trains in about a millisecond per
hundred trials; building a thousand `TrainResult` objects (and three thousand
`SetErrors`) would cost more than the training. So the batch keeps what differs
between its trials in arrays and builds each trial's `TrainResult` when it is
first asked for: the numbers are all computed (and the clock stopped) before
`train_rprop_many` returns; only their wrapping into Python objects waits.
"""
from __future__ import annotations

import gc

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from fastnet._training import SetErrors, TrainResult, Traversals
from fastnet.stopping import generalization_loss

__all__ = ["TrainResults"]

_NEW = object.__new__
_SET = object.__setattr__


def _filled(cls, fields):
    """``cls(**fields)`` for a frozen dataclass, without its __init__: the frozen
    __init__ sets each field through object.__setattr__ (2 us for a TrainResult);
    the filled __dict__ is the same object."""
    obj = _NEW(cls)
    _SET(obj, "__dict__", fields)
    return obj


def time_shares(epochs):
    """Each trial's share of the batch's time: its part of the epochs trained."""
    epochs = np.asarray(epochs, dtype=float)
    total = epochs.sum()
    return epochs / total if total > 0 else np.full(epochs.size, 1.0 / epochs.size)


def batch_record(method, n_trials, cpu, wall):
    """The ``setup["batch"]`` entry: how the batch trained and how its time was shared."""
    return {"method": method, "n_trials": n_trials, "cpu_time": cpu, "wall_time": wall,
            "apportioned": "the batch's CPU and wall time, shared by epochs trained"}


class SetColumns:
    """One data set's final errors for every trial of a batch (`SetErrors` by trial).

    Parameters
    ----------
    squared_error_percentage : ndarray of shape (K,)
    classification_error : ndarray of shape (K,) or None
    n_patterns : int
    """

    __slots__ = ("squared_error_percentage", "classification_error", "n_patterns")

    def __init__(self, squared_error_percentage, classification_error, n_patterns):
        self.squared_error_percentage = squared_error_percentage
        self.classification_error = classification_error
        self.n_patterns = n_patterns


class TrainResults(Sequence):
    """The results of `fastnet.train_rprop_many`: one `TrainResult` per network, in order.

    A read-only sequence (``len``, indexing, slicing, iteration) of
    :class:`~fastnet.TrainResult`. Everything is computed when
    `train_rprop_many` returns; each trial's `TrainResult` object is built from
    the batch's arrays the first time it is asked for and then kept, so that
    ``results[i] is results[i]``. A study of a thousand tiny networks trains in
    a few milliseconds, and building all the objects up front would cost as
    much again. ``list(results)`` builds them all.

    The arrays of what differs between trials are attributes, for timing
    studies that want columns rather than objects.

    Attributes
    ----------
    epochs : ndarray of int, shape (K,)
        Epochs trained by each trial (`TrainResult.epochs`).
    relevant_epoch : ndarray of int, shape (K,)
        Each trial's relevant epoch (`TrainResult.relevant_epoch`).
    stop_reason : tuple of str
        Each trial's stop reason (`TrainResult.stop_reason`).
    cpu_time, wall_time : ndarray of float, shape (K,)
        Each trial's share of the batch's CPU and wall seconds.

    Notes
    -----
    Pickling a `TrainResults` pickles the list of its `TrainResult` objects.

    Examples
    --------
    >>> from fastnet import MLP, train_rprop_many
    >>> from fastnet.datasets import make_xor
    >>> X, Y = make_xor().train
    >>> nets = [MLP(2, [2], 1, seed=s) for s in range(100)]
    >>> results = train_rprop_many(nets, X, Y, max_epochs=50)
    >>> len(results), results[0].epochs, results.epochs.max()
    (100, 50, 50)
    """

    __slots__ = ("_built", "_columns", "_lists_", "epochs", "relevant_epoch", "stop_reason", "cpu_time",
                 "wall_time")

    def __init__(self, results: Sequence[TrainResult]):
        """A batch of results already built (as the serial method trains them).

        Raises
        ------
        TypeError
            If ``results`` is not a sequence of `TrainResult`.
        """
        if isinstance(results, (str, bytes)) or not hasattr(results, "__iter__"):
            raise TypeError(f"`results` must be a sequence of fastnet.TrainResult, got "
                            f"{type(results).__name__}.")
        built = list(results)
        for i, r in enumerate(built):
            if not isinstance(r, TrainResult):
                raise TypeError(f"`results[{i}]` must be a fastnet.TrainResult, got "
                                f"{type(r).__name__}.")
        self._built = built
        self._columns = self._lists_ = None
        self.epochs = np.array([r.epochs for r in built], dtype=np.intp)
        self.relevant_epoch = np.array([r.relevant_epoch for r in built], dtype=np.intp)
        self.stop_reason = tuple(r.stop_reason for r in built)
        self.cpu_time = np.array([r.cpu_time for r in built], dtype=float)
        self.wall_time = np.array([r.wall_time for r in built], dtype=float)

    @classmethod
    def _from_columns(cls, nets, seeds, setup, epochs, reasons, train_err, val_err, val_epochs,
                      test_err, relevant, finals, evaluation, n_train, n_connections, cpu,
                      wall):
        """A batch from its arrays (the lanes method): row i of ``train_err``
        holds trial i's training errors by epoch (the first ``epochs[i]`` count);
        ``val_err``, ``val_epochs``, ``test_err`` are lists of per-trial lists
        or None; ``finals`` three `SetColumns` (training, validation, test) or
        None; ``evaluation`` the traversals counted for evaluation."""
        self = cls.__new__(cls)
        K = len(nets)
        self._built = [None] * K
        self._lists_ = None
        self._columns = (nets, seeds, setup, train_err, val_err, val_epochs, test_err, finals,
                         evaluation, n_train, n_connections)
        self.epochs = np.asarray(epochs, dtype=np.intp)
        self.relevant_epoch = np.asarray(relevant, dtype=np.intp)
        self.stop_reason = tuple(reasons)
        self.cpu_time = np.asarray(cpu, dtype=float)
        self.wall_time = np.asarray(wall, dtype=float)
        for a in (self.epochs, self.relevant_epoch, self.cpu_time, self.wall_time):
            a.flags.writeable = False
        return self

    def _lists(self):
        """The per-trial values as Python lists, made once at the first build
        (one vectorised pass each instead of a NumPy call per trial and field)."""
        (nets, seeds, setup, train_err, val_err, val_epochs, test_err, finals, evaluation,
         N, C) = self._columns
        K, epochs = len(nets), self.epochs
        E = int(epochs.max()) if K else 0
        trained = np.arange(E) < epochs[:, None]
        mins = np.where(trained, train_err[:K, :E], np.inf).min(axis=1) if E else np.full(K, np.inf)

        def set_lists(f):
            if f is None:
                return None
            cls = f.classification_error
            return (f.squared_error_percentage.tolist(),
                    [None] * K if cls is None else cls.tolist(), f.n_patterns)

        traversals = {}
        for e, ev in set(zip(epochs.tolist(), evaluation.tolist())):
            traversals[e, ev] = _filled(Traversals, {
                "forward": e * N * C, "backward": e * N * C, "update": e * C,
                "evaluation": ev})
        return (epochs.tolist(), self.relevant_epoch.tolist(), mins.tolist(),
                [set_lists(f) for f in finals], evaluation.tolist(), traversals,
                self.cpu_time.tolist(), self.wall_time.tolist())

    def _build(self, i):
        (nets, seeds, setup, train_err, val_err, val_epochs, test_err, finals, evaluation,
         N, C) = self._columns
        if self._lists_ is None:
            self._lists_ = self._lists()
        epochs, relevant, mins, final_lists, evaluation, traversals, cpu, wall = self._lists_
        e = epochs[i]
        if seeds[i] is not None:
            s = seeds[i]
            setup = dict(setup, seed=s if isinstance(s, int) else repr(s))
        if val_err is not None:
            val = np.array(val_err[i], dtype=float)
            vep = np.array(val_epochs[i], dtype=np.intp)
            min_val = float(val.min()) if val.size else None
            gl = generalization_loss(val[-1], val.min()) if val.size else None
        else:
            val = vep = min_val = gl = None
        final = [None if f is None else _filled(SetErrors, {
            "squared_error_percentage": f[0][i], "classification_error": f[1][i],
            "n_patterns": f[2]}) for f in final_lists]
        return _filled(TrainResult, {
            "net": nets[i], "epochs": e, "stop_reason": self.stop_reason[i],
            "train_error": train_err[i, :e], "val_error": val, "val_epochs": vep,
            "test_error": None if test_err is None else np.array(test_err[i], dtype=float),
            "relevant_epoch": relevant[i], "min_train_error": mins[i],
            "min_val_error": min_val, "gl_end": gl, "final_train": final[0],
            "final_val": final[1], "final_test": final[2],
            "traversals": traversals[e, evaluation[i]], "cpu_time": cpu[i],
            "wall_time": wall[i], "setup": setup})

    def __len__(self) -> int:
        return len(self._built)

    @overload
    def __getitem__(self, index: int) -> TrainResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[TrainResult]: ...

    def __getitem__(self, index):
        built = self._built
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(built)))]
        if isinstance(index, (bool, np.bool_)) or not hasattr(index, "__index__"):
            raise TypeError(f"`index` must be an integer or a slice, got "
                            f"{type(index).__name__}.")
        index = index.__index__()
        r = built[index]                 # (IndexError, negative indices as for lists)
        if r is None:
            i = index + len(built) if index < 0 else index
            r = built[i] = self._build(i)
        return r

    def __iter__(self) -> Iterator[TrainResult]:
        built = self._built
        if None in built:
            # All at once, with the cyclic garbage collector paused: the thousands
            # of new containers would trigger collections that find nothing (they
            # are all alive), at three times the cost of the building itself.
            was = gc.isenabled()
            gc.disable()
            try:
                for i, r in enumerate(built):
                    if r is None:
                        built[i] = self._build(i)
            finally:
                if was:
                    gc.enable()
        return iter(list(built))

    def __reduce__(self):
        return (TrainResults, (list(self),))

    def __repr__(self):
        K = len(self)
        if not K:
            return "TrainResults(0 trials)"
        reasons = {}
        for r in self.stop_reason:
            reasons[r] = reasons.get(r, 0) + 1
        stops = ", ".join(f"{n} {r}" for r, n in reasons.items())
        return (f"TrainResults({K} trials, epochs {int(self.epochs.min())}"
                f"..{int(self.epochs.max())}, stopped by: {stops}; "
                f"cpu_time {float(self.cpu_time.sum()):.3g} s)")
