"""Many trials of one topology at once, any algorithm: the machinery under
:func:`fastnet.train_many` and :func:`fastnet.train_rprop_many`.

Timing studies train one topology from many initialisations on the same data
(Hamey 1992: hundreds of trials; Lawrence et al. 1997: distributions; Prechelt
1994: 60 runs per file). A study passes one network (the topology) and K trials
as arrays -- a seed, or a (K, C) array of initial weights -- or a list of
networks (each trial then equals :func:`fastnet.train` on its network). Narrow
networks fill no vector on their own, so the trials go side by side into the
lanes of one (:mod:`fastnet.training._lanes`); wide ones train one after another
in the single-network kernels (:mod:`fastnet.training._serial`), which already
fill the vectors; in between, trials train in lanes and those of a group that
early stopping has left too empty go on one at a time
(:mod:`fastnet.training._backends`). The one strip loop drives them all.
"""
from __future__ import annotations

import contextlib
import time

import numpy as np

from fastnet._kernels import _trials
from fastnet._netfile import MAX_WEIGHT, within_max_weight
from fastnet._validation import as_generator, check_seeds, refuse_complex
from fastnet.network import (DEFAULT_INIT_SCALE, DEFAULT_INIT_SCALE_LINEAR, MLP, draw_weights,
                             kernel_layers, weight_buffer)
from fastnet.training import _orders
from fastnet.training._algorithms import has_step_many, start_trial
from fastnet.training._backends import HANDOFF_FILL, Trials
from fastnet.training._checks import (check_algorithm_objective, check_run, check_sets,
                                     check_start, training_of)
from fastnet.training._draw import draw_trials
from fastnet.training._lanes import LANES as _LANES64, LanesBackend, lanes_per_group
from fastnet.training._loop import StripLoop, drop_history, train_queued
from fastnet.training._record import batch_record, setup_record, time_shares
from fastnet.training._results import TrainResults
from fastnet.training._scg_many import BatchedSCG, scg_loop, train_scg_batched
from fastnet.training._step_many import StepManyBackend, step_many_applies
from fastnet.training._serial import Serial
from fastnet.training._single import blas_held, initialisation

__all__ = ["many_trials", "METHODS", "LANES_MAX_WORK", "LANES_MAX_CONNECTIONS"]

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
#: trials on (see fastnet.training._backends).
LANES_MAX_CONNECTIONS = 6000

METHODS = ("auto", "lanes", "serial", "mixed")


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
    if (set(map(type, nets)) == {MLP} and len(set(map(id, map(kernel_layers, nets)))) == 1
            and len(set(map(id, nets))) == len(nets)):
        # Copies of one network share its layer table: one topology (checked in
        # C-level passes, as timing studies pass thousands of networks).
        return nets
    attrs = ("layer_sizes", "shortcut", "hidden_activation", "output_activation", "dtype")
    first = nets[0]
    table = kernel_layers(first) if isinstance(first, MLP) else None
    want = None
    for i, net in enumerate(nets):
        # Copies of one network share its layer table: the topology is the same.
        if type(net) is MLP and kernel_layers(net) is table:
            continue
        if not isinstance(net, MLP):
            raise TypeError(f"`nets[{i}]` must be a fastnet.MLP, got {type(net).__name__}.")
        if want is None:
            want = tuple(getattr(first, a) for a in attrs)
        if (net.layer_sizes, net.shortcut, net.hidden_activation, net.output_activation,
                net.dtype) != want:
            attr = next(a for a in attrs if getattr(net, a) != getattr(first, a))
            raise ValueError(
                f"`nets[{i}]` differs from `nets[0]` in {attr}: {getattr(net, attr)!r} "
                f"against {getattr(first, attr)!r}; train_rprop_many trains one topology.")
    if len(set(map(id, nets))) != len(nets):
        raise ValueError("`nets` holds the same network object twice; give each trial its own "
                         "(e.g. net.copy()).")
    return nets


def many_trials(nets, data, plan, n_trials, seed, initial_weights, seeds, options, method,
                clocks, extra=None, objective=("sse", 0.0), history=True):
    """The many-trials form of any algorithm (``plan.algorithm``): the start of
    each trial (array or list form), the checks, then the batch; ``objective``
    is (loss, weight_decay)."""
    if isinstance(nets, MLP):
        net, start = nets, _array_start(nets, plan, n_trials, seed, initial_weights, seeds)
        nets = seeds = None
    else:
        if n_trials is not None or initial_weights is not None or seed is not None:
            raise TypeError("`n_trials`, `seed` and `initial_weights` go with one network (the "
                            "topology); with a list of networks give `seeds`.")
        nets = _check_nets(nets)
        seeds = check_seeds(seeds, len(nets))
        net, start = nets[0], None
    sets = check_sets(net, *data)
    run = check_run(sets, plan.max_epochs, plan.strip, plan.stop, *options, net=net,
                    loss=objective[0], weight_decay=objective[1])
    check_algorithm_objective(plan.algorithm, run)
    with training_of(nets if nets is not None else [], "nets"):
        return _train_batch(net, nets, seeds, seed, start, plan, sets, run, method, extra,
                            clocks, history)


