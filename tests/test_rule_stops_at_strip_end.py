"""A rule that stops itself (SCG, Levenberg-Marquardt, L-BFGS) exactly at a strip
end: that strip end's validation and test errors are measured at the weights the
rule stopped with, like any other strip end's, and count in ``min_val_error``,
``gl_end`` and the relevant epoch (they were once read from memory never written).

Each expected error is computed apart from the loop: the same run without a
validation set (the sets do not steer these rules, so it stops at the same epoch,
and its network holds the weights it stopped with) predicts the validation and
test sets, scored by :func:`fastnet.measures.squared_error_percentage`.
"""
import warnings

import numpy as np
import pytest

from fastnet import MLP, train, train_many
from fastnet.algorithms import LBFGS, SCG, LevenbergMarquardt
from fastnet.exceptions import NoConvergenceWarning
from fastnet.measures import squared_error_percentage
from fastnet.stopping import generalization_loss

from _training_cases import outputs_at_one_half

# (algorithm, topology) that stop themselves within 500 epochs on cancer1
RULES = {
    "scg": (SCG(), MLP(9, (), 2)),                       # "converged" (lambda overflows)
    "lm": (LevenbergMarquardt(mu_max=1.0), MLP(9, (3,), 2)),            # "mu_max"
    "lbfgs": (LBFGS(ftol=1e-3), MLP(9, (3,), 2)),                       # "converged"
}
SELF_STOPS = {"converged", "mu_max", "abnormal"}


@pytest.fixture(scope="module")
def cancer1(proben1_root):
    from fastnet.datasets import load_proben1

    return load_proben1("cancer1", root=proben1_root)


def _sep(net, X, Y):
    return squared_error_percentage(net.predict(X), Y)


def _strip_for(epochs):
    """A strip that ends exactly at ``epochs``, with strip ends before it where it can."""
    return max((s for s in range(1, epochs) if epochs % s == 0), default=1)


def _check_summary(val, val_epochs, relevant, min_val, gl_end):
    """min_val_error, gl_end and the relevant epoch agree with the errors reported."""
    assert np.isfinite(val).all()
    assert min_val == val.min()
    assert relevant == val_epochs[int(np.argmin(val))]
    assert gl_end == generalization_loss(float(val[-1]), float(val.min()))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        return fn(*args, **kwargs)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_train_measures_the_strip_end_a_rule_stops_at(cancer1, rule):
    algorithm, net = RULES[rule]
    d, seed = cancer1, {"scg": 1, "lm": 8, "lbfgs": 7}[rule]
    plain = _quiet(train, net.copy(), *d.train, algorithm=algorithm, seed=seed,
                   max_epochs=500, init_scale=0.5)
    E = plain.epochs
    assert plain.stop_reason in SELF_STOPS and E < 500
    strip = _strip_for(E)
    runs = [train(net.copy(), *d.train, *d.val, X_test=d.test[0], Y_test=d.test[1],
                  algorithm=algorithm, seed=seed, max_epochs=500, init_scale=0.5, strip=strip)
            for _ in range(2)]
    r = runs[0]
    assert (r.epochs, r.stop_reason, int(r.val_epochs[-1])) == (E, plain.stop_reason, E)
    np.testing.assert_allclose(r.val_error[-1], _sep(plain.net, *d.val), rtol=1e-10)
    np.testing.assert_allclose(r.test_error[-1], _sep(plain.net, *d.test), rtol=1e-10)
    _check_summary(r.val_error, r.val_epochs, r.relevant_epoch, r.min_val_error, r.gl_end)
    # the returned network is the relevant epoch's; at the stop, the stop's weights
    if r.relevant_epoch == E:
        np.testing.assert_array_equal(r.net.weights, plain.net.weights)
    np.testing.assert_allclose(r.final_val.squared_error_percentage, _sep(r.net, *d.val),
                               rtol=1e-10)
    again = runs[1]
    np.testing.assert_array_equal(again.val_error, r.val_error)
    np.testing.assert_array_equal(again.test_error, r.test_error)
    assert (again.min_val_error, again.gl_end) == (r.min_val_error, r.gl_end)


