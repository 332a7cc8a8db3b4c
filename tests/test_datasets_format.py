"""Strict Proben1 ``.dt`` reader: fixtures, every error branch, and corruption properties."""

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastnet.datasets import HEADER_KEYS, Proben1Header, read_proben1
from fastnet.exceptions import DataFormatError

DATA = Path(__file__).parent / "data"

HEADER = ("bool_in=1\nreal_in=2\nbool_out=2\nreal_out=0\n"
          "training_examples=2\nvalidation_examples=1\ntest_examples=1\n")
ROWS = "1 0.5 0.25 1 0\n0 1 0 0 1\n1 0 1 1 0\n0 0.5 0.5 0 1\n"
GOOD = HEADER + ROWS


def write(tmp_path, text, name="f.dt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def line_of(exc_info):
    return exc_info.value.line


# --------------------------------------------------------------------------- fixtures


def test_tiny_fixture_loads():
    f = read_proben1(DATA / "proben1_tiny_fixture.txt")
    assert f.header == Proben1Header(1, 2, 2, 0, 4, 2, 2)
    assert f.header.n_in == 3 and f.header.n_out == 2 and f.header.n_examples == 8
    assert f.X.dtype == np.float64 and f.Y.dtype == np.float64
    assert f.X.flags.c_contiguous and f.Y.flags.c_contiguous
    np.testing.assert_array_equal(f.X[1], [0, 0.75, 1.001])   # > 1 is allowed (no range check)
    np.testing.assert_array_equal(f.X[3], [0, 1, 0.001])      # two spaces, exponent
    np.testing.assert_array_equal(f.X[5], [0, 0.125, -1])     # leading dot, negative
    np.testing.assert_array_equal(f.Y[:, 0], [1, 0, 1, 0, 1, 0, 1, 0])


def test_bad_fixture_names_file_and_line():
    path = DATA / "proben1_bad_fields_fixture.txt"
    with pytest.raises(DataFormatError, match=r"proben1_bad_fields_fixture\.txt:10: expected 5 numbers "
                       r"\(3 inputs \+ 2 outputs\), got 4") as e:
        read_proben1(path)
    assert e.value.line == 10 and e.value.path == str(path)


def test_accepts_str_path_and_reads_exact_values(tmp_path):
    f = read_proben1(str(write(tmp_path, GOOD)))
    np.testing.assert_array_equal(f.X, [[1, .5, .25], [0, 1, 0], [1, 0, 1], [0, .5, .5]])
    np.testing.assert_array_equal(f.Y, [[1, 0], [0, 1], [1, 0], [0, 1]])


def test_header_in_any_order_and_spaces_around_fields(tmp_path):
    header = "".join(reversed(HEADER.splitlines(keepends=True)))
    rows = ROWS.replace("1 0.5 0.25 1 0", "  1   0.5 0.25 1 0  ")
    f = read_proben1(write(tmp_path, header.replace("real_in=2", "real_in = 2") + rows))
    assert f.header.real_in == 2
    np.testing.assert_array_equal(f.X[0], [1, 0.5, 0.25])


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        read_proben1(DATA / "does_not_exist.dt")


# ------------------------------------------------------------- every validation branch

BRANCHES = [
    # (text, line, message pattern)
    ("", None, r"file is empty"),
    (GOOD[:-1], 11, r"not ended by a newline \(truncated file\?\)"),
    (HEADER.replace("bool_in=1", "bool_in 1") + ROWS, 1, r"expected a header line `key=value`"),
    (HEADER.replace("real_in=2", "reel_in=2") + ROWS, 2, r"unknown header key `reel_in`"),
    (HEADER.replace("bool_out=2", "bool_in=2") + ROWS, 3,
     r"duplicate header key `bool_in` \(first given on line 1\)"),
    (HEADER.replace("real_out=0", "real_out=0.0") + ROWS, 4,
     r"`real_out` must be a non-negative integer, got '0.0'"),
    (HEADER.replace("real_out=0", "real_out=-1") + ROWS, 4, r"non-negative integer, got '-1'"),
    (HEADER.replace("real_out=0", "real_out=") + ROWS, 4, r"non-negative integer, got ''"),
    (HEADER.replace("test_examples=1\n", "") + ROWS, 7,
     r"found data; the header is missing `test_examples`"),
    ("bool_in=1\nreal_in=2\n", None, r"file ends after line 2, inside the header; missing "
     r"`bool_out`, `real_out`"),
    (HEADER.replace("bool_in=1", "bool_in=0").replace("real_in=2", "real_in=0") + ROWS, 2,
     r"declares no inputs"),
    (HEADER.replace("bool_out=2", "bool_out=0") + ROWS, 4, r"declares no outputs"),
    (HEADER + ROWS.replace("0 1 0 0 1", "0 1 0 0"), 9, r"expected 5 numbers .* got 4"),
    (HEADER + ROWS.replace("0 1 0 0 1", "0 1 0 0 1 1"), 9, r"expected 5 numbers .* got 6"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1 0 x 1 0"), 10, r"field 3 is not a number: 'x'"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1 0 1.2.3 1 0"), 10, r"field 3 is not a number"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1 0 nan 1 0"), 10, r"'nan'; NaN and infinity"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1 0 -inf 1 0"), 10, r"'-inf'; NaN and infinity"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1 0 1e999 1 0"), 10, r"overflows to infinity"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1 0 1_0 1 0"), 10, r"field 3 is not a number"),
    (HEADER + ROWS.replace("1 0 1 1 0", "1\t0 1 1 0"), 10, r"tab character in column 2"),
    (HEADER + ROWS.replace("1 0 1 1 0\n", "1 0 1 1 0\r\n"), 10, r"carriage return"),
    (HEADER + ROWS.replace("0 1 0 0 1\n", "\n"), 9, r"blank line; expected an example"),
    (HEADER + ROWS.replace("0 1 0 0 1\n", "   \n"), 9, r"line of spaces only"),
    (HEADER + ROWS + "1 1 1 1 0\n", 12, r"extra line after the 4 examples"),
    (HEADER + ROWS + "\n", 12, r"extra line .*: a blank line"),
    (HEADER + "bool_in=1\n" + ROWS, 8, r"extra header line 'bool_in=1'"),
    (HEADER + ROWS[: ROWS.rindex("0 0.5")], None,
     r"file ends after line 10 with 3 examples, but the header declares 4"),
    (HEADER + ROWS.replace("0 1 0 0 1", "0 1 0 0 1 é"), 9, r"non-ASCII byte 0xc3"),
]


