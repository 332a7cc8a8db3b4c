"""No silent wrong results in training: initialisation, divergence, arguments that overflow."""
import warnings

import numpy as np
import pytest

from fastnet import MLP, DivergenceError, NoConvergenceWarning, train_backprop, train_rprop
from fastnet.network import MAX_INIT_SCALE
from fastnet.stopping import Correct

XOR_X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
XOR_T = np.array([[0.], [1.], [1.], [0.]])


# --------------------------------------------------------------- initialisation

def test_a_network_is_initialised_when_built():
    net = MLP(2, (2,), 1)
    assert np.all(net.weights != 0)
    assert np.abs(net.weights).max() <= 0.5            # Proben1's multilayer range
    assert np.abs(MLP(9, (), 2).weights).max() <= 0.01  # and its linear one
    assert np.abs(MLP(2, (2,), 1, init_scale=2.0, seed=1).weights).max() > 0.5
    # one seed, one network, bit for bit
    assert np.array_equal(MLP(4, (3,), 2, seed=7).weights, MLP(4, (3,), 2, seed=7).weights)
    assert not np.array_equal(MLP(4, (3,), 2, seed=7).weights, MLP(4, (3,), 2, seed=8).weights)
    assert np.array_equal(MLP(4, (3,), 2, seed=7).weights,
                          MLP(4, (3,), 2).init_weights(7, 0.5).weights)


def test_a_fresh_network_learns_xor():
    # The old default (all-zero weights) left the hidden layer dead: 0.5 everywhere.
    learned = 0
    for seed in range(10):
        net = MLP(2, (2,), 1, seed=seed)
        train_rprop(net, XOR_X, XOR_T, max_epochs=300)
        learned += np.abs(net.predict(XOR_X) - XOR_T).max() < 0.2
    assert learned >= 6


def test_seed_is_never_silently_ignored():
    net = MLP(2, (2,), 1, seed=0)
    with pytest.raises(ValueError, match="`seed` would have no effect"):
        train_rprop(net, XOR_X, XOR_T, seed=0)
    with pytest.raises(ValueError, match="`seed` would have no effect"):
        train_backprop(net, XOR_X, XOR_T, seed=0)
    with pytest.raises(TypeError, match="`seed`"):
        train_rprop(net, XOR_X, XOR_T, seed="a")
    # a seed that draws something is fine: initial weights, per-weight steps, online order
    a = train_rprop(net.copy(), XOR_X, XOR_T, seed=3, init_scale=0.5, max_epochs=5)
    b = train_rprop(net.copy(), XOR_X, XOR_T, seed=3, init_scale=0.5, max_epochs=5)
    assert np.array_equal(a.net.weights, b.net.weights)
    train_rprop(net.copy(), XOR_X, XOR_T, seed=3, delta0=(0.05, 0.2), max_epochs=5)
    train_backprop(net.copy(), XOR_X, XOR_T, seed=3, mode="online", max_epochs=5)


def test_an_all_zero_multilayer_network_is_refused():
    net = MLP(2, (2,), 1)
    net.set_weights(np.zeros(net.n_connections))
    for train in (train_rprop, train_backprop):
        with pytest.raises(ValueError, match="`net` has all weights zero.*init_scale"):
            train(net, XOR_X, XOR_T, max_epochs=5)
    # a linear network from zero is fine (no symmetry to break)
    lin = MLP(2, (), 1)
    lin.set_weights(np.zeros(lin.n_connections))
    assert train_rprop(lin, XOR_X, XOR_T, max_epochs=5).epochs == 5


# --------------------------------------------------------------- divergence

def test_batch_backprop_diverging_in_its_last_epoch_raises():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (129, 27))
    Y = (rng.uniform(size=(129, 3)) > 0.5) * 1.0
    net = MLP(27, (17, 2), 3, shortcut=False, hidden_activation="linear")
    with pytest.raises(DivergenceError, match="non-finite in epoch 4") as info:
        train_backprop(net, X, Y, learning_rate=0.1, max_epochs=4, init_scale=0.5, seed=1011)
    assert info.value.epoch == 4
    assert isinstance(info.value, FloatingPointError)


def test_online_backprop_divergence_is_not_blamed_on_the_data():
    diverged = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-1, 1, (8, 27))
        Y = (rng.uniform(size=(8, 5)) > 0.5) * 1.0
        net = MLP(27, (17, 2), 5, shortcut=False, hidden_activation="linear")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NoConvergenceWarning)
                r = train_backprop(net, X, Y, mode="online", learning_rate=0.1, stop=Correct(),
                                   strip=1, init_scale=0.5, seed=seed, max_epochs=200)
        except DivergenceError as exc:
            diverged += 1
            assert "`Y`" not in str(exc) and "`T`" not in str(exc)
        else:
            assert np.isfinite(r.train_error).all() and np.isfinite(net.weights).all()
    assert diverged > 0


def test_rprop_divergence_raises_with_the_epoch():
    X = np.array([[1e200, 1.0]] * 4)
    with pytest.raises(DivergenceError, match="epoch 1"):
        train_rprop(MLP(2, (2,), 1), X, XOR_T, max_epochs=10)


# --------------------------------------------------------------- overflow

@pytest.mark.parametrize("scale", [1e308, 1e200, MAX_INIT_SCALE * 1.0001, 10 ** 400, np.inf])
def test_init_scales_that_overflow_are_refused(scale):
    with pytest.raises(ValueError, match="`init_scale`"):
        train_rprop(MLP(2, (2,), 1), XOR_X, XOR_T, init_scale=scale, seed=0)
    with pytest.raises(ValueError, match="`init_scale`"):
        train_backprop(MLP(2, (2,), 1), XOR_X, XOR_T, init_scale=scale, seed=0)
    with pytest.raises(ValueError, match="`scale`"):
        MLP(2, (2,), 1).init_weights(0, scale)
    with pytest.raises(ValueError, match="`init_scale`"):
        MLP(2, (2,), 1, init_scale=scale)


def test_largest_init_scale_predicts_finite_outputs():
    net = MLP(2, (2,), 1, init_scale=MAX_INIT_SCALE, seed=0)
    assert np.isfinite(net.predict(XOR_X)).all()


@pytest.mark.parametrize("target_range", [(-1e308, 1e308), (0.0, np.inf), (1.0, 1.0),
                                          (1.0, 0.0), (0.0, 10 ** 400)])
def test_target_ranges_without_a_finite_positive_width_are_refused(target_range):
    with pytest.raises(ValueError, match="`target_range`"):
        train_rprop(MLP(2, (2,), 1), XOR_X, XOR_T, target_range=target_range)


def test_huge_max_epochs_allocates_nothing_up_front():
    # Stopped by its criterion long before the limit; the history holds what ran.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = train_rprop(MLP(2, (2,), 1), XOR_X, XOR_T, max_epochs=10 ** 12,
                        stop=Correct(), strip=1, init_scale=1.0, seed=1)
    assert r.stop_reason == "correct"
    assert r.train_error.shape == (r.epochs,)
    r = train_backprop(MLP(2, (2,), 1), XOR_X, XOR_T, max_epochs=10 ** 12,
                       callback=lambda epoch, state: epoch >= 2500, strip=5)
    assert r.epochs == 2500 and r.train_error.shape == (2500,)


def test_error_percentage_refuses_an_infinite_width():
    from fastnet.measures import squared_error_percentage

    with pytest.raises(ValueError, match="`o_max` - `o_min` must be positive and finite"):
        squared_error_percentage(XOR_T, XOR_T, o_min=-1e308, o_max=1e308)
