"""Trust, round four: the suite (an infinite target, tampered cell files, Lacoste's line, a
full disk, a cell's memory, the page and summary)."""
import copy
import json
import math
import shutil

import numpy as np
import pytest

from fastnet.suite import Suite, run_suite


# ---------------------------------------------------------------- cell files are not trusted

def _small(root, **kw):
    """A cheap Proben1 suite: two runs of RPROP on cancer1, at most 20 epochs."""
    return Suite(["cancer1"], ["rprop+"], runs=2, studies=1, max_epochs=20, root=str(root), **kw)


@pytest.fixture(scope="module")
def small_run(proben1_root, tmp_path_factory):
    """A finished cheap suite (cancer1, RPROP) and a generated one (xor): their directories."""
    out = tmp_path_factory.mktemp("cells") / "S"
    run_suite(_small(proben1_root), out, pictures=False)
    gen = tmp_path_factory.mktemp("cells") / "G"
    run_suite(Suite(["xor"], ["rprop+"], runs=3, studies=1), gen, pictures=False)
    return out, gen


def _copy(src, tmp_path):
    out = tmp_path / "S"
    shutil.copytree(src, out)
    (cell,) = (out / "cells").glob("*.json")
    return out, cell


def _canonical(d):
    return json.dumps(d, sort_keys=True)


def _edit(path, change, *, digest=False):
    """Change a cell file's JSON; with ``digest`` write a matching digest, as a tool that
    knows the format would (then only the fields' checks can find the edit)."""
    d = json.loads(path.read_text())
    change(d)
    if digest:
        from fastnet.suite._cells import cell_digest

        try:
            d["digest"] = cell_digest(d)
        except ValueError:                    # (NaN and inf have no JSON: no digest either)
            pass
    path.write_text(json.dumps(d))


def _set(key, value, run=0):
    def change(d):
        d["runs"][run][key] = value
    return change


def _delete(key, run=0):
    def change(d):
        del d["runs"][run][key]
    return change


#: The tampering of issue 46 that old code read silently or answered with a traceback.
TAMPERING = [
    ("success", "no"), ("success", "yes"), ("success", True),
    ("val_error", math.nan), ("val_error", math.inf), ("val_error", -1.0), ("val_error", "1.5"),
    ("test_error", -0.5), ("test_error", "x"), ("train_error", math.inf),
    ("epochs", -1), ("epochs", 10 ** 30), ("epochs", 25), ("epochs", 10.0),
    ("relevant_epoch", 999), ("diverged", "no"), ("diverged", 0),
    ("test_wrong", "0101"), ("test_wrong", "2" * 174), ("traversals", 10 ** 400),
    ("traversals", -5), ("traversals", 1.5), ("curve", [1.0]), ("curve", "abc"),
    ("cpu_time", -1.0), ("stop_reason", 7), ("strip", 10), ("run", 1),
    ("test_classification", 101.0),
]


@pytest.mark.parametrize("digest", [False, True], ids=["edited", "edited-with-digest"])
@pytest.mark.parametrize("key, value", TAMPERING, ids=[f"{k}={v!r:.12}" for k, v in TAMPERING])
def test_tampered_cell_is_refused_naming_file_and_field(small_run, proben1_root, tmp_path, key,
                                                        value, digest):
    out, cell = _copy(small_run[0], tmp_path)
    _edit(cell, _set(key, value), digest=digest)
    with pytest.raises(ValueError, match=rf"{cell.name}: .*`{key}`.*delete the file"):
        run_suite(_small(proben1_root), out, pictures=False)


@pytest.mark.parametrize("key", ["val_error", "curve", "test_wrong", "epochs", "diverged"])
def test_cell_with_a_missing_key_is_refused(small_run, proben1_root, tmp_path, key):
    out, cell = _copy(small_run[0], tmp_path)
    _edit(cell, _delete(key), digest=True)
    with pytest.raises(ValueError, match=rf"{cell.name}: .*missing '{key}'"):
        run_suite(_small(proben1_root), out, pictures=False)


@pytest.mark.parametrize("change, field", [
    (_set("success", False), "success"), (_set("epochs", 1001), "epochs"),
    (_set("val_error", 2.0), "val_error"), (_set("curve", [0.5]), "curve"),
])
def test_tampered_generated_cell_is_refused(small_run, tmp_path, change, field):
    out, cell = _copy(small_run[1], tmp_path)
    _edit(cell, change, digest=True)
    with pytest.raises(ValueError, match=rf"{cell.name}: .*`{field}`"):
        run_suite(Suite(["xor"], ["rprop+"], runs=3, studies=1), out, pictures=False)


