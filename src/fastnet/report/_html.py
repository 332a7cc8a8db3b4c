"""Rendering of reports and comparisons as one self-contained HTML page.

The page holds the same tables as the text and Markdown renderings, the set-up from the
result file's header, and pictures of the distributions over the runs. Pictures come
from `fastnet.plots` (which imports matplotlib); this module never imports matplotlib.
Every picture is a PNG in a ``data:`` URI and the style sheet is inline, so the page
loads nothing else; its Content-Security-Policy forbids anything else and any script.
"""
from __future__ import annotations

import base64
import html
import math
import struct
from collections import Counter
from pathlib import Path

import numpy as np

from fastnet.report._render import MEASURES, _cells, _column_groups, _n_text

#: Pixels per inch of the embedded pictures (of `fastnet.plots.panels`' size).
DPI = 100
#: What the marks of a box plot are (the pictures leave their key to the caption).
_BOX_KEY = ("Box: quartiles; orange bar: median; whiskers: minimum and maximum; dot and line "
            "beside a box: mean ± one standard deviation.")

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
       sans-serif; margin: 1.5rem auto; max-width: 92rem; padding: 0 1rem; color: #1b1f24;
       line-height: 1.4; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de;
     padding-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin: 1.5rem 0 0.3rem; }
p.sub { color: #57606a; margin-top: 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.2rem 0 1rem; }
p.cap { color: #57606a; font-size: 0.85rem; margin: 0.5rem 0 0.2rem; max-width: 70rem; }
.row { display: flex; flex-wrap: wrap; gap: 0 2rem; align-items: flex-start; }
.tbl.small p.cap { max-width: 22rem; }
th, td { border: 1px solid #d0d7de; padding: 0.2rem 0.45rem; }
thead th { background: #f3f5f7; font-weight: 600; text-align: center; }
tbody th { text-align: left; font-weight: 600; background: #fafbfc; }
tbody tr:nth-child(even) td { background: #f8f9fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.txt { text-align: left; }
table:not(.setup) td.txt { white-space: nowrap; }
table.setup th { text-align: left; white-space: nowrap; vertical-align: top; }
table.setup td { max-width: 60rem; overflow-wrap: anywhere; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.95em; }
nav ul { columns: 16rem; padding-left: 1.2rem; margin: 0.3rem 0; }
nav li { break-inside: avoid; }
#logrank-table td, #logrank-table th { white-space: normal; }
/* verdicts are sentences: left-aligned like all text */
#over-table td:last-child { text-align: left; }
/* a table wider than the screen scrolls, its first (key) column staying in view */
.scroll tbody th:first-child, .scroll thead tr:first-child th:first-child {
  position: sticky; left: 0; z-index: 1; }
.scroll thead tr:first-child th:first-child { background: #f3f5f7; }
@media (max-width: 1100px) {
  table { font-size: 0.8rem; }
  th, td { padding: 0.15rem 0.3rem; }
}
.figs { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: flex-start; }
figure { margin: 0; max-width: 100%; }
figure img { display: block; width: 100%; height: auto; }
figcaption { font-size: 0.8rem; color: #57606a; }
section.cell { border-top: 1px solid #eaeef2; }
.meta { font-size: 0.85rem; color: #57606a; margin: 0.1rem 0 0.5rem; }
ul.notes { font-size: 0.9rem; }
ul.verdicts { max-width: 70rem; padding-left: 1.2rem; }
p.warn { border-left: 4px solid #bf8700; background: #fff8c5; padding: 0.4rem 0.7rem;
         max-width: 70rem; }
footer { margin-top: 2rem; font-size: 0.8rem; color: #57606a; }
"""


def _e(text):
    """Escape any value for HTML text and attribute values."""
    return html.escape(str(text), quote=True)


def _n(k, word):
    """'1 run', '2 runs'."""
    return f"{k} {word}{'' if k == 1 else 's'}"


def _plots():
    """fastnet.plots, once we know matplotlib is there (else a clear ImportError)."""
    from fastnet import plots

    try:
        plots._figure_class()
    except ImportError as exc:
        raise ImportError("the HTML report draws its pictures with matplotlib, an optional "
                          "dependency: pip install matplotlib (or choose another format)") \
            from exc
    return plots


def _page(title, body, version, css=""):
    """The whole page; `css`: rules of this page alone, after the shared ones."""
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>{_e(title)}</title>", f"<style>{_CSS}{css}</style>", "</head>", "<body>", body,
        f"<footer>Written by fastnet {_e(version)}; one file, nothing loaded from elsewhere."
        "</footer>",
        "</body>", "</html>", ""])


# --------------------------------------------------------------------------- pieces

def _value(v):
    """A header value as short readable text."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_value(x)}" for k, x in v.items()) if v else "none"
    if isinstance(v, (list, tuple)):
        return ", ".join(_value(x) for x in v)
    return str(v)


def _wrap(table_id, caption, table, cls="tbl"):
    """A table with its id and a caption paragraph above it (as wide as the text)."""
    cap = f'<p class="cap" id="{table_id}-caption">{_e(caption)}</p>' if caption else ""
    described = f' aria-describedby="{table_id}-caption"' if caption else ""
    return (f'<div class="{cls}">{cap}<div class="scroll">'
            + table.replace("<table", f'<table id="{table_id}"{described}', 1) + "</div></div>")


def _kv_table(table_id, pairs, caption=None):
    out = ['<table class="setup">', "<tbody>"]
    for k, v in pairs:
        out.append(f"<tr><th scope=\"row\">{_e(k)}</th><td>{_e(_value(v))}</td></tr>")
    out += ["</tbody>", "</table>"]
    return _wrap(table_id, caption, "\n".join(out))


def _setup_pairs(header, source=None):
    """The result file header as (name, value) rows, most telling first."""
    ident = header.get("identity", {}) or {}
    grid = header.get("grid", {}) or {}
    build = header.get("build", {}) or {}
    pairs = []
    if source is not None:
        pairs.append(("result file", source))
    pairs += [("fastnet version", header.get("version", "?")),
              ("created", header.get("created", "?")),
              ("machine", header.get("machine", "?")),
              ("algorithm", ident.get("algorithm", "?")
               if "algorithms" not in grid else ", ".join(grid["algorithms"])),
              ("multilayer rule", ident.get("multilayer_rule", "?")),
              ("presets", ident.get("presets", "?")),
              ("options", ident.get("options") or "none (the presets' values)"),
              ("master seed", ident.get("seed", "?")),
              ("grid", (f"{len(grid.get('problems', []))} problems x "
                        f"{len(grid.get('networks', []))} networks x {grid.get('runs', '?')} runs: "
                        f"{', '.join(map(str, grid.get('problems', [])))}; "
                        f"{', '.join(map(str, grid.get('networks', [])))}") if grid else "?"),
              ("predictions kept", ident.get("keep_predictions", False)),
              ("set-up hash", header.get("setup_hash", "?")),
              ("build", (f"{build.get('cc', '?')} {' '.join(build.get('extra_compile_args', []) or [])}"
                         + ("; debug kernels" if build.get("debug_kernels") else ""))
               if build else "?"),
              ("kernels SHA-256", header.get("kernels_sha256", "?")),
              ("Python, NumPy", f"{header.get('python', '?')}, {header.get('numpy', '?')}")]
    data = header.get("data") or {}
    if data:
        pairs.append(("data", "; ".join(
            f"{d.get('file', p)} (SHA-256 {str(d.get('sha256', '?'))[:12]}..."
            + (", as published" if d.get("matches_published") else "") + ")"
            for p, d in data.items())))
    for name, params in (ident.get("preset_parameters") or {}).items():
        pairs.append((f"preset {name}", params))
    return pairs


def _png_size(png):
    """(width, height) of PNG bytes, from the IHDR chunk."""
    return struct.unpack(">II", png[16:24])


def _figure(png, alt, caption):
    w, h = _png_size(png)
    data = base64.b64encode(png).decode("ascii")
    # as wide as the picture (so is its caption), narrower on a narrow screen
    return (f'<figure style="width: {w}px"><img src="data:image/png;base64,{data}" width="{w}" '
            f'height="{h}" alt="{_e(alt)}"><figcaption>{_e(caption)}</figcaption></figure>')


def _picture(plots, draw, alt, caption):
    """Draw into a new single panel with `draw(ax)` and return a <figure>."""
    (ax,) = plots.panels(1)
    draw(ax)
    return _figure(plots.to_png(ax, dpi=DPI), alt, caption)


def _finite(x):
    x = np.asarray(x, dtype=float)
    return x[np.isfinite(x)]


def _grouped_table(table_id, rows, columns, caption):
    """A table with Proben1's two heading rows (group headings span their columns)."""
    groups = _column_groups(columns)
    top, sub = [], []
    for g, a, b in groups:
        if g:
            top.append(f'<th scope="colgroup" colspan="{b - a}">{_e(g)}</th>')
            sub += [f'<th scope="col">{_e(columns[k][2])}</th>' for k in range(a, b)]
        else:
            top += [f'<th scope="col" rowspan="2">{_e(columns[k][2])}</th>' for k in range(a, b)]
    out = ["<table>", "<thead>", "<tr>" + "".join(top) + "</tr>", "<tr>" + "".join(sub) + "</tr>",
           "</thead>", "<tbody>"]
    for cells in _cells(rows, columns):
        nt = _n_text(columns)
        tds = [f'<th scope="row">{_e(cells[0])}</th>']
        tds += [f'<td class="txt">{_e(c)}</td>' for c in cells[1:nt]]
        tds += [f'<td class="num">{_e(c)}</td>' for c in cells[nt:]]
        out.append("<tr>" + "".join(tds) + "</tr>")
    out += ["</tbody>", "</table>"]
    return _wrap(table_id, caption, "\n".join(out))


def _simple_table(table_id, heads, rows, caption=None, numeric_from=1, cls="tbl"):
    """A one-heading-row table; cells are strings or (text, tooltip); the first heads its row."""
    out = ["<table>", "<thead><tr>" + "".join(f'<th scope="col">{_e(h)}</th>' for h in heads)
           + "</tr></thead>", "<tbody>"]
    for row in rows:
        tds = []
        for k, c in enumerate(row):
            title = ""
            if isinstance(c, tuple):
                c, title = c
                title = f' title="{_e(title)}"'
            if k == 0:
                tds.append(f'<th scope="row"{title}>{_e(c)}</th>')
            else:
                tds.append(f'<td class="{"num" if k >= numeric_from else "txt"}"{title}>{_e(c)}</td>')
        out.append("<tr>" + "".join(tds) + "</tr>")
    out += ["</tbody>", "</table>"]
    return _wrap(table_id, caption, "\n".join(out), cls)


def _timing_table(timing):
    rows = []
    for r in (*timing.rows, timing.total):
        rows.append([r.problem, r.network, str(r.n_runs), str(r.epochs),
                     str(r.traversals["total"]), f"{r.cpu_time:.3f}", f"{r.cpu_per_run:.4f}",
                     f"{r.traversals_per_cpu_second():.4g}"])
    flags = " ".join(timing.build.get("extra_compile_args", []) or [])
    heads = ["problem", "network", "runs", "epochs", "traversals", "CPU s", "CPU s/run",
             "trav./CPU s"]
    return _simple_table(
        "timing-table", heads, rows,
        caption=(f"Cost of all runs of the file (machine: {timing.machine}; build flags: "
                 f"{flags or '?'}). CPU time is the process CPU time of each run's training "
                 "loop (validation included); traversals count forward N*C, backward N*C, "
                 "update C per epoch and M*C per evaluation (Proben1)."),
        numeric_from=2)


# --------------------------------------------------------------------------- report

def _n_test(header, problem, network):
    """Test examples of a report cell (from the file's checklist), or None."""
    check = (header.get("checklist") or {}).get(f"{problem}/{network.split(' / ')[0]}") or {}
    n = (check.get("data") or {}).get("n_test")
    return n if isinstance(n, int) and n > 0 else None


def _cell_pictures(plots, row, s, header=None):
    """The pictures of one (problem, network) cell of a report."""
    figs = []
    name = f"{row.problem}, {row.network}"
    errors = {"training": _finite(s["train"]), "validation": _finite(s["val"]),
              "test": _finite(s["test"])}
    errors = {k: v for k, v in errors.items() if v.size}
    if errors:
        figs.append(_picture(
            plots, lambda ax: plots.box_whiskers(errors, ylabel="squared error percentage",
                                                 key=False, ax=ax),
            f"{name}: box-whiskers of the training, validation and test error over the runs",
            "Squared error percentage of the network kept (lowest validation error), per "
            "run. " + _BOX_KEY))
    test = _finite(s["test"])
    if test.size:
        figs.append(_picture(
            plots, lambda ax: plots.histogram(test, xlabel="test squared error percentage",
                                              ax=ax),
            f"{name}: histogram of the test error over the runs",
            f"Test squared error percentage: histogram of the {test.size} runs."))
    cls = _finite(s.get("test_class", []))
    if cls.size:
        n_test = _n_test(header or {}, row.problem, row.network)
        # on N test examples the error takes the values 100 k / N: bins on that grid
        bins = "auto" if n_test is None else plots._grid_edges(cls, 100.0 / n_test)
        figs.append(_picture(
            plots, lambda ax: plots.histogram(cls, bins=bins,
                                              xlabel="test classification error (%)", ax=ax),
            f"{name}: histogram of the test classification error over the runs",
            "Test set classification error (winner takes all), per run"
            + ("." if n_test is None else f"; one bin per step of 100/{n_test} % "
               f"(one of the {n_test} test examples) or a few of them.")))
    epochs = {"total": _finite(s["epochs"]), "relevant": _finite(s["relevant_epoch"])}
    epochs = {k: v for k, v in epochs.items() if v.size}
    if epochs:
        figs.append(_picture(
            plots, lambda ax: plots.box_whiskers(epochs, ylabel="epochs", key=False, ax=ax),
            f"{name}: box-whiskers of the total and relevant epochs over the runs",
            "Epochs trained (total) and the epoch of the network kept (relevant), per "
            "run. " + _BOX_KEY))
    return figs


def _cell_meta(header, row, s):
    """One line on a cell: size, stop reasons, stopping rule and data sizes."""
    parts = [f"network {row.architecture} ({'with' if row.shortcut else 'no'} shortcuts, "
             f"{row.n_connections} connections)", _n(row.n_runs, "run")
             + (f" ({row.n_excluded} excluded)" if row.n_excluded else "")]
    cpu = _finite(s.get("cpu_time", [])) * 1000.0
    if cpu.size:
        parts.append(f"CPU time per run {np.median(cpu):.3g} ms (median; {cpu.min():.3g} to "
                     f"{cpu.max():.3g})")
    reasons = Counter(str(r) for r in s.get("stop_reason", []))
    if reasons:
        parts.append("stopped by " + ", ".join(f"{k} ({v})" for k, v in reasons.most_common()))
    network = row.network.split(" / ")[0]
    check = (header.get("checklist") or {}).get(f"{row.problem}/{network}") or {}
    if check.get("stopping"):
        parts.append(f"rule {check['stopping']}")
    data = check.get("data") or {}
    if data:
        n_val = data.get("n_val", data.get("n_valid", "?"))  # n_valid in files before 0.2
        parts.append(f"examples {data.get('n_train', '?')}/{n_val}/"
                     f"{data.get('n_test', '?')} (training/validation/test, "
                     f"{data.get('kind', '?')})")
    return "; ".join(parts)


def _side_by_side(plots, report):
    """Per problem with two or more networks (or algorithms): their test errors on one
    pair of axes, so that they compare by eye."""
    out, what = [], "test squared error percentage"
    problems = list(dict.fromkeys(r.problem for r in report.rows))
    for k, p in enumerate(problems):
        samples = {r.network: _finite(report.samples[(r.problem, r.network)]["test"])
                   for r in report.rows if r.problem == p and (r.problem, r.network)
                   in report.samples}
        samples = {n: v for n, v in samples.items() if v.size}
        if len(samples) < 2:
            continue
        out += [f'<section class="cell" id="problem-{k}"><h3>{_e(p)}: side by side</h3>',
                '<div class="figs">' + _picture(
                    plots, lambda ax, s=samples: plots.box_whiskers(
                        s, ylabel=f"{what} (%)", key=False, ax=ax),
                    f"{p}: box-whiskers of the {what} per network",
                    f"{what.capitalize()} per run, one box per network on one axis. "
                    + _BOX_KEY) + _picture(
                    plots, lambda ax, s=samples: plots.ecdf(s, xlabel=f"{what} (%)", ax=ax),
                    f"{p}: empirical distribution functions of the {what} per network",
                    "Fraction of runs with an error at most x: the curve further left is "
                    "the better network.") + "</div></section>"]
    return out


def report_html(report, *, timing=None, pictures=True):
    """The HTML page of a `Report` (see `Report.to_html`)."""
    plots = _plots() if pictures else None
    name = Path(report.source).name
    h = report.header
    n_excl = sum(r.n_excluded for r in report.rows)
    sub = (f"{_n(sum(r.n_runs for r in report.rows), 'run')} of "
           f"{_n(len({r.problem for r in report.rows}), 'problem')} and "
           f"{_n(len({r.network for r in report.rows}), 'network')}"
           + (f", {n_excl} more excluded (the worst half by validation error)" if n_excl else "")
           + f"; fastnet {h.get('version', '?')}, set-up {h.get('setup_hash', '?')}, "
           f"written {h.get('created', '?')}.")
    body = [f"<h1>fastnet report: {_e(name)}</h1>", f'<p class="sub">{_e(sub)}</p>']
    note = report.incomplete_note()
    if note:
        body.append(f'<p class="warn" id="incomplete" role="note">{_e(note)}</p>')
    cells = list(report.rows)
    if pictures and cells:
        body.append("<nav><strong>Distributions over the runs:</strong><ul>"
                    + "".join(f'<li><a href="#cell-{i}">{_e(r.problem)}, {_e(r.network)} '
                              f'({_e(r.architecture)})</a></li>' for i, r in enumerate(cells))
                    + "</ul></nav>")
    body += ['<h2 id="results">Results</h2>',
             _grouped_table("results-table", report.rows, report._main, report._caption("Results")),
             '<h2 id="distribution">Test error distribution</h2>',
             _grouped_table("distribution-table", report.rows, report._dist,
                            report._caption("Test error distribution"))]
    if timing is not None:
        body += ['<h2 id="timing">Cost</h2>', _timing_table(timing)]
    if pictures:
        body.append('<h2 id="pictures">Distributions over the runs</h2>')
        body += _side_by_side(plots, report)
        for i, row in enumerate(cells):
            s = report.samples.get((row.problem, row.network))
            body.append(f'<section class="cell" id="cell-{i}">')
            body.append(f"<h3>{_e(row.problem)}, {_e(row.network)}</h3>")
            if s is None:
                body += ['<p class="meta">no per-run values in this report</p>', "</section>"]
                continue
            body.append(f'<p class="meta">{_e(_cell_meta(h, row, s))}</p>')
            body.append('<div class="figs">' + "".join(_cell_pictures(plots, row, s, h)) + "</div>")
            body.append("</section>")
    body += ['<h2 id="setup">Set-up</h2>', _kv_table("setup-table", _setup_pairs(h, report.source))]
    return _page(f"fastnet report: {name}", "\n".join(body), h.get("version", "?"))


# --------------------------------------------------------------------------- compare

def _pairwise_table(table_id, table, title):
    what = str(table).splitlines()[0]
    rows = []
    for nm, row in zip(table.names, table.matrix):
        rows.append([nm] + ["-" if (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"
                            for v in row])
    return _simple_table(table_id, [""] + list(table.names), rows, caption=f"{title}: {what}",
                         cls="tbl small")


def _problem_n_test(headers, problem):
    """The test examples of `problem` in the result files' checklists, if they agree."""
    found = {_n_test(h, problem, key.split("/", 1)[1])
             for h in headers.values() for key in (h.get("checklist") or {})
             if key.startswith(f"{problem}/")}
    return found.pop() if len(found) == 1 else None


def comparison_html(cmp, *, pictures=True):
    """The HTML page of a `Comparison` (see `Comparison.to_html`)."""

    plots = _plots() if pictures else None
    letters = cmp._letters()
    what = MEASURES[cmp.measure][1]
    title = "fastnet comparison: " + " vs ".join(cmp.labels)
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="sub">{_e(what.capitalize())} of {len(cmp.labels)} result sets on '
            f"{_n(len(cmp.problems), 'problem')}.</p>"]
    pairs = cmp._pairs()
    alpha = cmp._alpha()
    body.append('<h2 id="verdicts">Verdicts per problem</h2>')
    body.append(f'<p class="cap">Proben1\'s t-test at {100 * alpha:g} % on the '
                + ("log errors, so an effect is a ratio of geometric mean errors"
                   if cmp._log() else "errors (percent)")
                + "; the interval is Welch's; the details are in the table of effects.</p>")
    body.append('<ul class="verdicts">' + "".join(
        f"<li><b>{_e(p)}</b>: {_e(cmp.verdict(p, a, b))}</li>"
        for p in cmp.problems for a, b in pairs) + "</ul>")
    over = cmp.over_problems()
    if over:
        heads, rows = cmp._over_table()
        body.append('<h2 id="over">Across problems</h2>')
        body.append(_simple_table(
            "over-table", heads, rows, numeric_from=1,
            caption=(f"Sign and Wilcoxon signed-rank tests on each problem's mean {what} "
                     "(Demšar 2006): how often each algorithm is lower, and the two-sided "
                     "p-values.")))
        if len(over) > len(rows):
            body.append('<p class="warn">' + _e(" ".join(over[len(rows):])) + "</p>")
    body += ['<h2 id="algorithms">Algorithms</h2>', _simple_table(
        "algorithms-table", ["", "label", "result file", "network"],
        [[letters[lab], lab, Path(src).name, net] for lab, (src, net) in zip(cmp.labels, cmp.sources)],
        numeric_from=99)]
    rows = [[p, f"{letters[a]} vs {letters[b]}", *cmp._effect_cells(p, a, b, letters)]
            for p in cmp.problems for a, b in pairs]
    body += ['<h2 id="ttests">Effects and p-values per problem</h2>', _simple_table(
        "ttests-table", cmp._effect_heads(), rows, caption=cmp._effect_caption(),
        numeric_from=2)]
    rows = [[p] + [f"{np.mean(x):.3f} ± {np.std(x, ddof=1) if len(x) > 1 else math.nan:.3f} "
                   f"({len(x)})" for lab in cmp.labels for x in [cmp.samples[lab][p]]]
            for p in cmp.problems]
    body += [f'<h2 id="means">Mean {_e(what)}</h2>', _simple_table(
        "means-table", ["problem"] + [letters[lab] for lab in cmp.labels], rows,
        caption=f"Mean {what} ± standard deviation over the runs (n runs).")]
    if cmp.lacoste is not None:
        body.append('<h2 id="lacoste">Lacoste et al. over classification problems</h2>')
        body.append(_pairwise_table(
            "lacoste-table", cmp.lacoste, f"Lacoste et al. Poisson binomial test over "
            f"{len(cmp.lacoste_problems)} classification problems (best run by validation "
            "error per problem)"))
    if cmp.notes:
        body.append('<h2 id="notes">Notes</h2><ul class="notes">'
                    + "".join(f"<li>{_e(n)}</li>" for n in cmp.notes) + "</ul>")
    if pictures:
        body += _comparison_pictures(cmp, plots, what)
    if cmp.headers:
        body += _comparison_setup(cmp.headers)
    version = next((h.get("version", "?") for h in cmp.headers.values()), "?")
    return _page(title, "\n".join(body), version)


def _comparison_pictures(cmp, plots, what):
    """The comparison page's section of pictures: per problem, the distributions of
    each algorithm's errors (box-whiskers, extended box-whiskers, histograms, ECDF)."""
    body = ['<h2 id="pictures">Distributions per problem</h2>']
    for i, p in enumerate(cmp.problems):
        samples = {lab: _finite(cmp.samples[lab][p]) for lab in cmp.labels}
        samples = {k: v for k, v in samples.items() if v.size}
        body.append(f'<section class="cell" id="problem-{i}"><h3>{_e(p)}</h3>')
        body.append('<p class="meta">' + _e("; ".join(
            f"{k}: {_n(v.size, 'run')}" for k, v in samples.items())) + "</p>")
        figs = []
        if samples:
            figs.append(_picture(
                plots, lambda ax, s=samples: plots.box_whiskers(s, ylabel=what, key=False,
                                                                ax=ax),
                f"{p}: box-whiskers of the {what} per algorithm",
                f"{what.capitalize()} per run, one box per algorithm. " + _BOX_KEY))
            if min(v.size for v in samples.values()) >= 4:
                figs.append(_picture(
                    plots, lambda ax, s=samples: plots.extended_box_whiskers(
                        s, ylabel=what, key=False, ax=ax),
                    f"{p}: extended box-whiskers of the {what} per algorithm",
                    "Extended box-whiskers (Lawrence et al.): eight segments of one "
                    "eighth of the runs each; orange bar: median; dot and line: mean "
                    "± one standard deviation."))
            n_test = (_problem_n_test(cmp.headers, p) if cmp.measure == "classification"
                      else None)
            bins = ("auto" if n_test is None else
                    plots._grid_edges(np.concatenate(list(samples.values())), 100 / n_test))
            figs.append(_picture(
                plots, lambda ax, s=samples, b=bins: plots.histograms(
                    s, bins=b, xlabel=f"{what} (%)", ax=ax),
                f"{p}: histograms of the {what} per algorithm",
                "Histograms on common bins, in percent of each algorithm's runs"
                + ("." if n_test is None else f", each bin whole steps of 100/{n_test} % "
                   f"(one of the {n_test} test examples).")))
            figs.append(_picture(
                plots, lambda ax, s=samples: plots.ecdf(s, xlabel=what, ax=ax),
                f"{p}: empirical distribution functions of the {what}",
                "Fraction of runs with an error at most x: the curve further left is "
                "the better algorithm."))
        body.append('<div class="figs">' + "".join(figs) + "</div></section>")
    return body


def _comparison_setup(headers):
    """The comparison page's set-up table: each result file's set-up side by side."""
    files = list(headers)
    table = {}
    for f in files:
        for k, v in _setup_pairs(headers[f]):
            table.setdefault(k, {})[f] = _value(v)
    rows = [[k] + [vals.get(f, "-") for f in files] for k, vals in table.items()]
    return ['<h2 id="setup">Set-up</h2>',
            _simple_table("setup-table", ["", *(Path(f).name for f in files)], rows,
                          numeric_from=99).replace("<table", '<table class="setup"', 1)]