@pytest.mark.parametrize("text, line, pattern", BRANCHES)
def test_each_validation_branch(tmp_path, text, line, pattern):
    path = write(tmp_path, text)
    where = re.escape(str(path)) + ("" if line is None else f":{line}")
    with pytest.raises(DataFormatError, match=f"^{where}: .*{pattern}") as e:
        read_proben1(path)
    assert line_of(e) == line


def test_first_offending_line_wins(tmp_path):
    # Line 11 overflows, line 9 has a wrong field count: the earlier line is reported.
    text = HEADER + ROWS.replace("0 1 0 0 1", "0 1 0").replace("0 0.5 0.5 0 1", "0 1e400 0 0 1")
    with pytest.raises(DataFormatError, match=r":9: expected 5 numbers") as e:
        read_proben1(write(tmp_path, text))
    assert line_of(e) == 9


# ------------------------------------------------------------ property-based corruption

_STRICT_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BAD_TOKENS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e400", "abc", "1.2.3",
               "--1", "1e", "e5", ".", "+", "0x10", "1_0", "1,5", "1e5.5", "½", "=", "1=2"]


@st.composite
def proben1_texts(draw):
    """A valid small .dt file: (text, header values, values array)."""
    n_bool_in, n_real_in = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    if n_bool_in + n_real_in == 0:
        n_real_in = 1
    n_bool_out, n_real_out = draw(st.integers(0, 2)), draw(st.integers(0, 1))
    if n_bool_out + n_real_out == 0:
        n_bool_out = 1
    sizes = draw(st.integers(1, 4)), draw(st.integers(0, 3)), draw(st.integers(0, 3))
    header = dict(zip(HEADER_KEYS, (n_bool_in, n_real_in, n_bool_out, n_real_out, *sizes)))
    order = draw(st.permutations(HEADER_KEYS))
    n_fields = n_bool_in + n_real_in + n_bool_out + n_real_out
    numbers = st.one_of(
        st.integers(-3, 3).map(float),
        st.floats(-10, 10, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    )
    values = draw(st.lists(st.lists(numbers, min_size=n_fields, max_size=n_fields),
                           min_size=sum(sizes), max_size=sum(sizes)))
    seps = st.sampled_from([" ", " ", "  ", "   "])
    lines = [f"{k}={header[k]}" for k in order]
    for row in values:
        lines.append("".join(draw(seps) + repr(v) for v in row)[1:])
    text = "\n".join(lines) + "\n"
    return text, header, np.array(values, dtype=np.float64).reshape(sum(sizes), n_fields)


def lines_of(text):
    return text.split("\n")[:-1]


def join(lines):
    return "\n".join(lines) + "\n"


@st.composite
def corrupted(draw):
    """(text, expected error line) for one corruption of a valid file."""
    text, header, _ = draw(proben1_texts())
    lines = lines_of(text)
    n_data = len(lines) - 7
    kind = draw(st.sampled_from([
        "bad_token", "drop_field", "add_field", "blank", "tab", "crlf", "header_key",
        "header_value", "header_dup", "header_drop", "count_up", "count_down", "width_up",
        "truncate", "append", "no_final_newline",
    ]))
    if kind in ("bad_token", "drop_field", "add_field", "blank", "tab", "crlf"):
        i = 7 + draw(st.integers(0, n_data - 1))
        tokens = lines[i].split()
        k = draw(st.integers(0, len(tokens) - 1))
        if kind == "bad_token":
            bad = draw(st.one_of(
                st.sampled_from(_BAD_TOKENS),
                st.text(st.characters(blacklist_categories=("Cs",),
                                      blacklist_characters="\n "), min_size=1, max_size=6)
                .filter(lambda s: not _STRICT_NUMBER.fullmatch(s)),
            ))
            tokens[k] = bad
            lines[i] = " ".join(tokens)
        elif kind == "drop_field":
            del tokens[k]
            lines[i] = " ".join(tokens)
        elif kind == "add_field":
            tokens.insert(k, "0.5")
            lines[i] = " ".join(tokens)
        elif kind == "blank":
            lines[i] = " " * draw(st.integers(0, 3))
        elif kind == "tab":
            lines[i] = lines[i].replace(" ", "\t", 1)  # every example has >= 2 fields
        else:
            lines[i] += "\r"
        return join(lines), i + 1
    if kind in ("header_key", "header_value", "header_dup", "header_drop"):
        i = draw(st.integers(0, 6))
        key = lines[i].split("=")[0]
        if kind == "header_key":
            lines[i] = draw(st.sampled_from(["foo", "bool_inn", "Bool_in", "test"])) + "=1"
        elif kind == "header_value":
            lines[i] = key + "=" + draw(st.sampled_from(["-1", "1.0", "x", "", "+1", "1e2", "2 3"]))
        elif kind == "header_dup":
            i = draw(st.integers(1, 6))
            j = draw(st.integers(0, i - 1))
            lines[i] = lines[j].split("=")[0] + "=1"
        else:
            del lines[i]
            return join(lines), 7  # the first data line now stands where line 7 was expected
        return join(lines), i + 1
    if kind == "count_up":
        i = lines.index(f"training_examples={header['training_examples']}")
        lines[i] = f"training_examples={header['training_examples'] + draw(st.integers(1, 3))}"
        return join(lines), None
    if kind == "count_down":
        key = draw(st.sampled_from(HEADER_KEYS[4:]))
        if header[key] == 0:
            return draw(corrupted())
        i = lines.index(f"{key}={header[key]}")
        lines[i] = f"{key}={header[key] - 1}"
        return join(lines), len(lines)  # the last example is now one too many
    if kind == "width_up":
        key = draw(st.sampled_from(HEADER_KEYS[:4]))
        i = lines.index(f"{key}={header[key]}")
        lines[i] = f"{key}={header[key] + 1}"
        return join(lines), 8
    if kind == "truncate":
        cut = draw(st.integers(0, len(text) - 1))
        cut_text = text[:cut]
        if cut == 0 or cut_text.endswith("\n"):
            return cut_text, None
        return cut_text, cut_text.count("\n") + 1
    if kind == "append":
        extra = draw(st.sampled_from(["", "   ", "0.5", "1 2 3 4 5 6 7 8 9", "x=1"]))
        return text + extra + "\n", len(lines) + 1
    return text[:-1], len(lines)  # no_final_newline


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("hypothesis") / "case.dt"


PROPERTY = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.filter_too_much])


