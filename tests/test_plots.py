"""fastnet.plots: every picture renders headless and has the right artists."""

import sys

import numpy as np
import pytest
from _extras import needs

matplotlib = needs("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import PathPatch, Rectangle  # noqa: E402

from fastnet import plots  # noqa: E402
from fastnet.stats import hamey_analysis, segment_points  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def rendered_pixels(ax):
    """Draw the figure and return its RGBA buffer."""
    fig = ax.figure
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())


def assert_nonempty(ax):
    img = rendered_pixels(ax)
    assert img.shape[0] > 0 and img.shape[1] > 0
    # something other than the white background was drawn
    assert np.any(img[..., :3] < 250)


def by_gid(ax, gid, kind=None):
    artists = list(ax.lines) + list(ax.patches) + list(ax.collections)
    out = [a for a in artists if a.get_gid() == gid]
    if kind is not None:
        out = [a for a in out if isinstance(a, kind)]
    return out


def samples():
    rng = np.random.default_rng(0)
    return {"normal": rng.normal(size=60), "lognormal": rng.lognormal(size=60),
            "bimodal": np.concatenate([rng.normal(-2, 0.3, 30), rng.normal(2, 0.3, 30)])}


def hamey_result():
    rng = np.random.default_rng(1)
    t = np.ceil(50 + ((1 - rng.random(700)) ** -0.5 - 1) / 0.005)
    t = np.concatenate([t, np.full(300, 1000.0)])
    t[t >= 1000] = 1000
    return hamey_analysis(t, 1000)


def test_histogram_percent():
    x = np.random.default_rng(2).normal(size=200)
    ax = plots.histogram(x, bins=12)
    bars = by_gid(ax, "histogram")
    assert len(bars) == 12
    assert np.isclose(sum(b.get_height() for b in bars), 100.0)  # percent of trials
    assert ax.get_ylabel() == "% of trials"
    assert_nonempty(ax)
    ax2 = plots.histogram(x, bins=5, percent=False)
    assert sum(b.get_height() for b in by_gid(ax2, "histogram")) == 200


def test_histogram_with_its_own_defaults():
    # bins="auto" with percent weights crashed (numpy refuses rules on weighted data)
    x = np.random.default_rng(3).normal(size=60)
    ax = plots.histogram(x, xlabel="test error [%]")
    bars = by_gid(ax, "histogram")
    edges = np.histogram_bin_edges(x, bins="auto")
    assert len(bars) == len(edges) - 1
    assert np.isclose(sum(b.get_height() for b in bars), 100.0)
    assert ax.get_xlabel() == "test error [%]" and ax.get_ylabel() == "% of trials"
    assert all(b.get_edgecolor()[:3] == (0.0, 0.0, 0.0) for b in bars)   # visible bar edges


def test_box_whiskers_boxes_and_mean_sd():
    data = samples()
    ax = plots.box_whiskers(data)
    boxes = by_gid(ax, "box")
    assert len(boxes) == 3 and all(isinstance(b, PathPatch) for b in boxes)
    assert len(by_gid(ax, "median")) == 3
    assert len(by_gid(ax, "whisker")) == 6  # two per box
    # mean +- sd: one line and one dot per sample
    assert len(by_gid(ax, "mean_sd")) == 6
    # the box spans Q1..Q3 as medians of the halves, the whiskers min..max
    x = data["lognormal"]
    lo, q1, med, q3, hi = segment_points(x, 4)
    ys = boxes[1].get_path().vertices[:, 1]
    assert np.isclose(ys.min(), q1) and np.isclose(ys.max(), q3)
    whisker_ends = np.concatenate([w.get_ydata() for w in by_gid(ax, "whisker")[2:4]])
    assert np.isclose(whisker_ends.min(), lo) and np.isclose(whisker_ends.max(), hi)
    line = by_gid(ax, "mean_sd")[2]
    assert np.allclose(sorted(line.get_ydata()), [x.mean() - x.std(ddof=1), x.mean() + x.std(ddof=1)])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["normal", "lognormal", "bimodal"]
    assert_nonempty(ax)


