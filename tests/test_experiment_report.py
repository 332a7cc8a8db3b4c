"""Reports and comparisons from result files."""
import csv
import dataclasses
import html
import io
import json
import re

import numpy as np
import pytest

from _result_files import rename_problem, rewrite
from fastnet import cli
from fastnet.experiment import Experiment, ResultFileError, read_results, run_experiment
from fastnet.report import compare, summarize, timing_summary
from _extras import needs


@pytest.fixture(scope="module")
def results(proben1_root, tmp_path_factory):
    """Two small result files with predictions: rprop+ and irprop-, linear and pivot nets."""
    d = tmp_path_factory.mktemp("report")
    paths = []
    for name, options in (("plus", {"max_epochs": 150}),
                          ("iminus", {"max_epochs": 150, "variant": "irprop-"})):
        path = d / f"{name}.jsonl"
        run_experiment(Experiment(problems=("cancer1", "building1"), networks=("linear", "pivot"),
                                  runs=4, seed=1, options=options, keep_predictions=True,
                                  root=str(proben1_root)), path)
        paths.append(path)
    return paths


def _runs(path, problem, network):
    return [r for r in read_results(path).records
            if r["problem"] == problem and r["network"] == network]


def test_summary_columns_match_the_records(results):
    rep = summarize(results[0])
    assert [(r.problem, r.network) for r in rep.rows] == [
        ("cancer1", "linear"), ("cancer1", "pivot"), ("building1", "linear"),
        ("building1", "pivot")]
    runs = _runs(results[0], "cancer1", "pivot")
    row = rep.rows[1]
    test = np.array([r["test"]["squared_error_percentage"] for r in runs])
    val = np.array([r["val"]["squared_error_percentage"] for r in runs])
    assert row.n_runs == 4 and row.architecture == "4+2 l" and row.n_connections == 100
    assert row.test_mean == pytest.approx(test.mean())
    assert row.test_std == pytest.approx(test.std(ddof=1))
    assert row.corr_val_test == pytest.approx(np.corrcoef(val, test)[0, 1])
    assert row.best_run == int(np.argmin(val)) and row.best_test == test[np.argmin(val)]
    s = np.sort(test)  # n = 4: quartiles are medians of the halves
    assert (row.test_min, row.test_q1, row.test_median, row.test_q3, row.test_max) == \
        pytest.approx((s[0], (s[0] + s[1]) / 2, (s[1] + s[2]) / 2, (s[2] + s[3]) / 2, s[3]))
    assert row.epochs_mean == pytest.approx(np.mean([r["epochs"] for r in runs]))
    assert row.test_class_mean is not None
    assert rep.rows[2].test_class_mean is None  # building is an approximation problem


def test_exclude_exactly_the_worst_half(results):
    rep = summarize(results[0], exclude="worst-half")
    runs = _runs(results[0], "cancer1", "pivot")
    kept = sorted(runs, key=lambda r: r["val"]["squared_error_percentage"])[:2]
    row = rep.rows[1]
    assert (row.n_runs, row.n_excluded) == (2, 2)
    assert row.test_mean == pytest.approx(np.mean([r["test"]["squared_error_percentage"]
                                                   for r in kept]))
    with pytest.raises(ValueError, match="`exclude` must be None or one of"):
        summarize(results[0], exclude="outliers")


def test_exclusion_needs_an_even_count(results, tmp_path):
    lines = results[0].read_text().splitlines()
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines[:4]) + "\n")  # header + 3 runs of cancer1/linear
    with pytest.raises(ValueError, match="odd number"):
        summarize(path, exclude="worst-half")


def test_formats(results):
    rep = summarize(results[0])
    text = rep.to_text()
    assert "training" in text and "relevant epochs" in text and "best run (by validation)" in text
    md = rep.to_markdown()
    assert md.count("| cancer1 |") == 4 and "|:---|" in md
    tex = rep.to_latex()
    assert tex.count(r"\begin{tabular}") == 2 and r"\multicolumn{2}{c}{training}" in tex
    rows = list(csv.DictReader(io.StringIO(rep.to_csv())))
    assert len(rows) == 4 and float(rows[1]["test_mean"]) == rep.rows[1].test_mean
    assert rows[2]["test_class_mean"] == ""


