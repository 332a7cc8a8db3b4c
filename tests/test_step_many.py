"""A user's rule over every trial at once (`Algorithm.step_many`): against the shipped rule
it rewrites, against its own per-network `step`, through stopping, diverging, strips,
validation sets, float32, one network and the near-overflow path."""
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from fastnet import MLP, Trainer, train, train_many
from fastnet.algorithms import Algorithm
from fastnet.datasets import make_xor
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.stopping import GL, Correct
from fastnet.training import _step_many

X, Y = make_xor().train
NET = MLP(2, [2], 1, hidden_activation="tanh", output_activation="logistic", shortcut=False)
MOMENTUM = "backprop(learning_rate=0.5, momentum=0.9)"


@dataclass(frozen=True)
class MomentumMany(Algorithm):
    """Batch backpropagation with momentum over all trials at once."""

    learning_rate: float = 0.5
    momentum: float = 0.9

    def init_state_many(self, weights):
        return np.zeros_like(weights)

    def step_many(self, weights, gradient, error, state):
        change = -self.learning_rate * gradient + self.momentum * state
        return weights + change, change


@dataclass(frozen=True)
class MomentumBoth(MomentumMany):
    """The same rule per network too (`step`): a class with both."""

    def init_state(self, weights):
        return np.zeros_like(weights)

    def step(self, weights, gradient, error, state):
        change = -self.learning_rate * gradient + self.momentum * state
        return weights + change, change


@dataclass(frozen=True)
class TupleState(Algorithm):
    """A state of two arrays (Adam's moments) and the error used: tuple states work."""

    rate: float = 0.1

    def init_state_many(self, weights):
        return np.zeros_like(weights), np.zeros((weights.shape[0], 1))

    def step_many(self, weights, gradient, error, state):
        m, t = state
        m = 0.9 * m + 0.1 * gradient
        t = t + 1.0
        return weights - self.rate * m / (1 - 0.9 ** t), (m, t)


def _many(algorithm, **kw):
    args = dict(stop=Correct(), strip=1, max_epochs=400)
    args.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        return train_many(kw.pop("net", NET), X, Y, algorithm=algorithm,
                          **{k: v for k, v in args.items() if k != "net"})


def test_momentum_over_lanes_is_batch_backpropagation_bit_for_bit():
    # (issue 59) the docs' rule written over all trials gives what the shipped
    # backprop(learning_rate=0.5, momentum=0.9) gives, trial for trial: the same lanes'
    # gradients, the same arithmetic, the same check
    mine = _many(MomentumMany(), n_trials=2000, seed=1, max_epochs=1000)
    ref = _many(MOMENTUM, n_trials=2000, seed=1, max_epochs=1000)
    assert mine[0].setup["batch"]["method"] == "lanes"
    assert np.array_equal(mine.epochs, ref.epochs)
    assert mine.stop_reason == ref.stop_reason
    assert 0 < sum(r == "correct" for r in mine.stop_reason) < 2000
    np.testing.assert_allclose(mine.weights, ref.weights, rtol=1e-12, atol=1e-14)
    assert np.array_equal(mine.train_error, ref.train_error, equal_nan=True)
    assert [r.traversals for r in mine] == [r.traversals for r in ref]


def test_step_many_equals_stacked_steps_bit_for_bit():
    # the batch form of a rule against its per-network form on the same arrays
    g = np.random.default_rng(0)
    W, G, E = g.normal(size=(7, 9)), g.normal(size=(7, 9)), g.random(7)
    rule = MomentumBoth()
    S = rule.init_state_many(W)
    for _ in range(3):
        new, S2 = rule.step_many(W.copy(), G.copy(), E.copy(), S.copy())
        rows = [rule.step(W[k].copy(), G[k].copy(), float(E[k]), S[k].copy()) for k in range(7)]
        assert np.array_equal(new, np.array([r[0] for r in rows]))
        assert np.array_equal(S2, np.array([r[1] for r in rows]))
        W, S = new, S2


def test_a_class_with_both_uses_step_many_in_the_lanes_and_step_alone():
    many = _many(MomentumBoth(), n_trials=13, seed=4)
    serial = _many(MomentumBoth(), n_trials=13, seed=4, method="serial")
    assert many[0].setup["batch"]["method"] == "lanes"
    assert serial[0].setup["batch"]["method"] == "serial"
    assert np.array_equal(many.epochs, serial.epochs)
    # the single-network kernels sum in another order: rounding apart
    np.testing.assert_allclose(many.weights, serial.weights, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("K", [1, 3, 17, 1031])
def test_odd_trial_counts(K):
    # trials beyond a group's lanes (the last group part empty), stops in every group
    mine = _many(MomentumMany(), n_trials=K, seed=7, max_epochs=300)
    ref = _many(MOMENTUM, n_trials=K, seed=7, max_epochs=300)
    assert np.array_equal(mine.epochs, ref.epochs)
    assert np.array_equal(mine.weights, ref.weights)


def test_a_rule_with_only_step_many_trains_one_network_too():
    net = NET.copy()
    alone = train(net, X, Y, algorithm=MomentumMany(), max_epochs=200, init_scale=0.5, seed=3)
    ref = train(NET.copy(), X, Y, algorithm=MOMENTUM, max_epochs=200, init_scale=0.5, seed=3)
    np.testing.assert_allclose(alone.net.weights, ref.net.weights, rtol=1e-12, atol=1e-14)
    assert alone.traversals == ref.traversals
    trainer = Trainer(NET.copy(), X, Y, algorithm=MomentumMany(), init_scale=0.5, seed=3)
    trainer.run(120)
    trainer.run(80)
    np.testing.assert_array_equal(trainer.net.weights, alone.net.weights)


def test_tuple_state_history_off_and_float32():
    for dtype in ("float64", "float32"):
        net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="logistic",
                  dtype=dtype)
        full = _many(TupleState(), net=net, n_trials=21, seed=2)
        low = _many(TupleState(), net=net, n_trials=21, seed=2, history=False)
        assert full.weights.dtype == np.dtype(dtype)
        assert np.array_equal(full.epochs, low.epochs)
        assert np.array_equal(full.weights, low.weights)
        np.testing.assert_array_equal(low.min_train_error, full.min_train_error)
        assert 0 < sum(r == "correct" for r in full.stop_reason) < 21


