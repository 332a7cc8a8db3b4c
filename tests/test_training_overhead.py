"""The Python around the kernels: what the strip loop skips when nothing needs it
(timing-free guards of the per-call and per-strip work), and the shortcuts it
takes instead staying exact."""
import math

import numpy as np
import pytest

from fastnet import (MLP, DivergenceError, NoConvergenceWarning, train_backprop, train_rprop,
                     train_rprop_many)
from fastnet import _blas   # (the BLAS thread limit and its bound: no public face)
from fastnet.datasets import make_xor
# The strip loop and its backends are what this file measures: no public face.
from fastnet.training import _backends, _lanes, _loop, _serial
from fastnet.training._divergence import GrowthWatch


def _xor():
    return make_xor().train


def _refuse_blas_limits(monkeypatch):
    # Every BLAS thread limit reads the libraries (threadpoolctl) first.
    def refuse():
        raise AssertionError("single_threaded_blas entered")

    monkeypatch.setattr(_blas, "_blas_libraries", refuse)


def test_a_lanes_batch_enters_no_blas_context(monkeypatch):
    # The lanes call no BLAS: holding it at one thread (threadpoolctl) is pure cost.
    _refuse_blas_limits(monkeypatch)
    X, Y = _xor()
    r = train_rprop_many(MLP(2, (2,), 1), X, Y, n_trials=20, seed=0, max_epochs=30,
                         method="lanes")
    assert r.epochs.tolist() == [30] * 20
    with pytest.raises(AssertionError, match="single_threaded_blas entered"):
        train_rprop_many(MLP(2, (2,), 1), X, Y, n_trials=20, seed=0, max_epochs=30,
                         method="serial", blas_min=0)


@pytest.mark.parametrize("train", ["rprop", "backprop", "serial"])
def test_no_blas_context_where_every_product_is_below_blas_min(monkeypatch, train):
    # XOR 2-2-1 on 4 patterns: every layer product has m*n*k = 4 * 2 * 2 = 16 (the
    # output layer's 4 * 1 * 4 too), so the kernels never call BLAS below blas_min=17;
    # at 16 the products reach it and BLAS is held at one thread.
    _refuse_blas_limits(monkeypatch)
    X, Y = _xor()

    def run(blas_min):
        net = MLP(2, (2,), 1)
        if train == "rprop":
            return train_rprop(net, X, Y, X, Y, max_epochs=10, init_scale=0.5, seed=1,
                               blas_min=blas_min)
        if train == "backprop":
            return train_backprop(net, X, Y, max_epochs=10, init_scale=0.5, seed=1,
                                  blas_min=blas_min)
        return train_rprop_many(net, X, Y, n_trials=3, seed=1, max_epochs=10,
                                method="serial", blas_min=blas_min)

    run(17)
    with pytest.raises(AssertionError, match="single_threaded_blas entered"):
        run(16)


def test_calls_blas_bounds_every_product():
    net = MLP(3, (5,), 2)                     # shortcut: output layer 2 x (3 + 5) = 16
    assert _blas.calls_blas(net, 10, 160) and not _blas.calls_blas(net, 10, 161)
    plain = MLP(3, (5,), 2, shortcut=False)   # widest: the hidden layer, 5 x 3
    assert _blas.calls_blas(plain, 10, 150) and not _blas.calls_blas(plain, 10, 151)


@pytest.mark.parametrize("with_val, calls", [(False, 1), (True, 3)])
def test_lanes_final_errors_on_the_lanes_own_weights(monkeypatch, with_val, calls):
    # Without a validation set the weights returned are those the trials stopped
    # at, still in the lanes: the final errors need no second transposition.
    X, Y = _xor()
    seen = []
    to_lanes = _lanes.to_lanes

    def counting(*args, **kwargs):
        seen.append(args[0].shape)
        return to_lanes(*args, **kwargs)

    monkeypatch.setattr(_lanes, "to_lanes", counting)
    val = (X, Y) if with_val else ()
    r = train_rprop_many(MLP(2, (2,), 1), X, Y, *val, n_trials=13, seed=1, max_epochs=25,
                         method="lanes")
    assert len(seen) == calls
    net = MLP(2, (2,), 1)
    for i in (0, 12):
        alone = net.copy().set_weights(r.weights[i])
        e = 100.0 / Y.size * float(np.sum((alone.predict(X) - Y) ** 2))
        assert r.final_train.squared_error_percentage[i] == pytest.approx(e, rel=1e-12)


