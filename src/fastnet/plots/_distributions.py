"""Distributions of trial results: histograms, box-whiskers, empirical distribution functions."""
from __future__ import annotations

import numpy as np

from fastnet._docstrings import fill
from fastnet.stats import segment_points
from fastnet.plots._figure import (
    BOX_WIDTH, MEAN_SD_OFFSET, OCTILE_BOX_WIDTH, _AX_PATH, _RAISES_SAMPLES, _SAMPLES, _axes,
    _box_key, _category_ticks, _check_path, _finish, _mean_sd, _samples,
)
from fastnet.stats._common import _check_sample


def _start(samples, labels, path, ax):
    """Checked samples and labels and path (before any drawing), then the axes."""
    data, labels = _samples(samples, labels)
    return data, labels, _check_path(path), _axes(ax)


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


@fill(samples=_SAMPLES, ax_path=_AX_PATH, raises_samples=_RAISES_SAMPLES)
def box_whiskers(samples, *, labels=None, outliers=False, mean_sd=True,
                 ylabel="result of a trial", key=True, title=None, ax=None, path=None):
    """Box-whiskers plots with mean +- sd beside each box (Lawrence et al., Fig. 2).

    Parameters
    ----------
    {{samples}}
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
    title : str, optional
        Title, above the key (a title set afterwards would sit on the key).
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
    data, labels, path, ax = _start(samples, labels, path, ax)
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
    _category_ticks(ax, positions, labels)  # wrapped to the room of a box
    _box_key(ax, "quartiles; whiskers to " + ("1.5 IQR" if outliers else "min and max"),
             mean_sd, ylabel, key, title)
    return _finish(ax, path)


@fill(ax_path=_AX_PATH)
def extended_box_whiskers(samples, *, labels=None, mean_sd=True, ylabel="result of a trial",
                          key=True, title=None, ax=None, path=None):
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
    title : str, optional
        Title, above the key.
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
    # room for the mean +- sd marks only where they are drawn
    ax.set_xlim(0.5, len(data) + 0.5 + (MEAN_SD_OFFSET * BOX_WIDTH if mean_sd else 0.0))
    _category_ticks(ax, range(1, len(data) + 1), labels)
    ax.autoscale_view(scalex=False)
    _box_key(ax, "8 segments of 1/8 of the values each", mean_sd, ylabel, key, title)
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
    data, labels, path, ax = _start(samples, labels, path, ax)
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


@fill(samples=_SAMPLES, ax_path=_AX_PATH, raises_samples=_RAISES_SAMPLES)
def ecdf(samples, *, labels=None, xlabel="result of a trial", ax=None, path=None):
    """Empirical distribution functions of one or several samples.

    The fraction of trials with a result at most x, against x: a step of 1/n at each
    value. Unlike a histogram it needs no bins, and the curve lower and to the right
    is the one with the larger results.

    Parameters
    ----------
    {{samples}}
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
    data, labels, path, ax = _start(samples, labels, path, ax)
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
