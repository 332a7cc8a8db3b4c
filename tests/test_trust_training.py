"""No silent wrong results in training: initialisation, divergence, arguments that overflow."""
import warnings

import numpy as np
import pytest

from fastnet import (MLP, DivergenceError, NoConvergenceWarning, train, train_backprop, train_many,
                     train_rprop, train_rprop_many)
from fastnet.algorithms import Backprop
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
    for trainer in (train_rprop, train_backprop):
        with pytest.raises(ValueError, match="`net` has all weights zero.*init_scale"):
            trainer(net, XOR_X, XOR_T, max_epochs=5)
    # a linear network from zero is fine (no symmetry to break)
    lin = MLP(2, (), 1)
    lin.set_weights(np.zeros(lin.n_connections))
    assert train_rprop(lin, XOR_X, XOR_T, max_epochs=5).epochs == 5


# --------------------------------------------------------------- divergence

@pytest.mark.parametrize("max_epochs", [2, 4])
def test_batch_backprop_diverging_in_its_last_epoch_raises(max_epochs):
    # E_tr: 76.5 % in epoch 1, 9.7e39 % in epoch 3, non-finite in epoch 4. With
    # max_epochs=2 the returned network's error (epoch 3's weights) grew.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (129, 27))
    Y = (rng.uniform(size=(129, 3)) > 0.5) * 1.0
    net = MLP(27, (17, 2), 3, shortcut=False, hidden_activation="linear")
    with pytest.raises(DivergenceError, match=r"grew from 76.54 % in epoch 1 to 9.715e\+39 % "
                                              r"in epoch 3") as info:
        train_backprop(net, X, Y, learning_rate=0.1, max_epochs=max_epochs, init_scale=0.5,
                       seed=1011)
    assert info.value.epoch == 3
    assert isinstance(info.value, FloatingPointError)


def test_growth_limit_has_a_floor():
    # (the divergence bound alone: no public face)
    from fastnet.training._divergence import DIVERGENCE_FLOOR, DIVERGENCE_GROWTH, growth_limit

    assert growth_limit(1e-9) == DIVERGENCE_GROWTH * DIVERGENCE_FLOOR   # a perfect start
    assert growth_limit(58.0) == DIVERGENCE_GROWTH * 58.0
    # by trial, as the loop uses it; a start beyond 1.8e302 % has no finite limit (no warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        limits = growth_limit(np.array([1e-9, 58.0, 1e303]))
    assert limits.tolist() == [DIVERGENCE_GROWTH * DIVERGENCE_FLOOR, DIVERGENCE_GROWTH * 58.0,
                               np.inf]


def _runaway():
    # Linear units, huge RPROP steps: E_tr 7.37 % in epoch 1, 1.26e9 % in epoch 2.
    g = np.random.default_rng(0)
    X, Y = g.random((20, 2)), g.random((20, 1))
    kw = dict(delta0=1e3, delta_max=1e12, eta_plus=1.9, eta_minus=0.99, variant="rprop-",
              max_epochs=200)
    return X, Y, kw, [MLP(2, (2,), 1, output_activation="linear", hidden_activation="linear",
                          seed=s) for s in range(3)]


def test_rprop_running_away_without_nan_diverges():
    X, Y, kw, nets = _runaway()
    with pytest.raises(DivergenceError, match=r"grew from 7.37 % in epoch 1 to 1.259e\+09 % "
                                              r"in epoch 2, more than 1e\+06 times") as info:
        train_rprop(nets[0], X, Y, **kw)
    assert info.value.epoch == 2


@pytest.mark.parametrize("method", ["lanes", "serial", "mixed", "auto"])
def test_every_method_diverges_by_growth_as_train_rprop(method):
    X, Y, kw, nets = _runaway()
    with pytest.raises(DivergenceError, match=r"trial 0.*grew from 7.37 % in "
                                              r"epoch 1 to 1.259e\+09 % in epoch 2") as info:
        train_rprop_many(nets, X, Y, method=method, **kw)
    assert (info.value.trial, info.value.epoch) == (0, 2)



