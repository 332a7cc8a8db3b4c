"""HTML reports and comparisons: structure, escaping, self-containment, the CLI, the pictures.

The page in a real browser: tests/test_report_html_browser.py.
"""
import base64
import dataclasses
import html
import os
import re
import sys
from html.parser import HTMLParser

import numpy as np
import pytest
from _extras import needs

from fastnet import cli
from fastnet._files import new_file_mode  # (the mode any new file gets)
from fastnet.experiment import Experiment, run_experiment
from fastnet.report import compare, summarize, timing_summary

matplotlib = needs("matplotlib")

from fastnet import plots  # noqa: E402

EVIL = "<script>alert('x')</script>&\"q\""
VOID = {"meta", "link", "img", "br", "hr", "input", "col", "wbr", "source"}


@pytest.fixture(scope="module")
def files(proben1_root, tmp_path_factory):
    """Two small result files: a classification and an approximation problem, two networks."""
    d = tmp_path_factory.mktemp("html")
    out = []
    for name, options in (("plus", {"max_epochs": 60}),
                          ("iminus", {"max_epochs": 60, "variant": "irprop-"})):
        path = d / f"{name}.jsonl"
        run_experiment(Experiment(problems=("cancer1", "building1"), networks=("linear", "pivot"),
                                  runs=4, seed=3, options=options, keep_predictions=True,
                                  root=str(proben1_root)), path)
        out.append(path)
    return out


@pytest.fixture(scope="module")
def report_page(files):
    rep = summarize(files[0])
    return rep, rep.to_html(timing=timing_summary(files[0]))