def test_one_trials_strip_ends_need_no_index_arrays(monkeypatch):
    # train_rprop's strip ends measure one trial in floats, not through the
    # batch's array interface.
    def refuse(*args):
        raise AssertionError("Trials.sse called")

    monkeypatch.setattr(_backends.Trials, "sse", refuse)
    monkeypatch.setattr(_serial.Serial, "sse", refuse)
    X, Y = _xor()
    r = train_rprop(MLP(2, (2,), 1), X, Y, X, Y, max_epochs=20, strip=5, init_scale=0.5,
                    seed=3)
    assert r.val_error.size == 4 and r.relevant_epoch in (5, 10, 15, 20)


def test_a_single_network_trains_in_the_serial_backend_directly(monkeypatch):
    # (no layer of Trials between train_rprop's strip loop and its workspace)
    def refuse(*args, **kwargs):
        raise AssertionError("Trials built")

    monkeypatch.setattr(_backends.Trials, "__init__", refuse)
    X, Y = _xor()
    r = train_rprop(MLP(2, (2,), 1), X, Y, X, Y, max_epochs=20, init_scale=0.5, seed=3)
    assert r.epochs == 20
    with pytest.raises(AssertionError, match="Trials built"):
        train_rprop_many(MLP(2, (2,), 1), X, Y, n_trials=2, seed=0, max_epochs=5,
                         method="serial")


def test_growth_check_ignores_what_stopped_trials_left_in_the_history():
    # The history is not zeroed: epochs after a trial stopped hold whatever was
    # there (here NaN), and must not hide another trial's growth.
    growth = GrowthWatch(3, single=False)
    trials = _backends.Trials(3)               # (no lanes: no largest error kept)
    history = np.array([[1.0, 2.0, np.nan], [1.0, 1.0, 1.0], [1.0, 5e6, 3e7]])
    with pytest.raises(DivergenceError, match="trial 2"):
        growth.check(history, np.array([1, 2]), np.zeros(2, np.int64), 0, 3, trials.top)
    # where the lanes kept the largest error they wrote, that bound decides
    trials.top = 1.0
    growth.check(history, np.array([1, 2]), np.zeros(2, np.int64), 0, 3, trials.top)
    trials.top = 3e7
    with pytest.raises(DivergenceError, match="trial 2"):
        growth.check(history, np.array([1, 2]), np.zeros(2, np.int64), 0, 3, trials.top)