@pytest.mark.parametrize("form", ["one", "arrays", "list"])
def test_weights_beyond_max_weight_are_divergence(form):
    # a finite weight beyond MAX_WEIGHT could be neither set nor loaded again: the
    # many-trials result could not even build its TrainResult (set_weights refused it)
    X, T = np.array([[-1.6e150]]), np.array([[1.0]])
    kw = dict(algorithm=Backprop(learning_rate=1.0), loss="cross_entropy", max_epochs=1)
    net = MLP(1, (), 1, output_activation="logistic").set_weights([0.3, 0.2])
    with pytest.raises(DivergenceError, match=r"grew to 1\.6e\+150 by epoch 1, beyond "
                                              r"MAX_WEIGHT = 1e\+150") as info:
        if form == "one":
            train(net, X, T, **kw)
        elif form == "arrays":
            train_many(net, X, T, initial_weights=[net.weights], **kw)
        else:
            train_many([net], X, T, **kw)
    assert (info.value.epoch, info.value.trial) == (1, None if form == "one" else 0)

def test_cancer1_batch_backprop_with_momentum_diverges(proben1_root):
    # Without the growth rule: stop_reason "GL2" and E_te = 5e14 %.
    from fastnet.datasets import load_proben1
    from fastnet.rprop import proben1_stopping

    d = load_proben1("cancer1", root=proben1_root)
    (X, Y), (Xv, Yv), (Xt, Yt) = d.train, d.val, d.test
    with pytest.raises(DivergenceError, match=r"grew from 58.19 % in epoch 1 to .* in epoch 4"):
        train_backprop(MLP(X.shape[1], (4, 2), Y.shape[1], seed=0), X, Y, Xv, Yv, X_test=Xt,
                       Y_test=Yt, learning_rate=0.01, momentum=0.9,
                       stop=proben1_stopping("multilayer"), max_epochs=3000)


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


# --------------------------------------------------------------- many trials

def _saturating_overflow():
    # Net inputs overflow (1e300 inputs, 1e50 weights); tanh and logistic units
    # saturate, and the lanes' fused multiply-adds kept inf - huge at inf (not NaN).
    g = np.random.default_rng(3)
    X, Y = g.random((30, 3)) * 1e300, (g.random((30, 2)) > .5) * 1.

    def nets():
        return [MLP(3, (4,), 2, hidden_activation="tanh", output_activation="logistic", seed=1)
                for _ in range(4)]
    return X, Y, nets


@pytest.mark.parametrize("method", ["lanes", "serial", "mixed", "auto"])
def test_every_method_raises_where_train_rprop_raises(method):
    X, Y, nets = _saturating_overflow()
    with pytest.raises(DivergenceError, match="epoch 1") as alone:
        train_rprop(nets()[0], X, Y, seed=0, init_scale=1e50, max_epochs=20)
    with pytest.raises(DivergenceError, match=r"trial 0.*epoch 1") as many:
        train_rprop_many(nets(), X, Y, seeds=range(4), init_scale=1e50, max_epochs=20,
                         method=method)
    assert (many.value.trial, many.value.epoch) == (0, alone.value.epoch)


def test_lanes_that_might_overflow_train_as_train_rprop_does():
    # Huge but finite: the trials leave the lanes and get train_rprop's numbers.
    g = np.random.default_rng(0)
    X, Y = g.random((20, 2)) * 1e150, (g.random((20, 1)) > .5) * 1.
    nets = [MLP(2, (3,), 1, hidden_activation="tanh", output_activation="logistic", seed=s)
            for s in range(3)]
    alone = [train_rprop(n.copy(), X, Y, max_epochs=10) for n in nets]
    many = train_rprop_many(nets, X, Y, max_epochs=10, method="lanes")
    for a, m in zip(alone, many):
        assert np.array_equal(a.net.weights, m.net.weights)
        assert a.final_train.squared_error_percentage == m.final_train.squared_error_percentage
        assert np.isfinite(m.net.predict(X)).all()


@pytest.mark.parametrize("method", ["lanes", "serial", "mixed"])
def test_a_success_study_warns_once_per_call(method):
    nets = [MLP(2, (2,), 1, seed=s) for s in range(12)]
    with pytest.warns(NoConvergenceWarning, match=r"^\d+ of 12 trials reached max_epochs=3 "
                      "before the stopping criterion correct held") as caught:
        train_rprop_many(nets, XOR_X, XOR_T, stop=Correct(), strip=1, max_epochs=3,
                         method=method)
    assert len(caught) == 1


# --------------------------------------------------------------- arguments named

