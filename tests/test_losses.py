"""Objectives beyond squared error: relu units, softmax outputs, cross-entropy and
L2 weight decay -- gradients against finite differences, training against the
NumPy oracle (tests/_reference.py), the many-trials methods, bad values named."""
import warnings
from dataclasses import dataclass

import _reference as ref
import numpy as np
import pytest
from _training_cases import METHODS, alone, assert_same_run, data, nets_for
from numpy.testing import assert_allclose
from test_gradients import SMALL, H, central_differences, make

from fastnet import (MLP, NoConvergenceWarning, jacobian, train, train_backprop, train_many,
                     train_rprop, train_rprop_many, value_and_grad)
# (the engine's activation buffers and workspace, as the kernels take them)
from fastnet import _engine
from fastnet._kernels import _backward, _forward, _trials
from fastnet.algorithms import LBFGS, RPROP, SCG, Adam, Algorithm, Quickprop, spec_of
from fastnet.network import ACTIVATIONS, HIDDEN_ACTIVATIONS
from fastnet.stopping import GL
from fastnet.training._checks import LOSSES  # (the kernels' loss codes)


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


# ------------------------------------------------------------------ objectives
#: (output activation, loss) pairs: every output with the SSE, probabilities with
#: cross-entropy.
OBJECTIVES = ([(out, "sse") for out in ACTIVATIONS]
              + [("softmax", "cross_entropy"), ("logistic", "cross_entropy")])


def targets(n, n_out, kind, seed=7):
    """Targets in [0, 1]: one-hot rows, or probabilities that need not sum to 1."""
    rng = np.random.default_rng(seed)
    if kind == "onehot":
        return np.eye(n_out)[rng.integers(0, n_out, n)]
    return rng.uniform(0, 1, (n, n_out))


def scale(X, T):
    return 100.0 / (X.shape[0] * T.shape[1])


@pytest.mark.parametrize("decay", [0.0, 0.03])
@pytest.mark.parametrize("out_act, loss", OBJECTIVES)
@pytest.mark.parametrize("hidden_act", list(HIDDEN_ACTIVATIONS))
def test_value_and_grad_of_every_objective_matches_finite_differences(hidden_act, out_act,
                                                                      loss, decay):
    net, X, _ = make(4, (5,), 3, True, hidden_act, out_act, seed=3)
    T = targets(X.shape[0], 3, "probabilities")
    if hidden_act == "relu":
        assert np.abs(hidden_net_inputs(net, X)).min() > 10 * H
    E, g = value_and_grad(net, X, T, loss=loss, weight_decay=decay)
    fd = central_differences(
        net, lambda n: np.float64(value_and_grad(n, X, T, loss=loss, weight_decay=decay)[0]))
    assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
    g_ref, E_ref = ref.objective_gradient(net, X, T, loss, decay)
    assert E == pytest.approx(E_ref, rel=1e-13)
    assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("out_act, loss", [("softmax", "sse"), ("softmax", "cross_entropy"),
                                           ("logistic", "cross_entropy")])
def test_objective_gradients_by_topology(spec, shortcut, out_act, loss):
    net, X, _ = make(*spec, shortcut, "tanh", out_act, seed=4)
    T = targets(X.shape[0], spec[2], "onehot")
    E, g = value_and_grad(net, X, T, loss=loss, weight_decay=0.01)
    g_ref, E_ref = ref.objective_gradient(net, X, T, loss, 0.01)
    assert E == pytest.approx(E_ref, rel=1e-13)
    assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)
    if out_act == "softmax" and loss == "cross_entropy":    # one-hot rows: delta = o - t
        Out = net.predict(X)
        assert_allclose(value_and_grad(net, X, T, loss=loss)[1][-spec[2]:],
                        (Out - T).sum(axis=0), rtol=1e-12, atol=1e-14)   # output biases


