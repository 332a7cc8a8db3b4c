"""Algorithms as a dimension of an experiment: problems x networks x algorithms x runs.

The default algorithm (rprop+, Proben1's presets) keeps its records, seeds and headers as
before algorithms existed, so old files resume; every other algorithm's runs carry it in
their record and seed, extend a file, and appear in reports and comparisons.
"""
import csv
import io
import json

import numpy as np
import pytest

from fastnet import cli, train, train_rprop
from fastnet.algorithms import Backprop, from_spec
from fastnet.experiment import (
    MIXED_BLOCK, Experiment, ResultFileError, build_network, read_results, run_experiment, run_seed,
    strip_timing, training_arguments,
)
from fastnet.datasets import load_proben1
# (how the runner turns an algorithm's text into trainer arguments: no public face)
from fastnet.experiment._protocol import algorithm_arguments
from fastnet.report import compare, summarize, timing_summary
from fastnet.stopping import MaxEpochs
from _extras import needs

BP = "backprop(learning_rate=0.0005, momentum=0.5)"


def _exp(root, **kw):
    args = dict(problems=("cancer1",), networks=("linear",), runs=2, seed=3,
                options={"max_epochs": 50}, root=str(root))
    args.update(kw)
    return Experiment(**args)


def test_algorithms_are_canonical_and_checked(proben1_root):
    exp = _exp(proben1_root, algorithms=("rprop+", "backprop(momentum=0.5, learning_rate=0.0005)",
                                         Backprop(learning_rate=0.0005, momentum=0.5)))
    assert exp.algorithms == ("rprop+", BP)
    assert exp.run_keys()[:3] == [("cancer1", "linear", 0, "rprop+"),
                                  ("cancer1", "linear", 1, "rprop+"),
                                  ("cancer1", "linear", 0, BP)]
    assert _exp(proben1_root).algorithms == ("rprop+",)
    grid = _exp(proben1_root, algorithms=("backprop(learning_rate=[0.1, 0.2], momentum=0.5)",))
    assert grid.algorithms == ("backprop(learning_rate=0.1, momentum=0.5)",
                               "backprop(learning_rate=0.2, momentum=0.5)")
    with pytest.raises(ValueError, match="`algorithm` must name one of"):
        _exp(proben1_root, algorithms=("nope",))
    with pytest.raises(ValueError, match="`algorithms` must name at least one"):
        _exp(proben1_root, algorithms=())
    with pytest.raises(ValueError, match=r"x 2 algorithms \(grid cells, counted before any is "
                                         r"made\) x 10000 runs"):
        _exp(proben1_root, problems=("cancer",), networks=("linear", "pivot"), runs=10_000,
             algorithms=("rprop+", BP))


def test_seeds_of_the_default_algorithm_are_as_before():
    assert run_seed(0, "cancer1", "linear", 3).spawn_key == run_seed(
        0, "cancer1", "linear", 3, "rprop+").spawn_key
    assert len(run_seed(0, "cancer1", "linear", 3).spawn_key) == 3
    other = run_seed(0, "cancer1", "linear", 3, BP)
    assert other.spawn_key[:3] == run_seed(0, "cancer1", "linear", 3).spawn_key
    assert len(other.spawn_key) == 4
    assert other.spawn_key[3] != run_seed(0, "cancer1", "linear", 3, "irprop+").spawn_key[3]


def test_default_experiment_writes_what_it_wrote_before(proben1_root, tmp_path):
    res = run_experiment(_exp(proben1_root), tmp_path / "a.jsonl")
    header = read_results(tmp_path / "a.jsonl").header
    assert "algorithms" not in header["grid"] and "algorithm_setups" not in header
    assert all("algorithm" not in r for r in res.records)
    # and the default's runs equal train_rprop with the preset, as before
    ds = load_proben1("cancer1", str(proben1_root))
    net, preset = build_network("linear", ds)
    r = res.records[1]
    one = train_rprop(net, *ds.train, *ds.val, X_test=ds.test[0], Y_test=ds.test[1],
                      seed=run_seed(3, "cancer1", "linear", 1),
                      **training_arguments(preset, {"max_epochs": 50}))
    assert r["epochs"] == one.epochs
    assert r["test"]["squared_error_percentage"] == pytest.approx(
        one.final_test.squared_error_percentage, rel=1e-10)


