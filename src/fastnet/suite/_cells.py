"""A suite's cell files: written as a stream with a digest, read back only when every field
is what this suite writes.

A cell file (``cells/<hash>.json``) holds one configuration's R runs on one problem. It is
trusted for nothing: reading it checks the set-up (hash, identity, algorithm, runs), then
every field of every run (types, finiteness, ranges, lengths, the shape of a diverged run),
then the SHA-256 digest of its contents, so that a file edited by hand, truncated or
corrupted is refused with its path and the field at fault, never read. A baseline
database's rows are checked by the same `check_outcome` (``fastnet.suite._database_check``);
a study's chunks of trials by their columns and digest (``fastnet.study._chunks``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

__all__ = []

#: The most bytes a cell file may hold per run (the longest validation curve, 600
#: strips, and the longest test set, 2031 patterns, take about 20 kB).
MAX_CELL_BYTES_PER_RUN = 65_536
#: The most connection traversals a run may report (an int64 counter).
MAX_TRAVERSALS = 2 ** 63 - 1
#: The longest stop reason a run may report.
MAX_STOP_REASON = 200
#: Proben1's strip length: a run's validation curve has one value per strip.
STRIP = 5

_RETRAIN = "delete the file to train that cell again"


def cell_path(out, cell):
    """Where a cell's file lives in the output directory ``out``."""
    return Path(out) / "cells" / f"{cell.hash}.json"


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _header(record):
    return {k: v for k, v in record.items() if k not in ("runs", "digest")}


def cell_digest(record):
    """SHA-256 (hex) of a cell record's contents but its digest: the header's canonical
    JSON, then each run's, one per line (computed run by run, as the file is written)."""
    h = hashlib.sha256(_canonical(_header(record)))
    for run in record["runs"]:
        h.update(b"\n")
        h.update(_canonical(run))
    return h.hexdigest()


def save_cell(path, record):
    """Write a cell record atomically, run by run (no single string of the whole file),
    with its digest."""
    from fastnet._files import atomic_write

    def chunks():
        head = {**_header(record), "digest": cell_digest(record)}
        yield json.dumps(head, allow_nan=False)[:-1].encode() + b', "runs": ['
        for i, run in enumerate(record["runs"]):
            yield (b",\n" if i else b"\n") + json.dumps(run, allow_nan=False).encode()
        yield b"\n]}\n"

    try:
        atomic_write(path, chunks())
    except OSError as exc:
        raise OSError(exc.errno, f"{path}: cannot write this cell ({exc.strerror or exc}); "
                      "the cells finished before it are kept: rerun to resume") from None


class _Bad(ValueError):
    """A field of a cell file that this suite cannot have written."""


def _real(x):
    """A finite JSON number (an int too large for a float is none)."""
    if type(x) is int:
        return abs(x) <= MAX_TRAVERSALS
    return type(x) is float and math.isfinite(x)


def _error(x):
    """a finite float, not negative, or null"""
    return x is None or (_real(x) and x >= 0)


def _share(x):
    """a percentage from 0 to 100, or null"""
    return x is None or (_real(x) and 0 <= x <= 100)


def _seconds(x):
    """finite seconds, not negative"""
    return _real(x) and x >= 0


def _flag(x):
    """true or false"""
    return type(x) is bool


def _count(x):
    """a whole number from 0 to 2**63 - 1"""
    return type(x) is int and 0 <= x <= MAX_TRAVERSALS


def _text(x):
    """a short text"""
    return type(x) is str and 0 < len(x) <= MAX_STOP_REASON


def _check(ok, value, where, key, expected=None):
    if not ok(value):
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise _Bad(f"{where}`{key}` must be {expected or ok.__doc__}, got {shown}")


def check_outcome(run, where, cell, names=None):
    """Raise _Bad naming the field of a run's outcome that a suite cannot have written.

    The fields a cell's run and a baseline database's row share (``fastnet.suite._database``
    reads its rows with this): ``diverged``, ``cpu_time``, ``stop_reason``, ``epochs``,
    ``relevant_epoch``, ``train_error``, ``traversals``, ``success``, ``val_error``,
    ``test_error``, and on a Proben1 problem ``test_classification`` and, on a
    classification problem, ``test_wrong``.

    Parameters
    ----------
    run : dict
        Those fields (a cell's run; a database's row under these names).
    where : str
        Prefix of the message (``"run 3: "``).
    cell : object
        With ``generated``, ``classification``, ``n_test`` and ``epoch_limit`` (`_Cell`).
    names : dict, optional
        {field: the name the message gives it} where the file calls it otherwise.

    Returns
    -------
    bool
        True for a Proben1 run that did not diverge (its curve is to be checked).
    """
    names = names or {}

    def check(ok, key, expected=None):
        _check(ok, run[key], where, names.get(key, key), expected)

    check(_flag, "diverged")
    check(_seconds, "cpu_time")
    if run["diverged"]:
        for key in ("epochs", "relevant_epoch", "val_error", "test_error", "train_error",
                    "traversals"):
            check(lambda x: x is None, key, "null in a run that diverged")
        check(lambda x: x is False, "success", "false in a run that diverged")
        check(lambda x: x == "diverged", "stop_reason", "'diverged' in a run that diverged")
        return False
    limit = cell.epoch_limit
    check(_text, "stop_reason")
    check(lambda x: type(x) is int and 0 <= x <= limit, "epochs",
          f"a whole number from 0 to the epoch limit {limit}")
    check(lambda x: type(x) is int and 0 <= x <= run["epochs"], "relevant_epoch",
          f"a whole number from 0 to its epochs ({run['epochs']})")
    check(_error, "train_error")
    check(_count, "traversals")
    if cell.generated:
        check(lambda x: x is (run["stop_reason"] == "correct"), "success",
              f"{run['stop_reason'] == 'correct'} (its stop reason is {run['stop_reason']!r})")
        check(lambda x: x is None, "val_error", "null on a generated task")
        check(lambda x: x is None, "test_error", "null on a generated task")
        return False
    check(lambda x: x is None, "success", "null on a Proben1 problem")
    check(_error, "val_error")
    check(_error, "test_error")
    check(_share, "test_classification")
    if cell.classification:
        check(lambda x: type(x) is str and len(x) == cell.n_test and not x.strip("01"),
              "test_wrong", f"{cell.n_test} characters 0 or 1 (one per test pattern)")
    return True