def test_growth_check_of_trials_trained_one_after_another():
    # (L-BFGS's trials: each runs all its strips before the next starts) Each trial's
    # limit comes from its own first epoch, whatever the rows of the others hold.
    growth = GrowthWatch(3, single=False)
    history = np.array([[50.0, 4e7, 3.0], [np.nan, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    growth.check(history, np.array([0]), np.zeros(1, np.int64), 0, 3)      # 4e7 < 1e6 * 50
    history[1] = [1.0, 2.0, 3e6]
    with pytest.raises(DivergenceError, match="trial 1 grew from 1 % in epoch 1 to 3e\\+06"):
        growth.check(history, np.array([1]), np.zeros(1, np.int64), 0, 3)
    history[2] = [2.0, 1.0, 1.0]
    growth.check(history, np.array([2]), np.zeros(1, np.int64), 0, 3)
    # the final errors: each against its own trial's limit
    growth.check_final(np.array([4e7, 1.0, 1.0]), None, np.array([3, 3, 3]))
    with pytest.raises(DivergenceError, match="trial 2"):
        growth.check_final(np.array([4e7, 1.0, 3e6]), None, np.array([3, 3, 3]))


def test_finite_checks_without_the_python_wrappers():
    assert _loop._finite(np.array([1e308, 1e308, 1.0]))
    assert _loop._finite(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert not _loop._finite(np.array([1.0, np.nan]))
    assert not _loop._finite(np.array([np.inf, -np.inf]))
    assert _loop._finite(np.empty(0))
    net = MLP(2, (), 1)
    net.predict(np.array([[1e308, 1e308]]))          # large but finite data is taken
    with pytest.raises(ValueError, match="`X` must be finite; found inf at row 0, column 1"):
        MLP(3, (), 1).predict(np.array([[1e308, np.inf, -np.inf]]))


def test_strip_end_states_read_the_validation_curve():
    # (opt_val_error as np.minimum.reduce; GL formats its name only for a message)
    from fastnet.stopping import GL

    X, Y = _xor()
    seen = []
    with pytest.warns(NoConvergenceWarning, match="GL1e"):
        train_rprop(MLP(2, (2,), 1), X, Y, X, Y, max_epochs=10, stop=GL(1e9), init_scale=0.5,
                    seed=3, callback=lambda epoch, state: seen.append(state))
    assert [s.epoch for s in seen] == [5, 10]
    for state in seen:
        assert state.opt_val_error == float(np.min(state.val_errors))
        assert state.gl == 100.0 * (state.val_error / state.opt_val_error - 1.0)


@pytest.mark.parametrize("net", [MLP(2, (2,), 1), MLP(2, (2,), 1, shortcut=False),
                                 MLP(9, (4, 2), 2), MLP(3, (), 2),
                                 MLP(2, (3,), 1, hidden_activation="tanh",
                                     output_activation="logistic")])
def test_network_record_made_once_per_topology_as_from_the_network(net):
    rng = np.random.default_rng(0)
    X, Y = rng.uniform(size=(4, net.n_in)), rng.uniform(0.2, 0.8, size=(4, net.n_out))

    def network_record(net):   # the set-up record's network entry
        return train_rprop(net, X, Y, max_epochs=1, init_scale=0.5, seed=0).setup["network"]

    expected = {"repr": repr(net), "layer_sizes": list(net.layer_sizes),
                "shortcut": net.shortcut, "n_connections": net.n_connections,
                "hidden_activation": net.hidden_activation,
                "output_activation": net.output_activation, "proben1": net.proben1_spec,
                "dtype": "float64"}
    first = network_record(net)
    assert first == expected and list(first) == list(expected)
    first["layer_sizes"].append(99)
    first["repr"] = "changed"
    assert network_record(net.copy()) == expected


@pytest.mark.parametrize("scale, delta0", [(0.5, (0.05, 0.2)), (0.37, None), (0.0, (0.0, 0.0)),
                                           (1e100, (1e-300, 1.0)), (3, (1, 2))])
def test_draw_trials_is_the_documented_uniform_draw_bit_for_bit(scale, delta0):
    # (drawn as random() scaled in place: the same low + (high - low) * u)
    from fastnet.training import draw_trials

    net = MLP(2, (3,), 2)
    W, steps = draw_trials(net, 257, 11, init_scale=scale, delta0=delta0)
    rng = np.random.default_rng(11)
    expected = rng.uniform(-scale, scale, (257, net.n_connections))
    assert W.dtype == np.float64 and W.flags.c_contiguous
    assert W.tobytes() == expected.tobytes()
    if delta0 is None:
        assert steps is None
    else:
        assert steps.tobytes() == rng.uniform(*delta0, (257, net.n_connections)).tobytes()


def _rule_parameters(**kw):
    X, Y = _xor()
    r = train_rprop(MLP(2, (2,), 1), X, Y, **{"max_epochs": 2, "init_scale": 0.5, "seed": 0, **kw})
    return r.setup["parameters"]


def test_rprop_rules_are_checked_once_per_arguments():
    # (the cache of checked rules is internal; what it must not change is checked below
    # through train_rprop)
    from fastnet.training._plans import resolve_rprop
    from fastnet.training._rprop import _UNSET

    def plan(**kw):
        return resolve_rprop(None, kw, _UNSET)

    assert plan(eta_plus=1.3).algorithm is plan(eta_plus=1.3).algorithm
    assert plan(eta_plus=1.3).algorithm is not plan(eta_plus=1.4).algorithm
    assert plan(delta0=[0.05, 0.2]).algorithm == plan(delta0=(0.05, 0.2)).algorithm


def test_cached_rprop_rules_tell_bools_and_signed_zeros_from_equal_numbers():
    # True == 1 and -0.0 == 0.0, with equal hashes: a rule cached by value alone
    # would accept a bool it refuses and record a zero with the other sign.
    assert _rule_parameters(delta_max=1)["delta_max"] == 1.0
    with pytest.raises(TypeError, match="`delta_max` must be a real number, got bool True"):
        _rule_parameters(delta_max=True)
    assert _rule_parameters(delta0=(1, 1))["delta0"] == [1.0, 1.0]
    with pytest.raises(TypeError, match=r"`delta0\[0\]` must be a real number, got bool True"):
        _rule_parameters(delta0=(True, 1))
    for zero, sign in ((0.0, 1.0), (-0.0, -1.0), (0.0, 1.0)):
        assert math.copysign(1.0, _rule_parameters(delta_min=zero)["delta_min"]) == sign
    assert _rule_parameters(delta0=[0.05, 0.1])["delta0"] == [0.05, 0.1]


def test_cached_rprop_rules_follow_the_preset():
    for preset, eta_plus in (("proben1-multilayer", 1.2), ("proben1-multilayer-literal", 1.1),
                             ("proben1-multilayer", 1.2)):
        parameters = _rule_parameters(preset=preset, stop=None)
        assert (parameters["eta_plus"], parameters["preset"]) == (eta_plus, preset)


@pytest.mark.parametrize("method", ["lanes", "serial", "mixed"])
def test_one_trial_batches_end_as_the_first_trial_of_two(method):
    # (one trial: its last weights copied from its row, its final errors scaled in
    # a float; a trial's numbers do not depend on how many share the call)
    X, Y = _xor()
    kw = dict(seed=5, max_epochs=40, method=method, init_scale=0.5)
    one = train_rprop_many(MLP(2, (2,), 1), X, Y, X, Y, X_test=X, Y_test=Y, n_trials=1, **kw)
    two = train_rprop_many(MLP(2, (2,), 1), X, Y, X, Y, X_test=X, Y_test=Y, n_trials=2, **kw)
    assert one.weights.tobytes() == two.weights[:1].tobytes()
    for a, b in ((one.final_train, two.final_train), (one.final_val, two.final_val),
                 (one.final_test, two.final_test)):
        assert a.squared_error_percentage.tobytes() == b.squared_error_percentage[:1].tobytes()
    assert one[0].relevant_epoch == two[0].relevant_epoch
    assert one[0].traversals == two[0].traversals


def test_cached_rprop_plans_follow_every_argument():
    from fastnet.stopping import GL
    from fastnet.training._plans import resolve_rprop   # (the plan cache: internal)
    from fastnet.training._rprop import _UNSET

    def plan(preset=None, **kw):
        return resolve_rprop(preset, kw, _UNSET)

    assert plan(init_scale=0.5) is plan(init_scale=0.5)
    assert plan(stop="linear").stop.name != plan(stop="multilayer").stop.name
    assert plan("proben1-linear").init_scale == 0.01
    assert plan("proben1-multilayer").init_scale == 0.2
    assert plan(max_epochs=1).max_epochs == 1 and plan(max_epochs=True).max_epochs is True
    assert math.copysign(1.0, plan(init_scale=0.0).init_scale) == 1.0
    assert math.copysign(1.0, plan(init_scale=-0.0).init_scale) == -1.0
    stop = GL(5)
    assert plan(stop=stop).stop is stop and plan(stop=GL(5)).stop is not stop
    _rule_parameters(max_epochs=1)
    with pytest.raises(TypeError, match="`max_epochs` must be an integer, got bool True"):
        _rule_parameters(max_epochs=True)


def test_results_and_states_users_see_come_from_their_constructors(monkeypatch):
    from fastnet.stopping import TrainingState
    from fastnet import TrainResult

    built = []
    for cls in (TrainResult, TrainingState):
        def init(self, *args, _init=cls.__init__, **kwargs):
            built.append(type(self).__name__)
            _init(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", init)
    X, Y = _xor()
    states = []
    r = train_rprop(MLP(2, (2,), 1), X, Y, X, Y, max_epochs=10, init_scale=0.5, seed=3,
                    callback=lambda epoch, state: states.append(state))
    assert built == ["TrainingState", "TrainingState", "TrainResult"]
    assert [s.epoch for s in states] == [5, 10] and r.epochs == 10


def test_one_trials_growth_check_ignores_what_a_stop_left_after_it():
    # One trial: the strip's maximum in Python floats. The epochs after a success
    # check stopped the trial hold whatever was there (here NaN); growth before
    # them is still seen, and NaN after them hides nothing.
    growth = GrowthWatch(1, single=True)
    history = np.array([[1.0, 2.0, 3e7, np.nan, np.nan]])
    with pytest.raises(DivergenceError, match="grew from 1 % in epoch 1 to 3e\\+07 % in epoch 3"):
        growth.check(history, np.array([0]), np.array([-3], np.int64), 0, 5)
    history = np.array([[1.0, 2.0, 3.0, np.nan, 5e7]])             # (5e7: after the stop)
    growth.check(history, np.array([0]), np.array([-3], np.int64), 0, 5)