def test_another_algorithm_extends_a_file_and_trains_as_train(proben1_root, tmp_path):
    path = tmp_path / "a.jsonl"
    first = run_experiment(_exp(proben1_root), path)
    both = run_experiment(_exp(proben1_root, algorithms=("rprop+", BP)), path)
    assert both.n_resumed == 2 and both.n_new == 2
    old = [strip_timing(r) for r in first.records]
    assert [strip_timing(r) for r in both.records[:2]] == old
    rf = read_results(path)
    assert rf.header["grid"]["algorithms"] == ["rprop+", BP]
    assert rf.header["algorithm_setups"][BP]["parameters"]["learning_rate"] == 0.0005
    bp = [r for r in rf.records if r.get("algorithm") == BP]
    assert [r["run"] for r in bp] == [0, 1]
    # each run is fastnet.train of the run alone, seeded by its own identity
    ds = load_proben1("cancer1", str(proben1_root))
    net, preset = build_network("linear", ds)
    seed = run_seed(3, "cancer1", "linear", 1, BP)
    assert bp[1]["seed"]["spawn_key"] == [int(k) for k in seed.spawn_key]
    # (the preset's initial weights and strip, its stopping rule capped at 50 epochs)
    kw = dict(algorithm=from_spec(BP), init_scale=0.01, strip=5, max_epochs=50,
              stop=training_arguments(preset, {"max_epochs": 50})["stop"])
    assert isinstance(kw["stop"].criteria[-1], MaxEpochs)
    one = train(net, *ds.train, *ds.val, X_test=ds.test[0], Y_test=ds.test[1], seed=seed, **kw)
    # (batch backprop trains in the lanes: to rounding, as RPROP's records)
    assert bp[1]["epochs"] == one.epochs
    assert bp[1]["test"]["squared_error_percentage"] == pytest.approx(
        one.final_test.squared_error_percentage, rel=1e-10)
    # rerunning resumes everything; a batch size of 1 (one train call per run) gives
    # the same records to rounding
    again = run_experiment(_exp(proben1_root, algorithms=("rprop+", BP)), path)
    assert again.n_new == 0 and again.n_resumed == 4
    single = run_experiment(_exp(proben1_root, algorithms=(BP,)), tmp_path / "b.jsonl",
                            batch_size=1)
    for a, b in zip(single.records, bp, strict=True):
        assert (a["run"], a["epochs"]) == (b["run"], b["epochs"])
        for which in ("train", "val", "test"):
            assert a[which]["squared_error_percentage"] == pytest.approx(
                b[which]["squared_error_percentage"], rel=1e-10)


