"""Result files: the format, reading, records and their repair."""
from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path


from fastnet._validation import import_pandas
from fastnet.exceptions import ResultFileError
from fastnet.experiment._record import LineParser, RecordError, check_header


#: Value of the ``format`` field of every result file header.
FORMAT = "fastnet-results"
#: Version of the record layout; a file of another version is refused.
FORMAT_VERSION = 1

#: Record fields that measure time, and where it was measured (a Dask worker may be
#: another machine), and so differ between otherwise identical runs.
TIMING_FIELDS = ("cpu_time", "wall_time", "host", "machine", "batch")

#: The algorithm of a run record without an ``"algorithm"`` field (Proben1's RPROP).
DEFAULT_ALGORITHM = "rprop+"


def run_key(record):
    """``(problem, network, run, algorithm)`` of a run record."""
    return (record["problem"], record["network"], record["run"],
            record.get("algorithm", DEFAULT_ALGORITHM))


def cell_label(network, algorithm):
    """A report's name of the runs of ``network`` with ``algorithm`` in a file of
    several algorithms: ``"pivot / backprop(learning_rate=0.1)"``."""
    return f"{network} / {algorithm}"


class ResultFileWarning(UserWarning):
    """A result file was repaired (an incomplete last line was cut off) or is unusual."""

def strip_timing(record):
    """A copy of ``record`` without the fields of `TIMING_FIELDS` (for comparisons)."""
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}

@dataclass(frozen=True)
class ResultFile:
    """A result file as read by `read_results`.

    Attributes
    ----------
    path : pathlib.Path
    header : dict
        The header record (set-up, version, machine, build flags).
    records : tuple of dict
        Run records in file order; duplicates of a run (which only a concurrent
        writer could cause) are dropped after the first, with a warning.
    partial_bytes : int
        Length of an incomplete last line (a crash mid-write), 0 if none. It is not
        part of ``records``.
    """

    path: Path
    header: dict
    records: tuple
    partial_bytes: int = 0

    def to_dataframe(self):
        """The run records as a pandas DataFrame with flat columns.

        Nested fields are flattened with ``"."`` (``test.squared_error_percentage``,
        ``traversals.total``, ``batch.method``, ...); one row per run, in file order.

        Raises
        ------
        ImportError
            If pandas is not installed.
        """
        pd = import_pandas("ResultFile.to_dataframe")
        return pd.json_normalize(list(self.records), sep=".")

    def keys(self):
        """Set of ``(problem, network, run)`` present; ``(problem, network, run,
        algorithm)`` for runs of another algorithm than ``"rprop+"``."""
        return {run_key(r)[:3 if "algorithm" not in r else 4] for r in self.records}

    @property
    def algorithms(self):
        """The algorithms of the header's grid (``("rprop+",)`` if it names none)."""
        grid = self.header.get("grid")
        algos = grid.get("algorithms") if isinstance(grid, dict) else None
        return tuple(algos) if algos else (DEFAULT_ALGORITHM,)

    def _cell(self, r):
        """The (problem, network) cell of record ``r``; with several algorithms in the
        grid, the network is labelled with the algorithm (`cell_label`)."""
        if "algorithms" not in (self.header.get("grid") or {}):
            return r["problem"], r["network"]
        return r["problem"], cell_label(r["network"], r.get("algorithm", DEFAULT_ALGORITHM))

    def missing_runs(self):
        """Runs of the header's grid that the file does not hold yet.

        Returns
        -------
        dict
            ``{(problem, network): tuple of range}``: the missing run indices of every
            cell of the grid (``header["grid"]``: problems x networks x runs) that lacks
            runs, as ranges of consecutive indices, in grid order. Empty when the file
            is complete. ``range(0, runs)`` for a cell without any run.

        Examples
        --------
        >>> rf = read_results("cancer1-linear.jsonl")     # doctest: +SKIP
        >>> rf.missing_runs()                            # doctest: +SKIP
        {('cancer1', 'linear'): (range(6, 10),)}
        """
        grid = self.header.get("grid")
        if not isinstance(grid, dict):  # a ResultFile built by hand, not read
            return {}
        present = {}
        for r in self.records:
            present.setdefault(self._cell(r), []).append(r["run"])
        out = {}
        nets = grid["networks"]
        if "algorithms" in grid:
            nets = [cell_label(n, a) for n in nets for a in grid["algorithms"]]
        for cell in ((p, n) for p in grid["problems"] for n in nets):
            gaps, start = [], 0
            for run in sorted(present.get(cell, ())):
                if run > start:
                    gaps.append(range(start, run))
                start = run + 1
            if start < grid["runs"]:
                gaps.append(range(start, grid["runs"]))
            if gaps:
                out[cell] = tuple(gaps)
        return out

    def cells(self):
        """``{(problem, network): [records sorted by run]}`` in header-grid order; in a
        file of several algorithms the network is ``"network / algorithm"``."""
        out = {}
        for r in sorted(self.records, key=lambda r: r["run"]):
            out.setdefault(self._cell(r), []).append(r)
        grid = self.header.get("grid", {})
        pos_p = {p: i for i, p in enumerate(grid.get("problems", []))}
        nets = grid.get("networks", [])
        if "algorithms" in grid:
            nets = [cell_label(n, a) for n in nets for a in grid["algorithms"]]
        pos_n = {n: i for i, n in enumerate(nets)}
        return dict(sorted(out.items(), key=lambda kv: (pos_p.get(kv[0][0], 1 << 30), kv[0][0],
                                                          pos_n.get(kv[0][1], 1 << 30), kv[0][1])))


