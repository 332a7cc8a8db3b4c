"""fastnet.study and `fastnet study`: Hamey's timing study of several algorithms."""
import hashlib
import json
import re
import warnings

import numpy as np
import pytest
from scipy import stats

from fastnet import FileLockedError, MLP, NoConvergenceWarning, cli, train, train_many
from fastnet.algorithms import Backprop
from fastnet.datasets import make_xor
from fastnet.stats import hamey_analysis
from fastnet.stopping import Correct, ErrorBelow
from fastnet.study import Study, expand_grid, logrank_test, run_study
# (the study's steps, patched and checked one by one: no public face)
from fastnet.study import _run as study_run
from fastnet.study import _schedule as study_schedule
from fastnet.study._setup import load_task, parse_success
from fastnet.training import draw_trials
from _extras import needs


def xor_study(**kw):
    kw = {"trials": 25, "limit": 150, **kw}
    return Study("xor", kw.pop("algorithms", ("rprop+", "backprop(learning_rate=2.0)")), **kw)


def test_grid_expands_lists_in_order_and_keeps_tuples():
    cells = expand_grid("backprop(learning_rate=[0.1, 0.5], momentum=[0, 0.9])")
    assert [(c.learning_rate, c.momentum) for c in cells] == [
        (0.1, 0.0), (0.1, 0.9), (0.5, 0.0), (0.5, 0.9)]
    (rprop,) = expand_grid("rprop+(delta0=(0.05, 0.2))")
    assert rprop.delta0 == (0.05, 0.2)
    with pytest.raises(ValueError, match="the grid of momentum is empty"):
        expand_grid("backprop(momentum=[])")


def test_study_checks_its_setup():
    s = Study("xor", ["rprop+", "backprop(learning_rate=[0.5, 2.0])", "rprop+"])
    assert s.algorithms == ("rprop+", "backprop(learning_rate=0.5)", "backprop(learning_rate=2.0)")
    assert s.groups == (0, 1, 1)
    with pytest.raises(ValueError, match="`trials` must be from 1 to"):
        Study("xor", trials=0)
    with pytest.raises(ValueError, match="`success` must be '40-20-40'"):
        Study("xor", success="fast")
    with pytest.raises(ValueError, match="`algorithms` must name at least one"):
        Study("xor", algorithms=())
    with pytest.raises(ValueError, match="`algorithm` must name one of"):
        Study("xor", algorithms=["nope"])
    with pytest.raises(ValueError, match="`task` must be 'xor'"):
        run_study(Study("checkers"))
    with pytest.raises(ValueError, match="does not fit the task's 2 inputs"):
        run_study(Study("xor", network="3-2-1"))


def test_proben1_tasks(proben1_root):
    from fastnet.datasets import find_proben1_file, load_proben1

    ds = load_proben1("cancer1", proben1_root)
    name, X, Y, hidden, sha = load_task("cancer1", proben1_root)
    assert name == "cancer1" and np.array_equal(X, ds.train.X) and hidden == (4,)
    path = find_proben1_file("cancer1", proben1_root)
    name, X2, Y2, _, sha2 = load_task(str(path))
    assert name == path.stem and np.array_equal(X2, X) and np.array_equal(Y2, Y)
    assert sha == sha2 == hashlib.sha256(path.read_bytes()).hexdigest()
    result = run_study(Study("cancer1", ["rprop+"], trials=3, limit=20, success="error<10"),
                       root=proben1_root)
    assert result.layer_sizes == (9, 4, 2)


def test_tasks_and_criteria():
    name, X, Y, hidden, _ = load_task("parity 3")
    assert name == "parity-3" and X.shape == (8, 3) and hidden == (3,)
    assert Y.ravel().tolist() == [0, 1, 1, 0, 1, 0, 0, 1]
    name, X, Y, hidden, _ = load_task("encoder 8-3-8")
    assert name == "encoder-8-3-8" and hidden == (3,)
    assert parse_success("40-20-40")[1].r_c == 0.4
    assert isinstance(parse_success("rc=0.3")[1], Correct)
    text, crit = parse_success("error < 2")
    assert text == "error<2" and isinstance(crit, ErrorBelow) and crit.threshold == 2.0


