"""Serving trained networks: predict's fast path, and the ONNX and C exports.

Every path is held to the plain-NumPy forward pass of tests/_reference.py:
1e-12 (relative, and absolute for outputs near 0) in float64, float32 rounding
for the float32 exports.
"""
import ctypes
import itertools
import shutil
import subprocess
import sys
import threading
import time
import tracemalloc
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import _reference as ref
from _extras import needs
from fastnet import MLP, train_rprop
from fastnet.cli import main
from fastnet.export import C_KEYWORDS, to_c, to_onnx
from fastnet.network import HIDDEN_ACTIVATIONS
from fastnet._kernels import _forward

OUTPUT_ACTIVATIONS = ("linear", "proben1", "logistic", "tanh", "relu", "softmax")
HIDDEN = ((), (5,), (6, 4))
TOL = dict(rtol=1e-12, atol=1e-12)


def _inputs(n, n_in, seed=0, scale=3.0):
    return np.random.default_rng(seed).normal(0.0, scale, (n, n_in))


def _networks():
    """Every hidden x output activation, 0-2 hidden layers, with and without shortcuts
    (cycled so that each activation pair meets each topology at least once)."""
    topologies = list(itertools.product(HIDDEN, (True, False)))
    nets = []
    for i, (hidden_act, out_act) in enumerate(itertools.product(HIDDEN_ACTIVATIONS,
                                                                 OUTPUT_ACTIVATIONS)):
        for k in range(2):
            hidden, shortcut = topologies[(2 * i + k) % len(topologies)]
            n_out = 3 if out_act == "softmax" else 2
            nets.append(MLP(7, hidden, n_out, shortcut=shortcut, hidden_activation=hidden_act,
                            output_activation=out_act, init_scale=1.5, seed=10 * i + k))
    return nets


NETWORKS = _networks()


def _issue_networks():
    """The three networks a user's report named: 7-6+4-3 tanh/softmax with shortcuts,
    5-5-1 logistic, and Proben1's 9-4+2-2 (linear outputs, shortcuts)."""
    return [MLP(7, (6, 4), 3, hidden_activation="tanh", output_activation="softmax", seed=1),
            MLP(5, (5,), 1, shortcut=False, hidden_activation="logistic",
                output_activation="logistic", seed=2),
            MLP.from_proben1("4+2 l", 9, 2).init_weights(3)]


