"""``fastnet.Trainer``: one network's training, prepared once and continued call by call.

A control loop that trains a few epochs at a time, or scikit-learn's
``partial_fit``, pays on every call of :func:`fastnet.train` for what does not
change between calls: checking and laying out the data, the workspaces, the
run's plan and set-up record, the result's assembly. A `Trainer` does the
checks and allocations once and keeps the rule's state (RPROP's steps, the
previous change, Adam's moments); :meth:`Trainer.run` trains more epochs in the
same kernels as :func:`fastnet.train` and returns a small record of them.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from fastnet._blas import _NO_LIMIT, single_threaded_blas
from fastnet._engine import Evaluator, Workspace
from fastnet._netfile import within_max_weight
from fastnet._typing import ArrayLike, Seed
from fastnet._validation import as_generator, check_float, check_int
from fastnet.exceptions import DivergenceError
from fastnet.network import MAX_INIT_SCALE, MLP, draw_weights, weight_buffer
from fastnet.training._algorithms import Algorithm, Backprop, KernelRule, drives_itself, start_trial
from fastnet.training._checks import (Sets, check_algorithm_objective, check_run, check_sets,
                                      check_start, training_of)
from fastnet.training._divergence import GrowthWatch, beyond_max_weight, diverged, hinted
from fastnet.training._measure import grown, new_history
from fastnet.training._single import blas_held
from fastnet.training._specs import from_spec
from fastnet.training._status import epochs_written

__all__ = ["Trainer", "TrainerRun"]

_ONE = np.zeros(1, np.intp)          # (the one trial's index, as GrowthWatch takes it)


def _copied(sets):
    """``sets`` with arrays of their own (the caller's may change between runs)."""
    return Sets(*(None if a is None else np.array(a) for a in
                 (getattr(sets, f.name) for f in dataclasses.fields(sets))))


@dataclass(frozen=True)
class TrainerRun:
    """What one :meth:`Trainer.run` trained.

    Attributes
    ----------
    epochs : int
        Epochs trained by this call (fewer than asked only if the rule stopped
        itself: see ``stop_reason``).
    total_epochs : int
        Epochs the trainer has trained in all its calls so far.
    train_error : ndarray of shape (epochs,)
        E_tr(t) of this call's epochs: the squared error percentage of the
        training set (or the objective, scaled the same way) measured in each
        epoch's forward pass, *before* its update, as ``TrainResult.train_error``
        (read-only).
    val_error : float or None
        The validation set's squared error percentage at the weights the call
        ends with; None without a validation set.
    stop_reason : str or None
        Why the rule stopped itself in this call (``"converged"``, ``"mu_max"``,
        ...), else None.
    """

    epochs: int
    total_epochs: int
    train_error: np.ndarray
    val_error: float | None
    stop_reason: str | None


class Trainer:
    """Train ``net`` in place, a few epochs per call, with the checks and buffers
    made once.

    ``Trainer(net, X, Y, ...).run(k)`` trains k epochs and returns a `TrainerRun`;
    the next ``run`` continues from there with the rule's whole state (RPROP's
    steps and previous gradient, the previous weight change, Adam's moments and
    step count), so that runs of k1, k2, ... epochs train exactly as one
    :func:`fastnet.train` of k1 + k2 + ... epochs without a stopping criterion:
    the same weights and training errors, bit for bit. FANN users know this loop
    as ``fann_train_epoch``; scikit-learn's ``partial_fit`` on the
    :mod:`fastnet.sklearn` estimators runs on it.

    Parameters
    ----------
    net : MLP
        Trained in place (its own weight vector: ``net.weights`` after a run are
        the trained weights). Weights set between runs (``net.set_weights``)
        are where the next run starts; the rule's state is kept.
    X, Y : array-like of shape (n_patterns, n_in) and (n_patterns, n_out)
        Training set, checked and copied once (see :meth:`set_data` to change it).
    X_val, Y_val : array-like, optional
        Validation set: its error at the end of every run is the run's ``val_error``.
    algorithm : Algorithm or str, default "rprop+"
        As in :func:`fastnet.train`. Rules that run a loop of their own which
        cannot pause (L-BFGS, SciPy's) are refused.
    init_scale : float or None, default None
        If given, the weights are first drawn uniformly from [-init_scale,
        init_scale] with ``seed``; None keeps the network's weights.
    seed : None, int, SeedSequence or Generator
        Source of the initial weights and of the rule's draws, as in
        :func:`fastnet.train`.
    max_epochs : int or None, default None
        The most epochs the trainer trains over all its runs (None: no bound). A
        rule that decays its rate over the run (``Backprop(decay=True)``) needs
        it: its horizon, as ``max_epochs`` of :func:`fastnet.train`.
    target_range : (o_min, o_max), default (0.0, 1.0)
        For the squared error percentages, as in :func:`fastnet.train_rprop`.
    block_size, blas_min : int, optional
        As in :func:`fastnet.train_rprop`.
    loss : {"sse", "cross_entropy"}, default "sse"
    weight_decay : float >= 0, default 0.0
        The objective, as in :func:`fastnet.train`.

    Attributes
    ----------
    net : MLP
    algorithm : Algorithm
    epochs : int
        Epochs trained so far, in all runs.
    train_error : ndarray of shape (epochs,)
        E_tr of every epoch so far (a copy).

    Raises
    ------
    ValueError, TypeError
        For bad data, parameters or algorithm, as :func:`fastnet.train`.

    See Also
    --------
    fastnet.train : one run under Proben1's policy (strips, stopping, the relevant
        epoch's weights, the full result).
    fastnet.gradients.Objective : the objective and gradient prepared for an
        optimizer of your own.

    Notes
    -----
    A run costs its epochs and a few microseconds: it checks ``epochs``, runs
    the rule's kernel on the kept workspace, scales the errors, checks for
    divergence (a non-finite error, an error grown beyond 1e6 times max(E_tr(1),
    1 %), weights beyond ``MAX_WEIGHT``: DivergenceError, as :func:`fastnet.train`)
    and, with a validation set, runs one forward pass over it. BLAS is held at one
    thread during a run only where the rule's kernels may call it (as
    :func:`fastnet.train` decides). After a DivergenceError the network holds
    the weights that diverged: start again with a new `Trainer`.

    One network takes one trainer's run at a time (TrainingInProgressError
    otherwise); a `Trainer` keeps its buffers, so use it from one thread at a time.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, Trainer, train
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> net = MLP(2, (2,), 1, output_activation="logistic")
    >>> trainer = Trainer(net, X, Y, algorithm="irprop-", init_scale=0.5, seed=1)
    >>> for _ in range(10):
    ...     run = trainer.run(5)
    >>> trainer.epochs, run.epochs, run.train_error.shape
    (50, 5, (5,))

    Ten runs of 5 epochs train as one run of 50:

    >>> other = MLP(2, (2,), 1, output_activation="logistic")
    >>> result = train(other, X, Y, algorithm="irprop-", max_epochs=50, init_scale=0.5, seed=1)
    >>> bool(np.array_equal(net.weights, other.weights))
    True
    """

    def __init__(self, net: MLP, X: ArrayLike, Y: ArrayLike, X_val: ArrayLike | None = None,
                 Y_val: ArrayLike | None = None, *, algorithm: Algorithm | str = "rprop+",
                 init_scale: float | None = None, seed: Seed = None,
                 max_epochs: int | None = None, target_range: tuple[float, float] = (0.0, 1.0),
                 block_size: int | None = None, blas_min: int | None = None, loss: str = "sse",
                 weight_decay: float = 0.0) -> None:
        algorithm = from_spec(algorithm)
        if drives_itself(algorithm):
            raise ValueError(
                f"`algorithm` {algorithm.record()[0]} runs a loop of its own that cannot pause "
                "between calls; train it with fastnet.train, or choose a rule that trains "
                "epoch by epoch (the per-weight rules, SCG, LM).")
        if init_scale is not None:
            init_scale = check_float(init_scale, "init_scale", low=0.0, high=MAX_INIT_SCALE)
        self.max_epochs = None if max_epochs is None else check_int(max_epochs, "max_epochs",
                                                                     minimum=1)
        sets = _copied(check_sets(net, X, Y, X_val, Y_val, None, None))
        run = check_run(sets, self.max_epochs or 1, 1, None, target_range, False, block_size,
                        blas_min, net=net, loss=loss, weight_decay=weight_decay)
        check_algorithm_objective(algorithm, run)
        if isinstance(algorithm, Backprop) and algorithm.decay and self.max_epochs is None:
            raise ValueError(f"`max_epochs` must be given for {algorithm.record()[0]} with a "
                             "decaying rate (its horizon), got None.")
        self.net, self.algorithm, self._sets, self._run = net, algorithm, sets, run
        with training_of([net], "net"):
            drawn = init_scale is not None or algorithm.draws
            rng = as_generator(seed) if drawn else None
            if init_scale is not None:
                draw_weights(net, rng, init_scale)
            check_start(net, seed, drawn)
            horizon = self.max_epochs if self.max_epochs is not None else 2**62
            self._state = start_trial(algorithm, net.n_connections, rng, horizon, net.dtype)
        self._nets = [net]
        self._growth = GrowthWatch(1, True)
        self._history = new_history((1, 64), False)
        self._epoch = 0
        self._prepare(sets)

    def _prepare(self, sets, dw_prev=None):
        """The workspace, evaluator and per-run constants of the sets ``sets``."""
        net, run = self.net, self._run
        self._ws = Workspace(net, sets.X, sets.Y, self.algorithm.block_size(run.block_size),
                             run.blas_min, w=weight_buffer(net), objective=run.objective)
        if dw_prev is not None:
            self._ws.dw_prev[:] = dw_prev
        self._val = (None if sets.X_val is None else
                     Evaluator(net, sets.X_val, sets.Y_val, run.blas_min, w=weight_buffer(net),
                               block=self._ws.check_block))
        self._scale = run.scale(sets.X.shape[0], net.n_out)
        low, high = run.target_range
        self._val_scale = (None if sets.Y_val is None or not sets.Y_val.size else
                           100.0 * (high - low) / sets.Y_val.size)
        # (a context per run where the kernels may call BLAS; None: no BLAS call)
        self._limit = blas_held(net, self.algorithm, sets, run) is not _NO_LIMIT

    @property
    def epochs(self):
        """Epochs trained so far, in all runs."""
        return self._epoch

    @property
    def train_error(self):
        """E_tr of every epoch trained so far (a copy), as ``TrainResult.train_error``."""
        return self._history[0, :self._epoch].copy()

    def set_data(self, X: ArrayLike, Y: ArrayLike) -> Trainer:
        """Train on ``(X, Y)`` from the next run on, the rule's state kept (a
        mini-batch of ``partial_fit``).

        Parameters
        ----------
        X, Y : array-like of shape (n_patterns, n_in) and (n_patterns, n_out)

        Returns
        -------
        self : Trainer

        Raises
        ------
        ValueError, TypeError
            For bad data, or a rule whose state is made for one training set
            (SCG, Levenberg-Marquardt).
        """
        if not isinstance(self.algorithm, KernelRule) and type(self.algorithm).epochs \
                is not Algorithm.epochs:
            raise ValueError(f"`X`, `Y` cannot change under {self.algorithm.record()[0]}, whose "
                             "state is made for one training set; make a new Trainer.")
        s = self._sets
        sets = _copied(check_sets(self.net, X, Y, s.X_val, s.Y_val, None, None))
        self._run = check_run(sets, self._run.max_epochs, 1, None, self._run.target_range, False,
                              self._run.block_size, self._run.blas_min, net=self.net,
                              loss=self._run.loss, weight_decay=self._run.weight_decay)
        self._sets = sets
        self._prepare(sets, self._ws.dw_prev)
        return self

    def run(self, epochs: int = 1) -> TrainerRun:
        """Train ``epochs`` more epochs in place.

        Parameters
        ----------
        epochs : int >= 1, default 1

        Returns
        -------
        TrainerRun

        Raises
        ------
        ValueError, TypeError
            For ``epochs`` that is not a positive integer, or beyond ``max_epochs``.
        DivergenceError
            If training diverges (see Notes of the class).
        TrainingInProgressError
            If ``net`` is being trained elsewhere.
        """
        if type(epochs) is not int or epochs < 1:
            epochs = check_int(epochs, "epochs", minimum=1)
        e0 = self._epoch
        if self.max_epochs is not None and e0 + epochs > self.max_epochs:
            raise ValueError(f"`epochs` must be at most {self.max_epochs - e0} (the trainer's "
                             f"max_epochs={self.max_epochs}, {e0} trained), got {epochs}.")
        if e0 + epochs > self._history.shape[1]:
            self._history = grown(self._history, e0 + epochs, 2**62)
        history = self._history
        sse = history[0, e0:e0 + epochs]
        ws = self._ws
        with training_of(self._nets, "net"):
            if ws.w is not weight_buffer(self.net):    # (the network's vector was replaced)
                self._prepare(self._sets, ws.dw_prev)
                ws = self._ws
            if self._limit:
                with single_threaded_blas():
                    status = self.algorithm.epochs(ws, self._state, sse, None)
            else:
                status = self.algorithm.epochs(ws, self._state, sse, None)
        return _ended(self, int(status), sse, e0, epochs)

    def __repr__(self):
        return (f"Trainer({self.algorithm.record()[0]}, n_patterns={self._sets.X.shape[0]}, "
                f"epochs={self._epoch})")


def _ended(self, status, sse, e0, n):
    """The run's record after the divergence checks (``status``: the kernels')."""
    try:
        if status > 0:
            raise diverged(e0 + status)
        k = epochs_written(status, n)
        if k < n:
            sse = sse[:k]
        sse *= self._scale
        self._growth.check(self._history, _ONE, np.array([status]), e0, k)
        self._epoch = e0 + k
        w = self._ws.w
        if not within_max_weight(w):
            raise (beyond_max_weight(self._epoch, float(np.abs(w).max()))
                   if np.isfinite(w).all() else diverged(self._epoch, "the weights"))
        val = None
        if self._val is not None:
            val = self._val.sse() * self._val_scale
            if not math.isfinite(val):
                raise diverged(self._epoch, "the validation error")
    except DivergenceError as exc:
        raise hinted(exc, self.algorithm, self._run.weight_decay, self._sets) from None
    sse.flags.writeable = False
    return TrainerRun(k, self._epoch, sse,
                      val, self.algorithm.stop_reason(self._state) if status < 0 else None)
