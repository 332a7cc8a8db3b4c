"""Trust, round three: a resumed study's identity, weights written during training, caps
checked before anything is expanded or allocated, one-line CLI errors."""
import json

import numpy as np
import pytest

from fastnet.study import Study, run_study
from _extras import needs

XOR_DT = ("bool_in=0\nreal_in=2\nbool_out=1\nreal_out=0\ntraining_examples=4\n"
          "validation_examples=0\ntest_examples=0\n0 0 {}\n0 1 {}\n1 0 {}\n1 1 {}\n")


def _dt(path, targets):
    path.write_text(XOR_DT.format(*targets))
    return path


# ------------------------------------------------------------------ study identity

def test_a_resumed_study_never_reuses_trials_of_other_data(tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    upper = _dt(data / "A.dt", (0, 1, 1, 0))
    lower = _dt(data / "a.dt", (1, 0, 0, 1))          # another file, other targets

    def run(task):
        lines = []
        result = run_study(Study(str(task), ["rprop+"], trials=4, limit=50), out,
                           progress=lines.append, pictures=False)
        return result, any("already in" in line for line in lines)

    first, reused = run(upper)
    assert not reused and first.data_sha256 is not None
    assert run(upper)[1]                                  # the same data: resumed
    other, reused = run(lower)
    assert not reused and other.data_sha256 != first.data_sha256
    _dt(upper, (1, 1, 1, 1))                              # A.dt overwritten
    assert not run(upper)[1]
    # the task is kept exactly as given, with the data's hash, in every trials file
    for f in (out / "trials").glob("*.json"):
        identity = json.loads(f.read_text())["identity"]
        assert identity["task"] in (str(upper), str(lower)) and len(identity["data_sha256"]) == 64
    assert json.loads((out / "study.json").read_text())["study"]["task"] == str(upper)


def test_the_task_text_is_kept_as_given():
    study = Study("XOR", ["rprop+"], trials=2, limit=5)
    assert study.identity(None)["task"] == "XOR"
    assert study.cell_hash("rprop+", None) != Study("xor", ["rprop+"], trials=2,
                                                    limit=5).cell_hash("rprop+", None)
    assert study.cell_hash("rprop+", "0" * 64) != study.cell_hash("rprop+", None)


# ------------------------------------------------------------------ study folders

@pytest.mark.parametrize("what", ["trials", "study.json"])
def test_a_study_folder_of_the_wrong_kinds_fails_before_training(tmp_path, monkeypatch, what):
    from fastnet.study import _schedule  # (patched: training must not start)

    (tmp_path / what).mkdir() if what != "trials" else (tmp_path / what).write_text("")
    monkeypatch.setattr(_schedule, "train_chunk", lambda *a: pytest.fail("trained first"))
    with pytest.raises(ValueError, match=f"{what} must be a"):
        run_study(Study("xor", ["rprop+"], trials=2, limit=5), tmp_path, pictures=False)


def test_no_best_cell_when_no_cell_succeeded():
    result = run_study(Study("xor", ["backprop(learning_rate=[1e-6, 2e-6])"], trials=3,
                             limit=3))
    assert all(a.hamey.n_successes == 0 for a in result.algorithms)
    assert not any(a.best_in_grid for a in result.algorithms)


# ------------------------------------------------------ weights written while training

def _xor():
    from fastnet.datasets import make_xor

    ds = make_xor()
    return ds.train.X, ds.train.Y


WRITERS = {
    "set_weights": lambda net: net.set_weights(np.zeros(net.n_connections)),
    "init_weights": lambda net: net.init_weights(1),
    "set_params": lambda net: net.set_params(*net.get_params()),
    "__setstate__": lambda net: net.__setstate__(net.copy().__getstate__()),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("algorithm", ["rprop+", "scg", "lm", "adam", "lbfgs", "backprop"])
def test_a_training_callback_cannot_write_its_networks_weights(writer, algorithm):
    from fastnet import MLP, TrainingInProgressError, train

    X, Y = _xor()
    net, refused = MLP(2, (2,), 1, seed=0), []

    def callback(epoch, state):
        with pytest.raises(TrainingInProgressError, match=f"net.{writer}\\(\\) would write"):
            WRITERS[writer](net)
        refused.append(epoch)

    before = MLP(2, (2,), 1, seed=0)
    alone = train(before, X, Y, algorithm=algorithm, max_epochs=6, strip=2)
    result = train(net, X, Y, algorithm=algorithm, max_epochs=6, strip=2, callback=callback)
    assert refused and np.array_equal(result.net.weights, alone.net.weights)
    WRITERS[writer](net)                                  # free again once training returned


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_another_thread_cannot_write_the_weights_of_a_network_in_training(writer):
    import threading

    from fastnet import MLP, TrainingInProgressError, train_rprop

    X, Y = _xor()
    net, started, release = MLP(2, (2,), 1, seed=0), threading.Event(), threading.Event()

    def callback(epoch, state):
        started.set()
        assert release.wait(30)

    thread = threading.Thread(target=lambda: train_rprop(net, X, Y, max_epochs=4,
                                                         callback=callback))
    thread.start()
    try:
        assert started.wait(30)
        with pytest.raises(TrainingInProgressError, match="being trained by another thread"):
            WRITERS[writer](net)
        assert np.isfinite(net.predict(X)).all()          # reading stays allowed
    finally:
        release.set()
        thread.join(30)


@pytest.mark.parametrize("how", ["train", "train_rprop", "train_many", "train_rprop_many"])
def test_a_training_callback_cannot_train_its_network_again(how):
    from fastnet import MLP, TrainingInProgressError, train, train_many, train_rprop
    from fastnet import train_rprop_many

    X, Y = _xor()
    net, other, refused = MLP(2, (2,), 1, seed=0), MLP(2, (2,), 1, seed=1), []
    again = {"train": lambda: train(net, X, Y, max_epochs=2),
             "train_rprop": lambda: train_rprop(net, X, Y, max_epochs=2),
             "train_many": lambda: train_many([other, net], X, Y, max_epochs=2),
             "train_rprop_many": lambda: train_rprop_many([other, net], X, Y, max_epochs=2)}[how]

    def callback(epoch, state):
        with pytest.raises(TrainingInProgressError, match="being trained by this thread"):
            again()
        train_rprop(other if how in ("train", "train_rprop") else other.copy(), X, Y,
                    max_epochs=2)                         # another network still may
        refused.append(epoch)

    train_rprop(net, X, Y, max_epochs=4, strip=2, callback=callback)
    assert refused == [2, 4]


# ------------------------------------------------- caps before expansion or allocation

GRID_10K = "backprop(learning_rate=[{}], momentum=[{}])".format(
    ", ".join(str(0.001 * (i + 1)) for i in range(100)),
    ", ".join(str(0.009 * i) for i in range(100)))


def test_an_experiment_counts_its_grid_before_expanding_it(monkeypatch):
    import time

    from fastnet import _grids  # (patched: the grid must not be expanded)
    from fastnet.experiment import Experiment

    monkeypatch.setattr(_grids, "expand_grid", lambda spec: pytest.fail("expanded first"))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"`algorithms` must keep the grid within 100000 runs "
                                         r"\(MAX_GRID_RUNS\), got 1 problems x 1 networks x "
                                         r"1000000 algorithms .* x 10 runs = 10000000\."):
        Experiment(problems="cancer1", algorithms=[GRID_10K] * 100, runs=10)
    assert time.perf_counter() - t0 < 1


def test_bench_blames_its_algorithms(tmp_path, capsys):
    from fastnet import cli

    argv = ["bench", "-p", "cancer1", "-a", *[GRID_10K] * 100, "-o", str(tmp_path / "r.jsonl")]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "`--algorithms` must keep the grid within 100000 runs" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "r.jsonl").exists()