def _train_batch(net, nets, seeds, seed, start, plan, sets, run, method, extra, clocks,
                 history=True):
    """Draw (list form), choose the backends, run the loop, assemble the results."""
    if start is None:
        start = _list_start(nets, seeds, plan)
    start = _in_dtype(start, net.dtype)
    K = start[0].shape[0]
    if has_step_many(plan.algorithm) and not plan.algorithm.lanes:
        # (a user's rule over all trials at once: the batch in one call per epoch)
        applies = step_many_applies(net, plan.algorithm, sets, run)
        if method == "lanes" and not applies:
            raise ValueError(
                f"`method` 'lanes' trains {type(plan.algorithm).__name__}.step_many on the lanes' "
                "gradients of the summed squared error: not with another loss, weight decay, "
                "softmax outputs or a layer table the lanes do not take; give method='auto' or "
                "'serial'.")
        if method not in ("auto", "serial", "lanes"):
            raise ValueError(f"`method` must be 'auto', 'lanes' or 'serial' for "
                             f"{type(plan.algorithm).__name__}, got {method!r}.")
        method = "lanes" if applies and method != "serial" else "serial"
    elif not plan.algorithm.lanes:
        if method not in ("auto", "serial"):
            raise ValueError(f"`method` must be 'auto' or 'serial' for {type(plan.algorithm).__name__}"
                             f" (it has no vector-lanes kernels), got {method!r}.")
        method = "serial"
    elif method == "auto":
        method = _auto_method(sets.X.shape[0], net.n_connections, K, lanes_per_group(net.dtype))
    if not _lanes_take(net, run) or (method != "serial" and _draw_in_lanes(plan.algorithm)
                                     and not _orders.distinct(start[1])):
        # (online trials that share a generator, given as one Generator in the list
        # form's seeds, would draw from it in another interleaving in the lanes)
        method = "serial"
    # The list form's networks: an exception leaves each the weights of its last
    # strip end the loop took in (`StripLoop.safe`); the array form has none.
    keep = nets is not None
    store = None if nets is None else (lambda w: _scatter(w, nets))
    loop = None
    try:
        # (SCG's trials all at once where the study allows: see _scg_many)
        loop = (scg_loop(net, plan.algorithm, sets, run, start[0], history, keep=keep)
                if method == "serial" else None)
        if loop is None:
            trials, rows = _backends(method, net, nets, plan.algorithm, sets, run, *start)
            loop = StripLoop(trials, K, net, plan.algorithm, sets, run, rows, keep=keep)
        trials = loop.trials
        times = np.empty((2, K))                # (each trial's share, filled in below)
        # (once for the batch: the loop's own nest cheaply; the lanes call no BLAS)
        with blas_held(net, plan.algorithm, sets, run) if method != "lanes" else contextlib.nullcontext():
            queued = train_queued(loop, history)
            if queued is None:
                queued = train_scg_batched(loop, history)
            if not queued:
                if queued is False:     # (near overflow in the queue or the batch: the strips)
                    trials, rows = _backends(method, net, nets, plan.algorithm, sets, run, *start)
                    loop = StripLoop(trials, K, net, plan.algorithm, sets, run, rows, keep=keep)
                loop.train()
            if not history:
                drop_history(loop)
            columns = loop.columns(times, stacklevel=5, store=store)
        setup = setup_record(
            net, plan.algorithm, run, sets, seed=None if nets is not None else seed,
            initialisation=start[2], block_size=trials.block_size, extra=extra)
        cpu, wall = time.process_time() - clocks[0], time.perf_counter() - clocks[1]
        setup["batch"] = batch_record(method, K, cpu, wall, trials,
                                      queued=bool(queued) and not isinstance(trials, BatchedSCG))
        np.multiply(time_shares(columns.epochs), cpu, out=times[0])
        np.multiply(time_shares(columns.epochs), wall, out=times[1])
        return TrainResults._of(columns, nets, net, seeds, setup)
    except BaseException:
        # (before the loop: the start's weights, already in the networks)
        if store is not None:
            store(loop.safe if loop is not None else start[0])
        raise


