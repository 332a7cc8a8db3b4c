"""Fuzzing result files: every mutation of a valid file gives a report or one named error.

Mutations of a real result file, field by field (any value JSON can hold, NaN, Infinity,
1e999, deep nesting, a deleted field) and byte by byte (cut, inserted bytes, a repeated or
moved line). `summarize`, every rendering, `timing_summary` and `compare` must then give
their result or a `ResultFileError` (the file's one named error), never another exception
type and no warning but `ResultFileWarning` (pyproject turns warnings into errors).
"""
import json
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _result_files import small_result_file
from fastnet.experiment import ResultFileError, ResultFileWarning
from fastnet.report import compare, summarize, timing_summary

VALUES = [None, True, False, 0, -1, 1, 2.5, -2.5, 100.5, 1e150, 1e200, 2 ** 63, 2 ** 64, "", "x",
          "=HYPERLINK(\"http://x\")", "<script>", "a|b", "../../x", "cancer1", "linear",
          "\x1b[2J", [], [0], [0, "x"], {}, {"a": 1}, {"squared_error_percentage": 1.0}]
RAW = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" + "0" * 400,
       "[" * 40 + "]" * 40, "[" * 5000, "{\"a\":" * 40 + "1" + "}" * 40]


@pytest.fixture(scope="module")
def valid(proben1_root, tmp_path_factory):
    """A small valid file (two problems, so the comparison has tests over problems)."""
    return small_result_file(proben1_root, tmp_path_factory.mktemp("fuzz") / "valid.jsonl",
                             problems=("cancer1", "building1"), runs=3)


def _paths(obj, prefix=()):
    """Every key path into ``obj`` (dicts and lists), outermost first."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for k, v in items:
        yield prefix + (k,)
        if isinstance(v, (dict, list)) and len(v) < 50:
            yield from _paths(v, prefix + (k,))


def _mutate_field(lines, data):
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    obj = json.loads(lines[i])
    paths = list(_paths(obj))
    path = data.draw(st.sampled_from(paths), label="field")
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    how = data.draw(st.sampled_from(["value", "raw", "delete"]), label="how")
    if how == "delete":
        del parent[path[-1]]
        lines[i] = json.dumps(obj)
    elif how == "value":
        parent[path[-1]] = data.draw(st.sampled_from(VALUES), label="value")
        lines[i] = json.dumps(obj)
    else:
        parent[path[-1]] = "@RAW@"
        lines[i] = json.dumps(obj).replace('"@RAW@"', data.draw(st.sampled_from(RAW), label="raw"))
    return "\n".join(lines) + "\n"


def _mutate_bytes(text, data):
    lines = text.splitlines()
    how = data.draw(st.sampled_from(["cut", "insert", "repeat", "move"]), label="how")
    if how == "cut":
        return text[:data.draw(st.integers(0, len(text)), label="at")]
    if how == "insert":
        at = data.draw(st.integers(0, len(text)), label="at")
        return text[:at] + data.draw(st.text(max_size=8), label="bytes") + text[at:]
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    j = data.draw(st.integers(0, len(lines)), label="to")
    moved = lines[:i] + lines[i + 1:] if how == "move" else list(lines)
    moved.insert(min(j, len(moved)), lines[i])
    return "\n".join(moved) + "\n"


def _use(path, valid):
    """Everything a user does with a result file."""
    rep = summarize(path)
    for text in (rep.to_text(), rep.to_markdown(), rep.to_csv(), rep.to_latex(),
                 rep.to_html(pictures=False)):
        assert isinstance(text, str) and text
    assert timing_summary(path).to_text()
    assert compare([path, valid], labels=["a", "b"]).to_text()


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_result_files_give_a_report_or_a_named_error(valid, tmp_path, data):
    text = valid.read_text(encoding="utf-8")
    if data.draw(st.booleans(), label="field mutation"):
        text = _mutate_field(text.splitlines(), data)
    else:
        text = _mutate_bytes(text, data)
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResultFileWarning)
        try:
            _use(path, valid)
        except ResultFileError as exc:
            assert "mutated.jsonl" in str(exc)
        except ValueError as exc:  # the named errors of valid files that cannot be compared
            assert str(exc).startswith("`results`: ") or "holds no finished runs" in str(exc), exc


def test_the_fuzzer_reaches_both_outcomes(valid, tmp_path):
    """The unmutated file reports; a NaN in it is the named error (the fuzzer can fail)."""
    _use(valid, valid)
    path = tmp_path / "nan.jsonl"
    path.write_text(valid.read_text().replace('"cpu_time":', '"cpu_time":NaN,"x":', 1))
    with pytest.raises(ResultFileError, match=r"nan\.jsonl:2: run record: `cpu_time` holds NaN"):
        _use(path, valid)
