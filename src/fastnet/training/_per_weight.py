"""Quickprop (Fahlman 1988) and Adam (Kingma & Ba 2015): per-weight rules whose
epochs run inside the kernels, as RPROP's do.

The rules themselves are written once, in C (``fastnet/_kernels/_rules.h``);
this module checks their parameters, keeps each trial's state and hands whole
strips of epochs to the workspace (``fastnet._engine.Workspace``).
"""
from __future__ import annotations

import numpy as np

from fastnet.training._algorithms import KernelRule
from fastnet.training._registry import Param, rule

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


@rule("quickprop", kernel="quickprop", params=(
    Param("epsilon", QUICKPROP_EPSILON, low=0.0, low_open=True),
    Param("mu", QUICKPROP_MU, low=0.0, low_open=True),
    Param("decay", QUICKPROP_DECAY, low=0.0),
    Param("threshold", 0.0, low=0.0),
    Param("momentum", 0.0, low=0.0, high=1.0, high_open=True)))
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

    TITLE = "Quickprop (Fahlman 1988), epoch-batched"


@rule("adam", kernel="adam", params=(
    Param("learning_rate", ADAM_LEARNING_RATE, low=0.0, low_open=True),
    Param("beta1", ADAM_BETA1, low=0.0, high=1.0, high_open=True),
    Param("beta2", ADAM_BETA2, low=0.0, high=1.0, high_open=True),
    Param("epsilon", ADAM_EPSILON, low=0.0, low_open=True),
    Param("batch_size", None, kind=int, low=1, optional=True)))
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

    @property
    def draws(self):
        return self.batch_size is not None

    @property
    def lanes(self):
        """Full-batch Adam has vector-lanes kernels."""
        return self.batch_size is None

    @property
    def TITLE(self):
        how = "full batch" if self.batch_size is None else f"mini-batches of {self.batch_size}"
        return f"Adam (Kingma & Ba 2015), {how}"

    def updates_per_epoch(self, n_train, n_connections):
        if self.batch_size is None:
            return n_connections
        return n_connections * -(-n_train // self.batch_size)

    def kernel_args(self, ws, state, n):
        args = super().kernel_args(ws, state, n)
        if self.batch_size is None:
            return args
        N = ws.A.shape[0]
        order = np.empty((n, N), dtype=np.intp)
        for i in range(n):
            order[i] = state.rng.permutation(N)
        return args._replace(order=order, batch=self.batch_size)
