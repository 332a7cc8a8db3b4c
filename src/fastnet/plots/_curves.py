"""Curves over epochs: Hamey's training and efficiency graphs, learning curves."""
from __future__ import annotations

import re

import numpy as np

from fastnet._docstrings import fill
from fastnet.stats import HameyResult, hamey_analysis
from fastnet.plots._figure import (_AX_PATH, _RAISES_HAMEY, _TITLE_AX_PATH, _axes, _check_path, _finish,
                                   _key_above, _plain_log)
from fastnet.stats._common import _check_sample


#: `training_graph` draws a logarithmic epoch axis by default when 90 % of the successes
#: came within this fraction of the epoch limit (a linear axis would squash the curve).
LOG_X_BELOW = 0.1


def _hamey(result, limit):
    if isinstance(result, HameyResult):
        return result
    if limit is None:
        raise ValueError("`limit` is required when `result` holds trial times, not a HameyResult; "
                         f"got `result` of type {type(result).__name__} and no `limit`.")
    return hamey_analysis(result, limit, fit_model=False)


def _long_tail(r):
    """True if 90 % of the successes of `r` came before LOG_X_BELOW of its epoch limit."""
    if r.n_successes == 0:
        return False
    reached = np.searchsorted(r.training_graph, 0.9 * r.success_rate - 1e-12)
    return reached < r.grid.size and r.grid[reached] < LOG_X_BELOW * r.limit


@fill(ax_path=_AX_PATH, raises_hamey=_RAISES_HAMEY)
def training_graph(result, limit=None, *, show_model=True, log_x=None, ax=None, path=None,
                   label=None):
    """Hamey's training graph: fraction of trials successful against the epoch.

    Parameters
    ----------
    result : HameyResult or array_like
        A result of :func:`fastnet.stats.hamey_analysis`, or the trial times ``t_i``
        (failures recorded as `limit`).
    limit : float, optional
        Epoch limit ``T``; required when `result` holds times.
    show_model : bool, default=True
        If the result has a fitted asymptotic model, draw it from ``T0`` to ``T``
        (dashed, gid ``"model"``) and its asymptotic success rate (dotted, gid
        ``"asymptote"``).
    log_x : bool or None, default=None
        Logarithmic epoch axis. None chooses it when 90 % of the successes came
        within the first tenth of the epoch limit (`LOG_X_BELOW`), where a linear
        axis would squash the curve against its left edge.
    {{ax_path}}
    label : str, optional
        Legend label of the graph.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    {{raises_hamey}}

    References
    ----------
    .. [1] L. G. C. Hamey, "Benchmarking feed-forward neural networks: models and
       measures", NIPS 4, 1992, Section 3 and Fig. 4.
    """
    path = _check_path(path)
    r = _hamey(result, limit)
    ax = _axes(ax)
    ax.step(r.grid, r.training_graph, where="post", label=label or "trials successful by t",
            gid="training_graph")
    if show_model and r.model is not None:
        m = r.model
        t = np.linspace(m.t0, r.limit, 200)
        ax.plot(t, m.success_fraction(t), ls="--", color="C3", gid="model",
                label="asymptotic model F(t)")
        ax.axhline(r.asymptotic_success_rate, ls=":", color="C3", gid="asymptote",
                   label=f"asymptotic success rate {r.asymptotic_success_rate:.2f}")
    if log_x is None:
        log_x = _long_tail(r)
    if log_x:
        ax.set_xscale("log")
        ax.set_xlim(r.grid[0], r.limit)
        _plain_log(ax.xaxis)
    ax.set_xlabel("epoch limit t (epochs" + (", log scale)" if log_x else ")"))
    ax.set_ylabel("fraction of trials successful")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="lower right", fontsize="small")
    return _finish(ax, path)