def test_weight_decay_worked_example():
    # one linear unit o = w x + b, w = 2, b = -1, x = 1, t = 0: o = 1
    # E = (1 - 0)^2 + 0.5 (2^2 + 1^2) = 3.5;  g = 2 (o - t) (x, 1) + 2 0.5 (w, b) = (4, 1)
    net = MLP(1, (), 1).set_weights([2.0, -1.0])
    E, g = value_and_grad(net, [[1.0]], [[0.0]], weight_decay=0.5)
    assert E == 3.5
    assert_allclose(g, [4.0, 1.0])
    E, g = value_and_grad(net, np.zeros((0, 1)), np.zeros((0, 1)), weight_decay=0.5)
    assert E == 2.5
    assert_allclose(g, [2.0, -1.0])


def test_cross_entropy_worked_example():
    # two softmax outputs, net inputs (0, log 3): o = (1/4, 3/4); t = (0, 1)
    # E = -log(3/4); the output deltas o - t = (1/4, -1/4) are the bias gradient
    net = MLP(1, (), 2, output_activation="softmax").set_weights([0.0, 0.0, 0.0, np.log(3.0)])
    E, g = value_and_grad(net, [[0.0]], [[0.0, 1.0]], loss="cross_entropy")
    assert E == pytest.approx(-np.log(0.75), rel=1e-15)
    assert_allclose(g, [0.0, 0.0, 0.25, -0.25], atol=1e-16)
    assert_allclose(net.predict([[0.0]]), [[0.25, 0.75]], rtol=1e-15)
    # a logistic output at net input 0: o = 1/2; t = 1: E = log 2, delta = -1/2
    net = MLP(1, (), 1, output_activation="logistic").set_weights([0.0, 0.0])
    E, g = value_and_grad(net, [[3.0]], [[1.0]], loss="cross_entropy")
    assert E == pytest.approx(np.log(2.0), rel=1e-15)
    assert_allclose(g, [-1.5, -0.5])


def test_cross_entropy_of_a_saturated_output_stays_finite():
    # o = 1 - 2^-60 rounds to 1.0 for t = 0: log(1 - o) takes the smallest normal double
    net = MLP(1, (), 1, output_activation="logistic").set_weights([0.0, 800.0])
    E, g = value_and_grad(net, [[0.0]], [[0.0]], loss="cross_entropy")
    assert E == pytest.approx(-np.log(np.finfo(float).tiny), rel=1e-15)   # 708.4
    assert_allclose(g, [0.0, 1.0])
    net = MLP(1, (), 3, output_activation="softmax").set_weights([0, 0, 0, 0, 0, 800.0])
    E, _ = value_and_grad(net, [[0.0]], [[1.0, 0.0, 0.0]], loss="cross_entropy")
    assert E == pytest.approx(800.0, rel=1e-15)           # log-softmax, exact


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("n_out, spec", [(2, (4, (), 2)), (3, (4, (5,), 3)),
                                         (3, (4, (4, 3), 3))])
def test_softmax_jacobian_matches_finite_differences(n_out, spec, shortcut):
    net, X, _ = make(*spec, shortcut, "tanh", "softmax", n=9)
    J = jacobian(net, X)
    assert_allclose(J, central_differences(net, lambda n: n.predict(X).ravel()),
                    rtol=1e-6, atol=1e-8)
    Out = net.predict(X)
    E, g = value_and_grad(net, X, targets(9, n_out, "onehot"))
    assert_allclose(g, 2 * J.T @ (Out - targets(9, n_out, "onehot")).ravel(), rtol=1e-12,
                    atol=1e-13)


# Training: RPROP and backpropagation on each objective against the oracle.
TRAINED = [("linear", "sse", 0.01), ("softmax", "sse", 0.0), ("softmax", "cross_entropy", 0.0),
           ("softmax", "cross_entropy", 0.003), ("logistic", "cross_entropy", 0.003)]


