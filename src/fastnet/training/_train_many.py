"""``fastnet.train_many``: many trials of one topology, any algorithm."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from fastnet._typing import ArrayLike, Seed
from fastnet._validation import check_bool, check_choice
from fastnet.network import MLP, check_init
from fastnet.stopping import StoppingCriterion, TrainingState
from fastnet.training._algorithms import Algorithm
from fastnet.training._checks import check_callback
from fastnet.training._many_trials import METHODS, many_trials
from fastnet.training._results import TrainResults
from fastnet.training._specs import from_spec
from fastnet.training._plans import RpropPlan, check_stop

__all__ = ["train_many"]


def train_many(nets: MLP | Sequence[MLP], X: ArrayLike, Y: ArrayLike,
               X_val: ArrayLike | None = None, Y_val: ArrayLike | None = None, *,
               algorithm: Algorithm | str = "rprop+", n_trials: int | None = None,
               seed: Seed = None, initial_weights: ArrayLike | None = None,
               seeds: Sequence[Seed] | None = None, X_test: ArrayLike | None = None,
               Y_test: ArrayLike | None = None, max_epochs: int = 100,
               stop: StoppingCriterion | str | None = None, strip: int = 5,
               init_scale: float | None = None, target_range: tuple[float, float] = (0.0, 1.0),
               classification: bool | str = "auto",
               callback: Callable[[int, int, TrainingState], bool | None] | None = None,
               block_size: int | None = None, blas_min: int | None = None,
               method: str = "auto", loss: str = "sse",
               weight_decay: float = 0.0, init: str = "uniform",
               history: bool = True) -> TrainResults:
    r"""Train many trials of one topology on the same data with any algorithm.

    The many-trials form of :func:`fastnet.train`, for timing studies (Hamey
    1992: hundreds of trials of one set-up). Trials of an algorithm with
    vector-lanes kernels (RPROP, exactly as :func:`fastnet.train_rprop_many`
    trains them; every per-weight rule but mini-batch Adam)
    train side by side in the lanes (online: each lane presents the patterns
    in its own trial's order); every other algorithm trains its trials one after
    another in the single-network kernels, in the same strip loop. Either way
    each trial is what :func:`fastnet.train` returns for it alone (see Notes),
    and the results are columnar.

    Parameters
    ----------
    nets : MLP or sequence of MLP
        One network giving the topology (the array form: trials given by
        ``n_trials`` and ``seed``, or by ``initial_weights``), or one network
        per trial (the list form, each trained in place, with ``seeds``).
    X, Y, X_val, Y_val, X_test, Y_test
        As in :func:`fastnet.train`, shared by all trials.
    algorithm : Algorithm or str, default "rprop+"
        An object of :mod:`fastnet.algorithms`, or its name with optional
        parameters (read by :func:`fastnet.algorithms.from_spec`).
    n_trials : int, optional
        The number of trials K of the array form.
    seed : None, int, SeedSequence or Generator
        The array form's one seed (see Notes).
    initial_weights : array-like of shape (K, C), optional
        The array form's initial weights, one row per trial, in place of
        ``n_trials``; ``seed`` then only seeds the algorithm's own draws. They
        are converted to the network's dtype once (rounded for float32).
    seeds : sequence, optional
        The list form's seed per network (``seed`` of :func:`fastnet.train`).
    max_epochs, stop, strip, init_scale, target_range, classification, block_size, blas_min
        As in :func:`fastnet.train`, the same for every trial; each trial stops
        by its own copy of ``stop``. In the array form ``init_scale`` None draws
        from the network's default range (0.5 with hidden layers, 0.01 without).
    init : {"uniform", "fan_in", "glorot", "he"}, default "uniform"
        The rule that draws each trial's weights, as :meth:`fastnet.MLP.init_weights`
        applies it; ``init_scale`` is then its scale (``"fan_in"``: the numerator
        of ±init_scale/F, default 2.4; None with ``"glorot"`` and ``"he"``).
        Any rule but ``"uniform"`` draws the weights even when ``init_scale`` is
        None (the list form redraws each network from its seed).
    callback : callable, optional
        ``callback(i, epoch, state)`` after every strip of trial ``i``. The trials
        still training reach each strip end together, except L-BFGS's: SciPy
        runs each trial to its end before the next starts, so the callback sees
        trial 0's strips first, and the first trial that raises ends the batch.
        What an exception leaves in the networks: see Notes.
    method : {"auto", "lanes", "serial", "mixed"}, default "auto"
        Where the trials train (see :func:`fastnet.train_rprop_many`); an
        algorithm without lanes takes only "auto" or "serial".
    loss, weight_decay
        The training objective, as in :func:`fastnet.train`, the same for every
        trial (objectives other than the summed squared error train serially).
    history : bool, default True
        Keep each trial's training error by epoch (``train_error``, K x the
        most epochs trained). False keeps only each trial's lowest
        (``min_train_error``; ``train_error`` then has no columns): the form of
        a timing study of many trials, whose memory then grows with K alone.

    Returns
    -------
    TrainResults
        Columns over the trials (``epochs``, ``stop_reason``, ``weights``,
        histories, ...) and a :class:`TrainResult` per trial on request; the
        batch's CPU time shared by the epochs each trained
        (``setup["batch"]``).

    Raises
    ------
    ValueError, TypeError
        As :func:`fastnet.train` and :func:`fastnet.train_rprop_many`, and for
        a ``method`` of lanes with an algorithm that has none.
    DivergenceError
        Where :func:`fastnet.train` raises it for a trial (naming the trial).

    Warns
    -----
    NoConvergenceWarning
        At most once per call, if ``stop`` is given and some trials reach
        ``max_epochs`` first.

    See Also
    --------
    train : one network.
    train_rprop_many : RPROP's parameters as arguments.
    fastnet.training.draw_trials : how the array form draws the weights.

    Notes
    -----
    The array form draws, from ``rng = numpy.random.default_rng(seed)``, all
    K x C initial weights in one call (:func:`fastnet.training.draw_trials`;
    trial i is row i). RPROP then draws its initial steps as
    :func:`fastnet.train_rprop_many` does. Any other algorithm that draws
    (online backpropagation's pattern order, ...) gives trial i the i-th
    generator of ``rng.spawn(K)``, so trial i alone is
    ``train(net.copy().set_weights(W[i]), ..., seed=numpy.random.SeedSequence(seed).spawn(K)[i])``
    for an integer ``seed``. The list form's trial i is
    ``train(nets[i], ..., seed=seeds[i])``. Trials in the single-network
    kernels equal :func:`fastnet.train` bit for bit; those in lanes to
    rounding (about 1e-15 relative per epoch). Online backpropagation's
    lanes draw each trial's orders from its own generator in the kernel,
    the numbers of ``Generator.permutation`` (list-form trials that share
    one Generator train one after another). A secant step (the parabola of
    Fahlman 1988) magnifies such differences where two slopes nearly agree: its trials in
    the lanes can part from their single-network runs after some tens of
    epochs (``method="serial"`` keeps them equal).

    When an exception ends the batch -- one the callback raises,
    KeyboardInterrupt (Ctrl-C), a DivergenceError -- it propagates unchanged
    and no results are returned. Whatever the method and algorithm, each
    network of the list form then holds the weights of the last strip end the
    loop took in for it, as :func:`fastnet.train` leaves its network: the
    epoch whose callback raised; the weights it stopped with, if it had
    stopped; its initial weights if none (L-BFGS's trials after the one that
    raised; every trial of the lanes' queue, which trains the whole batch in
    one call where nothing is checked between epochs but ``Correct``). A
    strip cut short by Ctrl-C is not kept, and the relevant epoch's weights
    are not restored. The array form leaves nothing: ``nets`` is untouched.

    Examples
    --------
    >>> from fastnet import MLP, train_many
    >>> from fastnet.datasets import make_xor
    >>> X, Y = make_xor().train
    >>> results = train_many(MLP(2, [2], 1), X, Y, algorithm="backprop(learning_rate=0.1)",
    ...                      n_trials=10, seed=0, max_epochs=50)
    >>> len(results), results.epochs.tolist()[:3]
    (10, [50, 50, 50])
    """
    method = check_choice(method, "method", METHODS)
    check_callback(callback)
    clocks = time.process_time(), time.perf_counter()
    algorithm = from_spec(algorithm)
    init, init_scale = check_init(init, init_scale)
    plan = RpropPlan(algorithm, max_epochs, check_stop(stop), strip, init_scale, None, init)
    return many_trials(nets, (X, Y, X_val, Y_val, X_test, Y_test), plan, n_trials, seed,
                       initial_weights, seeds, (target_range, classification, block_size,
                                                blas_min, callback), method, clocks,
                       objective=(loss, weight_decay), history=check_bool(history, "history"))
