"""Pictures of training results: distributions, box-whiskers, Hamey's graphs, learning curves,
and of comparisons across problems: critical-difference diagrams, performance profiles.

matplotlib is an optional dependency (``pip install matplotlib``) and is imported only
inside the functions. Every function draws into the given ``ax`` (or a new figure), can
save the figure with ``path=`` (``.png``, ``.svg`` or ``.pdf``) and returns the Axes.

Artists carry a ``gid`` naming their role (``"box"``, ``"median"``, ``"whisker"``,
``"segment"``, ``"mean_sd"``, ``"histogram"``, ``"training_graph"``, ``"model"``,
``"asymptote"``, ``"efficiency"``, ``"optimal_limit"``, ``"half_range"``,
``"train_error"``, ``"val_error"``, ``"test_error"``, ``"stopping_point"``, ``"ecdf"``,
``"algorithm"``, ``"clique"``, ``"critical_difference"``, ``"profile"``,
``"expected_best"``, ``"band"``) so
that they can be found again, e.g. for styling.

`panels` and `to_png` serve pages that embed pictures (the HTML report): a row of
axes on a figure that pyplot does not keep, and its PNG bytes.
"""
from fastnet.plots._across import cd_diagram, expected_best_curves, performance_profile
from fastnet.plots._curves import efficiency_graph, learning_curves, training_graph
from fastnet.plots._distributions import (
    box_whiskers, ecdf, extended_box_whiskers, histogram, histograms,
)
from fastnet.plots._figure import (  # noqa: F401  (the report draws through these)
    _figure_class, _grid_edges, _pyplot, panels, to_png,
)

__all__ = [
    "box_whiskers",
    "cd_diagram",
    "ecdf",
    "efficiency_graph",
    "expected_best_curves",
    "extended_box_whiskers",
    "histogram",
    "histograms",
    "learning_curves",
    "panels",
    "performance_profile",
    "to_png",
    "training_graph",
]


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