@pytest.mark.parametrize("out_act, loss, decay", TRAINED)
@pytest.mark.parametrize("hidden, shortcut", [((), True), ((3,), True), ((3,), False),
                                              ((4, 2), True), ((4, 2), False)])
@pytest.mark.parametrize("variant", ["rprop+", "irprop+"])
def test_rprop_on_each_objective_matches_the_oracle(variant, hidden, shortcut, out_act, loss,
                                                    decay):
    X, _ = data(n=30, n_out=3)
    T = targets(30, 3, "onehot")
    net = MLP(4, hidden, 3, shortcut=shortcut, hidden_activation="tanh",
              output_activation=out_act, seed=2, init_scale=0.5)
    # 50 epochs: RPROP's sign decisions (irprop+'s "did the error rise") turn a last-bit
    # difference into a different step, and the kernels' tanh, exp and logistic are
    # within 2 ulp of NumPy's, not equal to them (one run parted at epoch 55 of 60)
    res = train_rprop(net.copy(), X, T, max_epochs=50, delta0=0.05, variant=variant,
                      loss=loss, weight_decay=decay)
    err_ref, w_ref = ref.train_rprop_objective(net, X, T, variant, 50,
                                               np.full(net.n_connections, 0.05), loss, decay)
    # train_error records the objective, scaled as the SSE to a percentage
    assert_allclose(res.train_error, err_ref * scale(X, T), rtol=1e-10)
    assert_allclose(res.net.weights, w_ref, rtol=1e-10, atol=1e-12)
    # the final errors stay Proben1's: the squared error percentage of the weights
    assert res.final_train.squared_error_percentage == pytest.approx(
        ref.sse(res.net, X, T) * scale(X, T), rel=1e-12)
    assert res.setup["loss"] == loss and res.setup["weight_decay"] == decay


@pytest.mark.parametrize("mode", ["batch", "online"])
@pytest.mark.parametrize("out_act, loss, decay", TRAINED[2:] + [("relu", "sse", 0.01)])
def test_backprop_on_each_objective_matches_the_oracle(mode, out_act, loss, decay):
    X, _ = data(n=20, n_out=3)
    T = targets(20, 3, "onehot")
    net = MLP(4, (5,), 3, hidden_activation="relu" if out_act == "relu" else "tanh",
              output_activation=out_act, seed=2, init_scale=0.5)
    res = train_backprop(net.copy(), X, T, mode=mode, learning_rate=0.02, momentum=0.5,
                         max_epochs=20, seed=11 if mode == "online" else None, loss=loss,
                         weight_decay=decay)
    orders = None
    if mode == "online":                        # the order train_backprop draws from its seed
        rng = np.random.default_rng(11)
        orders = [rng.permutation(20) for _ in range(20)]
    err_ref, w_ref = ref.train_backprop_objective(net, X, T, 20, 0.02, 0.5, loss, decay,
                                                  orders=orders)
    assert_allclose(res.train_error, err_ref * scale(X, T), rtol=1e-10)
    assert_allclose(res.net.weights, w_ref, rtol=1e-10, atol=1e-12)


def test_train_takes_the_objective_and_defaults_stay_bit_identical():
    X, _ = data(n=30, n_out=3)
    T = targets(30, 3, "onehot")
    net = MLP(4, (3,), 3, output_activation="softmax", seed=0)
    a = train(net.copy(), X, T, algorithm="irprop+", max_epochs=40, loss="cross_entropy",
              weight_decay=1e-3)
    b = train_rprop(net.copy(), X, T, variant="irprop+", max_epochs=40, loss="cross_entropy",
                    weight_decay=1e-3)
    assert np.array_equal(a.net.weights, b.net.weights)
    net = MLP(4, (3,), 3, seed=0)
    plain = train_rprop(net.copy(), X, T, max_epochs=40)
    explicit = train_rprop(net.copy(), X, T, max_epochs=40, loss="sse", weight_decay=0.0)
    assert np.array_equal(plain.net.weights, explicit.net.weights)
    assert np.array_equal(plain.train_error, explicit.train_error)
    assert plain.setup["loss"] == "sse" and plain.setup["weight_decay"] == 0.0
    decayed = train_rprop(net.copy(), X, T, max_epochs=40, weight_decay=1e-3)
    assert not np.array_equal(plain.net.weights, decayed.net.weights)
    assert np.sum(decayed.net.weights ** 2) < np.sum(plain.net.weights ** 2)