def test_each_algorithm_is_train_many_of_the_same_initial_weights():
    study = xor_study()
    result = run_study(study)
    X, Y = make_xor().train
    net = MLP(2, [2], 1, shortcut=False, hidden_activation="tanh", output_activation="logistic")
    for a in result.algorithms:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoConvergenceWarning)
            ref = train_many(net, X, Y, algorithm=a.spec, n_trials=25, seed=0, init_scale=1.0,
                             stop=Correct(), strip=1, max_epochs=150)
        assert np.array_equal(a.epochs, ref.epochs)
        assert np.array_equal(a.success, (np.array(ref.stop_reason) == "correct") & (ref.epochs < 150))
        times = np.where(a.success, a.epochs, 150)
        h = hamey_analysis(times, 150)
        assert a.hamey.peak_efficiency == h.peak_efficiency
        assert a.hamey.optimal_limit == h.optimal_limit
        assert a.hamey.n_successes == int(a.success.sum())
        assert a.epochs_description.n == int(a.success.sum())


def test_logrank_is_scipys_and_names_the_faster():
    result = run_study(xor_study(algorithms=("rprop+", "backprop(learning_rate=0.05)"),
                                 trials=40))
    fast, slow = result.algorithms
    (t,) = result.logrank
    ref = stats.logrank(
        stats.CensoredData(uncensored=fast.epochs[fast.success].astype(float),
                           right=np.full(int((~fast.success).sum()), 150.0)),
        stats.CensoredData(uncensored=slow.epochs[slow.success].astype(float),
                           right=np.full(int((~slow.success).sum()), 150.0)))
    assert (t.statistic, t.pvalue) == (ref.statistic, ref.pvalue)
    assert t.statistic > 0 and t.pvalue < 0.05 and t.better == "rprop+"
    assert np.isnan(logrank_test(slow, slow, 150)[0]) == (not slow.success.any())


def test_grid_marks_the_best_by_peak_efficiency():
    result = run_study(xor_study(algorithms=("rprop+", "backprop(learning_rate=[0.5, 2.0])")))
    grid = result.algorithms[1:]
    best = max(grid, key=lambda a: a.hamey.peak_efficiency)
    assert [a.best_in_grid for a in grid] == [a is best for a in grid]
    assert not result.algorithms[0].best_in_grid          # (alone in its group)


def test_error_threshold_success():
    result = run_study(xor_study(algorithms=("rprop+",), success="error<5"))
    (a,) = result.algorithms
    X, Y = make_xor().train
    W, _ = draw_trials(MLP(2, [2], 1, shortcut=False), 25, 0, 1.0)
    i = int(np.flatnonzero(a.success)[0])
    one = train(MLP(2, [2], 1, shortcut=False, hidden_activation="tanh",
                    output_activation="logistic").set_weights(W[i]), X, Y, stop=ErrorBelow(5),
                strip=1, max_epochs=150)
    assert one.epochs == a.epochs[i] and one.train_error[-1] < 5