def _check_run(run, i, cell):
    """Raise _Bad naming the field of run ``i`` that this suite cannot have written."""
    where = f"run {i}: "
    if not isinstance(run, dict):
        raise _Bad(f"run {i} must be an object, got {type(run).__name__}")
    if "diverged" not in run:
        raise _Bad(f"{where}missing 'diverged'")
    _check(_flag, run["diverged"], where, "diverged")
    keys = {"run", "diverged", "stop_reason", "epochs", "relevant_epoch", "train_error",
            "traversals", "cpu_time", "success", "val_error", "test_error", "curve"}
    proben1 = not cell.generated and run.get("diverged") is False
    if proben1:
        keys |= {"test_classification", "strip"} | ({"test_wrong"} if cell.classification
                                                     else set())
    missing = sorted(keys - set(run))
    extra = sorted(set(run) - keys)
    if missing or extra:
        raise _Bad(f"{where}" + (f"missing {', '.join(map(repr, missing))}" if missing else
                                 f"unknown {', '.join(map(repr, extra))}"))
    _check(lambda x: type(x) is int and x == i, run["run"], where, "run", f"{i}")
    if not check_outcome(run, where, cell):
        why = ("in a run that diverged" if run["diverged"] else "on a generated task")
        _check(lambda x: x == [], run["curve"], where, "curve", f"[] {why}")
        return None
    _check(lambda x: type(x) is int and x == STRIP, run["strip"], where, "strip", f"{STRIP}")
    n = run["epochs"] // STRIP
    _check(lambda x: isinstance(x, list) and len(x) == n and all(map(_error, x)),
           run["curve"], where, "curve",
           f"{n} validation errors (one per strip of its {run['epochs']} epochs), each a "
           "finite float, not negative, or null")
    return None


def _check_header(d, cell):
    if (not isinstance(d, dict) or d.get("hash") != cell.hash or d.get("identity") != cell.identity
            or d.get("algorithm") != cell.configuration or not isinstance(d.get("runs"), list)
            or len(d["runs"]) != cell.runs):
        return False
    return True


def load_cell(path, cell):
    """A finished cell's record, or None if there is no file (or it has no digest: a file
    of an earlier fastnet, trained again).

    Raises
    ------
    ValueError
        Naming the file (and the run and field at fault) if it is not this cell's (another
        set-up, other data) or holds what this suite cannot have written: a field of the
        wrong type, out of range, non-finite, missing or unknown, a list of the wrong
        length, or contents that differ from the digest (edited by hand, corrupted).
    """
    from fastnet._files import read_json_record

    path = Path(os.fspath(path))
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    limit = MAX_CELL_BYTES_PER_RUN * (cell.runs + 16)
    if size > limit:
        raise ValueError(f"{path}: a suite's cell file of {cell.runs} runs holds at most "
                         f"{limit:,} bytes, got {size:,}; {_RETRAIN}.")
    try:
        d = read_json_record(path, "a suite's cell file", "train that cell again")
    except RecursionError:
        raise ValueError(f"{path}: not a suite's cell file (nested too deeply); "
                         f"{_RETRAIN}.") from None
    if d is None:
        return None
    if not _check_header(d, cell):
        raise ValueError(f"{path}: not the runs of {cell.configuration!r} on {cell.problem} in "
                         "this suite's set-up (hash, data, algorithm or runs differ); delete it "
                         "to train that cell again.")
    if "digest" not in d:
        return None                             # (written before cells had digests)
    try:
        _check(lambda x: type(x) is str and len(x) == 64, d["digest"], "", "digest",
               "64 hexadecimal digits")
        _check(_seconds, d.get("cpu_time"), "", "cpu_time")
        _check(_text, d.get("method"), "", "method", "a short text")
        extra = sorted(set(d) - {"hash", "identity", "algorithm", "runs", "method", "cpu_time",
                                 "digest"})
        if extra:
            raise _Bad(f"unknown {', '.join(map(repr, extra))}")
        for i, run in enumerate(d["runs"]):
            _check_run(run, i, cell)
        if cell_digest(d) != d["digest"]:
            raise _Bad("its contents differ from its digest (edited or corrupted)")
    except (_Bad, RecursionError, ValueError) as exc:
        raise ValueError(f"{path}: not a cell this suite wrote: {exc}; {_RETRAIN}.") from None
    return d
