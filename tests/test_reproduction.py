"""Proben1's published figures beside ours: the match test, the tables, the rule readings."""
import json
import math
import re

import pytest

from fastnet import cli
from fastnet.experiment import Experiment, build_network, run_experiment
from fastnet.reproduction import (
    PUBLISHED_RUNS, compare_with_published, match, published_results,
)
from fastnet.rprop import PRESETS, proben1_stopping


def test_match_test_boundaries():
    # 3 standard errors of the difference: sqrt(0.3^2/10 + 0.4^2/10) = sqrt(0.025) = 0.1581
    se = math.sqrt(0.3 ** 2 / 10 + 0.4 ** 2 / 10)
    assert match((10.0 + 3 * se - 1e-9, 0.3, 10), (10.0, 0.4, 10), relative=0.0)
    assert not match((10.0 + 3 * se + 1e-9, 0.3, 10), (10.0, 0.4, 10), relative=0.0)
    # 5 % of the published mean when the deviations are 0
    assert match((10.5, 0.0, 10), (10.0, 0.0, 10))
    assert not match((10.51, 0.0, 10), (10.0, 0.0, 10))
    # 15 % for epochs
    assert match((115.0, 0.0, 60), (100.0, 0.0, 60), relative=0.15)
    assert not match((115.1, 0.0, 60), (100.0, 0.0, 60), relative=0.15)
    # and 0.02 absolute for tiny errors
    assert match((0.02, 0.0, 10), (0.0, 0.0, 10))
    assert not match((0.0201, 0.0, 10), (0.0, 0.0, 10))


def test_published_tables_ship_with_the_package():
    lin = published_results("linear")
    nos = published_results("noshortcut")
    assert len(lin) == 43 and len(nos) == 42          # mushroom1 only has a linear row
    assert nos["cancer1"]["te"] == (1.32, 0.13) and nos["cancer1"]["epochs"] == (116.0, 123.0)
    assert "cls" not in nos["building1"]               # approximation problems
    assert lin["mushroom1"]["epochs"] == (3000.0, 0.0)  # no deviation printed: 0
    assert PUBLISHED_RUNS == {"linear": 10, "pivot": 60, "noshortcut": 60}
    with pytest.raises(ValueError, match=r"`networks` must be one of \['linear', 'noshortcut', "
                                         r"'pivot'\] .*, got '8\+4 s'"):
        published_results("8+4 s")


def test_pivot_tables_8_and_9_ship_with_the_package():
    piv = published_results("pivot")
    assert len(piv) == 42 and list(piv)[:2] == ["cancer1", "cancer2"]
    assert list(piv)[-1] == "heartac3" and "mushroom1" not in piv
    # a classification row (Table 8) and an approximation row (Table 9), as printed
    assert piv["cancer1"] == {"tr": (2.87, 0.27), "va": (1.96, 0.25), "te": (1.60, 0.41),
                              "cls": (1.47, 0.60), "gl": (4.48, 4.87),
                              "epochs": (152.0, 111.0), "relevant": (133.0, 97.0)}
    assert piv["building3"]["epochs"] == (1540.0, 466.0) and "cls" not in piv["building3"]
    # the same 42 files as the no-shortcut tables, in the same order, with other figures
    nos = published_results("noshortcut")
    assert list(piv) == list(nos)
    assert all(piv[f] != nos[f] for f in piv)


def test_comparison_of_a_small_run(proben1_root, tmp_path):
    exp = Experiment(problems=["cancer1", "glass1"], networks=["noshortcut"], runs=4,
                     root=proben1_root)
    res = run_experiment(exp, tmp_path / "r.jsonl")
    rep = compare_with_published(res)
    assert rep.networks == "noshortcut" and [r.problem for r in rep.rows] == ["cancer1", "glass1"]
    assert rep.counts["test"][1] == 2 and rep.counts["test_class"][1] == 2
    ours, published, ok = rep.rows[0].cells["test"]
    assert published == 1.32 and ok == match(
        (ours, _sd([r["test"]["squared_error_percentage"] for r in res.records
                    if r["problem"] == "cancer1"]), 4), (1.32, 0.13, 60))
    assert "cancer2" in rep.missing
    assert repr(rep).startswith("Reproduction('noshortcut', 2 files; test error ")
    text = rep.to_text()
    assert text.splitlines()[0].startswith("file") and "matching" in text
    assert "| cancer1 | 4 |" in rep.to_markdown()