@fill(ax_path=_AX_PATH, raises_hamey=_RAISES_HAMEY)
def efficiency_graph(result, limit=None, *, ax=None, path=None, label=None):
    """Hamey's efficiency graph E(t) with T_E, e and the range where E >= e/2.

    Parameters
    ----------
    result : HameyResult or array_like
        A result of :func:`fastnet.stats.hamey_analysis`, or the trial times.
    limit : float, optional
        Epoch limit ``T``; required when `result` holds times.
    {{ax_path}}
    label : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The curve (gid ``"efficiency"``), a vertical line at ``T_E`` (gid
        ``"optimal_limit"``) and a horizontal segment at ``e/2`` over
        ``(T_E1, T_E2)`` (gid ``"half_range"``); the last two only if some trial
        succeeded.

    Raises
    ------
    {{raises_hamey}}

    References
    ----------
    .. [1] L. G. C. Hamey, NIPS 4, 1992, Section 4 and Fig. 3.
    """
    path = _check_path(path)
    r = _hamey(result, limit)
    ax = _axes(ax)
    ax.plot(r.grid, r.efficiency, label=label or "efficiency E(t)", gid="efficiency")
    if r.n_successes:
        ax.axvline(r.optimal_limit, ls="--", color="C3", gid="optimal_limit",
                   label=f"optimal epoch limit T_E = {r.optimal_limit:g}")
        lo, hi = r.efficiency_range
        ax.plot([lo, hi], [r.peak_efficiency / 2] * 2, color="C2", lw=2, gid="half_range",
                label=f"E >= e/2 (e = {r.peak_efficiency:.3g})")
    ax.set_xlabel("epoch limit")
    ax.set_ylabel("efficiency (successes per 1000 epochs)")
    ax.legend(loc="best", fontsize="small")
    return _finish(ax, path)


