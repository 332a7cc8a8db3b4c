"""float32 networks through the Python API: MLP(dtype=...), astype, predict, the gradients,
training with every algorithm and in the lanes, save/load, the scikit-learn estimators,
export, the command line and the set-up records.

Tolerances: a float32 pass agrees with the float64 pass of the same (rounded) weights and
inputs to float32 rounding -- activations within 2 ulp of float32, sums of a few dozen
terms -- so within rtol 2e-5 on these small networks; gradients, summed over the
patterns in float32, within rtol 1e-4 (atol for components that cancel). Training
compounds rounding over epochs, so float32 and float64 runs are compared by what they
reach (successes, epochs to success), never weight for weight.
"""
import json
import pickle
import warnings

import numpy as np
import pytest

from fastnet import MLP, NoConvergenceWarning, Trainer, jacobian, train, value_and_grad
from fastnet.gradients import Objective
from fastnet.stopping import Correct
from fastnet.training import train_many, train_rprop_many

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
XOR_X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
XOR_Y = np.array([[0.], [1.], [1.], [0.]])


def _data(n=60, n_in=5, n_out=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_in))
    return X, np.tanh(X[:, :n_out] - 0.5 * X[:, -n_out:]) * 0.4 + 0.5


# ---------------------------------------------------------------- the network itself
@pytest.mark.parametrize("dtype,want", [("float32", F32), (np.float32, F32), (F32, F32), ("f4", F32),
                                        ("float64", F64), (np.float64, F64), (float, F64)])
def test_dtype_is_accepted_in_its_spellings(dtype, want):
    net = MLP(3, (4,), 2, seed=0, dtype=dtype)
    assert net.dtype == want and isinstance(net.dtype, np.dtype)
    assert net.weights.dtype == want
    assert MLP.from_proben1("4+2 l", 9, 2, seed=0, dtype=dtype).weights.dtype == want


@pytest.mark.parametrize("dtype", [np.float16, "int32", None, "nonsense", complex, np.longdouble])
def test_other_dtypes_are_refused_naming_what_is_accepted(dtype):
    with pytest.raises(ValueError, match=r"`dtype` must be float64 or float32 \(\"float64\", "
                                         r"np.float64, \"float32\" or np.float32\), got "):
        MLP(2, (2,), 1, dtype=dtype)


def test_float64_stays_the_default_and_float32_draws_the_same_weights_rounded():
    net = MLP(3, (4,), 2, seed=7)
    assert net.dtype == F64
    np.testing.assert_array_equal(net.weights, MLP(3, (4,), 2, seed=7, dtype="float64").weights)
    for init in ("uniform", "glorot", "fan_in"):
        w64 = MLP(3, (4,), 2, seed=7, init=init).weights
        w32 = MLP(3, (4,), 2, seed=7, init=init, dtype="float32").weights
        np.testing.assert_array_equal(w32, w64.astype(np.float32))
    assert "float32" in repr(MLP(3, (4,), 2, dtype="float32")) and "float" not in repr(net)


def test_astype_copies_rounds_and_widens():
    net = MLP(3, (4,), 2, seed=1)
    same = net.astype("float64")
    assert same == net and same is not net and not np.shares_memory(same.weights, net.weights)
    net32 = net.astype(np.float32)
    assert net32.dtype == F32 and net32 != net             # (networks of two dtypes differ)
    np.testing.assert_array_equal(net32.weights, net.weights.astype(np.float32))
    back = net32.astype("float64")
    np.testing.assert_array_equal(back.weights, net32.weights.astype(np.float64))   # exact
    copy32 = net32.astype("float32")
    assert copy32 == net32 and not np.shares_memory(copy32.weights, net32.weights)
    assert net32.copy().dtype == F32
    with pytest.raises(ValueError, match="`dtype` must be float64 or float32"):
        net.astype("int8")
    big = net.copy().set_weights(np.full(net.n_connections, 1e39))
    with pytest.raises(ValueError, match=r"float32 range .*1e\+39"):
        big.astype("float32")


