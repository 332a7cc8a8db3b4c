"""Trust, round four: the suite (an infinite target, tampered cell files, Lacoste's line, a
full disk, a cell's memory, the page and summary)."""
import copy
import json
import math
import re
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


def test_every_kind_of_cell_written_is_read_back(half_diverged, proben1_root, tmp_path):
    """Diverged runs, approximation problems (no test predictions), generated tasks: what
    the suite writes it reads back, training nothing."""
    result, out = half_diverged
    assert run_suite(result.suite, out, pictures=False).n_trained == 0
    suite = Suite(["flare1"], ["rprop+"], runs=2, studies=1, max_epochs=10, root=str(proben1_root))
    assert run_suite(suite, tmp_path / "F", pictures=False).n_trained == 1
    assert run_suite(suite, tmp_path / "F", pictures=False).n_resumed == 1


def test_oversized_cell_is_refused_before_it_is_parsed(small_run, proben1_root, tmp_path):
    out, cell = _copy(small_run[0], tmp_path)
    with open(cell, "a") as f:
        f.write(" " * 2_000_000)
    with pytest.raises(ValueError, match=rf"{cell.name}: a suite's cell file of 2 runs holds at "
                       "most"):
        run_suite(_small(proben1_root), out, pictures=False)


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


# ---------------------------------------------------------------- a finite target or none

DIVERGING = "backprop(learning_rate=50)"


@pytest.fixture(scope="module")
def half_diverged(proben1_root, tmp_path_factory):
    """Issue 46's reproducer made cheap: RPROP and a backpropagation that diverges on
    cancer1 (10 epochs): half the algorithms have an infinite best validation error."""
    out = tmp_path_factory.mktemp("target") / "D"
    suite = Suite(["cancer1"], ["rprop+", DIVERGING], runs=2, studies=1, max_epochs=10,
                  root=str(proben1_root))
    return run_suite(suite, out, pictures=False), out


def test_target_is_finite_when_half_the_algorithms_diverge(half_diverged):
    result, out = half_diverged
    target = result.targets["cancer1"]
    assert target is not None and math.isfinite(target)
    assert result.cells[(DIVERGING, "cancer1")].diverged == 2
    # the target is RPROP's (the only finite) median best validation error
    assert target == result.cells[("rprop+", "cancer1")].validation
    for row in result.rows:
        if row["on_target"]:
            assert row["validation_error"] <= target
    assert json.loads((out / "suite.json").read_text())["targets"]["cancer1"] == target
    summary = (out / "summary.md").read_text()
    assert "## cancer1 (target validation error missed)" not in summary
    assert f"## cancer1 (target validation error {target:.4g})" in summary


def test_no_target_when_every_algorithm_diverges(proben1_root, tmp_path):
    suite = Suite(["cancer1"], [DIVERGING], runs=2, studies=1, max_epochs=10,
                  root=str(proben1_root))
    result = run_suite(suite, tmp_path / "D", pictures=False)
    assert result.targets["cancer1"] is None
    summary = (tmp_path / "D" / "summary.md").read_text()
    assert "## cancer1 (no target)" in summary
    assert "No target: every algorithm's selected configurations diverged" in summary
    assert "| backprop | diverged | diverged | no target | no target | no target | - | 2 |" \
        in summary
    assert "no algorithm's selected configurations reached the target" in summary
    page = (tmp_path / "D" / "suite.html").read_text()
    assert "No target: every algorithm" in page


# ---------------------------------------------------------------- Lacoste's line says why

def test_lacoste_line_says_which_algorithm_diverged_where(half_diverged):
    (pair,) = half_diverged[0].pairs
    assert "no Proben1 classification problem" not in pair.lacoste_verdict
    assert pair.lacoste_verdict == (
        "Lacoste's test not made: every run of backprop's selected configurations diverged "
        "on cancer1 (the suite's Proben1 classification problem)")
    assert "backprop's selected configurations diverged on cancer1" in pair.bayes_verdict


def test_lacoste_line_without_classification_problems(tmp_path):
    result = run_suite(Suite(["xor"], ["rprop+", "quickprop"], runs=3, studies=1), tmp_path / "X",
                       pictures=False)
    (pair,) = result.pairs
    assert pair.lacoste_verdict == ("no Proben1 classification problem in the suite: "
                                    "Lacoste's test not made")


# ---------------------------------------------------------------- page and summary

SPACE = "backprop(learning_rate=loguniform(0.5, 4.0))"


@pytest.fixture(scope="module")
def xor_space(tmp_path_factory):
    """RPROP and a backpropagation search space on XOR: two studies of two configurations."""
    out = tmp_path_factory.mktemp("page") / "X"
    result = run_suite(Suite(["xor"], ["rprop+", SPACE], budget=2, runs=3, studies=2), out,
                       pictures=False)
    return result, out


def test_page_and_summary_show_the_selected_configurations(xor_space):
    result, out = xor_space
    selected = result.cells[(SPACE, "xor")].selected
    summary = (out / "summary.md").read_text()
    page = (out / "suite.html").read_text()
    assert "selected configuration" in summary and "selected configuration" in page
    for c in selected:
        assert c in summary and c in page
    if len(set(selected)) == 2:
        assert f"{selected[0]} (study 1); {selected[1]} (study 2)" in summary