def test_a_study_caps_its_trial_epochs_and_algorithms_before_making_them(monkeypatch):
    from fastnet import cli
    # (_setup patched: the grid must not be expanded)
    from fastnet.study import MAX_GRID_CELLS, MAX_TRIAL_EPOCHS, _setup

    assert MAX_TRIAL_EPOCHS == 10_000_000_000 and MAX_GRID_CELLS == 10_000
    with pytest.raises(ValueError, match=r"`trials` x `limit` must be at most 10,000,000,000 "
                                         r"\(MAX_TRIAL_EPOCHS.*got 10000 x 10000000"):
        Study("xor", trials=10_000, limit=10_000_000)
    assert Study("xor", trials=1_000_000, limit=10_000).limit == 10_000
    monkeypatch.setattr(_setup, "expand_grid", lambda spec: pytest.fail("expanded first"))
    with pytest.raises(ValueError, match=r"`algorithms` must name at most 10000 algorithms"):
        Study("xor", [GRID_10K, "rprop+"])
    monkeypatch.undo()
    assert cli.main(["study", "xor", "-k", "10000", "-T", "10000000", "-q"]) == 1


@pytest.mark.parametrize("how", ["train_rprop", "lanes", "serial", "lm"])
def test_histories_grow_as_training_goes(how):
    import tracemalloc

    from fastnet import MLP, train, train_rprop, train_rprop_many

    X, Y = _xor()
    net = MLP(2, (2,), 1, seed=0)
    stop_at_50 = lambda epoch, state: epoch >= 50          # noqa: E731
    tracemalloc.start()
    try:
        if how == "train_rprop":
            r = train_rprop(net, X, Y, max_epochs=10**12, strip=10, callback=stop_at_50)
            assert r.epochs == 50 and r.stop_reason == "callback"
        elif how == "lm":
            r = train(net, X, Y, algorithm="lm", max_epochs=10**12, strip=10,
                      callback=stop_at_50)
            assert r.epochs <= 50                        # (or mu reached its bound)
        else:
            r = train_rprop_many(net, X, Y, n_trials=3, seed=0, max_epochs=10**12, strip=10,
                                 callback=lambda i, epoch, state: epoch >= 50, method=how)
            assert list(r.epochs) == [50] * 3
        assert tracemalloc.get_traced_memory()[1] < 50e6
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", ["single", "lanes", "serial"])
def test_no_history_is_allocated_for_max_epochs(method):
    # Nothing but the callback stops these before 10**12 epochs: the loop's history
    # starts small (it used to be allocated for max_epochs at once: MemoryError).
    import tracemalloc
    import warnings

    from fastnet import MLP, NoConvergenceWarning, train_rprop, train_rprop_many

    X, Y = _xor()
    net = MLP(2, (2,), 1, seed=0)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoConvergenceWarning)
            if method == "single":
                r = train_rprop(net, X, Y, max_epochs=10**12, callback=lambda *a: True)
            else:
                r = train_rprop_many(net, X, Y, n_trials=3, seed=0, max_epochs=10**12,
                                     method=method, callback=lambda *a: True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.all(np.asarray(r.epochs) == 5)      # stopped at the first strip end
    assert peak < 2**20                           # (a history of 1024 epochs x 3 trials: 24 KiB)


# ------------------------------------------------------------- one-line CLI errors

def _one_line(capsys, argv):
    from fastnet import cli

    assert cli.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("argv, message", [
    (["train", "cancer1", "-a", "backprop(learning_rate=1e308)"],
     r"training diverged\. Lower what was given \(learning_rate=1e\+308\)"),
    (["train", "cancer1", "-a", "backprop(learning_rate=0.1)", "--weight-decay", "1e300"],
     r"Lower what was given \(weight_decay=1e\+300, learning_rate=0\.1\)"),
    (["train", "cancer1", "-a", "lbfgs(maxcor=100000000)"], r"`maxcor` must be <= 1000"),
    (["train", "cancer1", "-a", "backprop(learning_rate=" + "-" * 9900 + "1)"],
     r"\.\.\. \(9925 characters\) \(nested too deeply to read\)\.$"),
])
def test_cli_training_errors_are_one_line(capsys, monkeypatch, proben1_root, argv, message):
    import re

    monkeypatch.setenv("FASTNET_DATA", str(proben1_root))
    assert re.search(message, _one_line(capsys, argv))


@pytest.mark.parametrize("argv, message", [
    (["study", "encoder 100000-1-100000"],
     r"`task` 'encoder 100000-1-100000': an encoder's N .* must be from 2 to 1024, got 100000\."),
    (["study", "encoder 99999999999999999999-1"], r"must be from 2 to 1024, got 9{20}\."),
    (["study", "parity " + "9" * 5000], r"parity's bits must be from 1 to 16, got a number of "
                                        r"5000 digits\."),
    (["study", "xor", "-a", "backprop(learning_rate=[0.1, 1e999])"],
     r"learning_rate must be finite, got \[0\.1, 1e999\]"),
])
def test_cli_study_errors_are_one_line(capsys, argv, message):
    import re

    assert re.search(message, _one_line(capsys, [*argv, "-k", "2", "-T", "5", "-q"]))


def test_a_divergence_names_the_parameters_given():
    from fastnet import MLP, DivergenceError, train

    X, Y = _xor()
    with pytest.raises(DivergenceError) as exc:
        train(MLP(2, (2,), 1, seed=0, output_activation="linear"), X, Y, weight_decay=1e300,
              algorithm="backprop", max_epochs=20)
    assert "weight_decay=1e+300" in str(exc.value) and "learning rate" not in str(exc.value)
    with pytest.raises(DivergenceError) as exc:      # (inputs x 10: the default steps too long)
        train(MLP(2, (2,), 1, seed=0, output_activation="linear"), 10 * X, Y,
              algorithm="backprop", max_epochs=50)
    assert "backprop diverged at its default parameters" in str(exc.value)


def test_a_target_range_that_would_overflow_is_refused():
    from fastnet import MLP, train_rprop
    from fastnet.training import MAX_TARGET

    X, Y = _xor()
    assert MAX_TARGET == 1e100
    with pytest.raises(ValueError, match=r"`target_range` must lie within \+-1e\+100"):
        train_rprop(MLP(2, (2,), 1, seed=0), X, Y, target_range=(-1e307, 1e307))
    r = train_rprop(MLP(2, (2,), 1, seed=0), X, Y, target_range=(-1e100, 1e100), max_epochs=5)
    assert np.isfinite(r.train_error).all()


def test_make_encoder_is_bounded():
    from fastnet.datasets import MAX_ENCODER, make_encoder

    assert MAX_ENCODER == 1024 and make_encoder(MAX_ENCODER).train.X.shape == (1024, 1024)
    with pytest.raises(ValueError, match=r"`n` must be <= 1024, got 1025"):
        make_encoder(1025)


def test_data_of_huge_magnitude_are_named_in_a_divergence(tmp_path):
    import warnings

    from fastnet import MLP, DivergenceError, train_rprop
    from fastnet.datasets import read_proben1

    path = tmp_path / "big.dt"
    path.write_text(XOR_DT.format(0, 1, 1, 0).replace("1 0 1\n", "1e300 0 1\n"))
    f = read_proben1(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DivergenceError, match=r"The data reach 1e\+300 in magnitude"):
            train_rprop(MLP(2, (2,), 1, seed=0), f.X, f.Y, max_epochs=5)
        result = run_study(Study(str(path), ["rprop+"], trials=2, limit=5))
    assert result.algorithms[0].hamey.n_trials == 2        # (and no NumPy warning)


# ------------------------------------------------------------ non-regular files

@pytest.mark.parametrize("reader", ["MLP.load", "read_proben1", "estimator"])
def test_a_fifo_is_refused_at_once(tmp_path, reader):
    if reader == "estimator":
        needs("sklearn")
    import os
    import time

    from fastnet import MLP
    from fastnet.datasets import read_proben1

    fifo = tmp_path / "net.npz"
    os.mkfifo(fifo)
    if reader == "estimator":
        from fastnet.sklearn import RpropClassifier

        read = RpropClassifier.load
    else:
        read = {"MLP.load": MLP.load, "read_proben1": read_proben1}[reader]
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"net\.npz: is a FIFO, not a regular file"):
        read(fifo)
    with pytest.raises(ValueError, match="is a directory, not a regular file"):
        read(tmp_path)
    assert time.perf_counter() - t0 < 1