# ------------------------------------------------------------------ predict
@pytest.mark.parametrize("net", NETWORKS + _issue_networks(), ids=repr)
def test_predict_matches_the_numpy_forward_pass(net):
    # 1 and 3 rows (loops), 8 and 9 (vector products), across the stack buffer's size
    # and several heap blocks with a last block of fewer than 8 rows
    for n in (1, 3, 8, 9, 4096 // net._stride, 4096 // net._stride + 1, 3 * net._block + 5):
        X = _inputs(n, net.n_in, seed=n)
        assert_allclose(net.predict(X), ref.predict(net, X), **TOL)


def test_predict_converts_what_is_not_c_contiguous_float64():
    net = NETWORKS[7]
    X = _inputs(20, 7)
    expected = net.predict(X)
    for other in (np.asfortranarray(X), X.astype(np.float32).astype(np.float64),
                  X.tolist(), np.vstack([X, X])[::2], X[:, :, None][:, :, 0]):
        assert_allclose(net.predict(other), ref.predict(net, np.asarray(other, float)), **TOL)
    assert_array_equal(net.predict(np.asfortranarray(X)), expected)
    with pytest.warns(UserWarning, match="`X` has dtype float32"):
        assert_allclose(net.predict(X.astype(np.float32)), ref.predict(net, X.astype(np.float32)),
                        **TOL)
    assert net.predict(np.zeros((0, 7))).shape == (0, net.n_out)


def test_predict_writes_into_out():
    net = NETWORKS[3]
    X = _inputs(50, 7)
    out = np.full((50, net.n_out), np.nan)
    assert net.predict(X, out=out) is out
    assert_array_equal(out, net.predict(X))
    empty = np.empty((0, net.n_out))
    assert net.predict(np.zeros((0, 7)), out=empty) is empty
    # converted inputs still write into out
    out2 = np.empty((50, net.n_out))
    assert net.predict(X.tolist(), out=out2) is out2
    assert_array_equal(out2, out)


@pytest.mark.parametrize("out,exc,match", [
    ([[0.0, 0.0]] * 4, TypeError, "`out` must be a numpy.ndarray"),
    (np.empty((4, 2), np.float32), TypeError, "`out` must have dtype float64, got float32"),
    (np.empty((4, 3)), ValueError, r"`out` must have shape \(4, 2\).*got \(4, 3\)"),
    (np.empty((5, 2)), ValueError, r"`out` must have shape \(4, 2\)"),
    (np.empty((2, 4)).T, ValueError, "C-contiguous and writeable"),
    (np.empty((4, 4))[:, :2], ValueError, "C-contiguous and writeable"),
])
def test_predict_refuses_an_out_it_cannot_write(out, exc, match):
    net = MLP(3, (4,), 2, seed=0)
    with pytest.raises(exc, match=match):
        net.predict(np.zeros((4, 3)), out=out)


def test_predict_refuses_read_only_and_overlapping_out():
    net = MLP(3, (4,), 3, seed=0)
    X = np.zeros((4, 3))
    ro = np.empty((4, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        net.predict(X, out=ro)
    with pytest.raises(ValueError, match="must not share memory with `X`"):
        net.predict(X, out=X)
    buf = np.zeros(30)
    with pytest.raises(ValueError, match="must not share memory with `X`"):
        net.predict(buf[:12].reshape(4, 3), out=buf[6:18].reshape(4, 3))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("n", [1, 300])
def test_predict_refuses_non_finite_inputs_by_position(bad, n):
    net = MLP(3, (4,), 2, seed=0)
    X = np.zeros((n, 3))
    X[n - 1, 2] = bad
    with pytest.raises(ValueError, match=rf"`X` must be finite; found {bad} at row {n - 1}, column 2"):
        net.predict(X)
    out = np.zeros((n, 2))
    with pytest.raises(ValueError, match="finite"):
        net.predict(X, out=out)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("n", [1, 7, 5000])
@pytest.mark.parametrize("act", ["tanh", "logistic", "relu", "proben1"])
def test_predict_without_shortcuts_refuses_non_finite_inputs(bad, n, act):
    # Without shortcuts the inputs are checked through the first layer's net inputs
    # (saturating units would turn an infinite input into a finite output); a zero
    # weight on the bad input must not hide it (0 * inf is NaN), in any block.
    net = MLP(3, (4, 3), 2, shortcut=False, hidden_activation=act, seed=0)
    W, b = net.get_params()
    W[(0, 1)][2, :] = 0.0                      # input 2 -> first hidden layer: zeros
    net.set_params(W, b)
    X = np.zeros((n, 3))
    X[n - 1, 2] = bad
    with pytest.raises(ValueError, match=rf"`X` must be finite; found {bad} at row {n - 1}, column 2"):
        net.predict(X)


def test_predict_of_overflowing_finite_inputs_is_not_an_input_error():
    # Finite inputs whose net inputs overflow are computed as before (not refused as
    # non-finite inputs): tanh units saturate to finite outputs.
    net = MLP(3, (4,), 1, shortcut=False, hidden_activation="tanh", seed=0)
    X = np.full((9, 3), 1e308)
    W, b = net.get_params()
    with np.errstate(over="ignore", invalid="ignore"):
        h = np.tanh(X @ W[(0, 1)] + b[1])
        ref = h @ W[(1, 2)] + b[2]
    with warnings.catch_warnings():
        # (outputs that overflowed are reported: the next test)
        warnings.simplefilter("ignore", RuntimeWarning)
        y = net.predict(X)
    np.testing.assert_array_equal(np.isfinite(y), np.isfinite(ref))
    np.testing.assert_allclose(y[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-12)


def _overflowing_relu_net(shortcut):
    net = MLP(3, (4,), 2, shortcut=shortcut, hidden_activation="relu", seed=0)
    net.set_weights(np.abs(net.weights) * 3.0)
    return net


@pytest.mark.parametrize("n", [1, 7, 5000])
@pytest.mark.parametrize("shortcut", [False, True])
@pytest.mark.parametrize("use_out", [False, True])
def test_predict_warns_when_finite_inputs_overflow(n, shortcut, use_out):
    # Finite inputs whose outputs overflow (inf here): returned as computed, as a
    # NumPy forward pass gives them, with a RuntimeWarning that counts them, in
    # any block and on both the stack and the heap path.
    net = _overflowing_relu_net(shortcut)
    X = np.ones((n, 3))
    X[n - 1] = 1e308
    out = np.empty((n, 2)) if use_out else None
    with pytest.warns(RuntimeWarning, match=rf"^predict: 2 of the {2 * n} outputs overflowed "
                                            r"to inf or NaN \(the inputs are finite, the largest "
                                            r"of magnitude 1e\+308\)"):
        y = net.predict(X, out=out)
    if use_out:
        assert y is out
    W, b = net.get_params()
    with np.errstate(over="ignore", invalid="ignore"):
        h = np.maximum(X @ W[(0, 1)] + b[1], 0.0)
        ref = h @ W[(1, 2)] + b[2] + (X @ W[(0, 2)] if shortcut else 0.0)
    assert not np.isfinite(ref[n - 1]).any() and np.isfinite(ref[: n - 1]).all()
    np.testing.assert_array_equal(np.isfinite(y), np.isfinite(ref))
    np.testing.assert_allclose(y[: n - 1], ref[: n - 1], rtol=1e-12)


def test_predict_does_not_warn_when_nothing_overflows():
    net = _overflowing_relu_net(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = net.predict(np.ones((5, 3)) * 1e300)
    assert np.isfinite(y).all()


def test_predict_with_out_allocates_nothing_in_python():
    net = MLP(10, (8,), 1, shortcut=False, hidden_activation="tanh",
              output_activation="logistic", seed=0)
    for n in (1, 40, 5000):              # stack buffer, stack buffer, heap blocks
        X, out = _inputs(n, 10), np.empty((n, 1))
        tracemalloc.start()
        try:
            # (a first call while tracing: what the interpreter allocates once and keeps
            # is not predict's and is not counted)
            net.predict(X, out=out)
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            for _ in range(200):
                net.predict(X, out=out)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        # (without the vector products a large batch enters the BLAS thread limit: a few
        # kilobytes of Python objects, 16-18 KB measured, nothing in proportion to the
        # batch: an output array of these 5000 rows alone would be 40 KB. With them, the
        # interpreter's own frames: none on Python 3.11 and 3.12, whose frames live on a
        # stack of their own; on 3.10 a frame object for each of the two Python functions
        # on the way, 1.7 kB measured after other tests had run, where 1 kB held before)
        limit = 24576 if _forward.simd_level() == "default" and n > 100 else 4096
        assert peak < limit, f"{n} rows: predict(X, out) allocated {peak} bytes"
        # without out: the returned array, nothing in proportion to the activations
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            net.predict(X)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert peak < 8 * n + limit, f"{n} rows: predict(X) allocated {peak} bytes"


def test_predict_releases_the_gil():
    net = MLP(32, (64, 64), 4, hidden_activation="tanh", seed=0)
    X = _inputs(60_000, 32)
    t0 = time.perf_counter()
    net.predict(X)
    one = time.perf_counter() - t0
    done = threading.Event()

    def worker():
        for _ in range(3):
            net.predict(X)
        done.set()

    thread = threading.Thread(target=worker)
    stamps = [time.perf_counter()]
    thread.start()
    while not done.is_set():
        stamps.append(time.perf_counter())
        time.sleep(0.0005)
    thread.join()
    gap = np.diff(stamps).max()
    assert gap < 0.5 * one, f"main thread stalled {gap:.4f} s while one predict takes {one:.4f} s"


def test_predict_while_the_network_trains_is_allowed_and_finite():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(200, 4)), rng.normal(size=(200, 1))
    net = MLP(4, (8,), 1, hidden_activation="tanh", seed=0)
    outputs, errors = [], []

    def trainer():
        try:
            train_rprop(net, X, Y, max_epochs=3000)
        except Exception as exc:          # pragma: no cover (the assertion shows it)
            errors.append(exc)

    thread = threading.Thread(target=trainer)
    thread.start()
    while thread.is_alive():
        outputs.append(net.predict(X[:50]))
    thread.join()
    assert not errors and outputs
    assert all(o.shape == (50, 1) and np.isfinite(o).all() for o in outputs)


# ------------------------------------------------------------------ ONNX
def _onnx_run(model, X):
    ort = needs("onnxruntime")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), opts,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {"x": X})[0]


@pytest.mark.parametrize("net", NETWORKS + _issue_networks(), ids=repr)
def test_onnx_export_equals_predict(net):
    needs("onnx")
    X = _inputs(64, net.n_in)
    expected = net.predict(X)
    assert_allclose(_onnx_run(to_onnx(net), X), expected, **TOL)
    y32 = _onnx_run(to_onnx(net, dtype="float32"), X.astype(np.float32))
    assert y32.dtype == np.float32
    assert_allclose(y32, expected, rtol=1e-5, atol=1e-5)


def test_onnx_model_describes_the_network_and_is_written(tmp_path):
    onnx = needs("onnx")
    net = _issue_networks()[0]
    path = tmp_path / "net.onnx"
    model = to_onnx(net, path, name="classifier")
    back = onnx.load(str(path))
    assert back == model
    assert model.graph.name == "classifier" and model.opset_import[0].version == 13
    (x,), (y,) = model.graph.input, model.graph.output
    assert [d.dim_value or d.dim_param for d in x.type.tensor_type.shape.dim] == ["n", 7]
    assert [d.dim_value or d.dim_param for d in y.type.tensor_type.shape.dim] == ["n", 3]
    assert {n.op_type for n in model.graph.node} == {"Concat", "Gemm", "Tanh", "Softmax"}


def test_onnx_export_errors(monkeypatch):
    # (the arguments are checked before onnx is imported: runs without it too)
    net = MLP(2, (2,), 1, seed=0)
    with pytest.raises(TypeError, match="`net` must be a fastnet.MLP, got dict"):
        to_onnx({"weights": [1.0]})
    with pytest.raises(ValueError, match="`dtype` must be 'float64', 'float32' or None .*got 'int8'"):
        to_onnx(net, dtype="int8")
    with pytest.raises(ValueError, match="`dtype` must be 'float64', 'float32' or None .*got 'half'"):
        to_onnx(net, dtype="half")
    with pytest.raises(ValueError, match="`name` must be a non-empty string"):
        to_onnx(net, name="")
    with pytest.raises(TypeError, match="`name` must be a string, got int"):
        to_onnx(net, name=3)
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r'pip install onnx onnxruntime'):
        to_onnx(net)


# ------------------------------------------------------------------ C
def _compile(source, tmp_path, stem="nets"):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:                                    # pragma: no cover
        pytest.fail("no C compiler (cc) on PATH: the C export cannot be checked")
    c_file, lib = tmp_path / f"{stem}.c", tmp_path / f"{stem}.so"
    c_file.write_text(source)
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror",
                    "-shared", "-fPIC", str(c_file), "-o", str(lib), "-lm"],
                   check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib))