def test_missed_follows_the_half_or_more_rule_everywhere(half_diverged, xor_space):
    from pathlib import Path

    result, out = half_diverged
    for doc in ((out / "summary.md").read_text(), (out / "suite.html").read_text()):
        assert "half of them or more missed the target" in doc
        assert "more than half" not in doc
    docs = (Path(__file__).parents[1] / "docs" / "suite.md").read_text()
    assert "more than half" not in docs and "half of them or more miss" in docs
    # one study: a time is 'missed' exactly when half the runs or more missed
    for res in (result, xor_space[0]):
        for c in res.cells.values():
            if res.targets[c.problem] is not None or res.suite.is_generated(c.problem):
                assert math.isinf(c.epochs) == (2 * c.successes <= c.n_runs) or \
                    res.suite.studies > 1


def test_verdicts_from_few_problems_say_so(xor_space):
    (pair,) = xor_space[0].pairs
    assert "from 1 problem only: fewer than 10 decide little" in pair.bayes_verdict
    page = (xor_space[1] / "suite.html").read_text()
    assert "These comparisons rest on 1 problem only: fewer than 10 decide little" in page
    summary = (xor_space[1] / "summary.md").read_text()
    assert "These comparisons rest on 1 problem only: fewer than 10 decide little" in summary


def test_probabilities_never_print_as_0_or_1(xor_space):
    from fastnet.suite._analyse import probability

    assert [probability(p) for p in (0.0, 0.0004, 0.5, 0.9996, 1.0, None, math.nan)] == \
        ["<0.001", "<0.001", "0.500", ">0.999", ">0.999", "-", "-"]
    result, out = xor_space
    (pair,) = result.pairs
    assert pair.p_equivalent == 1.0              # (both succeed in every run: no difference)
    page = (out / "suite.html").read_text()
    table = page[page.index('id="pairs-table"'):]
    table = table[:table.index("</table>")]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", table)
    assert ">0.999" in [c.replace("&gt;", ">") for c in cells]
    assert not {"0", "1", "1.000", "0.000"} & set(cells)
    assert "P = >0.999" in pair.bayes_verdict


