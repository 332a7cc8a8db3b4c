"""The checks every trainer shares: data sets, run options, the start of a run.

Each returns what it checked, coerced, as a typed object (no dicts).
"""
from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fastnet._engine import DEFAULT_BLAS_MIN
from fastnet._validation import as_generator, check_choice, check_float, check_int, check_pair
from fastnet._in_training import training_of  # noqa: F401 (re-exported)
from fastnet.measures import is_one_hot
from fastnet.network import MLP, weight_buffer
from fastnet.stopping import StoppingCriterion

__all__ = ["Sets", "RunOptions", "LOSSES", "MAX_TARGET", "check_one_run", "check_sets", "check_run",
           "check_objective",
           "check_algorithm_objective",
           "check_target_range", "check_start", "check_callback", "resolve_classification",
           "training_of"]

#: Training objectives and their kernel codes (``_kernels/_constants.h``).
LOSSES = {"sse": 0, "cross_entropy": 1}
#: Output activations whose values are probabilities, as cross-entropy needs.
PROBABILITY_OUTPUTS = ("softmax", "logistic")


@dataclass(frozen=True)
class Sets:
    """The checked data of a run: C-contiguous matrices of the network's dtype (None where
    absent), converted once, before training."""

    X: np.ndarray
    Y: np.ndarray
    X_val: np.ndarray | None = None
    Y_val: np.ndarray | None = None
    X_test: np.ndarray | None = None
    Y_test: np.ndarray | None = None

    @property
    def n_val(self):
        return 0 if self.X_val is None else self.X_val.shape[0]

    @property
    def n_test(self):
        return 0 if self.X_test is None else self.X_test.shape[0]


@dataclass(frozen=True)
class RunOptions:
    """How the strip loop runs, whatever the algorithm (checked)."""

    max_epochs: int
    strip: int
    stop: StoppingCriterion | None
    target_range: tuple[float, float]
    classification: bool
    block_size: int | None
    blas_min: int
    callback: Callable | None = None
    loss: str = "sse"
    weight_decay: float = 0.0

    @property
    def objective(self):
        """The kernels' (loss code, weight decay)."""
        return LOSSES[self.loss], self.weight_decay

    @property
    def squared_error(self):
        """Whether the training objective is the plain summed squared error."""
        return self.loss == "sse" and self.weight_decay == 0.0

    def scale(self, n_patterns, n_out):
        """The factor from a summed squared error to Proben1's squared error percentage."""
        return 100.0 * (self.target_range[1] - self.target_range[0]) / (n_patterns * n_out)



#: Largest magnitude of `target_range`'s bounds: the squared error percentage is the
#: width times summed squares that grow with the width squared, so it cannot overflow
#: below 1e100 (1e300 %), while (-1e307, 1e307) overflowed and was taken for divergence.
MAX_TARGET = 1e100


def check_target_range(target_range):
    """(o_min, o_max) as floats with a finite, positive width o_max - o_min, each at
    most MAX_TARGET in magnitude."""
    try:
        o_min, o_max = map(float, target_range)
    except OverflowError:  # an int beyond float's range
        raise ValueError("`target_range` must be finite with 0 < o_max - o_min < inf, got an "
                         "integer beyond float range.") from None
    except (TypeError, ValueError):
        raise TypeError(f"`target_range` must be a pair of numbers (o_min, o_max), got "
                        f"{target_range!r}.") from None
    width = o_max - o_min
    if not (math.isfinite(o_min) and math.isfinite(o_max) and math.isfinite(width) and width > 0):
        raise ValueError(f"`target_range` must be finite with 0 < o_max - o_min < inf, got "
                         f"{target_range!r}, whose width o_max - o_min is {width}.")
    if max(abs(o_min), abs(o_max)) > MAX_TARGET:
        raise ValueError(f"`target_range` must lie within +-{MAX_TARGET:g} (MAX_TARGET: the "
                         f"squared error percentage would overflow beyond), got "
                         f"{target_range!r}.")
    return o_min, o_max


def check_start(net, seed, drawn, weights=True):
    """Refuse a run that would silently ignore ``seed`` or start from all zeros.

    ``drawn`` says whether the trainer draws anything from ``seed`` (initial
    weights with ``init_scale``, RPROP's per-weight initial steps, online
    backpropagation's presentation order); ``weights``: check the network's
    weights (False where they are about to be drawn).
    """
    if seed is not None and not drawn:
        as_generator(seed)   # a malformed seed is named as such first
        raise ValueError(
            "`seed` would have no effect: the network's own weights are used (no "
            "`init_scale`) and nothing else is drawn. Pass `init_scale` to re-initialise "
            "the weights from `seed`, or give the seed when building the network "
            "(MLP(..., seed=...)) and drop it here.")
    if weights and net.hidden and not np.count_nonzero(weight_buffer(net)):   # (all zero)
        raise ValueError(
            "`net` has all weights zero: its hidden units cannot break symmetry and it would "
            "not learn. Pass `init_scale` (with a `seed`), or call net.init_weights(seed).")


def check_callback(callback):
    if callback is not None and not callable(callback):
        raise TypeError(f"`callback` must be callable or None, got {callback!r}.")
    return callback


