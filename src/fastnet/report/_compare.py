"""Comparisons of several result files: Proben1 t-tests, sign/Wilcoxon, Lacoste."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastnet._docstrings import HTML_PAGE, PANDAS_RAISES, fill
from fastnet._validation import import_pandas

from fastnet.report._render import _incomplete_note
from fastnet.report._render import MEASURES
from fastnet.report._summary import _results

#: Characters kept in picture file names; any run of others becomes one ``_``.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def _picture_stem(problem, taken):
    """A file name stem for ``problem``'s pictures: ASCII letters, digits, ``_`` and ``-``
    only (never a path, never hidden), unique among ``taken``."""
    stem = _UNSAFE.sub("_", problem).lstrip("-")[:80] or "problem"
    base, k = stem, 2
    while stem in taken:
        stem, k = f"{base}-{k}", k + 1
    taken.add(stem)
    return stem


@dataclass(frozen=True)
class Comparison:
    """Several result sets compared per problem and over problems (see `compare`).

    Attributes
    ----------
    labels : tuple of str
        One label per algorithm (a result file, or a file and network).
    sources : tuple of (str, str)
        ``(file, network)`` of each label.
    problems : tuple of str
        Problems every algorithm has runs on, in order.
    measure : str
        ``"squared"`` or ``"classification"`` (see `MEASURES`).
    samples : dict
        ``{label: {problem: ndarray of test errors}}``.
    ttests : dict
        ``{(problem, label_a, label_b): ErrorComparison or str}``, a string saying why
        no test was possible (e.g. fewer than 3 runs).
    sign, wilcoxon : PairwiseTable or None
        Over problems, on the mean test errors (None with fewer than 2 problems).
    lacoste : PairwiseTable or None
        Poisson binomial test over the classification problems on which every
        algorithm kept test predictions, from each algorithm's run with the lowest
        validation error per problem.
    lacoste_problems : tuple of str
    notes : tuple of str
        Why parts were skipped.
    headers : dict
        ``{file: header}`` of the result files (their set-up, version, machine, build).
    """

    labels: tuple
    sources: tuple
    problems: tuple
    measure: str
    samples: dict
    ttests: dict
    sign: object
    wilcoxon: object
    lacoste: object
    lacoste_problems: tuple
    notes: tuple
    headers: dict = field(default_factory=dict, repr=False, compare=False)

    @fill(pandas_raises=PANDAS_RAISES)
    def to_dataframe(self):
        """The per-problem comparisons as a pandas DataFrame, one row per pair.

        Columns: ``problem``, ``a``, ``b`` (labels), ``n_a``, ``n_b``, ``mean_a``,
        ``mean_b`` (test errors), ``pvalue`` (of the test Proben1's rule chose, in
        [0, 1]), ``significant``, ``better`` (a label or None), ``unreliable`` and
        ``note`` (why no test was possible, else None).

        {{pandas_raises}}
        """
        pd = import_pandas("Comparison.to_dataframe")
        rows = []
        for (problem, a, b), test in self.ttests.items():
            xa, xb = self.samples[a][problem], self.samples[b][problem]
            row = {"problem": problem, "a": a, "b": b, "n_a": len(xa), "n_b": len(xb),
                   "mean_a": float(np.mean(xa)), "mean_b": float(np.mean(xb)),
                   "pvalue": None, "significant": None, "better": None, "unreliable": None,
                   "note": None}
            if isinstance(test, str):
                row["note"] = test
            else:
                row.update(pvalue=test.pvalue, significant=test.significant, better=test.better,
                           unreliable=test.unreliable)
            rows.append(row)
        return pd.DataFrame(rows, columns=["problem", "a", "b", "n_a", "n_b", "mean_a", "mean_b",
                                           "pvalue", "significant", "better", "unreliable",
                                           "note"])

    def _letters(self):
        return {lab: chr(ord("A") + i) if i < 26 else f"A{i}" for i, lab in enumerate(self.labels)}

    def to_text(self):
        """Legend, per-problem t-test table, means, and the tests over problems."""
        letters = self._letters()
        what = MEASURES[self.measure][1]
        out = ["Algorithms:"]
        for lab, (src, net) in zip(self.labels, self.sources):
            out.append(f"  {letters[lab]} = {lab}  ({src}, network {net})")
        pairs = [(a, b) for i, a in enumerate(self.labels) for b in self.labels[i + 1:]]
        out += ["", f"Proben1 t-tests per problem on the log {what} (Cochran/Cox t', 5 %): "
                "'A 1.2' = A is better, p = 1.2 %; '-' = no significant difference; "
                "(...) = unreliable, a sample stays non-normal after removing outliers; "
                "'n/a' = no test possible."]
        heads = [f"{letters[a]} vs {letters[b]}" for a, b in pairs]
        width = max([10] + [len(p) for p in self.problems])
        cols = [max(9, len(h)) for h in heads]
        out.append(f"{'problem':{width}s}  " + "  ".join(h.rjust(c) for h, c in zip(heads, cols)))
        for p in self.problems:
            cells = []
            for (a, b), c in zip(pairs, cols):
                t = self.ttests[(p, a, b)]
                cells.append((t if isinstance(t, str) else
                              t.table_entry((letters[a], letters[b]))).rjust(c))
            out.append(f"{p:{width}s}  " + "  ".join(cells))
        out += ["", f"Mean {what} (n runs):"]
        out.append(f"{'problem':{width}s}  " + "  ".join(f"{letters[lab]:>14s}" for lab in self.labels))
        for p in self.problems:
            out.append(f"{p:{width}s}  " + "  ".join(
                f"{np.mean(self.samples[lab][p]):9.3f} ({len(self.samples[lab][p]):2d})"
                for lab in self.labels))
        for title, table in (("Sign test over problems (mean " + what + ")", self.sign),
                             ("Wilcoxon signed-rank test over problems (mean " + what + ")",
                              self.wilcoxon),
                             ("Lacoste et al. Poisson binomial test over "
                              f"{len(self.lacoste_problems)} classification problems "
                              "(best run by validation error per problem)", self.lacoste)):
            if table is None:
                continue
            out += ["", title + ":", str(table)]
        if self.notes:
            out += [""] + [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    def __str__(self):
        return self.to_text()

    def _pair_rows(self):
        """(problem, a, b, n_a, n_b, mean_a, mean_b, p in %, better, unreliable, note) per
        problem and pair."""
        rows = []
        for (problem, a, b), test in self.ttests.items():
            xa, xb = self.samples[a][problem], self.samples[b][problem]
            row = [problem, a, b, len(xa), len(xb), float(np.mean(xa)), float(np.mean(xb))]
            if isinstance(test, str):
                row += [None, None, None, test]
            else:
                row += [100 * test.pvalue, test.better if test.significant else None,
                        test.unreliable, None]
            rows.append(row)
        return rows + self._over_rows()

    def _over_tables(self):
        return [(name, t) for name, t in (("sign test", self.sign), ("Wilcoxon test", self.wilcoxon),
                                          ("Lacoste Poisson binomial test", self.lacoste))
                if t is not None]

    def _over_rows(self):
        """The tests over problems, one row per pair: ``better`` the algorithm that wins
        more (sign), has the larger rank sum (Wilcoxon) or is more probably better
        (Lacoste, whose probability is in ``note``)."""
        label = {letter: lab for lab, letter in self._letters().items()}
        rows = []
        for name, t in self._over_tables():
            n = len(self.lacoste_problems if t is self.lacoste else self.problems)
            for i, a in enumerate(t.names):
                for j in range(i + 1, len(t.names)):
                    b, m = t.names[j], t.matrix
                    if t.pvalue is not None:
                        better = a if np.isfinite(m[i, j]) else b if np.isfinite(m[j, i]) else None
                        p, note = 100 * float(t.pvalue[i, j]), None
                    else:
                        better = a if m[i, j] > 0.5 else b if m[i, j] < 0.5 else None
                        p, note = None, f"Pr({label[a]} better than {label[b]}) = {m[i, j]:.4g}"
                    rows.append([f"over problems: {name}", label[a], label[b], n, n, None, None,
                                 p, label.get(better), None, note])
        return rows

    def to_csv(self):
        """The tests as CSV, one row per problem (or test over problems) and pair.

        Columns ``problem, a, b, n_a, n_b, mean_a, mean_b, p_percent, better,
        unreliable, note``. The t-test rows name ``better`` only if significant; the
        rows of the tests over problems (``problem`` ``"over problems: sign test"``,
        ``"... Wilcoxon test"``, ``"... Lacoste Poisson binomial test"``, ``n_a`` the
        number of problems) name the algorithm that wins more, has the larger rank
        sum, or is more probably better (the probability in ``note``). Text cells that a
        spreadsheet would run as a formula get a leading ``'`` (as `Report.to_csv`).
        """
        import csv
        import io

        from fastnet.report._render import _csv_text

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["problem", "a", "b", "n_a", "n_b", "mean_a", "mean_b", "p_percent",
                    "better", "unreliable", "note"])
        for row in self._pair_rows():
            w.writerow(["" if v is None else repr(v) if isinstance(v, float)
                        else _csv_text(v) if isinstance(v, str) else v for v in row])
        return buf.getvalue()

    def to_latex(self):
        """The legend, the per-problem t-tests, the means and the tests over problems
        (sign, Wilcoxon, Lacoste) as LaTeX ``tabular`` environments in ``table``
        floats (text from the files escaped)."""
        from fastnet.report._render import _latex_escape

        letters, what = self._letters(), MEASURES[self.measure][1]
        pairs = [(a, b) for i, a in enumerate(self.labels) for b in self.labels[i + 1:]]

        def table(heads, rows, caption, spec):
            lines = [r"\begin{table}[ht]", r"\centering", r"\small",
                     rf"\begin{{tabular}}{{{spec}}}", r"\hline",
                     " & ".join(map(_latex_escape, heads)) + r" \\", r"\hline"]
            lines += [" & ".join(_latex_escape(str(c)) for c in r) + r" \\" for r in rows]
            return "\n".join(lines + [r"\hline", r"\end{tabular}",
                                       rf"\caption{{{_latex_escape(caption)}}}", r"\end{table}"])

        legend = table(["", "algorithm", "result file", "network"],
                       [[letters[lab], lab, Path(src).name, net]
                        for lab, (src, net) in zip(self.labels, self.sources)],
                       "Algorithms compared.", "llll")
        tests = table(["problem"] + [f"{letters[a]} vs {letters[b]}" for a, b in pairs],
                      [[p] + [t if isinstance(t, str) else t.table_entry((letters[a], letters[b]))
                              for a, b in pairs for t in [self.ttests[(p, a, b)]]]
                       for p in self.problems],
                      f"Proben1 t-tests per problem on the log {what}: 'A 1.2' = A is better, "
                      "p = 1.2 %; '-' = no significant difference.", "l" + "r" * len(pairs))
        means = table(["problem"] + [letters[lab] for lab in self.labels],
                      [[p] + [f"{np.mean(self.samples[lab][p]):.3f}" for lab in self.labels]
                       for p in self.problems], f"Mean {what}.", "l" + "r" * len(self.labels))
        label = {letter: lab for lab, letter in letters.items()}
        over = [table([""] + list(t.names),
                      [[label[r]] + ["-" if not np.isfinite(v) else f"{v:.2f}" for v in row]
                       for r, row in zip(t.names, t.matrix)],
                      str(t).splitlines()[0] + f" ({name}, over problems).",
                      "l" + "r" * len(t.names))
                for name, t in self._over_tables()]
        return "\n\n".join([legend, tests, means, *over]) + "\n"

    @fill(html_page=HTML_PAGE)
    def to_html(self, *, pictures=True):
        """The comparison as one self-contained HTML page: its tables, set-ups and pictures.

        The tables are those of `to_text` (legend, t-tests per problem, means, the tests
        over problems, notes), then the result files' set-ups side by side. Per problem,
        pictures put the algorithms' test errors side by side: box-whiskers, extended
        box-whiskers (with at least 4 runs each), histograms on common bins and the
        empirical distribution functions. The pictures are PNG images in ``data:`` URIs
        and the style sheet is inline; the page loads nothing else.

        Parameters
        ----------
        pictures : bool, default=True
            Draw the pictures (needs matplotlib); False gives the tables only.

        {{html_page}}
        """
        from fastnet.report._html import comparison_html

        return comparison_html(self, pictures=pictures)

    def plot(self, directory):
        """Box-whiskers and extended box-whiskers of the test errors, one pair per problem.

        Parameters
        ----------
        directory : str or os.PathLike
            Created if needed; files ``<problem>-box.png`` and
            ``<problem>-extended-box.png``, where ``<problem>`` is the problem's name
            with every run of characters other than ASCII letters, digits, ``_`` and
            ``-`` replaced by ``_`` (``-2``, ``-3``, ... added if two names become
            one). A name from a result file never makes a path: ``../../x`` is
            written as ``_x-box.png`` inside `directory`.

        Returns
        -------
        list of pathlib.Path
            The files written.

        Raises
        ------
        ImportError
            If matplotlib is not installed.
        ValueError
            If a picture's file would not lie directly in `directory` (e.g. it is a
            symbolic link to elsewhere); nothing is written through it.
        """
        from fastnet import plots

        plt = plots._pyplot()
        directory = Path(os.fspath(directory))
        directory.mkdir(parents=True, exist_ok=True)
        written, taken, inside = [], set(), directory.resolve()
        for p in self.problems:
            samples = {lab: self.samples[lab][p] for lab in self.labels}
            stem = _picture_stem(p, taken)
            for kind, fn in (("box", plots.box_whiskers),
                             ("extended-box", plots.extended_box_whiskers)):
                path = directory / f"{stem}-{kind}.png"
                if min(len(s) for s in samples.values()) < (2 if kind == "box" else 4):
                    continue
                if path.resolve().parent != inside:
                    raise ValueError(f"`directory`: the picture {path} would be written to "
                                     f"{path.resolve()}, outside {inside}; remove that link.")
                ax = fn(samples)
                ax.set_title(f"{p}: {MEASURES[self.measure][1]}")
                ax.figure.savefig(path)
                plt.close(ax.figure)
                written.append(path)
        return written


def compare(results, *, labels=None, measure="squared", alpha=0.05):
    """Compare result files (and the networks in them) per problem and over problems.

    Parameters
    ----------
    results : sequence of (str, os.PathLike or ResultFile)
        Result files. Every (file, network) pair is one algorithm; at least two
        are needed in all.
    labels : sequence of str, optional
        One label per file (default: the file names without ``.jsonl``); with
        several networks in a file, ``":network"`` is appended.
    measure : {"squared", "classification"}, default="squared"
        Test squared error percentage (Proben1's headline measure) or test
        classification error (classification problems only).
    alpha : float, default=0.05
        Significance level of the t-tests.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        If fewer than two algorithms are given, the files share no problem, or the
        same problem was run on different data files.
    """
    from fastnet.stats import compare_errors, pairwise_table

    if measure not in MEASURES:
        raise ValueError(f"`measure` must be one of {list(MEASURES)}, got {measure!r}.")
    files = [_results(r) for r in results]
    if labels is None:
        labels = [f.path.name[:-6] if f.path.name.endswith(".jsonl") else f.path.name
                  for f in files]
    labels = list(labels)
    if len(labels) != len(files):
        raise ValueError(f"`labels` has {len(labels)} entries for {len(files)} files.")
    field_name = MEASURES[measure][0]
    algs = []  # (label, file, network, cells)
    seen = set()
    for f, lab in zip(files, labels):
        cells = f.cells()
        nets = []
        for (_, n) in cells:
            if n not in nets:
                nets.append(n)
        for n in nets:
            name = lab if len(nets) == 1 else f"{lab}:{n}"
            k = 2
            base = name
            while name in seen:
                name, k = f"{base}#{k}", k + 1
            seen.add(name)
            algs.append((name, f, n, {p: runs for (p, nn), runs in cells.items() if nn == n}))
    if len(algs) < 2:
        raise ValueError(f"`results`: compare needs at least two result sets (files or networks), "
                         f"got {len(algs)}.")
    problems = [p for p in algs[0][3] if all(p in a[3] for a in algs[1:])]
    notes = [f"{f.path.name}: {_incomplete_note(f.missing_runs(), f.header)}"
             for f in files if f.missing_runs()]
    # the same problem must come from the same data file
    for p in list(problems):
        shas = {a[1].header.get("data", {}).get(p, {}).get("sha256") for a in algs}
        if len(shas) > 1:
            raise ValueError(f"`results`: {p} was run on different data files in the result files "
                             "(their SHA-256 differ); the runs are not comparable.")
    if measure == "classification":
        dropped = [p for p in problems
                   if any(r["test"]["classification_error"] is None for a in algs for r in a[3][p])]
        if dropped:
            notes.append(f"approximation problems have no classification error: "
                         f"{', '.join(dropped)} left out")
        problems = [p for p in problems if p not in dropped]
    if not problems:
        raise ValueError("`results`: the result sets share no problem to compare on.")
    samples = {a[0]: {p: np.array([r["test"][field_name] for r in a[3][p]], dtype=float)
                      for p in problems} for a in algs}
    ttests = {}
    for p in problems:
        for i, a in enumerate(algs):
            for b in algs[i + 1:]:
                x, y = samples[a[0]][p], samples[b[0]][p]
                try:
                    ttests[(p, a[0], b[0])] = compare_errors(
                        x, y, log=(measure == "squared"), alpha=alpha, names=(a[0], b[0]))
                except ValueError as exc:
                    ttests[(p, a[0], b[0])] = "n/a"
                    notes.append(f"{p}, {a[0]} vs {b[0]}: no t-test ({exc})")
    names = [a[0] for a in algs]
    letters = [chr(ord("A") + i) if i < 26 else f"A{i}" for i in range(len(algs))]
    sign = wilcoxon = None
    if len(problems) >= 2:
        means = np.array([[samples[n][p].mean() for p in problems] for n in names])
        sign = pairwise_table(means, names=letters, method="sign", datasets=problems)
        wilcoxon = pairwise_table(means, names=letters, method="wilcoxon", datasets=problems)
    else:
        notes.append("sign and Wilcoxon tests need at least two problems")

    def best(runs):
        return min(runs, key=lambda r: (r["val"]["squared_error_percentage"], r["run"]))

    # Lacoste: the algorithms that kept predictions, on the problems where all of them did.
    with_pred = [i for i, a in enumerate(algs)
                 if any("test_wrong" in best(a[3][p]) for p in problems)]
    lac_problems = [p for p in problems
                    if with_pred and all("test_wrong" in best(algs[i][3][p]) for i in with_pred)]
    lacoste = None
    if len(with_pred) >= 2 and lac_problems:
        losses = {letters[i]: [np.array([c == "1" for c in best(algs[i][3][p])["test_wrong"]],
                                        dtype=float) for p in lac_problems]
                  for i in with_pred}
        lacoste = pairwise_table(losses, method="poisson_binomial", datasets=lac_problems)
        left_out = [letters[i] for i in range(len(algs)) if i not in with_pred]
        if left_out:
            notes.append(f"Lacoste's test leaves out {', '.join(left_out)} (no test predictions)")
    else:
        notes.append("Lacoste's Poisson binomial test needs per-example test predictions on "
                     "classification problems in at least two result sets (run `fastnet bench` "
                     "with --keep-predictions)")
    return Comparison(labels=tuple(names), sources=tuple((str(a[1].path), a[2]) for a in algs),
                      problems=tuple(problems), measure=measure, samples=samples, ttests=ttests,
                      sign=sign, wilcoxon=wilcoxon, lacoste=lacoste,
                      lacoste_problems=tuple(lac_problems), notes=tuple(notes),
                      headers={str(f.path): f.header for f in files})
