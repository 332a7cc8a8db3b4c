"""Pictures of training results: distributions, box-whiskers, Hamey's graphs, learning curves.

matplotlib is an optional dependency (``pip install fastnet[plot]``) and is imported only
inside the functions. Every function draws into the given ``ax`` (or a new figure), can
save the figure with ``path=`` (``.png``, ``.svg`` or ``.pdf``) and returns the Axes.

Artists carry a ``gid`` naming their role (``"box"``, ``"median"``, ``"whisker"``,
``"segment"``, ``"mean_sd"``, ``"histogram"``, ``"training_graph"``, ``"model"``,
``"asymptote"``, ``"efficiency"``, ``"optimal_limit"``, ``"half_range"``,
``"train_error"``, ``"val_error"``, ``"test_error"``, ``"stopping_point"``, ``"ecdf"``) so
that they can be found again, e.g. for styling.

`panels` and `to_png` serve pages that embed pictures (the HTML report): a row of
axes on a figure that pyplot does not keep, and its PNG bytes.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .stats import HameyResult, hamey_analysis, segment_points
from .stats._common import _check_sample
from ._docstrings import fill

__all__ = [
    "box_whiskers",
    "ecdf",
    "efficiency_graph",
    "extended_box_whiskers",
    "histogram",
    "histograms",
    "learning_curves",
    "panels",
    "to_png",
    "training_graph",
]

#: File types accepted by ``path=``.
SAVE_FORMATS = (".png", ".svg", ".pdf")
#: Box width in data units (boxes sit at x = 1, 2, ...).
BOX_WIDTH = 0.5
#: Horizontal offset of the mean +- sd line from the box centre, in box widths.
MEAN_SD_OFFSET = 0.75
#: Margins of `panels` in inches: left, right, bottom, top.
PANEL_MARGINS = (0.72, 0.12, 0.5, 0.15)
#: Width of the outer (octile) boxes of the extended plot relative to the quartile boxes.
OCTILE_BOX_WIDTH = 0.6


_MISSING = "fastnet.plots needs matplotlib, an optional dependency: pip install fastnet[plot]"


_AX_PATH = """
ax : matplotlib.axes.Axes, optional
    Where to draw; a new figure if None.
path : str or path-like, optional
    Save the figure there (``.png``, ``.svg`` or ``.pdf``).
"""
_RAISES_SAMPLES = """
ValueError
    If a sample is empty or holds NaN/inf, the labels do not match, or `path` has
    another suffix.
ImportError
    If matplotlib is not installed.
"""
_RAISES_HAMEY = """
ValueError
    As :func:`fastnet.stats.hamey_analysis`, or if `limit` is missing.
ImportError
    If matplotlib is not installed.
"""


def _pyplot():
    """Import matplotlib.pyplot or explain how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching
        raise ImportError(_MISSING) from exc
    return plt


