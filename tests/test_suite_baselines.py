"""The baseline database: frozen targets, the shipped runs (rerun exactly), and comparing a
new algorithm against it without training the baselines."""
import dataclasses
import gzip
import re
import json
import math
from pathlib import Path

import numpy as np
import pytest

from fastnet import cli
from fastnet.suite import (BASELINE_ALGORITHMS, DATABASE_COLUMNS, Suite, baseline_suite,
                           baselines, build_database, compare_with_baselines, frozen_targets,
                           run_suite, suite_beside)
# (the manifest's own digest, recomputed where a test changes the manifest on purpose)
from fastnet.suite._database import manifest_digest

ROOT = Path(__file__).resolve().parents[1]
#: The tiny database's set-up: seconds to train.
TINY = dict(budget=2, runs=2, studies=1, max_epochs=50, limit=200)
TINY_PROBLEMS = ("cancer1", "glass1", "xor")
TINY_BASE = ("rprop+", "quickprop(epsilon=loguniform(1e-4, 1e-2))")
TINY_TARGETS = {"cancer1": 3.0, "glass1": 10.0}
NEW = "irprop-(eta_plus=uniform(1.1, 1.3))"


@pytest.fixture(scope="module")
def tiny_db(proben1_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("db")
    build_database(Suite(TINY_PROBLEMS, TINY_BASE, target=TINY_TARGETS, root=str(proben1_root),
                         **TINY), out, command="(test)", pictures=False)
    return out


# ---------------------------------------------------------------- frozen targets

def test_frozen_targets_never_move_with_the_algorithms(proben1_root, tmp_path):
    frozen = frozen_targets()
    kw = dict(budget=1, runs=1, studies=1, max_epochs=20, limit=50, root=str(proben1_root))
    problems = ("cancer1", "glass1", "xor")
    few = run_suite(Suite(problems, ("rprop+",), target="frozen", **kw), tmp_path / "a",
                    pictures=False)
    more = run_suite(Suite(problems, ("rprop+", "quickprop", "scg"), target="frozen", **kw),
                     tmp_path / "b", pictures=False)
    assert few.targets == more.targets == {p: frozen[p] for p in problems}
    # (the default, the median over the suite's algorithms, moves with them)
    moving = [run_suite(Suite(problems, algos, **kw), tmp_path / f"m{i}", pictures=False).targets
              for i, algos in enumerate([("rprop+",), ("rprop+", "quickprop", "scg")])]
    assert moving[0] != moving[1]
    page = (tmp_path / "b" / "summary.md").read_text()
    assert "the frozen targets, which do not move with the algorithms" in page


def test_frozen_targets_file_is_versioned_and_covers_the_database():
    d = json.loads((ROOT / "src/fastnet/suite/targets.json").read_text())
    assert d["format"] == 1 and "quantile" in d["rule"]
    db = baselines()
    frozen = frozen_targets()
    assert set(db.problems) <= set(frozen)
    assert all(db.targets[p] == frozen[p] for p in db.problems)


def test_a_problem_without_a_frozen_target_is_refused():
    with pytest.raises(ValueError, match=r"every Proben1 problem.*none for cancer2"):
        Suite(("cancer2",), ("rprop+",), target="frozen")
    with pytest.raises(ValueError, match=r"`target` must be a number, 'frozen'"):
        Suite(("cancer1",), ("rprop+",), target="moving")


def test_networks_per_problem_are_checked():
    s = Suite(("cancer1", "mushroom1"), ("rprop+",), networks={"mushroom1": "linear"})
    assert s.network_of("mushroom1") == "linear" and s.network_of("cancer1") == "pivot"
    with pytest.raises(ValueError, match=r"`networks` must name Proben1 problems.*'xor'"):
        Suite(("cancer1", "xor"), ("rprop+",), networks={"xor": "linear"})
    with pytest.raises(TypeError, match=r"`networks` must be a dict"):
        Suite(("cancer1",), ("rprop+",), networks=["linear"])


# ---------------------------------------------------------------- the shipped database

def test_shipped_database_covers_every_algorithm_and_problem():
    db = baselines()
    assert len(db.algorithms) >= 8 and db.algorithms == BASELINE_ALGORITHMS
    proben1 = [p for p in db.problems if p not in ("xor", "encoder8-3-8", "parity3")]
    assert len(proben1) >= 15 and {"xor", "encoder8-3-8", "parity3"} <= set(db.problems)
    m = db.manifest
    for key in ("command", "fastnet", "machine", "seeds", "data_sha256", "targets",
                "configurations", "setup", "build"):
        assert m[key], key
    assert set(m["data_sha256"]) == set(proben1)
    s = baseline_suite()
    assert len(db) == s.n_runs == m["runs"]
    cols = db.columns()
    assert set(cols) == set(DATABASE_COLUMNS)
    assert cols["traversals"].dtype == float and cols["on_target"].dtype == bool
    pairs = {(r["algorithm"], r["problem"]) for r in db.rows}
    assert pairs == {(a, p) for a in db.algorithms for p in db.problems}
    files = ROOT / "src/fastnet/suite/database"
    assert sum(f.stat().st_size for f in files.iterdir()) < 2_000_000


def test_shipped_database_is_package_data():
    tomllib = pytest.importorskip("tomllib")        # (Python 3.11+)
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["fastnet"]
    for f in ("suite/targets.json", "suite/database/baselines.json",
              "suite/database/baselines.csv.gz"):
        assert f in globs and (ROOT / "src/fastnet" / f).is_file()


def test_a_slice_of_the_shipped_database_reruns_exactly(proben1_root, tmp_path):
    from fastnet._provenance import _build_flags

    db = baselines()
    if db.manifest["build"]["vector_kernels"] != _build_flags()["vector_kernels"]:
        pytest.skip("the database was made with other vector kernels (results differ in the "
                    "last bits between kernel levels)")
    setup = db.manifest["setup"]
    two = (db.algorithms[2], db.algorithms[7])           # irprop+ and adam
    problem = "glass1"
    s = Suite((problem,), two, target={problem: db.targets[problem]}, root=str(proben1_root),
              **{k: setup[k] for k in ("budget", "runs", "studies", "seed", "network",
                                       "max_epochs", "limit")})
    res = run_suite(s, tmp_path, pictures=False)
    stored = [r for r in db.rows if r["problem"] == problem and r["algorithm"] in two]
    assert len(res.rows) == len(stored) == 2 * setup["budget"] * setup["runs"]
    skip = {"cpu_seconds", "cpu_seconds_to_target"}
    for got, want in zip(res.rows, stored):
        for k, v in got.items():
            if k not in skip:
                assert v == want[k], (k, got["parameters"], got["run"])


# ---------------------------------------------------------------- comparing against it

def _same_verdicts(a, b):
    assert a.verdicts == b.verdicts
    assert a.targets == b.targets
    for x, y in zip(a.pairs, b.pairs):
        assert dataclasses.astuple(x) == dataclasses.astuple(y)
    assert np.array_equal(a.friedman.mean_ranks, b.friedman.mean_ranks)
    for key, c in a.cells.items():
        d = b.cells[key]
        for f in ("selected", "error", "validation", "epochs", "traversals", "successes",
                  "n_runs", "diverged"):
            assert getattr(c, f) == getattr(d, f), (key, f)


def test_baselines_train_only_the_new_algorithm_and_match_a_run_from_scratch(
        tiny_db, proben1_root, tmp_path):
    db = baselines(tiny_db)
    res = compare_with_baselines([NEW], tmp_path / "cmp", database=db, root=str(proben1_root),
                                 pictures=False)
    # one new algorithm, 2 configurations, 3 problems: 6 cells trained, none of the baselines
    assert res.n_trained == 6 and res.n_resumed == 0
    assert len(list((tmp_path / "cmp" / "cells").iterdir())) == 6
    assert res.suite.algorithms == TINY_BASE + (NEW,)
    assert res.baselines["algorithms"] == list(TINY_BASE)
    scratch = run_suite(Suite(TINY_PROBLEMS, TINY_BASE + (NEW,), target=TINY_TARGETS,
                              root=str(proben1_root), **TINY), tmp_path / "scratch",
                        pictures=False)
    assert scratch.n_trained == 3 * (1 + 2 + 2)         # (rprop+ is one configuration)
    _same_verdicts(res, scratch)
    page = (tmp_path / "cmp" / "summary.md").read_text()
    assert "come from the baseline database" in page and "only irprop- was trained" in page
    assert json.loads((tmp_path / "cmp" / "suite.json").read_text())["baselines"]["command"]


def test_a_users_own_rule_compares_the_same_way(tiny_db, proben1_root, tmp_path, monkeypatch):
    from fastnet.algorithms import ALGORITHMS, Algorithm

    @dataclasses.dataclass(frozen=True)
    class Signsgd(Algorithm):
        learning_rate: float = 0.01

        def step(self, weights, gradient, error, state):
            return weights - self.learning_rate * np.sign(gradient), state

    monkeypatch.setitem(ALGORITHMS, "signsgd", Signsgd)
    res = compare_with_baselines(["signsgd(learning_rate=loguniform(1e-3, 1e-1))"],
                                 tmp_path, database=tiny_db, root=str(proben1_root),
                                 pictures=False)
    assert res.n_trained == 6
    assert res.labels[res.suite.algorithms[-1]] == "signsgd"
    assert all(math.isfinite(res.cells[(res.suite.algorithms[-1], p)].error)
               for p in TINY_PROBLEMS)


def test_cli_baselines_writes_one_page_with_every_baseline(tiny_db, proben1_root, tmp_path,
                                                           capsys):
    out = tmp_path / "cli"
    code = cli.main(["suite", "--baselines", str(tiny_db), "-a", NEW, "-o", str(out),
                     "--data", str(proben1_root), "--no-pictures", "-q"])
    assert code == 0
    printed = capsys.readouterr().out
    # every pair counted (three algorithms), the decided ones listed; the page's table has all
    assert "3 pairs. Selected error: " in printed
    html = (out / "suite.html").read_text()
    assert html.count('<tr><th scope="row">') >= 3 and 'id="pairs-table"' in html
    assert 'id="baselines"' in html and "were measured on" in html


@pytest.mark.parametrize("extra, match", [
    (["--budget", "4"], r"set-up comes from the database.*drop --budget"),
    (["-p", "cancer2"], r"--problems.*must be problems of the baseline database"),
    (["--baseline-suite"], r"exclude each other"),
])
def test_cli_baselines_refuses_another_set_up(tiny_db, proben1_root, tmp_path, capsys, extra,
                                              match):
    code = cli.main(["suite", "--baselines", str(tiny_db), "-a", NEW, "-o", str(tmp_path),
                     "--data", str(proben1_root), "-q", *extra])
    assert code == 1
    assert re.search(match, capsys.readouterr().err)


def test_a_baseline_is_not_trained_again(tiny_db):
    with pytest.raises(ValueError, match=r"is a baseline of the database already"):
        suite_beside(tiny_db, ["rprop+"])


def test_an_edited_database_is_refused(tiny_db, tmp_path):
    for f in tiny_db.glob("baselines.*"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    rows = gzip.decompress((tmp_path / "baselines.csv.gz").read_bytes()).replace(b"GL", b"XX", 1)
    (tmp_path / "baselines.csv.gz").write_bytes(gzip.compress(rows))
    with pytest.raises(ValueError, match=r"differs from the SHA-256 its manifest records"):
        baselines(tmp_path)
    m = json.loads((tmp_path / "baselines.json").read_text())
    (tmp_path / "baselines.json").write_text(json.dumps({**m, "format": 99}))
    with pytest.raises(ValueError, match=r"format 1 was expected, got format 99"):
        baselines(tmp_path)


def test_data_of_another_sha_is_refused(tiny_db, proben1_root, tmp_path):
    for f in tiny_db.glob("baselines.*"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    m = json.loads((tmp_path / "baselines.json").read_text())
    m["data_sha256"]["glass1"] = "0" * 64
    m["manifest_sha256"] = manifest_digest(m)         # (what the manifest is checked against)
    (tmp_path / "baselines.json").write_text(json.dumps(m))
    with pytest.raises(ValueError, match=r"glass1: the data .* is not the data the baseline"):
        compare_with_baselines([NEW], tmp_path / "out", database=tmp_path,
                               root=str(proben1_root), pictures=False)


def test_cli_baseline_suite_writes_a_database_with_its_provenance(proben1_root, tmp_path,
                                                                  capsys):
    out = tmp_path / "db"
    code = cli.main(["suite", "--baseline-suite", "-p", "glass1", "xor", "-a", "rprop+",
                     "quickprop", "-r", "2", "--max-epochs", "20", "-o", str(out), "--data",
                     str(proben1_root), "--no-pictures", "-q"])
    assert code == 0, capsys.readouterr().err
    db = baselines(out)
    m = db.manifest
    assert m["command"].startswith("fastnet suite --baseline-suite -o ")
    assert "--problems glass1 xor" in m["command"] and "--max-epochs 20" in m["command"]
    assert m["targets"] == {"glass1": frozen_targets()["glass1"], "xor": None}
    assert m["setup"]["networks"] is None and m["seeds"]["master"] == 0
    assert len(db) == 2 * 2 * 2 and set(db.column("problem")) == {"glass1", "xor"}
    assert m["data_sha256"] == {"glass1": json.loads(
        (out / "suite.json").read_text())["data_sha256"]["glass1"]}


def test_labels_of_algorithms_that_share_a_name_say_what_tells_them_apart():
    from fastnet.suite._analyse import _labels

    s = Suite(("xor",), BASELINE_ALGORITHMS + (
        "irprop+(eta_minus=uniform(0.3, 0.7), delta0=loguniform(0.001, 1.0))",))
    labels = list(_labels(s).values())
    assert labels == ["rprop+", "rprop-", "irprop+(eta_plus=uniform(1.05, 1.5))", "irprop-",
                      "quickprop", "backprop", "backprop(momentum=uniform(0.5, 0.95))", "adam",
                      "scg", "lm", "lbfgs", "irprop+(eta_minus=uniform(0.3, 0.7))"]
    # nothing tells them apart but the whole texts: the whole texts
    s = Suite(("xor",), ("adam(learning_rate=0.01)", "adam(learning_rate=0.02)", "adam"))
    assert list(_labels(s).values()) == ["adam(learning_rate=0.01)", "adam(learning_rate=0.02)",
                                         "adam"]


def test_cli_target_frozen(proben1_root, tmp_path, capsys):
    code = cli.main(["suite", "-p", "glass1", "xor", "-a", "rprop+", "-k", "1", "-r", "1",
                     "-s", "1", "--max-epochs", "10", "--target", "frozen", "-o", str(tmp_path),
                     "--data", str(proben1_root), "--no-pictures", "-q"])
    assert code == 0
    d = json.loads((tmp_path / "suite.json").read_text())
    assert d["setup"]["target"] == {"glass1": frozen_targets()["glass1"]}
    assert d["targets"] == {"glass1": frozen_targets()["glass1"], "xor": None}
    capsys.readouterr()
    assert cli.main(["suite", "-p", "xor", "-a", "rprop+", "--target", "moving", "-o",
                     str(tmp_path)]) == 2
    assert "must be a number or 'frozen', got 'moving'" in capsys.readouterr().err


@pytest.mark.parametrize("args, match", [
    (["-a", "rprop+"], r"`--problems` is required \(unless --baseline-suite or --baselines\)"),
    (["-p", "xor"], r"`--algorithms` is required"),
    (["--baselines"], r"`--algorithms` must name the new algorithms"),
])
def test_cli_says_what_is_missing(tmp_path, capsys, args, match):
    assert cli.main(["suite", "-o", str(tmp_path), *args]) == 1
    assert re.search(match, capsys.readouterr().err)


def test_page_of_many_algorithms_puts_the_keys_below_the_pictures(tmp_path, monkeypatch):
    from _extras import needs

    needs("matplotlib")
    import matplotlib.figure

    from fastnet.suite._pictures import PROFILE_KEY_INSIDE

    algos = ("rprop+", "rprop-", "irprop+", "irprop-", "quickprop", "scg", "lbfgs")
    assert len(algos) > PROFILE_KEY_INSIDE
    keys = []
    real = matplotlib.figure.Figure.legend

    def legend(self, *args, **kw):                 # (record the figure-wide keys)
        keys.append(len(args[1]) if len(args) > 1 else None)
        return real(self, *args, **kw)

    monkeypatch.setattr(matplotlib.figure.Figure, "legend", legend)
    run_suite(Suite(("xor", "parity2"), algos, runs=1, limit=100), tmp_path, pictures=True)
    assert keys == [len(algos)]                     # one key for all tuning curves
    html = (tmp_path / "suite.html").read_text()
    assert "critical-difference diagram" in html and "performance profiles" in html


def test_a_column_the_database_has_not_is_named():
    db = baselines()
    with pytest.raises(ValueError, match=r"`name` must be one of algorithm, problem.*got 'speed'"):
        db.column("speed")
    assert np.isnan(db.column("validation_error")[db.column("problem") == "xor"]).all()
    assert "11 algorithms x 18 problems, 4,752 runs" in repr(db)