def _sd(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def test_rule_readings_name_their_presets(proben1_root):
    from fastnet.datasets import load_proben1

    ds = load_proben1("cancer1", proben1_root)
    assert build_network("pivot", ds)[1] == "proben1-multilayer"
    assert build_network("pivot", ds, "literal")[1] == "proben1-multilayer-literal"
    assert build_network("linear", ds, "literal")[1] == "proben1-linear"
    assert PRESETS["proben1-multilayer"]["eta_plus"] == 1.2
    assert PRESETS["proben1-multilayer"]["init_scale"] == 0.2
    assert PRESETS["proben1-multilayer-literal"]["eta_plus"] == 1.1
    assert proben1_stopping("multilayer").name == "(GL2 or P<0.1 or max_epochs)"
    assert proben1_stopping("multilayer-literal").name == \
        "(P<0.1 or max_epochs or (ever GL5 and ever UP8 and ever PQ3))"
    with pytest.raises(ValueError, match="`rule`"):
        Experiment(problems=["cancer1"], rule="loose")


def test_literal_rule_from_the_command_line(proben1_root, tmp_path, capsys):
    out = tmp_path / "lit.jsonl"
    assert cli.main(["bench", "-p", "cancer1", "-n", "pivot", "-r", "2", "--rule", "literal",
                     "--max-epochs", "50", "--data", str(proben1_root), "-o", str(out),
                     "-q"]) == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["identity"]["multilayer_rule"] == "literal"
    cell = header["checklist"]["cancer1/pivot"]
    assert cell["preset"] == "proben1-multilayer-literal"
    assert "ever GL5 and ever UP8 and ever PQ3" in cell["stopping"]
    # a file of one reading is not resumed with the other
    assert cli.main(["bench", "-p", "cancer1", "-n", "pivot", "-r", "2", "--max-epochs", "50",
                     "--data", str(proben1_root), "-o", str(out), "-q"]) == 1
    assert "different set-up" in capsys.readouterr().err


def test_pivot_comparison_from_python_and_the_command_line(proben1_root, tmp_path, capsys):
    out = tmp_path / "pivot.jsonl"
    assert cli.main(["reproduce", "proben1", "pivot", "-p", "cancer1", "building1", "-r", "3",
                     "--data", str(proben1_root), "-o", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "Beside Prechelt's (1994) published means (Tables 8-9)" in text
    comparison = text.split("Beside Prechelt's")[1]
    rows = [line for line in comparison.splitlines() if line.startswith(("cancer1 ", "building1 "))]
    assert len(rows) == 2 and "/1.60" in rows[0] and "/1.70" in rows[1]
    assert re.search(r"^matching\s+\d/2", comparison, re.M)
    rep = compare_with_published(out)                  # the file's only network: pivot
    assert rep.networks == "pivot" and [r.problem for r in rep.rows] == ["cancer1", "building1"]
    assert rep.counts["test"][1] == 2 and rep.counts["test_class"] == (rep.counts["test_class"][0], 1)
    ours, published, ok = rep.rows[0].cells["test"]
    tests = [r["test"]["squared_error_percentage"] for r in json_records(out, "cancer1")]
    assert published == 1.60 and ok == match((ours, _sd(tests), 3), (1.60, 0.41, 60))
    assert ours == pytest.approx(sum(tests) / 3, rel=1e-12)


def test_a_file_of_pivot_and_noshortcut_runs_needs_networks(proben1_root, tmp_path):
    exp = Experiment(problems=["cancer1"], networks=["pivot", "noshortcut"], runs=2,
                     options={"max_epochs": 30}, root=proben1_root)
    res = run_experiment(exp, tmp_path / "both.jsonl")
    with pytest.raises(ValueError, match=r"runs of \['noshortcut', 'pivot'\] published network "
                                         r"kinds; pass `networks`"):
        compare_with_published(res)
    piv, nos = compare_with_published(res, "pivot"), compare_with_published(res, "noshortcut")
    assert piv.rows[0].cells["test"][1] == 1.60 and nos.rows[0].cells["test"][1] == 1.32
    assert piv.rows[0].cells["test"][0] != nos.rows[0].cells["test"][0]


def json_records(path, problem):
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    return [r for r in lines if r.get("problem") == problem]
