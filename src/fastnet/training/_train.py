"""``fastnet.train``: one network, any algorithm, Proben1's training policy."""
from __future__ import annotations

from collections.abc import Callable

from fastnet._docstrings import TRAIN_ONE_NET, fill
from fastnet._typing import ArrayLike, Seed
from fastnet._validation import check_float
from fastnet.network import MAX_INIT_SCALE, MLP
from fastnet.stopping import StoppingCriterion, TrainingState
from fastnet.training._algorithms import Algorithm
from fastnet.training._plans import check_stop
from fastnet.training._checks import check_one_run
from fastnet.training._results import TrainResult
from fastnet.training._single import train_single
from fastnet.training._specs import from_spec

__all__ = ["train", "train_checked"]


@fill(train_one_net=TRAIN_ONE_NET)
def train(net: MLP, X: ArrayLike, Y: ArrayLike, X_val: ArrayLike | None = None,
          Y_val: ArrayLike | None = None, *, algorithm: Algorithm | str = "rprop+",
          X_test: ArrayLike | None = None, Y_test: ArrayLike | None = None,
          max_epochs: int = 100, stop: StoppingCriterion | str | None = None, strip: int = 5,
          init_scale: float | None = None, seed: Seed = None,
          target_range: tuple[float, float] = (0.0, 1.0), classification: bool | str = "auto",
          callback: Callable[[int, TrainingState], bool | None] | None = None,
          block_size: int | None = None, blas_min: int | None = None, loss: str = "sse",
          weight_decay: float = 0.0) -> TrainResult:
    """Train ``net`` in place with ``algorithm`` under Proben1's training policy.

    Every algorithm gets the same treatment (Prechelt 1994): training in strips
    of ``strip`` epochs, the validation error measured at every strip end, the
    stopping criterion, the weights of the relevant epoch (lowest validation
    error) restored, exact connection-traversal counts, process CPU time,
    divergence errors and the set-up record.

    Parameters
    ----------
    net : MLP
        Trained in place; with a validation set it ends at the weights of the
        relevant epoch. If an exception ends training (see Notes), it holds the
        weights of the last strip end instead.
    X, Y : array-like of shape (n_patterns, n_in) and (n_patterns, n_out)
        Training set.
    X_val, Y_val : array-like, optional
        Validation set, measured at every strip end (early stopping).
    algorithm : Algorithm or str, default "rprop+"
        An object of :mod:`fastnet.algorithms` (e.g. ``RPROP(variant="irprop+")``,
        ``Backprop(learning_rate=0.1, momentum=0.9)``), or its short name with
        optional parameters, read by :func:`fastnet.algorithms.from_spec`.
    X_test, Y_test : array-like, optional
        Test set, measured at strip ends for plots only, and for the final errors.
    max_epochs : int, default 100
        Hard limit on the epochs trained.
    stop : StoppingCriterion, {"linear", "multilayer", "multilayer-literal"} or None
        A criterion of :mod:`fastnet.stopping`, or the name of one of Proben1's
        rules (Prechelt 1994; as in :func:`fastnet.train_rprop`). None trains exactly
        ``max_epochs`` epochs.
    strip : int, default 5
        Strip length k.
    init_scale : float or None, default None
        If given, the weights are first drawn uniformly from
        [-init_scale, init_scale] with ``seed``; if None the network's weights
        are used as they are.
    seed : None, int, SeedSequence or Generator
        Source of the initial weights and of the algorithm's own draws (e.g.
        RPROP's per-weight initial steps, online backprop's pattern order). One
        integer reproduces a run bit for bit.
    target_range, classification, callback, block_size, blas_min
        As in :func:`fastnet.train_rprop`.
    loss : {"sse", "cross_entropy"}, default "sse"
        The training objective, as in :func:`fastnet.train_rprop`. RPROP,
        backpropagation, the other per-weight rules, SCG, L-BFGS and rules written as
        ``step`` train any; Levenberg-Marquardt trains the summed squared error
        only and refuses another.
    weight_decay : float >= 0, default 0.0
        L2 weight decay lambda added as lambda * sum w^2 to the objective.

    {{train_one_net}}

    See Also
    --------
    fastnet.algorithms : the algorithms and their names.
    train_rprop, train_backprop : the same loop with the rule's parameters as arguments.

    Notes
    -----
    When an exception ends training -- one the callback raises, KeyboardInterrupt
    (Ctrl-C), a DivergenceError -- it propagates unchanged, no result is
    returned, and ``net`` holds the weights of the last strip end the loop took
    in (the epoch whose callback raised; for Ctrl-C during a strip, the strip
    end before it: a strip cut short is not kept; without strips to stop at,
    the loop takes them in at least every 1000 epochs), or its initial weights if
    no strip had ended. The relevant epoch's weights are not restored.
    :func:`fastnet.train_many` leaves each of its networks by the same rule.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, train, train_rprop
    >>> from fastnet.algorithms import RPROP
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> a = train(MLP(2, (2,), 1, output_activation="logistic"), X, Y,
    ...           algorithm=RPROP(variant="irprop+"), max_epochs=50, init_scale=0.5, seed=1)
    >>> b = train(MLP(2, (2,), 1, output_activation="logistic"), X, Y,
    ...           algorithm="irprop+", max_epochs=50, init_scale=0.5, seed=1)
    >>> a.final_train == b.final_train
    True
    """
    if init_scale is not None:
        init_scale = check_float(init_scale, "init_scale", low=0.0, high=MAX_INIT_SCALE)
    return train_checked(net, from_spec(algorithm), (X, Y, X_val, Y_val, X_test, Y_test),
                         max_epochs=max_epochs, stop=check_stop(stop), strip=strip,
                         init_scale=init_scale, seed=seed, target_range=target_range,
                         classification=classification, callback=callback,
                         block_size=block_size, blas_min=blas_min, loss=loss,
                         weight_decay=weight_decay)


def train_checked(net, algorithm, data, *, seed, init_scale, extra=None, **options):
    """Check the data sets and the run's options at the door (``_checks.check_one_run``),
    then train ``net`` with the algorithm object (``stop`` a criterion or None,
    ``init_scale`` checked): the one path of :func:`train` and :func:`fastnet.train_rprop`."""
    sets, run = check_one_run(net, algorithm, data, seed=seed, init_scale=init_scale, **options)
    return train_single(net, algorithm, sets, run, seed=seed, init_scale=init_scale,
                        extra=extra)