def _c_batch(lib, name, X, n_out, dtype):
    X = np.ascontiguousarray(X, dtype=dtype)
    Y = np.full((X.shape[0], n_out), np.nan, dtype=dtype)
    fn = getattr(lib, f"{name}_batch")
    fn.restype = None
    fn(X.ctypes.data_as(ctypes.c_void_p), Y.ctypes.data_as(ctypes.c_void_p),
       ctypes.c_size_t(X.shape[0]))
    return Y


def _c_one(lib, name, x, n_out, dtype):
    x = np.ascontiguousarray(x, dtype=dtype)
    y = np.full(n_out, np.nan, dtype=dtype)
    fn = getattr(lib, name)
    fn.restype = None
    fn(x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p))
    return y


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_c_export_compiles_and_equals_predict(dtype, tmp_path):
    nets = NETWORKS + _issue_networks()
    # one translation unit for all: each export is self-contained and prefixed by its name
    source = "\n".join(to_c(net, name=f"net{i}", dtype=dtype) for i, net in enumerate(nets))
    lib = _compile(source, tmp_path)
    for i, net in enumerate(nets):
        X = _inputs(40, net.n_in, seed=i)
        expected = net.predict(X)
        got = _c_batch(lib, f"net{i}", X, net.n_out, dtype)
        if dtype == "float64":
            assert_allclose(got, expected, **TOL, err_msg=repr(net))
        else:
            assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=repr(net))
        assert_array_equal(_c_one(lib, f"net{i}", X[7], net.n_out, dtype), got[7])


