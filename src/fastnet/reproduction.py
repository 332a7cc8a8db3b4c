"""fastnet's Proben1 results beside the report's published ones, with a match test;
and Lawrence et al.'s (1997) Tables 3 (MLP row) and 4 (:func:`reproduce_lawrence`).

Prechelt (1994) publishes, per data file, the mean and standard deviation of the
training, validation and test errors, the test classification error, GL at the
end of training, and the total and relevant epochs: Tables 3-4 for linear
networks (10 runs), Tables 8-9 for the pivot networks with shortcut connections
(Table 7's architectures; 60 runs) and Tables 10-11 for the pivot hidden sizes
without shortcut connections (60 runs). They ship with fastnet (``fastnet/datasets/proben1_published``),
typed from the report, so that :func:`compare_with_published` can hold a result
file next to them.

A mean *matches* when ``|ours - published| <= max(3 SE, r |published|, 0.02)``,
with SE the standard error of the difference of two means from both standard
deviations and run counts, and r = 5 % (15 % for epoch counts, whose spread
across runs is large). Both sets of runs are samples: the test asks whether the
difference is within what sampling alone explains, or small in absolute terms.

References
----------
Prechelt, L. (1994). Proben1 -- a set of neural network benchmark problems and
benchmarking rules. Technical Report 21/94, Fakultät für Informatik, Universität
Karlsruhe.
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from importlib import resources

from fastnet._lawrence import (LAWRENCE_STATISTICS, LAWRENCE_TABLE3_MLP, LAWRENCE_TABLE4,
                               LAWRENCE_UPDATES, LawrenceReproduction, reproduce_lawrence)

__all__ = ["COLUMNS", "PUBLISHED_RUNS", "Reproduction", "ReproductionRow",
           "compare_with_published", "match", "published_results",
           "LAWRENCE_STATISTICS", "LAWRENCE_TABLE3_MLP", "LAWRENCE_TABLE4", "LAWRENCE_UPDATES",
           "LawrenceReproduction", "reproduce_lawrence"]

#: Columns compared: (our name, published CSV column, heading, relative tolerance).
#: Training and validation errors are the minima reached in training (as the report's
#: tables give them), the test errors those of the relevant epoch's network.
COLUMNS = (
    ("train", "tr", "training", 0.05),
    ("val", "va", "validation", 0.05),
    ("test", "te", "test", 0.05),
    ("test_class", "cls", "test classif.", 0.05),
    ("gl_end", "gl", "GL at end", 0.05),
    ("epochs", "epochs", "total epochs", 0.15),
    ("relevant", "relevant", "relevant epochs", 0.15),
)

#: Runs behind each published mean.
PUBLISHED_RUNS = {"linear": 10, "pivot": 60, "noshortcut": 60}

_TABLES = {"linear": ("table3_linear.csv", "table4_linear.csv"),
           "pivot": ("table8_pivot.csv", "table9_pivot.csv"),
           "noshortcut": ("table10_noshortcut.csv", "table11_noshortcut.csv")}


def published_results(networks):
    """Prechelt's published means and standard deviations for ``networks``.

    Parameters
    ----------
    networks : {"linear", "pivot", "noshortcut"}
        Tables 3-4 (linear networks), 8-9 (pivot networks, with shortcut
        connections) or 10-11 (pivot hidden sizes, no shortcuts).

    Returns
    -------
    dict
        ``{file: {column: (mean, sd)}}`` with the CSV columns of `COLUMNS`
        (``cls`` only for classification problems).

    Raises
    ------
    ValueError
        For other networks: the report publishes full tables for these three only.

    Examples
    --------
    >>> published_results("noshortcut")["cancer1"]["te"]
    (1.32, 0.13)
    """
    if networks not in _TABLES:
        raise ValueError(f"`networks` must be one of {sorted(_TABLES)} (the published tables "
                         f"fastnet ships), got {networks!r}.")
    out = {}
    folder = resources.files("fastnet.datasets") / "proben1_published"
    for name in _TABLES[networks]:
        with (folder / name).open(encoding="ascii") as f:
            for row in csv.DictReader(f):
                out[row["problem"]] = {
                    col: (float(row[f"{col}_mean"]), _sd(row[f"{col}_sd"]))
                    for _, col, _, _ in COLUMNS if f"{col}_mean" in row}
    return out


def _sd(text):
    # The report prints no deviation for mushroom1's linear runs ('|' in the
    # table); it is read as 0.
    return 0.0 if text.strip() == "|" else float(text)


def match(ours, published, *, relative=0.05):
    """The match test of two means.

    Parameters
    ----------
    ours, published : (mean, sd, n)
        Mean, (n-1) standard deviation and number of runs of each sample.
    relative : float, default 0.05
        Relative tolerance r.

    Returns
    -------
    bool
        ``|m1 - m2| <= max(3 sqrt(s1^2/n1 + s2^2/n2), r |m2|, 0.02)``.

    Examples
    --------
    >>> match((1.37, 0.2, 60), (1.32, 0.13, 60))
    True
    >>> match((120.9, 60.0, 60), (90.0, 10.0, 60))
    False
    """
    (m1, s1, n1), (m2, s2, n2) = ours, published
    se = math.sqrt(s1 * s1 / n1 + s2 * s2 / n2)
    return abs(m1 - m2) <= max(3.0 * se, relative * abs(m2), 0.02)


@dataclass(frozen=True)
class ReproductionRow:
    """One data file: ours beside the published figures.

    Attributes
    ----------
    problem : str
    n_runs : int
        Our runs.
    cells : dict
        ``{column: (ours_mean, published_mean, matches)}`` for the columns of
        `COLUMNS` that both sides have.
    """

    problem: str
    n_runs: int
    cells: dict


@dataclass(frozen=True)
class Reproduction:
    """Our Proben1 table beside the published one, with match marks and counts.

    Attributes
    ----------
    networks : str
        ``"linear"``, ``"pivot"`` or ``"noshortcut"``.
    rows : tuple of ReproductionRow
    counts : dict
        ``{column: (matching files, compared files)}``.
    missing : tuple of str
        Published files without runs in the result file.
    """

    networks: str
    rows: tuple
    counts: dict
    missing: tuple = ()

    def __repr__(self):
        test = self.counts.get("test", (0, 0))
        epochs = self.counts.get("epochs", (0, 0))
        return (f"Reproduction({self.networks!r}, {len(self.rows)} files; test error "
                f"{test[0]}/{test[1]}, total epochs {epochs[0]}/{epochs[1]} match)")

    def _columns(self):
        """(key, heading) of the compared columns, in table order."""
        return [(key, head) for key, _, head, _ in COLUMNS if key in self.counts]

    def _cells(self, row, cell, missing):
        """The row's cells: ``cell(ours, published, matches)``, ``missing`` where absent."""
        return [cell(*row.cells[key]) if key in row.cells else missing
                for key, _ in self._columns()]

    def to_text(self):
        """A fixed-width table: ``ours/published`` per column, ``X`` where outside."""
        columns = self._columns()
        lines = [f"{'file':<11}{'runs':>5} " + "".join(f"{h:>19}" for _, h in columns)]
        for row in self.rows:
            cells = self._cells(row, lambda o, p, ok: f"{_fmt(o):>8}/{_fmt(p):<8}{' ' if ok else 'X':>2}",
                                f"{'-':>19}")
            lines.append(f"{row.problem:<11}{row.n_runs:>5} " + " ".join(cells))
        lines.append(f"{'matching':<16} " + " ".join(
            f"{f'{self.counts[k][0]}/{self.counts[k][1]}':>18}" for k, _ in columns))
        lines.append("ours/published means; X: outside max(3 standard errors, 5 % (15 % for "
                     "epochs), 0.02) of the published mean (Prechelt 1994).")
        if self.missing:
            lines.append("not run: " + ", ".join(self.missing))
        return "\n".join(lines)

    def to_markdown(self):
        """The same table in Markdown (✓ where ours matches, ✗ where not)."""
        columns = self._columns()
        out = ["| file | runs | " + " | ".join(h for _, h in columns) + " |",
               "|---|---:|" + "---:|" * len(columns)]
        for row in self.rows:
            cells = self._cells(row, lambda o, p, ok: f"{_fmt(o)} / {_fmt(p)} {'✓' if ok else '✗'}",
                                "–")
            out.append(f"| {row.problem} | {row.n_runs} | " + " | ".join(cells) + " |")
        out.append("| **matching** | | " + " | ".join(
            f"**{self.counts[k][0]} / {self.counts[k][1]}**" for k, _ in columns) + " |")
        return "\n".join(out)


