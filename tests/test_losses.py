"""Objectives beyond squared error: relu units, softmax outputs, cross-entropy and
L2 weight decay -- gradients against finite differences, training against the
NumPy oracle (tests/_reference.py), the many-trials methods, bad values named."""

import _reference as ref
import numpy as np
import pytest
from _training_cases import METHODS, alone, assert_same_run, data, nets_for
from numpy.testing import assert_allclose

from fastnet import (MLP, jacobian, train_backprop, train_rprop,
                     train_rprop_many, value_and_grad)
from fastnet import _engine
from fastnet._kernels import _forward, _trials

H = 1e-6
SMALL = [(3, (), 2), (4, (5,), 3), (5, (4, 3), 2)]


def make(n_in, hidden, n_out, shortcut, hidden_act="proben1", out_act="linear", seed=0, n=23):
    net = MLP(n_in, hidden, n_out, shortcut=shortcut, hidden_activation=hidden_act,
              output_activation=out_act)
    net.init_weights(seed, scale=0.8)
    rng = np.random.default_rng(seed + 100)
    return net, rng.uniform(-1, 1, (n, n_in)), rng.uniform(0, 1, (n, n_out))


def central_differences(net, f):
    """(f(w + h e_c) - f(w - h e_c)) / 2h for every weight c, stacked as the last axis."""
    w0 = net.weights.copy()
    cols = []
    for c in range(w0.size):
        up, down = w0.copy(), w0.copy()
        up[c] += H
        down[c] -= H
        cols.append((f(net.set_weights(up)) - f(net.set_weights(down))) / (2 * H))
    net.set_weights(w0)
    return np.stack(cols, axis=-1)


def hidden_net_inputs(net, X):
    """Every hidden unit's net input (the oracle's), to keep relu away from its kink."""
    W, b = net.get_params()
    nets = ref.forward(net, W, b, X)[1]
    return np.concatenate([nets[j].ravel() for j in range(1, net.n_layers)] + [np.ones(1)])


