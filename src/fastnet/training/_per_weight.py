"""Quickprop (Fahlman 1988) and Adam (Kingma & Ba 2015): per-weight rules whose
epochs run inside the kernels, as RPROP's do.

The rules themselves are written once, in C (``fastnet/_kernels/_rules.h``);
this module checks their parameters, keeps each trial's state and hands whole
strips of epochs to the workspace (``fastnet._engine.Workspace``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastnet._kernels import _trials
from fastnet._validation import check_float, check_int
from fastnet.training._algorithms import KernelRule

__all__ = ["Quickprop", "Adam", "QUICKPROP_EPSILON"]

#: Quickprop's default gradient-descent factor epsilon. fastnet's gradient is
#: that of the summed (not mean) squared error, so the linear term grows with
#: the training-set size N: FANN's default (learning rate 0.7, divided by N, on
#: the gradient of half the error) is epsilon = 0.35 / N here. 1e-4 is that for
#: N of about 3500 and smaller for smaller sets: it trains Proben1's thyroid1
#: (N = 3600) and a 4096-pattern set with 10666 weights, where 1e-3 diverges
#: within 4 epochs. Scale it with 1/N.
QUICKPROP_EPSILON = 1e-4
#: Fahlman's (1988) maximum growth factor mu: a step is at most mu times the previous one.
QUICKPROP_MU = 1.75
#: Fahlman's (1988) weight decay, added to every weight's gradient as decay * w.
QUICKPROP_DECAY = 1e-4

#: Adam's defaults, Kingma & Ba (2015): step size alpha, moment decay rates
#: beta1 and beta2, and the epsilon that keeps the division finite.
ADAM_LEARNING_RATE, ADAM_BETA1, ADAM_BETA2, ADAM_EPSILON = 1e-3, 0.9, 0.999, 1e-8


class _QuickpropState:
    """One trial's Quickprop state: the previous step and descent slope of each weight."""

    __slots__ = ("s_prev", "d_prev")

    def __init__(self, n_connections):
        self.s_prev, self.d_prev = np.zeros(n_connections), np.zeros(n_connections)


@dataclass(frozen=True)
class Quickprop(KernelRule):
    """Quickprop (Fahlman 1988, as in his code), epoch-batched.

    Each weight jumps towards the minimum of the parabola through its last two
    slopes. With the descent slope d = -(g + decay w) of the epoch gradient g,
    the weight's previous step s and slope d' (both 0 at the start) and
    shrink = mu / (1 + mu): if s > threshold, step = (epsilon d if d > 0) +
    (mu s if d > shrink d', else s d / (d' - d)); if s < -threshold, the same
    with the inequalities on d reversed; otherwise step = epsilon d + momentum s.
    The quotient term is 0 where d' = d.

    Parameters
    ----------
    epsilon : float > 0, default 1e-4
        Gradient-descent factor of the linear term (on the summed squared
        error's gradient: scale it with 1/N; see ``QUICKPROP_EPSILON``).
    mu : float > 0, default 1.75
        Maximum growth factor: no step exceeds mu times the previous one.
    decay : float >= 0, default 1e-4
        Weight decay added to each slope (decay * w).
    threshold : float >= 0, default 0.0
        A previous step within [-threshold, threshold] counts as none: the
        weight takes a gradient step (with momentum) instead (FANN: 0.001).
    momentum : float in [0, 1), default 0.0
        Momentum of those gradient steps.

    Raises
    ------
    ValueError, TypeError
        For a parameter out of its range or not a real number, naming it.
    """

    epsilon: float = QUICKPROP_EPSILON
    mu: float = QUICKPROP_MU
    decay: float = QUICKPROP_DECAY
    threshold: float = 0.0
    momentum: float = 0.0

    code = _trials.RULE_QUICKPROP

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("epsilon", check_float(self.epsilon, "epsilon", low=0.0, low_open=True))
        put("mu", check_float(self.mu, "mu", low=0.0, low_open=True))
        put("decay", check_float(self.decay, "decay", low=0.0))
        put("threshold", check_float(self.threshold, "threshold", low=0.0))
        put("momentum", check_float(self.momentum, "momentum", low=0.0, high=1.0,
                                    high_open=True))

    def kernel_params(self):
        """The kernels' parameters: (epsilon, mu, decay, threshold, momentum)."""
        return (self.epsilon, self.mu, self.decay, self.threshold, self.momentum)

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs):
        """A trial's state in the single-network kernels from the lanes' arrays:
        the previous slope in ``g_prev``, the previous step in ``step``."""
        state = _QuickpropState(g_prev.shape[0])
        state.s_prev[:], state.d_prev[:] = step, g_prev
        return state

    def record(self):
        return ("Quickprop (Fahlman 1988), epoch-batched",
                {"epsilon": self.epsilon, "mu": self.mu, "decay": self.decay,
                 "threshold": self.threshold, "momentum": self.momentum})

    def start(self, n_connections, rng, max_epochs):
        return _QuickpropState(n_connections)

    def kernel_args(self, ws, state, n):
        return state.s_prev, state.d_prev, self.kernel_params()


