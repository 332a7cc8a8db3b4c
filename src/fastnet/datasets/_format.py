"""Reader for the Proben1 ``.dt`` file format (Prechelt 1994, section 3)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastnet._files import open_regular
from fastnet.exceptions import DataFormatError

__all__ = ["HEADER_KEYS", "MAX_COLUMNS", "MAX_HEADER_VALUE", "Proben1Header", "Proben1File",
           "read_proben1"]

#: The seven header keys of a Proben1 ``.dt`` file, in the order the published files use.
HEADER_KEYS = (
    "bool_in",
    "real_in",
    "bool_out",
    "real_out",
    "training_examples",
    "validation_examples",
    "test_examples",
)

#: Largest value a header line may hold. Values have at most ten digits, so
#: reading them never meets Python's limit on converting long digit strings.
MAX_HEADER_VALUE = 10**9
#: Most inputs plus outputs a file may declare. The published files have at most
#: 127 (mushroom); every example line repeats them, so 100,000 columns already
#: mean lines of 200 kB. A header beyond this is a corrupt file, not data.
MAX_COLUMNS = 100_000

_N_HEADER_LINES = len(HEADER_KEYS)
_HEADER_LINE = re.compile(r" *([A-Za-z_][A-Za-z0-9_]*) *= *(.*?) *")
_NON_NEGATIVE_INT = re.compile(r"[0-9]+")
# A decimal number: what the format allows and what ``float`` parses without NaN/inf.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Any character that can never occur in the data part of a valid file.
_BAD_DATA_CHAR = re.compile(r"[^0-9eE+\-. \n]")
_NON_FINITE_WORDS = {"nan", "+nan", "-nan", "inf", "+inf", "-inf",
                     "infinity", "+infinity", "-infinity"}


@dataclass(frozen=True)
class Proben1Header:
    """The seven header values of a Proben1 ``.dt`` file.

    Attributes
    ----------
    bool_in, real_in : int
        Number of boolean and real-valued input coefficients.
    bool_out, real_out : int
        Number of boolean and real-valued output coefficients. The published
        ``hearta``/``heartac`` files declare ``bool_out=1`` for an analog output,
        so these counts describe the file, not the problem's kind.
    training_examples, validation_examples, test_examples : int
        Sizes of the three sets of the standard partitioning, in file order.
    """

    bool_in: int
    real_in: int
    bool_out: int
    real_out: int
    training_examples: int
    validation_examples: int
    test_examples: int

    @property
    def n_in(self) -> int:
        """Number of inputs, ``bool_in + real_in``."""
        return self.bool_in + self.real_in

    @property
    def n_out(self) -> int:
        """Number of outputs, ``bool_out + real_out``."""
        return self.bool_out + self.real_out

    @property
    def n_examples(self) -> int:
        """Number of examples (data lines) the header declares."""
        return self.training_examples + self.validation_examples + self.test_examples


@dataclass(frozen=True, eq=False)
class Proben1File:
    """Contents of one Proben1 ``.dt`` file, in file order.

    Attributes
    ----------
    path : pathlib.Path
        The file that was read.
    header : Proben1Header
        The header values.
    X : numpy.ndarray
        Inputs, C-contiguous float64 of shape ``(header.n_examples, header.n_in)``.
    Y : numpy.ndarray
        Targets, C-contiguous float64 of shape ``(header.n_examples, header.n_out)``.
    sha256 : str
        SHA-256 of the file's bytes (hex).
    """

    path: Path
    header: Proben1Header
    X: np.ndarray = field(repr=False)
    Y: np.ndarray = field(repr=False)
    sha256: str = ""


def read_proben1(path: str | os.PathLike) -> Proben1File:
    """Read a Proben1 ``.dt`` file strictly.

    The file must consist of exactly seven header lines ``key=value`` (the keys of
    `HEADER_KEYS`, each once, in any order, values decimal integers from 0 to
    `MAX_HEADER_VALUE`, at most `MAX_COLUMNS` inputs plus outputs)
    followed by exactly ``training_examples + validation_examples + test_examples``
    example lines, each holding ``n_in + n_out`` finite decimal numbers separated by
    one or more spaces, every line (the last included) ended by a newline.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.dt`` file.

    Returns
    -------
    Proben1File
        Header and float64 input/target arrays in file order.

    Raises
    ------
    DataFormatError
        On any deviation from the format. The error names the file and the first
        offending line (``error.line``, 1-based; ``None`` when the file ends too
        early, e.g. fewer examples than declared).
    FileNotFoundError
        If `path` does not exist.

    Notes
    -----
    Only structure and finiteness are checked, never a value range: the published
    files hold values slightly outside [0, 1] (card, glass) and in [-1, 1]
    (building, gene, soybean), and must load unchanged. Leading and trailing
    spaces on a line are tolerated; tabs, carriage returns, blank lines, ``nan``,
    ``inf``, and numbers that overflow to infinity (``1e999``) are errors. A missing
    newline at the end of the file is an error too, because it is what a truncated
    download looks like.

    The parse first validates the line structure in Python and then lets NumPy
    convert all fields at once; the slower line-by-line check that produces the
    error message runs only when something is wrong.

    References
    ----------
    L. Prechelt, "Proben1 -- A Set of Neural Network Benchmark Problems and
    Benchmarking Rules", Technical Report 21/94, Universität Karlsruhe, 1994,
    section 3 (file format).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> text = ("bool_in=0\\nreal_in=2\\nbool_out=1\\nreal_out=0\\n"
    ...         "training_examples=2\\nvalidation_examples=1\\ntest_examples=1\\n"
    ...         "0 0 0\\n0 1 1\\n1 0 1\\n1 1 0\\n")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = pathlib.Path(tmp, "xor1.dt")
    ...     _ = p.write_text(text)
    ...     f = read_proben1(p)
    >>> f.header.n_in, f.header.n_out, f.X.shape, f.Y[:, 0].tolist()
    (2, 1, (4, 2), [0.0, 1.0, 1.0, 0.0])
    """
    path = Path(os.fspath(path))
    with open_regular(path) as f:           # (a FIFO refused, not waited on)
        raw = f.read()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(
            path, line, f"non-ASCII byte 0x{raw[exc.start]:02x}; Proben1 files are plain ASCII"
        ) from None
    return dataclasses.replace(_parse(text, path), sha256=digest)


def _parse(text: str, path: Path) -> Proben1File:
    """Parse the text of a ``.dt`` file; see `read_proben1`."""
    if not text:
        raise DataFormatError(path, None, f"file is empty; expected {_N_HEADER_LINES} header lines")
    if not text.endswith("\n"):
        line = text.count("\n") + 1
        raise DataFormatError(
            path, line, "last line is not ended by a newline (truncated file?)"
        )
    lines = text.split("\n")
    lines.pop()  # the empty string after the final newline
    header = _parse_header(lines, path)
    n_in, n_out = header.n_in, header.n_out
    n_fields = n_in + n_out
    data_lines = lines[_N_HEADER_LINES:]

    # Fast path: cheap structural checks, then one NumPy conversion.
    values = None
    if len(data_lines) == header.n_examples:
        data_start = sum(len(s) + 1 for s in lines[:_N_HEADER_LINES])
        if _BAD_DATA_CHAR.search(text, data_start) is None:
            rows = [s.split() for s in data_lines]
            if all(len(r) == n_fields for r in rows):
                try:
                    values = np.array(rows, dtype=np.float64).reshape(len(rows), n_fields)
                except ValueError:
                    values = None
                if values is not None and not np.isfinite(values).all():
                    values = None
    if values is None:
        _raise_first_data_error(data_lines, header, path)
        raise DataFormatError(path, None, "malformed data")  # pragma: no cover - defensive
    X = np.ascontiguousarray(values[:, :n_in])
    Y = np.ascontiguousarray(values[:, n_in:])
    return Proben1File(path=path, header=header, X=X, Y=Y)


def _short(s: str, limit: int = 40) -> str:
    """Quote `s` for a message, shortened to `limit` characters."""
    return repr(s if len(s) <= limit else s[:limit] + "...")


def _parse_header(lines: list[str], path: Path) -> Proben1Header:
    """Validate the first seven lines and return the header."""
    values: dict[str, int] = {}
    where: dict[str, int] = {}
    for lineno, line in enumerate(lines[:_N_HEADER_LINES], start=1):
        missing = [k for k in HEADER_KEYS if k not in values]
        m = _HEADER_LINE.fullmatch(line)
        if m is None:
            if line.strip() and _looks_like_data(line):
                raise DataFormatError(
                    path, lineno,
                    "expected a header line `key=value` but found data; the header "
                    f"is missing {_keys(missing)}",
                )
            raise DataFormatError(
                path, lineno, f"expected a header line `key=value`, got {_short(line)}"
            )
        key, value = m.group(1), m.group(2)
        if key not in HEADER_KEYS:
            raise DataFormatError(
                path, lineno,
                f"unknown header key `{key}`; expected one of {', '.join(HEADER_KEYS)}",
            )
        if key in values:
            raise DataFormatError(
                path, lineno, f"duplicate header key `{key}` (first given on line {where[key]})"
            )
        if not _NON_NEGATIVE_INT.fullmatch(value):
            raise DataFormatError(
                path, lineno, f"`{key}` must be a non-negative integer, got {_short(value)}"
            )
        digits = value.lstrip("0") or "0"
        if len(digits) > 10 or int(digits) > MAX_HEADER_VALUE:
            raise DataFormatError(
                path, lineno, f"`{key}` must be at most {MAX_HEADER_VALUE}, got {_short(value)}"
            )
        values[key] = int(digits)
        where[key] = lineno
    if len(values) < _N_HEADER_LINES:
        missing = [k for k in HEADER_KEYS if k not in values]
        raise DataFormatError(
            path, None,
            f"file ends after line {len(lines)}, inside the header; missing {_keys(missing)}",
        )
    header = Proben1Header(**values)
    if header.n_in < 1:
        raise DataFormatError(
            path, max(where["bool_in"], where["real_in"]),
            "the header declares no inputs (`bool_in` + `real_in` = 0)",
        )
    if header.n_out < 1:
        raise DataFormatError(
            path, max(where["bool_out"], where["real_out"]),
            "the header declares no outputs (`bool_out` + `real_out` = 0)",
        )
    if header.n_in + header.n_out > MAX_COLUMNS:
        raise DataFormatError(
            path, max(where[k] for k in ("bool_in", "real_in", "bool_out", "real_out")),
            f"the header declares {header.n_in} inputs and {header.n_out} outputs; at most "
            f"{MAX_COLUMNS} in all are read",
        )
    return header


def _keys(keys: list[str]) -> str:
    return ", ".join(f"`{k}`" for k in keys)


def _looks_like_data(line: str) -> bool:
    return all(_NUMBER.fullmatch(tok) for tok in line.split())


def _raise_first_data_error(data_lines: list[str], header: Proben1Header, path: Path) -> None:
    """Check data lines one by one and raise for the first offending line."""
    n_in, n_out = header.n_in, header.n_out
    n_expected = header.n_examples
    first = _N_HEADER_LINES + 1
    for i, line in enumerate(data_lines[:n_expected]):
        _check_data_line(line, first + i, n_in, n_out, path)
    if len(data_lines) < n_expected:
        last = _N_HEADER_LINES + len(data_lines)
        raise DataFormatError(
            path, None,
            f"file ends after line {last} with {len(data_lines)} examples, but the header "
            f"declares {n_expected} (training {header.training_examples} + validation "
            f"{header.validation_examples} + test {header.test_examples})",
        )
    if len(data_lines) > n_expected:
        lineno = first + n_expected
        extra = data_lines[n_expected]
        what = "a blank line" if not extra.strip() else f"{_short(extra)}"
        raise DataFormatError(
            path, lineno,
            f"extra line after the {n_expected} examples the header declares: {what}",
        )


def _check_data_line(line: str, lineno: int, n_in: int, n_out: int, path: Path) -> None:
    n_fields = n_in + n_out
    if not line.strip(" "):
        what = "blank line" if not line else "line of spaces only"
        raise DataFormatError(
            path, lineno, f"{what}; expected an example of {n_fields} numbers"
        )
    for ch, name in (("\t", "tab"), ("\r", "carriage return"), ("\f", "form feed"),
                     ("\v", "vertical tab")):
        if ch in line:
            raise DataFormatError(
                path, lineno,
                f"{name} character in column {line.index(ch) + 1}; fields must be "
                "separated by spaces and lines ended by a single newline",
            )
    tokens = line.split(" ")
    tokens = [t for t in tokens if t]
    for k, tok in enumerate(tokens, start=1):
        if not _NUMBER.fullmatch(tok):
            if "=" in line and _HEADER_LINE.fullmatch(line):
                raise DataFormatError(
                    path, lineno, f"extra header line {_short(line)} after the "
                    f"{_N_HEADER_LINES} header lines",
                )
            if tok.lower() in _NON_FINITE_WORDS:
                raise DataFormatError(
                    path, lineno, f"field {k} is {tok!r}; NaN and infinity are not allowed"
                )
            raise DataFormatError(path, lineno, f"field {k} is not a number: {_short(tok)}")
        if not math.isfinite(float(tok)):
            raise DataFormatError(
                path, lineno, f"field {k} ({_short(tok)}) overflows to infinity"
            )
    if len(tokens) != n_fields:
        raise DataFormatError(
            path, lineno,
            f"expected {n_fields} numbers ({n_in} inputs + {n_out} outputs), got {len(tokens)}",
        )
