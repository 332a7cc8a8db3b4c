"""fastnet suite: search spaces, the suite's runs, resuming, its statistics and its page."""
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from fastnet import cli
from fastnet.algorithms import parse_spec
from fastnet.suite import (MAX_SUITE_RUNS, Choice, IntLogUniform, IntUniform, LogUniform, Suite,
                           Uniform, draw_configurations, run_suite, search_space)
from _extras import needs

try:    # the report's headless Chromium (skipped, or failed in CI, without one)
    from test_report_html_browser import browser, check_page  # noqa: F401  (a fixture)
except pytest.skip.Exception:                  # (no matplotlib)
    @pytest.fixture(scope="module")
    def browser():
        pytest.skip("needs matplotlib, an optional package")

ADAM = "adam(learning_rate=loguniform(1e-3, 1e-1))"
BACKPROP = "backprop(learning_rate=loguniform(1e-4, 1e-1), momentum=uniform(0, 0.9))"
#: The command of the issue (done-when), without -o.
ISSUE = ["suite", "-p", "cancer1", "diabetes1", "glass1", "xor", "-a", "rprop+", ADAM, BACKPROP,
         "--budget", "4", "--runs", "2", "--studies", "2"]


# ---------------------------------------------------------------- search spaces

def test_parse_spec_reads_every_distribution():
    name, params = parse_spec("backprop(learning_rate=loguniform(1e-4, 0.1), "
                              "momentum=uniform(0, 0.9), mode=choice(['batch', 'online']))",
                              space=True)
    assert name == "backprop"
    assert params == {"learning_rate": LogUniform(1e-4, 0.1), "momentum": Uniform(0, 0.9),
                      "mode": Choice(("batch", "online"))}
    assert parse_spec("quickprop(decay=intuniform(0, 3), mu=intloguniform(1, 8))",
                      space=True)[1] == {"decay": IntUniform(0, 3), "mu": IntLogUniform(1, 8)}


@pytest.mark.parametrize("spec, match", [
    # without space=True a distribution is refused, naming the parameter
    ("adam(learning_rate=loguniform(1e-4, 0.1))", "learning_rate=loguniform.*search space"),
])
def test_distribution_outside_a_suite_is_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_spec(spec)
    from fastnet.algorithms import from_spec

    with pytest.raises(ValueError, match=match):
        from_spec(spec)


