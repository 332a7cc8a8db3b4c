"""The typed layout of result-file lines (header and run record), checked on read.

A result file is written only by `run_experiment`; anything else in it was put there by
something else. Every line is checked once when it is read, before any report computes
with it: its nesting depth before JSON parses it, its numbers while JSON parses it (no
NaN or Infinity literal, no number that overflows a float), then its fields against the
schemas below. A failure is a `RecordError` naming the field; the reader turns it into a
`ResultFileError` naming the file and line.
"""
from __future__ import annotations

import array
import functools
import json
import re

import numpy as np

#: Deepest nesting of JSON arrays and objects a result-file line may have (fastnet writes
#: 8 levels in a header: checklist, cell, stopping rule, ...; 3 in a run record). Checked before the line
#: is parsed, so that a line of 100,000 ``[`` cannot exhaust the parser's stack.
MAX_NESTING = 32
#: Largest error, GL or time a record may hold: far beyond any trained network's (an error
#: that grows without bound is divergence), and small enough that the summary's means,
#: (n-1) standard deviations and correlations of such numbers stay finite.
MAX_MEASURE = 1e150
#: Most (problem, network) cells a header's grid may name (Proben1 has 45 problems; a
#: report lists the cells missing runs).
MAX_CELLS = 100_000
#: Largest count (run index, epochs, traversals) a record may hold: fastnet counts in
#: signed 64-bit integers.
MAX_COUNT = 2 ** 63 - 1


class RecordError(ValueError):
    """A line breaks the result-file layout.

    Attributes
    ----------
    field : str or None
        Dotted name of the offending field (``"test.squared_error_percentage"``,
        ``"grid.problems[2]"``), or None for the whole line.
    problem : str
        What is wrong with it.
    """

    def __init__(self, problem, field=None):
        self.problem, self.field = problem, field
        super().__init__(problem)

    def inside(self, key):
        """The same error, one level up: its field within ``key`` (a name or ``[k]``)."""
        if self.field is None:
            self.field = key
        else:
            self.field = key + (self.field if self.field.startswith("[") else "." + self.field)
        return self

    def __str__(self):
        return f"`{self.field}` {self.problem}" if self.field else self.problem


def _got(v):
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


# ------------------------------------------------------------------ value checks
# Each takes a value and raises RecordError (without a field: the caller adds it).

def _text(v):
    """A non-empty printable string (a problem, network or stop reason: shown in reports)."""
    if type(v) is not str or not v or not v.isprintable():
        raise RecordError(f"must be a non-empty string of printable characters, got {_got(v)}.")


def _string(v):
    if type(v) is not str:
        raise RecordError(f"must be a string, got {_got(v)}.")


def _bool(v):
    if type(v) is not bool:
        raise RecordError(f"must be true or false, got {_got(v)}.")


def _count(v):
    if type(v) is not int or not 0 <= v <= MAX_COUNT:
        raise RecordError(f"must be an integer in [0, 2**63 - 1], got {_got(v)}.")


def _measure(v, top=MAX_MEASURE):
    if (type(v) is not float and type(v) is not int) or not 0 <= v <= top:
        raise RecordError(f"must be a number in [0, {top:g}], got {_got(v)}.")


def _measure_or_null(v):
    if v is not None:
        _measure(v)


def _percent_or_null(v):
    if v is not None:
        _measure(v, 100.0)


def _list(v, check, fast=None):
    """A list whose items pass ``check``; ``fast(v)`` may accept it at C speed first."""
    if type(v) is not list:
        raise RecordError(f"must be a list, got {_got(v)}.")
    if fast is not None:
        try:
            fast(v)
            return  # e.g. 1,000 test predictions in 10 us
        except (TypeError, OverflowError):
            pass
    for k, x in enumerate(v):
        try:
            check(x)
        except RecordError as exc:
            raise exc.inside(f"[{k}]") from None


def _strings(v):
    _list(v, _string)


def _texts(v):
    _list(v, _text)


def _uint64(x):
    if type(x) is not int or not 0 <= x < 2 ** 64:
        raise RecordError(f"must be an integer in [0, 2**64 - 1], got {_got(x)}.")


def _uint64s(v):
    """Unsigned 64-bit integers: class indices, a SeedSequence spawn key (name hashes)."""
    _list(v, _uint64, functools.partial(array.array, "Q"))


def _binary(v):
    if type(v) is not str or v.strip("01"):
        raise RecordError(f"must be a string of 0 and 1, got {_got(v)}.")


def _object(schema=None):
    """Check a JSON object, and its fields against ``schema`` ({key: (required, check)})."""
    def check(v):
        if type(v) is not dict:
            raise RecordError(f"must be an object, got {_got(v)}.")
        if schema is not None:
            check_fields(v, schema)
    return check


def _objects(schema=None):
    """An object whose every value is an object (of ``schema``)."""
    outer, inner = _object(), _object(schema)

    def check(v):
        outer(v)
        for k, x in v.items():
            try:
                inner(x)
            except RecordError as exc:
                raise exc.inside(k) from None
    return check


def check_fields(obj, schema):
    """Check the fields of ``obj`` (a dict) against ``schema``; other fields are allowed."""
    for key, (required, check) in schema.items():
        if key in obj:
            try:
                check(obj[key])
            except RecordError as exc:
                raise exc.inside(key) from None
        elif required:
            raise RecordError("is missing.", key)


# ------------------------------------------------------------------ schemas
_ERRORS = _object({"squared_error_percentage": (True, _measure),
                   "classification_error": (True, _percent_or_null),
                   "nmse": (False, _measure_or_null)})