def test_plausible_edit_is_refused_by_the_digest(small_run, proben1_root, tmp_path):
    out, cell = _copy(small_run[0], tmp_path)
    _edit(cell, lambda d: d["runs"][0].update(val_error=d["runs"][0]["val_error"] * 0.5))
    with pytest.raises(ValueError, match=rf"{cell.name}: .*differ from its digest"):
        run_suite(_small(proben1_root), out, pictures=False)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"runs": ' * 50_000])
def test_deeply_nested_cell_is_refused_without_traceback(small_run, proben1_root, tmp_path, text,
                                                         capsys):
    from fastnet import cli

    out, cell = _copy(small_run[0], tmp_path)
    cell.write_text(text)
    status = cli.main(["suite", "-p", "cancer1", "-a", "rprop+", "-r", "2", "-s", "1",
                       "--max-epochs", "20", "-o", str(out), "--data", str(proben1_root), "-q"])
    err = capsys.readouterr().err
    assert status == 1 and cell.name in err and "Traceback" not in err


def test_cell_of_an_earlier_fastnet_without_digest_is_trained_again(small_run, proben1_root,
                                                                     tmp_path):
    out, cell = _copy(small_run[0], tmp_path)
    before = json.loads(cell.read_text())
    _edit(cell, lambda d: d.pop("digest"))
    result = run_suite(_small(proben1_root), out, pictures=False)
    assert (result.n_trained, result.n_resumed) == (1, 0)
    after = json.loads(cell.read_text())
    assert [{k: v for k, v in r.items() if k != "cpu_time"} for r in after["runs"]] == \
        [{k: v for k, v in r.items() if k != "cpu_time"} for r in before["runs"]]


def _mutations(rng, d):
    """One random edit of a cell's JSON value ``d`` (in place) and what it did."""
    values = [None, True, False, 0, 1, -1, 2, 0.5, -1e-3, 1e300, math.inf, math.nan, 10 ** 30,
              10 ** 400, "", "yes", "0", "01", [], {}, [1.0], {"a": 1}, "x" * 300]
    nodes = []

    def walk(v, parent, key):
        nodes.append((parent, key, v))
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, v, k)
        elif isinstance(v, list):
            for k, x in enumerate(v):
                walk(x, v, k)

    walk(d, None, None)
    parent, key, v = nodes[int(rng.integers(1, len(nodes)))]
    what = int(rng.integers(0, 6))
    if what == 0:
        parent[key] = values[int(rng.integers(len(values)))]
    elif what == 1 and isinstance(parent, dict):
        del parent[key]
    elif what == 2 and isinstance(parent, dict):
        parent[f"{key}_"] = v
    elif what == 3 and isinstance(v, (int, float)) and not isinstance(v, bool):
        parent[key] = v + float(rng.choice([-1, 1])) * (abs(v) * 1e-9 + 1e-12)
    elif what == 4 and isinstance(v, list):
        v.append(copy.deepcopy(v[-1]) if v else 0.0) if rng.random() < 0.5 else (
            v.pop() if v else None)
    elif what == 5 and isinstance(v, str) and v:
        i = int(rng.integers(len(v)))
        parent[key] = v[:i] + ("1" if v[i] == "0" else "0") + v[i + 1:]
    else:
        parent[key] = values[int(rng.integers(len(values)))]
    return key


@pytest.mark.parametrize("which", [0, 1], ids=["cancer1", "xor"])
def test_fuzzed_cell_files_load_identically_or_are_refused_by_name(small_run, proben1_root,
                                                                   which, tmp_path):
    """Random edits of a valid cell file: each loads to the very same values or is refused
    with the file's name, never read differently, never a traceback."""
    from fastnet.suite import _run
    from fastnet.suite._cells import load_cell

    suite = _small(proben1_root) if which == 0 else Suite(["xor"], ["rprop+"], runs=3, studies=1)
    (cell,) = _run._cells(suite)[0].values()
    (src,) = (small_run[which] / "cells").glob("*.json")
    original = json.loads(src.read_text())
    path = tmp_path / src.name
    rng = np.random.default_rng(46)
    outcomes = {"same": 0, "refused": 0, "again": 0}
    for trial in range(1000):
        if trial % 4 == 3:                    # raw text edits: bytes, truncation
            raw = bytearray(src.read_bytes())
            i = int(rng.integers(len(raw)))
            if rng.random() < 0.5:
                raw[i] = int(rng.integers(32, 127))
            else:
                del raw[i:]
            path.write_bytes(bytes(raw))
        else:
            d = copy.deepcopy(original)
            _mutations(rng, d)
            path.write_text(json.dumps(d))
        try:
            got = load_cell(path, cell)
        except ValueError as exc:
            assert str(exc).startswith(f"{path}: "), exc
            outcomes["refused"] += 1
            continue
        if got is None:                       # only a file without its digest
            assert "digest" not in json.loads(path.read_text())
            outcomes["again"] += 1
        else:
            assert _canonical(got) == _canonical(original)
            outcomes["same"] += 1
    assert outcomes["refused"] > 700, outcomes