def test_validation_and_early_stopping_use_proben1_measures():
    X, _ = data(n=30, n_out=3)
    T = targets(30, 3, "onehot")
    Xv, _ = data(n=20, n_out=3, seed=4)
    Tv = targets(20, 3, "onehot", seed=8)
    net = MLP(4, (3,), 3, output_activation="softmax", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        res = train_rprop(net, X, T, Xv, Tv, max_epochs=50, stop=GL(5), loss="cross_entropy")
    Out = ref.predict(res.net, Xv)
    assert res.final_val.squared_error_percentage == pytest.approx(
        np.sum((Out - Tv) ** 2) * scale(Xv, Tv), rel=1e-12)
    assert res.final_val.classification_error == pytest.approx(
        100 * np.mean(Out.argmax(1) != Tv.argmax(1)))


@pytest.mark.parametrize("method", METHODS)
def test_many_trials_of_softmax_networks_train_serially_and_equal_train_rprop(method):
    X, _ = data(n=30, n_out=3)
    T = targets(30, 3, "onehot")
    K = 9
    nets = nets_for(K, (4,), n_out=3, output_activation="softmax")
    seeds = list(range(K))
    kw = dict(max_epochs=30, init_scale=0.5)
    got = train_rprop_many(nets, X, T, seeds=seeds, method=method, **kw)
    assert got[0].setup["batch"]["method"] == "serial"
    for g, r in zip(got, alone(nets, seeds, X, T, **kw)):
        assert_same_run(g, r)


def test_softmax_networks_save_load_and_predict(tmp_path):
    net = MLP(3, (4,), 3, output_activation="softmax", seed=0)
    assert_allclose(net.predict(np.ones((2, 3))).sum(axis=1), 1.0, rtol=1e-15)
    net.save(tmp_path / "n.npz")
    assert MLP.load(tmp_path / "n.npz") == net
    assert net.proben1_spec is None and "softmax outputs" in repr(net)


# ------------------------------------------------------------------ bad values
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(loss="mse"), ValueError, r"`loss` must be one of \['cross_entropy', 'sse'\], "
                                   r"got 'mse'"),
    (dict(loss=None), TypeError, r"`loss` must be a string"),
    (dict(weight_decay=-0.1), ValueError, r"`weight_decay` must be in \[0.0, inf\), got -0.1"),
    (dict(weight_decay=np.nan), ValueError, r"`weight_decay` must be finite"),
    (dict(weight_decay="0.1"), TypeError, r"`weight_decay` must be a real number"),
    (dict(loss="cross_entropy"), ValueError,
     r"`loss`='cross_entropy' needs outputs that are probabilities, output_activation "
     r"'softmax' .* or 'logistic' .*, got output_activation='linear'"),
])
def test_bad_objectives_are_named(kwargs, error, match):
    X, T = data()
    net = MLP(4, (3,), 2, seed=0)
    for call in (lambda: train_rprop(net, X, T, max_epochs=2, **kwargs),
                 lambda: train_backprop(net, X, T, max_epochs=2, **kwargs),
                 lambda: train(net, X, T, max_epochs=2, **kwargs),
                 lambda: value_and_grad(net, X, T, **kwargs)):
        with pytest.raises(error, match=match):
            call()