class _AdamState:
    """One trial's Adam state: the moment estimates, the update count and the
    generator of the mini-batch order (None for full batches)."""

    __slots__ = ("m", "v", "t", "rng")

    def __init__(self, n_connections, rng):
        self.m, self.v = np.zeros(n_connections), np.zeros(n_connections)
        self.t = np.zeros(1, np.intp)
        self.rng = rng


@dataclass(frozen=True)
class Adam(KernelRule):
    """Adam (Kingma & Ba 2015): full batch, or shuffled mini-batches.

    Update t = 1, 2, ... of each weight, with g its gradient of the summed
    squared error, or of the run's objective (``loss``, ``weight_decay``; a
    mini-batch of b of the N patterns carries b / N of the decay), over the whole
    set or over one mini-batch:
    m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2,
    w -= learning_rate mhat / (sqrt(vhat) + epsilon), with the bias corrections
    mhat = m / (1 - beta1^t) and vhat = v / (1 - beta2^t).

    Parameters
    ----------
    learning_rate : float > 0, default 1e-3
        The step size alpha.
    beta1, beta2 : float in [0, 1), defaults 0.9 and 0.999
        Decay rates of the first and second moment estimates.
    epsilon : float > 0, default 1e-8
    batch_size : int >= 1 or None, default None
        None: one update per epoch on the whole training set. Otherwise each
        epoch presents the set in a fresh random order (drawn from the run's
        seed), cut into consecutive mini-batches of this many patterns (the
        last one shorter), one update each; the epoch's training error is the
        sum of the batches' errors, each measured before its update (as online
        backpropagation's).

    Raises
    ------
    ValueError, TypeError
        For a parameter out of its range or of the wrong type, naming it.
    """

    learning_rate: float = ADAM_LEARNING_RATE
    beta1: float = ADAM_BETA1
    beta2: float = ADAM_BETA2
    epsilon: float = ADAM_EPSILON
    batch_size: int | None = None

    code = _trials.RULE_ADAM

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("learning_rate", check_float(self.learning_rate, "learning_rate", low=0.0,
                                         low_open=True))
        for name in ("beta1", "beta2"):
            put(name, check_float(getattr(self, name), name, low=0.0, high=1.0, high_open=True))
        put("epsilon", check_float(self.epsilon, "epsilon", low=0.0, low_open=True))
        if self.batch_size is not None:
            put("batch_size", check_int(self.batch_size, "batch_size", minimum=1))

    @property
    def draws(self):
        return self.batch_size is not None

    @property
    def lanes(self):
        """Full-batch Adam has vector-lanes kernels."""
        return self.batch_size is None

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs):
        """A trial's state in the single-network kernels after ``epoch`` updates
        in the lanes: the first moment in ``g_prev``, the second in ``step``."""
        state = _AdamState(g_prev.shape[0], None)
        state.m[:], state.v[:], state.t[0] = g_prev, step, epoch
        return state

    def kernel_params(self):
        """The kernels' parameters: (learning_rate, beta1, beta2, epsilon)."""
        return (self.learning_rate, self.beta1, self.beta2, self.epsilon)

    def record(self):
        how = "full batch" if self.batch_size is None else f"mini-batches of {self.batch_size}"
        return (f"Adam (Kingma & Ba 2015), {how}",
                {"learning_rate": self.learning_rate, "beta1": self.beta1, "beta2": self.beta2,
                 "epsilon": self.epsilon, "batch_size": self.batch_size})

    def updates_per_epoch(self, n_train, n_connections):
        if self.batch_size is None:
            return n_connections
        return n_connections * -(-n_train // self.batch_size)

    def start(self, n_connections, rng, max_epochs):
        return _AdamState(n_connections, rng)

    def kernel_args(self, ws, state, n):
        if self.batch_size is None:
            order, batch = np.zeros((0, 0), dtype=np.intp), 1
        else:
            N = ws.A.shape[0]
            order, batch = np.empty((n, N), dtype=np.intp), self.batch_size
            for i in range(n):
                order[i] = state.rng.permutation(N)
        return state.m, state.v, state.t, self.kernel_params(), order, batch
