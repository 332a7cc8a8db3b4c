"""Reports and comparisons from experiment result files (Prechelt 1994, sections 5-6; the statistics of fastnet.stats).

`summarize` turns a result file into Proben1's table columns per problem and
network (training, validation and test squared error percentage with mean and
(n-1) standard deviation, test classification error, GL at the end, total and
relevant epochs), plus the correlation of validation and test error, the 'best'
run chosen by *validation* error, and the median, quartiles, minimum and maximum
of the test error. A `Report` prints as text in Proben1's layout and exports to
Markdown, CSV, LaTeX and a pandas DataFrame.

`compare` puts several result files (or networks) side by side: Proben1's
log-error t-tests per problem (`fastnet.stats.compare_errors`), the sign and
Wilcoxon tests over problems, and, when the files hold per-example predictions,
Lacoste's Poisson binomial test (`fastnet.stats.pairwise_table`).

`timing_summary` collects the cost of the runs: traversals, CPU seconds and
traversals per CPU second, with the machine description.
"""
from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

__all__ = [
    "Comparison",
    "EXCLUDE_RULES",
    "MEASURES",
    "Report",
    "ReportRow",
    "TimingRow",
    "TimingSummary",
    "compare",
    "summarize",
    "timing_summary",
]

#: Run-exclusion rules of `summarize` (Prechelt 1994: only exactly half, the worst by the
#: selection criterion, i.e. validation error).
EXCLUDE_RULES = ("worst-half",)
#: Test measures `compare` can use: record field and readable name.
MEASURES = {"squared": ("squared_error_percentage", "test squared error percentage"),
            "classification": ("classification_error", "test classification error")}


def _results(results):
    """Accept a path, a ResultFile or an ExperimentResult; return a ResultFile."""
    from fastnet.experiment import ExperimentResult, ResultFile, read_results

    if isinstance(results, ResultFile):
        return results
    if isinstance(results, ExperimentResult):
        return read_results(results.path)
    if isinstance(results, (str, os.PathLike)):
        if not Path(os.fspath(results)).is_file():
            raise FileNotFoundError(f"result file {os.fspath(results)} does not exist (write one "
                                    "with `fastnet bench` or `fastnet.experiment.run_experiment`).")
        return read_results(results)
    raise TypeError(f"`results` must be a result file path, ResultFile or ExperimentResult, "
                    f"got {type(results).__name__}.")


def _mean_sd(x):
    x = np.asarray([v for v in x if v is not None], dtype=float)
    if x.size == 0:
        return None, None
    return float(x.mean()), (float(x.std(ddof=1)) if x.size > 1 else None)


def _quartiles(x):
    from fastnet.stats import segment_points

    x = np.asarray(x, dtype=float)
    if x.size == 1:
        return (float(x[0]),) * 5
    return tuple(float(v) for v in segment_points(x, 4))