def test_cross_entropy_refuses_targets_outside_0_1_and_other_outputs():
    X, T = data()
    net = MLP(4, (3,), 2, output_activation="logistic", seed=0)
    with pytest.raises(ValueError, match=r"`Y` must lie in \[0, 1\] for loss='cross_entropy' "
                                         r"\(targets are probabilities\), got values in "
                                         r"\[-1.0, 1.0\]"):
        train_rprop(net, X, 2 * T - 1, loss="cross_entropy")
    for out in ("proben1", "tanh", "relu"):
        net = MLP(4, (3,), 2, output_activation=out, seed=0)
        with pytest.raises(ValueError, match=f"got output_activation='{out}'"):
            value_and_grad(net, X, T, loss="cross_entropy")


def test_softmax_is_refused_where_it_cannot_work():
    with pytest.raises(ValueError, match=r"`hidden_activation` must be one of \['linear', "
                                         r"'logistic', 'proben1', 'relu', 'tanh'\], got "
                                         r"'softmax'"):
        MLP(3, (4,), 2, hidden_activation="softmax")
    with pytest.raises(ValueError, match=r"`output_activation`='softmax' needs n_out >= 2 "
                                         r"outputs .*, got n_out=1"):
        MLP(3, (4,), 1, output_activation="softmax")


def test_an_algorithm_that_trains_the_sse_only_refuses_another_objective():
    @dataclass(frozen=True)
    class SseOnly(RPROP):
        objectives = False

    X, T = data()
    net = MLP(4, (3,), 2, output_activation="logistic", seed=0)
    with pytest.raises(ValueError, match=r"`loss` and `weight_decay` must be 'sse' and 0 for "
                                         r"RPROP .*, got loss='cross_entropy', "
                                         r"weight_decay=0.0"):
        train(net, X, T, algorithm=SseOnly(), loss="cross_entropy")
    train(net, X, T, algorithm=SseOnly(), max_epochs=2)          # the SSE trains


def test_kernels_refuse_bad_objective_codes_and_softmax_in_the_lanes():
    net, X, T = make(4, (3,), 2, True, "tanh", "linear")
    A = _engine.activations(net, X)
    D, Dl = np.zeros((8, 5)), np.zeros((8, 5))
    g = np.zeros(net.n_connections)
    args = (A, T, net.layer_table, 4, net.weights, g, D, Dl, 0)
    with pytest.raises(ValueError, match="kernel: unknown loss code"):
        _backward.gradient(*args, 7, 0.0)
    with pytest.raises(ValueError, match="kernel: cross-entropy needs softmax or logistic"):
        _backward.gradient(*args, 1, 0.0)
    with pytest.raises(ValueError, match="kernel: weight decay must be >= 0"):
        _backward.gradient(*args, 0, -1.0)
    table = net.layer_table.copy()
    table[0, 6] = ACTIVATIONS["softmax"]                  # softmax in a hidden layer
    with pytest.raises(ValueError, match="kernel: inconsistent layer table row 0"):
        _forward.forward(A, table, 4, net.weights, 8, 0)
    soft = MLP(4, (3,), 2, output_activation="softmax", seed=0)
    w = np.zeros((1, soft.n_connections, _trials.LANES))
    with pytest.raises(ValueError, match="kernel: the lanes have no softmax units"):
        _trials.trials_sse(soft.layer_table, 4, X, T, w,
                           np.zeros(_trials.work_size(soft.n_units)), np.zeros(_trials.LANES))


# ------------------------------------------- the other rules on the objective
def _objective_case():
    X, _ = data(n=30, n_out=3)
    T = targets(30, 3, "onehot")
    net = MLP(4, (3,), 3, hidden_activation="tanh", output_activation="softmax", seed=2,
              init_scale=0.5)
    return net, X, T


