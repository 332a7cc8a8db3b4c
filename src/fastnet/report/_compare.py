"""A comparison of several result files and its renderings (text, CSV, LaTeX, HTML,
pictures); `compare` builds it in `fastnet.report._compare_build`."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastnet._docstrings import HTML_PAGE, PANDAS_RAISES, fill
from fastnet._validation import import_pandas

from fastnet.report._render import MEASURES

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


def _p(p):
    """A p-value for reading: two significant digits, ``< 0.0001`` below that."""
    return "< 0.0001" if p < 1e-4 else f"{p:.2g}"


def _p_is(p):
    """``p = 0.042`` or ``p < 0.0001``."""
    text = _p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _g(x):
    """Three significant digits, never in exponent form for the values a comparison shows."""
    return f"{x:#.3g}".rstrip(".") if 1e-3 <= abs(x) < 1e4 or x == 0 else f"{x:.3e}"


def _sd(x):
    """The (n-1) standard deviation, NaN for one value."""
    return float(np.std(x, ddof=1)) if len(x) > 1 else float("nan")


def _plain_table(heads, rows, left=1):
    """Columns padded to their widest cell; the first `left` left-aligned, the rest right."""
    widths = [max(len(str(c)) for c in col) for col in zip(heads, *rows)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if k < left else str(c).rjust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(heads)] + [line(r) for r in rows])


def _level(alpha):
    return f"{100 * (1 - alpha):g} %"


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
        ``mean_b``, ``std_a``, ``std_b`` (test errors over the runs), ``pvalue`` (of the
        test Proben1's rule chose, in [0, 1]), ``significant``, ``better`` (a label or
        None), ``unreliable``, ``note`` (why no test was possible, else None), then
        ``difference``, ``ci_low``, ``ci_high``, ``ratio``, ``ratio_low``,
        ``ratio_high`` and ``welch_pvalue`` as `effect` gives them.

        {{pandas_raises}}
        """
        pd = import_pandas("Comparison.to_dataframe")
        rows = []
        for (problem, a, b), test in self.ttests.items():
            xa, xb = self.samples[a][problem], self.samples[b][problem]
            row = {"problem": problem, "a": a, "b": b, "n_a": len(xa), "n_b": len(xb),
                   "mean_a": float(np.mean(xa)), "mean_b": float(np.mean(xb)),
                   "std_a": _sd(xa), "std_b": _sd(xb), "pvalue": None, "significant": None,
                   "better": None, "unreliable": None, "note": None}
            if isinstance(test, str):
                row["note"] = test
            else:
                row.update(pvalue=test.pvalue, significant=test.significant, better=test.better,
                           unreliable=test.unreliable)
            e = self.effect(problem, a, b) or {}
            row.update(difference=e.get("difference"), ci_low=e.get("low"),
                       ci_high=e.get("high"), ratio=e.get("ratio"),
                       ratio_low=e.get("ratio_low"), ratio_high=e.get("ratio_high"),
                       welch_pvalue=e.get("welch_pvalue"))
            rows.append(row)
        return pd.DataFrame(rows, columns=["problem", "a", "b", "n_a", "n_b", "mean_a", "mean_b",
                                           "std_a", "std_b", "pvalue", "significant", "better",
                                           "unreliable", "note", "difference", "ci_low",
                                           "ci_high", "ratio", "ratio_low", "ratio_high",
                                           "welch_pvalue"])

    def _log(self):
        """Whether the t-tests ran on log errors (then an effect is a ratio)."""
        return self.measure == "squared"

    def effect(self, problem, a, b):
        """How much ``a`` and ``b`` differ on ``problem``, with Welch's interval.

        Parameters
        ----------
        problem : str
        a, b : str
            Labels of two algorithms, in the order of `labels`.

        Returns
        -------
        dict or None
            None if no t-test was possible; else ``difference`` (mean of ``a`` minus
            mean of ``b``: of the log errors for the squared error percentage, of the
            errors for the classification error, on the values that entered the test,
            outliers removed by Proben1's rule), ``low`` and ``high`` (Welch's
            interval of it at level ``1 - alpha``), ``ratio``, ``ratio_low``,
            ``ratio_high`` (their exponentials for log errors: the ratio of the
            geometric mean errors of ``a`` and ``b``; None otherwise), ``pvalue`` (of
            the test that decides, Cochran/Cox t' by default), ``welch_pvalue``,
            ``level``, ``n_a`` and ``n_b`` (values that entered the test).
        """
        t = self.ttests[(problem, a, b)]
        if isinstance(t, str):
            return None
        lo, hi = t.welch.confidence_interval
        d = t.mean_difference
        ratio = (float(np.exp(d)), float(np.exp(lo)), float(np.exp(hi))) if self._log() \
            else (None, None, None)
        return {"difference": d, "low": lo, "high": hi, "ratio": ratio[0],
                "ratio_low": ratio[1], "ratio_high": ratio[2], "pvalue": t.pvalue,
                "welch_pvalue": t.welch.pvalue, "level": t.welch.confidence_level,
                "n_a": t.sample_a.n, "n_b": t.sample_b.n}

    def verdict(self, problem, a, b):
        """One sentence: which of ``a`` and ``b`` is better on ``problem``, by how much,
        how sure ("rprop+ better than backprop: errors 0.82 times as large (95 % CI
        0.75 to 0.90), p = 0.0012 (Cochran/Cox t'); Welch p = 0.0010").

        Parameters
        ----------
        problem : str
        a, b : str
            Labels of two algorithms.

        Returns
        -------
        str
        """
        t = self.ttests[(problem, a, b)]
        if isinstance(t, str):
            return f"{a} vs {b}: no t-test possible (see the notes)"
        e = self.effect(problem, a, b)
        level = f"{100 * e['level']:g} % CI"
        test = "Cochran/Cox t'" if t.decided_by == "cochran_cox" else "Welch"
        sure = f"{_p_is(e['pvalue'])} ({test})"
        if t.decided_by == "cochran_cox":
            sure += f"; Welch {_p_is(e['welch_pvalue'])}"
        flip = t.significant and t.better == b  # state the effect from the better one's side
        first, second = (b, a) if flip else (a, b)
        if self._log():
            r, lo, hi = ((1 / e["ratio"], 1 / e["ratio_high"], 1 / e["ratio_low"]) if flip
                         else (e["ratio"], e["ratio_low"], e["ratio_high"]))
            size = (f"{first}'s errors {_g(r)} times {second}'s "
                    f"({level} {_g(lo)} to {_g(hi)})")
        else:
            d, lo, hi = ((-e["difference"], -e["high"], -e["low"]) if flip
                         else (e["difference"], e["low"], e["high"]))
            size = (f"{first} minus {second}: {d:+.3g} percentage points "
                    f"({level} {lo:+.3g} to {hi:+.3g})")
        head = (f"{first} better than {second}" if t.significant
                else f"{a} vs {b}: no significant difference")
        tail = ("; unreliable: a sample stays non-normal after removing outliers"
                if t.unreliable else "")
        return f"{head}: {size}, {sure}{tail}"

    def _pairs(self):
        return [(a, b) for i, a in enumerate(self.labels) for b in self.labels[i + 1:]]

    def _alpha(self):
        return next((t.alpha for t in self.ttests.values() if not isinstance(t, str)), 0.05)

    def _over_counts(self):
        """Per pair: (a, b, wins of a, wins of b, sign p, Wilcoxon p) over the problems."""
        index = {lab: i for i, lab in enumerate(self.labels)}
        out = []
        for a, b in self._pairs():
            ma = np.array([self.samples[a][p].mean() for p in self.problems])
            mb = np.array([self.samples[b][p].mean() for p in self.problems])
            i, j = index[a], index[b]
            out.append((a, b, int(np.sum(ma < mb)), int(np.sum(ma > mb)),
                        float(self.sign.pvalue[i, j]), float(self.wilcoxon.pvalue[i, j])))
        return out

    def _over_table(self):
        """Heads and rows of the tests over problems, one row per pair."""
        letters, n = self._letters(), len(self.problems)
        rows = [[f"{letters[a]} vs {letters[b]}", wa, wb, n - wa - wb, _p(ps), _p(pw),
                 self._over_word(wa, wb, ps, pw, a, b)]
                for a, b, wa, wb, ps, pw in self._over_counts()]
        return (["pair X vs Y", "X lower on", "Y lower on", "tied", "sign test p", "Wilcoxon p",
                 "verdict"], rows)

    def _over_word(self, wins, losses, ps, pw, a, b):
        """The verdict of the two tests over problems on one pair, in words."""
        alpha = self._alpha()
        i = self.labels.index(a)
        j = self.labels.index(b)
        by_sign = a if wins > losses else b  # who wins more often
        by_rank = a if np.isfinite(self.wilcoxon.matrix[i, j]) else b  # larger rank sum
        level = f"{100 * alpha:g} %"
        if ps < alpha and pw < alpha:
            return (f"{by_sign} better (both tests, at {level})" if by_sign == by_rank else
                    f"the tests disagree: the sign test favours {by_sign}, the Wilcoxon test "
                    f"{by_rank}")
        if ps < alpha:
            return f"{by_sign} better by the sign test only (at {level})"
        if pw < alpha:
            return f"{by_rank} better by the Wilcoxon test only (at {level})"
        return "no significant difference"

    def over_problems(self):
        """The sign and Wilcoxon tests over problems in words, one sentence per pair,
        then, with fewer problems than `fastnet.stats.datasets_needed`, a sentence saying
        that they can never be significant (Demšar 2006).

        Returns
        -------
        list of str
            Empty when there are fewer than two problems (see `notes`).
        """
        from fastnet.stats import datasets_needed, smallest_pvalue

        if self.sign is None:
            return []
        letters, n, alpha = self._letters(), len(self.problems), self._alpha()
        out = []
        for a, b, wins, losses, ps, pw in self._over_counts():
            line = (f"{letters[a]} vs {letters[b]}: {a} lower on {wins}, {b} lower on "
                    f"{losses}, tied on {n - wins - losses} of {n} problems; sign test "
                    f"{_p_is(ps)}, Wilcoxon signed-rank {_p_is(pw)}: "
                    f"{self._over_word(wins, losses, ps, pw, a, b)}.")
            untied = wins + losses
            if n >= datasets_needed(alpha) and smallest_pvalue(untied) >= alpha:
                line += (f" With {untied} untied problems the smallest p these tests can "
                         f"give is {_p(smallest_pvalue(untied))}.")
            out.append(line)
        need = datasets_needed(alpha)
        if n < need:
            out.append(f"Too few problems: on {n} problems the smallest p-value the sign and "
                       f"Wilcoxon tests can give is {_p(smallest_pvalue(n))} (2^(1-{n}), "
                       f"one algorithm better on every problem), so they can never be "
                       f"significant at {100 * alpha:g} %; that needs at least {need} "
                       "problems (Demšar 2006).")
        return out

    def _letters(self):
        return {lab: chr(ord("A") + i) if i < 26 else f"A{i}" for i, lab in enumerate(self.labels)}

    def _effect_cells(self, p, a, b, letters):
        """Cells of the per-problem table: difference, interval, ratio, p-values, entry."""
        t = self.ttests[(p, a, b)]
        if isinstance(t, str):
            return [t, "", "", "", "", t]
        e = self.effect(p, a, b)
        ratio = (f"{_g(e['ratio'])} [{_g(e['ratio_low'])}, {_g(e['ratio_high'])}]"
                 if self._log() else "")
        return [f"{e['difference']:+.3g}", f"[{e['low']:+.3g}, {e['high']:+.3g}]", ratio,
                _p(e["pvalue"]), _p(e["welch_pvalue"]),
                t.table_entry((letters[a], letters[b]))]

    def _effect_heads(self):
        what = "log error" if self._log() else "error"
        level = _level(self._alpha())
        return ["problem", "pair", f"mean {what} A-B", f"{level} CI (Welch)",
                *(["ratio A/B [CI]"] if self._log() else []), "p (t')", "Welch p", "Proben1"]

    def _effect_caption(self):
        what = MEASURES[self.measure][1]
        level = _level(self._alpha())
        on = f"the log {what}" if self._log() else f"the {what} (percent)"
        return (f"Per problem and pair, on {on}: the difference of the means (A minus B; "
                f"negative: A lower) with Welch's {level} confidence interval"
                + ("; the ratio A/B of the geometric mean errors (exp of the difference) and "
                   "its interval" if self._log() else "")
                + "; p of Proben1's Cochran/Cox t' test and of Welch's test (outliers removed "
                "by Proben1's rule first); the Proben1 table entry: 'A 1.2' = A better, "
                "p = 1.2 %; '-' = no significant difference; (...) = unreliable, a sample "
                "stays non-normal after removing outliers; 'n/a' = no test possible.")

    def to_text(self):
        """Legend, verdicts per problem, the effects and p-values per problem and pair,
        means with standard deviations, and the tests over problems in words."""
        letters = self._letters()
        what = MEASURES[self.measure][1]
        alpha = self._alpha()
        out = ["Algorithms:"]
        for lab, (src, net) in zip(self.labels, self.sources):
            out.append(f"  {letters[lab]} = {lab}  ({Path(src).name}, network {net})")
        pairs = self._pairs()
        out += ["", f"Verdicts per problem ({what}; Proben1's t-test at {100 * alpha:g} %"
                + (" on the log errors, so sizes are ratios of geometric means" if self._log()
                   else "") + "):"]
        for p in self.problems:
            out += [f"  {p}: {self.verdict(p, a, b)}" for a, b in pairs]
        over = self.over_problems()
        if over:
            out += ["", f"Across problems (on each problem's mean {what}):"]
            out += [f"  {line}" for line in over]
        heads = self._effect_heads()
        rows = [[p, f"{letters[a]} vs {letters[b]}", *self._effect_cells(p, a, b, letters)]
                for p in self.problems for a, b in pairs]
        out += ["", self._effect_caption(), _plain_table(heads, rows, left=2)]
        heads = ["problem"] + [f"{letters[lab]}: mean ± sd (n runs)" for lab in self.labels]
        rows = [[p] + [f"{np.mean(x):.3f} ± {_sd(x):.3f} ({len(x)})"
                       for lab in self.labels for x in [self.samples[lab][p]]]
                for p in self.problems]
        out += ["", f"{what.capitalize()}: mean ± standard deviation (n runs):",
                _plain_table(heads, rows, left=1)]
        if self.lacoste is not None:
            out += ["", "Lacoste et al. Poisson binomial test over "
                    f"{len(self.lacoste_problems)} classification problems "
                    "(best run by validation error per problem):", str(self.lacoste)]
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
            e = self.effect(problem, a, b)
            row += [_sd(xa), _sd(xb)] + ([None] * 4 if e is None else
                                         [e["difference"], e["low"], e["high"],
                                          100 * e["welch_pvalue"]])
            rows.append(row)
        return rows + [r + [None] * 6 for r in self._over_rows()]

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
        unreliable, note, std_a, std_b, difference, ci_low, ci_high,
        welch_p_percent`` (the last six as `effect` gives them; ``std`` over the
        runs). The t-test rows name ``better`` only if significant; the rows of the
        tests over problems (``problem`` ``"over problems: sign test"``,
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
                    "better", "unreliable", "note", "std_a", "std_b", "difference", "ci_low",
                    "ci_high", "welch_p_percent"])
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
        pairs = self._pairs()

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
        tests = table(self._effect_heads(),
                      [[p, f"{letters[a]} vs {letters[b]}", *self._effect_cells(p, a, b, letters)]
                       for p in self.problems for a, b in pairs],
                      self._effect_caption(), "ll" + "r" * (len(self._effect_heads()) - 2))
        means = table(["problem"] + [letters[lab] for lab in self.labels],
                      [[p] + [f"{np.mean(x):.3f} ± {_sd(x):.3f} ({len(x)})"
                              for lab in self.labels for x in [self.samples[lab][p]]]
                       for p in self.problems],
                      f"Mean {what} ± standard deviation (n runs).", "l" + "r" * len(self.labels))
        over = []
        if self.sign is not None:
            heads, rows = self._over_table()
            over.append(table(heads, rows, " ".join(self.over_problems()[len(rows):])
                              or "Sign and Wilcoxon signed-rank tests over problems.",
                              "l" + "r" * (len(heads) - 2) + "l"))
        if self.lacoste is not None:
            label = {letter: lab for lab, letter in letters.items()}
            t = self.lacoste
            over.append(table([""] + list(t.names),
                              [[label[r]] + ["-" if not np.isfinite(v) else f"{v:.2f}"
                                             for v in row] for r, row in zip(t.names, t.matrix)],
                              str(t).splitlines()[0] + " (over problems).",
                              "l" + "r" * len(t.names)))
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
                ax = fn(samples, ylabel=f"{MEASURES[self.measure][1]} (%)",
                        title=f"{p}: {MEASURES[self.measure][1]}")
                ax.figure.savefig(path)
                plt.close(ax.figure)
                written.append(path)
        return written
