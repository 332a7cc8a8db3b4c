"""A user's rule in every front end (issue 59, item 2): ``--rules FILE`` of ``fastnet
study``, ``fastnet suite`` (``--baselines`` too) and ``fastnet train``, and
:func:`fastnet.algorithms.load_rules` beneath them."""
import hashlib
import json
import os
import re
import shutil

import numpy as np
import pytest

from fastnet import cli
from fastnet.algorithms import ALGORITHMS, from_spec, load_rules, spec_of
from fastnet.training import _rules_files

#: Gradient descent with momentum twice: over all trials at once (`step_many`) and one
#: network at a time (`step` only); a helper class and an imported one that are no rules.
RULES = '''
from dataclasses import dataclass

import numpy as np

from fastnet.algorithms import Algorithm, Backprop  # (imported: not a rule of this file)


@dataclass(frozen=True)
class _Base(Algorithm):                 # (private: not a rule either)
    learning_rate: float = 0.1
    momentum: float = 0.9


@dataclass(frozen=True)
class Mine(_Base):
    def init_state_many(self, weights):
        return np.zeros_like(weights)

    def step_many(self, weights, gradient, error, state):
        change = -self.learning_rate * gradient + self.momentum * state
        return weights + change, change


@dataclass(frozen=True)
class Steps(_Base):
    def init_state(self, weights):
        return np.zeros_like(weights)

    def step(self, weights, gradient, error, state):
        change = -self.learning_rate * gradient + self.momentum * state
        return weights + change, change


if __name__ == "__main__":
    raise SystemExit("a rules file is imported, not run as a script")
'''

STUDY = ["-k", "50", "-T", "200", "--no-pictures", "-q"]


@pytest.fixture(autouse=True)
def no_rule_left_behind():
    """Every test leaves the catalogue as it found it."""
    before = dict(ALGORITHMS)
    yield
    assert not _rules_files._LOADED and ALGORITHMS == before


@pytest.fixture
def rules(tmp_path):
    path = tmp_path / "my_rules.py"
    path.write_text(RULES)
    return path


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _epochs(out):
    d = json.loads((out / "study.json").read_text())
    return {a["algorithm"]: a["trials"]["epochs"] for a in d["algorithms"]}, d


# ---------------------------------------------------------------- load_rules

def test_load_rules_adds_the_files_public_rules_until_unloaded(rules):
    with load_rules(rules) as loaded:
        assert loaded.names == ("mine", "steps")          # (not _Base, not Backprop)
        assert loaded.sha256 == _sha(rules) and loaded.file_name == "my_rules.py"
        mine = from_spec("Mine(learning_rate=0.5)")
        assert type(mine).__name__ == "Mine" and mine.momentum == 0.9
        assert spec_of(mine) == "mine(learning_rate=0.5)"
        assert loaded.to_dict() == {"file": "my_rules.py", "sha256": _sha(rules),
                                    "algorithms": ["mine", "steps"]}
    assert "mine" not in ALGORITHMS
    with pytest.raises(ValueError, match=r"must name one of .*--rules FILE"):
        from_spec("mine")


def test_loading_a_file_again_takes_its_new_version(rules):
    first = load_rules(rules)
    try:
        rules.write_text(RULES.replace("momentum: float = 0.9", "momentum: float = 0.5"))
        second = load_rules(rules)
        assert second.sha256 != first.sha256 and from_spec("mine").momentum == 0.5
        first.unload()                                    # (replaced: unloads nothing)
        assert "mine" in ALGORITHMS
    finally:
        second.unload()


def test_a_worker_loads_the_rules_from_their_bytes(rules):
    with load_rules(rules) as loaded:
        made = ALGORITHMS["mine"]
        _rules_files.ensure_loaded([loaded])              # (loaded here: nothing to do)
        assert ALGORITHMS["mine"] is made
    # a fresh worker: nothing loaded, and no file to read
    moved = rules.with_name("elsewhere.py")
    rules.rename(moved)
    try:
        _rules_files.ensure_loaded([loaded])
        assert from_spec("mine(learning_rate=0.5)").learning_rate == 0.5
        assert _rules_files.rules_of(["mine"])[0].sha256 == loaded.sha256
    finally:
        for entry in list(_rules_files._LOADED.values()):
            entry.rules.unload()


