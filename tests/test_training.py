"""fastnet.training: the algorithm objects, and trials as arrays (one network
giving the topology, K trials as a seed or a (K, C) array of initial weights,
columnar results)."""
import dataclasses
import warnings

import numpy as np
import pytest
from _training_cases import METHODS, assert_same_run, data, early_stopping_study

from fastnet import (MLP, DivergenceError, NoConvergenceWarning, TrainResult, train_rprop,
                     train_rprop_many)
from fastnet.stopping import GL
from fastnet.training import RPROP, Backprop
from fastnet.training import draw_trials

KW = dict(variant="irprop-", max_epochs=40)


# ------------------------------------------------------------ algorithm objects

def test_algorithm_objects_are_checked_frozen_and_comparable():
    rule = RPROP(variant="irprop+", eta_plus=1.3, delta0=[0.05, 0.2])
    assert rule.delta0 == (0.05, 0.2) and rule.draws
    assert rule == RPROP(variant="irprop+", eta_plus=1.3, delta0=(0.05, 0.2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        rule.eta_plus = 2.0
    assert rule.record() == ("RPROP (irprop+), epoch-batched",
                             {"eta_plus": 1.3, "eta_minus": 0.5, "delta0": [0.05, 0.2],
                              "delta_min": 0.0, "delta_max": 50.0})
    assert not Backprop().draws and Backprop(mode="online").draws
    assert Backprop(mode="online").updates_per_epoch(10, 7) == 70


@pytest.mark.parametrize("make, match, error", [
    (lambda: RPROP(variant="rprop*"), "`variant` must be one of", ValueError),
    (lambda: RPROP(eta_minus=1.5), r"`eta_minus` must be in \(0.0, 1.0\), got 1.5", ValueError),
    (lambda: RPROP(eta_plus=1.0), "`eta_plus`", ValueError),
    (lambda: RPROP(delta_min=2.0, delta_max=1.0), "`delta_min` must be <= `delta_max`", ValueError),
    (lambda: RPROP(delta0=(0.2, 0.1)), "`delta0` range must have lo <= hi", ValueError),
    (lambda: RPROP(delta0=60.0), "`delta0` must not exceed `delta_max`", ValueError),
    (lambda: Backprop(mode="stochastic"), "`mode` must be one of", ValueError),
    (lambda: Backprop(momentum=1.0), "`momentum`", ValueError),
    (lambda: Backprop(learning_rate="fast"), "`learning_rate` must be a real number", TypeError),
    (lambda: Backprop(decay=1), "`decay` must be True, False, 'epoch' or 'update'",
         TypeError),
])
def test_algorithm_objects_name_a_bad_parameter(make, match, error):
    with pytest.raises(error, match=match):
        make()


# ----------------------------------------------------------- trials as arrays

def _topology():
    return MLP(4, (3,), 2)


@pytest.mark.parametrize("method", METHODS)
def test_initial_weights_equal_the_list_form(method):
    X, T = data()
    net = _topology()
    W = np.random.default_rng(3).uniform(-0.5, 0.5, (11, net.n_connections))
    nets = [net.copy().set_weights(w) for w in W]
    before = net.weights.copy()
    listed = train_rprop_many(nets, X, T, method=method, **KW)
    arrays = train_rprop_many(net, X, T, initial_weights=W, method=method, **KW)
    assert np.array_equal(arrays.weights, listed.weights)
    assert np.array_equal(arrays.train_error, listed.train_error)
    assert np.array_equal(arrays.epochs, listed.epochs)
    assert arrays.stop_reason == listed.stop_reason
    for a, b in zip(arrays, listed):
        assert_same_run(a, b, rtol=0)
    assert np.array_equal(net.weights, before)      # the topology is not trained


def test_a_seed_draws_all_trials_in_one_call_as_documented():
    X, T = data()
    net = _topology()
    kw = dict(KW, init_scale=0.3, delta0=(0.05, 0.2))
    got = train_rprop_many(net, X, T, n_trials=9, seed=7, **kw)
    again = train_rprop_many(net, X, T, n_trials=9, seed=7, **kw)
    assert np.array_equal(got.weights, again.weights)
    other = train_rprop_many(net, X, T, n_trials=9, seed=8, **kw)
    assert not np.array_equal(got.weights, other.weights)
    # numpy.random.default_rng(seed): all K x C weights, then all K x C steps
    rng = np.random.default_rng(7)
    W = rng.uniform(-0.3, 0.3, (9, net.n_connections))
    steps = rng.uniform(0.05, 0.2, (9, net.n_connections))
    W2, steps2 = draw_trials(net, 9, 7, init_scale=0.3, delta0=(0.05, 0.2))
    assert np.array_equal(W, W2) and np.array_equal(steps, steps2)
    # given weights and a delta0 range: the seed draws the steps alone
    given = train_rprop_many(net, X, T, initial_weights=W, seed=7, **dict(KW, delta0=(0.05, 0.2)))
    rng = np.random.default_rng(7)
    assert given.weights.shape == (9, net.n_connections)
    assert not np.array_equal(given.weights, got.weights)     # (other steps than got's)
    rng.uniform(0.05, 0.2, (9, net.n_connections))
    # with a fixed delta0 nothing else is drawn: row i alone reproduces trial i
    i = 4
    fixed = train_rprop_many(net, X, T, n_trials=9, seed=7, init_scale=0.3, **KW)
    one = train_rprop_many(net, X, T, initial_weights=W[[i]], **KW)
    assert np.array_equal(fixed.weights[i], one.weights[0])
    assert_same_run(fixed[i], train_rprop(net.copy().set_weights(W[i]), X, T, **KW), rtol=1e-10)


def test_the_network_default_range_without_init_scale():
    net = _topology()
    W, steps = draw_trials(net, 50, 1)
    assert steps is None and np.abs(W).max() <= 0.5 and np.abs(W).max() > 0.4
    linear = MLP(4, (), 2)
    assert np.abs(draw_trials(linear, 50, 1)[0]).max() <= 0.01


def test_columns_and_results_built_on_request():
    K = 16
    got = early_stopping_study(K, "lanes")       # each trial equals train_rprop alone
    C = got.weights.shape[1]
    assert got.epochs.shape == got.relevant_epoch.shape == got.cpu_time.shape == (K,)
    assert got.weights.shape == (K, C) and not got.weights.flags.writeable
    assert got.train_error.shape == (K, got.epochs.max())
    for i in range(K):
        r = got[i]
        assert isinstance(r, TrainResult) and got[i] is r
        e = got.epochs[i]
        assert np.array_equal(got.train_error[i, :e], r.train_error)
        assert np.isnan(got.train_error[i, e:]).all()
        n = r.val_error.size
        assert np.array_equal(got.val_error[i, :n], r.val_error)
        assert np.isnan(got.val_error[i, n:]).all()
        assert np.array_equal(got.val_epochs[:n], r.val_epochs)
        assert got.min_train_error[i] == r.min_train_error
        assert got.final_val.squared_error_percentage[i] == r.final_val.squared_error_percentage
        assert got.final_test.trial(i) == r.final_test
        assert np.array_equal(got.weights[i], r.net.weights)


def test_a_trial_of_the_array_form_is_a_network_of_its_own():
    X, T = data()
    net = _topology()
    got = train_rprop_many(net, X, T, n_trials=3, seed=0, **KW)
    r = got[1]
    assert r.net is not net and r.net.layer_sizes == net.layer_sizes
    assert np.array_equal(r.net.weights, got.weights[1])
    assert r.setup["seed"] == 0 and "in one call" in r.setup["initialisation"]
    assert list(got) == [got[0], got[1], got[2]]


def test_early_stopping_in_the_array_form():
    X, T = data(60, seed=1)
    Xv, Tv = data(30, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_rprop_many(_topology(), X, T, Xv, Tv, n_trials=12, seed=2, init_scale=0.5,
                               stop=GL(1), max_epochs=200)
    assert len(set(got.epochs.tolist())) > 1
    assert (got.relevant_epoch <= got.epochs).all()


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(), TypeError, "give `n_trials`"),
    (dict(n_trials=2, initial_weights=np.ones((2, 31))), TypeError,
     "give `n_trials` or `initial_weights`, not both"),
    (dict(n_trials=0), ValueError, "`n_trials` must be >= 1"),
    (dict(n_trials=2.5), TypeError, "`n_trials` must be an integer"),
    (dict(n_trials=2, seeds=[1, 2]), TypeError, "`seeds` goes with a list of networks"),
    (dict(initial_weights=np.ones((2, 5))), ValueError,
     r"`initial_weights` must have shape \(K, 31\)"),
    (dict(initial_weights=np.ones(31)), ValueError, r"`initial_weights` must have shape"),
    (dict(initial_weights=np.full((2, 31), np.nan)), ValueError, "`initial_weights` must be finite"),
    (dict(initial_weights=np.ones((2, 31)) * np.r_[[1.0] * 3, 1e151, [1.0] * 27]), ValueError,
     r"at most MAX_WEIGHT = 1e\+150, as MLP.set_weights takes, got 1e\+151 in row 0, column 3\.$"),
    (dict(initial_weights=np.ones((2, 31)) + 1e-9j), TypeError,
     r"^`initial_weights` must be real, got dtype complex128\.$"),
    (dict(initial_weights=list(np.ones((2, 31)) + 1e-9j)), TypeError,
     r"^`initial_weights` must be real, got dtype complex128\.$"),
    (dict(initial_weights=[["a"] * 31]), TypeError, "`initial_weights` must be a"),
    (dict(initial_weights=np.zeros((2, 31))), ValueError, r"`initial_weights\[0\]` is all zeros"),
    (dict(initial_weights=np.ones((2, 31)), init_scale=0.5), TypeError,
     "`init_scale` would have no effect"),
    (dict(initial_weights=np.ones((2, 31)), seed=1), ValueError, "`seed` would have no effect"),
])
def test_bad_arrays_are_named(kwargs, error, match):
    X, T = data()
    with pytest.raises(error, match=match):
        train_rprop_many(_topology(), X, T, **kwargs)


def test_arrays_divergence_names_the_trial_by_its_row():
    # inputs of 1e200 overflow in epoch 1; the array form has no list of networks to name
    X, T = data()
    with pytest.raises(DivergenceError, match=r"^the training error of trial 0 became "
                                              r"non-finite in epoch 1: training diverged\.") as info:
        train_rprop_many(_topology(), X * 1e200, T, n_trials=3, seed=0, max_epochs=5)
    assert (info.value.trial, info.value.epoch) == (0, 1)


def test_initial_weights_up_to_max_weight_are_taken_as_a_network_takes_them():
    X, T = data()
    W = np.ones((1, 31))
    W[0, 3] = -1e150
    got = train_rprop_many(_topology(), X, T, initial_weights=W, max_epochs=3, method="serial")
    alone = train_rprop(_topology().set_weights(W[0]), X, T, max_epochs=3)
    assert np.array_equal(got.weights[0], alone.net.weights)


def test_the_list_form_refuses_the_array_arguments():
    X, T = data()
    with pytest.raises(TypeError, match="go with one network"):
        train_rprop_many([_topology(), _topology()], X, T, n_trials=2)