# ------------------------------------------------------------------ BLAS threads

def test_training_beside_other_threads_equals_a_run_alone_bit_for_bit(proben1_root):
    # threadpoolctl lets one "controlling" thread change OpenBLAS and ignores the
    # others: a hold taken by another thread left this thread's LM at two BLAS
    # threads (weights 2.6e-7 off after 60 epochs) and a restore from another
    # thread was dropped. fastnet sets the libraries itself.
    import threading

    from fastnet import MLP, train
    # (the BLAS thread limit: internal)
    from fastnet._blas import _blas_libraries, _set_num_threads, single_threaded_blas
    from fastnet.datasets import load_proben1

    X, Y = load_proben1("cancer1", proben1_root).train

    def lm():
        net = MLP(X.shape[1], (16,), Y.shape[1], seed=1)
        return train(net, X, Y, algorithm="lm", max_epochs=60, seed=0, init_scale=0.5,
                     blas_min=0).net.weights.copy()

    libs = _blas_libraries()
    before = [lib.num_threads for lib in libs]
    try:
        for lib in libs:
            _set_num_threads(lib, 2)
        if not libs or any(lib.num_threads != 2 for lib in libs):
            pytest.skip("no BLAS library that runs two threads here")
        alone = lm()
        held, done, stop = threading.Event(), threading.Event(), threading.Event()

        def hold():                        # another thread takes the limit first
            with single_threaded_blas():
                held.set()
                done.wait(60)

        def trainer(k):
            while not stop.is_set():
                train(MLP(X.shape[1], (8,), Y.shape[1], seed=k), X, Y,
                      algorithm=("scg", "lm", "rprop+")[k], max_epochs=5, seed=k,
                      init_scale=0.5, blas_min=0)

        def products():
            A = np.random.default_rng(0).random((200, 200))
            while not stop.is_set():
                A @ A

        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(60)
        others = [threading.Thread(target=trainer, args=(k,)) for k in range(3)]
        others.append(threading.Thread(target=products))
        for t in others:
            t.start()
        try:
            beside = lm()
        finally:
            done.set()
            holder.join(60)                # the holder ends first: this thread restores
            stop.set()
            for t in others:
                t.join(60)
        assert np.array_equal(beside, alone)
        assert [lib.num_threads for lib in libs] == [2] * len(libs)   # restored exactly
    finally:
        for lib, n in zip(libs, before):
            _set_num_threads(lib, n)