BAD = {
    "missing": (None, r"`--rules` must name a Python file of training rules, got '.*nope.py' "
                      r"\(no such file\)"),
    "raises": ("x = 1\ny = 1 / 0\n", r"`--rules` '.*bad.py': running it raised "
                                     r"ZeroDivisionError: division by zero \(line 2 of bad.py\)"),
    "syntax": ("def f(:\n", r"`--rules` '.*bad.py': running it raised SyntaxError: .*"
                            r"\(line 1 of bad.py\)"),
    "none": ("from fastnet.algorithms import RPROP\nx = 1\n",
             r"`--rules` '.*bad.py' must define a public subclass of "
             r"fastnet.algorithms.Algorithm \(a frozen dataclass whose fields are its "
             r"parameters, with step or step_many\), got none\.$"),
    "clash": ("from dataclasses import dataclass\nfrom fastnet.algorithms import Algorithm\n"
              "@dataclass(frozen=True)\nclass SCG(Algorithm):\n    rate: float = 0.1\n",
              r"`--rules` '.*bad.py': class SCG would be named 'scg', which names fastnet's "
              r"algorithm SCG already; rename the class"),
    "plain": ("from fastnet.algorithms import Algorithm\nclass Plain(Algorithm):\n    pass\n",
              r"`--rules` '.*bad.py': class Plain must be a dataclass"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", [["study", "xor"], ["suite", "-p", "xor"],
                                     ["train", "cancer1"]])