def test_set_weights_and_params_of_a_float32_network_round_and_refuse_beyond_its_range():
    net = MLP(2, (3,), 1, seed=0, dtype="float32")
    w = np.linspace(-1.0, 1.0, net.n_connections) / 3.0
    net.set_weights(w)
    assert net.weights.dtype == F32
    np.testing.assert_array_equal(net.weights, w.astype(np.float32))
    with pytest.raises(ValueError, match=r"`w` must lie within the float32 range .* at index 4"):
        net.set_weights(np.where(np.arange(net.n_connections) == 4, 4e38, 0.5))
    W, b = net.get_params()
    assert all(v.dtype == F32 for v in W.values())
    W = {k: v.astype(np.float64) for k, v in W.items()}
    W[(0, 1)][0, 0] = 1e40
    with pytest.raises(ValueError, match="`W` and `b` must lie within the float32 range"):
        net.set_params(W, b)
    with pytest.raises(ValueError, match="float32 range"):
        MLP(2, (3,), 1, seed=0, dtype="float32", init_scale=1e50)


def test_save_and_load_record_and_restore_the_dtype(tmp_path):
    net = MLP(4, (3,), 2, seed=2, dtype="float32")
    net.save(tmp_path / "net.npz")
    with np.load(tmp_path / "net.npz") as f:
        assert json.loads(str(f["config"]))["dtype"] == "float32"
        assert f["weights"].dtype == F32
    got = MLP.load(tmp_path / "net.npz")
    assert got == net and got.dtype == F32
    MLP(4, (3,), 2, seed=2).save(tmp_path / "net64.npz")
    with np.load(tmp_path / "net64.npz") as f:
        assert json.loads(str(f["config"]))["dtype"] == "float64"
    assert MLP.load(tmp_path / "net64.npz").dtype == F64


def test_files_written_before_float32_load_as_float64(tmp_path):
    from fastnet.network import FORMAT_VERSION

    net = MLP(4, (3,), 2, seed=3)
    config = {"n_in": 4, "hidden": [3], "n_out": 2, "shortcut": True,
              "hidden_activation": "proben1", "output_activation": "linear"}
    np.savez(tmp_path / "old.npz", format_version=np.array(FORMAT_VERSION),
             config=np.array(json.dumps(config)), weights=np.array(net.weights))
    old = MLP.load(tmp_path / "old.npz")
    assert old.dtype == F64 and old == net
    # weights of another dtype than the configuration says: refused, naming both
    np.savez(tmp_path / "bad.npz", format_version=np.array(FORMAT_VERSION),
             config=np.array(json.dumps({**config, "dtype": "float32"})),
             weights=np.array(net.weights))
    with pytest.raises(ValueError, match=r"the weights must be float32 of shape \(\d+,\) .*got float64"):
        MLP.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "odd.npz", format_version=np.array(FORMAT_VERSION),
             config=np.array(json.dumps({**config, "dtype": "float16"})),
             weights=np.array(net.weights))
    with pytest.raises(ValueError, match=r"`dtype` must be one of \['float64', 'float32'\], got 'float16'"):
        MLP.load(tmp_path / "odd.npz")


def test_pickles_keep_the_dtype_and_old_pickles_restore_float64():
    from fastnet._network_io import checksum

    net32 = MLP(3, (2,), 1, seed=4, dtype="float32")
    got = pickle.loads(pickle.dumps(net32))
    assert got == net32 and got.dtype == F32
    net = MLP(3, (2,), 1, seed=4)
    state = net.__getstate__()
    config = {k: v for k, v in state["config"].items() if k != "dtype"}   # (as before float32)
    old = {**state, "config": config, "sha256": checksum(config, state["weights"])}
    restored = MLP.__new__(MLP)
    restored.__setstate__(old)
    assert restored == net and restored.dtype == F64


# --------------------------------------------------------------------------- export
def test_export_follows_the_networks_dtype_unless_told():
    from fastnet.export import to_c

    net32 = MLP(2, (2,), 1, hidden_activation="tanh", seed=0, dtype="float32")
    source = to_c(net32, name="n32")
    assert "void n32(const float *n32_x, float *n32_y)" in source and "double" not in source
    wide = to_c(net32, name="n64", dtype="float64")                # a deliberate choice
    assert "void n64(const double *n64_x, double *n64_y)" in wide
    assert "void n(const double *n_x, double *n_y)" in to_c(net32.astype("float64"), name="n")


