"""train_rprop_many(method="mixed"): lanes, then the last trials one at a time in the
single-network kernels; every trial still gets what train_rprop gives it alone."""
import warnings

import numpy as np
import pytest
from test_rprop_many import (
    VARIANTS, alone, assert_divergence_names_the_trial, assert_same_run, data,
    early_stopping_study, nets_for, proben1_preset_study, xor_success_study,
)

from fastnet import MLP, NoConvergenceWarning, train_rprop, train_rprop_many
from fastnet.training import backends as _handoff
from fastnet.training import many as _many
from fastnet._kernels import _trials
from fastnet.stopping import GL


@pytest.fixture
def handoffs(monkeypatch):
    """The number of trials each hand-off took out of the lanes."""
    seen = []
    original = _handoff.Trials._hand_off

    def spy(self, out, training):
        seen.append(len(out))
        return original(self, out, training)

    monkeypatch.setattr(_handoff.Trials, "_hand_off", spy)
    return seen


def stopping_at(epochs):
    """A callback for train_rprop_many that stops trial i after epochs[i], and the
    matching callbacks for train_rprop alone."""
    many = lambda i, epoch, state: epoch >= epochs[i]                        # noqa: E731
    alone_cbs = [lambda epoch, state, e=e: epoch >= e for e in epochs]
    return many, alone_cbs


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("hidden", [(), (3,), (4, 2), (3, 4, 2)])
@pytest.mark.parametrize("shortcut", [True, False])
def test_mixed_equals_train_rprop_with_a_handoff_mid_run(variant, hidden, shortcut, handoffs):
    X, T = data()
    K = 16
    nets = nets_for(K, hidden, shortcut)
    seeds = list(range(200, 200 + K))
    # trials stop one after another: with 13 left the second group holds 5 (< 3/4 of
    # 8), which go on alone; the first stays full until 5 are left in it too
    epochs = [5 * (k + 1) for k in range(K)]
    cb, cbs = stopping_at(epochs)
    kw = dict(variant=variant, max_epochs=100, init_scale=0.5, delta0=(0.05, 0.2), strip=5)
    copies = [net.copy() for net in nets]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        refs = [train_rprop(c, X, T, seed=s, callback=f, **kw)
                for c, s, f in zip(copies, seeds, cbs)]
    got = train_rprop_many(nets, X, T, seeds=seeds, method="mixed", callback=cb, **kw)
    assert handoffs == [5, 5]
    assert [r.epochs for r in got] == epochs
    for g, r, net in zip(got, refs, nets):
        assert g.net is net
        assert_same_run(g, r)
    assert got[0].setup["batch"]["method"] == "mixed"