def test_c_export_default_name_and_sizes(tmp_path):
    net = _issue_networks()[2]
    path = tmp_path / "proben1.c"
    source = to_c(net, path)
    assert path.read_text() == source
    assert "void fastnet_predict(const double *x, double *y)" in source
    assert "#define FASTNET_PREDICT_N_INPUTS 9" in source and "FASTNET_PREDICT_N_OUTPUTS 2" in source
    assert "#include" in source and set(
        line for line in source.splitlines() if line.startswith("#include")) == {
        "#include <math.h>", "#include <stddef.h>"}
    assert "malloc" not in source
    lib = _compile(source, tmp_path, "proben1")
    X = _inputs(10, 9)
    assert_allclose(_c_batch(lib, "fastnet_predict", X, 2, "float64"), net.predict(X), **TOL)


def test_c_export_refuses_networks_too_large_for_c(monkeypatch):
    import fastnet.export

    monkeypatch.setattr(fastnet.export, "MAX_C_CONNECTIONS", 20)
    with pytest.raises(ValueError, match="25 connections, more than MAX_C_CONNECTIONS"):
        to_c(MLP(2, (3,), 4, shortcut=False, seed=0))     # (2+1)*3 + (3+1)*4 = 25
    to_c(MLP(2, (3,), 1, shortcut=False, seed=0))          # 13 weights: fine


