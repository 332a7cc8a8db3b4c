"""Curves over epochs: Hamey's training and efficiency graphs, learning curves."""
from __future__ import annotations

import numpy as np

from fastnet._docstrings import fill
from fastnet.stats import HameyResult, hamey_analysis
from fastnet.plots._figure import _AX_PATH, _RAISES_HAMEY, _axes, _check_path, _finish
from fastnet.stats._common import _check_sample


def _hamey(result, limit):
    if isinstance(result, HameyResult):
        return result
    if limit is None:
        raise ValueError("Pass a HameyResult, or trial times together with `limit`.")
    return hamey_analysis(result, limit, fit_model=False)


@fill(ax_path=_AX_PATH, raises_hamey=_RAISES_HAMEY)
def training_graph(result, limit=None, *, show_model=True, ax=None, path=None, label=None):
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
    ax.set_xlabel("epoch limit")
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


@fill(ax_path=_AX_PATH)
def learning_curves(epochs, train_error=None, val_error=None, val_epochs=None, *,
                    test_error=None, test_epochs=None, relevant_epoch=None, log_y=False, ax=None,
                    path=None):
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
        Logarithmic error axis.
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        Lines with gids ``"train_error"``, ``"val_error"``, ``"test_error"``,
        ``"stopping_point"``.

    Raises
    ------
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

    if isinstance(epochs, TrainResult):
        if any(v is not None for v in (train_error, val_error, val_epochs, test_error,
                                       test_epochs, relevant_epoch)):
            raise TypeError("give a TrainResult alone, or the arrays, not both.")
        r = epochs
        strip = r.setup.get("strip", 1)
        epochs, train_error = np.arange(1, r.epochs + 1), r.train_error
        val_error, val_epochs = r.val_error, r.val_epochs
        if r.test_error is not None:
            test_error = r.test_error
            test_epochs = np.arange(1, test_error.size + 1) * strip
        relevant_epoch = r.relevant_epoch if r.val_error is not None else None
    if train_error is None:
        raise TypeError("`train_error` is required with an array of `epochs`.")
    ep = _check_sample(epochs, "epochs", min_size=1)
    tr = _check_sample(train_error, "train_error", min_size=1)
    if tr.size != ep.size:
        raise ValueError(f"`train_error` has {tr.size} values for {ep.size} `epochs`.")
    curves = [("train_error", ep, tr, "E_tr")]
    for name, err, eps, lab in (("val_error", val_error, val_epochs, "E_va"),
                                ("test_error", test_error, test_epochs, "E_te")):
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
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("error")
    ax.legend()
    return _finish(ax, path)
