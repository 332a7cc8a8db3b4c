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

import numpy as np

from fastnet._engine import Workspace
from fastnet._training import (
    TrainResult,
    check_start,
    base_setup,
    check_common,
    resolve_classification,
    run_training,
    training_of,
)
from fastnet._validation import as_generator, check_choice, check_float
from fastnet._typing import ArrayLike, Seed
from fastnet.network import MAX_INIT_SCALE, MLP
from fastnet.stopping import (GL, AnyOf, MaxEpochs, ProgressBelow, StoppingCriterion,
                              TrainingState, proben1_multilayer)

__all__ = ["train_rprop", "VARIANTS", "PRESETS", "proben1_stopping"]

#: RPROP variant names (Igel & Hüsken 2000) and their kernel codes.
VARIANTS = {"rprop+": 0, "rprop-": 1, "irprop-": 2, "irprop+": 3}


def proben1_stopping(kind: str) -> StoppingCriterion:
    """Proben1's stopping rule for ``kind`` (Prechelt 1994).

    Parameters
    ----------
    kind : {"linear", "multilayer", "multilayer-literal"}
        ``"linear"``: GL5 or P5(t) < 0.1 or 3000 epochs. ``"multilayer"``: GL2 or
        P5(t) < 0.1 or 3000 epochs, the reading that reproduces the report's
        published multilayer results (Tables 10-11). ``"multilayer-literal"``: the
        rule as the report words it, P5(t) < 0.1, or 3000 epochs, or once GL5, UP8
        and GL/P5 > 3 have each held at least once. See
        :func:`fastnet.stopping.proben1_multilayer` for the evidence.

    Returns
    -------
    StoppingCriterion
    """
    kind = check_choice(kind, "kind", {"linear", "multilayer", "multilayer-literal"})
    if kind == "linear":
        return AnyOf(GL(5), ProgressBelow(0.1), MaxEpochs(3000))
    return proben1_multilayer("tables" if kind == "multilayer" else "literal")


#: Proben1's RPROP set-ups (Prechelt 1994). ``init_scale`` is the half-width of
#: the uniform initial weights; ``delta0`` a range is drawn per weight.
#: ``"proben1-multilayer"`` is the reading of the report that reproduces its
#: published multilayer results (GL2, eta_plus 1.2, initial weights within
#: +-0.2: 41 of 42 test-error and 38 of 42 epoch means of Tables 10-11 match);
#: ``"proben1-multilayer-literal"`` keeps the report's words (eta_plus 1.1,
#: +-0.5, the "all three have held at least once" rule), which trains 3-10
#: times longer than the report's tables show. ``docs/reproduction.md`` has
#: the ablation behind the choice.
PRESETS = {
    "proben1-linear": dict(variant="rprop+", eta_plus=1.2, eta_minus=0.5, delta0=(0.005, 0.02),
                           delta_min=0.0, delta_max=50.0, init_scale=0.01, strip=5,
                           max_epochs=3000, stop="linear"),
    "proben1-multilayer": dict(variant="rprop+", eta_plus=1.2, eta_minus=0.5, delta0=(0.05, 0.2),
                               delta_min=0.0, delta_max=50.0, init_scale=0.2, strip=5,
                               max_epochs=3000, stop="multilayer"),
    "proben1-multilayer-literal": dict(variant="rprop+", eta_plus=1.1, eta_minus=0.5,
                                       delta0=(0.05, 0.2), delta_min=0.0, delta_max=50.0,
                                       init_scale=0.5, strip=5, max_epochs=3000,
                                       stop="multilayer-literal"),
}

class _Default:
    """An argument left out: the preset's value, else the documented default.

    Its repr is what ``help(train_rprop)`` shows for such arguments.
    """

    def __repr__(self):
        return "<preset or default>"


_UNSET = _Default()