def test_a_lanes_algorithm_in_a_mixed_cell_trains_in_blocks(proben1_root, tmp_path):
    """Batch backpropagation on horse1/pivot trains "mixed" (runs handed on to the
    single-network kernels) in blocks of MIXED_BLOCK runs, as RPROP's: the records are
    the same bits in batches of 4 and resumed in the middle of a block."""
    exp = _exp(proben1_root, problems=("horse1",), networks=("pivot",),
               runs=MIXED_BLOCK + 2, options={"max_epochs": 100}, algorithms=(BP,))
    ref = run_experiment(exp, tmp_path / "ref.jsonl")
    assert {r["batch"]["method"] for r in ref.records} == {"mixed"}
    assert any(r["batch"]["handoffs"] for r in ref.records)
    want = [strip_timing(r) for r in ref.records]
    small = run_experiment(exp, tmp_path / "b4.jsonl", batch_size=4)
    assert [strip_timing(r) for r in small.records] == want
    lines = (tmp_path / "ref.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_bytes(b"".join(lines[:6]))
    resumed = run_experiment(exp, tmp_path / "cut.jsonl")
    assert (resumed.n_resumed, resumed.n_new) == (5, MIXED_BLOCK - 3)
    assert [strip_timing(r) for r in resumed.records] == want


def test_rprop_parameters_override_the_preset(proben1_root):
    kind, kw = algorithm_arguments("proben1-linear", {}, "irprop+(eta_plus=1.1)")
    assert kind == "rprop" and kw["variant"] == "irprop+" and kw["eta_plus"] == 1.1
    assert kw["preset"] == "proben1-linear" and "delta0" not in kw
    kind, kw = algorithm_arguments("proben1-linear", {"variant": "irprop-"}, "rprop+")
    assert kw == {"variant": "irprop-", "preset": "proben1-linear"}


def test_records_outside_the_algorithms_of_the_grid_are_refused(proben1_root, tmp_path):
    path = tmp_path / "a.jsonl"
    run_experiment(_exp(proben1_root, algorithms=("rprop+", BP)), path)
    lines = path.read_text().splitlines()
    rec = json.loads(lines[-1])
    rec["algorithm"] = "irprop+"
    path.write_text("\n".join(lines[:-1] + [json.dumps(rec)]) + "\n")
    with pytest.raises(ResultFileError, match=r"`algorithm` 'irprop\+' is not in the header's grid"):
        read_results(path)


def test_report_groups_by_algorithm_and_compare_within_one_file(proben1_root, tmp_path):
    needs("matplotlib")
    path = tmp_path / "a.jsonl"
    run_experiment(_exp(proben1_root, runs=3, algorithms=("rprop+", BP)), path)
    rep = summarize(path)
    assert [(r.network, r.algorithm, r.n_runs) for r in rep.rows] == [
        ("linear / rprop+", "rprop+", 3), (f"linear / {BP}", BP, 3)]
    text = rep.to_text()
    assert "algorithm" in text.splitlines()[3] and BP in text
    assert f"| {BP.replace('_', chr(92) + '_')} |" in rep.to_markdown()
    assert r"\begin{tabular}{lllr" in rep.to_latex()
    rows = list(csv.DictReader(io.StringIO(rep.to_csv())))
    assert [r["algorithm"] for r in rows] == ["rprop+", BP]
    page = rep.to_html(pictures=False)
    assert f"rprop+, {BP}" in page and f"<td class=\"txt\">{BP}</td>" in page
    timing = timing_summary(path).to_text().splitlines()
    end = timing[0].index("runs") + 3                            # aligned columns
    assert timing[2][end] == timing[3][end] == "3"
    assert not rep.incomplete

    cmp = compare([path], labels=["x"])
    assert cmp.labels == ("x:linear / rprop+", f"x:linear / {BP}")
    assert ("cancer1", *cmp.labels) in cmp.ttests
    out = list(csv.DictReader(io.StringIO(cmp.to_csv())))
    assert out[0]["a"] == "x:linear / rprop+" and out[0]["n_a"] == "3"
    assert float(out[0]["p_percent"]) == pytest.approx(100 * cmp.ttests[
        ("cancer1", *cmp.labels)].pvalue)
    latex = cmp.to_latex()
    assert r"learning\_rate" in latex and latex.count(r"\begin{table}") == 3
    page = cmp.to_html()
    assert "x:linear / rprop+" in page


def test_compare_pictures_show_the_labels(proben1_root, tmp_path, monkeypatch):
    needs("matplotlib")
    from fastnet import plots

    # two files of the default algorithm: the pictures name them by their labels
    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for seed, path in enumerate(paths):
        run_experiment(_exp(proben1_root, runs=4, seed=seed), path)
    seen = []
    real = plots.box_whiskers

    def spy(samples, **kw):
        seen.append(list(samples))
        return real(samples, **kw)

    monkeypatch.setattr(plots, "box_whiskers", spy)
    cmp = compare(paths, labels=["mine", "theirs"])
    cmp.to_html()
    cmp.plot(tmp_path / "pics")
    assert seen and all(keys == list(cmp.labels) for keys in seen)


def test_cli_bench_with_algorithms(proben1_root, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    argv = ["bench", "-p", "cancer1", "-n", "linear", "-r", "2", "--max-epochs", "50", "-o",
            str(out), "--data", str(proben1_root), "-a", "rprop+", BP]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert "2 algorithms x 2 runs" in err
    assert read_results(out).header["grid"]["algorithms"] == ["rprop+", BP]
    assert cli.main(["compare", str(out), "-f", "csv"]) == 0
    assert "linear / rprop+" in capsys.readouterr().out
    assert cli.main(["report", str(out)]) == 0
    assert BP in capsys.readouterr().out
    assert cli.main(argv[:-3] + ["-a", "backprop(rate=1)"]) == 1
    assert "backprop has no such parameter" in capsys.readouterr().err
    np.testing.assert_equal(len(read_results(out).records), 4)


def test_reproduction_compares_the_rprop_runs_of_a_file_of_several_algorithms(proben1_root,
                                                                             tmp_path):
    from fastnet.reproduction import compare_with_published

    path = tmp_path / "a.jsonl"
    run_experiment(_exp(proben1_root, algorithms=("rprop+", BP)), path)
    rep = compare_with_published(path, "linear")
    assert [(r.problem, r.n_runs) for r in rep.rows] == [("cancer1", 2)]


def test_compare_csv_and_latex_hold_the_tests_over_problems(proben1_root, tmp_path):
    path = tmp_path / "a.jsonl"
    run_experiment(_exp(proben1_root, problems=("cancer1", "glass1"), runs=3,
                        keep_predictions=True, algorithms=("rprop+", BP)), path)
    cmp = compare([path], labels=["f"])
    rows = list(csv.DictReader(io.StringIO(cmp.to_csv())))
    over = {r["problem"]: r for r in rows if r["problem"].startswith("over problems")}
    assert set(over) == {"over problems: sign test", "over problems: Wilcoxon test",
                         "over problems: Lacoste Poisson binomial test"}
    sign = over["over problems: sign test"]
    assert (sign["a"], sign["b"], sign["n_a"]) == (*cmp.labels, "2")
    assert float(sign["p_percent"]) == pytest.approx(100 * cmp.sign.pvalue[0, 1])
    lac = over["over problems: Lacoste Poisson binomial test"]
    assert lac["better"] == (cmp.labels[0] if cmp.lacoste.matrix[0, 1] > 0.5 else cmp.labels[1])
    assert f"= {cmp.lacoste.matrix[0, 1]:.4g}" in lac["note"]
    latex = cmp.to_latex()
    # legend, effects, means, sign and Wilcoxon in one table (with the too-few sentence),
    # Lacoste
    assert latex.count(r"\begin{table}") == 5 and "Poisson binomial test" in latex
    assert "sign test p & Wilcoxon p" in latex and "Too few problems: on 2 problems" in latex