def _figure_class():
    """matplotlib.figure.Figure (a figure pyplot does not keep), or how to install it."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(_MISSING) from exc
    return Figure


def _check_path(path):
    if path is None:
        return None
    p = Path(path)
    if p.suffix.lower() not in SAVE_FORMATS:
        raise ValueError(
            f"`path` must end in one of {', '.join(SAVE_FORMATS)}, got {str(path)!r}."
        )
    return p


def _axes(ax):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    return ax


def _finish(ax, path):
    if path is not None:
        ax.figure.savefig(path)
    return ax


def _samples(samples, labels):
    """Normalise one sample, a sequence of samples or a mapping label -> sample."""
    if isinstance(samples, Mapping):
        if labels is not None:
            raise ValueError("Give `labels` or a mapping in `samples`, not both.")
        labels = [str(k) for k in samples]
        samples = list(samples.values())
    else:
        arr = None
        try:
            arr = np.asarray(samples, dtype=np.float64)
        except (TypeError, ValueError):
            pass
        if arr is not None and arr.ndim == 1 and arr.size:
            samples = [arr]
        else:
            samples = list(samples)
    if len(samples) == 0:
        raise ValueError("`samples` must hold at least one sample.")
    checked = [
        _check_sample(s, f"samples[{i}]", min_size=1) for i, s in enumerate(samples)
    ]
    if labels is None:
        labels = [str(i + 1) for i in range(len(checked))]
    labels = [str(lab) for lab in labels]
    if len(labels) != len(checked):
        raise ValueError(f"`labels` has {len(labels)} entries for {len(checked)} samples.")
    return checked, labels


def _mean_sd(ax, x, sample, color="k"):
    """Lawrence's 'mean and plus/minus one standard deviation' line beside a box."""
    m = sample.mean()
    sd = sample.std(ddof=1) if sample.size > 1 else 0.0
    (line,) = ax.plot([x, x], [m - sd, m + sd], color=color, lw=1.2, gid="mean_sd")
    (dot,) = ax.plot([x], [m], marker="o", ms=4, color=color, ls="none", gid="mean_sd")
    return line, dot


def _box_key(ax, what, mean_sd, ylabel, key=True):
    """Label the ordinate and add a key saying what each mark of a box plot is."""
    ax.set_ylabel(ylabel)
    if not key:
        return
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor="white", edgecolor="k", label=what),
               Line2D([], [], color="C1", lw=2.0, label="median")]
    if mean_sd:
        handles.append(Line2D([], [], color="k", lw=1.2, marker="o", ms=4,
                              label="mean ± 1 sd"))
    # above the axes, so it never hides a box
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(handles),
              fontsize="small", frameon=False)


@fill(ax_path=_AX_PATH)
def histogram(sample, *, bins="auto", percent=True, xlabel="result of a trial", ax=None, path=None,
              label=None, **hist_kw):
    """Histogram of one sample of trial results (Lawrence et al., Figs. 3, 5, 9).

    Parameters
    ----------
    sample : array_like, shape (n,)
        Finite results.
    bins : int, sequence or str, default="auto"
        Bin edges, or how to choose them (:func:`numpy.histogram_bin_edges`; a
        rule such as ``"auto"`` sees the unweighted sample).
    percent : bool, default=True
        Ordinate in percent of the trials (as Lawrence et al.), else counts.
    xlabel : str, default="result of a trial"
        Label of the abscissa (e.g. ``"test error [%]"``).
    {{ax_path}}
    label : str, optional
        Legend label.
    **hist_kw
        Further keywords for :meth:`~matplotlib.axes.Axes.hist`.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If `sample` is empty, not 1-D or holds NaN/inf; if `path` has another suffix.
    ImportError
        If matplotlib is not installed.

    References
    ----------
    .. [1] S. Lawrence, A. D. Back, A. C. Tsoi, C. L. Giles, "On the distribution of
       performance from multiple neural network trials", IEEE Trans. Neural Networks
       8(6), 1997.
    """
    x = _check_sample(sample, "sample", min_size=1)
    path = _check_path(path)
    ax = _axes(ax)
    weights = np.full(x.size, 100.0 / x.size) if percent else None
    # Edges from the unweighted sample: numpy's bin rules refuse weighted data.
    edges = np.histogram_bin_edges(x, bins=bins)
    hist_kw.setdefault("edgecolor", "black")
    _, _, patches = ax.hist(x, bins=edges, weights=weights, label=label, **hist_kw)
    for p in patches:
        p.set_gid("histogram")
    ax.set_ylabel("% of trials" if percent else "trials")
    ax.set_xlabel(xlabel)
    return _finish(ax, path)