@pytest.mark.parametrize("spec, match", [
    ("adam(learning_rate=loguniform(0, 0.1))", r"learning_rate=loguniform.*low bound > 0.*got 0"),
    ("adam(learning_rate=loguniform(0.1, 0.01))", r"low < high, got 0.1 and 0.01"),
    ("adam(learning_rate=uniform(1))", r"two bounds.*got 1 values"),
    ("adam(learning_rate=uniform('a', 1))", r"low bound of learning_rate=uniform.*finite "
                                            r"number, got 'a'"),
    ("quickprop(mu=intuniform(1.5, 3))", r"low bound of mu=intuniform.*an integer, got 1.5"),
    ("adam(learning_rate=choice([]))", r"choice\(\[v1, v2, \.\.\.\]\).*got choice"),
    ("adam(learning_rate=normal(0, 1))", r"learning_rate is not a literal.*normal\(0, 1\)"),
    ("adam(learning_rate=loguniform(__import__('os').getcwd(), 1))",
     r"arguments of learning_rate=loguniform\(...\) must be literals"),
    ("adam(learning_rate=os.system('true'))", r"learning_rate is not a literal"),
    ("adam(learning_rate=loguniform(1e-4, float('inf')))", r"literals"),
    ("adam(learning_rate=uniform(0, 1e400))", r"finite bounds"),
    ("adam(learning_rate=uniform(low=0, high=1))", r"positional literal arguments"),
    # (issue 46, items 5 and 9: bounds beyond float range, a width that overflows)
    ("adam(batch_size=intuniform(1, " + "9" * 401 + "))",
     r"high bound of batch_size=intuniform.*at most 2\*\*53 = 9007199254740992.*got 999999999999\.\.\. "
     r"\(401 digits\)"),
    ("adam(batch_size=intloguniform(1, " + "9" * 401 + "))", r"high bound of batch_size=intloguniform"),
    ("adam(batch_size=intuniform(-" + "9" * 20 + ", 1))", r"low bound.*at most 2\*\*53"),
    ("adam(learning_rate=loguniform(1, 10 ** 400))", r"literals"),
    ("adam(learning_rate=loguniform(1, " + "9" * 401 + "))", r"high bound.*within float range"),
    ("backprop(momentum=uniform(-1e308, 1e308))",
     r"momentum=uniform\(...\) needs a width high - low within float range.*got -1e\+308 and 1e\+308, "
     r"inf apart"),
])
def test_bad_search_spaces_name_argument_expected_and_received(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_spec(spec, space=True)


def test_search_space_bounds_are_checked_by_the_algorithm():
    # Adam refuses a learning rate of 0 or below: uniform(-1, 1) reaches it
    with pytest.raises(ValueError, match=r"learning_rate=uniform\(-1, 1\) reaches -1.*adam "
                                         r"refuses"):
        search_space("adam(learning_rate=uniform(-1, 1))")
    with pytest.raises(ValueError, match=r"learning_rate=\[0.1, 0.2\] is a grid.*choice"):
        search_space("backprop(learning_rate=[0.1, 0.2])")


def test_search_space_with_an_unknown_parameter_names_it():
    # (issue 46, item 9: the first dimension was blamed for the unknown fixed parameter)
    for spec in ("quickprop(mu=uniform(1, 2), learning_rate=0.1)",
                 "quickprop(learning_rate=uniform(1, 2), mu=1.5)"):
        with pytest.raises(ValueError, match=r"quickprop has no parameter learning_rate; its "
                                             r"parameters are epsilon, mu, decay, threshold, "
                                             r"momentum\.$") as info:
            search_space(spec)
        assert "reaches" not in str(info.value)
    with pytest.raises(ValueError, match=r"rprop- has no parameter eta; its parameters are "
                                         r"eta_plus, eta_minus, delta0, delta_min, delta_max"):
        search_space("rprop-(eta=uniform(1, 2))")


def test_configurations_are_reproducible_in_range_and_per_study():
    spec = ("quickprop(epsilon=loguniform(1e-4, 1e-1), mu=uniform(1.25, 2.25), "
            "decay=choice([0.0, 0.0001]), momentum=uniform(0, 0.5))")
    a = draw_configurations(spec, 16, seed=3, study=0)
    assert a == draw_configurations(spec, 16, seed=3, study=0)
    assert a != draw_configurations(spec, 16, seed=3, study=1)
    assert a != draw_configurations(spec, 16, seed=4, study=0)
    assert len(set(a)) == 16
    values = [parse_spec(c)[1] for c in a]
    eps = np.array([v["epsilon"] for v in values])
    assert ((1e-4 <= eps) & (eps <= 1e-1)).all()
    # quasi-random in log scale: every decade of the range is hit
    assert sorted(set(np.floor(np.log10(eps)).astype(int))) == [-4, -3, -2]
    assert {v.get("decay", 0.0001) for v in values} == {0.0, 0.0001}
    ints = draw_configurations("adam(batch_size=intloguniform(1, 64))", 32, seed=0)
    sizes = [parse_spec(c)[1].get("batch_size") for c in ints]
    assert all(type(s) is int and 1 <= s <= 64 for s in sizes)
    # a text without distributions is one configuration, whatever the budget
    assert draw_configurations("rprop+(eta_plus=1.1)", 16, seed=0) == ["rprop+(eta_plus=1.1)"]


def test_suite_refuses_too_many_runs_before_training(tmp_path):
    big = int(math.sqrt(MAX_SUITE_RUNS)) + 1
    with pytest.raises(ValueError, match=r"`budget` x `studies` x `runs` x `problems` must keep "
                                         r"a suite within 100,000 trained runs \(MAX_SUITE_RUNS\)"):
        Suite(["xor"], [ADAM], budget=big, runs=big, studies=1)
    # a fixed algorithm counts once, however large the budget
    assert Suite(["xor", "encoder4-2-4"], ["rprop+", ADAM], budget=8, runs=3,
                 studies=2).n_runs == (1 + 16) * 3 * 2
    with pytest.raises(ValueError, match="`algorithms` must be distinct"):
        Suite(["xor"], ["rprop+", "rprop+"])
    with pytest.raises(ValueError, match="encoder N-M-N needs"):
        Suite(["encoder99-3-99"], ["rprop+"])
    with pytest.raises(ValueError, match=r"`problems`: 'xnor' is neither a generated task "
                                         r"\(xor, encoderN-M-N"):
        Suite(["xnor"], ["rprop+"])
    with pytest.raises(TypeError, match="`suite` must be a fastnet.suite.Suite"):
        run_suite("xor", tmp_path)


def test_one_run_per_configuration_on_generated_tasks(tmp_path, capsys):
    # (issue 46, item 4: `-r 1` trained each cell as one lane, and the success criterion read
    # that lane's strided weights: "ndarray is not C-contiguous" on every generated task)
    assert cli.main(["suite", "-p", "xor", "parity3", "-a", "rprop+", "-r", "1", "-s", "1",
                     "-o", str(tmp_path / "s"), "--no-pictures", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| rprop+ | 0 |" in out and "1/1" in out


def test_an_empty_or_foreign_output_directory_is_refused(tmp_path, monkeypatch, capsys):
    # (as `fastnet study` refuses them) -o "" wrote into the working directory
    monkeypatch.chdir(tmp_path)
    (tmp_path / "summary.md").write_text("mine\n")
    args = ["suite", "-p", "xor", "-a", "rprop+", "-r", "1", "-s", "1", "--no-pictures", "--quiet"]
    assert cli.main(args + ["-o", ""]) == 1
    assert "`--out` must be a directory path, got '' (an empty path" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]
    assert cli.main(args + ["-o", str(tmp_path)]) == 1
    assert (f"`--out` '{tmp_path}' must be a suite's directory (empty, or holding the "
            ".fastnet-suite file a suite writes), got a directory holding summary.md"
            ) in capsys.readouterr().err
    assert (tmp_path / "summary.md").read_text() == "mine\n" and len(list(tmp_path.iterdir())) == 1
    # its own directory is resumed, with the marker or (written before it) without
    out = tmp_path / "s"
    assert cli.main(args + ["-o", str(out)]) == 0
    assert (out / ".fastnet-suite").is_file()
    (out / ".fastnet-suite").unlink()
    assert cli.main(args + ["-o", str(out)]) == 0
    assert (out / ".fastnet-suite").is_file()


# ---------------------------------------------------------------- the issue's command

def _fastnet(args, **kw):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-m", "fastnet", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.fixture(scope="module")
def issue_run(proben1_root, tmp_path_factory):
    """The issue's command killed once some cells are written, then run again to the end."""
    needs("matplotlib")
    out = tmp_path_factory.mktemp("suite") / "S"
    args = ISSUE + ["-o", str(out), "--data", str(proben1_root)]
    first = _fastnet(args)
    cells = out / "cells"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and first.poll() is None:
        if cells.is_dir() and len(list(cells.glob("*.json"))) >= 5:
            break
        time.sleep(0.05)
    first.kill()
    first.communicate()
    written = sorted(p.name for p in cells.glob("*.json"))
    assert written, "the first run wrote no cell before it was killed"
    assert not (out / "suite.html").exists()
    second = _fastnet(args)
    stdout, stderr = second.communicate(timeout=120)
    assert second.returncode == 0, stderr
    return out, args, written, stdout, stderr


def test_killed_suite_resumes_and_finishes(issue_run):
    out, _, written, stdout, stderr = issue_run
    resumed = int(re.search(r"(\d+) cells trained, (\d+) resumed", stderr).group(2))
    assert resumed >= len(written) > 0
    for name in ("suite.html", "scores.csv", "suite.json", "summary.md"):
        assert (out / name).is_file()
    assert stdout.startswith("# fastnet suite: 3 algorithms x 4 problems")
    assert "## xor (success 40-20-40)" in stdout
    assert "inf" not in stdout.replace("Infinity", "") and "nan" not in stdout.lower()


def test_friedman_and_profiles_agree_with_the_selected_table(issue_run):
    doc = json.loads((issue_run[0] / "suite.json").read_text())
    selected = doc["selected"]
    problems = doc["setup"]["problems"]
    assert problems == ["cancer1", "diabetes1", "glass1", "xor"]
    table = np.array([[selected[a][p] for p in problems] for a in selected])
    expected = stats.friedmanchisquare(*table)
    assert doc["friedman"]["statistic"] == pytest.approx(expected.statistic, rel=1e-12)
    assert doc["friedman"]["pvalue"] == pytest.approx(expected.pvalue, rel=1e-12)
    won = (table == table.min(axis=0)).mean(axis=1)
    for a, share in zip(selected, won):
        assert doc["profiles"][a]["error"]["1"] == share
        assert doc["profiles"][a]["time"]["1"] == pytest.approx(
            np.mean([t[a][p] is not None and t[a][p] == min(
                v[p] for v in t.values() if v[p] is not None)
                for t in [doc["time"]] for p in problems]))
    assert set(doc) >= {"setup", "version", "machine", "selected", "time", "friedman",
                        "profiles", "scores", "bayes", "curves", "lacoste", "data_sha256"}
    assert doc["bayes"]["prior"] == 0.5 and doc["bayes"]["rope"] == 1.0
    assert len(doc["data_sha256"]["cancer1"]) == 64 and doc["data_sha256"]["xor"] is None
    # every algorithm's configurations: 4 per study from a search space, 1 without
    assert [len(c) for c in doc["configurations"]["adam"]] == [4, 4]
    assert doc["configurations"]["rprop+"] == [["rprop+"], ["rprop+"]]


def test_scores_csv_has_one_row_per_trained_run(issue_run):
    import csv

    with open(issue_run[0] / "scores.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # (1 + 4 x 2 + 4 x 2) configurations x 4 problems x 2 runs
    assert len(rows) == 17 * 4 * 2
    assert set(rows[0]) >= {"algorithm", "problem", "study", "configuration", "parameters", "run",
                            "epochs", "relevant_epoch", "validation_error", "test_error",
                            "traversals", "cpu_seconds"}
    proben1 = [r for r in rows if r["problem"] != "xor" and r["stop_reason"] != "diverged"]
    assert all(float(r["test_error"]) >= 0 and int(r["traversals"]) > 0 for r in proben1)


def test_third_run_trains_nothing(issue_run, capsys):
    out, args, *_ = issue_run
    before = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert cli.main(args) == 0
    err = capsys.readouterr().err
    assert f"0 cells trained, {len(before)} resumed" in err
    assert {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")} == before


def test_page_has_cd_diagram_and_profiles_as_pictures(issue_run):
    html = (issue_run[0] / "suite.html").read_text()
    figures = re.findall(r'<figure[^>]*><img src="data:image/png;base64,[^"]+"[^>]*alt="([^"]+)"',
                         html)
    assert "critical-difference diagram" in figures
    assert "performance profiles of error and time to target" in figures
    assert "expected best validation result after k configurations" in figures
    for p in ("cancer1", "diabetes1", "glass1", "xor"):
        assert f'id="problem-{p}"' in html
    assert "nan" not in re.sub(r"data:image/png;base64,[^\"]+", "", html).lower()


def test_cell_file_of_another_set_up_is_refused(issue_run, tmp_path):
    import shutil

    out = tmp_path / "S"
    shutil.copytree(issue_run[0], out)
    cell = next((out / "cells").glob("*.json"))
    d = json.loads(cell.read_text())
    d["identity"]["data_sha256"] = "0" * 64
    cell.write_text(json.dumps(d))
    args = issue_run[1][:-4] + ["-o", str(out), "--data", issue_run[1][-1]]
    suite = Suite(["cancer1", "diabetes1", "glass1", "xor"], ["rprop+", ADAM, BACKPROP],
                  budget=4, runs=2, studies=2, root=args[-1])
    with pytest.raises(ValueError, match=rf"{cell.name}: not the runs of .* delete it"):
        run_suite(suite, out, pictures=False)


# ---------------------------------------------------------------- back-ends

def _tiny(root):
    return Suite(["glass1", "xor"], ["rprop+", "quickprop(mu=uniform(1.25, 2.0))"], budget=2,
                 runs=3, studies=1, seed=7, max_epochs=100, root=root)


def _results(path):
    doc = json.loads((path / "suite.json").read_text())
    return {k: doc[k] for k in ("selected", "time", "time_epochs", "successes", "configurations",
                                "curves", "friedman", "profiles", "bayes", "targets")}


@pytest.fixture(scope="module")
def tiny_reference(proben1_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "seq"
    res = run_suite(_tiny(str(proben1_root)), out, pictures=False)
    assert (res.backend, res.n_trained, res.n_resumed) == ("sequential", 6, 0)
    return out


def test_local_processes_give_the_same_results(tiny_reference, proben1_root, tmp_path):
    res = run_suite(_tiny(str(proben1_root)), tmp_path / "j2", jobs=2, pictures=False)
    assert res.backend == "loky"
    assert _results(tmp_path / "j2") == _results(tiny_reference)


def test_dask_cluster_of_two_workers_gives_the_same_results(tiny_reference, proben1_root,
                                                             tmp_path):
    distributed = needs("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        res = run_suite(_tiny(str(proben1_root)), tmp_path / "dask",
                        scheduler=cluster.scheduler_address, pictures=False)
    assert res.backend == "dask"
    assert _results(tmp_path / "dask") == _results(tiny_reference)


def test_page_in_chromium(browser, issue_run):
    imgs = check_page(browser, Path(issue_run[0]) / "suite.html")
    alts = [i["alt"] for i in imgs]
    assert "critical-difference diagram" in alts
    assert "performance profiles of error and time to target" in alts
    assert "expected best validation result after k configurations" in alts


@pytest.mark.parametrize("name", ["fastnet.suite", "fastnet.suite._space"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_functions_document_every_parameter():
    import inspect

    import fastnet.suite as suite
    from test_docstrings import _documented_parameters

    missing = {}
    for name in suite.__all__:
        obj = getattr(suite, name)
        members = [(name, obj)] if inspect.isfunction(obj) else [
            (f"{name}.{a}", f) for a, f in vars(obj).items()
            if inspect.isfunction(f) and not a.startswith("_")] if inspect.isclass(obj) else []
        for qual, f in members:
            params = set(inspect.signature(f).parameters) - {"self", "cls"}
            if params - _documented_parameters(inspect.getdoc(f) or ""):
                missing[qual] = params - _documented_parameters(inspect.getdoc(f) or "")
    assert not missing


def test_cells_say_how_their_runs_trained(tiny_reference):
    methods = {json.loads(p.read_text())["method"] for p in (tiny_reference / "cells").glob("*")}
    # RPROP's and Quickprop's runs train side by side in the lanes
    assert methods <= {"lanes", "mixed"} and "lanes" in methods


def test_two_writers_never_mix(proben1_root, tmp_path):
    from fastnet._files import exclusive_lock
    from fastnet.exceptions import FileLockedError

    out = tmp_path / "locked"
    out.mkdir()
    with exclusive_lock(out / "suite.json"):      # another writer holds the directory
        with pytest.raises(FileLockedError):
            run_suite(_tiny(str(proben1_root)), out, pictures=False)
    assert not (out / "cells").exists()          # refused before anything was written