def test_dataframe(results):
    pd = needs("pandas")
    df = summarize(results[0]).to_dataframe()
    assert isinstance(df, pd.DataFrame) and df.shape[0] == 4
    assert {"test_mean", "test_std", "corr_val_test", "traversals_per_cpu_second"} <= set(df.columns)


def test_timing_summary(results):
    t = timing_summary(results[0])
    recs = read_results(results[0]).records
    assert t.total.n_runs == 16
    assert t.total.traversals["total"] == sum(r["traversals"]["total"] for r in recs)
    assert t.total.cpu_time == pytest.approx(sum(r["cpu_time"] for r in recs))
    text = t.to_text()
    assert "machine:" in text and "trav./CPU s" in text


def test_compare_files(results, tmp_path):
    cmp = compare(results)
    assert cmp.labels == ("plus:linear", "plus:pivot", "iminus:linear", "iminus:pivot")
    assert cmp.problems == ("cancer1", "building1")
    assert len(cmp.ttests) == 2 * 6
    assert cmp.sign is not None and cmp.wilcoxon is not None
    assert cmp.lacoste is not None and cmp.lacoste_problems == ("cancer1",)
    m = cmp.lacoste.matrix
    assert np.allclose(m + m.T, 1.0)
    text = cmp.to_text()
    assert "A vs B" in text and "Poisson binomial" in text and "Wilcoxon" in text
    needs("matplotlib")
    paths = cmp.plot(tmp_path / "pics")
    assert {p.name for p in paths} == {"cancer1-box.png", "cancer1-extended-box.png",
                                       "building1-box.png", "building1-extended-box.png"}
    assert all(p.stat().st_size > 0 for p in paths)


def test_compare_classification_measure_leaves_out_approximation(results):
    cmp = compare(results, labels=["P", "I"], measure="classification")
    assert cmp.problems == ("cancer1",) and cmp.labels[0] == "P:linear"
    assert any("building1" in n for n in cmp.notes)


def test_compare_needs_two_sets(results, tmp_path):
    lines = results[0].read_text().splitlines()
    one = tmp_path / "one.jsonl"
    one.write_text("\n".join([lines[0]] + [x for x in lines[1:]
                                           if json.loads(x)["network"] == "linear"]) + "\n")
    with pytest.raises(ValueError, match="at least two result sets"):
        compare([one])