def test_onnx_export_follows_the_networks_dtype():
    onnx = pytest.importorskip("onnx")
    from fastnet.export import to_onnx

    net32 = MLP(2, (2,), 1, hidden_activation="tanh", seed=0, dtype="float32")
    elem = to_onnx(net32).graph.input[0].type.tensor_type.elem_type
    assert elem == onnx.TensorProto.FLOAT
    elem = to_onnx(net32, dtype="float64").graph.input[0].type.tensor_type.elem_type
    assert elem == onnx.TensorProto.DOUBLE
    assert to_onnx(net32.astype("float64")).graph.input[0].type.tensor_type.elem_type == elem


# ------------------------------------------------------------------ set-ups, identities
def test_experiment_study_and_suite_record_the_dtype_and_float64_identities_are_unchanged():
    from fastnet.experiment import Experiment
    from fastnet.study import Study
    from fastnet.suite import Suite

    e64 = Experiment(problems=("cancer1",), networks=("linear",), runs=2)
    e32 = Experiment(problems=("cancer1",), networks=("linear",), runs=2, dtype=np.float32)
    assert e64.dtype == "float64" and e32.dtype == "float32"
    assert "dtype" not in e64.identity() and e32.identity()["dtype"] == "float32"
    assert e64.setup_hash() != e32.setup_hash()
    s64, s32 = Study("xor"), Study("xor", dtype="float32")
    assert "dtype" not in s64.identity(None) and s32.identity(None)["dtype"] == "float32"
    assert s64.cell_hash("rprop+", None) != s32.cell_hash("rprop+", None)
    u64, u32 = Suite(("xor",), ("rprop+",)), Suite(("xor",), ("rprop+",), dtype="float32")
    assert u64.to_dict()["dtype"] == "float64" and u32.to_dict()["dtype"] == "float32"
    assert "dtype" not in u64.identity("xor", None) and u32.identity("xor", None)["dtype"] == "float32"
    for make in (lambda: Experiment(problems=("cancer1",), dtype="float16"),
                 lambda: Study("xor", dtype="int8"), lambda: Suite(("xor",), ("rprop+",), dtype=None)):
        with pytest.raises(ValueError, match="`dtype` must be float64 or float32"):
            make()


def test_a_suite_directory_of_another_dtype_is_refused(tmp_path):
    from fastnet.suite import Suite
    from fastnet._files import refuse_other_dtype

    (tmp_path / "suite.json").write_text(json.dumps({"setup": {"budget": 1}}))    # (float64, older)
    refuse_other_dtype(tmp_path, "suite", "setup", Suite(("xor",), ("rprop+",)).dtype)
    with pytest.raises(ValueError, match=r"holds a suite trained in float64; a suite in float32 is "
                                         r"not mixed into it"):
        refuse_other_dtype(tmp_path, "suite", "setup", Suite(("xor",), ("rprop+",), dtype="float32").dtype)


@pytest.mark.parametrize("command", [["train", "cancer1"], ["bench", "-p", "cancer1", "-o", "x.jsonl"],
                                     ["study", "xor"], ["suite", "-p", "xor", "-a", "rprop+", "-o", "d"],
                                     ["reproduce", "proben1", "linear"]])
def test_command_line_dtype_option(command, capsys):
    from fastnet.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(command).dtype == "float64"
    assert parser.parse_args(command + ["--dtype", "float32"]).dtype == "float32"
    with pytest.raises(SystemExit):
        parser.parse_args(command + ["--dtype", "float16"])
    assert "invalid choice: 'float16'" in capsys.readouterr().err


def test_export_command_defaults_to_the_networks_dtype(tmp_path):
    from fastnet import cli

    MLP(2, (2,), 1, seed=0, dtype="float32").save(tmp_path / "n.npz")
    assert cli.main(["export", str(tmp_path / "n.npz"), "-f", "c", "-o", str(tmp_path / "n.c")]) == 0
    assert "const float *" in (tmp_path / "n.c").read_text()


def test_float64_set_up_records_its_dtype():
    r = train(MLP(2, (2,), 1, seed=0), XOR_X, XOR_Y, max_epochs=3)
    assert r.setup["dtype"] == "float64" and r.setup["network"]["dtype"] == "float64"
    assert "arithmetic: float64" in r.describe_setup()