@fill(ax_path=_AX_PATH, raises_samples=_RAISES_SAMPLES)
def box_whiskers(samples, *, labels=None, outliers=False, mean_sd=True,
                 ylabel="result of a trial", key=True, ax=None, path=None):
    """Box-whiskers plots with mean +- sd beside each box (Lawrence et al., Fig. 2).

    Parameters
    ----------
    samples : array_like, sequence of array_like, or mapping
        One sample, several samples, or ``{label: sample}``.
    labels : sequence of str, optional
        Tick labels (default 1, 2, ...).
    outliers : bool, default=False
        If False, whiskers reach the minimum and maximum. If True, they reach the most
        extreme values within 1.5 IQR of the box and values beyond are drawn as points.
    mean_sd : bool, default=True
        Draw the mean (dot) and mean +- one (n-1) standard deviation (line) to the right
        of each box.
    ylabel : str, default="result of a trial"
        Label of the ordinate.
    key : bool, default=True
        Add a key above the axes naming the box, the median and the mean mark (leave
        it out where a caption says it, e.g. on small panels).
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        One box (a patch with gid ``"box"``) per sample.

    Raises
    ------
    {{raises_samples}}

    Notes
    -----
    The box spans Q1 to Q3, the medians of the lower and upper halves
    (:func:`fastnet.stats.segment_points`), with a bar at the median; this differs
    slightly from matplotlib's interpolated percentiles.

    References
    ----------
    .. [1] S. Lawrence et al., IEEE Trans. Neural Networks 8(6), 1997, Section 2.2.
    .. [2] J. W. Tukey, *Exploratory Data Analysis*, Addison-Wesley, 1977.
    """
    data, labels = _samples(samples, labels)
    path = _check_path(path)
    ax = _axes(ax)
    stats_list = []
    for x, lab in zip(data, labels):
        if x.size >= 2:
            lo, q1, med, q3, hi = segment_points(x, 4)
        else:
            lo = q1 = med = q3 = hi = float(x[0])
        fliers = np.empty(0)
        if outliers:
            fence_lo, fence_hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
            inside = x[(x >= fence_lo) & (x <= fence_hi)]
            fliers = x[(x < fence_lo) | (x > fence_hi)]
            lo, hi = inside.min(), inside.max()
        stats_list.append(
            {"med": med, "q1": q1, "q3": q3, "whislo": lo, "whishi": hi,
             "fliers": fliers, "label": lab}
        )
    positions = np.arange(1, len(data) + 1)
    art = ax.bxp(stats_list, positions=positions, widths=BOX_WIDTH, showfliers=outliers,
                 patch_artist=True)
    for part, gid in (("boxes", "box"), ("medians", "median"), ("whiskers", "whisker"),
                      ("caps", "cap"), ("fliers", "flier")):
        for a in art.get(part, []):
            a.set_gid(gid)
    for b in art["boxes"]:
        b.set_facecolor("white")
    if mean_sd:
        for pos, x in zip(positions, data):
            _mean_sd(ax, pos + MEAN_SD_OFFSET * BOX_WIDTH, x)
        ax.set_xlim(0.5, len(data) + 0.5 + MEAN_SD_OFFSET * BOX_WIDTH)
    _box_key(ax, "quartiles; whiskers to " + ("1.5 IQR" if outliers else "min and max"),
             mean_sd, ylabel, key)
    return _finish(ax, path)