class Page(HTMLParser):
    """Tags, ids, images, tables (as lists of rows of cell texts) and nesting errors."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.imgs, self.tables = [], [], [], [], {}
        self.headings, self.meta, self.links, self._table, self._cell = [], [], [], None, None
        self._heading = None
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append(f"unclosed: {self.stack}")

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "img":
            self.imgs.append(a)
        elif tag == "meta":
            self.meta.append(a)
        elif tag in ("link", "a"):
            self.links.append(a.get("href"))
        elif tag == "table":
            self._table = a.get("id")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag in ("h1", "h2", "h3"):
            self._heading = []
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None
        elif tag in ("h1", "h2", "h3"):
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)


def assert_self_contained(text, page):
    assert not page.errors, page.errors[:5]
    assert len(page.ids) == len(set(page.ids)), "duplicate ids"
    low = text.lower()
    assert "<script" not in low and "http://" not in low and "https://" not in low
    assert 'src="http' not in low and "@import" not in low and "url(" not in low
    assert all(h is None or h.startswith(("#", "data:")) for h in page.links)
    csp = [m for m in page.meta if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]
    for img in page.imgs:
        assert img["src"].startswith("data:image/png;base64,")
        png = base64.b64decode(img["src"].split(",", 1)[1], validate=True)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int(img["width"]), int(img["height"])) == plots_size(png)
        assert img.get("alt")


def plots_size(png):
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def markdown_body_rows(md):
    """The body rows of each Markdown table in ``md``, as unescaped cell texts."""
    tables = []
    for block in md.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if len(lines) > 2:   # heading, alignment, rows
            tables.append([[html.unescape(re.sub(r"\\(.)", r"\1", c.strip()))
                            for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[2:]])
    return tables


def body_rows(table):
    return [r for r in table if r and not all(c == "" for c in r)]


# --------------------------------------------------------------------------- report

def test_report_page_has_the_text_reports_tables(report_page):
    rep, text = report_page
    page = Page(text)
    assert_self_contained(text, page)
    assert page.headings[0] == "fastnet report: plus.jsonl"
    for h in ("Results", "Test error distribution", "Cost", "Set-up",
              "Distributions over the runs"):
        assert h in page.headings
    main, dist = markdown_body_rows(rep.to_markdown())
    assert len(main) == len(dist) == len(rep.rows)
    for table_id, cells in (("results-table", main), ("distribution-table", dist)):
        rows = page.tables[table_id]
        # two heading rows (group headings span their columns), then one row per cell
        assert rows[2:] == cells
    assert page.tables["results-table"][0] == [
        "problem", "arch", "n", "training", "validation", "test", "test set classif.", "overfit",
        "total epochs", "relevant epochs"]
    assert page.tables["distribution-table"][0] == [
        "problem", "arch", "n", "best run (by validation)", "test error", "corr(val,test)"]
    assert page.tables["distribution-table"][1] == [
        "run", "val", "test", "classif.", "min", "Q1", "median", "Q3", "max"]
    assert len(page.tables["timing-table"]) == 1 + len(rep.rows) + 1  # heading, cells, total
    setup = dict((r[0], r[1]) for r in page.tables["setup-table"])
    h = rep.header
    assert setup["fastnet version"] == h["version"] and setup["machine"] == h["machine"]
    assert setup["multilayer rule"] == h["identity"]["multilayer_rule"]
    assert setup["set-up hash"] == h["setup_hash"]
    assert " ".join(h["build"]["extra_compile_args"]) in setup["build"]


def test_report_page_pictures_per_cell(report_page):
    rep, text = report_page
    page = Page(text)
    # per cell: errors, test error histogram, epochs; classification problems add one;
    # per problem of two or more networks, their test errors side by side (box, ECDF)
    expected = sum(4 if r.test_class_mean is not None else 3 for r in rep.rows)
    problems = [r.problem for r in rep.rows]
    shared = [p for p in dict.fromkeys(problems) if problems.count(p) >= 2]
    assert len(page.imgs) == expected + 2 * len(shared)
    alts = [img["alt"] for img in page.imgs]
    for p in shared:  # before the cells' own pictures, on one pair of axes per problem
        assert f"{p}: box-whiskers of the test squared error percentage per network" in alts
        assert f"{p}: side by side" in page.headings
    assert page.headings.index("Distributions over the runs") < page.headings.index("Set-up")
    for i, r in enumerate(rep.rows):
        assert f"cell-{i}" in page.ids and f"{r.problem}, {r.network}" in page.headings
    alts = " | ".join(img["alt"] for img in page.imgs)
    assert "cancer1, pivot: histogram of the test classification error" in alts
    assert "building1, linear: box-whiskers of the total and relevant epochs" in alts
    assert "building1, linear: histogram of the test classification error" not in alts
    assert "stopped by" in text and "CPU time per run" in text
    assert "examples 350/175/174 (training/validation/test, classification)" in text


def test_report_samples_are_the_rows_runs(files):
    rep = summarize(files[0], exclude="worst-half")
    for r in rep.rows:
        s = rep.samples[(r.problem, r.network)]
        assert s["test"].size == r.n_runs == 2
        assert s["test"].mean() == pytest.approx(r.test_mean)
        assert s["epochs"].mean() == pytest.approx(r.epochs_mean)
        assert ("test_class" in s) == (r.test_class_mean is not None)
    text = rep.to_html(pictures=False)
    assert "8 more excluded (the worst half by validation error)" in text


def test_report_escapes_every_name(files):
    rep = summarize(files[0])
    row = dataclasses.replace(rep.rows[1], problem=EVIL, network=EVIL, architecture=EVIL)
    header = dict(rep.header, machine=EVIL, version=EVIL)
    evil = dataclasses.replace(rep, rows=(row,), header=header, source=f"/tmp/{EVIL}.jsonl",
                               samples={(EVIL, EVIL): rep.samples[(rep.rows[1].problem,
                                                                   rep.rows[1].network)]})
    text = evil.to_html()
    page = Page(text)
    assert_self_contained(text, page)
    assert "<script>" not in text and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in text
    assert EVIL in page.tables["results-table"][2]
    assert any(EVIL in img["alt"] for img in page.imgs)


def test_report_without_pictures_needs_no_matplotlib(report_page, monkeypatch):
    rep, _ = report_page
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"pip install matplotlib"):
        rep.to_html()
    text = rep.to_html(pictures=False)
    page = Page(text)
    assert not page.imgs and "results-table" in page.ids
    assert "Distributions over the runs" not in page.headings


def test_report_page_of_constant_and_single_runs(report_page):
    """One run, or runs that all agree, still give pictures (and no warning)."""
    rep, _ = report_page
    row = dataclasses.replace(rep.rows[0], n_runs=1)
    one = {k: v[:1] for k, v in rep.samples[(row.problem, row.network)].items()}
    same = {k: (np.full(6, v[0]) if v.dtype != object else v[:1].repeat(6))
            for k, v in one.items()}
    row2 = dataclasses.replace(rep.rows[0], network="same", n_runs=6)
    r = dataclasses.replace(rep, rows=(row, row2), samples={(row.problem, row.network): one,
                                                            (row.problem, "same"): same})
    page = Page(r.to_html())
    assert len(page.imgs) == 8 + 2  # and the two side by side


# --------------------------------------------------------------------------- compare

def cmp_means(cmp, i):
    return np.array([cmp.samples[cmp.labels[i]][p].mean() for p in cmp.problems])


def test_comparison_page(files):
    cmp = compare(files, labels=["plus", EVIL])
    text = cmp.to_html()
    page = Page(text)
    assert_self_contained(text, page)
    assert "<script>" not in text and EVIL in page.headings[0]
    for h in ("Verdicts per problem", "Across problems", "Algorithms",
              "Effects and p-values per problem", "Set-up", "Distributions per problem",
              "cancer1", "building1"):
        assert h in page.headings
    # the verdicts first, the pictures above the set-up
    assert page.headings.index("Verdicts per problem") == 1
    assert page.headings.index("Distributions per problem") < page.headings.index("Set-up")
    letters = [r[0] for r in body_rows(page.tables["algorithms-table"])[1:]]
    assert letters == ["A", "B", "C", "D"]
    assert [r[1] for r in page.tables["algorithms-table"][1:]] == list(cmp.labels)
    ttests = page.tables["ttests-table"]
    assert ttests[0][:2] == ["problem", "pair"] and "Welch p" in ttests[0]
    assert [r[1] for r in ttests[1:7]] == ["A vs B", "A vs C", "A vs D", "B vs C", "B vs D",
                                           "C vs D"]
    t = cmp.ttests[("cancer1", cmp.labels[0], cmp.labels[1])]
    assert ttests[1][-1] == (t if isinstance(t, str) else t.table_entry(("A", "B")))
    a, b = (cmp.samples[lab]["cancer1"] for lab in cmp.labels[:2])
    if t.sample_a.n_removed == t.sample_b.n_removed == 0:  # the geometric means' ratio
        ratio = np.exp(np.log(a).mean() - np.log(b).mean())
        assert float(ttests[1][4].split()[0]) == pytest.approx(ratio, rel=5e-3)
    means = page.tables["means-table"]
    assert means[1][1] == f"{a.mean():.3f} ± {a.std(ddof=1):.3f} (4)"
    over = page.tables["over-table"]
    assert len(over) == 1 + 6 and over[1][:4] == ["A vs B", *map(str, (
        np.sum(cmp_means(cmp, 0) < cmp_means(cmp, 1)), np.sum(cmp_means(cmp, 0) > cmp_means(cmp, 1)),
        np.sum(cmp_means(cmp, 0) == cmp_means(cmp, 1))))]
    assert "Too few problems: on 2 problems" in text and "0.5" in text
    assert len(page.tables["lacoste-table"]) == 1 + len(cmp.labels)
    setup = page.tables["setup-table"]
    assert setup[0] == ["", "plus.jsonl", "iminus.jsonl"]
    assert ["options", "max_epochs: 60", "max_epochs: 60; variant: irprop-"] in setup
    # per problem: box-whiskers, extended box-whiskers (4 runs each), histograms, ECDFs
    assert len(page.imgs) == 4 * len(cmp.problems)
    assert "cancer1: empirical distribution functions" in " ".join(i["alt"] for i in page.imgs)


def test_comparison_page_without_pictures(files):
    cmp = compare(files, measure="classification")
    page = Page(cmp.to_html(pictures=False))
    assert not page.imgs and "Notes" in page.headings
    assert body_rows(page.tables["means-table"])[1][0] == "cancer1"


# --------------------------------------------------------------------------- command line

def test_cli_report_html(files, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert cli.main(["report", str(files[0]), "--format", "html", "-o", str(out), "--timing",
                     "--exclude-worst-half"]) == 0
    cap = capsys.readouterr()
    assert cap.out == "" and f"wrote {out}" in cap.err
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    assert_self_contained(text, page)
    assert "timing-table" in page.ids and len(page.imgs) == 14 + 2 * 2
    assert "worst half of the runs by validation error excluded" in text
    assert sorted(os.listdir(tmp_path)) == ["report.html"]  # no temporary file left
    assert out.stat().st_mode & 0o777 == new_file_mode()  # the mode of any new file


def test_cli_compare_html(files, tmp_path, capsys):
    out = tmp_path / "cmp.html"
    assert cli.main(["compare", str(files[0]), str(files[1]), "-f", "html", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    page = Page(out.read_text(encoding="utf-8"))
    assert "ttests-table" in page.ids and len(page.imgs) == 8


def test_cli_other_formats_to_a_file(files, tmp_path, capsys):
    assert cli.main(["report", str(files[0]), "-f", "markdown", "--timing"]) == 0
    printed = capsys.readouterr().out
    out = tmp_path / "r.md"
    assert cli.main(["report", str(files[0]), "-f", "markdown", "--timing", "-o", str(out)]) == 0
    assert capsys.readouterr().out == "" and out.read_text() == printed
    assert cli.main(["compare", str(files[0]), str(files[1])]) == 0
    printed = capsys.readouterr().out
    out = tmp_path / "c.txt"
    assert cli.main(["compare", str(files[0]), str(files[1]), "-o", str(out)]) == 0
    assert out.read_text() == printed


@pytest.mark.parametrize("command", ["report", "compare"])
def test_cli_html_refusals(files, tmp_path, capsys, command, monkeypatch):
    args = [command, str(files[0])] + ([str(files[1])] if command == "compare" else [])
    missing = tmp_path / "no" / "such" / "dir" / "r.html"
    assert cli.main(args + ["-f", "html", "-o", str(missing)]) == 1
    err = capsys.readouterr().err
    assert "no such directory" in err and "Traceback" not in err
    assert not missing.parent.exists()
    assert cli.main(args + ["-f", "html"]) == 1
    assert "-o FILE" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "r.html"
    assert cli.main(args + ["-f", "html", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "pip install matplotlib" in err and "Traceback" not in err and not out.exists()


# --------------------------------------------------------------------------- fastnet.plots additions

def test_panels_and_to_png():
    axes = plots.panels(3, width=3.0, height=2.5)
    assert len(axes) == 3 and len({id(a.figure) for a in axes}) == 1
    assert axes[0].figure.canvas.manager is None  # pyplot does not keep the figure
    plots.histogram([1.0, 2.0, 2.5], ax=axes[0])
    png = plots.to_png(axes, dpi=50)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and plots_size(png) == (450, 125)
    assert plots.to_png(axes[0].figure, dpi=50) == png  # no time stamp: same bytes
    with pytest.raises(ValueError, match="`n` must be at least 1"):
        plots.panels(0)
    with pytest.raises(ValueError, match="no room"):
        plots.panels(1, width=0.5)


def test_histograms_and_ecdf():
    rng = np.random.default_rng(0)
    s = {"A": rng.normal(size=20), "B": rng.normal(1, 1, size=30), "C": np.full(5, 0.5)}
    (ax1, ax2) = plots.panels(2)
    plots.histograms(s, xlabel="error", ax=ax1)
    bars = [p for p in ax1.patches if p.get_gid() == "histogram"]
    heights = {}
    for p in bars:
        heights[p.get_facecolor()] = heights.get(p.get_facecolor(), 0) + p.get_height()
    assert len(heights) == 3 and all(h == pytest.approx(100.0) for h in heights.values())
    assert [t.get_text() for t in ax1.get_legend().get_texts()] == ["A", "B", "C"]
    plots.ecdf(s, xlabel="error", ax=ax2)
    lines = [ln for ln in ax2.lines if ln.get_gid() == "ecdf"]
    assert len(lines) == 3
    for ln, x in zip(lines, s.values()):
        y = ln.get_ydata()
        assert y[0] == 0 and y[-1] == 1 and np.all(np.diff(y) >= 0)
        assert np.array_equal(ln.get_xdata()[1:-1], np.sort(x))  # a step at every value
    (ax,) = plots.panels(1)
    plots.histograms([np.array([1.0, 1.0])], ax=ax)  # one sample, all values equal
    plots.ecdf(np.array([2.0]), ax=ax)
    plots.to_png(ax)
    with pytest.raises(ValueError, match="NaN"):
        plots.ecdf([np.array([1.0, np.nan])])


def test_box_plots_without_key():
    (a, b) = plots.panels(2)
    plots.box_whiskers({"x": [1.0, 2.0, 3.0]}, key=False, ax=a)
    plots.extended_box_whiskers({"x": [1.0, 2.0, 3.0, 4.0]}, key=False, ylabel="E", ax=b)
    assert a.get_legend() is None and b.get_legend() is None and b.get_ylabel() == "E"
    plots.box_whiskers({"x": [1.0, 2.0, 3.0]}, ax=a)
    assert a.get_legend() is not None


def test_pages_escape_names_from_the_file(files, tmp_path):
    """A problem named with markup in the result file itself (not only in a Report built by
    hand); the report page of a file lacking runs says so, escaped too."""
    from _result_files import rename_problem

    evil = [rename_problem(p, tmp_path / f"{k}.jsonl", "cancer1", EVIL)
            for k, p in enumerate(files)]
    lines = evil[0].read_text().splitlines()
    evil[0].write_text("\n".join(lines[:-1]) + "\n")  # the last run is missing
    rep = summarize(evil[0])
    text = rep.to_html(pictures=False)
    page = Page(text)
    assert_self_contained(text, page)
    assert "<script>" not in text and EVIL in page.tables["results-table"][2][0]
    assert text.count('id="incomplete"') == 1 and rep.incomplete
    for cmp_text in (compare(evil).to_html(), compare(evil).to_html(pictures=False)):
        page = Page(cmp_text)
        assert_self_contained(cmp_text, page)
        assert "<script>" not in cmp_text and page.tables["ttests-table"][1][0] == EVIL
        assert sum(EVIL in img["alt"] for img in page.imgs) == (3 if page.imgs else 0)