def _check_first_line(path, obj):
    """The header, checked; return the run checker of its grid."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT or obj.get("type") != "header":
        raise ResultFileError(f"{path}:1: not a fastnet result file (the first line must "
                              f"be a header with \"format\": \"{FORMAT}\").")
    if obj.get("format_version") != FORMAT_VERSION:
        raise ResultFileError(
            f"{path}:1: result format version {_short(obj.get('format_version'))}; this "
            f"fastnet reads version {FORMAT_VERSION}.")
    return check_header(obj)


def _short(v):
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _parse_lines(path, data):
    """Split file bytes into (header, records, good_length, partial_bytes).

    Every complete line is checked (`fastnet.experiment._record`): the header against
    its schema, each run record against the run-record schema and the header's grid.
    """
    if not data:
        raise ResultFileError(f"{path}: the file is empty; it is not a fastnet result file "
                              "(delete it, or give another file).")
    lines = data.split(b"\n")
    tail = lines.pop()  # bytes after the last newline: b"" unless the last line is partial
    partial = len(tail)
    if partial and not lines:
        raise ResultFileError(f"{path}: no complete header line; it is not a fastnet result file "
                              "(or one killed before its header was written: delete it).")
    header, check_run, records, seen = None, None, [], set()
    parse_line = LineParser()
    for i, raw in enumerate(lines, start=1):
        what = "the header" if i == 1 else "a record"
        try:
            obj = parse_line(raw)
            if i == 1:
                check_run = _check_first_line(path, obj)
                header = obj
                continue
            if not isinstance(obj, dict) or obj.get("type") != "run":
                raise ResultFileError(f"{path}:{i}: expected a run record (\"type\": \"run\"), "
                                      f"got {raw[:60]!r}.")
            check_run(obj)
        except ResultFileError:
            raise
        except RecordError as exc:
            raise ResultFileError(
                f"{path}:{i}: {'header' if i == 1 else 'run record'}: {exc} fastnet never "
                "writes such a line, so the file was changed by something else. Fix or remove "
                "the line.") from None
        except (ValueError, RecursionError) as exc:
            raise ResultFileError(
                f"{path}:{i}: {what} is not valid JSON ({exc}); fastnet never writes such a "
                "line, so the file was changed by something else. Fix or remove the line.") from None
        if obj["setup_hash"] != header["setup_hash"]:
            raise ResultFileError(f"{path}:{i}: run record of set-up {_short(obj['setup_hash'])} "
                                  f"in a file of set-up {_short(header['setup_hash'])}.")
        key = run_key(obj)
        if key in seen:
            warnings.warn(f"{path}:{i}: second record of run {key}; keeping the first.",
                          ResultFileWarning, stacklevel=3)
            continue
        seen.add(key)
        records.append(obj)
    return header, records, len(data) - partial, partial


def read_results(path):
    """Read a result file written by `run_experiment`.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    ResultFile

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ResultFileError
        If the file is empty, has no valid header, or a complete line is not valid
        JSON, nests arrays and objects deeper than `MAX_NESTING`, holds ``NaN``,
        ``Infinity`` or a number that overflows a float, or is not a run record of
        this file's set-up and grid with the fields fastnet writes, of their types
        and ranges (errors in [0, `MAX_MEASURE`], counts in [0, `MAX_COUNT`]). The
        message names the file, the line and the field.

    Warns
    -----
    ResultFileWarning
        If the last line is incomplete (a crash while writing). It is ignored here;
        the next `run_experiment` on the file cuts it off and reruns that run.
    """
    path = Path(os.fspath(path))
    data = path.read_bytes()
    header, records, _, partial = _parse_lines(path, data)
    if partial:
        warnings.warn(f"{path}: the last line is incomplete ({partial} bytes; a run was "
                      "interrupted while being written) and is ignored; rerunning the "
                      "experiment on this file repairs it.", ResultFileWarning, stacklevel=2)
    return ResultFile(path=path, header=header, records=tuple(records), partial_bytes=partial)


def _line(obj):
    return (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")