def test_c_export_writes_weights_exactly():
    net = MLP(3, (2,), 1, seed=5)
    w = net.weights.copy()
    w[0], w[1], w[2] = 1e-300, -5e-324, 0.1 + 0.2             # extremes round-trip too
    net.set_weights(w)
    source = to_c(net)
    numbers = [float(v.strip().rstrip("f")) for block in source.split("= {")[1:]
               for v in block.split("}")[0].replace("\n", " ").split(",")]
    assert np.array_equal(np.array(numbers), w)


@pytest.mark.parametrize("name", ["1net", "a-b", "", "x" * 54, "naïve", "net\n", "net\r\n", " net"])
def test_c_export_refuses_names_that_are_not_c_identifiers(name):
    with pytest.raises(ValueError, match="`name` must be a C identifier"):
        to_c(MLP(2, (), 1, seed=0), name=name)


def test_c_export_errors(tmp_path):
    with pytest.raises(TypeError, match="`name` must be a string"):
        to_c(MLP(2, (), 1, seed=0), name=3)
    for dtype in ("float16", "int8", complex):
        with pytest.raises(ValueError, match="`dtype` must be 'float64', 'float32' or None"):
            to_c(MLP(2, (), 1, seed=0), dtype=dtype)
    with pytest.raises(ValueError, match="`path` must name a file, got the directory"):
        to_c(MLP(2, (), 1, seed=0), tmp_path)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        to_c(MLP(2, (), 1, seed=0), tmp_path / "missing" / "net.c")
    with pytest.raises(TypeError, match="`path` must be a str or path-like"):
        to_c(MLP(2, (), 1, seed=0), 3)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="`net` must be a fastnet.MLP"):
        to_c("net.npz")
    with pytest.raises(ValueError, match="`dtype`"):
        to_c(MLP(2, (), 1, seed=0), dtype=np.int32)
    assert {"int", "double", "restrict", "_Bool"} <= C_KEYWORDS


# ------------------------------------------------------------------ CLI
def test_cli_export_both_formats(tmp_path, capsys):
    net = _issue_networks()[0]
    net.save(tmp_path / "net.npz")
    assert main(["export", str(tmp_path / "net.npz"), "--format", "c", "-o",
                 str(tmp_path / "net.c"), "--name", "classify"]) == 0
    lib = _compile((tmp_path / "net.c").read_text(), tmp_path, "cli")
    X = _inputs(5, 7)
    assert_allclose(_c_batch(lib, "classify", X, 3, "float64"), net.predict(X), **TOL)
    onnx = needs("onnx")
    assert main(["export", str(tmp_path / "net.npz"), "-f", "onnx", "-o",
                 str(tmp_path / "net.onnx")]) == 0

    assert_allclose(_onnx_run(onnx.load(str(tmp_path / "net.onnx")), X), net.predict(X), **TOL)
    assert "wrote" in capsys.readouterr().err


def test_cli_export_errors_are_one_line(tmp_path, capsys):
    assert main(["export", str(tmp_path / "missing.npz"), "-f", "c", "-o",
                 str(tmp_path / "x.c")]) == 1
    MLP(2, (), 1, seed=0).save(tmp_path / "n.npz")
    assert main(["export", str(tmp_path / "n.npz"), "-f", "c", "-o", str(tmp_path / "x.c"),
                 "--name", "int"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("fastnet: error:") == 2
    assert not (tmp_path / "x.c").exists()
    assert main(["export", str(tmp_path / "n.npz"), "-f", "pdf", "-o", "x"]) == 2