def _check_delta0(delta0, delta_min, delta_max):
    if isinstance(delta0, (tuple, list, np.ndarray)):
        if len(delta0) != 2:
            raise ValueError(f"`delta0` must be a number or a range (lo, hi), got {delta0!r}.")
        lo = check_float(delta0[0], "delta0[0]", low=0.0, low_open=True)
        hi = check_float(delta0[1], "delta0[1]", low=0.0, low_open=True)
        if lo > hi:
            raise ValueError(f"`delta0` range must have lo <= hi, got {delta0!r}.")
        if hi > delta_max:
            raise ValueError(f"`delta0` must not exceed `delta_max`={delta_max}, got {delta0!r}.")
        return (lo, hi)
    d = check_float(delta0, "delta0", low=0.0, low_open=True)
    if d > delta_max:
        raise ValueError(f"`delta0` must not exceed `delta_max`={delta_max}, got {d}.")
    return d


class _RpropStepper:
    def __init__(self, ws, variant, eta_plus, eta_minus, delta_min, delta_max, step0):
        C = ws.net.n_connections
        self.ws = ws
        self.g_prev = np.zeros(C)
        self.step = step0
        self.last_error = np.array([np.inf])
        self.args = (VARIANTS[variant], eta_plus, eta_minus, delta_min, delta_max)
        self.updates_per_epoch = C

    # The kernel can run Hamey's success check itself (see _training._run_training).
    supports_success_check = True

    def run(self, sse_out, check=None):
        """Run len(sse_out) epochs; ``check=(every, r_c, analog)`` adds the kernel's
        success check after every ``every``-th epoch (analog None: binary targets)."""
        ws = self.ws
        if check is None:
            every, r_c, analog = 0, 0.4, -1.0
        else:
            every, r_c, analog = check
            analog = -1.0 if analog is None else analog
        return ws.rprop_epochs(self.g_prev, self.step, self.args,
                               self.last_error, sse_out, every, r_c, analog)


def resolve_options(preset, given):
    """RPROP hyper-parameters from the defaults, ``preset`` and the explicit
    arguments in ``given`` (``_UNSET`` = not given), checked; ``stop`` a
    criterion object. Shared by :func:`train_rprop` and :func:`train_rprop_many`."""
    params = dict(variant="rprop+", eta_plus=1.2, eta_minus=0.5, delta0=0.1, delta_min=0.0,
                  delta_max=50.0, max_epochs=100, stop=None, strip=5, init_scale=None)
    if preset is not None:
        check_choice(preset, "preset", PRESETS)
        params.update(PRESETS[preset])
    params.update({k: v for k, v in given.items() if v is not _UNSET})
    if isinstance(params["stop"], str):
        if params["stop"] not in ("linear", "multilayer", "multilayer-literal"):
            raise ValueError("`stop` must be None, a fastnet.stopping criterion such as GL(5) or AnyOf(GL(5), "
                             "MaxEpochs(3000)), or the name of a Proben1 rule, one of ['linear', 'multilayer', "
                             f"'multilayer-literal'], got {params['stop']!r}.")
        params["stop"] = proben1_stopping(params["stop"])
    params["preset"] = preset
    params["variant"] = check_choice(params["variant"], "variant", VARIANTS)
    params["eta_plus"] = check_float(params["eta_plus"], "eta_plus", low=1.0, low_open=True)
    params["eta_minus"] = check_float(params["eta_minus"], "eta_minus", low=0.0, high=1.0,
                                      low_open=True, high_open=True)
    delta_min = params["delta_min"] = check_float(params["delta_min"], "delta_min", low=0.0)
    delta_max = params["delta_max"] = check_float(params["delta_max"], "delta_max", low=0.0)
    if delta_min > delta_max:
        raise ValueError(f"`delta_min` must be <= `delta_max`, got {delta_min} > {delta_max}.")
    params["delta0"] = _check_delta0(params["delta0"], delta_min, delta_max)
    if params["init_scale"] is not None:
        params["init_scale"] = check_float(params["init_scale"], "init_scale", low=0.0,
                                           high=MAX_INIT_SCALE)
    return params


