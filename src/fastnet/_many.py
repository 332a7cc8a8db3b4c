"""Many trials of one topology at once: ``train_rprop_many``.

Timing studies train one topology from many initialisations on the same data
(Hamey 1992: hundreds of trials; Lawrence et al. 1997: distributions; Prechelt
1994: 60 runs per file). Narrow networks fill no vector on their own, so the
trials go side by side into the lanes of one (``fastnet._kernels._trials``);
wide ones train one after another in the single-network kernels, which already
fill the vectors; in between, trials train in lanes, but those of a group of
lanes that early stops have left too empty go on one at a time
(``fastnet._handoff``). Either way each trial gets what :func:`train_rprop` gives it.
"""
from __future__ import annotations

import copy
import operator
import time
from collections.abc import Callable, Sequence

import numpy as np

from fastnet._batch import SetColumns, TrainResults, batch_record, time_shares
from fastnet._blas import single_threaded_blas
from fastnet._handoff import (HANDOFF_EPOCHS, HANDOFF_FILL, SerialTrials, lanes_fill,
                             train_serial, warn_late)
from fastnet._kernels import _trials
from fastnet._engine import Evaluator
from fastnet._lanes import LANES, Lanes, aligned, safe_weight, to_lanes
from fastnet._training import (
    MAX_EPOCHS_PER_CALL, base_setup, check_common, check_growth_rows,
    check_start, diverged, growth_limit, resolve_classification, training_of,
)
from fastnet._typing import ArrayLike, Seed
from fastnet._validation import check_choice, check_matrix, check_seeds
from fastnet.measures import _check_analog, threshold_correct
from fastnet.network import MLP
from fastnet.rprop import _UNSET, VARIANTS, draw_start, resolve_options
from fastnet.stopping import Correct, StoppingCriterion, TrainingState

__all__ = ["train_rprop_many", "LANES_MAX_WORK", "LANES_MAX_CONNECTIONS"]

#: Trials go side by side into vector lanes when an epoch's work, training
#: examples x connections, is at most this; larger networks or data sets fill
#: the single-network kernels' register tiles themselves, and those are faster
#: there. Measured per trial-epoch, lanes against one network at a time (16
#: trials): heartac1 2+0 (N C = 17 k) 1.25x, cancer2 8+4 (69 k) 2.1x, heartac2
#: 8+4 (78 k) 1.5x, glass1 16+8 (61 k) 1.2x faster; heartc2 8+8 (113 k) 0.80x,
#: diabetes1 16+8 (157 k) 0.92x, thyroid2 8+4 (1.4 M) 0.83x, gene1 4+2 (1.8 M)
#: 0.49x. On tiny tasks (XOR, encoders) lanes also save the per-call cost. (Those
#: figures predate the lanes' register tiles; see LANES_MAX_CONNECTIONS.)
LANES_MAX_WORK = 100_000

#: Beyond LANES_MAX_WORK, lanes with a hand-off of the last trials to the
#: single-network kernels (method "mixed") up to this many connections. Since
#: the lanes' products run on register tiles, lanes beat one network at a time
#: per trial-epoch on every Proben1 pivot network (16 full lanes, the study's
#: validation and test sets every strip: thyroid2 8+4 1.52x, building2 16+8 1.35x,
#: soybean2 32+0 (4841 connections) 1.32x, gene1 4+2 1.07x) and on synthetic
#: ones up to 5450 connections (1.1-1.4x), not on wider ones (16,682: 0.91x,
#: 68,362: 0.66x). But trials stop at different epochs and a group of lanes costs
#: the same however few of them still train, so these batches hand their last
#: trials on (see fastnet._handoff).
LANES_MAX_CONNECTIONS = 6000

METHODS = ("auto", "lanes", "serial", "mixed")

_LAYERS = operator.attrgetter("_layers")
_WEIGHTS = operator.attrgetter("_w")