def test_one_algorithm_one_problem_is_singular(tmp_path, capsys):
    from fastnet import cli

    out = tmp_path / "one"
    assert cli.main(["suite", "-p", "xor", "-a", "rprop+", "-r", "2", "-s", "1", "-k", "1",
                     "-o", str(out), "--no-pictures"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("# fastnet suite: 1 algorithm x 1 problem\n")
    assert "Budget 1 configuration x 1 study, 2 runs each" in captured.out
    assert "suite of 1 algorithm x 1 problem, budget 1 x 1 study x 2 runs" in captured.err
    assert "fastnet suite: 1 algorithm x 1 problem" in (out / "suite.html").read_text()
    assert "algorithms x" not in captured.out + captured.err
    assert "1 cell trained" in captured.err


def test_set_up_says_what_no_max_epochs_means(xor_space):
    page = (xor_space[1] / "suite.html").read_text()
    setup = page[page.index('id="setup-table"'):]
    assert "None" not in setup and "null" not in setup
    assert "Proben1&#x27;s 3000" in setup or "Proben1's 3000" in setup


@pytest.mark.parametrize("text", ["rprop+(eta_plus=0.5)", "backprop(lr=1)", "scg(sigma=-1)"])
def test_bad_algorithm_text_is_refused_before_banner_and_folder(tmp_path, capsys, text):
    from fastnet import cli

    out = tmp_path / "never"
    assert cli.main(["suite", "-p", "xor", "-a", text, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fastnet: error: ") and text in err
    assert "suite of" not in err and not out.exists()


# ---------------------------------------------------------------- a full disk

def _full_disk_at(monkeypatch, name):
    """os.fsync raises ENOSPC for a file whose name holds ``name``, as a full disk does."""
    import os

    real = os.fsync

    def fsync(fd):
        if name in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(28, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("name", ["summary.md", "suite.json", "suite.html"])
def test_full_disk_names_the_file_and_leaves_the_old_outputs(xor_space, tmp_path, monkeypatch,
                                                             name):
    from fastnet.suite import OUTPUTS, write_suite

    result, src = xor_space
    out = tmp_path / "X"
    shutil.copytree(src, out)
    old = {n: (out / n).read_bytes() for n in OUTPUTS}
    for n in OUTPUTS:                       # (older outputs: other contents)
        (out / n).write_bytes(b"old " + old[n])
    _full_disk_at(monkeypatch, name)
    with pytest.raises(OSError, match=rf"{re.escape(str(out / name))}: cannot write it \(No "
                       "space left on device\\); no output was replaced") as info:
        write_suite(result, out, pictures=False)
    assert info.value.errno == 28
    assert {n: (out / n).read_bytes() for n in OUTPUTS} == {n: b"old " + old[n] for n in OUTPUTS}
    assert not [p.name for p in out.iterdir()
                if p.name.startswith(".") and p.name != ".fastnet-suite"]   # no temporaries


def test_full_disk_in_a_cell_names_it(tmp_path, monkeypatch, capsys):
    from fastnet import cli

    _full_disk_at(monkeypatch, ".json.")
    out = tmp_path / "X"
    assert cli.main(["suite", "-p", "xor", "-a", "rprop+", "-r", "2", "-s", "1", "-o", str(out),
                     "-q", "--no-pictures"]) == 1
    err = capsys.readouterr().err
    assert re.search(rf"{re.escape(str(out / 'cells'))}/[0-9a-f]{{16}}\.json: cannot write this "
                     r"cell \(No space left on device\)", err), err
    assert not list((out / "cells").iterdir())


def test_failed_rename_puts_the_old_outputs_back(xor_space, tmp_path, monkeypatch):
    import os

    from fastnet.suite import OUTPUTS, write_suite

    result, src = xor_space
    out = tmp_path / "X"
    shutil.copytree(src, out)
    for n in OUTPUTS:
        (out / n).write_bytes(b"old " + n.encode())
    real = os.replace

    def replace(a, b):
        if str(b).endswith("suite.json"):
            raise OSError(5, "Input/output error", str(b))
        return real(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="suite.json: Input/output error; no output was replaced"):
        write_suite(result, out, pictures=False)
    assert {n: (out / n).read_bytes() for n in OUTPUTS} == {n: b"old " + n.encode()
                                                           for n in OUTPUTS}
    assert not [p.name for p in out.iterdir()
                if p.name.startswith(".") and p.name != ".fastnet-suite"]   # no temporaries


# ---------------------------------------------------------------- a cell's memory

def test_a_cell_trains_in_bounded_batches_with_the_same_results(monkeypatch, tmp_path):
    """A cell's runs train in calls of at most CELL_BATCH runs, whose results are dropped
    once recorded; the batches do not change a run (each has its own seed)."""
    import fastnet.training
    from fastnet.suite import _run

    sizes = []
    real = fastnet.training.train_many

    def train_many(nets, *args, **kw):
        sizes.append(len(nets))
        return real(nets, *args, **kw)

    monkeypatch.setattr(fastnet.training, "train_many", train_many)
    suite = Suite(["xor"], ["rprop+"], runs=600, studies=1)
    (cell,) = _run._cells(suite)[0].values()
    big = _run._train_cell(cell)
    assert max(sizes) == _run.CELL_BATCH == 256 and sum(sizes) == 600
    monkeypatch.setattr(_run, "CELL_BATCH", 7)
    small = _run._train_cell(cell)

    def runs(rec):
        return [{k: v for k, v in r.items() if k != "cpu_time"} for r in rec["runs"]]

    assert runs(big) == runs(small) and [r["run"] for r in small["runs"]] == list(range(600))


def test_pairs_are_summarised_and_only_the_decided_listed(xor_space):
    # (issue 58, item 20) 12 algorithms make 66 pairs, nearly all "equivalent ...;
    # undecided": a sentence counts them, the decided ones are listed by name
    from types import SimpleNamespace

    from fastnet.suite._analyse import PairComparison
    from fastnet.suite import _write as suite_write

    names = [f"alg{k}" for k in range(12)]
    labels = dict(zip(names, names))
    pairs = []
    for i in range(12):
        for j in range(i + 1, 12):
            probs = (0.01, 0.98, 0.01)                     # equivalent
            if (i, j) == (0, 1):
                probs = (0.97, 0.02, 0.01)                 # alg0 better
            elif (i, j) == (2, 3):
                probs = (0.4, 0.3, 0.3)                    # undecided
            lac = 0.9 if (i, j) == (4, 5) else 0.5         # alg4 better (Lacoste)
            pairs.append(PairComparison(names[i], names[j], *probs, f"bayes {i}-{j}", lac, 3,
                                        f"lacoste {i}-{j}"))
    many = SimpleNamespace(problems=[f"p{k}" for k in range(12)])
    text, decided = suite_write._pairs_summary(SimpleNamespace(labels=labels, pairs=pairs,
                                                               suite=many))
    assert text == ("66 pairs. Selected error: 1 with one algorithm better, 64 equivalent "
                    "(within the ROPE), 1 undecided. Test classification: 1 with one algorithm "
                    "better, 65 undecided. The pairs where a test found one algorithm better:")
    assert [(c.a, c.b) for c in decided] == [("alg0", "alg1"), ("alg4", "alg5")]
    # the suite's own page and summary: the sentence, then a bullet per decided pair only
    result, out = xor_space
    text, decided = suite_write._pairs_summary(result)
    summary = (out / "summary.md").read_text()
    assert text in summary and text in (out / "suite.html").read_text()
    after = summary[summary.index(text):].split("\n## ")[0]
    assert after.count("\n* ") == len(decided)
    assert "diverged (all configurations)" in summary
    assert "'diverged (all configurations)' the runs that diverged in every configuration" in summary
