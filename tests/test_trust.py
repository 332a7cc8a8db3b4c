"""Trust, round three: a resumed study's identity, weights written during training, caps
checked before anything is expanded or allocated, one-line CLI errors."""
import json

import numpy as np
import pytest

from fastnet.study import Study, run_study

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
    from fastnet.study import _run

    (tmp_path / what).mkdir() if what != "trials" else (tmp_path / what).write_text("")
    monkeypatch.setattr(_run, "_train", lambda *a: pytest.fail("trained first"))
    with pytest.raises(ValueError, match=f"{what} must be a"):
        run_study(Study("xor", ["rprop+"], trials=2, limit=5), tmp_path, pictures=False)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(epochs=[-1] + d["epochs"][1:]), "`epochs` must be 4 values"),
    (lambda d: d.update(epochs=["7"] + d["epochs"][1:]), "`epochs` must be 4 values"),
    (lambda d: d.update(epochs=d["epochs"][1:]), "`epochs` must be 4 values"),
    (lambda d: d.update(success=[2] * 4), "`success` must be 4 values"),
    (lambda d: d.update(cpu_time=[float("nan")] * 4), "`cpu_time` must be 4 values"),
    (lambda d: d.update(algorithm="backprop"), "not the trials of 'rprop\\+'"),
    (lambda d: d["identity"].update(limit=7), "not the trials of 'rprop\\+'"),
])
def test_a_hand_edited_trials_file_is_named(tmp_path, edit, message):
    study = Study("xor", ["rprop+"], trials=4, limit=50)
    run_study(study, tmp_path, pictures=False)
    (path,) = (tmp_path / "trials").glob("*.json")
    d = json.loads(path.read_text())
    edit(d)
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=f"{path.name}: {message}"):
        run_study(study, tmp_path, pictures=False)


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
