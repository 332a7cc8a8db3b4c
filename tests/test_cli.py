"""Smoke tests of the ``fastnet`` command line: every subcommand, its --help and its errors."""
import json
import re

import pytest

from fastnet import cli
# (the progress interval and the command functions: no public face)
from fastnet.cli import _commands, _progress
from _extras import needs

SUBCOMMANDS = [["datasets"], ["datasets", "list"], ["datasets", "fetch"], ["train"], ["bench"],
               ["report"], ["demo"], ["compare"], ["reproduce"], ["reproduce", "proben1"],
               ["study"]]


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """A data directory without Proben1 files, and no other place to find them."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("FASTNET_DATA", str(empty))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return empty


@pytest.fixture
def bench_file(proben1_root, tmp_path):
    path = tmp_path / "bench.jsonl"
    status = cli.main(["bench", "-p", "cancer1", "-n", "linear", "pivot", "-r", "2",
                       "--max-epochs", "100", "--keep-predictions", "--data", str(proben1_root),
                       "-o", str(path), "-q"])
    assert status == 0
    return path


def test_no_command_prints_usage(capsys):
    assert cli.main([]) == 2
    assert "usage: fastnet" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", SUBCOMMANDS, ids=" ".join)
def test_help_of_every_subcommand(cmd, capsys):
    assert cli.main(cmd + ["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: fastnet " + " ".join(cmd))


def test_usage_error(capsys):
    assert cli.main(["bench", "-p", "cancer1", "-o", "x.jsonl", "--runs", "0"]) == 2
    assert "expected an integer from 1 to 10000" in capsys.readouterr().err


def test_datasets_list(proben1_root, capsys):
    assert cli.main(["datasets", "list", "--data", str(proben1_root)]) == 0
    out = capsys.readouterr().out
    assert "15 of 15 problems present" in out and "cancer" in out


def test_datasets_list_without_data(no_data, capsys):
    assert cli.main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert "0 of 15 problems present" in out and "fastnet datasets fetch" in out


def test_datasets_fetch_error(tmp_path, capsys):
    status = cli.main(["datasets", "fetch", "--url", (tmp_path / "none.tar.gz").as_uri(),
                       "--dest", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert status == 1 and err.startswith("fastnet: error:") and "Traceback" not in err


def test_train(proben1_root, capsys):
    assert cli.main(["train", "cancer1", "--data", str(proben1_root), "--network", "linear",
                     "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "stopped by" in out and "traversals: forward" in out and "set-up:" in out
    assert "RPROP (rprop+)" in out and "traversals per CPU second" in out


@pytest.mark.parametrize("spec, words", [
    ("scg", "scaled conjugate gradient"),
    ("lm(damping='diagonal')", "normal equations"),
    ("irprop+(eta_plus=1.1)", "RPROP (irprop+)"),
])
def test_train_with_algorithm(proben1_root, capsys, spec, words):
    argv = ["train", "cancer1", "--data", str(proben1_root), "--network", "2+0 l", "-q",
            "--max-epochs", "20"]
    assert cli.main(argv + ["-a", spec]) == 0
    out = capsys.readouterr().out
    assert words in out and "stopped by" in out


def test_train_algorithm_rprop_keeps_the_presets_other_parameters(proben1_root, capsys):
    argv = ["train", "cancer1", "--data", str(proben1_root), "--network", "2+0 l", "-q",
            "--max-epochs", "20"]
    assert cli.main(argv + ["--variant", "irprop+"]) == 0
    by_variant = capsys.readouterr().out
    assert cli.main(argv + ["--algorithm", "irprop+"]) == 0
    by_algorithm = capsys.readouterr().out
    assert [line for line in by_variant.splitlines() if "CPU time" not in line] == \
        [line for line in by_algorithm.splitlines() if "CPU time" not in line]


@pytest.mark.parametrize("extra, match", [
    (["-a", "newton"], r"`--algorithm` must name one of \[.*'lbfgs', 'lm'.*got 'newton'"),
    (["-a", "lm(mu_dec=2)"], r"`--algorithm` 'lm\(mu_dec=2\)': `mu_dec` must be in"),
    (["-a", "scg(1)"], r"`--algorithm` parameters must be name=value pairs"),
    (["-a", "rprop-", "--variant", "irprop+"], r"`--algorithm` 'rprop-' and `--variant`"),
])
def test_train_algorithm_errors_name_the_option(proben1_root, capsys, extra, match):
    assert cli.main(["train", "cancer1", "--data", str(proben1_root)] + extra) == 1
    err = capsys.readouterr().err
    assert re.search(match, err) and "Traceback" not in err


def test_train_shows_progress_without_changing_the_run(proben1_root, capsys, monkeypatch):
    argv = ["train", "cancer1", "--data", str(proben1_root), "--network", "2+0 l", "--seed", "3"]
    assert cli.main(argv + ["--quiet"]) == 0
    quiet = capsys.readouterr()
    monkeypatch.setattr(_progress, "PROGRESS_INTERVAL", 0.0)   # a line at every strip end
    assert cli.main(argv) == 0
    shown = capsys.readouterr()
    assert quiet.err == ""
    lines = shown.err.splitlines()
    assert len(lines) >= 2 and all(line.startswith("epoch ") for line in lines)
    assert lines[0].startswith("epoch 5/3000  E_tr ") and " E_va " in lines[0] and " GL " in lines[0]
    # the same run: everything but the timing lines is equal
    untimed = [line for line in shown.out.splitlines() if "CPU time" not in line]
    assert untimed == [line for line in quiet.out.splitlines() if "CPU time" not in line]


def test_train_unknown_problem(proben1_root, capsys):
    assert cli.main(["train", "cancer7", "--data", str(proben1_root)]) == 1
    err = capsys.readouterr().err
    assert "permutations 1, 2 and 3" in err
    assert cli.main(["train", "nosuch1", "--data", str(proben1_root)]) == 1
    err = capsys.readouterr().err
    assert "valid problems are building, cancer, card" in err and "Traceback" not in err


def test_train_unknown_network(proben1_root, capsys):
    assert cli.main(["train", "cancer1", "--data", str(proben1_root), "-n", "big"]) == 1
    assert "neither one of linear, pivot, noshortcut" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", [["train", "cancer1"],
                                 ["bench", "-p", "cancer1", "-o", "{out}"],
                                 ["reproduce", "proben1", "linear", "-p", "cancer1", "-o", "{out}"]],
                         ids=lambda c: c[0])
def test_missing_data_says_how_to_fetch(cmd, no_data, tmp_path, capsys):
    cmd = [c.format(out=tmp_path / "r.jsonl") for c in cmd]
    assert cli.main(cmd) == 1
    err = capsys.readouterr().err
    assert "not found" in err and "fastnet datasets fetch" in err and "FASTNET_DATA" in err
    assert "Traceback" not in err


def test_bench_progress_timing_and_resume(proben1_root, tmp_path, capsys):
    path = tmp_path / "b.jsonl"
    args = ["bench", "-p", "cancer1", "-n", "linear", "-r", "3", "--data", str(proben1_root),
            "-o", str(path)]
    assert cli.main(args) == 0
    cap = capsys.readouterr()
    assert "[3/3]" in cap.err and "ETA" in cap.err and "median test E" in cap.err
    assert "3 new, 0 resumed" in cap.out
    assert "trav./CPU s" in cap.out and "CPU s/run" in cap.out and "machine:" in cap.out
    assert cli.main(args[:6] + ["5"] + args[7:]) == 0
    assert "2 new, 3 resumed" in capsys.readouterr().out
    # another set-up on the same file is a clear error
    assert cli.main(args + ["--seed", "9"]) == 1
    assert "different set-up" in capsys.readouterr().err


def test_report_formats(bench_file, capsys):
    assert cli.main(["report", str(bench_file)]) == 0
    out = capsys.readouterr().out
    assert "validation" in out and "cancer1" in out and "4+2 l" in out
    assert cli.main(["report", str(bench_file), "-f", "markdown", "--timing"]) == 0
    out = capsys.readouterr().out
    assert "| cancer1 |" in out and "trav./CPU s" in out
    assert cli.main(["report", str(bench_file), "-f", "csv"]) == 0
    assert capsys.readouterr().out.startswith("problem,network,")
    assert cli.main(["report", str(bench_file), "-f", "latex", "--exclude-worst-half"]) == 0
    out = capsys.readouterr().out
    assert r"\begin{tabular}" in out and "worst half" in out


@pytest.mark.parametrize("content, match", [
    ("", "empty"), ("garbage\n", "header is not valid JSON"),
    ('{"type": "header", "format": "csv"}\n', "not a fastnet result file")])
def test_report_malformed_file(tmp_path, capsys, content, match):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    assert cli.main(["report", str(path)]) == 1
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_report_corrupt_record_and_missing_file(bench_file, tmp_path, capsys):
    lines = bench_file.read_text().splitlines()
    lines[2] = lines[2][:30]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert cli.main(["report", str(bad)]) == 1
    assert "bad.jsonl:3" in capsys.readouterr().err
    assert cli.main(["report", str(tmp_path / "none.jsonl")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_report_partial_line_warns(bench_file, capsys):
    with open(bench_file, "a") as f:
        f.write('{"type": "run", "pro')
    assert cli.main(["report", str(bench_file)]) == 0
    assert "fastnet: warning:" in capsys.readouterr().err


def test_compare(bench_file, proben1_root, tmp_path, capsys):
    needs("matplotlib")
    other = tmp_path / "other.jsonl"
    assert cli.main(["bench", "-p", "cancer1", "-n", "linear", "pivot", "-r", "3",
                     "--max-epochs", "100", "--variant", "irprop-", "--keep-predictions",
                     "--data", str(proben1_root), "-o", str(other), "-q"]) == 0
    capsys.readouterr()
    pics = tmp_path / "pics"
    assert cli.main(["compare", str(bench_file), str(other), "--plot", str(pics)]) == 0
    out = capsys.readouterr().out
    assert "Verdicts per problem" in out and "A vs B" in out and "Poisson binomial" in out
    assert "pictures written" in out and (pics / "cancer1-box.png").is_file()


def test_compare_errors(bench_file, tmp_path, capsys):
    assert cli.main(["compare", str(bench_file), str(tmp_path / "none.jsonl")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert cli.main(["compare", str(bench_file), "--labels", "a", "b"]) == 1
    assert "`--labels` has 2 entries for 1 files" in capsys.readouterr().err


def test_reproduce_linear(proben1_root, tmp_path, capsys):
    out = tmp_path / "linear.jsonl"
    assert cli.main(["reproduce", "proben1", "linear", "-p", "cancer1", "glass1", "-r", "2",
                     "--data", str(proben1_root), "-o", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "Proben1 linear networks: 4 runs" in text
    assert "training" in text and "test set classif." in text and "0+0 l" in text
    # beside the published means of Tables 3-4, with the counts of matching files
    assert "Beside Prechelt's (1994) published means (Tables 3-4)" in text
    comparison = text.split("Beside Prechelt's")[1]
    rows = [line for line in comparison.splitlines() if line.startswith(("cancer1 ", "glass1 "))]
    assert len(rows) == 2 and all("/" in row for row in rows)
    assert re.search(r"^matching\s+\d/2", comparison, re.M)
    header = json.loads(out.read_text().splitlines()[0])
    assert header["checklist"]["cancer1/linear"]["preset"] == "proben1-linear"


def test_reproduce_pivot_unknown_problem(proben1_root, tmp_path, capsys):
    assert cli.main(["reproduce", "proben1", "pivot", "-p", "mushroom1", "--data",
                     str(proben1_root), "-o", str(tmp_path / "p.jsonl")]) == 1
    assert "no pivot architecture" in capsys.readouterr().err
    assert cli.main(["reproduce", "proben1", "huge"]) == 2


def test_demo(capsys):
    assert cli.main(["demo", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "fastnet demo: 3 small tasks, each trained 2 times from random weights with RPROP" in out
    # one row per generated task: how many runs reached the goal (at most all), the median
    # epochs to it, a test NMSE or '-', and a positive training speed
    rows = {line.split("  ")[0]: line.split()[-8:] for line in out.splitlines()
            if line.startswith(("XOR", "encoder", "teacher"))}
    assert len(rows) == 3
    for task, (reached, of, runs, _, epochs, test, _cpu, rate) in rows.items():
        assert (of, runs) == ("of", "2") and 0 <= int(reached) <= 2
        assert (epochs == "-" or float(epochs) >= 1) and float(rate) > 0
        assert (test == "-") == task.startswith(("XOR", "encoder"))
    assert "nan" not in out


def test_demo_is_a_library_function():
    from fastnet.demo import run_demo

    res = run_demo(runs=3, seed=1)
    assert [r.runs for r in res.rows] == [3, 3, 3]
    assert res.rows[0].median_test_nmse is None and res.rows[2].median_test_nmse > 0
    assert run_demo(runs=3, seed=1).rows[0].median_epochs == res.rows[0].median_epochs
    assert repr(res) == "DemoResult(3 tasks, 3 runs each, seed 1)"
    with pytest.raises(ValueError, match="`runs` must be >= 1"):
        run_demo(runs=0)


def test_demo_shows_success_and_explains_its_columns(capsys):
    # (issue 46, item 17: the demo printed XOR as "10 runs, stopped 4, median epochs 1000" and
    # the teacher task as "stopped 0, median epochs 2000", its columns unexplained)
    import time

    t0 = time.process_time()
    assert cli.main(["demo", "--quiet"]) == 0
    assert time.process_time() - t0 < 5
    out = capsys.readouterr().out
    reached = {line.split("  ")[0]: line.split("  ")[1:] for line in out.splitlines()
               if line.startswith(("XOR", "encoder", "teacher"))}
    for task in ("XOR 2-2-1 with shortcuts", "encoder 10-5-10", "teacher 5-5-1"):
        cells = [c.strip() for c in reached[task] if c.strip()]
        n, of, runs, _ = cells[0].split()
        assert (of, runs) == ("of", "10") and int(n) >= 9, out          # (the defaults: 10 runs)
        assert float(cells[1]) < 1000                                     # the goal, not the budget
    text = " ".join(out.split())
    assert ("Goals -- XOR 2-2-1 with shortcuts and encoder 10-5-10: every output within 0.4 of "
            "its target") in text
    for column in ("median epochs: to the goal", "test NMSE: median error on unseen patterns",
                   "traversals/CPU s: connections computed per CPU second"):
        assert column in text


def test_demo_names_each_network_as_built():
    # (the demo's "XOR 2-2-1" had shortcut connections, succeeding 10 of 10 times, where the
    # study's XOR 2-2-1 has none and succeeds about half the time: the name says which)
    from fastnet.demo import run_demo

    res = run_demo(runs=1)
    assert [r.task for r in res.rows] == ["XOR 2-2-1 with shortcuts", "encoder 10-5-10",
                                          "teacher 5-5-1"]
    lines = res.summary().splitlines()
    assert any(line.startswith("XOR 2-2-1 with shortcuts  ") for line in lines)
    head = next(line for line in lines if line.startswith("task"))
    row = next(line for line in lines if line.startswith("encoder"))
    assert head.index("reached the goal") + len("reached the goal") == row.index("runs") + 4


def test_bench_on_dask_scheduler(proben1_root, tmp_path, capsys):
    distributed = needs("dask.distributed")
    path = tmp_path / "dask.jsonl"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster:  # (None takes 8787)
        assert cli.main(["bench", "-p", "cancer1", "-n", "linear", "-r", "2", "--data",
                         str(proben1_root), "--scheduler", cluster.scheduler_address,
                         "-o", str(path)]) == 0
    cap = capsys.readouterr()
    assert "2 new, 0 resumed" in cap.out and "(dask)" in cap.out
    assert "Dask scheduler" in cap.err


def test_version(capsys):
    import fastnet

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"fastnet {fastnet.__version__}"


def test_bench_all_with_the_default_network_leaves_out_problems_without_a_pivot(
        proben1_root, tmp_path, capsys):
    out = tmp_path / "all.jsonl"
    assert cli.main(["bench", "-p", "mushroom", "cancer1", "-r", "1", "--max-epochs", "10",
                     "--data", str(proben1_root), "-o", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "mushroom1, mushroom2, mushroom3 left out" in err and "no pivot" in err
    problems = {json.loads(line)["problem"] for line in out.read_text().splitlines()[1:]}
    assert problems == {"cancer1"}
    # asked for pivots of mushroom alone, it is still an error that says why
    assert cli.main(["bench", "-p", "mushroom1", "-r", "1", "--data", str(proben1_root),
                     "-o", str(tmp_path / "m.jsonl"), "-q"]) == 1
    assert "no pivot architecture" in capsys.readouterr().err


def test_train_saves_the_net_and_draws_its_curves(proben1_root, tmp_path, capsys):
    needs("matplotlib")
    from fastnet import MLP

    net_file, pic = tmp_path / "net.npz", tmp_path / "curves.png"
    assert cli.main(["train", "cancer1", "--seed", "2", "--data", str(proben1_root),
                     "--save", str(net_file), "--plot", str(pic)]) == 0
    out = capsys.readouterr().out
    assert f"saved to {net_file}" in out and f"drawn to {pic}" in out
    assert MLP.load(net_file).proben1_spec == "4+2 l"
    assert pic.stat().st_size > 0
    assert cli.main(["train", "cancer1", "--data", str(proben1_root),
                     "--plot", str(tmp_path / "curves.jpg")]) == 1
    assert "`--plot` must end in .png, .svg or .pdf" in capsys.readouterr().err
    assert cli.main(["train", "cancer1", "--data", str(proben1_root),
                     "--save", str(tmp_path / "nowhere" / "net.npz")]) == 1
    assert "`--save`: no such directory" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", [["bench", "-p", "cancer1"], ["reproduce", "proben1", "linear"]])
@pytest.mark.parametrize("option, value, expected", [
    ("--runs", str(10**23), r"argument --runs/-r: expected an integer from 1 to 10000 "
                            r"\(MAX_RUNS\), got 100000000000000000000000"),
    ("-r", "1000000000", r"argument --runs/-r: expected an integer from 1 to 10000 "
                         r"\(MAX_RUNS\), got 1000000000"),
    ("-r", "1" * 5000, r"argument --runs/-r: expected an integer from 1 to 10000 "
                       r"\(MAX_RUNS\), got '11111111111111111111\.\.\. \(5000 characters\)'"),
    ("-j", "1000", r"argument --jobs/-j: expected an integer from 1 to 256 \(MAX_JOBS\) or -1 "
                   r"\(all cores\), got 1000"),
    ("--jobs", "0", r"argument --jobs/-j: expected an integer from 1 to 256 \(MAX_JOBS\) or -1 "
                    r"\(all cores\), got 0"),
])
def test_run_counts_and_jobs_are_bounded(cmd, option, value, expected, tmp_path, capsys):
    # -r 10**23 used to hang, -r 10**9 to take 3.7 GB, -j 1000 -r 1 to hang over 120 s
    argv = cmd + ["-o", str(tmp_path / "r.jsonl"), option, value]
    assert cli.main(argv) == 2
    assert re.search(expected, capsys.readouterr().err)
    assert not (tmp_path / "r.jsonl").exists()


def test_bench_grid_limit_names_runs(tmp_path, capsys):
    argv = ["bench", "-p", "all", "-n", "linear", "pivot", "noshortcut", "-r", "1000",
            "-o", str(tmp_path / "r.jsonl")]
    assert cli.main(argv) == 1
    assert re.search(r"`--runs` must keep the grid within 100000 runs \(MAX_GRID_RUNS\), got 45 "
                     r"problems x 3 networks x 1 algorithms \(grid cells, counted before any is "
                     r"made\) x 1000 runs = 135000\.", capsys.readouterr().err)
    assert not (tmp_path / "r.jsonl").exists()


def test_bench_caps_workers_at_the_batches_and_says_so(proben1_root, tmp_path, capsys):
    # -j 12 for one run used to start 12 worker processes
    argv = ["bench", "-p", "cancer1", "-n", "linear", "-r", "2", "-j", "12", "--max-epochs",
            "100", "--data", str(proben1_root), "-o", str(tmp_path / "r.jsonl")]
    assert cli.main(argv) == 0
    out = capsys.readouterr()
    assert "on up to 12 local processes" in out.err
    assert ("note: ran on 1 local process, not 12 (--jobs): no more than the batches of runs "
            "to do.") in out.err
    assert "(sequential)" in out.out


# -- errors in the words the user typed --------------------------------------------------

@pytest.mark.parametrize("argv, typed, python_name", [
    (["bench", "-p", "nosuch1", "-o", "{out}"], "`--problems` 'nosuch1' is not a Proben1 dataset", "`name`"),
    (["reproduce", "proben1", "linear", "-p", "nosuch1", "-o", "{out}"], "`--problems` 'nosuch1'", "`name`"),
    (["train", "nosuch1"], "`problem` 'nosuch1' is not a Proben1 dataset", "`name`"),
    (["bench", "-p", "cancer1", "-n", "big", "-o", "{out}"], "`--networks`: 'big' is neither", "`networks`"),
    (["train", "cancer1", "-n", "big"], "`--network`: 'big' is neither", "`networks`"),
    (["bench", "-p", "cancer1", "--max-epochs", "7", "-o", "{out}"], "`--max-epochs` must be a multiple",
     "`max_epochs`"),
    (["train", "cancer1", "--max-epochs", "5001"], "`--max-epochs` must be a multiple", "`max_epochs`"),
])
def test_errors_name_the_options_typed(argv, typed, python_name, proben1_root, tmp_path, capsys):
    argv = [a.format(out=tmp_path / "r.jsonl") for a in argv] + ["--data", str(proben1_root), "-q"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert typed in err and python_name not in err, err


def test_compare_errors_name_the_options_typed(bench_file, capsys):
    assert cli.main(["compare", str(bench_file), str(bench_file), "--labels", "a"]) == 1
    err = capsys.readouterr().err
    assert "`--labels` has 1 entries for 2 files" in err and "`labels`" not in err


def test_in_options_maps_library_names_once():
    parser = cli.build_parser()
    bench = cli._command_parser(parser, _commands._bench)
    assert cli._in_options("`name` 'x'; `max_epochs` 7; `X` has 3 columns; `--out`", bench) == (
        "`--problems` 'x'; `--max-epochs` 7; `X` has 3 columns; `--out`")
    train = cli._command_parser(parser, _commands._train)
    assert cli._in_options("`networks`: 'big'; `root`", train) == "`--network`: 'big'; `--data`"


# -- demo: progress on stderr -----------------------------------------------------------

def test_demo_shows_progress_on_stderr_and_quiet_silences_it(capsys):
    assert cli.main(["demo", "--runs", "2", "--seed", "4"]) == 0
    shown = capsys.readouterr()
    lines = shown.err.splitlines()
    assert lines[0].startswith("[task 1/3] XOR 2-2-1 with shortcuts: 0/2 runs  elapsed 0:00:")
    assert any(line.startswith("[task 3/3] teacher") and "2/2 runs  elapsed 0:00:" in line for line in lines)
    assert cli.main(["demo", "--runs", "2", "--seed", "4", "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""
    untimed = [line.split()[:-2] for line in quiet.out.splitlines() if line.startswith(("XOR", "enc", "tea"))]
    assert untimed == [line.split()[:-2] for line in shown.out.splitlines()
                       if line.startswith(("XOR", "enc", "tea"))]


def test_demo_batches_do_not_change_the_trials(monkeypatch):
    from fastnet import demo

    calls = []
    whole = demo.run_demo(runs=3, seed=2)
    monkeypatch.setattr(demo, "DEMO_BATCH", 2)
    batched = demo.run_demo(runs=3, seed=2, progress=lambda *a: calls.append(a))
    for a, b in zip(whole.rows, batched.rows):
        assert (a.task, a.runs, a.succeeded, a.median_epochs, a.median_test_nmse, a.traversals) == (
            b.task, b.runs, b.succeeded, b.median_epochs, b.median_test_nmse, b.traversals)
    assert [c[1:] for c in calls] == [(i, 3, done, 3) for i in (1, 2, 3) for done in (0, 2, 3)]
    with pytest.raises(TypeError, match="`progress` must be callable or None, got 'yes'"):
        demo.run_demo(runs=1, progress="yes")


def test_train_plot_has_a_title_units_and_a_log_error_axis(proben1_root, tmp_path, monkeypatch):
    needs("matplotlib")
    from fastnet import plots

    drawn = []
    real = plots.learning_curves
    monkeypatch.setattr(plots, "learning_curves", lambda *a, **k: drawn.append(real(*a, **k)) or drawn[-1])
    assert cli.main(["train", "cancer1", "--seed", "2", "--data", str(proben1_root), "-q",
                     "--plot", str(tmp_path / "c.png")]) == 0
    (ax,) = drawn
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "squared error percentage E (%), log scale"
    assert re.match(r"cancer1, network 4\+2 l, RPROP \(rprop\+\), epoch-batched, seed 2:\n"
                    r"stopped by \S+ after \d+ epochs$", ax.get_title())
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    assert ax.get_legend().get_window_extent(renderer).y0 >= ax.patch.get_window_extent(renderer).y1 - 1


@pytest.mark.parametrize("command", ["report", "compare"])
def test_html_without_out_says_the_real_size(command, bench_file, capsys):
    needs("matplotlib")
    argv = [command, str(bench_file)] + ([str(bench_file)] if command == "compare" else [])
    assert cli.main(argv + ["-f", "html"]) == 1
    cap = capsys.readouterr()
    m = re.search(r"`--format html` makes a page of (\d+) KB \(pictures embedded\): give the file with "
                  r"-o FILE", cap.err)
    assert m and cap.out == "" and "several megabytes" not in cap.err, cap.err
    page = bench_file.parent / f"{command}.html"
    assert cli.main(argv + ["-f", "html", "-o", str(page)]) == 0
    assert int(m.group(1)) == round(page.stat().st_size / 1024)


@pytest.mark.parametrize("cmd", [["reproduce", "lawrence"], ["reproduce", "proben1", "linear", "-p", "cancer1"]])
@pytest.mark.parametrize("where", ["missing", "directory"])
def test_reproduce_refuses_out_before_training(cmd, where, tmp_path, capsys, monkeypatch):
    # (issue 46, item 7: reproduce lawrence failed only after all the training, naming a
    # temporary file)
    import fastnet.experiment
    import fastnet.reproduction

    def trained(*args, **kw):
        raise AssertionError("trained before checking --out")

    monkeypatch.setattr(fastnet.reproduction, "reproduce_lawrence", trained)
    monkeypatch.setattr(fastnet.experiment, "run_experiment", trained)
    out = tmp_path / "missing_dir" / "x.json" if where == "missing" else tmp_path
    assert cli.main(cmd + ["-o", str(out)]) == 1
    err = capsys.readouterr().err
    expected = (f"`--out`: no such directory {tmp_path / 'missing_dir'}." if where == "missing"
                else f"`--out` must name a file, got the directory {tmp_path}.")
    assert err.strip() == f"fastnet: error: {expected}"


@pytest.mark.parametrize("dtype", [None, "float32"])
def test_export_says_what_it_wrote_without_none(tmp_path, capsys, dtype):
    from fastnet import MLP

    MLP(2, (2,), 1, seed=0).save(tmp_path / "n.npz")
    out = tmp_path / "n.c"
    extra = [] if dtype is None else ["--dtype", dtype]
    assert cli.main(["export", str(tmp_path / "n.npz"), "--format", "c", "-o", str(out), *extra]) == 0
    err = capsys.readouterr().err
    assert f"wrote {out} (C99 source, {dtype or 'float64'}) from MLP(" in err
    assert "None" not in err
