"""Every figure fastnet draws, rendered by Agg: no two tick labels overlap, no legend
covers a title, no tick label leaves the figure."""
import numpy as np
import pytest
from _extras import needs

matplotlib = needs("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from fastnet import cli, plots  # noqa: E402
from fastnet.experiment import Experiment, run_experiment  # noqa: E402
from fastnet.report import compare, summarize  # noqa: E402
from fastnet.stats import friedman_nemenyi, hamey_analysis, performance_profiles  # noqa: E402

#: Pixels two boxes may share (antialiased edges touch).
SLACK = 1.0


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _shrunk(b):
    from matplotlib.transforms import Bbox

    return Bbox.from_extents(b.x0 + SLACK, b.y0 + SLACK, b.x1 - SLACK, b.y1 - SLACK)


def _tick_labels(axis, renderer):
    """(text, bbox) of the tick labels the axis draws (its ticks inside the view)."""
    out = []
    for tick in axis._update_ticks():  # what Axis.draw draws
        for lab in (tick.label1, tick.label2):
            if lab.get_visible() and lab.get_text().strip():
                out.append((lab.get_text(), lab.get_window_extent(renderer)))
    return out


def layout_problems(fig):
    """What collides in `fig`: a list of sentences (empty when the layout is clean)."""
    if not hasattr(fig.canvas, "get_renderer"):  # a figure of `panels`, drawn by to_png
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    box = fig.bbox
    problems = []
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        titles = [t for t in (ax.title, ax._left_title, ax._right_title)
                  if t.get_visible() and t.get_text().strip()]
        if fig._suptitle is not None and fig._suptitle.get_text().strip():
            titles.append(fig._suptitle)
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = _tick_labels(axis, r)
            for i, (t1, b1) in enumerate(labels):
                if (b1.x0 < box.x0 - SLACK or b1.x1 > box.x1 + SLACK or b1.y0 < box.y0 - SLACK
                        or b1.y1 > box.y1 + SLACK):
                    problems.append(f"axes {k}: {name} tick label {t1!r} leaves the figure")
                for t2, b2 in labels[i + 1:]:
                    if _shrunk(b1).overlaps(_shrunk(b2)):
                        problems.append(f"axes {k}: {name} tick labels {t1!r} and {t2!r} overlap")
        legends = [lg for lg in [ax.get_legend(), *fig.legends] if lg is not None]
        for lg in legends:
            lb = lg.get_window_extent(r)
            if lb.x0 < box.x0 - SLACK or lb.x1 > box.x1 + SLACK or lb.y1 > box.y1 + SLACK:
                problems.append(f"axes {k}: the legend leaves the figure")
            for t in titles:
                if _shrunk(lb).overlaps(_shrunk(t.get_window_extent(r))):
                    problems.append(f"axes {k}: the legend covers the title {t.get_text()!r}")
    return problems


def assert_clean(fig):
    problems = layout_problems(fig)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ the checker itself

def test_the_checker_finds_overlapping_ticks_a_covered_title_and_a_clipped_label():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks([1, 2, 3], ["a long label here", "another long one", "third long label"])
    ax.plot([1, 2, 3], [1, 2, 3], label="line")
    ax.set_title("title")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0))
    problems = layout_problems(fig)
    assert any("overlap" in p for p in problems)
    assert any("covers the title" in p for p in problems)
    assert any("leaves the figure" in p for p in problems)
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([1, 2, 3], [1, 2, 3])
    assert layout_problems(fig) == []


# ------------------------------------------------------------------ every plotting function

LONG = {"two:pivot / rprop+": np.exp(np.random.default_rng(0).normal(0.5, 0.2, 12)),
        "two:pivot / quickprop": np.exp(np.random.default_rng(1).normal(0.6, 0.3, 12)),
        "two:pivot / backprop(learning_rate=0.5)":
            np.exp(np.random.default_rng(2).normal(0.4, 0.3, 12))}


def _hamey():
    rng = np.random.default_rng(1)
    t = np.ceil(50 + ((1 - rng.random(300)) ** -0.5 - 1) / 0.005)
    t[t >= 1000] = 1000
    return hamey_analysis(t, 1000)


SPECS = ["rprop+", "adam(learning_rate=loguniform(1e-3, 1e-1))",
         "backprop(learning_rate=loguniform(1e-4, 1e-1), momentum=uniform(0, 0.9))", "quickprop",
         "scg"]


def _across(names, problems=8, seed=0):
    """A table algorithm x problem of costs, the later algorithms a little worse."""
    rng = np.random.default_rng(seed)
    return rng.lognormal(0.0, 0.5, (len(names), problems)) + 0.3 * np.arange(len(names))[:, None]


