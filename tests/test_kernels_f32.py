"""The single-network kernels in float32: against NumPy float32 references and the float64
kernels, finite differences in float32 terms, reproducibility, and the error sums in double.

Tolerances: a float32 pass differs from a NumPy float32 reference by the summation order
of its products (a few ulp of float32, 2^-24 ~ 6e-8 each, on values of order 1): rtol
2e-5 with atol 2e-6. Gradients are compared with the float64 gradient at the same
(float32) weights, relative to the largest component: 1e-4 (float32 rounding of the
activations, deltas and products compounds over the layers). Training runs compound
over the epochs and are compared over a few epochs only (rtol 1e-3).
"""
import numpy as np
import pytest
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import MLP, _engine
from fastnet._kernels import _backprop, _backward, _forward, _per_weight, _rprop
from fastnet._kernels._rules import RULES, Rule
from fastnet.network import ACTIVATIONS

F32 = np.float32
NETS = [
    (3, (), 2, True), (4, (5,), 3, False), (5, (4, 3), 2, True), (6, (5, 4, 3), 3, False),
    (7, (9, 6), 5, True), (3, (40,), 2, False), (20, (70, 9), 10, False), (17, (8,), 1, True),
]
PATHS = {"blas": 0, "loops": 10**12}


def make(n_in, hidden, n_out, shortcut, hidden_act="proben1", out_act="linear", seed=0, n=23):
    net = MLP(n_in, hidden, n_out, shortcut=shortcut, hidden_activation=hidden_act,
              output_activation=out_act)
    net.init_weights(seed, scale=0.8)
    net.set_weights(net.weights.astype(F32))      # (weights both types hold exactly)
    rng = np.random.default_rng(seed + 100)
    X = rng.uniform(-1, 1, (n, n_in)).astype(F32).astype(float)
    T = rng.uniform(0, 1, (n, n_out)).astype(F32).astype(float)
    return net, X, T


def rows32(net, X):
    """Float32 activation rows of X (the layout of _engine.activations)."""
    A = np.full((X.shape[0], _engine.row_stride(net)), np.nan, dtype=F32)
    A[:, :net.n_in] = X
    return A


def forward32(net, X):
    """NumPy float32 reference forward pass (tests/_reference.forward in float32)."""
    W, b = net.get_params()
    acts = {0: np.asarray(X, dtype=F32)}
    for j in range(1, net.n_layers + 1):
        z = np.tile(b[j].astype(F32), (X.shape[0], 1))
        for i in range(j):
            if (i, j) in W:
                z = z + acts[i] @ W[(i, j)].astype(F32)
        acts[j] = ref._act(net, j)[0](z).astype(F32)
    return acts[net.n_layers]


def outputs(net, A):
    return A[:, net.n_units - net.n_out:net.n_units]


def workspaces(net, block, dtype=F32):
    nn = net.n_units - net.n_in
    return np.full((block, nn), np.nan, dtype), np.full((block, nn), np.nan, dtype)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("spec", NETS)