@pytest.mark.parametrize("K", [1, 5, 8, 9, 12, 17])
def test_trial_counts(K, handoffs):
    X, T = data(n=37)
    nets = nets_for(K, (5,))
    seeds = list(range(K))
    kw = dict(max_epochs=40, init_scale=0.5)
    for g, r in zip(train_rprop_many(nets, X, T, seeds=seeds, method="mixed", **kw),
                    alone(nets, seeds, X, T, **kw)):
        assert_same_run(g, r)
    # fixed epochs: a hand-off at the start only where the last group of lanes
    # the K trials need is filled less than 3/4
    L = _trials.LANES
    last = K - L * (-(-K // L) - 1)
    assert handoffs == ([last] if last < 0.75 * L else [])


@pytest.mark.parametrize("variant", VARIANTS)
def test_early_stopping_with_validation_and_test_sets(variant, handoffs):
    K = 16
    got = early_stopping_study(K, "mixed", variant=variant)
    assert len({r.epochs for r in got}) > 1
    assert handoffs and sum(handoffs) < K


def test_proben1_preset(handoffs):
    proben1_preset_study("mixed")
    assert handoffs


@pytest.mark.parametrize("K", [3, 32])
def test_success_check_in_the_kernel(K, handoffs):
    # (3 trials go on alone from the start; of 32, in four full groups, two are
    # handed off after epoch 20, the first return from the kernel, and two after 40)
    stops = xor_success_study(K, 45, "mixed")
    assert "correct" in stops
    assert "max_epochs" in stops or K < 32           # successes and failures both
    assert handoffs == ([K] if K < 32 else [2, 2])


def test_callback_and_is_correct_after_the_handoff(handoffs):
    # a callback that asks whether the trial is correct (the general loop's check,
    # on the handed-off trial's own weights)
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    T = np.array([[0.], [1.], [1.], [0.]])
    K = 4
    nets = nets_for(K, (2,), n_in=2, n_out=1)
    answers_many, answers_alone = [], []

    def cb(i, epoch, state):
        answers_many.append((i, epoch, state.is_correct(0.4, None)))

    kw = dict(max_epochs=30, init_scale=1.0, strip=3)
    got = train_rprop_many(nets, X, T, seeds=range(K), method="mixed", callback=cb, **kw)
    copies = [net.copy() for net in nets]
    refs = []
    for i, c in enumerate(copies):
        refs.append(train_rprop(c, X, T, seed=i, callback=lambda e, s, i=i: answers_alone.append(
            (i, e, s.is_correct(0.4, None))), **kw))
    for g, r in zip(got, refs):
        assert_same_run(g, r)
    assert sorted(answers_many) == sorted(answers_alone)
    assert handoffs == [K]


def test_divergence_after_the_handoff_names_the_trial(handoffs):
    assert_divergence_names_the_trial("mixed")
    assert handoffs == [3]


def test_bad_input_is_refused_as_in_the_lanes():
    X, T = data()
    with pytest.raises(ValueError, match="`X` has 3 inputs but the network has 4"):
        train_rprop_many(nets_for(2, (3,)), X[:, :3], T, method="mixed")
    with pytest.raises(ValueError, match="`eta_minus`"):
        train_rprop_many(nets_for(2, (3,)), X, T, eta_minus=1.5, method="mixed")
    with pytest.raises(ValueError, match="needs a validation set"):
        train_rprop_many(nets_for(2, (3,)), X, T, stop=GL(2), method="mixed")
    with pytest.raises(ValueError, match="`method`"):
        train_rprop_many(nets_for(2, (3,)), X, T, method="shared")


def test_auto_method_by_shape_and_trial_count():
    auto = _many._auto_method
    L = _trials.LANES
    assert auto(40, 42, 2) == "lanes"                                   # narrow: lanes
    assert auto(3600, 398, 2 * L) == "mixed"                            # thyroid2 8+4
    assert auto(342, _many.LANES_MAX_CONNECTIONS, 2 * L) == "mixed"
    assert auto(342, _many.LANES_MAX_CONNECTIONS + 1, 2 * L) == "serial"    # too wide
    assert auto(3600, 398, 2) == "serial"                 # 2 trials fill 1/4 of their lanes
    assert auto(3600, 398, 5) == "serial"                 # 5 fill 5/8
    assert auto(3600, 398, 6) == "mixed"                  # 6 fill 3/4
    assert auto(3600, 398, L + 1) == "mixed"              # a full group and one alone
    # through train_rprop_many: 200 examples x 553 connections > LANES_MAX_WORK
    X, T = data(200, n_in=20)
    rs = train_rprop_many(nets_for(16, (25,), n_in=20), X, T, seeds=range(16), init_scale=0.5,
                          max_epochs=3)
    assert rs[0].setup["batch"]["method"] == "mixed"
    rs = train_rprop_many(nets_for(2, (25,), n_in=20), X, T, seeds=range(2), init_scale=0.5,
                          max_epochs=3)
    assert rs[0].setup["batch"]["method"] == "serial"


def test_lanes_fill():
    L = _trials.LANES
    assert _handoff.lanes_fill(0, L) == 0.0
    assert _handoff.lanes_fill(L, L) == 1.0
    assert _handoff.lanes_fill(L + 1, L) == (L + 1) / (2 * L)
    assert _handoff.lanes_fill(3, L) == 3 / L


def test_networks_hold_the_returned_weights_and_train_again(handoffs):
    # after a hand-off the networks' own vectors held the training state: the returned
    # networks must hold the relevant epoch's weights and be usable as before
    X, T = data(60, seed=1)
    Xv, Tv = data(30, seed=2)
    nets = nets_for(5, (4,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_rprop_many(nets, X, T, Xv, Tv, seeds=range(5), method="mixed",
                               max_epochs=60, init_scale=0.5, stop=GL(1))
    for r in got:
        assert isinstance(r.net, MLP)
        e = 100.0 / Tv.size * float(((r.net.predict(Xv) - Tv) ** 2).sum())
        assert e == pytest.approx(r.final_val.squared_error_percentage, rel=1e-12)
    assert handoffs == [5]


@pytest.mark.parametrize("block_size, blas_min", [(7, 0), (None, 10**9)])
def test_block_size_and_blas_min_steer_the_handed_off_trials(block_size, blas_min, handoffs):
    X, T = data(50, seed=8)
    nets = nets_for(3, (6, 3))
    kw = dict(max_epochs=30, init_scale=0.5, block_size=block_size, blas_min=blas_min)
    got = train_rprop_many(nets, X, T, seeds=[4, 5, 6], method="mixed", **kw)
    for g, r in zip(got, alone(nets, [4, 5, 6], X, T, **kw)):
        assert_same_run(g, r, rtol=0)
        assert np.array_equal(g.train_error, r.train_error)     # the same kernel, bit for bit
    assert handoffs == [3]