DRAWINGS = {
    "box_whiskers": lambda: plots.box_whiskers(LONG, ylabel="test squared error percentage (%)"),
    "box_whiskers titled": lambda: plots.box_whiskers(
        LONG, title="cancer1: test squared error percentage"),
    "extended_box_whiskers": lambda: plots.extended_box_whiskers(LONG, title="cancer1"),
    "histogram": lambda: plots.histogram(LONG["two:pivot / rprop+"]),
    "histograms": lambda: plots.histograms(LONG, xlabel="test squared error percentage (%)"),
    "ecdf": lambda: plots.ecdf({k: v * 1000 for k, v in LONG.items()}, xlabel="test error"),
    "training_graph": lambda: plots.training_graph(_hamey()),
    "efficiency_graph": lambda: plots.efficiency_graph(_hamey()),
    "cd_diagram": lambda: plots.cd_diagram(friedman_nemenyi(_across(SPECS), algorithms=SPECS),
                                           title="test error, 8 problems"),
    "cd_diagram two, best left": lambda: plots.cd_diagram(
        friedman_nemenyi(_across("AB"), algorithms=["A", "B"]), best_on_right=False),
    "cd_diagram twelve": lambda: plots.cd_diagram(friedman_nemenyi(
        _across([f"algorithm {i}" for i in range(12)], problems=30),
        algorithms=[f"algorithm {i}" for i in range(12)])),
    "cd_diagram on panels": lambda: plots.cd_diagram(
        friedman_nemenyi(_across(SPECS[:4]), algorithms=SPECS[:4]),
        ax=plots.panels(1, width=9.0, height=3.2)[0]),
    "performance_profile on panels": lambda: plots.performance_profile(
        performance_profiles(_across("ABCD"), algorithms=list("ABCD")),
        ax=plots.panels(1, width=6.0, height=3.0)[0]),
    "performance_profile": lambda: plots.performance_profile(
        performance_profiles(_across(SPECS), algorithms=SPECS), title="time to target"),
    "learning_curves": lambda: plots.learning_curves(
        np.arange(1, 101), 10 / np.arange(1, 101), 12 / np.arange(1, 21) + 1,
        np.arange(5, 101, 5), relevant_epoch=60, log_y=True,
        title="cancer1, network 4+2 l, seed 0: stopped by GL after 100 epochs"),
}


@pytest.mark.parametrize("name", list(DRAWINGS))
def test_every_plotting_function_lays_out_cleanly(name):
    out = DRAWINGS[name]()
    ax = out if hasattr(out, "figure") else plt.gca()
    assert_clean(ax.figure)


def _texts(fig):
    return [(t.get_text(), t.get_window_extent(fig.canvas.get_renderer()))
            for ax in fig.axes for t in ax.texts if t.get_text().strip()]


@pytest.mark.parametrize("name", [n for n in DRAWINGS if n.startswith("cd_diagram")])
def test_cd_diagram_names_neither_overlap_nor_leave_the_figure(name):
    ax = DRAWINGS[name]()
    fig = ax.figure
    if not hasattr(fig.canvas, "get_renderer"):  # a figure of `panels`
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    texts = _texts(fig)
    # a name per algorithm and the critical difference's value
    assert len(texts) == sum(ln.get_gid() == "algorithm" for ln in ax.get_lines()) + 1
    box = fig.bbox
    for i, (t1, b1) in enumerate(texts):
        assert box.x0 - SLACK <= b1.x0 and b1.x1 <= box.x1 + SLACK, f"{t1!r} leaves the figure"
        assert box.y0 - SLACK <= b1.y0 and b1.y1 <= box.y1 + SLACK, f"{t1!r} leaves the figure"
        for t2, b2 in texts[i + 1:]:
            assert not _shrunk(b1).overlaps(_shrunk(b2)), f"{t1!r} and {t2!r} overlap"
        for t2, b2 in _tick_labels(ax.xaxis, fig.canvas.get_renderer()):
            assert not _shrunk(b1).overlaps(_shrunk(b2)), f"{t1!r} and the rank {t2!r} overlap"
        if ax.get_title():
            assert not _shrunk(b1).overlaps(_shrunk(ax.title.get_window_extent())), t1


# ------------------------------------------------------------------ pages and the command line

@pytest.fixture
def drawn(monkeypatch):
    """Every figure saved or turned into a PNG while the test runs."""
    figures = []
    save = Figure.savefig

    def recording(self, *args, **kw):
        figures.append(self)
        return save(self, *args, **kw)

    monkeypatch.setattr(Figure, "savefig", recording)
    return figures


@pytest.fixture(scope="module")
def two_files(proben1_root, tmp_path_factory):
    d = tmp_path_factory.mktemp("layout")
    paths = []
    for name, options in (("plus", {"max_epochs": 60}),
                          ("iminus", {"max_epochs": 60, "variant": "irprop-"})):
        path = d / f"{name}.jsonl"
        run_experiment(Experiment(problems=("cancer1", "building1"), networks=("pivot",),
                                  runs=4, seed=1, options=options, root=str(proben1_root)), path)
        paths.append(path)
    return paths


