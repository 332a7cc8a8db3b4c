"""A study's trials in chunks: drawn and trained from the seed and the trial's index alone,
any number of processes, written as they finish, resumed after a kill; and its statistics
at large K."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from fastnet import MLP, NoConvergenceWarning, cli, train_many
from fastnet.algorithms import from_spec
from fastnet.datasets import make_xor
from fastnet.stats import _hamey_fit, hamey_analysis
from fastnet.study import Study, StudyProgress, run_study
# (the study's steps, checked one by one: no public face)
from fastnet.study import _chunks, _schedule
from fastnet.study import _run as study_run
from fastnet.training import draw_trials


def xor_net():
    return MLP(2, [2], 1, shortcut=False, hidden_activation="tanh", output_activation="logistic")


def test_a_chunk_draws_exactly_its_rows_of_the_whole_draw():
    net, K = xor_net(), 1001
    W, S = draw_trials(net, K, 7, 1.0, (0.05, 0.2))
    for lo, hi in [(0, 5), (333, 700), (1000, 1001)]:
        w, _ = _chunks.chunk_weights(net, K, 7, 1.0, lo, hi)
        assert np.array_equal(w, W[lo:hi])                      # bit for bit
        w, rng = _chunks.chunk_weights(net, K, 7, 1.0, lo, hi, (0.05, 0.2))
        assert np.array_equal(rng.uniform(0.05, 0.2, (hi - lo, net.n_connections)), S[lo:hi])
    mine = _chunks.chunk_seed(7, 333).spawn(3)
    whole = np.random.SeedSequence(7).spawn(400)[333:336]
    assert [s.generate_state(4).tolist() for s in mine] == [s.generate_state(4).tolist()
                                                          for s in whole]


@pytest.mark.parametrize("spec", ["rprop+", "irprop-", "rprop+(delta0=(0.05, 0.2))",
                                  "backprop(learning_rate=0.5, mode='online')"])
def test_three_chunks_train_as_one_call(spec):
    """Odd K in three chunks of unequal sizes: every trial's epochs, success and
    traversals those of one `train_many` call of all K (as studies trained before)."""
    net, (X, Y) = xor_net(), make_xor().train
    study = Study("xor", (spec,), trials=151, limit=150, seed=3)
    spec = study.algorithms[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        whole = train_many(net, X, Y, n_trials=151, seed=3, init_scale=1.0,
                           algorithm=from_spec(spec), stop=study.criterion(), strip=1,
                           max_epochs=150)
    parts = [_chunks.train_chunk(study, spec, net, X, Y, lo, hi)
             for lo, hi in [(0, 50), (50, 149), (149, 151)]]
    columns = [np.concatenate([p[2][j] for p in parts]) for j in range(6)]
    assert np.array_equal(columns[0], whole.epochs)
    assert np.array_equal(columns[1], np.array(whole.stop_reason) == "correct")
    assert np.array_equal(columns[4], [whole[i].traversals.training for i in range(151)])
    assert np.array_equal(columns[5], [whole[i].traversals.flops for i in range(151)])


def test_chunk_sizes_bound_the_trial_epochs():
    assert _chunks.chunk_size(1000) == _chunks.CHUNK_TRIALS
    assert _chunks.chunk_size(10_000_000) == 1
    assert _chunks.chunk_bounds(10, 1000) == [(0, 10)]
    assert _chunks.chunk_bounds(9000, 1000) == [(0, 4096), (4096, 8192), (8192, 9000)]


def without_times(path):
    """study.json with its CPU times (and what derives from them) left out."""
    data = json.loads(path.read_text())
    for a in data["algorithms"]:
        for key in ("cpu_description", "cost_per_epoch"):
            a.pop(key)
        a["trials"].pop("cpu_time")
    return data


def test_jobs_and_a_killed_study_give_the_same_trials(tmp_path, monkeypatch):
    """Chunks of 7 trials: one process, two processes, and a study stopped after two
    chunks then rerun all end with the same study.json (times aside)."""
    monkeypatch.setattr(_chunks, "CHUNK_TRIALS", 7)
    study = Study("xor", ("rprop+", "irprop-"), trials=39, limit=200, seed=5)
    one = run_study(study, tmp_path / "one", pictures=False)
    two = run_study(study, tmp_path / "two", pictures=False, n_jobs=2)
    for a, b in zip(one.algorithms, two.algorithms):
        assert np.array_equal(a.epochs, b.epochs) and np.array_equal(a.success, b.success)

    saved, real = [], _schedule.save_chunk

    def save_two(*args):
        if len(saved) == 2:
            raise KeyboardInterrupt                         # (killed while training)
        saved.append(args)
        real(*args)

    monkeypatch.setattr(_schedule, "save_chunk", save_two)
    with pytest.raises(KeyboardInterrupt):
        run_study(study, tmp_path / "killed", pictures=False)
    assert len(list((tmp_path / "killed" / "trials").glob("*/*.npz"))) == 2
    monkeypatch.setattr(_schedule, "save_chunk", real)
    lines = []
    run_study(study, tmp_path / "killed", pictures=False, progress=lines.append)
    assert "14/39 trials already in" in lines[0] and lines[0].kind == "resumed"
    assert without_times(tmp_path / "killed" / "study.json") == without_times(
        tmp_path / "one" / "study.json")
    assert len(list((tmp_path / "killed" / "trials").glob("*/*.npz"))) == 2 * 6


def test_progress_counts_trials_and_an_eta(monkeypatch):
    monkeypatch.setattr(_chunks, "CHUNK_TRIALS", 10)
    lines = []
    run_study(Study("xor", ("rprop+", "irprop-"), trials=25, limit=100), progress=lines.append)
    assert all(isinstance(line, StudyProgress) for line in lines)
    assert [(x.index, x.kind, x.done) for x in lines] == [
        (1, "start", 0), (1, "chunk", 10), (1, "chunk", 20), (1, "end", 25),
        (2, "start", 0), (2, "chunk", 10), (2, "chunk", 20), (2, "end", 25)]
    assert "study: [1/2] rprop+: 10/25 trials  elapsed 0:00:00  ETA " in lines[1]
    assert np.isfinite(lines[1].eta) and lines[3].eta == 0


def test_a_chunk_file_of_other_trials_is_named_not_taken(tmp_path):
    study = Study("xor", ("rprop+",), trials=6, limit=50)
    run_study(study, tmp_path, pictures=False)
    (path,) = (tmp_path / "trials").glob("*/*.npz")
    data = dict(np.load(path))
    data["epochs"] = data["epochs"] + 1000                  # beyond T
    with open(path, "wb") as f:
        np.savez(f, **data)
    with pytest.raises(ValueError, match=r"`epochs` must be 6 values \(integers from 0 to "):
        run_study(study, tmp_path)
    _chunks.save_chunk(path, study, "rprop+", None, 0, 5, [np.zeros(5)] * 6)
    with pytest.raises(ValueError, match=r"not trials 0..5 of 'rprop\+'"):
        run_study(study, tmp_path)


def test_cli_study_jobs(tmp_path, capsys):
    assert cli.main(["study", "xor", "-k", "30", "-T", "100", "-j", "2", "-q", "--no-pictures",
                     "-o", str(tmp_path)]) == 0
    assert "# fastnet study: xor" in capsys.readouterr().out
    with pytest.raises(ValueError, match="`n_jobs` must be from 1 to"):
        run_study(Study("xor", trials=5), n_jobs=0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_hundred_thousand_trials_stay_within_memory():
    """10^5 trials, T = 1000 (1.8 GB before chunks): the study's peak resident memory."""
    # (VmHWM, the peak of the process's own memory: getrusage's ru_maxrss survives exec
    # and so starts at the peak of the pytest process that spawned it)
    code = ("from fastnet.study import Study, run_study; "
            "run_study(Study('xor', ('rprop+',), trials=100_000, limit=1000)); "
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    # (kB; the whole study, Python and its imports included: 10^5 trials took 1.8 GB before)
    assert int(out.stdout.split()[-1]) < 600_000


def test_bootstrap_medians_by_splits_follow_the_resampling_law():
    """The binomial splits draw a resample's median with the law of resampling indices
    (odd and even n, ties)."""
    rng = np.random.default_rng(0)
    for n in (7, 8):
        values = np.sort(rng.integers(1, 6, n).astype(float))
        split = study_run._split_medians(values, np.random.default_rng(1), 40_000)
        direct = np.median(values[rng.integers(0, n, (40_000, n))], axis=1)
        support = np.union1d(split, direct)
        a = np.array([np.count_nonzero(split == v) for v in support])
        b = np.array([np.count_nonzero(direct == v) for v in support])
        keep = (a + b) > 20
        assert stats.chi2_contingency(np.array([a[keep], b[keep]])).pvalue > 1e-3
    big = np.arange(1.0, 20_001.0)
    medians = study_run._resampled_medians(big, 0, 0)
    assert medians.shape == (study_run.BOOTSTRAP_RESAMPLES,)
    assert abs(np.median(medians) - 10_000.5) < 100


def test_hamey_fit_on_distinct_times_is_the_fit_on_every_time(monkeypatch):
    rng = np.random.default_rng(1)
    t = np.minimum(rng.geometric(0.004, 60_000) + 10, 1000).astype(float)
    x = np.sort(t[t < 1000])
    values, counts = np.unique(x, return_counts=True)

    def cdf(v):
        return stats.expon.cdf(v, scale=200.0)

    assert _hamey_fit._ks_distance(values, counts, cdf) == stats.kstest(x, cdf).statistic
    grouped = hamey_analysis(t, 1000)
    monkeypatch.setattr(_hamey_fit, "GROUPED_FIT_MIN", 10 ** 9)
    plain = hamey_analysis(t, 1000)
    assert grouped.model.t0 == plain.model.t0
    assert grouped.model.ks_statistic == pytest.approx(plain.model.ks_statistic, rel=1e-6)
    for key in ("asymptotic_success_rate", "corrected_mean", "corrected_median"):
        assert getattr(grouped, key) == pytest.approx(getattr(plain, key), rel=1e-6)