@fill(ax_path=_AX_PATH)
def extended_box_whiskers(samples, *, labels=None, mean_sd=True, ylabel="result of a trial",
                          key=True, ax=None, path=None):
    """Extended box-whiskers plots of eight segments (Lawrence et al., Fig. 11).

    Each quarter of the standard plot is split again at its own median, so that each of
    the eight segments holds (about) one eighth of the values.

    Parameters
    ----------
    samples : array_like, sequence of array_like, or mapping
        One sample, several samples, or ``{label: sample}``; at least 4 values each.
    labels : sequence of str, optional
    mean_sd : bool, default=True
        Draw mean +- one standard deviation beside each plot.
    ylabel : str, default="result of a trial"
        Label of the ordinate.
    key : bool, default=True
        Add a key above the axes naming the segments, the median and the mean mark.
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        Per sample: 6 rectangles (gid ``"segment"``: the two octile boxes outside Q1-Q3
        are narrower) and 2 whisker lines (gid ``"segment"``, from the minimum and to the
        maximum), i.e. 8 segments, plus a median bar (gid ``"median"``).

    Raises
    ------
    ValueError
        If a sample has fewer than 4 values or holds NaN/inf; as :func:`box_whiskers`.
    ImportError
        If matplotlib is not installed.

    See Also
    --------
    fastnet.stats.segment_points : the nine division points drawn here.

    References
    ----------
    .. [1] S. Lawrence et al., IEEE Trans. Neural Networks 8(6), 1997, Section 4.
    """
    data, labels = _samples(samples, labels)
    for i, x in enumerate(data):
        if x.size < 4:
            raise ValueError(
                f"`samples[{i}]` needs at least 4 values for 8 segments, got {x.size}."
            )
    path = _check_path(path)
    ax = _axes(ax)
    from matplotlib.patches import Rectangle

    half = BOX_WIDTH / 2
    for pos, x in zip(range(1, len(data) + 1), data):
        p = segment_points(x, 8)
        for j in range(1, 7):
            w = half if 2 <= j <= 5 else half * OCTILE_BOX_WIDTH
            ax.add_patch(Rectangle((pos - w, p[j]), 2 * w, p[j + 1] - p[j], facecolor="white",
                                   edgecolor="k", lw=1.0, gid="segment"))
        for y0, y1 in ((p[0], p[1]), (p[7], p[8])):
            ax.plot([pos, pos], [y0, y1], color="k", lw=1.0, gid="segment")
        cap = half * 0.5
        for y in (p[0], p[8]):
            ax.plot([pos - cap, pos + cap], [y, y], color="k", lw=1.0, gid="cap")
        ax.plot([pos - half, pos + half], [p[4], p[4]], color="C1", lw=2.0, gid="median")
        if mean_sd:
            _mean_sd(ax, pos + MEAN_SD_OFFSET * BOX_WIDTH, x)
    ax.set_xticks(range(1, len(data) + 1), labels)
    ax.set_xlim(0.5, len(data) + 0.5 + MEAN_SD_OFFSET * BOX_WIDTH)
    ax.autoscale_view(scalex=False)
    _box_key(ax, "8 segments of 1/8 of the values each", mean_sd, ylabel, key)
    return _finish(ax, path)


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
    from fastnet._training import TrainResult

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


@fill(ax_path=_AX_PATH, raises_samples=_RAISES_SAMPLES)
def histograms(samples, *, labels=None, bins="auto", percent=True, xlabel="result of a trial",
               ax=None, path=None):
    """Histograms of several samples on common bins, their bars side by side in each bin.

    Parameters
    ----------
    samples : sequence of array_like, or mapping
        Several samples, or ``{label: sample}``.
    labels : sequence of str, optional
        Legend labels (default 1, 2, ...).
    bins : int, sequence or str, default="auto"
        Bin edges, or how to choose them from all values together
        (:func:`numpy.histogram_bin_edges`).
    percent : bool, default=True
        Ordinate in percent of each sample's trials, so that samples of different
        sizes compare; else counts.
    xlabel : str, default="result of a trial"
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        Bars with gid ``"histogram"``, one colour per sample (C0, C1, ...), and a key.

    Raises
    ------
    {{raises_samples}}
    """
    data, labels = _samples(samples, labels)
    path = _check_path(path)
    ax = _axes(ax)
    edges = np.histogram_bin_edges(np.concatenate(data), bins=bins)
    weights = [np.full(x.size, 100.0 / x.size) for x in data] if percent else None
    _, _, containers = ax.hist(data, bins=edges, weights=weights, label=labels,
                               color=[f"C{i % 10}" for i in range(len(data))],
                               edgecolor="black", linewidth=0.5)
    for c in (containers if len(data) > 1 else [containers]):
        for p in c:
            p.set_gid("histogram")
    ax.set_ylabel("% of trials" if percent else "trials")
    ax.set_xlabel(xlabel)
    ax.legend(fontsize="small")
    return _finish(ax, path)