def test_report_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        summarize(tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    with pytest.raises(ResultFileError, match="bad.jsonl:1"):
        summarize(bad)


def test_dataframes_have_flat_columns(results):
    pd = needs("pandas")
    rf = read_results(results[0])
    df = rf.to_dataframe()
    assert len(df) == len(rf.records)
    for col in ("problem", "network", "run", "test.squared_error_percentage",
                "traversals.total", "batch.method", "epochs"):
        assert col in df.columns
    assert not any(isinstance(v, dict) for v in df.iloc[0].tolist())
    assert df["test.squared_error_percentage"].tolist() == [
        r["test"]["squared_error_percentage"] for r in rf.records]
    cmp = compare(results)
    cdf = cmp.to_dataframe()
    assert isinstance(cdf, pd.DataFrame) and len(cdf) == len(cmp.ttests)
    row = cdf.iloc[0]
    test = cmp.ttests[(row["problem"], row["a"], row["b"])]
    if isinstance(test, str):
        assert row["note"] == test
    else:
        assert row["pvalue"] == test.pvalue and row["better"] == test.better


# --------------------------------------------------------------------------- hostile names
# Names come from the result file; a report or comparison must render them as text and
# write pictures only into the directory given.

EVIL = "<script>alert(1)</script>|=HYPERLINK(\"http://x\")"


def test_markdown_escapes_html_and_pipes(results, tmp_path):
    path = rename_problem(results[0], tmp_path / "evil.jsonl", "cancer1", EVIL)
    md = summarize(path).to_markdown()
    assert "<script>" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert r"\|=HYPERLINK" in md
    # every table row keeps its column count: no unescaped | inside a cell
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    counts = {len(re.split(r"(?<!\\)\|", line)) for line in rows[:5]}  # head, 4 rows
    assert len(counts) == 1


def test_csv_quotes_formula_text_but_not_numbers(results, tmp_path):
    path = rename_problem(results[0], tmp_path / "evil.jsonl", "cancer1", "=HYPERLINK(\"http://x\")")
    rep = summarize(path)
    rows = list(csv.DictReader(io.StringIO(rep.to_csv())))
    assert rows[0]["problem"] == "'=HYPERLINK(\"http://x\")"
    for start in "+-@\t\r":
        row = dataclasses.replace(rep.rows[0], problem=start + "cmd", network="@net",
                                  corr_val_test=-0.5)
        got = next(csv.DictReader(io.StringIO(dataclasses.replace(rep, rows=(row,)).to_csv())))
        assert got["problem"] == "'" + start.replace("\r", " ") + "cmd"  # CSV lines stay lines
        assert got["network"] == "'@net"
        assert got["corr_val_test"] == "-0.5"  # a number stays a number


def test_latex_escapes_every_special_character(results):
    rep = summarize(results[0])
    row = dataclasses.replace(rep.rows[0], problem=r"a$b{c}^~\input{x}&%#_")
    tex = dataclasses.replace(rep, rows=(row,)).to_latex()
    assert (r"a\$b\{c\}\textasciicircum{}\textasciitilde{}\textbackslash{}input\{x\}\&\%\#\_"
            in tex)


@pytest.mark.parametrize("name", ["../../outside", "/abs/outside", "..", ""])
def test_compare_plot_writes_only_into_its_directory(results, tmp_path, name):
    needs("matplotlib")
    if name.startswith("/"):
        name = str(tmp_path / "abs" / "outside")
        (tmp_path / "abs").mkdir()
    (tmp_path / "a" / "b").mkdir(parents=True)
    files = [rename_problem(p, tmp_path / f"{k}.jsonl", "cancer1", name or "x\x7f")
             for k, p in enumerate(results)]
    if not name:
        with pytest.raises(ResultFileError, match=r"0\.jsonl:1: header: `grid.problems\[0\]`"):
            compare(files)
        return
    pics = tmp_path / "a" / "b" / "pics"
    paths = compare(files).plot(pics)
    assert len(paths) == 4 and all(p.parent == pics and p.is_file() for p in paths)
    assert {p.name for p in pics.iterdir()} == {p.name for p in paths}
    if name.startswith("/"):
        assert not list((tmp_path / "abs").glob("*"))
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted(
        ["0.jsonl", "1.jsonl", "a"] + (["abs"] if "abs" in name else []))


def test_compare_plot_names_collide_and_links_are_refused(results, tmp_path):
    needs("matplotlib")
    files = [rename_problem(rename_problem(p, tmp_path / f"{k}.jsonl", "cancer1", "a/b"),
                            tmp_path / f"{k}.jsonl", "building1", "a_b")
             for k, p in enumerate(results)]
    pics = tmp_path / "pics"
    names = sorted(p.name for p in compare(files).plot(pics))
    assert names == ["a_b-2-box.png", "a_b-2-extended-box.png", "a_b-box.png",
                     "a_b-extended-box.png"]
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (pics / "a_b-box.png").unlink()
    (pics / "a_b-box.png").symlink_to(victim)
    with pytest.raises(ValueError, match="`directory`: the picture .* would be written to .*victim"):
        compare(files).plot(pics)
    assert victim.read_text() == "keep"


def test_cli_compare_plot_stays_in_its_directory(results, tmp_path, capsys):
    needs("matplotlib")
    files = [rename_problem(p, tmp_path / f"{k}.jsonl", "cancer1", "../../../escaped")
             for k, p in enumerate(results)]
    pics = tmp_path / "a" / "b" / "pics"  # pics/../../../escaped would be in tmp_path
    assert cli.main(["compare", *map(str, files), "--plot", str(pics)]) == 0
    assert "4 pictures written" in capsys.readouterr().out
    assert not list(tmp_path.glob("escaped*"))
    assert {p.name for p in pics.iterdir()} >= {"_escaped-box.png"}


# --------------------------------------------------------------------------- incomplete files

def test_a_truncated_file_says_which_cells_lack_runs(results, tmp_path):
    lines = results[0].read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    keep = [x for x in lines[1:] if json.loads(x)["problem"] == "cancer1"]
    drop = [json.loads(x) for x in keep if json.loads(x)["network"] == "pivot"]
    keep = [x for x in keep if json.loads(x)["network"] == "linear"
            or json.loads(x)["run"] in (0, 2)]
    assert len(drop) == 4
    path.write_text("\n".join([lines[0]] + keep) + "\n")
    rep = summarize(path)
    assert rep.incomplete == {("cancer1", "pivot"): (range(1, 2), range(3, 4)),
                              ("building1", "linear"): (range(0, 4),),
                              ("building1", "pivot"): (range(0, 4),)}
    line = ("Incomplete: the file's set-up asks for 4 runs per problem and network, but "
            "cancer1/pivot has 2 of 4 runs (missing 1, 3); building1/linear has 0 of 4 runs; "
            "building1/pivot has 0 of 4 runs.")
    assert rep.incomplete_note().startswith(line)
    assert rep.to_text().startswith(line)
    assert rep.to_markdown().startswith("> **" + line)
    assert rep.to_latex().startswith("% " + line)
    assert f'<p class="warn" id="incomplete" role="note">{html.escape(line)}' in \
        summarize(path).to_html(pictures=False)
    assert [r.n_runs for r in rep.rows] == [4, 2]
    cmp = compare([path, results[1]])
    assert any(n.startswith("cut.jsonl: " + line) for n in cmp.notes)
    assert summarize(results[0]).incomplete == {}


def test_missing_runs_of_a_file(results, tmp_path):
    rf = read_results(results[0])
    assert rf.missing_runs() == {}
    path = rewrite(results[0], tmp_path / "more.jsonl",
                   header=lambda h: h["grid"].update(runs=10 ** 18))
    missing = read_results(path).missing_runs()
    assert missing[("cancer1", "linear")] == (range(4, 10 ** 18),) and len(missing) == 4
    assert "has 4 of 1000000000000000000 runs (missing 4-999999999999999999)" in \
        summarize(path).incomplete_note()


def test_compare_prints_effects_p_values_and_too_few_problems(results):
    from scipy import stats

    cmp = compare(results)
    a, b = cmp.labels[:2]
    text = cmp.to_text()
    for p in cmp.problems:
        t = cmp.ttests[(p, a, b)]
        if t.sample_a.n_removed or t.sample_b.n_removed:
            continue
        # the interval and p-value of Welch's test on the log errors, recomputed here
        x, y = np.log(cmp.samples[a][p]), np.log(cmp.samples[b][p])
        w = stats.ttest_ind(x, y, equal_var=False)
        ci = w.confidence_interval(0.95)
        e = cmp.effect(p, a, b)
        assert (e["difference"], e["low"], e["high"], e["welch_pvalue"]) == pytest.approx(
            (x.mean() - y.mean(), ci.low, ci.high, w.pvalue))
        assert e["ratio"] == pytest.approx(np.exp(x.mean()) / np.exp(y.mean()))
        assert f"95 % CI {e['ratio_low']:.3g} to {e['ratio_high']:.3g}" in cmp.verdict(p, a, b) \
            or t.significant
        assert f"p = {t.pvalue:.2g}" in cmp.verdict(p, a, b) or t.pvalue < 1e-4
    # two problems: the tests over problems are said never to reach 5 %
    assert "Too few problems: on 2 problems" in text and "at least 6 problems" in text
    # means with standard deviations and n
    m = cmp.samples[a]["cancer1"]
    assert f"{m.mean():.3f} ± {m.std(ddof=1):.3f} (4)" in text
    assert "1 - p" not in text and "where row wins" not in text
    rows = list(csv.DictReader(io.StringIO(cmp.to_csv())))
    first = cmp.effect(cmp.problems[0], a, b)
    assert float(rows[0]["ci_low"]) == first["low"] and float(rows[0]["std_a"]) > 0


def _comparison(samples, probs):
    """The comparison of two labels A and B over ``probs``, built from their samples;
    and the table of their mean errors (A's row, B's row)."""
    from fastnet.report import Comparison
    from fastnet.stats import compare_errors, pairwise_table

    means = np.array([[samples[k][p].mean() for p in probs] for k in "AB"])
    cmp = Comparison(labels=("A", "B"), sources=(("a.jsonl", "n"), ("b.jsonl", "n")),
                     problems=probs, measure="squared", samples=samples,
                     ttests={(p, "A", "B"): compare_errors(samples["A"][p], samples["B"][p],
                                                            names=("A", "B")) for p in probs},
                     sign=pairwise_table(means, names="AB", method="sign"),
                     wilcoxon=pairwise_table(means, names="AB", method="wilcoxon"),
                     lacoste=None, lacoste_problems=(), notes=())
    return cmp, means


def test_compare_over_problems_with_enough_problems():
    """Six problems on which A is always lower: the sign test reaches 2/64 < 5 %."""
    rng = np.random.default_rng(0)
    probs = tuple(f"p{i}" for i in range(6))
    samples = {"A": {p: np.exp(rng.normal(0, 0.1, 8)) for p in probs},
               "B": {p: np.exp(rng.normal(0.5, 0.1, 8)) for p in probs}}
    cmp, _ = _comparison(samples, probs)
    over = cmp.over_problems()
    assert over == ["A vs B: A lower on 6, B lower on 0, tied on 0 of 6 problems; sign test "
                    "p = 0.031, Wilcoxon signed-rank p = 0.031: A better (both tests, at 5 %)."]
    assert cmp.verdict("p0", "A", "B").startswith("A better than B: A's errors 0.")


def test_compare_one_file_labels_carry_no_file_name(results):
    cmp = compare([results[0]])
    assert cmp.labels == ("linear", "pivot")
    assert compare([results[0]], labels=["x"]).labels == ("x:linear", "x:pivot")


def test_compare_over_problems_says_which_test_alone_is_significant():
    """Eight problems: A lower on seven by a little, B lower on one by a lot. The sign test
    (7 of 8: p = 0.07) is not significant; the Wilcoxon test (B's one win has rank 1 of
    8 when it is the smallest difference) is, p = 2 * 2/256."""
    from fastnet.stats import sign_test, wilcoxon_test

    probs = tuple(f"p{i}" for i in range(8))
    base = np.linspace(1.0, 2.0, 8)
    shift = np.array([0.01, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])  # A - B: B wins p0 only
    samples = {"A": {}, "B": {}}
    for p, m, d in zip(probs, base, shift):
        noise = np.array([-0.01, 0.0, 0.01])
        samples["B"][p] = m + noise
        samples["A"][p] = (m + d if p == "p0" else m - d) + noise
    cmp, means = _comparison(samples, probs)
    ps, pw = sign_test(means[0], means[1]).pvalue, wilcoxon_test(means[0], means[1]).pvalue
    assert ps > 0.05 > pw
    (line,) = cmp.over_problems()
    assert line.endswith("A better by the Wilcoxon test only (at 5 %).")
    assert "A lower on 7, B lower on 1" in line