def test_standardize_takes_huge_values_without_numpy_warnings():
    # (found by this round's own pass over the new surfaces: np.std overflowed)
    import warnings

    from fastnet.datasets import standardize

    X = np.array([[1e300, 0.0], [-1e300, 1.0], [0.0, 0.0], [1e300, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (Z,) = standardize(X)
        assert np.isfinite(Z).all()
        assert np.allclose(Z.mean(axis=0), 0.0) and np.allclose(Z.std(axis=0), 1.0)
        with pytest.raises(ValueError, match=r"`others\[0\]` row 0, column 1: 1e\+300 lies "
                                             r"beyond float range"):
            standardize(np.array([[0.0, 1.0], [1.0, 1.0 + 1e-10]]), np.array([[0.0, 1e300]]))
    ordinary = np.random.default_rng(0).normal(size=(50, 3))
    (Z,) = standardize(ordinary)                  # unchanged, bit for bit, for ordinary data
    assert np.array_equal(Z, (ordinary - ordinary.mean(axis=0)) / ordinary.std(axis=0))


def test_export_errors_name_the_options_typed(tmp_path, capsys):
    from fastnet import MLP

    MLP(2, (2,), 1, seed=0).save(tmp_path / "n.npz")
    net = str(tmp_path / "n.npz")
    err = _one_line(capsys, ["export", net, "-f", "c", "-o", str(tmp_path)])
    assert err.startswith("fastnet: error: `--out` must name a file")
    err = _one_line(capsys, ["export", net, "-f", "c", "-o", str(tmp_path / "o.c"), "--name",
                             "1x"])
    assert err.startswith("fastnet: error: `--name` must be a C identifier")