@PROPERTY
@given(case=proben1_texts())
def test_valid_files_round_trip_exactly(scratch, case):
    text, header, values = case
    scratch.write_text(text)
    f = read_proben1(scratch)
    n_in = header["bool_in"] + header["real_in"]
    assert f.header == Proben1Header(**header)
    np.testing.assert_array_equal(f.X, values[:, :n_in])
    np.testing.assert_array_equal(f.Y, values[:, n_in:])
    assert f.X.flags.c_contiguous and f.Y.flags.c_contiguous


@PROPERTY
@given(case=corrupted())
def test_corruptions_raise_with_the_right_line(scratch, case):
    text, line = case
    scratch.write_bytes(text.encode("utf-8"))
    with pytest.raises(DataFormatError) as e:
        read_proben1(scratch)
    assert e.value.line == line, str(e.value)
    assert str(e.value).startswith(str(scratch) + ("" if line is None else f":{line}") + ": ")


def _oracle(data: bytes):
    """Independent, slow reference parser: values array, or None if the file is invalid."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    if not text.endswith("\n"):
        return None
    lines = text[:-1].split("\n")
    if len(lines) < 7:
        return None
    header = {}
    for line in lines[:7]:
        m = re.fullmatch(r" *(\w+) *= *(\d+) *", line)
        if not m or m.group(1) not in HEADER_KEYS or m.group(1) in header:
            return None
        header[m.group(1)] = int(m.group(2))
    n_in = header["bool_in"] + header["real_in"]
    n_out = header["bool_out"] + header["real_out"]
    n = header["training_examples"] + header["validation_examples"] + header["test_examples"]
    if n_in < 1 or n_out < 1 or len(lines) - 7 != n:
        return None
    rows = []
    for line in lines[7:]:
        tokens = [t for t in line.split(" ") if t]
        if len(tokens) != n_in + n_out or not all(_STRICT_NUMBER.fullmatch(t) for t in tokens):
            return None
        row = [float(t) for t in tokens]
        if not np.all(np.isfinite(row)):
            return None
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(n, n_in + n_out), n_in


@PROPERTY
@given(case=proben1_texts(), data=st.data())
def test_random_byte_damage_never_crashes_or_misreads(scratch, case, data):
    text = case[0].encode("ascii")
    n_edits = data.draw(st.integers(1, 3))
    damaged = bytearray(text)
    for _ in range(n_edits):
        pos = data.draw(st.integers(0, len(damaged) - 1))
        action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        byte = data.draw(st.sampled_from(b"0123456789.-+eE =\n\t\r_xn\xff"))
        if action == "replace":
            damaged[pos] = byte
        elif action == "delete":
            del damaged[pos]
        else:
            damaged.insert(pos, byte)
    scratch.write_bytes(bytes(damaged))
    expected = _oracle(bytes(damaged))
    if expected is None:
        with pytest.raises(DataFormatError):
            read_proben1(scratch)
    else:
        values, n_in = expected
        f = read_proben1(scratch)
        np.testing.assert_array_equal(np.hstack([f.X, f.Y]), values)
        assert f.X.shape[1] == n_in
