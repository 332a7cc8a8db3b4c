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
    (dict(decay="yes"), TypeError, "`decay`"),
])
def test_bad_hyper_parameters(kwargs, exc, match):
    X, T = data()
    with pytest.raises(exc, match=match):
        train_backprop(MLP(3, (2,), 2), X, T, **kwargs)