def test_validation_sets_strips_and_criteria_are_the_loops():
    # early stopping by GL on a validation set, strips of 5: as the serial form trains it
    Xv, Yv = make_xor().train
    kw = dict(n_trials=9, seed=5, stop=GL(5), strip=5, max_epochs=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        many = train_many(NET, X, Y, Xv, Yv, algorithm=MomentumBoth(), **kw)
        serial = train_many(NET, X, Y, Xv, Yv, algorithm=MomentumBoth(), method="serial", **kw)
    assert many[0].setup["batch"]["method"] == "lanes"
    assert np.array_equal(many.epochs, serial.epochs)
    assert many.stop_reason == serial.stop_reason
    np.testing.assert_allclose(many.relevant_epoch, serial.relevant_epoch)
    np.testing.assert_allclose(many.weights, serial.weights, rtol=1e-9, atol=1e-12)


def test_a_diverging_trial_raises_as_the_shipped_rule():
    net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="linear")
    kw = dict(n_trials=17, seed=335, init_scale=1.286245480850245, max_epochs=50)
    with pytest.raises(DivergenceError) as mine:
        _many(MomentumMany(), net=net, **kw)
    with pytest.raises(DivergenceError) as ref:
        _many(MOMENTUM, net=net, **kw)
    assert (mine.value.trial, mine.value.epoch) == (ref.value.trial, ref.value.epoch)


def test_near_overflow_trials_take_the_single_network_gradient(monkeypatch):
    # the lanes' safe range lowered to 2: trials whose weights reach it go on with the
    # single-network kernels' gradients, still in the one call of the rule
    from fastnet.training import _lanes

    monkeypatch.setattr(_step_many, "safe_weight", lambda *a, **k: 2.0)
    mine = _many(MomentumBoth(), n_trials=12, seed=8, max_epochs=200)
    assert 0 < sum(mine[0].setup["batch"]["handoffs"]) <= 12
    serial = _many(MomentumBoth(), n_trials=12, seed=8, max_epochs=200, method="serial")
    assert np.array_equal(mine.epochs, serial.epochs)
    np.testing.assert_allclose(mine.weights, serial.weights, rtol=1e-9, atol=1e-12)
    assert _lanes.safe_weight is not None


@dataclass(frozen=True)
class BadShape(MomentumMany):
    def step_many(self, weights, gradient, error, state):
        return weights[:, :-1], state


@dataclass(frozen=True)
class BadState(MomentumMany):
    def init_state_many(self, weights):
        return [1.0, 2.0]


def test_wrong_returns_are_named():
    with pytest.raises(ValueError, match=r"BadShape.step_many must return weights of shape "
                                         r"\(5, 9\), got shape \(5, 8\)"):
        _many(BadShape(), n_trials=5, seed=1, net=MLP(2, [2], 1, shortcut=False))
    with pytest.raises(TypeError, match=r"BadState.init_state_many must return the state as an "
                                        r"array or a tuple of arrays with the 5 trials on the "
                                        r"first axis, got float"):
        _many(BadState(), n_trials=5, seed=1)


def test_method_lanes_is_refused_where_the_lanes_cannot_train_it():
    with pytest.raises(ValueError, match=r"`method` 'lanes' trains MomentumMany.step_many on "
                                         r"the lanes' gradients of the summed squared error"):
        train_many(NET, X, Y, algorithm=MomentumMany(), n_trials=3, seed=1, max_epochs=5,
                   weight_decay=0.01, method="lanes")
    r = train_many(NET, X, Y, algorithm=MomentumMany(), n_trials=3, seed=1, max_epochs=5,
                   weight_decay=0.01)
    assert r[0].setup["batch"]["method"] == "serial"


def test_a_callback_sees_every_strip_end_and_can_stop_a_trial():
    seen = []

    def callback(i, epoch, state):
        seen.append((i, epoch))
        return i == 2 and epoch == 10           # trial 2 is called off at epoch 10

    kw = dict(n_trials=4, seed=3, strip=5, max_epochs=30, callback=callback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        many = train_many(NET, X, Y, algorithm=MomentumBoth(), **kw)
        mine, seen_many = many, list(seen)
        seen.clear()
        serial = train_many(NET, X, Y, algorithm=MomentumBoth(), method="serial", **kw)
    assert mine[0].setup["batch"]["method"] == "lanes"
    assert seen_many == seen and (2, 10) in seen
    assert mine.stop_reason == serial.stop_reason and mine.stop_reason[2] == "callback"
    assert np.array_equal(mine.epochs, serial.epochs)