def test_box_whiskers_outliers():
    x = np.concatenate([np.random.default_rng(3).normal(size=50), [15.0, -12.0]])
    ax = plots.box_whiskers([x], outliers=True, mean_sd=False)
    fliers = by_gid(ax, "flier")
    assert len(fliers) == 1 and set(fliers[0].get_ydata()) >= {15.0, -12.0}
    assert by_gid(ax, "mean_sd") == []


def test_extended_box_whiskers_has_eight_segments():
    data = samples()
    ax = plots.extended_box_whiskers(data)
    rects = by_gid(ax, "segment", Rectangle)
    lines = [a for a in by_gid(ax, "segment") if not isinstance(a, Rectangle)]
    assert len(rects) == 6 * 3 and len(lines) == 2 * 3  # 8 segments per sample
    # the segment ends are the 9 division points
    p = segment_points(data["bimodal"], 8)
    r = rects[12:18]
    bottoms = [rr.get_y() for rr in r] + [r[-1].get_y() + r[-1].get_height()]
    assert np.allclose(bottoms, p[1:8])
    ends = sorted(np.concatenate([ln.get_ydata() for ln in lines[4:6]]))
    assert np.allclose([ends[0], ends[-1]], [p[0], p[8]])
    # the octile boxes outside Q1..Q3 are narrower than the quartile boxes
    widths = [rr.get_width() for rr in r]
    assert widths[0] < widths[1] and widths[5] < widths[4]
    assert len(by_gid(ax, "median")) == 3
    assert_nonempty(ax)


def test_training_and_efficiency_graphs():
    r = hamey_result()
    ax = plots.training_graph(r)
    (graph,) = by_gid(ax, "training_graph")
    assert np.allclose(graph.get_ydata(), r.training_graph)
    assert len(by_gid(ax, "model")) == 1 and len(by_gid(ax, "asymptote")) == 1
    assert np.isclose(by_gid(ax, "asymptote")[0].get_ydata()[0], r.asymptotic_success_rate)
    assert_nonempty(ax)
    ax = plots.efficiency_graph(r)
    (curve,) = by_gid(ax, "efficiency")
    assert np.allclose(curve.get_ydata(), r.efficiency)
    assert by_gid(ax, "optimal_limit")[0].get_xdata()[0] == r.optimal_limit
    half = by_gid(ax, "half_range")[0]
    assert np.allclose(half.get_xdata(), r.efficiency_range)
    assert np.allclose(half.get_ydata(), r.peak_efficiency / 2)
    assert_nonempty(ax)


def test_graphs_from_raw_times():
    ax = plots.training_graph([2, 3, 3, 5, 10, 10], limit=10)
    assert len(by_gid(ax, "training_graph")) == 1 and by_gid(ax, "model") == []
    ax = plots.efficiency_graph([2, 3, 3, 5, 10, 10], limit=10)
    assert by_gid(ax, "optimal_limit")[0].get_xdata()[0] == 6.0
    ax = plots.efficiency_graph([10, 10], limit=10)  # no success: no markers
    assert by_gid(ax, "optimal_limit") == []


def test_learning_curves():
    epochs = np.arange(1, 101)
    train = 1.0 / epochs
    strip_ends = np.arange(5, 101, 5)
    val = 1.0 / strip_ends + 0.001 * strip_ends
    ax = plots.learning_curves(epochs, train, val, strip_ends, test_error=val * 1.1,
                               test_epochs=strip_ends, relevant_epoch=30, log_y=True)
    for gid, n in (("train_error", 100), ("val_error", 20), ("test_error", 20)):
        (line,) = by_gid(ax, gid)
        assert len(line.get_xdata()) == n
    (stop,) = by_gid(ax, "stopping_point")
    assert stop.get_xdata()[0] == 30
    assert ax.get_yscale() == "log"
    assert_nonempty(ax)