@pytest.mark.parametrize("rule", sorted(RULES))
def test_train_many_measures_the_strip_end_each_trial_stops_at(cancer1, rule):
    algorithm, net = RULES[rule]
    d, K = cancer1, 4
    kw = dict(algorithm=algorithm, n_trials=K, seed=6, max_epochs=500, init_scale=0.5)
    plain = _quiet(train_many, net, *d.train, **kw)
    stops = [i for i in range(K) if plain.stop_reason[i] in SELF_STOPS]
    assert stops
    # a strip that the first trial that stops itself ends exactly at
    strip = _strip_for(int(plain.epochs[stops[0]]))
    b = _quiet(train_many, net, *d.train, *d.val, X_test=d.test[0], Y_test=d.test[1],
               strip=strip, **kw)
    np.testing.assert_array_equal(b.epochs, plain.epochs)
    at_ends = 0
    for i in range(K):
        r = b[i]
        _check_summary(r.val_error, r.val_epochs, r.relevant_epoch, r.min_val_error, r.gl_end)
        assert np.isfinite(r.test_error).all()
        if r.epochs % strip == 0:       # the trial's last strip end is where it stopped
            at_ends += 1
            assert r.val_epochs[-1] == r.epochs
            np.testing.assert_allclose(r.val_error[-1], _sep(plain[i].net, *d.val), rtol=1e-10)
            np.testing.assert_allclose(r.test_error[-1], _sep(plain[i].net, *d.test),
                                       rtol=1e-10)
    assert at_ends
    # the batch's own columns hold the same numbers (NaN only past a trial's strips)
    for i in range(K):
        n = b[i].val_error.size
        np.testing.assert_array_equal(b.val_error[i, :n], b[i].val_error)
        assert np.isnan(b.val_error[i, n:]).all()


def test_the_reported_lbfgs_batch_gives_the_measured_values(cancer1):
    # The report: trial 2 stopped "converged" at epoch 45 (a strip end of strip=5),
    # and its min_val_error was 9.6e-271 (memory never written), differing by run.
    d = cancer1
    kw = dict(algorithm=LBFGS(ftol=1e-3), n_trials=4, seed=6, max_epochs=500, init_scale=0.5)
    b = train_many(MLP(9, (3,), 2), *d.train, *d.val, **kw)
    plain = train_many(MLP(9, (3,), 2), *d.train, **kw)
    ended = [i for i in range(4) if b.epochs[i] % 5 == 0]
    assert ended                        # (the case the report is about)
    for i in range(4):
        r = b[i]
        _check_summary(r.val_error, r.val_epochs, r.relevant_epoch, r.min_val_error, r.gl_end)
    for i in ended:
        np.testing.assert_allclose(b[i].val_error[-1], _sep(plain[i].net, *d.val), rtol=1e-10)


def _at_exact_minimum(n=25, seed=0):
    """A network with zero weights into its logistic outputs and targets 0.5: E = 0
    and a zero gradient, so each rule stops itself after its first epoch; another
    data set to validate and test on."""
    rng = np.random.default_rng(seed)
    X, X_val = rng.uniform(-1, 1, (n, 3)), rng.uniform(-1, 1, (n, 3))
    Y_val = rng.uniform(0.1, 0.9, (n, 2))
    net = MLP(3, (4,), 2, shortcut=True, output_activation="logistic", init_scale=0.5, seed=1)
    return outputs_at_one_half(net), X, np.full((n, 2), 0.5), X_val, Y_val


@pytest.mark.parametrize("algorithm", [SCG(), LevenbergMarquardt(), LBFGS()],
                         ids=["scg", "lm", "lbfgs"])
@pytest.mark.parametrize("many", [False, True], ids=["train", "train_many"])
def test_a_rule_stopping_after_its_first_epoch_at_strip_1_is_measured(algorithm, many):
    net, X, Y, X_val, Y_val = _at_exact_minimum()
    want = _sep(net, X_val, Y_val)
    kw = dict(algorithm=algorithm, max_epochs=50, strip=1, X_test=X_val, Y_test=Y_val)
    if many:
        b = train_many(net, X, Y, X_val, Y_val, initial_weights=np.tile(net.weights, (3, 1)),
                       **kw)
        results = [b[i] for i in range(3)]
    else:
        results = [train(net.copy(), X, Y, X_val, Y_val, **kw)]
    for r in results:
        assert (r.epochs, r.relevant_epoch) == (1, 1) and r.stop_reason in SELF_STOPS
        np.testing.assert_array_equal(r.val_epochs, [1])
        np.testing.assert_allclose(r.val_error, [want], rtol=1e-12)
        np.testing.assert_allclose(r.test_error, [want], rtol=1e-12)
        assert r.min_val_error == r.val_error[0] and r.gl_end == 0.0
        np.testing.assert_array_equal(r.net.weights, net.weights)