def test_cli_refuses_a_rules_file_it_cannot_use(case, command, tmp_path, capsys):
    text, match = BAD[case]
    path = tmp_path / ("nope.py" if text is None else "bad.py")
    if text is not None:
        path.write_text(text)
    code = cli.main([*command, "--rules", str(path), "-a", "mine", "-o", str(tmp_path / "out"),
                     "-q"] if command[0] != "train" else
                    [*command, "--rules", str(path), "-a", "mine", "-q"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert re.search(r"^fastnet: error: " + match, err, re.MULTILINE), err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_an_unknown_name_without_rules_says_how_to_bring_one(capsys):
    assert cli.main(["study", "xor", "-a", "mine(learning_rate=0.5)", "-q"]) == 1
    assert re.search(r"must name one of .*got 'mine\(learning_rate=0.5\)' \(a rule of your "
                     r"own: load its file with --rules FILE", capsys.readouterr().err)


# ---------------------------------------------------------------- fastnet study

def test_study_of_a_momentum_rule_is_backprop_trial_for_trial(rules, tmp_path, capsys):
    out = tmp_path / "study"
    code = cli.main(["study", "xor", "--rules", str(rules), "-a", "mine(learning_rate=0.5)",
                     "steps(learning_rate=0.5)", "backprop(learning_rate=0.5, momentum=0.9)",
                     "-o", str(out), *STUDY])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    epochs, d = _epochs(out)
    ref = epochs["backprop(learning_rate=0.5, momentum=0.9)"]
    assert epochs["mine(learning_rate=0.5)"] == ref == epochs["steps(learning_rate=0.5)"]
    assert 0 < sum(e < 200 for e in ref) < 50             # (successes and failures both)
    assert d["rules"] == [{"file": "my_rules.py", "sha256": _sha(rules),
                           "algorithms": ["mine", "steps"]}]
    row = f"| rules file my_rules.py | mine, steps (SHA-256 {_sha(rules)}) |"
    assert row in printed.out and row in (out / "summary.md").read_text()
    html = (out / "study.html").read_text()
    assert "rules file my_rules.py" in html and _sha(rules) in html


def test_an_edited_rules_file_trains_again(rules, tmp_path, capsys):
    out = tmp_path / "study"
    args = ["study", "xor", "--rules", str(rules), "-a", "mine(learning_rate=0.5)", "rprop+",
            "-k", "20", "-T", "100", "-o", str(out), "--no-pictures"]
    assert cli.main(args) == 0
    capsys.readouterr()
    first = set(os.listdir(out / "trials"))
    assert cli.main(args) == 0                            # unchanged: resumed
    err = capsys.readouterr().err
    assert err.count("20/20 trials already in trials/") == 2
    assert set(os.listdir(out / "trials")) == first
    rules.write_text(RULES + "\n# edited: the same rules, another file\n")
    assert cli.main(args) == 0
    err = capsys.readouterr().err
    # the rule trains again under a new key; rprop+ (no rules file) resumes
    assert err.count("already in trials/") == 1 and "rprop+: 20/20 trials already" in err
    assert "mine(learning_rate=0.5): training 20 trials" in err
    assert len(set(os.listdir(out / "trials")) - first) == 1
    assert _epochs(out)[1]["rules"][0]["sha256"] == _sha(rules)


def test_worker_processes_get_the_rules_with_each_task(rules, tmp_path):
    from fastnet.study import Study, run_study

    with load_rules(rules):
        study = Study("xor", ("mine(learning_rate=0.5)", "steps(learning_rate=0.5)"),
                      trials=30, limit=100)
        here = run_study(study, tmp_path / "here", pictures=False)
        # (the workers must get the rules from the task: the file is gone, as on a Dask
        # worker that shares no file system)
        rules.unlink()
        there = run_study(study, tmp_path / "there", pictures=False, n_jobs=2)
    for a, b in zip(here.algorithms, there.algorithms):
        assert np.array_equal(a.epochs, b.epochs) and np.array_equal(a.success, b.success)
    assert there.rules == here.rules


def test_cli_study_with_two_jobs(rules, tmp_path, capsys):
    out = tmp_path / "j2"
    code = cli.main(["study", "xor", "--rules", str(rules), "-a", "mine(learning_rate=0.5)",
                     "backprop(learning_rate=0.5, momentum=0.9)", "-j", "2", "-o", str(out),
                     *STUDY])
    assert code == 0, capsys.readouterr().err
    epochs, _ = _epochs(out)
    assert epochs["mine(learning_rate=0.5)"] == epochs["backprop(learning_rate=0.5, momentum=0.9)"]


# ---------------------------------------------------------------- fastnet suite

SUITE = ["-k", "2", "-r", "2", "-s", "1", "--no-pictures", "-q"]


def test_suite_names_the_rule_and_its_file(rules, tmp_path, capsys):
    out = tmp_path / "suite"
    args = ["suite", "-p", "xor", "--rules", str(rules), "-a",
            "mine(learning_rate=loguniform(0.1, 1.0))", "rprop+", "-o", str(out), "-j", "2",
            *SUITE]
    assert cli.main(args) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    sentence = f"mine from my_rules.py (SHA-256 {_sha(rules)})"
    assert sentence in printed and sentence in (out / "suite.html").read_text()
    d = json.loads((out / "suite.json").read_text())
    assert d["rules"] == [{"file": "my_rules.py", "sha256": _sha(rules),
                           "algorithms": ["mine"]}]           # (the rules it trained)
    assert d["run"]["cells_trained"] == 3
    rules.write_text(RULES + "\n# edited\n")
    assert cli.main(args) == 0
    d = json.loads((out / "suite.json").read_text())
    assert (d["run"]["cells_trained"], d["run"]["cells_resumed"]) == (2, 1)   # (rprop+ kept)


@pytest.fixture(scope="module")
def small_db(proben1_root, tmp_path_factory):
    from fastnet.suite import Suite, build_database

    out = tmp_path_factory.mktemp("db")
    build_database(Suite(("glass1", "xor"), ("rprop+",), target={"glass1": 10.0},
                         root=str(proben1_root), budget=2, runs=2, studies=1, max_epochs=20,
                         limit=100), out, command="(test)", pictures=False)
    return out


def test_suite_baselines_train_only_the_rule(rules, small_db, proben1_root, tmp_path, capsys):
    out = tmp_path / "beside"
    code = cli.main(["suite", "--baselines", str(small_db), "--rules", str(rules), "-a",
                     "mine(learning_rate=loguniform(0.1, 1.0))", "-o", str(out), "--data",
                     str(proben1_root), "--no-pictures", "-q"])
    assert code == 0, capsys.readouterr().err
    page = (out / "summary.md").read_text()
    assert "only mine was trained here" in page
    assert f"mine from my_rules.py (SHA-256 {_sha(rules)})" in page
    d = json.loads((out / "suite.json").read_text())
    assert d["run"]["cells_trained"] == 4 and d["rules"][0]["sha256"] == _sha(rules)


def test_suite_baselines_of_the_shipped_database_take_the_rule(rules, tmp_path, capsys):
    # (one generated problem: the command as a user runs it, in seconds)
    out = tmp_path / "shipped"
    code = cli.main(["suite", "--baselines", "--rules", str(rules), "-p", "xor", "-a",
                     "mine(learning_rate=loguniform(0.1, 1.0))", "-o", str(out),
                     "--no-pictures", "-q"])
    assert code == 0, capsys.readouterr().err
    html = (out / "suite.html").read_text()
    assert 'id="baselines"' in html and 'id="rules"' in html and _sha(rules) in html


# ---------------------------------------------------------------- fastnet train

def test_train_takes_a_rule_and_names_its_file(rules, proben1_root, tmp_path, capsys):
    shutil.copy(rules, tmp_path / "other.py")
    code = cli.main(["train", "cancer1", "--rules", str(tmp_path / "other.py"), "-a",
                     "steps(learning_rate=0.001)", "--max-epochs", "20", "--data",
                     str(proben1_root), "-q"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"rules file: other.py (SHA-256 {_sha(rules)}), defining mine, steps" in out