def _trainers():
    return [
        lambda **kw: train_rprop(MLP(2, (2,), 1), XOR_X, XOR_T, max_epochs=2, **kw),
        lambda **kw: train_backprop(MLP(2, (2,), 1), XOR_X, XOR_T, max_epochs=2, **kw),
        lambda **kw: train_rprop_many([MLP(2, (2,), 1)], XOR_X, XOR_T, max_epochs=2, **kw),
    ]


@pytest.mark.parametrize("train", _trainers())
def test_a_blas_min_beyond_ssize_t_is_named(train):
    with pytest.raises(ValueError, match=r"`blas_min` must be <= 9223372036854775807, "
                                         r"got 9223372036854775808"):
        train(blas_min=2 ** 63)


@pytest.mark.parametrize("train", _trainers())
def test_an_array_as_classification_is_named(train):
    with pytest.raises(TypeError, match=r"`classification` must be True, False or 'auto', "
                                        r"got ndarray array\(\[1, 2\]\)"):
        train(classification=np.array([1, 2]))
    with pytest.raises(ValueError, match="`classification` must be True, False or 'auto', "
                                         "got 'yes'"):
        train(classification="yes")


@pytest.mark.parametrize("method", ["auto", "lanes", "serial", "mixed"])
def test_a_ragged_X_is_named_in_train_rprop_many(method):
    with pytest.raises(ValueError, match=r"`X` must be a 2-D array of numbers \(rows of equal "
                                         r"length\), got a list"):
        train_rprop_many([MLP(2, (2,), 1)], [[0., 0.], [1.]], [[0.], [1.]], method=method)


@pytest.mark.parametrize("train", _trainers())
def test_a_target_range_of_infinite_width_is_named(train):
    with pytest.raises(ValueError, match=r"`target_range` must be finite with 0 < o_max - o_min"
                                         r" < inf, got \(-1e\+308, 1e\+308\), whose width "
                                         r"o_max - o_min is inf"):
        train(target_range=(-1e308, 1e308))


# --------------------------------------------------------------- threads

def _training_in_a_thread(net, train):
    """Start ``train(net, callback)`` in a thread that blocks in its first callback;
    return (thread, release event, outcome list)."""
    import threading

    started, release, outcome = threading.Event(), threading.Event(), []

    def callback(*args):
        started.set()
        assert release.wait(30)

    def run():
        outcome.append(train(net, callback))

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(30)
    return thread, release, outcome


@pytest.mark.parametrize("first", ["rprop", "backprop", "many"])
def test_a_network_takes_one_trainer_at_a_time(first):
    from fastnet.exceptions import TrainingInProgressError

    net, other = MLP(2, (2,), 1, seed=0), MLP(2, (2,), 1, seed=1)
    train = {
        "rprop": lambda n, cb: train_rprop(n, XOR_X, XOR_T, max_epochs=10, callback=cb),
        "backprop": lambda n, cb: train_backprop(n, XOR_X, XOR_T, max_epochs=10, callback=cb),
        "many": lambda n, cb: train_rprop_many([n], XOR_X, XOR_T, max_epochs=10,
                                               callback=cb)[0],
    }[first]
    thread, release, outcome = _training_in_a_thread(net, train)
    try:
        msg = "`net` is being trained by another thread; one network takes one trainer"
        with pytest.raises(TrainingInProgressError, match=msg):
            train_rprop(net, XOR_X, XOR_T, max_epochs=5)
        with pytest.raises(TrainingInProgressError, match=msg):
            train_backprop(net, XOR_X, XOR_T, max_epochs=5)
        for method in ("lanes", "serial"):
            with pytest.raises(TrainingInProgressError, match=r"`nets\[1\]` is being trained"):
                train_rprop_many([other, net], XOR_X, XOR_T, max_epochs=5, method=method)
        # predicting while it trains is allowed; another network trains meanwhile
        assert np.isfinite(net.predict(XOR_X)).all()
        train_rprop(other, XOR_X, XOR_T, max_epochs=5)
    finally:
        release.set()
        thread.join(30)
    # the first training was not disturbed, and the network is free again
    assert outcome[0].net is net and outcome[0].epochs == 10
    assert np.array_equal(outcome[0].net.weights, net.weights)
    assert train_rprop(net, XOR_X, XOR_T, max_epochs=5).epochs == 5