def test_a_step_rule_gets_the_objectives_value_and_gradient():
    @dataclass(frozen=True)
    class Descent(Algorithm):
        rate: float = 0.01

        def step(self, weights, gradient, error, state):
            seen.append((weights, gradient, error))
            return weights - self.rate * gradient, state

    net, X, T = _objective_case()
    seen = []
    r = train(net.copy(), X, T, algorithm=Descent(), max_epochs=5, loss="cross_entropy",
              weight_decay=0.01)
    assert Descent().objectives and len(seen) == 5
    for w, g, E in seen:
        g_ref, E_ref = ref.objective_gradient(net.copy().set_weights(w), X, T,
                                              "cross_entropy", 0.01)
        assert E == pytest.approx(E_ref, rel=1e-13)
        assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)
    assert_allclose(r.train_error, [E * scale(X, T) for _, _, E in seen], rtol=1e-15)


def test_lbfgs_on_the_objective_equals_scipys_own_run():
    from scipy.optimize import minimize

    net, X, T = _objective_case()
    kw = dict(loss="cross_entropy", weight_decay=0.003)
    path = []

    def callback(intermediate_result):          # (SciPy passes the result by this name)
        path.append(intermediate_result.fun)

    res = minimize(lambda w: value_and_grad(net.copy().set_weights(w), X, T, **kw),
                   net.weights.copy(), jac=True, method="L-BFGS-B", callback=callback,
                   options={"maxiter": 30})
    r = train(net.copy(), X, T, algorithm=LBFGS(), max_epochs=30, **kw)
    assert r.epochs == res.nit
    assert_allclose(r.net.weights, res.x, rtol=1e-9, atol=1e-11)
    start = ref.objective(net, X, T, **kw)
    assert_allclose(r.train_error, np.array([start] + path[:-1]) * scale(X, T), rtol=1e-9)


def test_scg_on_the_objective_never_raises_it():
    net, X, T = _objective_case()
    kw = dict(loss="cross_entropy", weight_decay=0.003)
    r = train(net.copy(), X, T, algorithm=SCG(), max_epochs=40, **kw)
    E = r.train_error / scale(X, T)
    assert E[0] == pytest.approx(ref.objective(net, X, T, **kw), rel=1e-13)
    assert np.all(np.diff(E) <= 1e-12 * E[:-1])          # (SCG takes reducing steps only)
    assert E[-1] < 0.6 * E[0]                            # (33.0 -> 18.3)
    sse = train(net.copy(), X, T, algorithm=SCG(), max_epochs=40)
    assert not np.array_equal(sse.net.weights, r.net.weights)


def test_the_workspace_error_pass_gives_the_objective():
    net, X, T = _objective_case()
    for loss, decay in [("sse", 0.0), ("sse", 0.1), ("cross_entropy", 0.0),
                        ("cross_entropy", 0.1)]:
        ws = _engine.Workspace(net, X, T, objective=(LOSSES[loss], decay))
        assert ws.sse() == pytest.approx(ref.objective(net, X, T, loss, decay), rel=1e-13)
        assert ws.sse() == pytest.approx(ws.gradient(), rel=1e-14)


@pytest.mark.parametrize("out_act, loss, decay", TRAINED)
@pytest.mark.parametrize("hidden, shortcut", [((), True), ((3,), False), ((4, 2), True)])
@pytest.mark.parametrize("algorithm", [Quickprop(epsilon=0.001, threshold=1e-3, momentum=0.5),
                                       Adam(learning_rate=0.02), Adam(learning_rate=0.01,
                                                                      batch_size=7)],
                         ids=spec_of)