@fill(title_ax_path=_TITLE_AX_PATH)
def learning_curves(epochs, train_error=None, val_error=None, val_epochs=None, *,
                    test_error=None, test_epochs=None, relevant_epoch=None, log_y=False, title=None,
                    ax=None, path=None):
    """Learning curves E_tr, E_va (and E_te) with the stopping point marked.

    Parameters
    ----------
    epochs : array_like, shape (n,), or TrainResult
        Epoch numbers of `train_error`; or a :class:`fastnet.TrainResult`, whose
        histories and relevant epoch are then drawn (give nothing else then).
    train_error : array_like, shape (n,)
        Training error per epoch.
    val_error : array_like, shape (m,), optional
        Validation error, typically per strip (Proben1 measures it at strip ends).
    val_epochs : array_like, shape (m,), optional
        Epochs of `val_error` (the strip-end epochs); required with `val_error`.
    test_error, test_epochs : array_like, optional
        Test error and its epochs, likewise.
    relevant_epoch : int, optional
        Epoch of the network kept (lowest validation error, Proben1's "relevant
        epoch"); marked by a vertical dashed line.
    log_y : bool, default=False
        Logarithmic error axis (one early spike then no longer flattens the rest).
    {{title_ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        Lines with gids ``"train_error"``, ``"val_error"``, ``"test_error"``,
        ``"stopping_point"``; the key sits in one row above the axes, clear of the
        curves and of the relevant epoch. With a TrainResult the error axis says
        its unit, Proben1's squared error percentage, and if the GL criterion stopped
        the run, a dotted line (gid ``"gl_threshold"``) marks the validation error at
        which it stops: the lowest validation error times ``1 + alpha/100``.

    Raises
    ------
    TypeError
        If `epochs` is neither a TrainResult nor given with `train_error`, or a
        TrainResult comes with arrays.
    ValueError
        If lengths do not match, an error array is missing its epochs, values are not
        finite, or `relevant_epoch` lies outside the plotted epochs.
    ImportError
        If matplotlib is not installed.

    References
    ----------
    .. [1] L. Prechelt, "Proben1 -- a set of neural network benchmark problems and
       benchmarking rules", Technical Report 21/94, Universitaet Karlsruhe, 1994.
    """
    from fastnet.training._results import TrainResult

    ylabel = "error"
    gl_alpha = None
    if isinstance(epochs, TrainResult):
        given = [name for name, v in (("train_error", train_error), ("val_error", val_error),
                                      ("val_epochs", val_epochs), ("test_error", test_error),
                                      ("test_epochs", test_epochs), ("relevant_epoch", relevant_epoch))
                 if v is not None]
        if given:
            raise TypeError(f"`epochs` is a TrainResult, which holds its own curves: give it alone, "
                            f"without {', '.join(f'`{n}`' for n in given)}.")
        r = epochs
        ylabel = "squared error percentage E (%)"
        strip = r.setup.get("strip", 1)
        epochs, train_error = np.arange(1, r.epochs + 1), r.train_error
        val_error, val_epochs = r.val_error, r.val_epochs
        if r.test_error is not None:
            test_error = r.test_error
            test_epochs = np.arange(1, test_error.size + 1) * strip
        relevant_epoch = r.relevant_epoch if r.val_error is not None else None
        gl = re.fullmatch(r"GL(\d+(?:\.\d+)?)", str(r.stop_reason or ""))
        if gl and r.val_error is not None and len(r.val_error):
            gl_alpha = float(gl.group(1))
    if train_error is None:
        shown = repr(epochs) if len(repr(epochs)) <= 40 else f"{type(epochs).__name__} {repr(epochs)[:30]}..."
        raise TypeError("`epochs` must be a TrainResult, or epoch numbers given with `train_error`; "
                        f"got {shown} and no `train_error`.")
    ep = _check_sample(epochs, "epochs", min_size=1)
    tr = _check_sample(train_error, "train_error", min_size=1)
    if tr.size != ep.size:
        raise ValueError(f"`train_error` has {tr.size} values for {ep.size} `epochs`.")
    curves = [("train_error", ep, tr, "training E_tr")]
    for name, err, eps, lab in (("val_error", val_error, val_epochs, "validation E_va"),
                                ("test_error", test_error, test_epochs, "test E_te")):
        if err is None:
            continue
        ename = name.replace("error", "epochs")
        if eps is None:
            raise ValueError(f"`{ename}` is required with `{name}`.")
        e = _check_sample(err, name, min_size=1)
        x = _check_sample(eps, ename, min_size=1)
        if e.size != x.size:
            raise ValueError(f"`{name}` has {e.size} values for {x.size} `{ename}`.")
        curves.append((name, x, e, lab))
    lo = min(c[1].min() for c in curves)
    hi = max(c[1].max() for c in curves)
    if relevant_epoch is not None and not (lo <= relevant_epoch <= hi):
        raise ValueError(
            f"`relevant_epoch` = {relevant_epoch} is outside the plotted epochs [{lo:g}, {hi:g}]."
        )
    path = _check_path(path)
    ax = _axes(ax)
    for gid, x, e, lab in curves:
        ax.plot(x, e, label=lab, gid=gid, marker="." if gid != "train_error" else None)
    if relevant_epoch is not None:
        ax.axvline(relevant_epoch, ls="--", color="k", lw=1.0, gid="stopping_point",
                   label=f"relevant epoch {relevant_epoch}")
    if gl_alpha is not None:
        # GL(t) = 100 (E_va(t) / E_opt(t) - 1) > alpha stopped the run (Prechelt 1994)
        level = float(np.min(val_error)) * (1 + gl_alpha / 100)
        ax.axhline(level, ls=":", color="C3", lw=1.2, gid="gl_threshold",
                   label=f"GL{gl_alpha:g} stop: E_va > {1 + gl_alpha / 100:g} x lowest E_va")
    if log_y:
        ax.set_yscale("log")
        _plain_log(ax.yaxis)
    ax.set_xlabel("epoch")
    ax.set_ylabel(ylabel + (", log scale" if log_y else ""))
    _key_above(ax, title)
    return _finish(ax, path)
