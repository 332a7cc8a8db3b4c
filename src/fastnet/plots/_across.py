"""Pictures of comparisons across problems: Demšar's critical-difference diagram and
Dolan and Moré's performance profiles."""
from __future__ import annotations

import math

import numpy as np

from fastnet._docstrings import fill
from fastnet.plots._figure import _AX_PATH, _TITLE_AX_PATH, _axes, _check_path, _finish, _pyplot, _wrapped
from fastnet.stats import FriedmanNemenyi, PerformanceProfiles

#: Labels of the critical-difference diagram are wrapped at about this many characters.
CD_LABEL_WIDTH = 28
#: Keys of performance profiles are wrapped at about this many characters.
PROFILE_LABEL_WIDTH = 34
#: Inches of the rank axis per unit of rank (at least CD_MIN_AXIS inches in all).
CD_INCHES_PER_RANK = 0.55
CD_MIN_AXIS = 2.4


def _text_inches(text, size):
    """Width of `text` (one or more lines) at font `size` points, in inches."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    prop = FontProperties(size=size)
    widths = [TextToPath().get_text_width_height_descent(line, prop, ismath=False)[0]
              for line in text.split("\n")]
    return max(widths) / 72.0


@fill(ax_path=_AX_PATH)
def cd_diagram(result, *, best_on_right=True, title=None, ax=None, path=None):
    """Critical-difference diagram of a Friedman/Nemenyi comparison (Demšar 2006).

    The mean ranks of the algorithms on an axis; each algorithm's line leads to its name
    and mean rank, the better half to the best end of the axis, the other half to the
    other end. A thick bar joins algorithms whose mean ranks differ by less than the
    critical difference (the Nemenyi test does not tell them apart); the segment at the
    bottom shows the critical difference itself.

    Parameters
    ----------
    result : fastnet.stats.FriedmanNemenyi
        The comparison (:func:`fastnet.stats.friedman_nemenyi`).
    best_on_right : bool, default=True
        Rank 1 at the right end of the axis, as Demšar draws it; False puts it left.
    title : str, optional
        Title above the axis (say what was ranked: "test error, 8 problems").
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        Lines of gid ``"algorithm"`` (one per algorithm), ``"clique"`` (one per
        group) and ``"critical_difference"``; the rank axis is the top spine, its tick
        labels the ranks. A new figure is sized to its labels (long names are wrapped);
        on a figure with fixed margins (`panels`) the top margin grows to hold the ranks.

    Raises
    ------
    TypeError
        If `result` is not a FriedmanNemenyi.
    ValueError
        If `path` has another suffix.
    ImportError
        If matplotlib is not installed.

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006 (Section 3.2.2, Figs. 1-2).
    """
    if not isinstance(result, FriedmanNemenyi):
        raise TypeError("`result` must be a FriedmanNemenyi (fastnet.stats.friedman_nemenyi), "
                        f"got {type(result).__name__}.")
    path = _check_path(path)
    from matplotlib import rcParams

    size = float(rcParams["font.size"])
    line = 1.3 * size / 72.0                  # inches per line of text: the y unit
    mr = np.asarray(result.mean_ranks, dtype=float)
    k = mr.size
    order = np.argsort(mr, kind="stable")
    labels = {i: _wrapped(f"{result.algorithms[i]} ({mr[i]:.2f})", CD_LABEL_WIDTH) for i in order}
    lines = max(t.count("\n") + 1 for t in labels.values())
    label_in = max(_text_inches(t, size) for t in labels.values())
    stub, pad = 0.2, 0.06                     # inches of line beyond the axis; before a label
    side = stub + pad + label_in + 0.05

    n_best = math.ceil(k / 2)
    best_half = list(order[:n_best])           # the best nearest its end: the first row
    worse_half = list(order[n_best:])[::-1]    # the worst nearest its end: the first row
    rows = max(len(best_half), len(worse_half))
    n_cliques = len(result.cliques)
    y_clique = [0.9 + 0.55 * j for j in range(n_cliques)]
    y_first = 0.9 + 0.55 * n_cliques + 0.3 + lines / 2
    step = lines + 0.5
    y_last = y_first + (rows - 1) * step
    y_cd = y_last + lines / 2 + 1.0
    y_bottom = y_cd + 1.8
    top_in = 0.42 + (0.3 if title else 0.0)    # the rank labels (and title) above the axis

    if ax is None:
        axis_in = max(CD_MIN_AXIS, CD_INCHES_PER_RANK * (k - 1))
        width = axis_in + 2 * side + 0.2
        height = y_bottom * line + top_in + 0.05
        fig, ax = _pyplot().subplots(figsize=(width, height))
        fig.subplots_adjust(left=0.1 / width, right=1 - 0.1 / width, top=1 - top_in / height,
                            bottom=0.05 / height)
    else:
        fig = ax.figure
        axis_in = max(0.5, ax.get_position().width * fig.get_figwidth() - 2 * side)
        room = 1 - top_in / fig.get_figheight()
        if fig.get_layout_engine() is None and fig.subplotpars.top > room:
            fig.subplots_adjust(top=room)      # fixed margins (`panels`): room for the ranks
    per_in = max(k - 1, 1) / axis_in           # rank units per inch
    lo, hi = 1.0 - side * per_in, k + side * per_in
    ax.set_xlim((hi, lo) if best_on_right else (lo, hi))
    ax.set_ylim(y_bottom, 0.0)

    # the rank axis: the top spine from 1 to k, ranks as tick labels
    for name in ("left", "right", "bottom"):
        ax.spines[name].set_visible(False)
    ax.spines["top"].set_bounds(1, k)
    ax.xaxis.tick_top()
    ax.set_xticks(np.arange(1, k + 1))
    if k <= 12:
        ax.set_xticks(np.arange(1.5, k, 1.0), minor=True)
    ax.tick_params(axis="x", which="minor", length=2)
    ax.set_yticks([])

    ends = {"best": (1.0 - stub * per_in, -1.0), "worse": (k + stub * per_in, 1.0)}
    for half, which in ((best_half, "best"), (worse_half, "worse")):
        end, outward = ends[which]
        # text grows away from the axis: towards smaller ranks on the best side
        grows_right = (outward > 0) != best_on_right
        for row, i in enumerate(half):
            y = y_first + row * step
            ax.plot([mr[i], mr[i], end], [0.0, y, y], color="k", lw=1.0, gid="algorithm")
            ax.text(end + outward * pad * per_in, y, labels[i], va="center",
                    ha="left" if grows_right else "right", fontsize=size)
    for y, clique in zip(y_clique, result.cliques):
        ranks = mr[[result.algorithms.index(a) for a in clique]]
        ax.plot([ranks.min() - 0.03, ranks.max() + 0.03], [y, y], color="k", lw=3.5,
                solid_capstyle="butt", gid="clique")
    cd = result.critical_difference
    stop = min(1.0 + cd, hi)
    ax.plot([1.0, stop], [y_cd, y_cd], color="k", lw=1.2, gid="critical_difference")
    for x in (1.0, stop):
        ax.plot([x, x], [y_cd - 0.3, y_cd + 0.3], color="k", lw=1.2, gid="critical_difference")
    ax.text(1.0, y_cd + 0.5, f"CD = {cd:.2f} (Nemenyi, α = {result.alpha:g}, "
            f"N = {len(result.problems)})", va="top", ha="right" if best_on_right else "left",
            fontsize=size * 0.9, gid="critical_difference")
    if title:
        ax.set_title(title, fontsize="medium")
    return _finish(ax, path)


@fill(title_ax_path=_TITLE_AX_PATH)
def performance_profile(result, *, tau_max=None, xlabel="ratio τ to the best cost", title=None,
                        ax=None, path=None):
    """Performance profiles (Dolan & Moré 2002): the share of problems on which each
    algorithm is within a factor τ of the best, against τ.

    Parameters
    ----------
    result : fastnet.stats.PerformanceProfiles
        The profiles (:func:`fastnet.stats.performance_profiles`).
    tau_max : float, optional
        Right end of the τ axis (default the result's ``r_max``, the range its score
        integrates).
    xlabel : str, default="ratio τ to the best cost"
        Say what the cost is ("ratio to the fewest traversals").
    {{title_ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        One step line (gid ``"profile"``) per algorithm, labelled with its score; the
        key to the right of the axes (inside at the lower right on a figure with fixed
        margins, such as those of `panels`).

    Raises
    ------
    TypeError
        If `result` is not a PerformanceProfiles.
    ValueError
        If `tau_max` <= 1 or `path` has another suffix.
    ImportError
        If matplotlib is not installed.

    References
    ----------
    .. [1] E. D. Dolan and J. J. Moré, "Benchmarking optimization software with
       performance profiles", Mathematical Programming 91, 201-213, 2002.
    .. [2] G. E. Dahl et al., "Benchmarking neural network training algorithms",
       arXiv:2306.07179, 2023.
    """
    if not isinstance(result, PerformanceProfiles):
        raise TypeError("`result` must be a PerformanceProfiles (fastnet.stats."
                        f"performance_profiles), got {type(result).__name__}.")
    tau_max = result.r_max if tau_max is None else float(tau_max)
    if not (math.isfinite(tau_max) and tau_max > 1):
        raise ValueError(f"`tau_max` must be a finite number > 1, got {tau_max}.")
    path = _check_path(path)
    ax = _axes(ax)
    taus = result.taus
    grid = np.concatenate([[1.0], taus[(taus > 1) & (taus < tau_max)], [tau_max]])
    rho = result.rho(grid)
    styles = ("-", "--", "-.", ":")
    for i, name in enumerate(result.algorithms):
        ax.step(grid, rho[i], where="post", color=f"C{i % 10}", ls=styles[(i // 10) % 4], lw=1.6,
                label=_wrapped(f"{name} (score {result.scores[i]:.2f})", PROFILE_LABEL_WIDTH),
                gid="profile")
    ax.set_xlim(1.0, tau_max)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of problems")
    if ax.figure.get_layout_engine() is None:
        # fixed margins (`panels`): inside, where the profiles, rising to 1, seldom are
        ax.legend(loc="lower right", fontsize="small")
    else:
        # beside the axes (the layout engine makes room): long specifications of
        # algorithms fit there, and it never hides a curve
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    if title:
        ax.set_title(title, fontsize="medium")
    return _finish(ax, path)


@fill(ax_path=_AX_PATH)
def expected_best_curves(curves, *, ylabel="expected best validation error", title=None,
                         ax=None, path=None):
    """Expected best result after k trials (Dodge et al. 2019), one line and band per
    algorithm: how a result improves with the tuning budget.

    Parameters
    ----------
    curves : mapping
        ``{label: ExpectedBest}`` (:func:`fastnet.stats.expected_best`), e.g. one per
        algorithm on one problem.
    ylabel : str, default="expected best validation error"
        Say what the trials' result is.
    title : str, optional
        Title above the axes (the problem).
    {{ax_path}}

    Returns
    -------
    matplotlib.axes.Axes
        One line per algorithm (gid ``"expected_best"``) and its bootstrap band where the
        result has one (gid ``"band"``); k on a log axis when it reaches 8 or more.

    Raises
    ------
    TypeError
        If `curves` is not a mapping of ExpectedBest.
    ValueError
        If `curves` is empty or `path` has another suffix.
    ImportError
        If matplotlib is not installed.

    References
    ----------
    .. [1] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Show your
       work: improved reporting of experimental results", EMNLP-IJCNLP 2019, 2185-2194.
    """
    from collections.abc import Mapping

    from fastnet.stats import ExpectedBest

    if not isinstance(curves, Mapping) or not all(isinstance(c, ExpectedBest)
                                                  for c in curves.values()):
        raise TypeError("`curves` must be a mapping label -> ExpectedBest "
                        f"(fastnet.stats.expected_best), got {type(curves).__name__}.")
    if not curves:
        raise ValueError("`curves` must hold at least one curve, got none.")
    path = _check_path(path)
    ax = _axes(ax)
    styles = ("-", "--", "-.", ":")
    for i, (label, c) in enumerate(curves.items()):
        color = f"C{i % 10}"
        if c.low is not None:
            ax.fill_between(c.k, c.low, c.high, color=color, alpha=0.18, lw=0, gid="band")
        ax.plot(c.k, c.expected, color=color, ls=styles[(i // 10) % 4], lw=1.5,
                marker="o" if c.k.size < 3 else None, ms=3,
                label=_wrapped(str(label), PROFILE_LABEL_WIDTH), gid="expected_best")
    if max(int(c.k.max()) for c in curves.values()) >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xlabel("configurations tried k")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize="medium")
    return _finish(ax, path)