def _corr(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


@dataclass(frozen=True)
class ReportRow:
    """Proben1's table columns for one problem and network.

    Errors are squared error percentages (Prechelt 1994) of the network of the relevant
    epoch (lowest validation error); ``*_sd`` are (n-1) standard deviations (None
    for a single run); classification errors are None for approximation problems.

    Attributes
    ----------
    problem, network, architecture : str
        Dataset, network name and Proben1 spec (e.g. ``"cancer1"``, ``"pivot"``, ``"4+2 l"``).
    shortcut : bool
    n_connections : int
    n_runs, n_excluded : int
        Runs summarised and runs excluded (the worst half by validation error).
    train_mean, train_sd, val_mean, val_sd, test_mean, test_sd : float
    test_class_mean, test_class_sd : float or None
    corr_val_test : float or None
        Pearson correlation of validation and test error over the runs.
    gl_end_mean, gl_end_sd : float or None
        Generalization loss GL at the end of training ("overfit" in Proben1).
    epochs_mean, epochs_sd, relevant_mean, relevant_sd : float
        Total epochs trained and the relevant epoch.
    best_run : int
        Run with the lowest validation error (never chosen by test error).
    best_val, best_test : float
    best_test_class : float or None
    test_min, test_q1, test_median, test_q3, test_max : float
        Test error distribution; quartiles are medians of the halves (Lawrence).
    cpu_time : float
        Summed training CPU seconds of the runs.
    traversals : int
        Summed connection traversals.
    """

    problem: str
    network: str
    architecture: str
    shortcut: bool
    n_connections: int
    n_runs: int
    n_excluded: int
    train_mean: float
    train_sd: float
    val_mean: float
    val_sd: float
    test_mean: float
    test_sd: float
    test_class_mean: float
    test_class_sd: float
    corr_val_test: float
    gl_end_mean: float
    gl_end_sd: float
    epochs_mean: float
    epochs_sd: float
    relevant_mean: float
    relevant_sd: float
    best_run: int
    best_val: float
    best_test: float
    best_test_class: float
    test_min: float
    test_q1: float
    test_median: float
    test_q3: float
    test_max: float
    cpu_time: float
    traversals: int

    @property
    def traversals_per_cpu_second(self):
        """Summed traversals over summed CPU seconds (inf if no CPU time was measured)."""
        return self.traversals / self.cpu_time if self.cpu_time > 0 else math.inf


def _row(problem, network, runs, n_excluded):
    def get(split, what="squared_error_percentage"):
        return [r[split][what] for r in runs]

    train, val, test = get("train"), get("val"), get("test")
    test_cls = get("test", "classification_error")
    classification = all(v is not None for v in test_cls)
    best = min(runs, key=lambda r: (r["val"]["squared_error_percentage"], r["run"]))
    q = _quartiles(test)
    tm, ts = _mean_sd(train)
    vm, vs = _mean_sd(val)
    em, es = _mean_sd(test)
    cm, cs = _mean_sd(test_cls) if classification else (None, None)
    gm, gs = _mean_sd([r["gl_end"] for r in runs])
    epm, eps = _mean_sd([r["epochs"] for r in runs])
    rem, res = _mean_sd([r["relevant_epoch"] for r in runs])
    first = runs[0]
    return ReportRow(
        problem=problem, network=network, architecture=first.get("architecture") or "?",
        shortcut=bool(first.get("shortcut", True)), n_connections=int(first.get("n_connections", 0)),
        n_runs=len(runs), n_excluded=n_excluded,
        train_mean=tm, train_sd=ts, val_mean=vm, val_sd=vs, test_mean=em, test_sd=es,
        test_class_mean=cm, test_class_sd=cs, corr_val_test=_corr(val, test),
        gl_end_mean=gm, gl_end_sd=gs, epochs_mean=epm, epochs_sd=eps,
        relevant_mean=rem, relevant_sd=res,
        best_run=int(best["run"]), best_val=best["val"]["squared_error_percentage"],
        best_test=best["test"]["squared_error_percentage"],
        best_test_class=best["test"]["classification_error"],
        test_min=q[0], test_q1=q[1], test_median=q[2], test_q3=q[3], test_max=q[4],
        cpu_time=float(sum(r["cpu_time"] for r in runs)),
        traversals=int(sum(r["traversals"]["total"] for r in runs)))


def _exclude_worst_half(runs, cell):
    n = len(runs)
    if n % 2:
        raise ValueError(f"`exclude`='worst-half' removes exactly half of the runs, but "
                         f"{cell[0]}/{cell[1]} has an odd number ({n}); report without exclusion "
                         "or complete the runs.")
    ranked = sorted(runs, key=lambda r: (r["val"]["squared_error_percentage"], r["run"]))
    return sorted(ranked[: n // 2], key=lambda r: r["run"]), n // 2


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
         ("train_mean", "training", "mean", 2), ("train_sd", "training", "stddev", 2),
         ("val_mean", "validation", "mean", 2), ("val_sd", "validation", "stddev", 2),
         ("test_mean", "test", "mean", 2), ("test_sd", "test", "stddev", 2),
         ("test_class_mean", "test set classif.", "mean", 2),
         ("test_class_sd", "test set classif.", "stddev", 2),
         ("gl_end_mean", "overfit", "GL", 1),
         ("epochs_mean", "total epochs", "mean", 0), ("epochs_sd", "total epochs", "stddev", 0),
         ("relevant_mean", "relevant epochs", "mean", 0),
         ("relevant_sd", "relevant epochs", "stddev", 0)]
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
    lines = ["  ".join(top).rstrip(),
             "  ".join(s.rjust(w) if k > 1 else s.ljust(w) for k, (s, w) in
                       enumerate(zip(subs, widths))).rstrip()]
    lines.append("-" * len(lines[1]))
    for b in body:
        lines.append("  ".join(c.rjust(w) if k > 1 else c.ljust(w)
                               for k, (c, w) in enumerate(zip(b, widths))).rstrip())
    return "\n".join(lines)


def _markdown_table(rows, columns):
    heads = [f"{g} {s}".strip() if g else s for _, g, s, _ in columns]
    out = ["| " + " | ".join(heads) + " |",
           "|" + "|".join(":---" if k < 2 else "---:" for k in range(len(columns))) + "|"]
    out += ["| " + " | ".join(c) + " |" for c in _cells(rows, columns)]
    return "\n".join(out)


def _latex_escape(s):
    return (s.replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("%", r"\%")
            .replace("_", r"\_").replace("#", r"\#"))


def _latex_table(rows, columns, caption):
    groups = [(g, b - a) for g, a, b in _column_groups(columns)]
    spec = "ll" + "r" * (len(columns) - 2)
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


@dataclass(frozen=True)
class Report:
    """Proben1-style summary of a result file (see `summarize`).

    Attributes
    ----------
    rows : tuple of ReportRow
        One per (problem, network), in the order of the file's grid.
    exclude : str or None
        The exclusion rule applied (``"worst-half"``) or None.
    source : str
        The result file.
    header : dict
        Its header (set-up, version, machine, build flags).
    """

    rows: tuple
    exclude: str | None
    source: str
    header: dict

    def _caption(self, what):
        nets = sorted({r.network for r in self.rows})
        excl = ("; the worst half of the runs by validation error excluded"
                if self.exclude == "worst-half" else "; all runs included")
        return (f"{what}: {', '.join(nets)} networks, squared error percentages of the network "
                f"with the lowest validation error{excl} ({Path(self.source).name})")

    def to_text(self):
        """Both tables in Proben1's layout, as plain text."""
        machine = self.header.get("machine", "?")
        return "\n".join([
            self._caption("Results"), "", _text_table(self.rows, _MAIN), "",
            self._caption("Test error distribution"), "", _text_table(self.rows, _DIST), "",
            f"fastnet {self.header.get('version', '?')}, master seed "
            f"{self.header.get('identity', {}).get('seed', '?')}, set-up "
            f"{self.header.get('setup_hash', '?')}; machine: {machine}"])

    def __str__(self):
        return self.to_text()

    def to_markdown(self):
        """Both tables as GitHub Markdown."""
        return "\n".join([f"**{self._caption('Results')}**", "", _markdown_table(self.rows, _MAIN),
                          "", f"**{self._caption('Test error distribution')}**", "",
                          _markdown_table(self.rows, _DIST), ""])

    def to_latex(self):
        """Both tables as LaTeX ``tabular`` environments in ``table`` floats."""
        return "\n\n".join([_latex_table(self.rows, _MAIN, self._caption("Results")),
                            _latex_table(self.rows, _DIST,
                                         self._caption("Test error distribution"))]) + "\n"

    def to_csv(self):
        """All fields of every row, full precision, one row per (problem, network)."""
        buf = io.StringIO()
        names = [f.name for f in fields(ReportRow)] + ["traversals_per_cpu_second"]
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        for r in self.rows:
            d = asdict(r)
            d["traversals_per_cpu_second"] = r.traversals_per_cpu_second
            w.writerow(["" if d[n] is None else repr(d[n]) if isinstance(d[n], float) else d[n]
                        for n in names])
        return buf.getvalue()

    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas is imported here, not before).

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Report.to_dataframe needs pandas: pip install pandas") from None
        recs = []
        for r in self.rows:
            d = asdict(r)
            d["traversals_per_cpu_second"] = r.traversals_per_cpu_second
            recs.append(d)
        return pd.DataFrame.from_records(recs, columns=[f.name for f in fields(ReportRow)]
                                         + ["traversals_per_cpu_second"])


def summarize(results, *, exclude=None):
    """Summarise a result file in Proben1's table columns.

    Parameters
    ----------
    results : str, os.PathLike, ResultFile or ExperimentResult
    exclude : {None, "worst-half"}, default=None
        ``"worst-half"`` leaves out exactly half of the runs of every problem and
        network, the worst by validation error, as Proben1 allows (Prechelt 1994). No
        other exclusion is offered.

    Returns
    -------
    Report

    Raises
    ------
    ValueError
        If the file holds no runs, `exclude` is unknown, or ``"worst-half"`` meets an
        odd number of runs.
    ResultFileError
        If the file is malformed.

    Examples
    --------
    >>> rep = summarize("cancer1-linear.jsonl")               # doctest: +SKIP
    >>> print(rep.to_markdown())                              # doctest: +SKIP
    """
    rf = _results(results)
    if exclude is not None and exclude not in EXCLUDE_RULES:
        raise ValueError(f"`exclude` must be None or one of {list(EXCLUDE_RULES)}, got {exclude!r}.")
    cells = rf.cells()
    if not cells:
        raise ValueError(f"{rf.path}: the file holds no finished runs yet.")
    rows = []
    for (problem, network), runs in cells.items():
        n_excluded = 0
        if exclude == "worst-half":
            runs, n_excluded = _exclude_worst_half(runs, (problem, network))
        rows.append(_row(problem, network, runs, n_excluded))
    return Report(rows=tuple(rows), exclude=exclude, source=str(rf.path), header=rf.header)


# --------------------------------------------------------------------------- timing

@dataclass(frozen=True)
class TimingRow:
    """Cost of the runs of one problem and network.

    Attributes
    ----------
    problem, network : str
    n_runs : int
    epochs : int
        Summed epochs.
    traversals : dict
        Summed forward, backward, update, evaluation and total traversals.
    cpu_time : float
        Summed training CPU seconds.
    """

    problem: str
    network: str
    n_runs: int
    epochs: int
    traversals: dict
    cpu_time: float

    @property
    def cpu_per_run(self):
        """Mean CPU seconds per run."""
        return self.cpu_time / self.n_runs

    @property
    def traversals_per_cpu_second(self):
        """Total traversals per CPU second (inf if no CPU time was measured)."""
        return self.traversals["total"] / self.cpu_time if self.cpu_time > 0 else math.inf


@dataclass(frozen=True)
class TimingSummary:
    """Cost of a result file's runs (Prechelt 1994): traversals, CPU time, machine.

    Attributes
    ----------
    rows : tuple of TimingRow
    total : TimingRow
        Sums over every row (problem and network ``"all"``).
    machine : str
    build : dict
    """

    rows: tuple
    total: TimingRow
    machine: str
    build: dict

    def to_text(self):
        """A fixed-width table, one line per problem and network plus the total."""
        head = (f"{'problem':10s} {'network':10s} {'runs':>5s} {'epochs':>9s} "
                f"{'traversals':>14s} {'CPU s':>9s} {'CPU s/run':>10s} {'trav./CPU s':>12s}")
        lines = [head, "-" * len(head)]
        for r in (*self.rows, self.total):
            lines.append(f"{r.problem:10s} {r.network:10s} {r.n_runs:5d} {r.epochs:9d} "
                         f"{r.traversals['total']:14d} {r.cpu_time:9.3f} {r.cpu_per_run:10.4f} "
                         f"{r.traversals_per_cpu_second:12.4g}")
        flags = " ".join(self.build.get("extra_compile_args", []) or [])
        lines.append(f"machine: {self.machine}; build flags: {flags or '?'}")
        lines.append("CPU time is the process CPU time of each run's training loop "
                     "(validation included); traversals count forward N*C, backward N*C, "
                     "update C per epoch and M*C per evaluation (Proben1).")
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()


def timing_summary(results):
    """Traversals, CPU time and traversals per CPU second of a result file's runs.

    Parameters
    ----------
    results : str, os.PathLike, ResultFile or ExperimentResult

    Returns
    -------
    TimingSummary
    """
    rf = _results(results)
    keys = ("forward", "backward", "update", "evaluation", "total")
    rows = []
    for (problem, network), runs in rf.cells().items():
        rows.append(TimingRow(problem, network, len(runs), int(sum(r["epochs"] for r in runs)),
                              {k: int(sum(r["traversals"][k] for r in runs)) for k in keys},
                              float(sum(r["cpu_time"] for r in runs))))
    n = sum(r.n_runs for r in rows)
    total = TimingRow("all", "all", max(n, 1), sum(r.epochs for r in rows),
                      {k: sum(r.traversals[k] for r in rows) for k in keys},
                      float(sum(r.cpu_time for r in rows)))
    return TimingSummary(rows=tuple(rows), total=total, machine=rf.header.get("machine", "?"),
                         build=rf.header.get("build", {}))


# --------------------------------------------------------------------------- compare

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

    def plot(self, directory):
        """Box-whiskers and extended box-whiskers of the test errors, one pair per problem.

        Parameters
        ----------
        directory : str or os.PathLike
            Created if needed; files ``<problem>-box.png`` and
            ``<problem>-extended-box.png``.

        Returns
        -------
        list of pathlib.Path
            The files written.

        Raises
        ------
        ImportError
            If matplotlib is not installed.
        """
        from fastnet import plots

        plt = plots._pyplot()
        directory = Path(os.fspath(directory))
        directory.mkdir(parents=True, exist_ok=True)
        letters = self._letters()
        written = []
        for p in self.problems:
            samples = {letters[lab]: self.samples[lab][p] for lab in self.labels}
            for kind, fn in (("box", plots.box_whiskers),
                             ("extended-box", plots.extended_box_whiskers)):
                path = directory / f"{p}-{kind}.png"
                if min(len(s) for s in samples.values()) < (2 if kind == "box" else 4):
                    continue
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
    notes = []
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
                      lacoste_problems=tuple(lac_problems), notes=tuple(notes))