def test_quickprop_and_adam_on_each_objective_match_the_oracle(algorithm, hidden, shortcut,
                                                               out_act, loss, decay):
    X, _ = data(n=30, n_out=3)
    T = targets(30, 3, "onehot")
    net = MLP(4, hidden, 3, shortcut=shortcut, hidden_activation="tanh",
              output_activation=out_act, seed=2, init_scale=0.5)
    # (Quickprop's parabola step magnifies the oracle's other summation order: see
    # tests/test_lanes_rules.py; its rule on the kernels' own gradients runs 60 epochs
    # in tests/test_per_weight_rules.py)
    epochs = 20 if isinstance(algorithm, Quickprop) else 60
    draws = isinstance(algorithm, Adam) and algorithm.batch_size is not None
    res = train(net.copy(), X, T, algorithm=algorithm, max_epochs=epochs,
                seed=5 if draws else None, loss=loss, weight_decay=decay)
    if isinstance(algorithm, Quickprop):
        a = algorithm
        err_ref, w_ref = ref.train_quickprop(
            net, X, T, epochs, a.epsilon, a.mu, a.decay, a.threshold, a.momentum,
            grad=lambda n, X_, T_: ref.objective_gradient(n, X_, T_, loss, decay))
    else:
        rng = np.random.default_rng(5)             # the order train draws from its seed
        orders = [rng.permutation(30) for _ in range(epochs)] if algorithm.batch_size else None
        err_ref, w_ref = ref.train_adam(net, X, T, epochs, algorithm.learning_rate,
                                        batch_size=algorithm.batch_size, orders=orders,
                                        loss=loss, weight_decay=decay)
    assert_allclose(res.train_error, err_ref * scale(X, T), rtol=1e-10)
    assert_allclose(res.net.weights, w_ref, rtol=1e-10, atol=1e-12)
    assert res.setup["loss"] == loss and res.setup["weight_decay"] == decay


@pytest.mark.parametrize("algorithm, name", [("lm", "Levenberg-Marquardt")])
def test_rules_of_the_squared_error_only_refuse_another_objective(algorithm, name):
    net, X, T = _objective_case()
    with pytest.raises(ValueError, match=f"`loss` and `weight_decay` must be 'sse' and 0 for "
                                         f"{name}"):
        train(net, X, T, algorithm=algorithm, weight_decay=0.1)


# ------------------------------------------------------- many trials, any objective
@pytest.mark.parametrize("algorithm", ["rprop+", "backprop(learning_rate=0.01)", "scg",
                                       "quickprop(epsilon=0.001)", "adam(learning_rate=0.01)"])
def test_train_many_on_an_objective_equals_train_alone(algorithm):
    net, X, T = _objective_case()
    kw = dict(algorithm=algorithm, max_epochs=20, loss="cross_entropy", weight_decay=0.003)
    nets = [net.copy().init_weights(s) for s in range(9)]
    starts = [n.copy() for n in nets]                  # (the list form trains in place)
    got = train_many(nets, X, T, seeds=[None] * 9, **kw)
    assert got[0].setup["batch"]["method"] == "serial" and got[0].setup["loss"] == "cross_entropy"
    for g, n in zip(got, starts):
        alone_ = train(n, X, T, **kw)
        assert np.array_equal(g.net.weights, alone_.net.weights)
        assert np.array_equal(g.train_error, alone_.train_error)


@pytest.mark.parametrize("method", METHODS)
def test_train_rprop_many_with_weight_decay_trains_serially_as_train_rprop(method):
    X, T = data(n=37)
    K = 11
    nets = nets_for(K, (4,), hidden_activation="relu")
    seeds = list(range(K))
    kw = dict(max_epochs=40, init_scale=0.5, weight_decay=1e-3)
    got = train_rprop_many(nets, X, T, seeds=seeds, method=method, **kw)
    assert got[0].setup["batch"]["method"] == "serial"
    for g, r in zip(got, alone(nets, seeds, X, T, **kw)):
        assert_same_run(g, r, rtol=0)


def test_many_trials_refuse_an_objective_the_algorithm_cannot_train():
    net, X, T = _objective_case()
    with pytest.raises(ValueError, match=r"`loss` and `weight_decay` must be 'sse' and 0 for "
                                         r"Levenberg-Marquardt"):
        train_many(net, X, T, algorithm="lm", n_trials=2, seed=0, loss="cross_entropy")
    with pytest.raises(ValueError, match=r"`weight_decay` must be in \[0.0, inf\), got -1.0"):
        train_rprop_many(net, X, T, n_trials=2, seed=0, weight_decay=-1.0)