def test_draws_into_given_axes_and_returns_it():
    fig, axes = plt.subplots(1, 2)
    out = plots.box_whiskers([1.0, 2.0, 3.0, 4.0], ax=axes[1])
    assert out is axes[1] and by_gid(axes[0], "box") == []


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_save_formats(tmp_path, suffix):
    path = tmp_path / f"box{suffix}"
    plots.extended_box_whiskers(samples(), path=path)
    assert path.stat().st_size > 0
    head = path.read_bytes()[:8]
    assert {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml"}[suffix] in head


def test_save_path_validation(tmp_path):
    with pytest.raises(ValueError, match=r"`path` must end in one of .png, .svg, .pdf, got '.*box.jpg'"):
        plots.histogram([1.0, 2.0], path=tmp_path / "box.jpg")


def test_validation():
    with pytest.raises(ValueError, match="`samples` must hold at least one sample"):
        plots.box_whiskers([])
    with pytest.raises(ValueError, match=r"`samples\[1\]` contains NaN"):
        plots.box_whiskers([[1.0, 2.0], [1.0, np.nan]])
    with pytest.raises(ValueError, match="`labels` has 1 entries for 2 samples"):
        plots.box_whiskers([[1.0, 2.0], [3.0, 4.0]], labels=["a"])
    with pytest.raises(ValueError, match="Give `labels` or a mapping in `samples`, not both"):
        plots.box_whiskers({"a": [1.0, 2.0]}, labels=["b"])
    with pytest.raises(ValueError, match=r"`samples\[0\]` needs at least 4 values for 8 segments, got 3"):
        plots.extended_box_whiskers([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"`limit` is required when `result` holds trial times, not a "
                                         r"HameyResult; got `result` of type list and no `limit`\."):
        plots.training_graph([1, 2, 3])
    with pytest.raises(ValueError, match="`train_error` has 2 values for 3 `epochs`"):
        plots.learning_curves([1, 2, 3], [1.0, 0.5])
    with pytest.raises(ValueError, match="`val_epochs` is required with `val_error`"):
        plots.learning_curves([1, 2, 3], [1.0, 0.5, 0.2], [0.7])
    with pytest.raises(ValueError, match="`test_error` has 1 values for 2 `test_epochs`"):
        plots.learning_curves([1, 2, 3], [1.0, 0.5, 0.2], test_error=[0.7], test_epochs=[1, 3])
    with pytest.raises(ValueError, match=r"`relevant_epoch` = 9 is outside the plotted epochs \[1, 3\]"):
        plots.learning_curves([1, 2, 3], [1.0, 0.5, 0.2], relevant_epoch=9)
    with pytest.raises(ValueError, match="`sample` contains NaN or infinite"):
        plots.histogram([1.0, np.inf])


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'pip install matplotlib \(or, from a fastnet checkout, '
                                          r'pip install "\.\[plot\]"\)'):
        plots.histogram([1.0, 2.0, 3.0])


def test_learning_curves_of_a_train_result():
    from fastnet import MLP, train_rprop
    from fastnet.stopping import GL

    rng = np.random.default_rng(0)
    X, T = rng.uniform(-1, 1, (60, 3)), (rng.uniform(size=(60, 2)) > 0.5) * 1.0
    r = train_rprop(MLP(3, (4,), 2, seed=0), X[:40], T[:40], X[40:50], T[40:50],
                    X_test=X[50:], Y_test=T[50:], stop=GL(1), max_epochs=200, strip=5)
    ax = plots.learning_curves(r)
    assert len(by_gid(ax, "train_error")[0].get_xdata()) == r.epochs
    assert list(by_gid(ax, "val_error")[0].get_xdata()) == list(r.val_epochs)
    assert list(by_gid(ax, "test_error")[0].get_xdata()) == list(r.val_epochs)
    assert by_gid(ax, "stopping_point")[0].get_xdata()[0] == r.relevant_epoch
    assert ax.get_legend() is not None
    with pytest.raises(TypeError, match=r"`epochs` is a TrainResult, which holds its own curves: give it "
                                        r"alone, without `train_error`, `relevant_epoch`\.$"):
        plots.learning_curves(r, r.train_error, relevant_epoch=3)
    assert ax.get_ylabel() == "squared error percentage E (%)"


@pytest.mark.parametrize("draw, what", [(plots.box_whiskers, "quartiles"),
                                        (plots.extended_box_whiskers, "8 segments")])
def test_box_plots_have_labels_names_and_a_key(draw, what):
    rng = np.random.default_rng(4)
    ax = draw({"rprop+": rng.normal(size=20), "irprop-": rng.normal(size=20)},
              ylabel="test error [%]")
    assert ax.get_ylabel() == "test error [%]"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["rprop+", "irprop-"]
    key = [t.get_text() for t in ax.get_legend().get_texts()]
    assert key[0].startswith(what) and "median" in key and "mean ± 1 sd" in key


def test_training_and_efficiency_graphs_have_a_key():
    r = hamey_result()
    key = [t.get_text() for t in plots.training_graph(r).get_legend().get_texts()]
    assert key[:2] == ["trials successful by t", "asymptotic model F(t)"]
    assert key[2].startswith("asymptotic success rate")
    key = [t.get_text() for t in plots.efficiency_graph(r).get_legend().get_texts()]
    assert key[0] == "efficiency E(t)"
    assert key[1] == f"optimal epoch limit T_E = {r.optimal_limit:g}"
    assert key[2].startswith("E >= e/2")


@pytest.mark.parametrize("epochs", ["x", 3, np.arange(1, 200)])
def test_learning_curves_name_what_was_given(epochs):
    """``learning_curves("x")`` is about `epochs`, not a missing `train_error` alone."""
    shown = {"x": "'x'", 3: "3"}.get(epochs if isinstance(epochs, (str, int)) else None, r"ndarray array\(\[.*\.\.\.")
    with pytest.raises(TypeError, match=r"^`epochs` must be a TrainResult, or epoch numbers given with "
                                        rf"`train_error`; got {shown} and no `train_error`\.$"):
        plots.learning_curves(epochs)


def _extent(artist):
    return artist.get_window_extent(artist.figure.canvas.get_renderer())


def test_learning_curves_key_sits_above_the_axes_under_the_title():
    """The key never covers a curve or the relevant-epoch line: it is above the axes."""
    epochs = np.arange(1, 41)
    ax = plots.learning_curves(epochs, 50.0 / epochs, [9.0, 5.0, 4.0, 4.5], [10, 20, 30, 40],
                               relevant_epoch=30, log_y=True, title="cancer1, seed 2")
    ax.figure.canvas.draw()
    key, frame, title = _extent(ax.get_legend()), _extent(ax.patch), _extent(ax.title)
    assert key.y0 >= frame.y1 - 1 and title.y0 >= key.y1 - 1
    assert ax.get_title() == "cancer1, seed 2" and ax.get_yscale() == "log"
    assert ax.get_ylabel() == "error, log scale"
    # plain numbers on the log axis (20, 50), not 2 x 10^1
    labels = [t.get_text() for t in ax.yaxis.get_majorticklabels() + ax.yaxis.get_minorticklabels()]
    assert "10" in labels and not any("times" in t or "^" in t for t in labels)


def test_training_graph_chooses_a_log_epoch_axis_for_a_long_tail():
    """Hamey's graph: when 90 % of the successes come in the first tenth of T, a linear
    axis squashes the curve against its left edge; the log axis spreads it."""
    rng = np.random.default_rng(0)
    early = np.minimum(np.round(np.concatenate([rng.gamma(3, 12, 90), np.full(10, 1000.0)])), 1000)
    r = hamey_analysis(early, 1000)
    ax = plots.training_graph(r)
    assert ax.get_xscale() == "log" and ax.get_xlim() == (1.0, 1000.0)
    assert "log scale" in ax.get_xlabel()
    assert plots.training_graph(r, log_x=False).get_xscale() == "linear"
    spread = np.minimum(np.round(rng.uniform(10, 900, 50)), 1000)
    assert plots.training_graph(spread, 1000).get_xscale() == "linear"
    assert plots.training_graph(spread, 1000, log_x=True).get_xscale() == "log"
    assert plots.training_graph([1000.0, 1000.0], 1000).get_xscale() == "linear"   # no success


# ------------------------------------------------------------------ across problems

def test_cd_diagram_draws_the_mean_ranks_the_cliques_and_the_critical_difference(tmp_path):
    from fastnet.stats import friedman_nemenyi

    table = np.array([[1.0, 1.0, 2.0, 1.0, 1.0, 2.0],
                      [2.0, 3.0, 1.0, 2.0, 2.0, 1.0],
                      [3.0, 2.0, 3.0, 3.0, 4.0, 3.0],
                      [4.0, 4.0, 4.0, 4.0, 3.0, 4.0]])
    r = friedman_nemenyi(table, algorithms=["a", "b", "c", "d"])
    ax = plots.cd_diagram(r, path=tmp_path / "cd.svg")
    assert (tmp_path / "cd.svg").stat().st_size > 0
    lines = by_gid(ax, "algorithm")
    assert sorted(ln.get_xdata()[0] for ln in lines) == sorted(r.mean_ranks.tolist())
    assert all(ln.get_ydata()[0] == 0.0 for ln in lines)       # each starts on the axis
    assert len(by_gid(ax, "clique")) == len(r.cliques) > 0
    bar = by_gid(ax, "critical_difference")[0]
    assert np.ptp(bar.get_xdata()) == pytest.approx(r.critical_difference)
    assert ax.get_xlim()[0] > ax.get_xlim()[1]                  # rank 1 on the right
    assert {t.get_text().split(" (")[0] for t in ax.texts} >= {"a", "b", "c", "d"}
    assert ax.get_xticks().tolist() == [1, 2, 3, 4]
    left = plots.cd_diagram(r, best_on_right=False)
    assert left.get_xlim()[0] < left.get_xlim()[1]
    with pytest.raises(TypeError, match="FriedmanNemenyi"):
        plots.cd_diagram(table)


def test_performance_profile_draws_each_profile_and_its_score():
    from fastnet.stats import performance_profiles

    r = performance_profiles({"A": [1.0, 2.0, np.inf], "B": [2.0, 2.0, 3.0]})
    ax = plots.performance_profile(r, tau_max=3.0)
    lines = by_gid(ax, "profile")
    assert [ln.get_label() for ln in lines] == ["A (score 0.67)", "B (score 0.89)"]
    for ln, rho in zip(lines, r.rho(lines[0].get_xdata())):
        assert ln.get_ydata().tolist() == rho.tolist()
    assert lines[0].get_xdata().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="tau_max"):
        plots.performance_profile(r, tau_max=1.0)


@pytest.mark.parametrize("label", ["backprop(learning_rate=0.5, momentum=0.9)",
                                   "adam(learning_rate=loguniform(1e-4, 1e-1))",
                                   "irprop+(eta_minus=0.4) (2.50)", "quickprop"])
def test_labels_wrap_between_parts_never_inside_a_word(label):
    # (issue 58, item 20) keys and box labels broke inside words ("learning_r" / "ate")
    import re

    from fastnet.plots._figure import _wrapped

    words = [w for w in re.split(r"[\s/,(:=_]+", label) if w]
    for width in range(4, 45):
        lines = _wrapped(label, width).split("\n")
        assert all(any(w in line for line in lines) for w in words), (width, lines)
        assert "".join(lines).replace(" ", "") == label.replace(" ", "")
        if width >= len("learning_rate="):              # (a name breaks only if it must)
            assert not any(line.endswith("_") for line in lines), (width, lines)
