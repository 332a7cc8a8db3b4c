"""fastnet.train_many: the many-trials form of any algorithm. Every trial is what
fastnet.train gives it alone (bit for bit in the single-network kernels, to
rounding in RPROP's lanes); RPROP trains exactly as train_rprop_many."""
import warnings

import numpy as np
import pytest
from _training_cases import assert_same_run, data, nets_for

import fastnet
from fastnet import MLP, NoConvergenceWarning, train, train_many, train_rprop_many
from fastnet.algorithms import RPROP, Adam, Backprop
from fastnet.datasets import make_xor
from fastnet.stopping import GL, Correct
from fastnet.training import draw_trials

BACKPROP = Backprop(learning_rate=0.5, momentum=0.9)


def xor():
    X, Y = make_xor().train
    return MLP(2, [2], 1, output_activation="logistic"), X, Y


def test_exported():
    assert fastnet.train_many is train_many is fastnet.training.train_many
    assert "train_many" in fastnet.__all__ and "train_many" in fastnet.training.__all__


@pytest.mark.parametrize("algorithm", [BACKPROP, Backprop(learning_rate=0.2, decay=True), RPROP()])
def test_array_form_each_trial_equals_train_alone(algorithm):
    net, X, Y = xor()
    K = 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_many(net, X, Y, algorithm=algorithm, n_trials=K, seed=3, max_epochs=300,
                         stop=Correct())
        W, _ = draw_trials(net, K, 3)
        for i in range(K):
            ref = train(net.copy().set_weights(W[i]), X, Y, algorithm=algorithm, max_epochs=300,
                        stop=Correct())
            exact = not algorithm.lanes
            assert_same_run(got[i], ref, rtol=0.0 if exact else 1e-10)
            if exact:
                assert np.array_equal(got.weights[i], ref.net.weights)


def test_online_backprop_draws_each_trial_from_a_spawned_generator():
    net, X, Y = xor()
    K, algorithm = 5, Backprop(mode="online", learning_rate=0.5)
    W, _ = draw_trials(net, K, 11)
    children = np.random.SeedSequence(11).spawn(K)
    # one at a time bit for bit; in the lanes (their orders drawn in the kernel) to rounding
    for method in ("serial", "lanes"):
        got = train_many(net, X, Y, algorithm=algorithm, n_trials=K, seed=11, max_epochs=40,
                         method=method)
        for i in range(K):
            ref = train(net.copy().set_weights(W[i]), X, Y, algorithm=algorithm, max_epochs=40,
                        seed=children[i])
            if method == "serial":
                assert np.array_equal(got.weights[i], ref.net.weights)
            else:
                np.testing.assert_allclose(got.weights[i], ref.net.weights, rtol=1e-10)
    # the pattern order differs between trials (each has its own generator)
    same = train_many(net, X, Y, algorithm=algorithm, initial_weights=np.repeat(W[:1], 2, 0),
                      seed=11, max_epochs=40)
    assert not np.array_equal(same.weights[0], same.weights[1])


def test_list_form_with_validation_equals_train_alone():
    X, T = data(60, seed=1)
    Xv, Tv = data(30, seed=2)
    K = 4
    nets, refs = nets_for(K, (3,)), nets_for(K, (3,))
    seeds = list(range(20, 20 + K))
    kw = dict(algorithm=Backprop(mode="online", learning_rate=0.05, momentum=0.5),
              max_epochs=80, init_scale=0.5, stop=GL(2), X_test=Xv, Y_test=Tv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        for method, rtol in (("serial", 0.0), ("lanes", 1e-10)):
            for net in nets:
                net.init_weights(0)                 # (trained in place: start again)
            for ref_net in refs:
                ref_net.init_weights(0)
            got = train_many(nets, X, T, Xv, Tv, seeds=seeds, method=method, **kw)
            for g, net, ref_net, seed in zip(got, nets, refs, seeds):
                assert g.net is net
                assert_same_run(g, train(ref_net, X, T, Xv, Tv, seed=seed, **kw), rtol=rtol)


def test_initial_weights_form():
    net, X, Y = xor()
    W = np.random.default_rng(0).uniform(-0.5, 0.5, (3, net.n_connections))
    got = train_many(net, X, Y, algorithm="backprop(learning_rate=0.3)", initial_weights=W,
                     max_epochs=30, method="serial")
    for i in range(3):
        ref = train(net.copy().set_weights(W[i]), X, Y, algorithm=Backprop(learning_rate=0.3),
                    max_epochs=30)
        assert np.array_equal(got.weights[i], ref.net.weights)
    assert got[0].setup["initialisation"] == "weights given as initial_weights"
    with pytest.raises(ValueError, match="`seed` would have no effect"):
        train_many(net, X, Y, algorithm=BACKPROP, initial_weights=W, seed=1, max_epochs=3)


@pytest.mark.parametrize("method", ["auto", "lanes", "serial", "mixed"])
def test_rprop_is_train_rprop_many_bit_for_bit(method):
    net, X, Y = xor()
    a = train_many(net, X, Y, algorithm=RPROP(delta0=(0.05, 0.2)), n_trials=20, seed=4,
                   max_epochs=60, method=method)
    b = train_rprop_many(net, X, Y, n_trials=20, seed=4, max_epochs=60, delta0=(0.05, 0.2),
                         method=method)
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(a.train_error, b.train_error, equal_nan=True)
    assert a[0].setup["batch"]["method"] == b[0].setup["batch"]["method"]


def test_columns_and_batch_record():
    net, X, Y = xor()
    got = train_many(net, X, Y, algorithm=BACKPROP, n_trials=6, seed=0, max_epochs=25,
                     method="serial")
    assert got.epochs.shape == (6,) and got.weights.shape == (6, net.n_connections)
    assert got.train_error.shape == (6, 25)
    batch = got[0].setup["batch"]
    assert batch["method"] == "serial" and batch["n_trials"] == 6
    assert got.cpu_time.sum() == pytest.approx(batch["cpu_time"])
    assert got[0].setup["algorithm"].startswith("backpropagation")


def test_lanes_method_refused_for_an_algorithm_without_lanes():
    net, X, Y = xor()
    with pytest.raises(ValueError, match=r"`method` must be 'auto' or 'serial' for Adam"):
        train_many(net, X, Y, algorithm=Adam(batch_size=2), n_trials=2, seed=0,
                   method="lanes")
    with pytest.raises(ValueError, match="`algorithm` must name one of"):
        train_many(net, X, Y, algorithm="no-such-rule", n_trials=2, seed=0)
    with pytest.raises(TypeError, match="`n_trials`, `seed` and `initial_weights` go with one"):
        train_many([net.copy()], X, Y, algorithm=BACKPROP, n_trials=2)


@pytest.mark.parametrize("n_trials", [1, 2, 9])
def test_correct_criterion_in_the_lanes_reads_one_lane(n_trials):
    # (issue 46, item 4: a criterion that reads a trial's outputs, Correct, handed a lane's
    # strided weights to predict: "ndarray is not C-contiguous"; `fastnet suite -r 1` failed)
    from fastnet.stopping import MaxEpochs
    net, X, Y = xor()
    got = train_many(net, X, Y, n_trials=n_trials, seed=0, stop=Correct(0.4) | MaxEpochs(300),
                     max_epochs=300)
    W, _ = draw_trials(net, n_trials, 0)
    for i in range(n_trials):
        ref = train(net.copy().set_weights(W[i]), X, Y, max_epochs=300, stop=Correct(0.4) | MaxEpochs(300))
        assert got[i].epochs == ref.epochs and got[i].stop_reason == ref.stop_reason