#: The run record `run_experiment` writes: {field: (required, check)}. Fields not listed
#: (from later versions) are kept unchecked, within `MAX_NESTING` and finite.
RUN_SCHEMA = {
    "setup_hash": (True, _string),
    "problem": (True, _text), "network": (True, _text), "run": (True, _count),
    "algorithm": (False, _text),
    "train": (True, _ERRORS), "val": (True, _ERRORS), "test": (True, _ERRORS),
    "epochs": (True, _count), "relevant_epoch": (True, _count), "stop_reason": (True, _text),
    "gl_end": (True, _measure_or_null),
    "traversals": (True, _object({k: (True, _count) for k in
                                  ("forward", "backward", "update", "evaluation", "total")})),
    "cpu_time": (True, _measure),
    "seed": (False, _object({"spawn_key": (False, _uint64s)})),
    "architecture": (False, _text), "shortcut": (False, _bool),
    "n_connections": (False, _count), "preset": (False, _string), "dtype": (False, _string),
    "min_train_error": (False, _measure_or_null), "min_val_error": (False, _measure_or_null),
    "wall_time": (False, _measure), "host": (False, _string), "machine": (False, _string),
    "batch": (False, _object()), "test_predictions": (False, _uint64s),
    "test_wrong": (False, _binary),
}

#: The header record `run_experiment` writes (its format and version are checked first).
HEADER_SCHEMA = {
    "setup_hash": (True, _string),
    "grid": (True, _object({"problems": (True, _texts), "networks": (True, _texts),
                            "runs": (True, _count), "algorithms": (False, _texts)})),
    "algorithm_setups": (False, _objects()),
    "identity": (False, _object({"preset_parameters": (False, _objects())})),
    "checklist": (False, _objects({"data": (False, _object()), "stopping": (False, _string)})),
    "data": (False, _objects()),
    "build": (False, _object({"extra_compile_args": (False, _strings)})),
    "machine": (False, _string), "version": (False, _string), "created": (False, _string),
    "python": (False, _string), "numpy": (False, _string), "kernels_sha256": (False, _string),
    "other_machines": (False, _strings),
}


# ------------------------------------------------------------------ parsing
class _NonFinite:
    """Stands for a NaN, Infinity or overflowing literal until its field is known."""

    def __init__(self, literal):
        self.literal = literal

    def __repr__(self):
        return self.literal


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")


def _nesting(raw):
    """Deepest nesting of arrays and objects in ``raw`` (bytes), strings left out."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_NESTING:
        return 0  # cannot be deeper than its number of openings
    a = np.frombuffer(_STRING.sub(b'""', raw), dtype=np.uint8)
    depth = np.cumsum(np.isin(a, list(_OPEN)), dtype=np.int64) \
        - np.cumsum(np.isin(a, list(_CLOSE)), dtype=np.int64)
    return int(depth.max()) if depth.size else 0


def _find_non_finite(obj, name=""):
    """Dotted name of the first `_NonFinite` in ``obj``, and its literal."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        here = (f"{name}.{k}" if name else str(k)) if isinstance(obj, dict) else f"{name}[{k}]"
        if isinstance(v, _NonFinite):
            return here, v.literal
        if isinstance(v, (dict, list)):
            found = _find_non_finite(v, here)
            if found:
                return found
    return None


class LineParser:
    """Parses the lines of one file with the checks of this module's docstring.

    Raises `RecordError` for nesting and numbers, and JSON's `ValueError` for invalid
    JSON or UTF-8.
    """

    def __init__(self):
        self._bad = []
        self._decoder = json.JSONDecoder(parse_constant=self._non_finite,
                                         parse_float=self._float)

    def _non_finite(self, literal):
        self._bad.append(literal)
        return _NonFinite(literal)

    def _float(self, literal):
        v = float(literal)
        return v if v - v == 0.0 else self._non_finite(literal)

    def __call__(self, raw):
        if _nesting(raw) > MAX_NESTING:
            raise RecordError(f"it nests arrays and objects deeper than {MAX_NESTING} levels.")
        obj = self._decoder.decode(raw.decode("utf-8"))
        if self._bad:
            found = _find_non_finite(obj) if isinstance(obj, (dict, list)) else None
            field, literal = found if found else (None, self._bad[0])
            self._bad.clear()
            raise RecordError(f"holds {literal[:40]}, not a finite number (fastnet writes only "
                              "finite numbers).", field)
        return obj


def check_header(obj):
    """Check a header record against `HEADER_SCHEMA`; return a run checker for its grid.

    Returns
    -------
    callable
        ``check_run(record)``: checks a run record (a dict with ``"type": "run"``)
        against `RUN_SCHEMA` and the header's grid.

    Raises
    ------
    RecordError
        If a field is missing, of another type or out of range (also from
        ``check_run``, and if the run lies outside the header's grid).
    """
    check_fields(obj, HEADER_SCHEMA)
    grid = obj["grid"]
    if len(grid["problems"]) * len(grid["networks"]) > MAX_CELLS:
        raise RecordError(f"names {len(grid['problems'])} problems and {len(grid['networks'])} "
                          f"networks; at most {MAX_CELLS:,} cells are allowed.", "grid")
    cells = {"problem": frozenset(grid["problems"]), "network": frozenset(grid["networks"]),
             "algorithm": frozenset(grid.get("algorithms", ["rprop+"]))}
    runs = grid["runs"]

    def check_run(record):
        check_fields(record, RUN_SCHEMA)
        for key, names in cells.items():
            value = record.get(key, "rprop+")
            if value not in names:
                raise RecordError(f"{_got(value)} is not in the header's grid "
                                  f"({', '.join(sorted(names))[:200]}).", key)
        if record["run"] >= runs:
            raise RecordError(f"{record['run']} is outside the header's grid of {runs} runs "
                              "per problem and network.", "run")
    return check_run