@pytest.mark.parametrize("act", ["proben1", "logistic", "tanh", "linear", "relu"])
def test_forward_f32_matches_numpy_float32(spec, act, path):
    net, X, T = make(*spec, hidden_act=act, out_act=act if act != "relu" else "linear")
    A = rows32(net, X)
    assert _forward.forward(A, net.layer_table, net.n_in, net.weights.astype(F32), 5,
                            PATHS[path]) == 0
    assert A.dtype == F32
    assert_allclose(outputs(net, A), forward32(net, X), rtol=2e-5, atol=2e-6)
    assert_allclose(outputs(net, A), ref.predict(net, X), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("spec", NETS)
def test_predict_f32_in_f32_out(spec):
    net, X, _ = make(*spec, hidden_act="tanh", out_act="logistic", n=300)
    w = net.weights.astype(F32)
    Y = _forward.predict(X.astype(F32), None, net.layer_table, w, _engine.row_stride(net), 64,
                         4096, True)
    assert Y.dtype == F32
    assert_allclose(Y, forward32(net, X), rtol=2e-5, atol=2e-6)
    # float64 inputs to a float32 pass are the caller's to convert: not prepared
    assert _forward.predict(X, None, net.layer_table, w, _engine.row_stride(net), 64, 4096,
                            True) == _forward.PREDICT_NOT_PREPARED
    Y64 = _forward.predict(X, None, net.layer_table, net.weights, _engine.row_stride(net), 64,
                           4096, True)
    assert Y64.dtype == np.float64


def test_sum_squared_error_f32_accumulates_in_double():
    net, X, T = make(9, (7,), 3, True, hidden_act="tanh", out_act="logistic", n=2000)
    A = rows32(net, X)
    sse = _forward.sum_squared_error(A, T.astype(F32), net.layer_table, net.n_in,
                                     net.weights.astype(F32), 64, 4096)
    Y = outputs(net, A).astype(float)
    assert sse == pytest.approx(np.sum((Y - T) ** 2), rel=1e-12)


def test_sum_squared_error_f32_does_not_drift_on_the_largest_proben1_set(proben1_root):
    # mushroom1: 8124 examples, 125 inputs, 2 outputs (the most examples of Proben1)
    from fastnet.datasets import load_proben1
    data = load_proben1("mushroom1", root=proben1_root)
    X = np.concatenate([data.train[0], data.val[0], data.test[0]])
    T = np.concatenate([data.train[1], data.val[1], data.test[1]])
    net = MLP(X.shape[1], (4,), T.shape[1], hidden_activation="tanh",
              output_activation="logistic").init_weights(3, scale=0.5)
    w = net.weights.astype(F32)
    A = rows32(net, X.astype(F32))
    sse = _forward.sum_squared_error(A, T.astype(F32), net.layer_table, net.n_in, w, 128, 4096)
    exact = np.sum((outputs(net, A).astype(float) - T) ** 2)
    assert sse == pytest.approx(exact, rel=1e-6)


def kernel_gradient32(net, X, T, blas_min, block, loss=0, decay=0.0):
    A = rows32(net, X)
    D, Dl = workspaces(net, block)
    g = np.empty(net.n_connections, F32)
    e = _backward.gradient(A, T.astype(F32), net.layer_table, net.n_in, net.weights.astype(F32),
                           g, D, Dl, blas_min, loss, decay)
    return g, e


@pytest.mark.parametrize("block", [4, 64])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("spec", NETS)
def test_gradient_f32_agrees_with_float64_at_the_same_weights(spec, path, block):
    net, X, T = make(*spec, hidden_act="tanh", out_act="logistic")
    g, e = kernel_gradient32(net, X, T, PATHS[path], block)
    assert g.dtype == F32
    g64, e64 = ref.gradient(net, X, T)
    assert np.max(np.abs(g - g64)) <= 1e-4 * np.max(np.abs(g64))
    assert e == pytest.approx(e64, rel=1e-5)


@pytest.mark.parametrize("loss,out_act,decay", [(0, "linear", 0.0), (0, "softmax", 0.01),
                                                (1, "softmax", 0.0), (1, "logistic", 0.003)])
def test_gradient_f32_finite_differences(loss, out_act, decay):
    # Central differences of the float64 objective at the float32 weights (h = 1e-6):
    # the float32 gradient's error is float32 rounding, relative 1e-4 of the largest.
    net, X, T = make(4, (5, 3), 3, True, hidden_act="tanh", out_act=out_act)
    if out_act == "softmax":
        T = T / T.sum(axis=1, keepdims=True)
    g, _ = kernel_gradient32(net, X, T, 4096, 8, loss, decay)
    A64 = _engine.activations(net, X)
    D, Dl = workspaces(net, 8, np.float64)
    w0 = net.weights.copy()
    fd = np.empty_like(w0)
    for i in range(len(w0)):
        vals = []
        for h in (1e-6, -1e-6):
            w = w0.copy()
            w[i] += h
            vals.append(_backward.objective(A64, T, net.layer_table, net.n_in, w, D, Dl, 4096,
                                            loss, decay))
        fd[i] = (vals[0] - vals[1]) / 2e-6
    assert np.max(np.abs(g - fd)) <= 1e-4 * np.max(np.abs(fd))


def test_objective_f32_matches_gradient_value():
    net, X, T = make(5, (4,), 2, False, hidden_act="logistic", out_act="logistic")
    g, e = kernel_gradient32(net, X, T, 4096, 8, 1, 0.01)
    D, Dl = workspaces(net, 8)
    v = _backward.objective(rows32(net, X), T.astype(F32), net.layer_table, net.n_in,
                            net.weights.astype(F32), D, Dl, 4096, 1, 0.01)
    assert v == e


def _rule(name):
    params = {"rprop": dict(eta_plus=1.2, eta_minus=0.5, delta_min=0.0, delta_max=50.0),
              "backprop": dict(learning_rate=0.1, momentum=0.5, decay=0.0),
              "quickprop": dict(epsilon=0.5, mu=1.75, decay=0.0, threshold=0.0, momentum=0.0),
              "adam": dict(learning_rate=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8)}
    return Rule(name, **params["rprop" if "rprop" in name else name])


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_step_f32_is_the_float64_step_to_float32_rounding(name):
    rng = np.random.default_rng(7)
    n = 200
    arrays = [rng.standard_normal(n).astype(F32) for _ in range(5)]
    arrays[3] = np.abs(arrays[3]) * F32(0.1)            # steps >= 0
    arrays[1][::7] = 0                                  # zero gradients
    arrays[2][::5] = -arrays[1][::5]                    # sign changes
    w32, g32, gp32, st32, dw32 = (a.copy() for a in arrays)
    w64, g64, gp64, st64, dw64 = (a.astype(float) for a in arrays)
    rule = _rule(name)
    t32, t64 = np.array([2], np.intp), np.array([2], np.intp)
    for rose in (False, True):
        _per_weight.rule_step(rule, w32, g32, gp32, st32, dw32, t32, 10, rose)
        _per_weight.rule_step(rule, w64, g64, gp64, st64, dw64, t64, 10, rose)
        assert w32.dtype == F32
        for a32, a64 in ((w32, w64), (gp32, gp64), (st32, st64), (dw32, dw64)):
            assert_allclose(a32, a64, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("variant", range(4))
def test_rprop_step_f32_equals_rule_step(variant):
    rng = np.random.default_rng(variant)
    n = 50
    g = rng.standard_normal(n).astype(F32)
    gp = np.where(rng.random(n) > 0.5, g, -g).astype(F32)
    w, st, dw = (rng.standard_normal(n).astype(F32) for _ in range(3))
    st = np.abs(st)
    a = [x.copy() for x in (w, g, gp, dw, st)]
    _rprop.rprop_step(variant, *a, 1.2, 0.5, 0.0, 50.0, True)
    b = [x.copy() for x in (w, g, gp, st, dw)]
    name = ["rprop_plus", "rprop_minus", "irprop_minus", "irprop_plus"][variant]
    _per_weight.rule_step(_rule(name), *b, np.array([0], np.intp), 1, True)
    assert a[0].tobytes() == b[0].tobytes()


def run_epochs(net, X, T, rule, dtype, n_epochs=15, batch=0, check_every=0):
    n, nw = X.shape[0], net.n_connections
    A = _engine.activations(net, X).astype(dtype) if dtype == np.float64 else rows32(net, X)
    w = net.weights.astype(dtype)
    st = np.full(nw, 0.1, dtype)
    states = [np.zeros(nw, dtype), st if rule.code < 4 else np.zeros(nw, dtype), np.zeros(nw, dtype)]
    D, Dl = workspaces(net, 16, dtype)
    if batch:
        order = np.array([np.random.default_rng(e).permutation(n) for e in range(n_epochs)])
        B, TB = np.zeros((batch, A.shape[1]), dtype), np.zeros((batch, net.n_out), dtype)
    else:
        order = np.zeros((0, 0), np.intp)
        B, TB = np.zeros((1, 1), dtype), np.zeros((1, 1), dtype)
    sse = np.zeros(n_epochs)
    status = _per_weight.train_epochs(A, T.astype(dtype), net.layer_table, net.n_in, w,
                                      np.zeros(nw, dtype), *states, D, Dl, rule,
                                      np.array([0], np.intp), n_epochs, np.array([np.inf]),
                                      order, B, TB, sse, 4096, check_every, 0.4, -1.0, 16)
    return w, sse, status


@pytest.mark.parametrize("batch", [0, 7])
@pytest.mark.parametrize("name", sorted(RULES))
def test_train_epochs_f32_follows_float64_and_reproduces(name, batch):
    net, X, T = make(4, (5,), 2, True, hidden_act="tanh", out_act="logistic", n=40)
    rule = _rule(name)
    w32, sse32, s32 = run_epochs(net, X, T, rule, F32, batch=batch)
    w64, sse64, s64 = run_epochs(net, X, T, rule, np.float64, batch=batch)
    assert w32.dtype == F32 and sse32.dtype == np.float64
    assert s32 == s64 == 0
    if name == "quickprop":
        # (Quickprop's step divides by the change of a weight's gradient: where two
        # successive gradients nearly agree, float32's rounding of them grows by their
        # quotient, so the two runs part within 15 mini-batch epochs -- weights 25 % apart
        # in the sanitizer build, which contracts products and sums otherwise -- while
        # their errors stay within 0.2 %: the weights are compared after 3 epochs)
        assert_allclose(sse32, sse64, rtol=1e-2)
        w32, _, _ = run_epochs(net, X, T, rule, F32, batch=batch, n_epochs=3)
        w64, _, _ = run_epochs(net, X, T, rule, np.float64, batch=batch, n_epochs=3)
    else:
        assert_allclose(sse32, sse64, rtol=1e-3)
    assert_allclose(w32, w64, rtol=1e-3, atol=1e-3)
    w32, sse32, _ = run_epochs(net, X, T, rule, F32, batch=batch)
    w32b, sse32b, _ = run_epochs(net, X, T, rule, F32, batch=batch)
    assert w32b.tobytes() == w32.tobytes() and sse32b.tobytes() == sse32.tobytes()


def test_train_epochs_f32_success_check_stops():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], float)
    T = np.array([[0], [1], [1], [0]], float)
    net = MLP(2, (3,), 1, hidden_activation="tanh", output_activation="logistic")
    net.init_weights(1)
    _, _, s32 = run_epochs(net, X, T, _rule("irprop_minus"), F32, n_epochs=500, check_every=1)
    _, _, s64 = run_epochs(net, X, T, _rule("irprop_minus"), np.float64, n_epochs=500,
                           check_every=1)
    assert s32 < 0 and s64 < 0
    assert abs(s32 - s64) <= 2


