"""Epoch-batched RPROP training (Riedmiller & Braun 1993) and Proben1's set-ups (Prechelt 1994).

Parameter names follow the paper's symbols. FANN names the same things
``rprop_increase_factor`` (eta_plus), ``rprop_decrease_factor`` (eta_minus),
``rprop_delta_min`` (delta_min), ``rprop_delta_max`` (delta_max) and
``rprop_delta_zero`` (delta0); FANN's RPROP is iRPROP- with extra quirks (a
1e-4 floor on the previous step, weights clipped to +-1500) that fastnet does
not copy.
"""
from __future__ import annotations

from collections.abc import Callable

from fastnet._docstrings import TRAIN_ONE_NET, fill
from fastnet._typing import ArrayLike, Seed
from fastnet.network import MLP
from fastnet.stopping import StoppingCriterion, TrainingState
from fastnet.training._plans import UNSET, resolve_rprop
from fastnet.training._results import TrainResult
from fastnet.training._train import train_checked

__all__ = ["train_rprop"]


#: An argument left out (the preset's value, else the documented default).
_UNSET = UNSET


@fill(train_one_net=TRAIN_ONE_NET)
def train_rprop(net: MLP, X: ArrayLike, Y: ArrayLike, X_val: ArrayLike | None = None,
                Y_val: ArrayLike | None = None, *, X_test: ArrayLike | None = None,
                Y_test: ArrayLike | None = None, preset: str | None = None,
                variant: str = _UNSET, eta_plus: float = _UNSET, eta_minus: float = _UNSET,
                delta0: float | tuple[float, float] = _UNSET, delta_min: float = _UNSET,
                delta_max: float = _UNSET, max_epochs: int = _UNSET,
                stop: StoppingCriterion | None = _UNSET, strip: int = _UNSET,
                init_scale: float | None = _UNSET, seed: Seed = None,
                target_range: tuple[float, float] = (0.0, 1.0),
                classification: bool | str = "auto",
                callback: Callable[[int, TrainingState], bool | None] | None = None,
                block_size: int | None = None, blas_min: int | None = None,
                loss: str = "sse", weight_decay: float = 0.0) -> TrainResult:
    r"""Train ``net`` in place with epoch-batched RPROP.

    One update per epoch from the gradient of the summed squared error
    E = sum_p sum_i (o_pi - t_pi)^2 over the whole training set (or of the
    objective chosen by ``loss`` and ``weight_decay``).

    Parameters
    ----------
    net : MLP
        Trained in place; with a validation set it ends at the weights of the
        relevant epoch (lowest validation error).
    X, Y : array-like of shape (n_patterns, n_in) and (n_patterns, n_out)
        Training set.
    X_val, Y_val : array-like, optional
        Validation set, measured at every strip end (early stopping).
    X_test, Y_test : array-like, optional
        Test set, measured at strip ends for plots only (no criterion reads it),
        and for the final errors.
    preset : {"proben1-linear", "proben1-multilayer", "proben1-multilayer-literal"}, optional
        Proben1's set-ups (Prechelt 1994): sets every parameter below, the
        initial weight range and the stopping rule (see `PRESETS`). Explicit
        arguments override it.
    variant : {"rprop+", "rprop-", "irprop-", "irprop+"}, default "rprop+"
        rprop+ backtracks on a sign change (Proben1); rprop- does not; irprop-
        skips the step and forgets the gradient; irprop+ backtracks only if the
        epoch error rose.
    eta_plus, eta_minus : float, defaults 1.2 and 0.5
        Step growth and shrink factors, 0 < eta_minus < 1 < eta_plus.
    delta0 : float or (lo, hi), default 0.1
        Initial step; a range is drawn uniformly per weight from ``seed``.
    delta_min, delta_max : float, defaults 0.0 and 50.0
        Step bounds, 0 <= delta_min <= delta_max.
    max_epochs : int, default 100
        Hard limit on the epochs trained.
    stop : StoppingCriterion or None, default None
        Evaluated at every strip end (see :mod:`fastnet.stopping`). None trains
        exactly ``max_epochs`` epochs.
    strip : int, default 5
        Strip length k.
    init_scale : float or None, default None
        If given, the weights are first drawn uniformly from
        [-init_scale, init_scale] with ``seed``; if None the network's weights are
        used as they are.
    seed : None, int, SeedSequence or Generator
        Source of the initial weights (with ``init_scale``) and of per-weight
        ``delta0`` draws. One integer reproduces a run bit for bit.
    target_range : (o_min, o_max), default (0.0, 1.0)
        Range of the target representation for the squared error percentage
        (finite, o_min < o_max, within +-``MAX_TARGET`` = 1e100 of
        :mod:`fastnet.training`).
    classification : bool or "auto", default "auto"
        Whether to report classification errors; "auto" means "targets are one-hot".
    callback : callable, optional
        ``callback(epoch, state)`` after every strip (``state`` is a
        :class:`fastnet.stopping.TrainingState`); returning True stops training
        with stop_reason "callback". An exception it raises (or Ctrl-C) ends
        training and propagates; ``net`` then holds the weights of the last
        strip end (see :func:`fastnet.train`).
    block_size : int, optional
        Patterns per cache block (default: from the network size). Results
        depend on it only through floating-point summation order.
    blas_min : int, optional
        Layer products with m*n*k below this use plain loops instead of BLAS.
    loss : {"sse", "cross_entropy"}, default "sse"
        The training objective E. ``"sse"``: the summed squared error
        sum_p sum_i (o_pi - t_pi)^2 (Proben1). ``"cross_entropy"``: with softmax
        outputs -sum_p sum_i t_pi log o_pi, with logistic outputs the binary
        cross-entropy of each output; needs targets in [0, 1] (see the guide's
        section "Objectives").
    weight_decay : float >= 0, default 0.0
        L2 weight decay lambda: the rule minimises E + lambda * sum w^2 over every
        weight and bias. ``train_error`` records this objective (scaled as the
        squared error percentage); the final errors stay Proben1's measures.

    {{train_one_net}}

    See Also
    --------
    train_backprop : plain backpropagation with momentum.
    fastnet.stopping : GL, PQ, UP and the other criteria.

    Notes
    -----
    For each weight with step Delta, previous gradient g' and previous change dw'
    (rprop+): if g' g > 0, Delta <- min(Delta eta_plus, delta_max) and
    w <- w - sign(g) Delta; if g' g < 0, Delta <- max(Delta eta_minus, delta_min),
    w <- w - dw' (backtrack) and g' <- 0; if g' g = 0, w <- w - sign(g) Delta.

    One network takes one trainer at a time. ``net.predict`` from another
    thread while ``net`` trains is allowed and sees the weights of some epoch
    in progress, possibly partly updated (the kernels update them in place);
    read the trained network from the result once this returns.

    References
    ----------
    Riedmiller, M. & Braun, H. (1993). A direct adaptive method for faster
    backpropagation learning: the RPROP algorithm. Proc. IEEE ICNN, 586-591.
    Igel, C. & Hüsken, M. (2000). Improving the Rprop learning algorithm. Proc.
    NC 2000, 115-121.
    Prechelt, L. (1994). Proben1. Technical Report 21/94, Universität Karlsruhe.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, train_rprop
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> net = MLP(2, (2,), 1, shortcut=False, output_activation="logistic")
    >>> result = train_rprop(net, X, Y, max_epochs=200, init_scale=0.5, seed=1)
    >>> result.epochs, result.traversals.forward == 200 * 4 * net.n_connections
    (200, True)
    """
    plan = resolve_rprop(preset, dict(
        variant=variant, eta_plus=eta_plus, eta_minus=eta_minus, delta0=delta0,
        delta_min=delta_min, delta_max=delta_max, max_epochs=max_epochs, stop=stop,
        strip=strip, init_scale=init_scale), _UNSET)
    return train_checked(net, plan.algorithm, (X, Y, X_val, Y_val, X_test, Y_test),
                         max_epochs=plan.max_epochs, stop=plan.stop, strip=plan.strip,
                         init_scale=plan.init_scale, seed=seed, target_range=target_range,
                         classification=classification, callback=callback,
                         block_size=block_size, blas_min=blas_min, loss=loss,
                         weight_decay=weight_decay, extra={"preset": preset})
