"""Figures, axes, saving and the helpers every picture shares."""
from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fastnet.stats._common import _check_sample

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


_MISSING = ("fastnet.plots needs matplotlib, an optional dependency: pip install matplotlib (or, from "
            "a fastnet checkout, pip install \".[plot]\")")


_AX_PATH = """
ax : matplotlib.axes.Axes, optional
    Where to draw; a new figure if None.
path : str or path-like, optional
    Save the figure there (``.png``, ``.svg`` or ``.pdf``).
"""
#: `_AX_PATH` after the title of a plot whose key the title stands above.
_TITLE_AX_PATH = """
title : str, optional
    Title above the key.
""" + _AX_PATH.lstrip("\n")

_SAMPLES = """
samples : array_like, sequence of array_like, or mapping
    One sample, several samples, or ``{label: sample}``.
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
        # constrained layout keeps titles and keys placed outside the axes on the figure
        _, ax = plt.subplots(layout="constrained")
    return ax


def _plain_log(axis):
    """A logarithmic `axis` (``ax.xaxis``, ``ax.yaxis``) labelled 2, 5, 20, 1000, not 10^3."""
    from matplotlib.ticker import LogFormatter

    axis.set_major_formatter(LogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 1)))


def _key_above(ax, title=None):
    """A key in one row above the axes (it never hides a curve or a marked epoch),
    and `title` above the key."""
    import math

    handles, labels = ax.get_legend_handles_labels()
    # as many rows as the labels need to stay within about the figure's width
    room = ax.figure.get_figwidth() * 72 / (0.6 * 9) - 6 * len(labels)  # characters
    rows = max(1, min(len(labels), math.ceil(sum(map(len, labels)) / max(room, 20))))
    ax.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              ncol=math.ceil(len(handles) / rows), fontsize="small", frameon=False,
              handlelength=1.6, columnspacing=1.2)
    if title:
        ax.set_title(title, pad=8 + 15 * rows, fontsize="medium")


def _wrapped(label, width):
    """`label` on lines of at most about `width` characters, broken after spaces and after
    ``/``, ``,``, ``:``, ``(`` and ``=`` (an algorithm's text such as
    ``backprop(learning_rate=0.5, momentum=0.9)`` breaks between its parts), never inside
    a word; a name such as ``learning_rate`` longer than `width` breaks after its ``_``,
    and a part that is longer still keeps a line of its own."""
    import re
    import textwrap

    width = max(4, width)
    for chances in ("/,(:=", "/,(:=_"):
        spaced = re.sub(rf"([{re.escape(chances)}])(?=\S)", "\\1\u200b", label)
        lines = [line.replace(" \u200b", "").replace("\u200b", "") for line in textwrap.wrap(
            spaced.replace("\u200b", " \u200b"), width=width, break_long_words=False,
            break_on_hyphens=False)]
        if max(map(len, lines), default=0) <= width:
            break
    return "\n".join(lines)


def _category_ticks(ax, positions, labels):
    """Tick labels at `positions`, wrapped to the room each has on the axes (they never
    run into each other; a label too long for three lines is cut with an ellipsis)."""
    fig = ax.figure
    px = ax.get_position().width * fig.get_figwidth() * fig.dpi * 0.85
    lo, hi = ax.get_xlim() if ax.get_autoscalex_on() is False else (0.5, len(positions) + 0.5)
    slot = px / max(hi - lo, 1.0)  # pixels per unit of x: one box's room
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size=rcParams["xtick.labelsize"]).get_size_in_points()
    chars = int(slot / (0.62 * size * fig.dpi / 72))
    out = []
    for lab in labels:
        # (a part too long for its box's room, or a fourth line, is cut with an ellipsis:
        # the label never runs into its neighbour's)
        lines = [line if len(line) <= chars else line[:max(1, chars - 1)] + "…"
                 for line in _wrapped(lab, chars).split("\n")]
        if len(lines) > 3:
            lines = lines[:2] + [lines[2][:max(1, chars - 1)] + "…"]
        out.append("\n".join(lines))
    ax.set_xticks(list(positions), out)
    if fig.get_layout_engine() is None:  # fixed margins (`panels`): make room for the lines
        lines = max(t.count("\n") + 1 for t in out)
        label = 1.4 if ax.get_xlabel() else 0.0
        need = ((lines + label) * 1.25 * size + 8) / 72 / fig.get_figheight()
        if fig.subplotpars.bottom < need:
            fig.subplots_adjust(bottom=need)


def _grid_edges(values, step, max_bins=30):
    """Histogram edges for values on a grid of `step` (e.g. classification errors in
    percent, multiples of 100/N on N test examples): every edge halfway between grid
    points, so that each bin holds whole grid points (`max_bins` at most, joining
    neighbouring points when there are more)."""
    import math

    k = np.rint(np.asarray(values, dtype=float) / step)
    lo, hi = float(k.min()), float(k.max())
    m = max(1, math.ceil((hi - lo + 1) / max_bins))
    n = math.ceil((hi - lo + 1) / m)
    return (lo - 0.5 + m * np.arange(n + 1)) * step


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


def _box_key(ax, what, mean_sd, ylabel, key=True, title=None):
    """Label the ordinate and add a key saying what each mark of a box plot is, with
    `title` above the key."""
    ax.set_ylabel(ylabel)
    if not key:
        if title:
            ax.set_title(title, fontsize="medium")
        return
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor="white", edgecolor="k", label=what),
               Line2D([], [], color="C1", lw=2.0, label="median")]
    if mean_sd:
        handles.append(Line2D([], [], color="k", lw=1.2, marker="o", ms=4,
                              label="mean ± 1 sd"))
    # above the axes, so it never hides a box; the title above the key
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(handles),
              fontsize="small", frameon=False)
    if title:
        ax.set_title(title, pad=22, fontsize="medium")


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