def draw_start(net, params, seed):
    """Initialise ``net`` from ``seed`` if ``params["init_scale"]`` is set, and
    return the initial RPROP steps (drawn per weight if ``delta0`` is a range).
    Refuses a ``seed`` that would draw nothing and an all-zero multilayer start.

    Draw order is fixed (weights, then steps) so one seed reproduces a run. The
    generator is built only when something is drawn (seed=None costs OS entropy).
    """
    init, delta0 = params["init_scale"], params["delta0"]
    drawn = init is not None or isinstance(delta0, tuple)
    rng = as_generator(seed) if drawn else None
    if init is not None:
        net.init_weights(rng, scale=init)
    check_start(net, seed, drawn)
    C = net.n_connections
    if isinstance(delta0, tuple):
        return rng.uniform(delta0[0], delta0[1], size=C)
    return np.full(C, delta0)


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
                block_size: int | None = None, blas_min: int | None = None) -> TrainResult:
    r"""Train ``net`` in place with epoch-batched RPROP.

    One update per epoch from the gradient of the summed squared error
    E = sum_p sum_i (o_pi - t_pi)^2 over the whole training set.

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
        Range of the target representation for the squared error percentage.
    classification : bool or "auto", default "auto"
        Whether to report classification errors; "auto" means "targets are one-hot".
    callback : callable, optional
        ``callback(epoch, state)`` after every strip (``state`` is a
        :class:`fastnet.stopping.TrainingState`); returning True stops training
        with stop_reason "callback".
    block_size : int, optional
        Patterns per cache block (default: from the network size). Results
        depend on it only through floating-point summation order.
    blas_min : int, optional
        Layer products with m*n*k below this use plain loops instead of BLAS.

    Returns
    -------
    TrainResult

    Raises
    ------
    ValueError, TypeError
        For bad shapes, non-finite data, invalid hyper-parameters or a stopping
        rule that needs a validation set when none is given.
    DivergenceError
        If the training diverges: the training error, the weights, the outputs
        or a validation/test error become non-finite, or the training error
        (of an epoch or of the returned network) exceeds ``DIVERGENCE_GROWTH``
        (1e6) times max(E_tr(1), ``DIVERGENCE_FLOOR`` = 1 %) (a
        FloatingPointError naming the epoch). No result with NaN errors is
        ever returned.
    TrainingInProgressError
        If another thread is training ``net`` (a RuntimeError).

    Warns
    -----
    NoConvergenceWarning
        If ``stop`` is given and ``max_epochs`` is reached before it holds.

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
    params = resolve_options(preset, dict(
        variant=variant, eta_plus=eta_plus, eta_minus=eta_minus, delta0=delta0,
        delta_min=delta_min, delta_max=delta_max, max_epochs=max_epochs, stop=stop,
        strip=strip, init_scale=init_scale))
    (X, Y, X_val, Y_val, X_test, Y_test, max_epochs, strip, target_range, block_size,
     blas_min) = check_common(net, X, Y, X_val, Y_val, X_test, Y_test, params["max_epochs"],
                              params["strip"], params["stop"], target_range, callback,
                              block_size, blas_min)
    classification = resolve_classification(classification, Y)
    with training_of([net], "net"):
        step0 = draw_start(net, params, seed)
        variant, delta0, init = params["variant"], params["delta0"], params["init_scale"]
        eta_plus, eta_minus = params["eta_plus"], params["eta_minus"]
        delta_min, delta_max = params["delta_min"], params["delta_max"]

        ws = Workspace(net, X, Y, block_size, blas_min)
        stepper = _RpropStepper(ws, variant, eta_plus, eta_minus, delta_min, delta_max, step0)
        setup = base_setup(
            net, algorithm=f"RPROP ({variant}), epoch-batched",
            parameters={"eta_plus": eta_plus, "eta_minus": eta_minus,
                        "delta0": list(delta0) if isinstance(delta0, tuple) else delta0,
                        "delta_min": delta_min, "delta_max": delta_max, "preset": preset},
            stop=params["stop"], strip=strip, max_epochs=max_epochs, target_range=target_range,
            seed=seed, n_train=X.shape[0], n_val=0 if X_val is None else X_val.shape[0],
            n_test=0 if X_test is None else X_test.shape[0],
            initialisation=(f"uniform in [-{init}, {init}] from the seed" if init is not None
                            else "weights of the network as given"),
            block_size=ws.D.shape[0])
        return run_training(net, stepper, ws, X_val=X_val, Y_val=Y_val, X_test=X_test,
                            Y_test=Y_test, max_epochs=max_epochs, strip=strip, stop=params["stop"],
                            target_range=target_range, callback=callback,
                            classification=classification, setup=setup)


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