def test_online_epochs_f32_follows_float64():
    net, X, T = make(3, (4,), 2, True, hidden_act="tanh", out_act="logistic", n=30)
    runs = {}
    for dtype in (F32, np.float64, F32):
        A = rows32(net, X) if dtype == F32 else _engine.activations(net, X)
        w = net.weights.astype(dtype)
        D, Dl = workspaces(net, 1, dtype)
        sse = np.zeros(10)
        order = np.array([np.random.default_rng(e).permutation(30) for e in range(10)])
        assert _backprop.online_epochs(A, T.astype(dtype), net.layer_table, net.n_in, w,
                                       np.zeros_like(w), np.zeros_like(w), D, Dl,
                                       np.full(10, 0.2), 0.5, order, sse, 4096) == 0
        runs.setdefault(np.dtype(dtype).name, []).append((w, sse))
    (w32, sse32), (w32b, sse32b) = runs["float32"]
    (w64, sse64), = runs["float64"]
    assert w32.tobytes() == w32b.tobytes() and sse32.tobytes() == sse32b.tobytes()
    assert_allclose(sse32, sse64, rtol=1e-4)
    assert_allclose(w32, w64, rtol=1e-4, atol=1e-5)


def _ulps(a, b):
    """Distance in float32 ulps (order-preserving integer images; NaN to NaN is 0)."""
    ia, ib = (np.asarray(x, F32).view(np.int32).astype(np.int64) for x in (a, b))
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    d = np.abs(ia - ib)
    return np.where(np.isnan(a) & np.isnan(b), 0, d)