def _fmt(v):
    return f"{v:.2f}" if abs(v) < 100 else f"{v:.0f}"


def _value(run, key):
    """A run record's value of a column, as the report defines it: training and
    validation errors are the minima reached, the test errors those at the
    relevant epoch."""
    if key == "train":
        return run["min_train_error"]
    if key == "val":
        return run["min_val_error"]
    if key == "test":
        return run["test"]["squared_error_percentage"]
    if key == "test_class":
        return run["test"]["classification_error"]
    return {"gl_end": run["gl_end"], "epochs": run["epochs"],
            "relevant": run["relevant_epoch"]}[key]


def _mean_sd(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def compare_with_published(results, networks=None):
    """Hold a result file's Proben1 runs next to the report's published means.

    Parameters
    ----------
    results : str, os.PathLike, ResultFile or ExperimentResult
        Runs of ``fastnet reproduce proben1 linear|pivot|noshortcut`` (or any
        result file holding runs of those networks).
    networks : {"linear", "pivot", "noshortcut"}, optional
        Which runs and tables; default: the file's only network among these.

    Returns
    -------
    Reproduction

    Raises
    ------
    ValueError
        If the file holds no runs of ``networks``, or ``networks`` has no
        published table here.

    Examples
    --------
    >>> rep = compare_with_published("proben1-noshortcut.jsonl")   # doctest: +SKIP
    >>> print(rep.to_text())                                      # doctest: +SKIP
    """
    from fastnet.report._summary import _results

    cells = {}
    for (problem, label), runs in _results(results).cells().items():
        network, _, algorithm = label.partition(" / ")   # (a file of several algorithms)
        if algorithm in ("", "rprop+"):                  # the published runs are RPROP's
            cells[(problem, network)] = runs
    available = sorted({network for _, network in cells} & set(_TABLES))
    if networks is None:
        if len(available) != 1:
            raise ValueError(f"the file holds runs of {available or 'no'} published network "
                             "kinds; pass `networks`.")
        networks = available[0]
    published = published_results(networks)
    n_pub = PUBLISHED_RUNS[networks]
    rows, counts = [], {key: [0, 0] for key, _, _, _ in COLUMNS}
    for problem in published:
        runs = cells.get((problem, networks))
        if not runs:
            continue
        pub = published[problem]
        row = {}
        for key, col, _, rel in COLUMNS:
            values = [_value(run, key) for run in runs]
            if col not in pub or any(v is None for v in values):
                continue
            mean, sd = _mean_sd(values)
            pm, ps = pub[col]
            ok = match((mean, sd, len(values)), (pm, ps, n_pub), relative=rel)
            row[key] = (mean, pm, ok)
            counts[key][0] += ok
            counts[key][1] += 1
        rows.append(ReproductionRow(problem=problem, n_runs=len(runs), cells=row))
    if not rows:
        raise ValueError(f"the file holds no runs of {networks!r} networks on a published file.")
    done = {row.problem for row in rows}
    return Reproduction(networks=networks, rows=tuple(rows),
                        counts={k: tuple(v) for k, v in counts.items() if v[1]},
                        missing=tuple(p for p in published if p not in done))


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
