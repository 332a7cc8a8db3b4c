"""A suite page's pictures: the critical-difference diagram, the performance profiles and
the tuning curves, with keys that stay readable for many algorithms."""
from __future__ import annotations

import math

__all__ = []

#: A tuning curve's axis turns logarithmic where its values span more than this factor.
LOG_SCALE_RATIO = 20.0
#: Performance profiles and tuning curves of more algorithms than this have their keys
#: below the panels (inside, they would hide the curves).
PROFILE_KEY_INSIDE = 6


def pictures(result, plots):
    """(CD diagram, profiles, tuning curves) as PNG bytes (None where there is none)."""
    from fastnet.report._html import DPI

    s = result.suite
    cd = None
    if result.friedman is not None:          # (a figure sized to its labels, however many)
        ax = plots.cd_diagram(result.friedman, title="selected error, mean ranks")
        cd = plots.to_png(ax, dpi=DPI)
    n = len(s.algorithms)
    key = 0.0 if n <= PROFILE_KEY_INSIDE else 0.24 * math.ceil(n / 2) + 0.2   # inches below
    a1, a2 = plots.panels(2, width=4.6, height=3.4 + key)
    plots.performance_profile(result.error_profiles, ax=a1, title="error",
                              xlabel="ratio τ to the least selected error")
    plots.performance_profile(result.time_profiles, ax=a2, title="time to target",
                              xlabel="ratio τ to the fewest traversals")
    fig = a1.figure
    height = fig.get_figheight()
    fig.subplots_adjust(top=1 - 0.35 / height,             # room for the panel titles
                        bottom=(fig.subplotpars.bottom * 3.4 + key) / height)
    if key:                                  # many algorithms: each key below its panel
        for i, ax in enumerate((a1, a2)):          # (from the left edge of its half)
            ax.legend(loc="upper left", bbox_to_anchor=(i / 2 + 0.01, (key - 0.02) / height),
                      bbox_transform=fig.transFigure, ncol=2, fontsize="x-small", frameon=False)
    profiles = plots.to_png((a1, a2), dpi=DPI)
    curves = []
    per_row = 3
    problems = list(s.problems)
    # many algorithms: one key (the colours are the same in every panel) below the first row
    key = 0.0 if n <= PROFILE_KEY_INSIDE else 0.24 * math.ceil(n / 4) + 0.2
    for start in range(0, len(problems), per_row):
        row = problems[start:start + per_row]
        below = key if start == 0 else 0.0
        axes = plots.panels(len(row), width=3.6, height=3.0 + below)
        for ax, p in zip(axes, row):
            ylabel = ("median epochs to success" if s.is_generated(p)
                      else "best validation error")
            drawn = {result.labels[a]: result.cells[(a, p)].curve for a in s.algorithms}
            plots.expected_best_curves(drawn, ax=ax, title=p, ylabel=ylabel)
            low = min(float(c.expected.min()) for c in drawn.values())
            high = max(float((c.high if c.high is not None else c.expected).max())
                       for c in drawn.values())
            if low > 0 and high / low > LOG_SCALE_RATIO:
                ax.set_yscale("log")              # (a few bad configurations dwarf the rest)
            if not key:
                ax.legend(fontsize="x-small")
        fig = axes[0].figure
        height = fig.get_figheight()
        fig.subplots_adjust(top=1 - 0.35 / height,
                            bottom=(fig.subplotpars.bottom * 3.0 + below) / height)
        if below:
            fig.legend(*axes[0].get_legend_handles_labels(), loc="upper left", ncol=4,
                       bbox_to_anchor=(0.01, (below - 0.02) / height), fontsize="x-small",
                       frameon=False)
        curves.append(plots.to_png(axes, dpi=DPI))
    return cd, profiles, curves