EDGES = np.array([0.0, -0.0, 1e-38, -1e-38, 1.17549435e-38, 1e-40, -1e-40, 1e-45, -1e-45,
                  1e-20, -1e-20, 1e-4, 0.5, -0.5, 9.0, -9.0, 9.1, 10.0, 20.0, -20.0, 1e4, -1e4,
                  1e30, -1e30, 3.4028235e38, -3.4028235e38], dtype=F32)


def _tanh_net():
    net = MLP(1, (1,), 1, hidden_activation="tanh", output_activation="linear", shortcut=False)
    W, b = net.get_params()
    net.set_params({k: np.ones_like(v) for k, v in W.items()},
                   {k: np.zeros_like(v) for k, v in b.items()})
    return net


def test_tanh_f32_through_a_1_1_1_network_within_2_ulp():
    net = _tanh_net()
    w = net.weights.astype(F32)
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-10, 10, 500_000),
                        rng.choice([-1, 1], 500_000) * 10.0 ** rng.uniform(-12, 1.3, 500_000),
                        EDGES]).astype(F32)
    Y = _forward.predict(x[:, None], None, net.layer_table, w, _engine.row_stride(net), 1024,
                         4096, True)
    assert Y.dtype == F32
    exact = np.tanh(x.astype(float)).astype(F32)
    d = _ulps(Y[:, 0], exact)
    assert d.max() <= 2, (x[d.argmax()], Y[d.argmax(), 0], exact[d.argmax()])


