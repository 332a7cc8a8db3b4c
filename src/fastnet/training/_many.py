"""Many trials of one topology at once with RPROP: ``train_rprop_many``, RPROP's
parameters as arguments over the general many-trials machinery
(:mod:`fastnet.training._many_trials`, which :func:`fastnet.train_many` uses alone).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from fastnet._typing import ArrayLike, Seed
from fastnet._validation import check_choice
from fastnet.network import MLP
from fastnet.stopping import StoppingCriterion, TrainingState
from fastnet.training._checks import check_callback
from fastnet.training._draw import draw_trials
from fastnet.training._many_trials import LANES_MAX_CONNECTIONS, LANES_MAX_WORK, METHODS, many_trials
from fastnet.training._plans import UNSET as _UNSET
from fastnet.training._plans import resolve_rprop
from fastnet.training._results import TrainResults

__all__ = ["train_rprop_many", "LANES_MAX_WORK", "LANES_MAX_CONNECTIONS", "draw_trials"]


def train_rprop_many(nets: MLP | Sequence[MLP], X: ArrayLike, Y: ArrayLike,
                     X_val: ArrayLike | None = None, Y_val: ArrayLike | None = None, *,
                     n_trials: int | None = None, seed: Seed = None,
                     initial_weights: ArrayLike | None = None,
                     seeds: Sequence[Seed] | None = None, X_test: ArrayLike | None = None,
                     Y_test: ArrayLike | None = None, preset: str | None = None,
                     variant: str = _UNSET, eta_plus: float = _UNSET,
                     eta_minus: float = _UNSET, delta0: float | tuple[float, float] = _UNSET,
                     delta_min: float = _UNSET, delta_max: float = _UNSET,
                     max_epochs: int = _UNSET, stop: StoppingCriterion | None = _UNSET,
                     strip: int = _UNSET, init_scale: float | None = _UNSET,
                     target_range: tuple[float, float] = (0.0, 1.0),
                     classification: bool | str = "auto",
                     callback: Callable[[int, int, TrainingState], bool | None] | None = None,
                     block_size: int | None = None, blas_min: int | None = None,
                     method: str = "auto", loss: str = "sse",
                     weight_decay: float = 0.0) -> TrainResults:
    r"""Train many trials of one topology on the same data with RPROP, together.

    The trials come in two forms. **Trials as arrays** (a timing study): one
    network gives the topology and the trials are ``n_trials=K`` with a
    ``seed``, or a (K, C) array ``initial_weights``; nothing is built per trial
    and the results are columns. **A list of networks**: each network is a
    trial, and ``train_rprop_many(nets, X, Y, ..., seeds=seeds)[i]`` is what
    ``train_rprop(nets[i], X, Y, ..., seed=seeds[i])`` returns on its own -- the
    same weights (to rounding), epochs, relevant epoch, stop reason and exact
    traversal counts. Either way the trials run side by side in the lanes of
    one vector (narrow networks) or back to back in one call (wide ones).

    Parameters
    ----------
    nets : MLP or sequence of MLP
        One network giving the topology (layer sizes, shortcuts, activations)
        for trials as arrays; its own weights are neither read nor changed. Or
        one network per trial, all of one topology, each trained in place.
    X, Y, X_val, Y_val, X_test, Y_test
        As in :func:`train_rprop`, shared by all trials.
    n_trials : int, optional
        The number of trials K, drawn from ``seed`` (trials as arrays).
    seed : None, int, SeedSequence or Generator
        Trials as arrays: ``rng = numpy.random.default_rng(seed)`` draws all
        K x C initial weights in one call, ``rng.uniform(-init_scale,
        init_scale, (K, C))`` (trial i is row i; see Notes). With
        ``initial_weights`` it seeds only what RPROP draws (a ``delta0`` range).
    initial_weights : array-like of shape (K, C), optional
        Trials as arrays, in place of ``n_trials``: row i is trial i's initial
        weights in :attr:`MLP.weights` order (C = ``nets.n_connections``),
        finite and at most :data:`MAX_WEIGHT` in magnitude, as
        :meth:`MLP.set_weights` takes them; with hidden layers no row may be
        all zeros (such a trial could not break symmetry). Converted to the
        network's dtype once (a float32 network's: rounded, within its range).
    seeds : sequence or None
        The list form's seed per network (``seed`` of :func:`train_rprop`), or
        None.
    preset, variant, eta_plus, eta_minus, delta0, delta_min, delta_max
        As in :func:`train_rprop`, the same for every trial.
    max_epochs, stop, strip, init_scale, target_range, classification, block_size, blas_min
        As in :func:`train_rprop`, the same for every trial. Each trial stops by
        its own copy of ``stop``; a trial that has stopped costs nothing more.
        ``block_size`` and ``blas_min`` only steer the single-network kernels.
    callback : callable, optional
        ``callback(i, epoch, state)`` after every strip of trial ``i`` (as
        :func:`train_rprop`'s callback, with the trial's index first). An
        exception it raises (or Ctrl-C) ends the batch and propagates; each
        network of the list form then holds the weights of its last strip end
        (see :func:`fastnet.train_many`).
    method : {"auto", "lanes", "serial", "mixed"}, default "auto"
        ``"lanes"``: trials side by side in vector lanes; ``"serial"``: one
        trial after another in the single-network kernels; ``"mixed"``: lanes,
        but whenever the trials still training fill less than 3/4 of the
        last group of lanes they need, those of that group go on one after
        another in the single-network kernels. ``"auto"`` chooses lanes when
        training examples x connections is at most :data:`LANES_MAX_WORK`,
        else mixed up to :data:`LANES_MAX_CONNECTIONS` connections if the
        trials fill at least one group of lanes to 3/4, else serial (where
        each was measured faster). Networks with softmax outputs and
        objectives other than the summed squared error train serially
        whatever the method (the lanes have neither).
    loss, weight_decay
        The training objective, as in :func:`train_rprop`, the same for every trial.

    Returns
    -------
    TrainResults
        Columns over the trials: (K,) ``epochs``, ``relevant_epoch``,
        ``stop_reason``, the errors at the relevant epoch, ``cpu_time`` and
        ``wall_time``; (K, C) ``weights``; (K, epochs) histories (NaN after a
        trial's last epoch). It is also a sequence of :class:`TrainResult`,
        one per trial in order, each built on first access. ``cpu_time`` and
        ``wall_time`` are the batch's, apportioned to the trials by the epochs
        each trained (``result.setup["batch"]`` says so and holds the batch
        totals).

    Raises
    ------
    ValueError, TypeError
        As :func:`train_rprop`, and for an empty ``nets``, networks of
        different topology (naming the first mismatch), ``seeds`` of the
        wrong length, trials given in neither or both forms, or
        ``initial_weights`` of another shape or with a weight that
        :meth:`MLP.set_weights` refuses (naming its row and column).
    DivergenceError
        Whatever the method, where :func:`train_rprop` raises it for a trial:
        its errors or outputs become non-finite, or its training error grows
        beyond 1e6 times max(E_tr(1), 1 %) (a FloatingPointError naming the
        trial and the epoch). Trials whose values might overflow leave the
        lanes for train_rprop's kernels, whose separate products and sums give
        NaN where the lanes' fused multiply-adds could give a saturated unit.
    TrainingInProgressError
        If one of ``nets`` is being trained (by another thread, or this is its
        training's callback; naming the first).

    Warns
    -----
    NoConvergenceWarning
        At most once per call, whatever the method, if ``stop`` is given and
        some trials reach ``max_epochs`` first: "k of K trials reached
        max_epochs=... before the stopping criterion ... held". In a success
        study (``stop=Correct()``) those failures are data, counted in
        ``stop_reason``; filter the warning there.

    See Also
    --------
    train_rprop : one network.

    Notes
    -----
    With ``n_trials`` and ``seed``, ``init_scale`` None draws from the
    network's default range (0.5 with hidden layers, 0.01 without); a
    ``delta0`` range (lo, hi) then draws all initial steps from the same
    generator, ``rng.uniform(lo, hi, (K, C))``.
    :func:`fastnet.training.draw_trials` returns exactly these arrays; with a
    fixed ``delta0``, ``train_rprop_many(net, X, Y, ..., initial_weights=W[i:i + 1])``
    reproduces trial i, and so does :func:`train_rprop` on a network holding
    ``W[i]``.

    In the lanes, trial ``i`` sums its products in an order of its own, so its
    errors and weights agree with :func:`train_rprop`'s to rounding (about
    1e-15 relative per epoch), not bit for bit; one seed still reproduces a
    batch bit for bit on one machine.

    Examples
    --------
    >>> from fastnet import MLP, train_rprop_many
    >>> from fastnet.datasets import make_xor
    >>> X, Y = make_xor().train                 # the four XOR patterns
    >>> nets = [MLP(2, (2,), 1) for _ in range(20)]
    >>> results = train_rprop_many(nets, X, Y, seeds=range(20), init_scale=0.5,
    ...                            max_epochs=50)
    >>> len(results), results[0].epochs
    (20, 50)

    Trials as arrays, the initial weights drawn from one seed:

    >>> study = train_rprop_many(MLP(2, (2,), 1), X, Y, n_trials=1000, seed=0,
    ...                          init_scale=0.5, max_epochs=50)
    >>> study.epochs.shape, study.weights.shape, study.stop_reason[0]
    ((1000,), (1000, 11), 'max_epochs')
    """
    method = check_choice(method, "method", METHODS)
    check_callback(callback)
    clocks = time.process_time(), time.perf_counter()
    plan = resolve_rprop(preset, dict(
        variant=variant, eta_plus=eta_plus, eta_minus=eta_minus, delta0=delta0,
        delta_min=delta_min, delta_max=delta_max, max_epochs=max_epochs, stop=stop,
        strip=strip, init_scale=init_scale), _UNSET)
    return many_trials(nets, (X, Y, X_val, Y_val, X_test, Y_test), plan, n_trials, seed,
                       initial_weights, seeds, (target_range, classification, block_size,
                                                blas_min, callback), method, clocks,
                       extra={"preset": preset}, objective=(loss, weight_decay))
