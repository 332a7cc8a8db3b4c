"""What training returns: `TrainResult` for one run, `TrainResults` for many trials.

`TrainResults` is columnar first (arrays over trials, as ``scipy.stats`` result
objects hold arrays); each trial's `TrainResult` is built on request through
its ordinary constructor.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from fastnet.network import MLP
from fastnet.stopping import generalization_loss

# (ndarray.min without its Python wrapper: per result built)
_MIN = np.minimum.reduce

__all__ = ["Traversals", "SetErrors", "TrainResult", "SetColumns", "Columns", "TrainResults",
           "trial_result"]


@dataclass(frozen=True)
class Traversals:
    """Connection traversals of a training run, counted as in Proben1 (Prechelt 1994).

    With C connections (biases included) and N training patterns, an epoch costs
    N·C forward and N·C backward traversals and C weight-update traversals (N·C
    for online training, which updates after every pattern). Evaluating M
    patterns costs M·C forward traversals, counted in ``evaluation``. All counts
    are exact integers from the topology.

    Rules whose cost varies from epoch to epoch count what they ran: every
    forward pass over the training set (N·C; SCG's and L-BFGS's error
    evaluations included), every backward pass (N·C for a gradient, n_out·N·C
    for Levenberg-Marquardt's Jacobian) and C for every weight vector they form
    and evaluate (a trial step, SCG's second-order probe). Levenberg-Marquardt's
    normal equations are not traversals: their floating-point operations are in
    ``flops`` (see :class:`fastnet.algorithms.LevenbergMarquardt`).

    Attributes
    ----------
    forward, backward, update, evaluation : int
    flops : int
        Floating-point operations outside the traversals (0 for every rule but
        Levenberg-Marquardt); not part of ``training`` or ``total``.
    """

    forward: int
    backward: int
    update: int
    evaluation: int
    flops: int = 0

    @property
    def training(self):
        """forward + backward + update."""
        return self.forward + self.backward + self.update

    @property
    def total(self):
        """All traversals, evaluation included."""
        return self.training + self.evaluation

    def to_dict(self):
        return {"forward": self.forward, "backward": self.backward, "update": self.update,
                "evaluation": self.evaluation, "total": self.total, "flops": self.flops}


@dataclass(frozen=True)
class SetErrors:
    """Errors of one network on one data set.

    Attributes
    ----------
    squared_error_percentage : float
        Proben1's E (Prechelt 1994).
    classification_error : float or None
        Percent wrong by winner-takes-all, or None for approximation tasks.
    n_patterns : int
    nmse : float or None
        Normalised mean squared error (Lawrence et al. 1997), the summed
        squared error over all outputs and patterns divided by that of the
        mean target (the one mean over all outputs and patterns):
        :func:`fastnet.measures.nmse` of the network's outputs. None where the
        targets are constant (no variance to divide by).
    """

    squared_error_percentage: float
    classification_error: float | None = None
    n_patterns: int = 0
    nmse: float | None = None


@dataclass(frozen=True)
class TrainResult:
    """Outcome of one training run (fields as in Proben1's tables).

    Attributes
    ----------
    net : MLP
        The trained network (the object passed in, trained in place). With a
        validation set it holds the weights of the relevant epoch.
    epochs : int
        Total epochs trained.
    stop_reason : str
        The criterion that fired (e.g. ``"GL5"``, ``"P<0.1"``), ``"max_epochs"``,
        ``"callback"``, or the reason a rule stopped itself: ``"converged"`` (SCG,
        L-BFGS), ``"abnormal"`` (SCG, L-BFGS) or ``"mu_max"``
        (Levenberg-Marquardt).
    train_error : ndarray of shape (epochs,)
        E_tr(t): squared error percentage of the training set in epoch t,
        measured in that epoch's forward pass, i.e. *before* its update.
    val_error, val_epochs : ndarray or None
        E_va at the strip ends ``val_epochs`` (after those epochs' updates), the
        one a rule stopped itself at included; None without a validation set.
    test_error : ndarray or None
        E_te at the strip ends, for plots only (never used by a criterion); None
        without a test set.
    relevant_epoch : int
        Epoch of the lowest validation error (Proben1's word); the last epoch when
        there is no validation set.
    min_train_error : float
        Minimum E_tr over all epochs.
    min_val_error : float or None
        Minimum E_va; None without a validation set.
    gl_end : float or None
        GL at the last strip end; None without a validation set.
    final_train : SetErrors
        Errors of the returned network (the relevant epoch's weights) on the
        training set, computed after the clock stopped and not counted in
        ``traversals``.
    final_val, final_test : SetErrors or None
        The same on the validation and test sets; None without them.
    traversals : Traversals
    cpu_time : float
        Process CPU seconds of the training loop (validation included).
    wall_time : float
        Wall-clock seconds of the same loop.
    setup : dict
        The complete set-up (algorithm, parameters, stopping rule, network, data
        sizes, version, machine) for result files.
    """

    net: MLP
    epochs: int
    stop_reason: str
    train_error: np.ndarray
    val_error: np.ndarray | None
    val_epochs: np.ndarray | None
    test_error: np.ndarray | None
    relevant_epoch: int
    min_train_error: float
    min_val_error: float | None
    gl_end: float | None
    final_train: SetErrors
    final_val: SetErrors | None
    final_test: SetErrors | None
    traversals: Traversals
    cpu_time: float
    wall_time: float
    setup: dict = field(repr=False)

    def __repr__(self):
        # The histories are arrays of thousands of values: the repr names their
        # lengths and gives the numbers one reads first.
        def errors(s):
            if s is None:
                return "None"
            c = "" if s.classification_error is None else f" ({s.classification_error:.4g} % wrong)"
            return f"{s.squared_error_percentage:.4g}{c}"

        # E_tr, E_va, E_te: Proben1's squared error percentages of the final network.
        return (f"TrainResult(epochs={self.epochs}, stop_reason={self.stop_reason!r}, "
                f"relevant_epoch={self.relevant_epoch}, E_tr={errors(self.final_train)}, "
                f"E_va={errors(self.final_val)}, E_te={errors(self.final_test)}, "
                f"cpu_time={self.cpu_time:.3g} s, traversals={self.traversals.total}, "
                f"history: {self.train_error.size} training errors"
                + ("" if self.val_error is None else f", {self.val_error.size} validation errors")
                + f"; net={self.net!r})")

    def traversals_per_cpu_second(self):
        """Total traversals divided by CPU seconds (inf if the time is 0)."""
        return self.traversals.total / self.cpu_time if self.cpu_time > 0 else float("inf")

    def describe_setup(self):
        """The set-up in Proben1 words (the checklist of Prechelt 1994), one item per line."""
        s = self.setup
        net = s["network"]
        lines = [
            f"network: {net['repr']}",
            f"  nodes: {net['layer_sizes']}, connections: {net['n_connections']} (biases included), "
            f"hidden activation {net['hidden_activation']}, output activation {net['output_activation']}",
            f"initialisation: {s['initialisation']}",
            f"algorithm: {s['algorithm']} " + ", ".join(f"{k}={v}" for k, v in s["parameters"].items()),
            f"stopping: {s['stopping']}, strip length {s['strip']}, max_epochs {s['max_epochs']}; "
            "the reported network is the one with the lowest validation error"
            if s["n_val"] else f"stopping: {s['stopping']}, max_epochs {s['max_epochs']}",
            f"error function: summed squared error (no 1/2); reported as squared error percentage "
            f"with o_min={s['target_range'][0]}, o_max={s['target_range'][1]}",
            f"arithmetic: {s.get('dtype', 'float64')}"
            + (" (error sums accumulated in float64)" if s.get("dtype", "float64") != "float64" else ""),
            f"data: {s['n_train']} training, {s['n_val']} validation, {s['n_test']} test patterns",
            f"seed: {s['seed']}",
            f"software: fastnet {s['version']}; machine: {s['machine']}",
            "build: " + " ".join(map(str, s["build"].get("extra_compile_args", []))) + "; "
            f"cache block {s['block_size']} patterns",
        ]
        return "\n".join(lines)


@dataclass(frozen=True)
class SetColumns:
    """One data set's errors at the relevant epoch, for every trial of a batch.

    Attributes
    ----------
    squared_error_percentage : ndarray of shape (K,)
    classification_error : ndarray of shape (K,) or None
        None for approximation tasks.
    n_patterns : int
    nmse : ndarray of shape (K,) or None
        Each trial's NMSE (see :class:`SetErrors`); None where the targets are
        constant.
    """

    squared_error_percentage: np.ndarray
    classification_error: np.ndarray | None
    n_patterns: int
    nmse: np.ndarray | None = None

    def trial(self, i):
        """Trial ``i``'s errors as a :class:`SetErrors`."""
        cls, nmse = self.classification_error, self.nmse
        return SetErrors(float(self.squared_error_percentage[i]),
                         None if cls is None else float(cls[i]), self.n_patterns,
                         None if nmse is None else float(nmse[i]))


@dataclass
class Columns:
    """What the training loop hands to `TrainResults`: arrays over K trials.

    ``train_error`` row i holds trial i's E_tr by epoch (its first ``epochs[i]``
    entries count); ``val_error``/``test_error`` row i its strip-end errors (the
    first ``n_strips[i]`` count), measured at the epochs ``strip_epochs``.
    ``counts`` row i: trial i's (forward, backward, update, flops) for rules whose
    cost varies by epoch (None: N·C, N·C and ``updates_per_epoch`` per epoch).
    ``min_train``: each trial's lowest E_tr where ``train_error`` has no columns
    (no history kept), else None.
    """

    epochs: np.ndarray
    relevant_epoch: np.ndarray
    stop_reason: tuple
    train_error: np.ndarray
    val_error: np.ndarray | None
    test_error: np.ndarray | None
    strip_epochs: np.ndarray | None
    n_strips: np.ndarray | None
    weights: np.ndarray
    finals: tuple
    evaluation: np.ndarray
    n_train: int
    updates_per_epoch: int
    cpu_time: np.ndarray
    wall_time: np.ndarray
    counts: np.ndarray | None = None
    min_train: np.ndarray | None = None


class TrainResults(Sequence):
    """The results of `fastnet.train_rprop_many`: columns over trials, and a
    `TrainResult` per trial on request.

    A read-only sequence (``len``, indexing, slicing, iteration) of
    :class:`~fastnet.TrainResult`, whose attributes are the batch's columns.
    Everything is computed when `train_rprop_many` returns; ``results[i]``
    builds trial i's `TrainResult` (through its constructor) the first time it
    is asked for and keeps it, so that ``results[i] is results[i]``. Timing
    studies read the columns and never build the objects.

    Attributes
    ----------
    epochs : ndarray of int, shape (K,)
        Epochs trained by each trial (`TrainResult.epochs`).
    relevant_epoch : ndarray of int, shape (K,)
        Each trial's relevant epoch (`TrainResult.relevant_epoch`).
    stop_reason : tuple of str
        Each trial's stop reason (`TrainResult.stop_reason`).
    weights : ndarray of shape (K, n_connections)
        Each trial's weights at its relevant epoch (those of the returned network).
    train_error : ndarray of shape (K, max(epochs))
        Row i: trial i's E_tr by epoch; entries beyond ``epochs[i]`` are NaN.
    val_error, test_error : ndarray of shape (K, n_strips) or None
        Row i: trial i's E_va (E_te) at the strip ends ``val_epochs``; NaN after
        the trial stopped; None without that data set.
    val_epochs : ndarray of int, shape (n_strips,), or None
        The epochs of the strip ends.
    min_train_error : ndarray of shape (K,)
        Minimum E_tr of each trial.
    final_train, final_val, final_test : SetColumns or None
        The errors of each trial's returned weights (its relevant epoch) on the
        training, validation and test sets; what a study reports
        (``final_test.nmse``: each trial's NMSE on the test set).
    cpu_time, wall_time : ndarray of float, shape (K,)
        Each trial's share of the batch's CPU and wall seconds, by the epochs it
        trained (``results[i].setup["batch"]`` holds the totals).

    Notes
    -----
    Pickling a `TrainResults` pickles the list of its `TrainResult` objects.

    Examples
    --------
    >>> from fastnet import MLP, train_rprop_many
    >>> from fastnet.datasets import make_xor
    >>> X, Y = make_xor().train
    >>> results = train_rprop_many(MLP(2, [2], 1), X, Y, n_trials=100, seed=0,
    ...                            max_epochs=50)
    >>> len(results), results[0].epochs, results.weights.shape
    (100, 50, (100, 11))
    """

    __slots__ = ("_built", "_nets", "_net", "_seeds", "_setup", "_columns", "_min_train",
                 "epochs", "relevant_epoch", "stop_reason", "weights", "train_error", "val_error",
                 "test_error", "val_epochs", "final_train", "final_val", "final_test", "cpu_time",
                 "wall_time")

    def __init__(self, results: Sequence[TrainResult]):
        """A batch of results already built.

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
        self._fill(_columns_of(built), [r.net for r in built], None, None, None)
        self._built = built

    @classmethod
    def _of(cls, columns, nets, net, seeds, setup):
        """A batch from the training loop's `Columns`: trial i's network is
        ``nets[i]`` (list form) or a copy of ``net`` holding its weights."""
        self = cls.__new__(cls)
        self._fill(columns, nets, net, seeds, setup)
        self._built = [None] * columns.epochs.size
        return self

    def _fill(self, c, nets, net, seeds, setup):
        self._columns, self._nets, self._net, self._seeds, self._setup = c, nets, net, seeds, setup
        K = c.epochs.size
        E = int(np.maximum.reduce(c.epochs)) if K else 0
        self.epochs, self.relevant_epoch, self.stop_reason = c.epochs, c.relevant_epoch, c.stop_reason
        self.weights, self.cpu_time, self.wall_time = c.weights, c.cpu_time, c.wall_time
        train = c.train_error[:K, :E]
        if K and int(np.minimum.reduce(c.epochs)) < E and train.shape[1]:
            train = np.where(np.arange(E) < c.epochs[:, None], train, np.nan)
        self.train_error = train
        self._min_train = c.min_train
        self.val_error, self.test_error = (None if h is None else _padded(h, c.n_strips)
                                           for h in (c.val_error, c.test_error))
        self.val_epochs = (None if c.val_error is None
                           else c.strip_epochs[:self.val_error.shape[1]])
        self.final_train, self.final_val, self.final_test = c.finals
        for a in (self.epochs, self.relevant_epoch, self.cpu_time, self.wall_time, self.weights):
            a.flags.writeable = False

    @property
    def min_train_error(self):
        """Minimum E_tr of each trial, shape (K,) (computed on first use)."""
        if self._min_train is None:
            t = self.train_error
            self._min_train = (np.nanmin(t, axis=1) if t.shape[1] else np.full(t.shape[0], np.nan))
        return self._min_train

    def trial(self, i: int) -> TrainResult:
        """Trial ``i``'s :class:`TrainResult`, built through its constructor."""
        if self._nets is not None:
            net = self._nets[i]
        else:
            net = self._net.copy().set_weights(self.weights[i])
        setup = self._setup
        if self._seeds is not None and self._seeds[i] is not None:
            s = self._seeds[i]
            setup = dict(setup, seed=s if isinstance(s, int) else repr(s))
        return trial_result(self._columns, i, net, setup)

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
            r = built[i] = self.trial(i)
        return r

    def __iter__(self) -> Iterator[TrainResult]:
        return iter([self[i] for i in range(len(self._built))])

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


def _padded(history, counts):
    """Rows of ``history`` with the entries beyond ``counts[i]`` set to NaN."""
    S = int(counts.max()) if counts.size else 0
    h = history[:counts.size, :S]
    if counts.size and int(counts.min()) < S:
        h = np.where(np.arange(S) < counts[:, None], h, np.nan)
    return h


def _stacked(rows, width):
    """Equal-length rows of possibly unequal arrays (NaN-padded), (len(rows), width)."""
    out = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        out[i, :r.size] = r
    return out


def _columns_of(built):
    """The `Columns` of results built one by one."""
    K = len(built)
    epochs = np.array([r.epochs for r in built], dtype=np.intp)
    E = int(epochs.max()) if K else 0
    has_val = bool(K) and built[0].val_error is not None
    has_test = bool(K) and built[0].test_error is not None
    first = "val_error" if has_val else "test_error"
    n_strips = (np.array([getattr(r, first).size for r in built], dtype=np.intp)
                if has_val or has_test else None)
    S = int(n_strips.max()) if n_strips is not None and K else 0
    strip = built[0].setup["strip"] if K else 1

    def finals(name):
        sets = [getattr(r, name) for r in built]
        if not K or sets[0] is None:
            return None
        cls = [s.classification_error for s in sets]
        nmse = [s.nmse for s in sets]
        return SetColumns(np.array([s.squared_error_percentage for s in sets]),
                          None if cls[0] is None else np.array(cls, dtype=float),
                          sets[0].n_patterns,
                          None if any(v is None for v in nmse) else np.array(nmse, dtype=float))

    return Columns(
        epochs=epochs, relevant_epoch=np.array([r.relevant_epoch for r in built], dtype=np.intp),
        stop_reason=tuple(r.stop_reason for r in built),
        train_error=_stacked([r.train_error for r in built], E),
        val_error=_stacked([r.val_error for r in built], S) if has_val else None,
        test_error=_stacked([r.test_error for r in built], S) if has_test else None,
        strip_epochs=strip * np.arange(1, S + 1) if n_strips is not None else None,
        n_strips=n_strips,
        weights=np.array([r.net.weights for r in built]).reshape(K, -1),
        finals=(finals("final_train"), finals("final_val"), finals("final_test")),
        evaluation=np.array([r.traversals.evaluation for r in built], dtype=np.int64),
        n_train=built[0].setup["n_train"] if K else 0,
        updates_per_epoch=(built[0].traversals.update // max(built[0].epochs, 1)) if K else 0,
        cpu_time=np.array([r.cpu_time for r in built], dtype=float),
        wall_time=np.array([r.wall_time for r in built], dtype=float),
        counts=np.array([[r.traversals.forward, r.traversals.backward, r.traversals.update,
                          r.traversals.flops] for r in built], dtype=np.int64).reshape(K, 4))


def trial_result(c, i, net, setup):
    """Trial ``i`` of the `Columns` ``c`` as a :class:`TrainResult` on ``net``."""
    e = int(c.epochs[i])
    val = vep = min_val = gl = None
    n = None if c.n_strips is None else int(c.n_strips[i])
    if c.val_error is not None:
        val, vep = c.val_error[i, :n].copy(), c.strip_epochs[:n].copy()
        if n:
            min_val = float(_MIN(val))
            gl = generalization_loss(float(val[-1]), min_val)
    N, C = c.n_train, c.weights.shape[1]
    train = c.train_error[i, :e]
    if c.counts is None:
        forward = backward = e * N * C
        update, flops = e * c.updates_per_epoch, 0
    else:
        forward, backward, update, flops = (int(x) for x in c.counts[i])
    final_train, final_val, final_test = c.finals
    return TrainResult(
        net=net, epochs=e, stop_reason=c.stop_reason[i], train_error=train, val_error=val,
        val_epochs=vep, test_error=None if c.test_error is None else c.test_error[i, :n].copy(),
        relevant_epoch=int(c.relevant_epoch[i]),
        min_train_error=float(_MIN(train)) if c.min_train is None else float(c.min_train[i]),
        min_val_error=min_val, gl_end=gl, final_train=final_train.trial(i),
        final_val=None if final_val is None else final_val.trial(i),
        final_test=None if final_test is None else final_test.trial(i),
        traversals=Traversals(forward=forward, backward=backward, update=update,
                              evaluation=int(c.evaluation[i]), flops=flops),
        cpu_time=float(c.cpu_time[i]), wall_time=float(c.wall_time[i]), setup=setup)