def test_bench_resume_in_another_dtype_is_refused(tmp_path, proben1_root):
    from fastnet.experiment import Experiment, ResultFileError, run_experiment

    kw = dict(problems=("cancer1",), networks=("linear",), runs=1, options={"max_epochs": 5},
              root=str(proben1_root))
    path = tmp_path / "r.jsonl"
    run_experiment(Experiment(**kw), path)
    with pytest.raises(ResultFileError, match=r"different set-up \(dtype: file has None, this "
                                              r"experiment 'float32'\)"):
        run_experiment(Experiment(**kw, dtype="float32"), path)


def test_study_resume_in_another_dtype_is_refused(tmp_path):
    from fastnet.study import Study, run_study

    run_study(Study("xor", trials=3, limit=30), tmp_path, pictures=False)
    with pytest.raises(ValueError, match=r"holds a study trained in float64; a study in float32 "
                                         r"is not mixed into it"):
        run_study(Study("xor", trials=3, limit=30, dtype="float32"), tmp_path, pictures=False)


# ======================================================================================
# The tests below run the float32 kernels.
# ======================================================================================
@pytest.mark.parametrize("hidden_activation,output_activation", [
    ("tanh", "linear"), ("logistic", "logistic"), ("proben1", "proben1"), ("relu", "softmax")])
def test_float32_predict_agrees_with_float64_of_the_same_weights(hidden_activation, output_activation):
    rng = np.random.default_rng(5)
    net = MLP(6, (8, 5), 3, hidden_activation=hidden_activation,
              output_activation=output_activation, seed=5).astype("float32")
    for n in (1, 7, 300):                          # (the loops, the tiles, several blocks)
        X32 = rng.normal(size=(n, 6)).astype(np.float32)
        Y = net.predict(X32)
        assert Y.dtype == F32 and Y.shape == (n, 3)
        ref = net.astype("float64").predict(X32.astype(np.float64))
        np.testing.assert_allclose(Y, ref, rtol=2e-5, atol=1e-6)
        # float64 inputs are rounded to float32, silently: the same outputs
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(net.predict(X32.astype(np.float64)), Y)
        out = np.empty((n, 3), np.float32)
        assert net.predict(X32, out=out) is out
        np.testing.assert_array_equal(out, Y)
    with pytest.raises(TypeError, match="`out` must have dtype float32, got float64"):
        net.predict(X32, out=np.empty((300, 3)))


def test_float64_network_takes_float32_inputs_widened_with_a_warning():
    net = MLP(3, (4,), 2, seed=0)
    X = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    with pytest.warns(UserWarning, match="dtype='float32' to compute in float32"):
        Y = net.predict(X)
    assert Y.dtype == F64
    np.testing.assert_array_equal(Y, net.predict(X.astype(np.float64)))


def test_float32_gradients_agree_with_float64():
    X, Y = _data()
    net = MLP(5, (7,), 3, hidden_activation="tanh", output_activation="logistic",
              seed=1).astype("float32")
    wide = net.astype("float64")
    E, g = value_and_grad(net, X, Y)
    E64, g64 = value_and_grad(wide, X.astype(np.float32).astype(np.float64),
                              Y.astype(np.float32).astype(np.float64))
    assert type(E) is float and g.dtype == F32
    assert E == pytest.approx(E64, rel=1e-5)
    np.testing.assert_allclose(g, g64, rtol=1e-4, atol=1e-5 * np.abs(g64).max())
    J = jacobian(net, X)
    assert J.dtype == F32
    np.testing.assert_allclose(J, jacobian(wide, X.astype(np.float32).astype(np.float64)),
                               rtol=1e-4, atol=1e-6)
    obj = Objective(net, X, Y)
    w64 = wide.weights + 1e-9                 # (a float64 point, as scipy passes: rounded)
    e1, g1 = obj(w64)
    e2, g2 = obj(w64.astype(np.float32))
    assert e1 == e2 and g1.dtype == F32
    np.testing.assert_array_equal(g1, g2)
    assert obj(net.weights).error == E
    with pytest.raises(TypeError, match="`out` must have dtype float32, got float64"):
        obj(net.weights, out=np.empty(net.n_connections))


