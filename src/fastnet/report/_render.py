"""Rendering of report tables: text in Proben1's layout, Markdown, LaTeX."""
from __future__ import annotations

import html
import math
import re

import numpy as np

#: The measures a report or a comparison reads: name -> (field of the final test
#: errors, words for titles).
MEASURES = {"squared": ("squared_error_percentage", "test squared error percentage"),
            "classification": ("classification_error", "test classification error")}


def _fmt(v, digits=2):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{v:.{digits}f}"


# (field, group heading, sub heading, digits)
_MAIN = [("problem", "", "problem", None), ("architecture", "", "arch", None),
         ("n_runs", "", "n", None),
         ("train_mean", "training", "mean", 2), ("train_std", "training", "stddev", 2),
         ("val_mean", "validation", "mean", 2), ("val_std", "validation", "stddev", 2),
         ("test_mean", "test", "mean", 2), ("test_std", "test", "stddev", 2),
         ("test_class_mean", "test set classif.", "mean", 2),
         ("test_class_std", "test set classif.", "stddev", 2),
         ("gl_end_mean", "overfit", "GL", 1),
         ("epochs_mean", "total epochs", "mean", 0), ("epochs_std", "total epochs", "stddev", 0),
         ("relevant_mean", "relevant epochs", "mean", 0),
         ("relevant_std", "relevant epochs", "stddev", 0)]
_DIST = [("problem", "", "problem", None), ("architecture", "", "arch", None),
         ("n_runs", "", "n", None),
         ("best_run", "best run (by validation)", "run", None),
         ("best_val", "best run (by validation)", "val", 2),
         ("best_test", "best run (by validation)", "test", 2),
         ("best_test_class", "best run (by validation)", "classif.", 2),
         ("test_min", "test error", "min", 2), ("test_q1", "test error", "Q1", 2),
         ("test_median", "test error", "median", 2), ("test_q3", "test error", "Q3", 2),
         ("test_max", "test error", "max", 2),
         ("corr_val_test", "", "corr(val,test)", 2)]


def _n_text(columns):
    """How many leading columns hold text (problem, architecture, algorithm)."""
    n = 0
    while n < len(columns) and columns[n][0] in ("problem", "architecture", "algorithm"):
        n += 1
    return n


def _cells(rows, columns):
    return [[_fmt(getattr(r, f), d) for f, _, _, d in columns] for r in rows]


def _column_groups(columns):
    """Runs of adjacent columns under one group heading: (heading, first, end)."""
    groups, i = [], 0
    while i < len(columns):
        g = columns[i][1]
        j = i
        while j < len(columns) and columns[j][1] == g:
            j += 1
        groups.append((g, i, j))
        i = j
    return groups


def _text_table(rows, columns):
    body = _cells(rows, columns)
    subs = [s for _, _, s, _ in columns]
    widths = [max(len(s), *(len(b[i]) for b in body)) if body else len(s)
              for i, s in enumerate(subs)]
    groups = _column_groups(columns)  # group headings span their columns
    for g, a, b in groups:  # widen the last column of a group that is narrower than its title
        span = sum(widths[a:b]) + 2 * (b - a - 1)
        if len(g) > span:
            widths[b - 1] += len(g) - span
    top = []
    for g, a, b in groups:
        span = sum(widths[a:b]) + 2 * (b - a - 1)
        top.append(g.center(span) if g else " " * span)
    nt = _n_text(columns)
    lines = ["  ".join(top).rstrip(),
             "  ".join(s.rjust(w) if k >= nt else s.ljust(w) for k, (s, w) in
                       enumerate(zip(subs, widths))).rstrip()]
    lines.append("-" * len(lines[1]))
    for b in body:
        lines.append("  ".join(c.rjust(w) if k >= nt else c.ljust(w)
                               for k, (c, w) in enumerate(zip(b, widths))).rstrip())
    return "\n".join(lines)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _markdown_escape(text):
    """Text that renders as written in Markdown: HTML entities for ``& < >``, a backslash
    before Markdown's punctuation (``|`` would end a table cell), one line."""
    text = html.escape(" ".join(str(text).splitlines()), quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _markdown_table(rows, columns):
    heads = [f"{g} {s}".strip() if g else s for _, g, s, _ in columns]
    out = ["| " + " | ".join(map(_markdown_escape, heads)) + " |",
           "|" + "|".join(":---" if k < _n_text(columns) else "---:"
                          for k in range(len(columns))) + "|"]
    out += ["| " + " | ".join(map(_markdown_escape, c)) + " |" for c in _cells(rows, columns)]
    return "\n".join(out)


#: First characters that make a spreadsheet read a CSV cell as a formula (OWASP).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(text):
    """A text cell for CSV, with a ``'`` before a leading formula character, on one line."""
    text = "'" + text if text.startswith(_FORMULA_START) else text
    return text.replace("\r", " ").replace("\n", " ")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}
_LATEX_RE = re.compile("|".join(map(re.escape, _LATEX_SPECIAL)))


def _latex_escape(s):
    """Every LaTeX special character as text (one pass, so no escape is escaped again)."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group()], " ".join(s.splitlines()))


def _runs_text(gaps):
    """``(range(0, 1), range(3, 6))`` -> ``"0, 3-5"``."""
    return ", ".join(str(g.start) if len(g) == 1 else f"{g.start}-{g.stop - 1}" for g in gaps)


#: Cells named in a report's note on missing runs; the rest are counted.
_NOTE_CELLS = 12


def _incomplete_note(incomplete, header):
    """The sentence of `Report.incomplete_note` (and of the comparison's notes)."""
    if not incomplete:
        return ""
    runs = header["grid"]["runs"]
    parts = []
    for (problem, network), gaps in list(incomplete.items())[:_NOTE_CELLS]:
        missing = sum(len(g) for g in gaps)
        parts.append(f"{problem}/{network} has {runs - missing} of {runs} runs"
                     + (f" (missing {_runs_text(gaps)})" if missing < runs else ""))
    more = len(incomplete) - _NOTE_CELLS
    return (f"Incomplete: the file's set-up asks for {runs} runs per problem and network, but "
            + "; ".join(parts) + (f"; and {more} more cells lack runs" if more > 0 else "")
            + ". Rerun its experiment on the file to complete it.")


def _latex_table(rows, columns, caption):
    groups = [(g, b - a) for g, a, b in _column_groups(columns)]
    nt = _n_text(columns)
    spec = "l" * nt + "r" * (len(columns) - nt)
    lines = [r"\begin{table}[ht]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}",
             r"\hline",
             " & ".join(rf"\multicolumn{{{n}}}{{c}}{{{_latex_escape(g)}}}" if g and n > 1
                        else _latex_escape(g) if g else " & ".join([""] * n) if n > 1 else ""
                        for g, n in groups) + r" \\",
             " & ".join(_latex_escape(s) for _, _, s, _ in columns) + r" \\", r"\hline"]
    for c in _cells(rows, columns):
        lines.append(" & ".join(_latex_escape(x) for x in c) + r" \\")
    lines += [r"\hline", r"\end{tabular}", rf"\caption{{{_latex_escape(caption)}}}",
              r"\end{table}"]
    return "\n".join(lines)