def check_sets(net, X, Y, X_val, Y_val, X_test, Y_test):
    """The training, validation and test sets checked against ``net``'s sizes."""
    if not isinstance(net, MLP):
        raise TypeError(f"`net` must be a fastnet.MLP, got {type(net).__name__}.")
    X, Y = check_pair(X, Y, "X", "Y", net.n_in, net.n_out, dtype=net.dtype)
    if (X_val is None) != (Y_val is None):
        raise ValueError("give both `X_val` and `Y_val`, or neither.")
    if (X_test is None) != (Y_test is None):
        raise ValueError("give both `X_test` and `Y_test`, or neither.")
    if X_val is not None:
        X_val, Y_val = check_pair(X_val, Y_val, "X_val", "Y_val", net.n_in, net.n_out,
                                  dtype=net.dtype)
    if X_test is not None:
        X_test, Y_test = check_pair(X_test, Y_test, "X_test", "Y_test", net.n_in, net.n_out,
                                    dtype=net.dtype)
    return Sets(X, Y, X_val, Y_val, X_test, Y_test)


def check_objective(net, Y, loss, weight_decay):
    """(loss, weight_decay) checked against the network's outputs and the targets ``Y``
    (None: not checked)."""
    loss = check_choice(loss, "loss", LOSSES)
    weight_decay = check_float(weight_decay, "weight_decay", low=0.0) + 0.0   # -0.0 -> 0.0
    if loss == "cross_entropy":
        if net.output_activation not in PROBABILITY_OUTPUTS:
            raise ValueError(
                "`loss`='cross_entropy' needs outputs that are probabilities, "
                "output_activation 'softmax' (one class per example) or 'logistic' "
                f"(independent binary outputs), got output_activation="
                f"{net.output_activation!r}. Build the network with output_activation="
                "'softmax' or 'logistic', or train it with loss='sse'.")
        if Y is not None and Y.size and (Y.min() < 0.0 or Y.max() > 1.0):
            raise ValueError(f"`Y` must lie in [0, 1] for loss='cross_entropy' (targets are "
                             f"probabilities), got values in [{Y.min()}, {Y.max()}].")
    return loss, weight_decay


def check_algorithm_objective(algorithm, run):
    """Refuse an objective other than the SSE for a rule that trains the SSE only."""
    if not run.squared_error and not algorithm.objectives:
        raise ValueError(
            f"`loss` and `weight_decay` must be 'sse' and 0 for {algorithm.record()[0]}, which "
            f"trains the summed squared error only, got loss={run.loss!r}, "
            f"weight_decay={run.weight_decay!r}.")


def check_run(sets, max_epochs, strip, stop, target_range, classification, block_size,
              blas_min, callback=None, *, net=None, loss="sse", weight_decay=0.0):
    """The loop's options checked (``stop`` a criterion object or None); the
    objective (``loss``, ``weight_decay``) against ``net``, if given."""
    max_epochs = check_int(max_epochs, "max_epochs", minimum=1)
    strip = check_int(strip, "strip", minimum=1)
    if stop is not None and not isinstance(stop, StoppingCriterion):
        raise TypeError(f"`stop` must be a fastnet.stopping criterion or None, got {stop!r}.")
    if stop is not None and stop.needs_validation and sets.X_val is None:
        raise ValueError(f"stopping criterion {stop.name} needs a validation set; pass `X_val`, `Y_val`.")
    target_range = check_target_range(target_range)
    check_callback(callback)
    if block_size is not None:
        block_size = check_int(block_size, "block_size", minimum=1)
    # (the kernels take a C ssize_t: any larger value would only mean "never BLAS")
    blas_min = (DEFAULT_BLAS_MIN if blas_min is None
                else check_int(blas_min, "blas_min", minimum=0, maximum=sys.maxsize))
    if net is not None:
        loss, weight_decay = check_objective(net, sets.Y, loss, weight_decay)
    return RunOptions(max_epochs, strip, stop, target_range,
                     resolve_classification(classification, sets.Y), block_size, blas_min,
                     callback, loss, weight_decay)


def resolve_classification(classification, Y):
    """``classification`` (True, False or "auto": targets one-hot) as a bool."""
    if isinstance(classification, str):
        if classification != "auto":
            raise ValueError(f"`classification` must be True, False or 'auto', got "
                             f"{classification!r}.")
        return is_one_hot(Y)
    if not isinstance(classification, (bool, np.bool_)):
        raise TypeError(f"`classification` must be True, False or 'auto', got "
                        f"{type(classification).__name__} {classification!r}.")
    return bool(classification)


def check_one_run(net, algorithm, data, *, max_epochs, stop, strip, init_scale, seed,
                  target_range, classification, callback, block_size, blas_min, loss,
                  weight_decay):
    """Everything a run of one network is checked for, at its door: the data sets,
    the run's options, the algorithm against the objective and the start (the seed
    draws something; a network that is not drawn has a non-zero weight). Returns the
    checked ``(sets, run)``; below the door nothing is checked again."""
    sets = check_sets(net, *data)
    run = check_run(sets, max_epochs, strip, stop, target_range, classification, block_size,
                    blas_min, callback, net=net, loss=loss, weight_decay=weight_decay)
    check_algorithm_objective(algorithm, run)
    drawn = init_scale is not None or algorithm.draws
    # (a malformed seed the trainer names as it makes its generator, before any draw;
    # weights drawn with an init_scale > 0 are never all zero: the zero check is the
    # network's own weights')
    check_start(net, seed, drawn, weights=init_scale is None)
    return sets, run