def test_float32_gradient_passes_finite_differences_in_float32_terms():
    # central differences of the float32 network's objective (summed in float64) with a
    # step where float32's rounding of the weights and outputs stays small: h = 1e-2
    X, Y = _data(n=20, n_in=3, n_out=2)
    net = MLP(3, (4,), 2, hidden_activation="tanh", seed=3).astype("float32")
    obj = Objective(net, X, Y)
    w = net.weights.astype(np.float64)
    g = obj.grad(net.weights)
    h = 1e-2
    fd = np.array([(obj.value(w + h * e) - obj.value(w - h * e)) / (2 * h)
                   for e in np.eye(w.size)])
    np.testing.assert_allclose(g, fd, rtol=2e-2, atol=2e-3 * np.abs(fd).max())


ALGORITHMS = ["rprop+", "irprop-", "backprop", "backprop(mode='online')", "quickprop", "adam",
              "scg", "lm", "lbfgs"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_trains_a_float32_network(algorithm):
    X, Y = _data()
    net = MLP(5, (6,), 3, hidden_activation="tanh", output_activation="logistic", seed=2)
    kw = dict(algorithm=algorithm, max_epochs=15, seed=0, init_scale=0.5)   # (drawn alike, rounded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        r32 = train(net.astype("float32"), X, Y, **kw)
        again = train(net.astype("float32"), X, Y, **kw)
        r64 = train(net.copy(), X, Y, **kw)
    assert r32.net.dtype == F32 and r32.net.weights.dtype == F32
    assert r32.train_error.dtype == F64 and np.isfinite(r32.train_error).all()
    assert r32.setup["dtype"] == "float32"
    # one seed reproduces a float32 run bit for bit
    np.testing.assert_array_equal(again.net.weights, r32.net.weights)
    np.testing.assert_array_equal(again.train_error, r32.train_error)
    # the first epoch's error is that of the same weights, rounded: float32 rounding apart
    assert r32.train_error[0] == pytest.approx(r64.train_error[0], rel=1e-5)
    if algorithm not in ("scg", "lm", "lbfgs"):     # (their cost depends on the trajectory)
        assert r32.traversals == r64.traversals and r32.epochs == r64.epochs


def test_float64_data_is_converted_once_and_trains_as_float32_data():
    X, Y = _data()
    net = MLP(5, (6,), 3, seed=2, dtype="float32")
    a = train(net.copy(), X, Y, max_epochs=10)
    b = train(net.copy(), X.astype(np.float32), Y.astype(np.float32), max_epochs=10)
    np.testing.assert_array_equal(a.net.weights, b.net.weights)
    np.testing.assert_array_equal(a.train_error, b.train_error)


def test_trainer_runs_add_up_to_one_run_in_float32():
    X, Y = _data()
    net = MLP(5, (6,), 3, seed=2, dtype="float32")
    one = train(net.copy(), X, Y, max_epochs=9, algorithm="irprop-")
    tr = Trainer(net.copy(), X, Y, algorithm="irprop-")
    tr.run(4)
    tr.run(5)
    np.testing.assert_array_equal(tr.net.weights, one.net.weights)
    assert tr.net.weights.dtype == F32


@pytest.mark.parametrize("method", ["lanes", "serial"])
def test_train_many_in_float32(method):
    X, Y = _data()
    net = MLP(5, (6,), 3, hidden_activation="tanh", output_activation="logistic",
              dtype="float32")
    kw = dict(n_trials=20, seed=3, max_epochs=20, method=method)
    res = train_rprop_many(net, X, Y, **kw)
    assert res.weights.dtype == F32
    again = train_rprop_many(net, X, Y, **kw)
    np.testing.assert_array_equal(res.weights, again.weights)
    ref = train_rprop_many(net.astype("float64"), X, Y, **kw)
    assert [res.trial(i).traversals for i in range(20)] == [ref.trial(i).traversals for i in range(20)]
    np.testing.assert_array_equal(res.epochs, ref.epochs)
    np.testing.assert_allclose(res.train_error[:, 0], ref.train_error[:, 0], rtol=1e-5)
    for algorithm in ("adam", "backprop(mode='online')", "scg"):
        many = train_many(net, X, Y, n_trials=9, seed=1, max_epochs=5, algorithm=algorithm,
                          method="serial" if algorithm == "scg" else method)
        assert many.weights.dtype == F32 and np.isfinite(many.train_error).all()


def test_xor_takes_as_many_epochs_in_float32_as_in_float64():
    # The study's default network (tanh hidden, logistic outputs), 40 trials to 40-20-40
    # success: the success counts and the median epochs agree closely (each trial's path
    # parts from float64's by rounding, so not trial for trial).
    out = {}
    for dtype in ("float64", "float32"):
        net = MLP(2, (2,), 1, hidden_activation="tanh", output_activation="logistic", dtype=dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoConvergenceWarning)
            r = train_rprop_many(net, XOR_X, XOR_Y, n_trials=40, seed=0, init_scale=1.0,
                                 stop=Correct(), strip=1, max_epochs=1000)
        ok = np.array([s == "correct" for s in r.stop_reason])
        out[dtype] = (ok.sum(), np.median(r.epochs[ok]))
    (n64, m64), (n32, m32) = out["float64"], out["float32"]
    assert n64 >= 30 and abs(int(n32) - int(n64)) <= 3
    assert abs(m32 - m64) <= 0.25 * m64


def test_sklearn_keeps_float32_as_scikit_learns_mlp_does():
    pytest.importorskip("sklearn")
    from fastnet.sklearn import RpropClassifier, RpropRegressor

    X, Y = _data(n=80)
    y = np.argmax(Y, axis=1)
    clf = RpropClassifier((5,), max_iter=20, random_state=0).fit(X.astype(np.float32), y)
    assert clf.net_.dtype == F32
    assert clf.predict_proba(X.astype(np.float32)).dtype == F32
    assert clf.predict_proba(X).dtype == F64                  # (float64 in: float64 arithmetic)
    assert clf.predict(X.astype(np.float32)).dtype == y.dtype
    clf64 = RpropClassifier((5,), max_iter=20, random_state=0).fit(X, y)
    assert clf64.net_.dtype == F64 and clf64.predict_proba(X.astype(np.float32)).dtype == F64
    reg = RpropRegressor((5,), max_iter=20, random_state=0).fit(X.astype(np.float32), Y[:, 0])
    assert reg.net_.dtype == F32 and reg.predict(X.astype(np.float32)).dtype == F32
    part = RpropRegressor((5,), random_state=0).partial_fit(X.astype(np.float32), Y[:, 0])
    part.partial_fit(X, Y[:, 0])                               # (the first call's dtype kept)
    assert part.net_.dtype == F32
    loaded = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(loaded.predict_proba(X.astype(np.float32)),
                                  clf.predict_proba(X.astype(np.float32)))


def test_a_float32_bench_records_its_dtype(tmp_path, proben1_root):
    from fastnet.experiment import Experiment, run_experiment

    path = tmp_path / "r32.jsonl"
    run_experiment(Experiment(problems=("cancer1",), networks=("linear",), runs=2,
                              options={"max_epochs": 10}, root=str(proben1_root),
                              dtype="float32"), path)
    header, *runs = [json.loads(line) for line in path.read_text().splitlines()]
    assert header["identity"]["dtype"] == "float32"
    assert header["checklist"]["cancer1/linear"]["dtype"] == "float32"
    assert [r["dtype"] for r in runs] == ["float32", "float32"]


def test_train_many_list_form_in_float32_and_one_dtype_per_batch():
    X, Y = _data()
    nets = [MLP(5, (6,), 3, dtype="float32") for _ in range(3)]
    res = train_rprop_many(nets, X, Y, seeds=[0, 1, 2], max_epochs=5, init_scale=0.5,
                           method="serial")
    assert res.weights.dtype == F32
    for k, net in enumerate(nets):                 # (each network holds its trained weights)
        assert net.weights.dtype == F32
        np.testing.assert_array_equal(net.weights, res.weights[k])
    with pytest.raises(ValueError, match=r"`nets\[1\]` differs from `nets\[0\]` in dtype"):
        train_rprop_many([MLP(5, (6,), 3, dtype="float32"), MLP(5, (6,), 3)], X, Y,
                         seeds=[0, 1], max_epochs=5, init_scale=0.5)


def test_data_beyond_float32s_range_is_refused_for_a_float32_network():
    net = MLP(2, (2,), 1, seed=0, dtype="float32")
    with pytest.raises(ValueError, match=r"`X` must lie within the float32 range .*1e\+39 at row 1, "
                                         r"column 0"):
        net.predict([[0.0, 0.0], [1e39, 0.0]])
    with pytest.raises(ValueError, match="`X` must be finite; found nan at row 0, column 1"):
        net.predict(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="`Y` must lie within the float32 range"):
        train(net, XOR_X, XOR_Y * 1e300, max_epochs=2)


def test_command_line_trains_in_float32(proben1_root, capsys, tmp_path):
    from fastnet import cli

    assert cli.main(["train", "cancer1", "-n", "linear", "--dtype", "float32", "-q",
                     "--max-epochs", "10", "--data", str(proben1_root),
                     "--save", str(tmp_path / "n.npz")]) == 0
    out = capsys.readouterr().out
    assert "connections, float32)" in out and "arithmetic: float32" in out
    assert MLP.load(tmp_path / "n.npz").dtype == F32


def test_a_float32_study_trains_in_the_lanes_queue_and_records_its_dtype(tmp_path):
    from fastnet.study import Study, run_study

    got = {}
    for dtype in ("float64", "float32"):
        out = tmp_path / dtype
        result = run_study(Study("xor", trials=40, limit=300, dtype=dtype), out, pictures=False)
        h = result.algorithms[0].hamey
        got[dtype] = (h.n_successes, float(np.median(result.algorithms[0].epochs)))
        assert json.loads((out / "study.json").read_text())["study"]["dtype"] == dtype
    (n64, m64), (n32, m32) = got["float64"], got["float32"]
    assert abs(n32 - n64) <= 4 and abs(m32 - m64) <= 0.25 * m64 + 2


def test_a_float32_scg_study_batch_runs_in_the_lanes_kernel():
    # (the lanes' SCG trains float32 trials in float64 and rounds their final weights)
    got = {}
    for dtype in ("float64", "float32"):
        net = MLP(2, (2,), 1, hidden_activation="tanh", output_activation="logistic", dtype=dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoConvergenceWarning)
            r = train_many(net, XOR_X, XOR_Y, n_trials=30, seed=0, init_scale=1.0, algorithm="scg",
                           stop=Correct(), strip=1, max_epochs=300)
        assert r.weights.dtype == dtype
        got[dtype] = sum(s == "correct" for s in r.stop_reason)
    assert got["float64"] >= 15 and abs(got["float32"] - got["float64"]) <= 3


@pytest.mark.parametrize("strip", [1, 5])
@pytest.mark.parametrize("rule", ["irprop-", "rprop+"])
def test_a_long_float32_success_study_stays_in_the_lanes(rule, strip, monkeypatch):
    # In float32 a weight bound below which nothing overflows (_lanes.safe_weight: about
    # 2.2e4 here) is within RPROP's reach (steps of at most delta_max = 50) over 3000
    # epochs. The queue watches it in the kernel, and the strips cut their calls into
    # spans that no trial can overflow in, on the check's beat, where a bound over the
    # whole run sent every trial to the single-network kernels (five times slower). The
    # trials end as in a run short enough for the bound not to matter, bit for bit, in
    # the queue and in the strips.
    from fastnet.training import _many_trials as many_trials
    from fastnet.training import draw_trials

    net = MLP(10, [5], 10, hidden_activation="tanh", output_activation="logistic",
              shortcut=False, dtype="float32")
    X = np.eye(10, dtype=np.float32)
    W = draw_trials(net, 64, 0, 1.0)[0].astype(np.float32)
    kw = dict(algorithm=rule, initial_weights=W, stop=Correct(0.4), strip=strip)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        short = train_many(net, X, X, max_epochs=400, **kw)
        long = train_many(net, X, X, max_epochs=3000, **kw)
        monkeypatch.setattr(many_trials, "train_queued", lambda loop, history=True: None)
        strips = train_many(net, X, X, max_epochs=3000, **kw)
    assert short[0].setup["batch"]["queued"] and long[0].setup["batch"]["queued"]
    assert not strips[0].setup["batch"]["queued"]
    assert long[0].setup["batch"]["handoffs"] == strips[0].setup["batch"]["handoffs"] == []
    done = short.epochs < 400
    assert done.sum() >= 60
    for got in (long, strips):
        np.testing.assert_array_equal(got.epochs[done], short.epochs[done])
        np.testing.assert_array_equal(got.weights[done], short.weights[done])