def test_tanh_f32_edges_inf_nan_through_the_forward_pass():
    # predict refuses non-finite inputs (its caller explains); the pass itself maps them
    net = _tanh_net()
    x = np.array([np.inf, -np.inf, np.nan], F32)
    A = rows32(net, x[:, None])
    _forward.forward(A, net.layer_table, net.n_in, net.weights.astype(F32), 8, 4096)
    y = outputs(net, A)[:, 0]
    assert y[0] == 1 and y[1] == -1 and np.isnan(y[2])
    assert _forward.predict(x[:, None], None, net.layer_table, net.weights.astype(F32),
                            _engine.row_stride(net), 8, 4096, True) == _forward.PREDICT_NOT_FINITE


def test_mixed_dtypes_raise_type_error_naming_the_argument():
    net, X, T = make(4, (3,), 2, True)
    A, w = rows32(net, X), net.weights.astype(F32)
    D, Dl = workspaces(net, 8)
    with pytest.raises(TypeError, match="`w` must be float32.*float64"):
        _forward.forward(A, net.layer_table, net.n_in, net.weights, 8, 4096)
    with pytest.raises(TypeError, match="`T` must be float32"):
        _forward.sum_squared_error(A, T, net.layer_table, net.n_in, w, 8, 4096)
    with pytest.raises(TypeError, match="`Dl` must be float32"):
        _backward.gradient(A, T.astype(F32), net.layer_table, net.n_in, w, np.zeros_like(w), D,
                           Dl.astype(float), 4096)
    with pytest.raises(TypeError, match="`A` must be a float64 or float32 array, got dtype int64"):
        _forward.forward(np.zeros(A.shape, np.int64), net.layer_table, net.n_in, w, 8, 4096)
    with pytest.raises(TypeError, match="`step` must be float32"):
        _per_weight.rule_step(_rule("irprop_minus"), w, w.copy(), w.copy(), w.astype(float),
                              w.copy(), np.array([0], np.intp))


def test_activation_at_level_takes_float32():
    Z = np.linspace(-5, 5, 64, dtype=F32).reshape(4, 16)
    D = np.empty_like(Z)
    Z0 = Z.copy()
    assert _forward.activation_at_level(0, ACTIVATIONS["tanh"], Z, D)
    assert_allclose(Z, np.tanh(Z0.astype(float)), rtol=3e-7, atol=1e-7)