def _in_dtype(start, dtype):
    """The start (weights, steps or generators, words) with its arrays in ``dtype`` (the
    network's): weights and steps are drawn in float64 and rounded once, so one seed
    draws the same trials, rounded, in both dtypes."""
    W, steps, how = start
    if isinstance(steps, np.ndarray):
        steps = steps.astype(dtype, copy=False)
    if W.dtype != dtype:
        with np.errstate(over="ignore"):      # (initial_weights beyond float32: inf, refused below)
            W = W.astype(dtype)
        if not np.isfinite(W).all():
            k, c = np.argwhere(~np.isfinite(W))[0]
            raise ValueError(f"`initial_weights` must lie within the {dtype} range of the network "
                             f"(magnitude at most {float(np.finfo(dtype).max):g}), got a weight "
                             f"beyond it in row {k}, column {c}.")
    return W, steps, how


def _lanes_take(net, run):
    """Whether the lanes can train this network and objective: not softmax outputs,
    nor an objective other than the summed squared error (those train serially)."""
    return net.output_activation != "softmax" and run.squared_error


def _auto_method(n_train, n_connections, n_trials, LANES=_LANES64):
    """The method "auto" stands for (see train_rprop_many); ``LANES`` trials per group."""
    if n_train * n_connections <= LANES_MAX_WORK:
        return "lanes"
    if n_connections <= LANES_MAX_CONNECTIONS and n_trials >= LANES * HANDOFF_FILL:
        return "mixed"          # (at least one group of lanes filled to HANDOFF_FILL)
    return "serial"


def _array_start(net, plan, n_trials, seed, initial_weights, seeds):
    """(weights (K, C), steps (K, C) or (1, C), initialisation words) of the array form."""
    if seeds is not None:
        raise TypeError("`seeds` goes with a list of networks; with one network (the "
                        "topology) give `n_trials` and `seed`, or `initial_weights`.")
    algorithm, C = plan.algorithm, net.n_connections
    if initial_weights is None:
        if n_trials is None:
            raise TypeError("with one network (the topology) give `n_trials` (and `seed`) or "
                            "`initial_weights`; for one run use train_rprop.")
        scale = plan.init_scale if plan.init_scale is not None or plan.init != "uniform" else (
            DEFAULT_INIT_SCALE if net.hidden else DEFAULT_INIT_SCALE_LINEAR)
        how = initialisation(scale, "per trial, all K x C drawn from the seed in one call",
                             plan.init)
        if not _has_steps(algorithm):
            rng = as_generator(seed)
            W, _ = draw_trials(net, n_trials, rng, plan.init_scale, init=plan.init)
            return W, (rng.spawn(W.shape[0]) if algorithm.draws else None), how
        W, steps = draw_trials(net, n_trials, seed, plan.init_scale, algorithm.delta0,
                               init=plan.init)
        return W, (steps if steps is not None else algorithm.initial_steps(None, (1, C))), how
    if n_trials is not None:
        raise TypeError("give `n_trials` or `initial_weights`, not both.")
    if plan.draws_weights:
        what = "init_scale" if plan.init_scale is not None else "init"
        raise TypeError(f"`{what}` would have no effect: `initial_weights` are used as given.")
    W = _check_weights(initial_weights, C)
    drawn = algorithm.draws
    if seed is not None and not drawn:
        check_start(net, seed, drawn=False)            # raises: the seed would draw nothing
    if net.hidden:
        zero = np.flatnonzero(~W.any(axis=1))
        if zero.size:
            raise ValueError(f"`initial_weights[{int(zero[0])}]` is all zeros: the hidden units "
                             "cannot break symmetry and the trial would not learn.")
    how = "weights given as initial_weights"
    if not _has_steps(algorithm):
        return W, (as_generator(seed).spawn(W.shape[0]) if drawn else None), how
    steps = algorithm.initial_steps(as_generator(seed) if drawn else None,
                                    (W.shape[0] if drawn else 1, C))
    return W, steps, how