def test_diverged_trials_are_failures_and_the_others_train_alone():
    study = xor_study(algorithms=("backprop(learning_rate=0.2, momentum=0.9)",),
                      output_activation="linear", trials=8, limit=60)
    (a,) = run_study(study).algorithms
    assert a.diverged.any() and not a.success[a.diverged].any()
    X, Y = make_xor().train
    net = MLP(2, [2], 1, shortcut=False, hidden_activation="tanh", output_activation="linear")
    W, _ = draw_trials(net, 8, 0, 1.0)
    i = int(np.flatnonzero(~a.diverged & a.success)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        one = train(net.copy().set_weights(W[i]), X, Y, stop=Correct(), strip=1, max_epochs=60,
                    algorithm=Backprop(learning_rate=0.2, momentum=0.9))
    assert one.epochs == a.epochs[i]


def test_outputs_and_resuming(tmp_path, monkeypatch):
    needs("matplotlib")
    study = xor_study(algorithms=("rprop+", "backprop(learning_rate=[0.5, 2.0])"))
    first = run_study(study, tmp_path)
    for name in ("study.html", "trials.csv", "study.json", "summary.md"):
        assert (tmp_path / name).is_file()
    assert len(list((tmp_path / "trials").glob("*/*.npz"))) == 3
    rows = (tmp_path / "trials.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 25 and rows[0].startswith("algorithm,trial,epochs,success")
    data = json.loads((tmp_path / "study.json").read_text())
    assert [a["algorithm"] for a in data["algorithms"]] == list(study.algorithms)
    page = (tmp_path / "study.html").read_text()
    assert "backprop(learning_rate=2.0)" in page and "data:image/png;base64," in page
    assert "http://" not in page and "https://" not in page
    assert "log-rank" in (tmp_path / "summary.md").read_text()

    def no_training(*args):
        raise AssertionError("a finished algorithm was trained again")

    monkeypatch.setattr(study_schedule, "train_chunk", no_training)
    again = run_study(study, tmp_path)
    for a, b in zip(first.algorithms, again.algorithms):
        assert np.array_equal(a.epochs, b.epochs) and np.array_equal(a.cpu_time, b.cpu_time)
    monkeypatch.undo()
    # a damaged file is named, not trained over; another set-up (limit): trained again
    damaged = next((tmp_path / "trials").glob("*/*.npz"))
    damaged.write_text("{not an npz")
    with pytest.raises(ValueError, match=f"{damaged.name}: not a study's chunk of trials"):
        run_study(study, tmp_path)
    damaged.unlink()
    lines = []
    run_study(study, tmp_path, progress=lines.append)
    assert sum("training" in line for line in lines) == 1
    run_study(xor_study(algorithms=("rprop+",), limit=100), tmp_path, progress=lines.append,
              pictures=False)
    assert "training" in lines[-2]


def test_the_output_directory_is_locked(tmp_path):
    from fastnet._files import exclusive_lock

    with exclusive_lock(tmp_path / "study.json"):
        with pytest.raises(FileLockedError):
            run_study(xor_study(algorithms=("rprop+",)), tmp_path)


def test_cli_study(tmp_path, capsys):
    needs("matplotlib")
    status = cli.main(["study", "xor", "-a", "rprop+", "backprop(learning_rate=[0.5, 2.0])",
                       "-k", "20", "-T", "100", "-o", str(tmp_path), "-q"])
    assert status == 0
    out = capsys.readouterr().out
    assert "# fastnet study: xor" in out and "Which is faster" in out and " * |" in out
    assert (tmp_path / "study.html").is_file()
    assert cli.main(["study", "xor", "-a", "bogus", "-k", "5", "-q"]) == 1
    assert "`algorithm` must name one of" in capsys.readouterr().err
    assert cli.main(["study", "parity 2", "-k", "5", "-T", "20", "-s", "rc=0.3"]) == 0
    captured = capsys.readouterr()
    assert "parity-2" in captured.out and "study: [1/1] rprop+" in captured.err


@pytest.mark.slow  # 6.8 s on a two-core machine (--durations)
def test_sigkill_loses_no_finished_algorithm(tmp_path):
    needs("matplotlib")
    # A study killed (SIGKILL) while its second algorithm trains keeps the first
    # one's trials; the rerun trains only the second and ends where an
    # uninterrupted study ends. The second algorithm must train for long (about
    # a second: slow backpropagation, many epochs allowed), or on a fast machine
    # it finishes between two looks at the directory and nothing is left to kill.
    import os
    import signal
    import subprocess
    import sys
    import time

    args = ["study", "xor", "-a", "rprop+", "backprop(learning_rate=0.02)", "-k", "400", "-T",
            "200000", "--seed", "3"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "fastnet", *args, "-o", str(killed)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(killed.glob("trials/*/*.npz")):
        assert proc.poll() is None and time.monotonic() < deadline, "the study ended too soon"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = list((killed / "trials").glob("*/*.npz"))
    assert len(first) == 1 and not (killed / "study.json").exists()
    kept = first[0].read_bytes()

    assert cli.main([*args, "-o", str(killed), "--quiet"]) == 0
    assert first[0].read_bytes() == kept
    whole = tmp_path / "whole"
    assert cli.main([*args, "-o", str(whole), "--quiet"]) == 0
    a = json.loads((killed / "study.json").read_text())["algorithms"]
    b = json.loads((whole / "study.json").read_text())["algorithms"]
    assert [x["trials"]["epochs"] for x in a] == [x["trials"]["epochs"] for x in b]
    assert [x["trials"]["success"] for x in a] == [x["trials"]["success"] for x in b]


def test_graph_key_hides_no_curve(monkeypatch):
    needs("matplotlib")
    """The key of a grid's many curves lies beside the graphs, not on them, and an
    eleventh algorithm differs from the first by its line style."""
    from fastnet import plots
    from fastnet.study import _write as study_write

    rates = ", ".join(str(0.2 * i) for i in range(1, 11))
    result = run_study(xor_study(algorithms=("rprop+", f"backprop(learning_rate=[{rates}])"),
                                 trials=5, limit=40))
    drawn = {}
    monkeypatch.setattr(plots, "to_png", lambda axes, dpi: drawn.setdefault("axes", axes))
    study_write._graphs(result, plots)
    ax1, ax2 = drawn["axes"][:2]
    fig = ax1.figure
    keys = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert ax1.get_legend() is None and ax2.get_legend() is None and len(keys) == 1
    assert [t.get_text() for t in keys[0].get_texts()] == list(result.study.algorithms)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    box = keys[0].get_window_extent(renderer)
    for ax in (ax1, ax2):
        assert not box.overlaps(ax.get_window_extent(renderer))
    lines = ax1.get_lines()
    assert lines[0].get_color() == lines[10].get_color()
    assert lines[0].get_linestyle() != lines[10].get_linestyle()


def test_progress_counts_success_at_the_limit_as_the_tables_do():
    """A trial that meets the criterion exactly at epoch T is a failure (not before T):
    the progress line said one success more than the tables."""
    (a,) = run_study(xor_study(algorithms=("rprop+",))).algorithms
    limit = int(a.epochs[a.success].max())          # the slowest success, now at T
    lines = []
    (b,) = run_study(xor_study(algorithms=("rprop+",), limit=limit),
                     progress=lines.append).algorithms
    at_limit = np.count_nonzero(a.epochs == limit)
    assert at_limit >= 1 and b.hamey.n_successes == a.hamey.n_successes - at_limit
    assert f": {b.hamey.n_successes}/25 successful, " in lines[-1]


def test_logrank_tests_are_holm_adjusted_with_a_median_ratio():
    result = run_study(xor_study(algorithms=("rprop+", "backprop(learning_rate=0.05)",
                                             "backprop(learning_rate=2.0)"), trials=20))
    tests = result.logrank
    assert len(tests) == 3
    raw = np.array([t.pvalue for t in tests])
    # Holm by hand: the sorted p-values times 3, 2, 1, then the running maximum
    order = np.argsort(raw)
    expect = np.maximum.accumulate(np.minimum(1, raw[order] * np.array([3, 2, 1])))
    got = np.array([t.pvalue_holm for t in tests])[order]
    finite = np.isfinite(raw[order])
    assert got[finite] == pytest.approx(expect[finite])
    spec = {a.spec: a for a in result.algorithms}
    for t in tests:
        ta = np.where(spec[t.a].success, spec[t.a].epochs, 150)
        tb = np.where(spec[t.b].success, spec[t.b].epochs, 150)
        assert t.median_ratio == pytest.approx(np.median(ta) / np.median(tb))
        assert t.median_bound == (min(np.sum(ta < 150), np.sum(tb < 150)) <= 10)
        assert (t.better is not None) == (t.pvalue_holm < 0.05)
        lo, hi = t.median_ratio_interval
        assert lo <= t.median_ratio <= hi and lo > 0
        # a percentile interval: its ends are ratios of medians of resampled trials
        assert np.min(ta) / np.max(tb) <= lo and hi <= np.max(ta) / np.min(tb)
    from fastnet.study import summary_markdown

    text = summary_markdown(result)
    assert "p (Holm)" in text and "median ratio A/B" in text
    assert f"{tests[0].median_ratio:.3g}" in text


@pytest.mark.parametrize("seconds, text", [(0.0002941, "294 µs"), (5.446e-05, "54.5 µs"),
                                           (0.0012, "1.20 ms"), (2.5, "2.50 s"),
                                           (0.99996, "1.00 s"), (0, "0 s")])
def test_cpu_times_read_in_units(seconds, text):
    from fastnet.study._write import _duration

    assert _duration(seconds) == text


def test_study_tables_have_no_exponents_and_say_what_n_counts():
    from fastnet.study import summary_markdown

    result = run_study(xor_study(algorithms=("rprop+",), trials=10))
    text = summary_markdown(result)
    assert not __import__("re").search(r"\de-\d", text)
    a = result.algorithms[0]
    assert f"{a.hamey.n_successes} successes of 10 trials" in text and "all 10 trials" in text
    assert " to " in text  # ranges as "a to b"


def test_median_ratio_interval_agrees_with_scipys_two_sample_bootstrap():
    rng = np.random.default_rng(4)
    ta = np.minimum(np.ceil(rng.lognormal(3.0, 0.6, 300)), 500.0)
    tb = np.minimum(np.ceil(rng.lognormal(3.4, 0.6, 300)), 500.0)
    mine = study_run._ratio_interval(study_run._resampled_medians(ta, 0, 0),
                                     study_run._resampled_medians(tb, 0, 1))
    ref = stats.bootstrap((ta, tb), lambda a, b, axis: np.median(a, axis=axis)
                          / np.median(b, axis=axis), vectorized=True, paired=False,
                          method="percentile", n_resamples=4000,
                          random_state=np.random.default_rng(1)).confidence_interval
    # two Monte Carlo estimates of the same interval: close, not equal
    assert mine == pytest.approx((ref.low, ref.high), rel=0.06)
    assert mine[0] < np.median(ta) / np.median(tb) < mine[1]
    # the same seed, the same interval
    assert mine == study_run._ratio_interval(study_run._resampled_medians(ta, 0, 0),
                                             study_run._resampled_medians(tb, 0, 1))


@pytest.mark.parametrize("values", [[0.1, 0.1, 0.1],                       # identical
                                    [0.1, np.nextafter(0.1, 1.0), 0.1]],   # equal to rounding
                         ids=["identical", "last bit"])
def test_equal_cpu_times_have_no_spread(values):
    # (the table printed the sd of identical CPU times as "3.40e-12 ns": a rounding residue)
    import dataclasses

    from fastnet.stats import describe
    from fastnet.study import summary_markdown

    result = run_study(xor_study(algorithms=("rprop+",), trials=5, limit=50))
    a = dataclasses.replace(result.algorithms[0], cpu_description=describe(values,
                                                                           lilliefors=False))
    text = summary_markdown(dataclasses.replace(result, algorithms=(a,)))
    (row,) = [line for line in text.splitlines() if "| CPU time per trial |" in line]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:] == ["100 ms", "0 s", "100 ms", "100 ms to 100 ms", "100 ms to 100 ms",
                         "100 ms", "0 s", "all equal"], row
    assert not re.search(r"\de-\d", text)
    if values[0] == values[1]:
        d = describe(values, lilliefors=False)
        assert d.std == 0.0 and np.isnan(d.ks_pvalue)
