"""train_backprop (batch and online, momentum, decay) against the NumPy oracle."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import MLP, train_backprop


def data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (n, 3)), rng.uniform(0, 1, (n, 2))


@pytest.mark.parametrize("decay", [False, True])
@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden", [(), (4,), (4, 3)])
def test_batch_matches_reference(hidden, shortcut, decay):
    X, T = data()
    net = MLP(3, hidden, 2, shortcut=shortcut).init_weights(2)
    err_ref, w_ref = ref.train_backprop(net, X, T, 50, 0.02, 0.7, decay=decay)
    r = train_backprop(net, X, T, learning_rate=0.02, momentum=0.7, decay=decay, max_epochs=50)
    assert_allclose(r.train_error, err_ref * 100 / T.size, rtol=1e-10)
    assert_allclose(net.weights, w_ref, rtol=1e-10, atol=1e-12)
    assert r.traversals.update == 50 * net.n_connections


@pytest.mark.parametrize("shortcut", [True, False])
def test_online_matches_reference(shortcut):
    X, T = data(12)
    net = MLP(3, (4, 3), 2, shortcut=shortcut).init_weights(2)
    epochs = 20
    rng = np.random.default_rng(9)
    orders = [rng.permutation(12) for _ in range(epochs)]
    err_ref, w_ref = ref.train_backprop(net, X, T, epochs, 0.05, 0.5, online=True, orders=orders)
    r = train_backprop(net, X, T, mode="online", learning_rate=0.05, momentum=0.5,
                       max_epochs=epochs, seed=9)
    assert_allclose(r.train_error, err_ref * 100 / T.size, rtol=1e-10)
    assert_allclose(net.weights, w_ref, rtol=1e-10, atol=1e-12)
    assert r.traversals.update == epochs * 12 * net.n_connections


def test_online_order_depends_on_seed():
    X, T = data(12)
    a = MLP(3, (4,), 2).init_weights(0)
    b, c = a.copy(), a.copy()
    train_backprop(a, X, T, mode="online", max_epochs=3, seed=1, learning_rate=0.1)
    train_backprop(b, X, T, mode="online", max_epochs=3, seed=1, learning_rate=0.1)
    train_backprop(c, X, T, mode="online", max_epochs=3, seed=2, learning_rate=0.1)
    assert a == b and a != c


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(mode="minibatch"), ValueError, "`mode` must be one of"),
    (dict(learning_rate=0.0), ValueError, "`learning_rate`"),
    (dict(momentum=1.0), ValueError, "`momentum` must be in"),
    (dict(decay="yes"), ValueError, "`decay` must be one of"),
    (dict(decay=1.0), TypeError, "`decay` must be True, False, 'epoch' or 'update'"),
    (dict(decay="update"), ValueError, "`decay`='update' needs mode='online'"),
])
def test_bad_hyper_parameters(kwargs, exc, match):
    X, T = data()
    with pytest.raises(exc, match=match):
        train_backprop(MLP(3, (2,), 2), X, T, **kwargs)


# ---- the learning rate falling linearly per update (Lawrence et al. 1997)
def _online_per_update(net, X, T, epochs, lr, momentum, orders):
    """Online backpropagation, update u of U at lr (U - 1 - u) / (U - 1) (NumPy)."""
    net = net.copy()
    dw_prev = np.zeros(net.n_connections)
    U, u, errors = epochs * X.shape[0], 0, []
    for t in range(epochs):
        total = 0.0
        for p in orders[t]:
            g, e = ref.gradient(net, X[p:p + 1], T[p:p + 1])
            total += e
            dw = -lr * (U - 1 - u) / (U - 1) * g + momentum * dw_prev
            net.set_weights(net.weights + dw)
            dw_prev, u = dw, u + 1
        errors.append(total)
    return np.array(errors), net.weights.copy()


@pytest.mark.parametrize("strip", [1, 3])
def test_online_decay_per_update_matches_reference(strip):
    X, T = data(10)
    net = MLP(3, (4,), 2, hidden_activation="tanh").init_weights(4)
    epochs = 7
    rng = np.random.default_rng(5)
    orders = [rng.permutation(10) for _ in range(epochs)]
    err_ref, w_ref = _online_per_update(net, X, T, epochs, 0.05, 0.3, orders)
    r = train_backprop(net, X, T, mode="online", learning_rate=0.05, momentum=0.3,
                       decay="update", max_epochs=epochs, strip=strip, seed=5)
    assert_allclose(r.train_error, err_ref * 100 / T.size, rtol=1e-10)
    assert_allclose(net.weights, w_ref, rtol=1e-10, atol=1e-12)
    assert r.setup["parameters"]["decay"] == "update"


def test_per_update_decay_reaches_zero_at_the_last_update():
    # one epoch of two patterns: the first update at the full rate, the second at 0, so
    # the run ends where one online step on the first pattern alone ends
    X, T = data(2)
    start = MLP(3, (2,), 2).init_weights(1)
    a = start.copy()
    r = train_backprop(a, X, T, mode="online", learning_rate=0.1, decay="update",
                       max_epochs=1, seed=3)
    first = np.random.default_rng(3).permutation(2)[0]
    b = start.copy()
    train_backprop(b, X[first:first + 1], T[first:first + 1], mode="online", learning_rate=0.1,
                   max_epochs=1, seed=0)
    assert_allclose(a.weights, b.weights, rtol=1e-13, atol=1e-15)
    assert r.epochs == 1


def test_per_epoch_decay_unchanged_by_name():
    # "epoch" is True (stored as True: set-up records and hashes as before)
    from fastnet.training import Backprop
    assert Backprop(decay="epoch") == Backprop(decay=True)
    assert Backprop(decay="epoch").decay is True


def test_rate_is_on_the_sum_of_squares_without_half():
    # a linear unit, one batch step: w <- w - lr * 2 * sum_p e_p x_p (the gradient of
    # sum e^2); a paper's eta on (1/2) sum e^2 is learning_rate = eta / 2
    X, T = data(6)
    net = MLP(3, (), 1, shortcut=False).init_weights(2)
    w0 = net.weights.copy()
    A = np.hstack([X, np.ones((6, 1))])            # inputs then the bias
    e = A @ w0 - T[:, :1].ravel()
    train_backprop(net, X, T[:, :1], learning_rate=0.01, max_epochs=1)
    assert_allclose(net.weights, w0 - 0.01 * 2 * A.T @ e, rtol=1e-12)


def test_decay_update_in_algorithm_texts():
    from fastnet.algorithms import from_spec
    from fastnet.training import Backprop
    rule = from_spec("backprop(mode='online', learning_rate=0.05, decay='update')")
    assert rule == Backprop("online", 0.05, 0.0, "update")
    with pytest.raises(ValueError, match="`decay`='update' needs mode='online'"):
        from_spec("backprop(decay='update')")