@fill(ax_path=_AX_PATH, raises_samples=_RAISES_SAMPLES)
def ecdf(samples, *, labels=None, xlabel="result of a trial", ax=None, path=None):
    """Empirical distribution functions of one or several samples.

    The fraction of trials with a result at most x, against x: a step of 1/n at each
    value. Unlike a histogram it needs no bins, and the curve lower and to the right
    is the one with the larger results.

    Parameters
    ----------
    samples : array_like, sequence of array_like, or mapping
        One sample, several samples, or ``{label: sample}``.
    labels : sequence of str, optional
        Legend labels (default 1, 2, ...).
    xlabel : str, default="result of a trial"
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        One step line (gid ``"ecdf"``) per sample, from 0 to 1.

    Raises
    ------
    {{raises_samples}}
    """
    data, labels = _samples(samples, labels)
    path = _check_path(path)
    ax = _axes(ax)
    lo = min(x.min() for x in data)
    hi = max(x.max() for x in data)
    pad = 0.05 * (hi - lo) if hi > lo else 0.5
    for i, (x, lab) in enumerate(zip(data, labels)):
        s = np.sort(x)
        xs = np.concatenate([[lo - pad], s, [hi + pad]])
        ys = np.concatenate([[0.0], np.arange(1, s.size + 1) / s.size, [1.0]])
        ax.step(xs, ys, where="post", color=f"C{i % 10}", lw=1.5, label=lab, gid="ecdf")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction of trials ≤ x")
    ax.set_xlabel(xlabel)
    ax.legend(fontsize="small", loc="best")
    return _finish(ax, path)


def panels(n, *, width=3.4, height=2.8):
    """A row of `n` empty axes on one new figure that pyplot does not keep.

    For pages that embed many pictures: draw into the axes with the functions of this
    module (``ax=``), then take the picture with `to_png`. The figure is freed with
    its last reference: there is nothing to close, and no window backend is involved.
    Its margins are fixed (room for tick labels and an axis label on the left and
    below) rather than computed by a layout engine, which would double the time to
    draw; draw box plots without their key (``key=False``) on panels.

    Parameters
    ----------
    n : int
        Number of axes, side by side.
    width, height : float, default=3.4, 2.8
        Size of each panel in inches, margins included.

    Returns
    -------
    tuple of matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If `n` < 1, or a panel is too small for its margins.
    ImportError
        If matplotlib is not installed.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"`n` must be at least 1, got {n}.")
    left, right, bottom, top = PANEL_MARGINS
    if width <= left + right or height <= bottom + top:
        raise ValueError(f"panels of {width} x {height} inches leave no room inside the margins "
                         f"{PANEL_MARGINS}.")
    fig = _figure_class()(figsize=(width * n, height))
    fig.subplots_adjust(left=left / (width * n), right=1 - right / (width * n),
                        bottom=bottom / height, top=1 - top / height,
                        wspace=(left + right) / (width - left - right))
    return tuple(fig.subplots(1, n, squeeze=False)[0])


def to_png(figure, *, dpi=96):
    """The PNG bytes of a figure, e.g. for an HTML ``data:`` URI.

    Parameters
    ----------
    figure : matplotlib.figure.Figure, matplotlib.axes.Axes or sequence of Axes
        The figure, or axes on it (such as what `panels` returns).
    dpi : float, default=96
        Pixels per inch.

    Returns
    -------
    bytes
        A PNG image (no time stamp, so that the same figure gives the same bytes).
    """
    if isinstance(figure, (tuple, list)):
        figure = figure[0]
    fig = figure if hasattr(figure, "savefig") else figure.figure
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
