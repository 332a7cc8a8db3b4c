"""Summaries of result files in Proben1's table columns, and their cost."""
from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from fastnet._docstrings import HTML_PAGE, PANDAS_RAISES, fill
from fastnet._validation import import_pandas

from fastnet.report._html import report_html
from fastnet.report._render import (
    _DIST, _MAIN, _csv_text, _incomplete_note, _latex_table, _markdown_escape, _markdown_table,
    _text_table,
)

#: Run-exclusion rules of `summarize` (Prechelt 1994: only exactly half, the worst by the
#: selection criterion, i.e. validation error).
EXCLUDE_RULES = ("worst-half",)
#: Test measures `compare` can use: record field and readable name.


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
    epoch (lowest validation error); ``*_std`` are (n-1) standard deviations (None
    for a single run); classification errors are None for approximation problems.

    Attributes
    ----------
    problem, network, architecture : str
        Dataset, network name and Proben1 spec (e.g. ``"cancer1"``, ``"pivot"``, ``"4+2 l"``).
    shortcut : bool
    n_connections : int
    n_runs, n_excluded : int
        Runs summarised and runs excluded (the worst half by validation error).
    train_mean, train_std, val_mean, val_std, test_mean, test_std : float
    test_class_mean, test_class_std : float or None
    corr_val_test : float or None
        Pearson correlation of validation and test error over the runs.
    gl_end_mean, gl_end_std : float or None
        Generalization loss GL at the end of training ("overfit" in Proben1).
    epochs_mean, epochs_std, relevant_mean, relevant_std : float
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
    algorithm : str
        The algorithm of the runs (``"rprop+"``: Proben1's RPROP presets). In a file
        of several algorithms ``network`` is ``"network / algorithm"``.
    """

    problem: str
    network: str
    architecture: str
    shortcut: bool
    n_connections: int
    n_runs: int
    n_excluded: int
    train_mean: float
    train_std: float
    val_mean: float
    val_std: float
    test_mean: float
    test_std: float
    test_class_mean: float
    test_class_std: float
    corr_val_test: float
    gl_end_mean: float
    gl_end_std: float
    epochs_mean: float
    epochs_std: float
    relevant_mean: float
    relevant_std: float
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
    algorithm: str = "rprop+"

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
        train_mean=tm, train_std=ts, val_mean=vm, val_std=vs, test_mean=em, test_std=es,
        test_class_mean=cm, test_class_std=cs, corr_val_test=_corr(val, test),
        gl_end_mean=gm, gl_end_std=gs, epochs_mean=epm, epochs_std=eps,
        relevant_mean=rem, relevant_std=res,
        best_run=int(best["run"]), best_val=best["val"]["squared_error_percentage"],
        best_test=best["test"]["squared_error_percentage"],
        best_test_class=best["test"]["classification_error"],
        test_min=q[0], test_q1=q[1], test_median=q[2], test_q3=q[3], test_max=q[4],
        cpu_time=float(sum(r["cpu_time"] for r in runs)),
        traversals=int(sum(r["traversals"]["total"] for r in runs)),
        algorithm=first.get("algorithm", "rprop+"))


def _samples(runs):
    """The per-run values of one cell as arrays (see `Report.samples`)."""
    out = {split: np.array([r[split]["squared_error_percentage"] for r in runs], dtype=float)
           for split in ("train", "val", "test")}
    cls = [r["test"]["classification_error"] for r in runs]
    if all(v is not None for v in cls):
        out["test_class"] = np.array(cls, dtype=float)
    for name in ("epochs", "relevant_epoch", "cpu_time"):
        out[name] = np.array([r[name] for r in runs], dtype=float)
    out["stop_reason"] = np.array([str(r.get("stop_reason", "?")) for r in runs], dtype=object)
    return out


def _exclude_worst_half(runs, cell):
    n = len(runs)
    if n % 2:
        raise ValueError(f"`exclude`='worst-half' removes exactly half of the runs, but "
                         f"{cell[0]}/{cell[1]} has an odd number ({n}); report without exclusion "
                         "or complete the runs.")
    ranked = sorted(runs, key=lambda r: (r["val"]["squared_error_percentage"], r["run"]))
    return sorted(ranked[: n // 2], key=lambda r: r["run"]), n // 2


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
    samples : dict
        The per-run values behind each row, for pictures of their distributions:
        ``{(problem, network): {name: ndarray}}`` with names ``"train"``, ``"val"``,
        ``"test"`` (squared error percentages), ``"test_class"`` (test classification
        error, absent for approximation problems), ``"epochs"``, ``"relevant_epoch"``,
        ``"cpu_time"`` and ``"stop_reason"`` (an array of str); the runs in the row
        only (after any exclusion), in run order.
    incomplete : dict
        The cells of the file's grid that lack runs of its set-up (the header's
        problems x networks x runs): ``{(problem, network): tuple of range}``, the
        missing run indices (`ResultFile.missing_runs`). Empty for a complete file;
        otherwise every rendering says so in a line of its own.
    """

    rows: tuple
    exclude: str | None
    source: str
    header: dict
    samples: dict = field(default_factory=dict, repr=False, compare=False)
    incomplete: dict = field(default_factory=dict)

    def incomplete_note(self):
        """One sentence naming the cells that lack runs of the file's set-up ("" if none)."""
        return _incomplete_note(self.incomplete, self.header)

    def _columns(self, columns):
        """``columns`` with one of the algorithm after the architecture when the file
        holds several algorithms."""
        if "algorithms" not in (self.header.get("grid") or {}):
            return columns
        return columns[:2] + [("algorithm", "", "algorithm", None)] + columns[2:]

    @property
    def _main(self):
        return self._columns(_MAIN)

    @property
    def _dist(self):
        return self._columns(_DIST)

    def _caption(self, what):
        nets = sorted({r.network for r in self.rows})
        excl = ("; the worst half of the runs by validation error excluded"
                if self.exclude == "worst-half" else "; all runs included")
        key = ("; arch: Proben1's notation of the network, hidden units per layer and the "
               "outputs (l linear, s sigmoid): '4+2 l' has 4 and 2 hidden units and linear "
               "outputs; errors in percent; overfit GL: the generalization loss at the end of "
               "training, 100 (E_va / lowest E_va - 1) (Prechelt 1994)"
               if what == "Results" else "")
        return (f"{what}: {', '.join(nets)} networks, squared error percentages of the network "
                f"with the lowest validation error{excl} ({Path(self.source).name}){key}")

    def to_text(self):
        """Both tables in Proben1's layout, as plain text."""
        machine = self.header.get("machine", "?")
        note = self.incomplete_note()
        return "\n".join(([note, ""] if note else []) + [
            self._caption("Results"), "", _text_table(self.rows, self._main), "",
            self._caption("Test error distribution"), "", _text_table(self.rows, self._dist), "",
            f"fastnet {self.header.get('version', '?')}, master seed "
            f"{self.header.get('identity', {}).get('seed', '?')}, set-up "
            f"{self.header.get('setup_hash', '?')}; machine: {machine}"])

    def __str__(self):
        return self.to_text()

    def to_markdown(self):
        """Both tables as GitHub Markdown.

        Text from the result file (names of problems, networks, the file) is escaped:
        HTML's special characters become entities and Markdown's (``|``, ``*``, ``[``,
        ...) are backslash-escaped, so a name renders as written and never as markup.
        """
        note = self.incomplete_note()
        return "\n".join(([f"> **{_markdown_escape(note)}**", ""] if note else []) + [
            f"**{_markdown_escape(self._caption('Results'))}**", "",
            _markdown_table(self.rows, self._main), "",
            f"**{_markdown_escape(self._caption('Test error distribution'))}**", "",
            _markdown_table(self.rows, self._dist), ""])

    def to_latex(self):
        """Both tables as LaTeX ``tabular`` environments in ``table`` floats.

        Text from the result file is escaped (all of LaTeX's special characters); a
        file that lacks runs of its set-up gets a ``%`` comment line saying which.
        """
        note = self.incomplete_note()
        tables = "\n\n".join([_latex_table(self.rows, self._main, self._caption("Results")),
                              _latex_table(self.rows, self._dist,
                                           self._caption("Test error distribution"))]) + "\n"
        return (f"% {' '.join(note.splitlines())}\n" if note else "") + tables

    @fill(html_page=HTML_PAGE)
    def to_html(self, *, timing=None, pictures=True):
        """Both tables, the set-up and pictures of every row's runs, as one HTML page.

        The page is self-contained: the pictures are PNG images in ``data:`` URIs and
        the style sheet is inline, so it loads nothing else (and runs no script). Per
        problem and network it shows box-whiskers of the training, validation and test
        errors, histograms of the test error (and classification error), box-whiskers
        of the total and relevant epochs and a histogram of the CPU time per run.

        Parameters
        ----------
        timing : TimingSummary, optional
            Add its table (the cost of the runs; see `timing_summary`).
        pictures : bool, default=True
            Draw the pictures (needs matplotlib); False gives the tables and set-up only.

        {{html_page}}

        Examples
        --------
        >>> rep = summarize("cancer1-linear.jsonl")               # doctest: +SKIP
        >>> Path("report.html").write_text(rep.to_html(), encoding="utf-8")  # doctest: +SKIP
        """
        return report_html(self, timing=timing, pictures=pictures)

    def to_csv(self):
        """All fields of every row, full precision, one row per (problem, network).

        A text cell (problem, network, architecture) that starts with ``=``, ``+``,
        ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so that a
        spreadsheet shows it as text instead of running it as a formula (OWASP's advice
        on CSV injection). Numbers are never changed: ``-0.5`` stays a number.
        """
        buf = io.StringIO()
        names = [f.name for f in fields(ReportRow)] + ["traversals_per_cpu_second"]
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        for r in self.rows:
            d = asdict(r)
            d["traversals_per_cpu_second"] = r.traversals_per_cpu_second()
            w.writerow(["" if d[n] is None else repr(d[n]) if isinstance(d[n], float)
                        else _csv_text(d[n]) if isinstance(d[n], str) else d[n] for n in names])
        return buf.getvalue()

    @fill(pandas_raises=PANDAS_RAISES)
    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas is imported here, not before).

        {{pandas_raises}}
        """
        pd = import_pandas("Report.to_dataframe")
        recs = []
        for r in self.rows:
            d = asdict(r)
            d["traversals_per_cpu_second"] = r.traversals_per_cpu_second()
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
        If the file is malformed: a line that is not JSON, nests deeper than
        `fastnet.experiment.MAX_NESTING`, holds NaN, Infinity or a number out of
        range, or a record that lacks a field, has one of another type, or lies
        outside the header's grid (the message names the file, line and field).

    Notes
    -----
    A file that lacks runs of its own set-up (a header's grid of 10 runs per cell, of
    which a crashed or stopped experiment wrote 6) is summarised over the runs it
    holds; `Report.incomplete` lists the missing runs and every rendering says so.

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
    rows, samples = [], {}
    for (problem, network), runs in cells.items():
        n_excluded = 0
        if exclude == "worst-half":
            runs, n_excluded = _exclude_worst_half(runs, (problem, network))
        rows.append(_row(problem, network, runs, n_excluded))
        samples[(problem, network)] = _samples(runs)
    return Report(rows=tuple(rows), exclude=exclude, source=str(rf.path), header=rf.header,
                  samples=samples, incomplete=rf.missing_runs())


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
        wn = max([10] + [len(r.network) for r in self.rows])   # (networks / algorithms)
        head = (f"{'problem':10s} {'network':{wn}s} {'runs':>5s} {'epochs':>9s} "
                f"{'traversals':>14s} {'CPU s':>9s} {'CPU s/run':>10s} {'trav./CPU s':>12s}")
        lines = [head, "-" * len(head)]
        for r in (*self.rows, self.total):
            lines.append(f"{r.problem:10s} {r.network:{wn}s} {r.n_runs:5d} {r.epochs:9d} "
                         f"{r.traversals['total']:14d} {r.cpu_time:9.3f} {r.cpu_per_run:10.4f} "
                         f"{r.traversals_per_cpu_second():12.4g}")
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