def _check_weights(W, C):
    """``initial_weights`` as a C-contiguous float64 (K, C) array of weights that
    MLP.set_weights would take (finite, within MAX_WEIGHT)."""
    refuse_complex(W, "initial_weights")
    try:
        W = np.array(W, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise TypeError("`initial_weights` must be a (K, C) array of numbers, got "
                        f"{type(W).__name__}.") from None
    if W.ndim != 2 or W.shape[1] != C or W.shape[0] < 1:
        raise ValueError(f"`initial_weights` must have shape (K, {C}) with K >= 1 (one row per "
                         f"trial, one column per connection), got shape {W.shape}.")
    if not within_max_weight(W):
        k, c = np.argwhere(~(np.abs(W) <= MAX_WEIGHT))[0]
        raise ValueError("`initial_weights` must be finite with magnitude at most MAX_WEIGHT = "
                         f"{MAX_WEIGHT:g}, as MLP.set_weights takes, got {float(W[k, c])!r} in row "
                         f"{k}, column {c}.")
    return W


def _list_start(nets, seeds, plan):
    """(weights (K, C), steps, initialisation words) of the list form: each trial
    drawn from its own seed as train_rprop draws it (the checks of check_start
    included)."""
    algorithm, init = plan.algorithm, plan.init_scale
    redraw = plan.draws_weights
    K, C = len(nets), nets[0].n_connections
    flat = np.empty((K, C), nets[0].dtype)
    if not _has_steps(algorithm):
        # each trial drawn as fastnet.train draws it: weights, then the rule's own draws
        drawn, gens = redraw or algorithm.draws, []
        for net, seed in zip(nets, seeds):
            rng = as_generator(seed) if drawn else None
            if redraw:
                draw_weights(net, rng, init, init=plan.init)
            check_start(net, seed, drawn)
            gens.append(rng)
        _gather(nets, flat)
        return flat, gens, initialisation(init, init=plan.init)
    if not redraw and not algorithm.draws:
        # nothing to draw: each trial starts from its network's own weights
        for net, seed in zip(nets, seeds):
            if seed is not None:
                check_start(net, seed, drawn=False)       # raises
        _gather(nets, flat)
        if nets[0].hidden:
            zero = np.flatnonzero(~flat.any(axis=1))
            if zero.size:
                check_start(nets[int(zero[0])], None, drawn=False)   # raises
        return flat, algorithm.initial_steps(None, (1, C)), initialisation(None)
    steps = np.empty((K, C))
    for k, (net, seed) in enumerate(zip(nets, seeds)):
        rng = as_generator(seed)
        if redraw:
            draw_weights(net, rng, init, init=plan.init)
        check_start(net, seed, True)
        steps[k] = algorithm.initial_steps(rng, C)
    _gather(nets, flat)
    return flat, steps, initialisation(init, init=plan.init)


def _gather(nets, out):
    """The networks' weights into the rows of ``out`` (of their dtype; the kernel's
    C-level copy for float64, thousands of networks in a study)."""
    if out.dtype == np.float64:
        _trials.gather_rows(list(map(weight_buffer, nets)), out)
    else:
        for row, net in zip(out, nets):
            row[:] = weight_buffer(net)


def _scatter(rows, nets):
    """The rows of ``rows`` into the networks' own weights (as `_gather`, the other way)."""
    if rows.dtype == np.float64:
        _trials.scatter_rows(rows, list(map(weight_buffer, nets)))
    else:
        for row, net in zip(rows, nets):
            weight_buffer(net)[:] = row


def _draw_in_lanes(algorithm):
    """Whether ``algorithm``'s trials draw from their own generators in the lanes'
    kernel (online backpropagation's orders): the start then gives each trial's
    generator in place of steps."""
    return algorithm.lanes and algorithm.draws and not _has_steps(algorithm)


def _has_steps(algorithm):
    """Whether the lanes start ``algorithm``'s trials from initial steps (RPROP's
    Delta0, drawn with the weights); the other rules start from zeros, and their
    trials start as :func:`fastnet.train` starts them."""
    return algorithm.lanes and hasattr(algorithm, "initial_steps")


def _backends(method, net, nets, algorithm, sets, run, W, steps, _how):
    """The `Trials` of ``method`` holding the K trials of initial weights ``W``
    and steps, and the rows of the training-error history."""
    K, C = W.shape

    def vector(i, w):
        # where trial i trains in the single-network kernels
        if nets is not None:
            own = weight_buffer(nets[i])
            own[:] = w
            return own
        return np.array(w, dtype=net.dtype)

    def serial():
        return Serial(net, algorithm, sets, run, vector=vector)

    if method == "lanes" and not algorithm.lanes:           # (a step_many rule: all at once)
        return StepManyBackend(net, algorithm, sets, run, W), K
    if not _has_steps(algorithm) and (not algorithm.lanes or method == "serial"):
        # ``steps``: each trial's generator of the rule's own draws, or None
        backend = serial()
        for i in range(K):
            backend.add(i, vector(i, W[i]), start_trial(
                algorithm, C, None if steps is None else steps[i], run.max_epochs, net.dtype))
        return Trials(K, serial=backend), K
    if method == "serial":
        backend = serial()
        for i in range(K):
            backend.add(i, vector(i, W[i]),
                        algorithm.state(np.zeros(C), steps[i if steps.shape[0] > 1 else 0],
                                        np.inf).to_dtype(net.dtype))
        return Trials(K, serial=backend), K
    lanes = LanesBackend(net, algorithm, sets, run, W, steps if _has_steps(algorithm) else None,
                         generators=steps if _draw_in_lanes(algorithm) else None)
    handoff = HANDOFF_FILL if method == "mixed" else None
    return Trials(K, lanes=lanes, make_serial=serial, handoff=handoff), lanes.groups * lanes.L