def _check_finite(values, which, epoch, what, trials=None):
    """Raise DivergenceError for the first value of ``which`` that is not finite
    (``trials[k]`` names the trial of ``values[k]``; default k itself)."""
    bad = np.flatnonzero(which & ~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        raise diverged(int(epoch[k]) if np.ndim(epoch) else epoch, what,
                       trial=int(trials[k]) if trials is not None else k)


def _check_nets(nets):
    """A non-empty list of MLPs of one topology; the first mismatch is named."""
    if isinstance(nets, MLP):
        raise TypeError("`nets` must be a sequence of fastnet.MLP (one per trial), got one MLP.")
    try:
        nets = list(nets)
    except TypeError:
        raise TypeError(f"`nets` must be a sequence of fastnet.MLP, got {type(nets).__name__}.") from None
    if not nets:
        raise ValueError("`nets` must hold at least one network, got an empty sequence.")
    if (set(map(type, nets)) == {MLP} and len(set(map(id, map(_LAYERS, nets)))) == 1
            and len(set(map(id, nets))) == len(nets)):
        # Copies of one network share its layer table: one topology (checked in
        # C-level passes, as timing studies pass thousands of networks).
        return nets
    attrs = ("layer_sizes", "shortcut", "hidden_activation", "output_activation")
    first = nets[0]
    table = first._layers if isinstance(first, MLP) else None
    want = None
    for i, net in enumerate(nets):
        # Copies of one network share its layer table: the topology is the same.
        if type(net) is MLP and net._layers is table:
            continue
        if not isinstance(net, MLP):
            raise TypeError(f"`nets[{i}]` must be a fastnet.MLP, got {type(net).__name__}.")
        if want is None:
            want = tuple(getattr(first, a) for a in attrs)
        if (net.layer_sizes, net.shortcut, net.hidden_activation, net.output_activation) != want:
            attr = next(a for a in attrs if getattr(net, a) != getattr(first, a))
            raise ValueError(
                f"`nets[{i}]` differs from `nets[0]` in {attr}: {getattr(net, attr)!r} "
                f"against {getattr(first, attr)!r}; train_rprop_many trains one topology.")
    if len(set(map(id, nets))) != len(nets):
        raise ValueError("`nets` holds the same network object twice; give each trial its own "
                         "(e.g. net.copy()).")
    return nets


def train_rprop_many(nets: Sequence[MLP], X: ArrayLike, Y: ArrayLike,
                     X_val: ArrayLike | None = None, Y_val: ArrayLike | None = None, *,
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
                     method: str = "auto") -> TrainResults:
    r"""Train many networks of one topology on the same data with RPROP, together.

    Each network is a trial: ``train_rprop_many(nets, X, Y, ..., seeds=seeds)[i]``
    is what ``train_rprop(nets[i], X, Y, ..., seed=seeds[i])`` returns on its own
    -- the same weights (to rounding), epochs, relevant epoch, stop reason and
    exact traversal counts -- but the trials run side by side in the lanes of
    one vector (narrow networks) or back to back in one call (wide ones).

    Parameters
    ----------
    nets : sequence of MLP
        One network per trial, all of one topology (layer sizes, shortcuts,
        activations); each is trained in place.
    X, Y, X_val, Y_val, X_test, Y_test
        As in :func:`train_rprop`, shared by all trials.
    seeds : sequence or None
        One seed per network (``seed`` of :func:`train_rprop`), or None.
    preset, variant, eta_plus, eta_minus, delta0, delta_min, delta_max
        As in :func:`train_rprop`, the same for every trial.
    max_epochs, stop, strip, init_scale, target_range, classification, block_size, blas_min
        As in :func:`train_rprop`, the same for every trial. Each trial stops by
        its own copy of ``stop``; a trial that has stopped costs nothing more.
        ``block_size`` and ``blas_min`` only steer the single-network kernels.
    callback : callable, optional
        ``callback(i, epoch, state)`` after every strip of trial ``i`` (as
        :func:`train_rprop`'s callback, with the trial's index first).
    method : {"auto", "lanes", "serial", "mixed"}, default "auto"
        ``"lanes"``: trials side by side in vector lanes; ``"serial"``: one
        trial after another in the single-network kernels; ``"mixed"``: lanes,
        but whenever the trials still training fill less than 3/4 of the
        last group of lanes they need, those of that group go on one after
        another in the single-network kernels. ``"auto"`` chooses lanes when
        training examples x connections is at most :data:`LANES_MAX_WORK`,
        else mixed up to :data:`LANES_MAX_CONNECTIONS` connections if the
        trials fill at least one group of lanes to 3/4, else serial (where
        each was measured faster).

    Returns
    -------
    TrainResults
        A sequence of :class:`TrainResult`, one per network, in order (each
        built on first access; the arrays of epochs, stop reasons and times
        are its attributes). ``cpu_time`` and ``wall_time`` are the batch's,
        apportioned to the trials by the epochs each trained
        (``result.setup["batch"]`` says so and holds the batch totals).

    Raises
    ------
    ValueError, TypeError
        As :func:`train_rprop`, and for an empty ``nets``, networks of
        different topology (naming the first mismatch), or ``seeds`` of the
        wrong length.
    DivergenceError
        Whatever the method, where :func:`train_rprop` raises it for a trial:
        its errors or outputs become non-finite, or its training error grows
        beyond 1e6 times max(E_tr(1), 1 %) (a FloatingPointError naming the
        trial and the epoch). Trials whose values might overflow leave the
        lanes for train_rprop's kernels, whose separate products and sums give
        NaN where the lanes' fused multiply-adds could give a saturated unit.
    TrainingInProgressError
        If another thread is training one of ``nets`` (naming the first).

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
    """
    nets = _check_nets(nets)
    seeds = check_seeds(seeds, len(nets))
    method = check_choice(method, "method", METHODS)
    given = dict(variant=variant, eta_plus=eta_plus, eta_minus=eta_minus, delta0=delta0,
                 delta_min=delta_min, delta_max=delta_max, max_epochs=max_epochs, stop=stop,
                 strip=strip, init_scale=init_scale)
    if callback is not None and not callable(callback):
        raise TypeError(f"`callback` must be callable or None, got {callback!r}.")
    if method == "auto":
        try:
            n_train = np.shape(X)[0] if np.ndim(X) == 2 else 0
        except ValueError:           # ragged: named as every method names it
            check_matrix(X, "X", n_cols=nets[0].n_in, what="inputs")
            raise
        method = _auto_method(n_train, nets[0].n_connections, len(nets))
    clocks = time.process_time(), time.perf_counter()
    with training_of(nets, "nets"):
        if method == "serial":
            kwargs = dict(X_val=X_val, Y_val=Y_val, X_test=X_test, Y_test=Y_test, preset=preset,
                          target_range=target_range, classification=classification,
                          block_size=block_size, blas_min=blas_min,
                          **{k: v for k, v in given.items() if v is not _UNSET})
            return train_serial(nets, seeds, X, Y, kwargs, callback, clocks)
        return _train_lanes(nets, seeds, X, Y, X_val, Y_val, X_test, Y_test, preset, given,
                            target_range, classification, callback, block_size, blas_min,
                            clocks, handoff=HANDOFF_FILL if method == "mixed" else None)


def _auto_method(n_train, n_connections, n_trials):
    """The method "auto" stands for (see train_rprop_many)."""
    if n_train * n_connections <= LANES_MAX_WORK:
        return "lanes"
    if n_connections <= LANES_MAX_CONNECTIONS and n_trials >= LANES * HANDOFF_FILL:
        return "mixed"          # (at least one group of lanes filled to HANDOFF_FILL)
    return "serial"


def _start(nets, seeds, params, flat):
    """Each trial's initial weights into ``flat[:K]`` and its initial steps, as
    draw_start does one network at a time (the checks of check_start included)."""
    K = len(nets)
    if params["init_scale"] is None and not isinstance(params["delta0"], tuple):
        # nothing to draw: each trial starts from its network's own weights
        for net, seed in zip(nets, seeds):
            if seed is not None:
                check_start(net, seed, drawn=False)       # raises
        _trials.gather_rows(list(map(_WEIGHTS, nets)), flat[:K])
        if nets[0].hidden:
            zero = np.flatnonzero(~flat[:K].any(axis=1))
            if zero.size:
                check_start(nets[int(zero[0])], None, drawn=False)   # raises
        return np.full((1, flat.shape[1]), params["delta0"])
    steps = np.array([draw_start(net, params, seed) for net, seed in zip(nets, seeds)])
    _trials.gather_rows(list(map(_WEIGHTS, nets)), flat[:K])
    return steps


def _train_lanes(nets, seeds, X, Y, X_val, Y_val, X_test, Y_test, preset, given,
                 target_range, classification, callback, block_size, blas_min, clocks,
                 handoff=None):
    # handoff: the fill of the lanes' last group below which its trials go on one at
    # a time in the single-network kernels (method "mixed", fastnet._handoff); None:
    # never.
    params = resolve_options(preset, given)
    first = nets[0]
    (X, Y, X_val, Y_val, X_test, Y_test, max_epochs, strip, target_range, block_size,
     blas_min) = check_common(first, X, Y, X_val, Y_val, X_test, Y_test, params["max_epochs"],
                              params["strip"], params["stop"], target_range, None,
                              block_size, blas_min)
    classification = resolve_classification(classification, Y)
    stop = params["stop"]
    K, C, N = len(nets), first.n_connections, X.shape[0]
    layers, n_in, n_out = first.layer_table, first.n_in, first.n_out
    flat = np.zeros((-(-K // LANES) * LANES, C))
    steps = _start(nets, seeds, params, flat)
    lanes = Lanes(flat, K, steps)
    work = aligned((_trials.work_size(first.n_units, N, n_in),))
    o_range = target_range[1] - target_range[0]
    scale = 100.0 * o_range / (N * n_out)

    criteria = [None] * K
    if stop is not None:
        for i in range(K):
            criteria[i] = copy.deepcopy(stop)
            criteria[i].reset()
    in_strips = X_val is not None or X_test is not None or stop is not None or callback is not None
    kernel_check = (type(stop) is Correct and X_val is None and X_test is None
                    and callback is None)
    check = (0, 0.4, -1.0)
    step = strip if in_strips else MAX_EPOCHS_PER_CALL
    if kernel_check:
        analog = _check_analog((Y == 0.0) | (Y == 1.0), stop.analog)
        check = (strip, stop.r_c, -1.0 if analog is None else analog)
        step = strip * max(1, MAX_EPOCHS_PER_CALL // strip)
        if handoff is not None:
            # shorter calls, so that stopped trials can be noticed and handed off
            step = strip * max(1, HANDOFF_EPOCHS // strip)

    rprop_args = (VARIANTS[params["variant"]], params["eta_plus"], params["eta_minus"],
                  params["delta_min"], params["delta_max"])
    cap = min(max_epochs, 1024)
    # Row i: trial i's E_tr by epoch (rows K.. are padding lanes). The kernel writes
    # here directly while trial i is in lane i (until the first repack).
    train_err = np.zeros((lanes.G * LANES, cap))      # (zeros: see the growth check)
    epochs = np.zeros(K, np.intp)
    stopped = np.zeros(K, bool)
    reasons = ["max_epochs"] * K
    fired = np.zeros(K, bool)
    evaluation = np.zeros(K, np.int64)
    # Histories of strip-end measurements, only where there are any (a thousand
    # empty lists cost a garbage-collector pass on a tiny study).
    val_err = [[] for _ in range(K)] if X_val is not None else None
    val_epochs = [[] for _ in range(K)] if X_val is not None else None
    test_err = [[] for _ in range(K)] if X_test is not None else None
    best_val = np.full(K, np.inf)
    best_epoch = [None] * K
    best_rows = np.empty((K, C)) if X_val is not None else None
    last_rows = np.empty((K, C))          # each trial's weights when it stopped
    val_scale = 100.0 * o_range / (X_val.shape[0] * n_out) if X_val is not None else 0.0
    test_scale = 100.0 * o_range / (X_test.shape[0] * n_out) if X_test is not None else 0.0

    serial = None                          # the SerialTrials once the lanes handed off some
    in_lanes = np.ones(K, bool)            # trial i trains in the lanes (else in `serial`)
    overflowing = np.zeros(K, bool)        # trial i left the lanes as it might overflow
    sets = [a for a in (X, Y, X_val, Y_val, X_test, Y_test) if a is not None]
    w_safe = safe_weight(first.n_units, len(layers), max(a.shape[0] for a in sets),
                         max(max(float(a.max()), -float(a.min())) for a in sets))

    def rows_of(trials):
        trials = np.asarray(trials, dtype=np.intp)
        if serial is None:
            return lanes.rows(trials)
        out = np.empty((trials.size, C))
        mine = in_lanes[trials]
        if mine.any():
            out[mine] = lanes.rows(trials[mine])
        if not mine.all():
            out[~mine] = serial.rows(trials[~mine])
        return out

    def errors_of(Xs, Ts, which, idx):
        # SSE of the trials idx on a validation or test set, wherever they train
        if serial is None:
            return set_sse(Xs, Ts, lanes.slot[idx])
        out = np.empty(idx.size)
        mine = in_lanes[idx]
        if mine.any():
            out[mine] = set_sse(Xs, Ts, lanes.slot[idx[mine]])
        if not mine.all():
            out[~mine] = serial.sse(which, idx[~mine])
        return out

    def set_sse(Xs, Ts, rows):
        sse = np.empty(lanes.G * LANES)
        _trials.trials_sse(layers, n_in, Xs, Ts, lanes.w, work, sse)
        return sse[rows]

    def is_correct_for(i):
        def is_correct(r_c, analog):
            # The check of the single-network path, on trial i's weights.
            evaluation[i] += N * C
            net = nets[i]
            net.set_weights(rows_of([i])[0])
            outputs = net.predict(X)
            if not np.isfinite(outputs).all():
                raise diverged(epoch, "the network's outputs", trial=i)
            return bool(threshold_correct(outputs, Y, r_c=r_c, analog=analog).all())
        return is_correct

    def alone(out):
        # Trials `out` leave the lanes for the single-network kernels (_handoff).
        nonlocal serial
        if serial is None:
            serial = SerialTrials(nets, X, Y, X_val, Y_val, X_test, Y_test, block_size,
                                  blas_min, rprop_args)
        serial.take_from_lanes(lanes, out)
        in_lanes[out] = False
        s_out = lanes.slot[out]
        lanes.status[s_out] = np.maximum(lanes.status[s_out], 1)
        keep = ~stopped & in_lanes
        if keep.any():
            lanes.repack(keep)

    def finish(trials):
        # Trials that stop leave their weights here and are frozen in their lanes.
        trials = np.asarray(trials, dtype=np.intp)
        if trials.size:
            last_rows[trials] = rows_of(trials)
            s = lanes.slot[trials[in_lanes[trials]]]
            lanes.status[s] = np.maximum(lanes.status[s], 1)

    if lanes.largest() + max_epochs * params["delta_max"] < w_safe:
        w_safe = None                      # no trial can come near it in this run
    epoch = 0
    with single_threaded_blas():
        while epoch < max_epochs and not stopped.all():
            n = min(step - epoch % step, max_epochs - epoch)
            idx = np.flatnonzero(~stopped)            # the trials that train now
            if epoch + n > train_err.shape[1]:
                grown = np.zeros((train_err.shape[0],
                                  min(max_epochs, max(2 * train_err.shape[1], epoch + n))))
                grown[:, :epoch] = train_err[:, :epoch]
                train_err = grown
            mine = idx[in_lanes[idx]]
            # Trials whose numbers might overflow in this call train alone, as in
            # train_rprop (see fastnet._lanes.safe_weight); RPROP moves a weight by
            # at most delta_max per epoch. (All lanes at once first: one number.)
            reach = n * params["delta_max"]
            if mine.size and w_safe is not None and not lanes.largest() + reach < w_safe:
                out = mine[~(lanes.largest(mine) + reach < w_safe)]
                if out.size:
                    alone(out)
                    overflowing[out] = True
                    mine = idx[in_lanes[idx]]
            if handoff is not None:
                # The trials of the lanes' last group go on alone if they fill too
                # little of it; the others stay in full groups.
                rest = mine.size - LANES * max(0, -(-mine.size // LANES) - 1)
                if mine.size and lanes_fill(rest, LANES) < handoff:
                    alone(mine[mine.size - rest:])
            lanes_idx = idx[in_lanes[idx]]
            status = np.zeros(idx.size, np.int64)
            if lanes_idx.size:
                rows = lanes.slot[lanes_idx]
                in_place = lanes.in_place and serial is None
                sse = (train_err[:, epoch:epoch + n] if in_place
                       else np.empty((lanes.G * LANES, n)))
                _trials.trials_rprop(layers, n_in, X, Y, lanes.w, lanes.g, lanes.g_prev,
                                     lanes.dw_prev, lanes.step, lanes.last_error, lanes.status,
                                     work, *rprop_args, sse, check[0], check[1], check[2],
                                     sse_scale=scale)
                status[in_lanes[idx]] = lanes.status[rows]
                if not in_place:
                    train_err[lanes_idx, epoch:epoch + n] = sse[rows]
            if lanes_idx.size < idx.size:
                alone_idx = idx[~in_lanes[idx]]
                status_alone, sse = serial.run(alone_idx, n, check if kernel_check else None,
                                               scale)
                status[~in_lanes[idx]] = status_alone
                train_err[alone_idx, epoch:epoch + n] = sse
            if np.any(status > 0):
                k = int(np.flatnonzero(status > 0)[0])
                raise diverged(epoch + int(status[k]), trial=int(idx[k]))
            done = np.where(status < 0, -status, n)
            if epoch == 0:
                limits = growth_limit(train_err[:K, 0])
                lowest_limit = limits.min()
            if train_err[:K, epoch:epoch + n].max() > lowest_limit:   # (one pass; then which)
                check_growth_rows(train_err[idx, epoch:epoch + n], done, limits, epoch + 1,
                                  train_err[:K, 0], idx)
            epochs[idx] = epoch + done
            if kernel_check:
                evaluation[idx] += (done // strip) * N * C
                won = idx[status < 0]
                stopped[won] = fired[won] = True
                for i in won:
                    reasons[i] = stop.name
                finish(won)
            epoch += n
            if in_strips and not kernel_check:
                at_strip_end = epoch % strip == 0
                if X_val is not None and at_strip_end:
                    e_va = errors_of(X_val, Y_val, "val", idx) * val_scale
                    _check_finite(e_va, np.ones(idx.size, bool), epoch, "the validation error",
                                  idx)
                    evaluation[idx] += X_val.shape[0] * C
                    better = e_va < best_val[idx]
                    for i, e in zip(idx.tolist(), e_va.tolist()):
                        val_err[i].append(e)
                        val_epochs[i].append(epoch)
                    if better.any():
                        won = idx[better]
                        best_val[won] = e_va[better]
                        best_rows[won] = rows_of(won)
                        for i in won.tolist():
                            best_epoch[i] = epoch
                if X_test is not None and at_strip_end:
                    e_te = errors_of(X_test, Y_test, "test", idx) * test_scale
                    _check_finite(e_te, np.ones(idx.size, bool), epoch, "the test error", idx)
                    evaluation[idx] += X_test.shape[0] * C
                    for i, e in zip(idx.tolist(), e_te.tolist()):
                        test_err[i].append(e)
                ended = []
                for i in idx.tolist():
                    state = TrainingState(
                        epoch=epoch, strip=strip, train_errors=train_err[i, :epoch],
                        val_errors=np.asarray(val_err[i]) if X_val is not None else None,
                        val_epochs=np.asarray(val_epochs[i]) if X_val is not None else None,
                        test_errors=np.asarray(test_err[i]) if X_test is not None else None,
                        best_epoch=best_epoch[i], is_correct=is_correct_for(i))
                    crit = criteria[i]
                    if crit is not None and at_strip_end and crit.update(state):
                        reasons[i] = crit.fired or crit.name
                        fired[i] = True
                    if callback is not None and callback(i, epoch, state) and not fired[i]:
                        reasons[i] = "callback"
                        stopped[i] = True
                    if fired[i]:
                        stopped[i] = True
                    if stopped[i]:
                        ended.append(i)
                finish(ended)
            # Finished trials leave the lanes once the others fit in fewer groups.
            n_left = int(np.count_nonzero(~stopped & in_lanes))
            if n_left and n_left <= LANES * (lanes.G - 1):
                lanes.repack(~stopped & in_lanes)
    finish(np.flatnonzero(~stopped))

    warn_late(None if stop is None else stop.name, int(np.count_nonzero(~(fired | stopped))),
               K, max_epochs)

    # The returned networks: the relevant epoch's weights (lowest validation error).
    relevant = epochs.copy()
    if X_val is not None:
        has_best = np.array([b is not None for b in best_epoch])
        last_rows[has_best] = best_rows[has_best]
        relevant[has_best] = [b for b in best_epoch if b is not None]
    _trials.scatter_rows(last_rows, list(map(_WEIGHTS, nets)))
    G_final = -(-K // LANES)
    padded = np.zeros((G_final * LANES, C))
    padded[:K] = last_rows
    final_w = to_lanes(padded, G_final, C)

    def final(Xs, Ts):
        # Errors of the returned networks (after the clock, as in train_rprop).
        if Xs is None:
            return None
        # The kernel sums each trial's errors in a fixed order, so a trial's result
        # does not depend on how many trials share the call.
        sse = np.empty(G_final * LANES)
        _trials.trials_sse(layers, n_in, Xs, Ts, final_w, work, sse)
        e = 100.0 * o_range / Ts.size * sse[:K]
        alone_ = np.flatnonzero(overflowing)
        for i in alone_.tolist():        # their numbers as train_rprop computes them
            e[i] = 100.0 * o_range / Ts.size * Evaluator(nets[i], Xs, Ts, blas_min).sse()
        # finite weights can still overflow in the forward pass (inf - inf)
        _check_finite(e, np.ones(K, bool), epochs, "the error of the trained network")
        if Xs is X:          # the training set: the last update may have run away
            check_growth_rows(e[:, None], np.ones(K, np.intp), limits, relevant + 1,
                              train_err[:K, 0], np.arange(K))
        cls = None
        if classification:
            out = np.empty((G_final, Xs.shape[0], n_out, LANES))
            _trials.trials_outputs(layers, n_in, Xs, final_w, work, out)
            outs = out.transpose(0, 3, 1, 2).reshape(G_final * LANES, Xs.shape[0], n_out)[:K]
            for i in alone_.tolist():
                outs[i] = nets[i].predict(Xs)
            wrong = np.count_nonzero(np.argmax(outs, axis=2) != np.argmax(Ts, axis=1), axis=1)
            cls = 100.0 * wrong / Ts.shape[0]
        return SetColumns(e, cls, Ts.shape[0])

    finals = final(X, Y), final(X_val, Y_val), final(X_test, Y_test)
    setup = base_setup(
        first, algorithm=f"RPROP ({params['variant']}), epoch-batched",
        parameters={"eta_plus": params["eta_plus"], "eta_minus": params["eta_minus"],
                    "delta0": (list(params["delta0"]) if isinstance(params["delta0"], tuple)
                               else params["delta0"]),
                    "delta_min": params["delta_min"], "delta_max": params["delta_max"],
                    "preset": preset},
        stop=stop, strip=strip, max_epochs=max_epochs, target_range=target_range, seed=None,
        n_train=N, n_val=0 if X_val is None else X_val.shape[0],
        n_test=0 if X_test is None else X_test.shape[0],
        initialisation=(f"uniform in [-{params['init_scale']}, {params['init_scale']}] from "
                        "the seed" if params["init_scale"] is not None
                        else "weights of the network as given"),
        block_size=_trials.BLOCK)
    cpu, wall = time.process_time() - clocks[0], time.perf_counter() - clocks[1]
    shares = time_shares(epochs)
    setup["batch"] = batch_record("lanes" if handoff is None else "mixed", K, cpu, wall)
    return TrainResults._from_columns(nets, seeds, setup, epochs, reasons, train_err, val_err,
                                      val_epochs, test_err, relevant, finals, evaluation, N, C,
                                      cpu * shares, wall * shares)