def test_report_comparison_and_study_pages_lay_out_cleanly(two_files, drawn, tmp_path):
    from fastnet.study import Study, run_study, write_study

    summarize(two_files[0]).to_html()
    compare(two_files, labels=["two:pivot / rprop+", "two:pivot / irprop-"]).to_html()
    write_study(run_study(Study("xor", ("rprop+", "backprop(learning_rate=2.0)"), trials=10,
                                limit=100)), tmp_path)
    assert len(drawn) > 10
    problems = [p for fig in drawn for p in layout_problems(fig)]
    assert not problems, "\n".join(problems)


def test_compare_plot_and_train_plot_lay_out_cleanly(two_files, drawn, tmp_path, proben1_root,
                                                     capsys):
    compare(two_files).plot(tmp_path / "pics")
    assert cli.main(["train", "cancer1", "--data", str(proben1_root), "--plot",
                     str(tmp_path / "curves.png")]) == 0
    capsys.readouterr()
    assert len(drawn) == 5
    problems = [p for fig in drawn for p in layout_problems(fig)]
    assert not problems, "\n".join(problems)


def test_learning_curves_mark_the_gl_threshold_that_stopped_the_run(proben1_root):
    from fastnet import MLP, train_rprop
    from fastnet.datasets import load_proben1

    ds = load_proben1("cancer1", proben1_root)
    r = train_rprop(MLP(9, [4, 2], 2, shortcut=True), *ds.train, *ds.val,
                    preset="proben1-multilayer", seed=0)
    assert r.stop_reason.startswith("GL")
    alpha = float(r.stop_reason[2:])
    ax = plots.learning_curves(r, log_y=True, title="cancer1")
    (line,) = [ln for ln in ax.lines if ln.get_gid() == "gl_threshold"]
    # the run stopped at the first strip end whose validation error passed this level
    level = line.get_ydata()[0]
    assert level == pytest.approx(min(r.val_error) * (1 + alpha / 100))
    assert r.val_error[-1] > level and np.all(r.val_error[:-1] <= np.minimum.accumulate(
        r.val_error[:-1]) * (1 + alpha / 100))
    assert_clean(ax.figure)
    ax = plots.learning_curves(np.arange(1, 4), [3.0, 2.0, 1.0])
    assert not [ln for ln in ax.lines if ln.get_gid() == "gl_threshold"]


@pytest.mark.parametrize("n_test, spread", [(174, 6), (174, 80), (50, 1)])
def test_grid_edges_put_every_value_inside_a_bin_of_whole_steps(n_test, spread):
    rng = np.random.default_rng(n_test + spread)
    step = 100.0 / n_test
    k = rng.integers(3, 3 + spread, 40)
    values = k * step  # classification errors in percent on n_test examples
    edges = plots._grid_edges(values, step)
    assert len(edges) - 1 <= 30
    widths = np.diff(edges) / step
    assert np.allclose(widths, np.rint(widths)) and np.allclose(widths, widths[0])
    # every value lies half a step or more inside its bin: no value on an edge
    gap = np.min(np.abs(values[:, None] - edges[None, :]))
    assert gap == pytest.approx(step / 2)
    assert edges[0] < values.min() and edges[-1] > values.max()
    counts, _ = np.histogram(values, edges)
    if round(widths[0]) == 1:  # one bin per grid point: as many filled bins as distinct values
        assert np.count_nonzero(counts) == len(np.unique(k))


def test_report_histograms_of_classification_errors_use_the_grid(two_files, monkeypatch):
    seen = []
    real = plots.histogram

    def spy(sample, **kw):
        seen.append((np.asarray(sample), kw.get("bins")))
        return real(sample, **kw)

    monkeypatch.setattr(plots, "histogram", spy)
    summarize(two_files[0]).to_html()
    grids = [(x, b) for x, b in seen if b is not None and not isinstance(b, str)]
    assert grids  # cancer1's classification errors (174 test examples)
    for x, edges in grids:
        assert np.allclose(np.diff(edges) / (100 / 174), np.rint(np.diff(edges) / (100 / 174)))
        assert np.allclose(x * 174 / 100, np.rint(x * 174 / 100))


def test_comparison_histograms_of_classification_errors_use_the_grid(two_files, monkeypatch):
    seen = []
    real = plots.histograms

    def spy(samples, **kw):
        seen.append((np.concatenate(list(samples.values())), kw.get("bins")))
        return real(samples, **kw)

    monkeypatch.setattr(plots, "histograms", spy)
    compare(two_files, measure="classification").to_html()
    ((values, edges),) = seen  # cancer1 only: building1 is an approximation problem
    steps = np.diff(edges) / (100 / 174)
    assert np.allclose(steps, np.rint(steps)) and np.all(np.rint(steps) >= 1)
    k = values * 174 / 100  # the errors are whole test examples
    assert np.allclose(k, np.rint(k))
    assert edges[0] < values.min() and edges[-1] > values.max()