# ------------------------------------------------------------------------ relu
def test_relu_kernel_values_and_the_kink():
    # f(x) = max(x, 0); f'(0) = 0; a NaN net input gives a NaN output (divergence shows)
    net = MLP(1, (), 1, output_activation="relu")
    net.set_weights([1.0, 0.0])
    assert_allclose(net.predict([[-2.0], [0.0], [3.5]]).ravel(), [0.0, 0.0, 3.5])
    _, g = value_and_grad(net, [[0.0]], [[1.0]])
    assert_allclose(g, [0.0, 0.0])                         # f'(0) = 0: no gradient at the kink
    _, g = value_and_grad(net, [[2.0]], [[1.0]])
    assert_allclose(g, [2.0 * 1.0 * 2.0, 2.0 * 1.0])       # 2 (o - t) f' x, 2 (o - t) f'
    A = _engine.activations(net, np.array([[np.nan]]))       # (the checks refuse NaN data)
    _forward.forward(A, net.layer_table, 1, net.weights, 1, 0)
    assert np.isnan(A[0, 1])


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("spec", SMALL[1:])
@pytest.mark.parametrize("out_act", ["linear", "logistic", "relu"])
def test_relu_value_and_grad_and_jacobian_match_finite_differences(spec, shortcut, out_act):
    net, X, T = make(*spec, shortcut, "relu", out_act, seed=3)
    assert np.abs(hidden_net_inputs(net, X)).min() > 10 * H   # away from the kink
    E, g = value_and_grad(net, X, T)
    fd = central_differences(net, lambda n: np.float64(n.sum_squared_error(X, T)))
    assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
    g_ref, E_ref = ref.gradient(net, X, T)
    assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)
    assert E == pytest.approx(E_ref, rel=1e-13)
    J = jacobian(net, X[:9])
    assert_allclose(J, central_differences(net, lambda n: n.predict(X[:9]).ravel()),
                    rtol=1e-6, atol=1e-8)
    assert_allclose(J, ref.jacobian(net, X[:9]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("variant", ["rprop+", "irprop+"])
@pytest.mark.parametrize("hidden, shortcut", [((3,), True), ((4, 2), False), ((3, 4, 2), True)])
def test_relu_lanes_kernel_matches_the_numpy_oracle(variant, hidden, shortcut):
    X, T = data()
    K, epochs = 9, 60
    nets = [MLP(4, hidden, 2, shortcut=shortcut, hidden_activation="relu", seed=s)
            for s in range(K)]
    steps = np.random.default_rng(5).uniform(0.05, 0.2, (K, nets[0].n_connections))
    L, C = _trials.LANES, nets[0].n_connections
    G = -(-K // L)
    flat = np.zeros((G * L, C))
    flat[:K] = [n.weights for n in nets]

    def to_lanes(a):
        return np.ascontiguousarray(a.reshape(G, L, C).transpose(0, 2, 1))

    w = to_lanes(flat.copy())
    flat[:K] = steps
    step = to_lanes(flat)
    status = np.zeros(G * L, np.int64)
    status[K:] = 1
    sse = np.zeros((G * L, epochs))
    code = {"rprop+": 0, "irprop+": 3}[variant]
    _trials.trials_rprop(nets[0].layer_table, 4, X, T, w, np.zeros_like(w), np.zeros_like(w),
                         np.zeros_like(w), step, np.full(G * L, np.inf), status,
                         np.zeros(_trials.work_size(nets[0].n_units)), code, 1.2, 0.5, 0.0,
                         50.0, sse)
    assert not status[:K].any()
    for i, net in enumerate(nets):
        err_ref, w_ref = ref.train_rprop(net, X, T, variant, epochs, steps[i])
        assert_allclose(sse[i], err_ref, rtol=1e-10)
        # atol: a weight at its optimum whose gradient is rounding noise takes steps
        # of ~1e-8 whose signs follow that noise (train_rprop differs from the oracle
        # by 9e-9 in one such bias of trial 3 of the 4-2 net, as the lanes do)
        assert_allclose(w[i // L, :, i % L], w_ref, rtol=1e-10, atol=1e-7)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("hidden, shortcut", [((5,), True), ((4, 3), False)])
def test_relu_many_trials_equal_train_rprop(method, hidden, shortcut):
    X, T = data(n=37)
    K = 11
    nets = nets_for(K, hidden, shortcut, hidden_activation="relu")
    seeds = list(range(20, 20 + K))
    kw = dict(max_epochs=60, init_scale=0.5, delta0=(0.05, 0.2))
    got = train_rprop_many(nets, X, T, seeds=seeds, method=method, **kw)
    for g, r in zip(got, alone(nets, seeds, X, T, **kw)):
        assert_same_run(g, r)
    if method == "lanes":
        assert got[0].setup["batch"]["method"] == "lanes"


def test_relu_training_matches_the_oracle_and_backprop_runs():
    X, T = data()
    net = MLP(4, (5, 3), 2, hidden_activation="relu", seed=1)
    res = train_rprop(net.copy(), X, T, max_epochs=60, delta0=0.1)
    err_ref, w_ref = ref.train_rprop(net, X, T, "rprop+", 60, np.full(net.n_connections, 0.1))
    assert_allclose(res.net.weights, w_ref, rtol=1e-10, atol=1e-12)
    assert_allclose(res.train_error, err_ref * 100.0 / (X.shape[0] * 2), rtol=1e-10)
    res = train_backprop(net.copy(), X, T, max_epochs=30, learning_rate=0.01, momentum=0.5)
    err_ref, w_ref = ref.train_backprop(net, X, T, 30, 0.01, 0.5)
    assert_allclose(res.net.weights, w_ref, rtol=1e-10, atol=1e-12)


def test_relu_networks_save_and_load(tmp_path):
    net = MLP(3, (4,), 2, hidden_activation="relu", output_activation="relu", seed=0)
    net.save(tmp_path / "n.npz")
    assert MLP.load(tmp_path / "n.npz") == net
    assert "relu" in repr(net) and net.proben1_spec is None
