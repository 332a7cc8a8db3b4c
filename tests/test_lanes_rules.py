"""Batch backpropagation, Quickprop and full-batch Adam side by side in the vector
lanes: the lanes' rule step against the scalar rules, and every trial of
train_many against fastnet.train alone (and the NumPy oracle), to rounding.

Quickprop's parabola term s d / (d' - d) magnifies rounding differences where d'
is close to d, and the lanes sum a gradient in another order than the
single-network kernels: with hidden units a Quickprop trial here parts from
its single-network run beyond 1e-10 after 27-60 epochs (and the rule step
itself may round a fused multiply-add differently), so its whole-training
comparisons stop at 12 epochs; beyond, a trial must part from its single-network
run no earlier than that run parts from itself started one ulp away."""
import warnings

import numpy as np
import pytest
from _training_cases import assert_same_run
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import MLP, NoConvergenceWarning, train, train_many
from fastnet._kernels import _per_weight, _trials
from fastnet._kernels import _rules
from fastnet._kernels._rules import Rule
from fastnet.algorithms import Adam, Backprop, Quickprop, spec_of
from fastnet.stopping import GL, Correct
# (the lanes backend, patched to show where a check runs: no public face)
from fastnet.training import _lanes

L = _trials.LANES
NONE = np.zeros(0)          # (an array the rule does not keep)
EPOCHS = 60


def epochs_for(algorithm):
    """Epochs over which a trial is compared with its single-network run (see the top)."""
    return 12 if isinstance(algorithm, Quickprop) else EPOCHS
QUICKPROP = Quickprop(epsilon=0.001, threshold=1e-3, momentum=0.5)
RULES = [Backprop(learning_rate=0.01, momentum=0.5),
         Backprop(learning_rate=0.02, momentum=0.3, decay=True),
         QUICKPROP,
         Adam(learning_rate=0.01)]


def data(n=30, seed=3, n_in=3, n_out=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in))
    T = (rng.uniform(size=(n, n_out)) > 0.5).astype(float)
    return X, T


def oracle(algorithm, net, X, T, epochs):
    """(per-epoch SSE, final weights) of tests/_reference.py's NumPy rules."""
    if isinstance(algorithm, Backprop):
        return ref.train_backprop(net, X, T, epochs, algorithm.learning_rate, algorithm.momentum,
                                  decay=algorithm.decay)
    if isinstance(algorithm, Quickprop):
        a = algorithm
        return ref.train_quickprop(net, X, T, epochs, a.epsilon, a.mu, a.decay, a.threshold,
                                   a.momentum)
    a = algorithm
    return ref.train_adam(net, X, T, epochs, a.learning_rate, a.beta1, a.beta2, a.epsilon)


# ---------------------------------------------------------------- the rule step


def _blocks(seed, n=40):
    rng = np.random.default_rng(seed)
    w, g = rng.normal(size=(n, L)), rng.normal(size=(n, L))
    a, b = rng.normal(size=(n, L)), rng.normal(size=(n, L))
    c = rng.normal(size=(n, L)) * (rng.uniform(size=(n, L)) < 0.8)   # some zero steps
    return w, g, a, b, c


def test_quickprop_lanes_step_is_the_scalar_rule():
    params = (0.3, 1.75, 1e-4, 0.05, 0.4)
    w, g, d_prev, _, s_prev = _blocks(0)
    d_prev[:3] = -(g[:3] + 1e-4 * w[:3])           # d' = d: no parabola, its term 0
    s_prev[3:6] = 0.02                             # within the threshold: plain step
    W, D, S = w.copy(), d_prev.copy(), s_prev.copy()
    rule = Rule("quickprop", **dict(zip(("epsilon", "mu", "decay", "threshold", "momentum"),
                                        params)))
    _trials.lanes_rule_step(rule, W, g, D, np.zeros_like(w), S, np.zeros(L, np.int64))
    for k in range(L):
        wk, sk, dk = w[:, k].copy(), s_prev[:, k].copy(), d_prev[:, k].copy()
        _per_weight.rule_step(rule, wk, g[:, k].copy(), dk, sk, NONE, np.zeros(1, np.intp))
        assert_allclose(W[:, k], wk, rtol=1e-15, atol=1e-300)
        assert_allclose(S[:, k], sk, rtol=1e-15, atol=1e-300)
        assert np.array_equal(D[:, k], dk)


@pytest.mark.parametrize("t", [0, 1, 57])
def test_adam_lanes_step_is_the_scalar_rule(t):
    params = (0.01, 0.9, 0.999, 1e-8)
    w, g, m, _, v = _blocks(1)
    v = np.abs(v)
    W, M, V = w.copy(), m.copy(), v.copy()
    rule = Rule("adam", **dict(zip(("learning_rate", "beta1", "beta2", "epsilon"), params)))
    _trials.lanes_rule_step(rule, W, g, M, np.zeros_like(w), V, np.zeros(L, np.int64), t=t)
    for k in range(L):
        wk, mk, vk = w[:, k].copy(), m[:, k].copy(), v[:, k].copy()
        tk = np.array([t], np.intp)
        _per_weight.rule_step(rule, wk, g[:, k].copy(), mk, vk, NONE, tk)
        # (to rounding: the lanes may fuse beta m + (1 - beta) g into multiply-adds)
        assert_allclose(W[:, k], wk, rtol=1e-13)
        assert_allclose(M[:, k], mk, rtol=1e-13, atol=1e-300)
        assert_allclose(V[:, k], vk, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("decay", [False, True])
def test_backprop_lanes_step_is_momentum_descent(decay):
    lr, momentum, t, T = 0.05, 0.7, 9, 40
    w, g, _, dw, _ = _blocks(2)
    W, DW = w.copy(), dw.copy()
    rule = Rule("backprop", learning_rate=lr, momentum=momentum, decay=float(decay))
    _trials.lanes_rule_step(rule, W, g, np.zeros_like(w), DW, np.zeros_like(w),
                            np.zeros(L, np.int64), t=t, t_max=T)
    rate = lr * (1.0 - t / T) if decay else lr
    step = -rate * g + momentum * dw
    assert_allclose(DW, step, rtol=1e-15, atol=1e-300)
    assert_allclose(W, w + step, rtol=1e-15, atol=1e-300)


def test_kernel_records_are_made_by_name():
    # A rule crosses into the kernels as its named record: exactly its fields.
    w = np.zeros((2, L))
    with pytest.raises(ValueError, match="unknown rule"):
        Rule("sgd", learning_rate=0.1)
    with pytest.raises(ValueError, match="takes exactly the fields"):
        Rule("adam", learning_rate=0.1, beta1=0.9, beta2=0.9)
    with pytest.raises(ValueError, match="takes exactly the fields"):
        Rule("backprop", learning_rate=0.1, momentum=0.0, decay=0.0, beta1=0.3)
    with pytest.raises(ValueError, match="must be finite"):
        Rule("backprop", learning_rate=np.nan, momentum=0.0, decay=0.0)
    with pytest.raises(TypeError):
        _trials.lanes_rule_step((4, 0.1), w, w, w.copy(), w.copy(), w.copy(), np.zeros(L, np.int64))
    rule = Rule("quickprop", epsilon=0.5, mu=1.75, decay=0.0, threshold=0.1, momentum=0.2)
    assert rule.params == dict(epsilon=0.5, mu=1.75, decay=0.0, threshold=0.1, momentum=0.2)
    assert rule.states == ("g_prev", "step") and rule.code == _rules.RULES["quickprop"].code


# ------------------------------------------------------------ whole trainings


def test_the_rules_have_lanes_in_batch_mode_and_online_backprop():
    assert Backprop().lanes and Quickprop().lanes and Adam().lanes
    assert Backprop(mode="online").lanes and not Adam(batch_size=4).lanes
    assert Backprop().kernel_check and not Backprop(mode="online").kernel_check


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden", [(), (4,), (4, 3)])
@pytest.mark.parametrize("algorithm", RULES, ids=spec_of)
def test_each_trial_equals_training_alone(algorithm, hidden, shortcut):
    X, T = data()
    net = MLP(3, hidden, 2, shortcut=shortcut)
    K = L + 3                                      # a full group and a part-filled one
    W = np.random.default_rng(5).uniform(-0.5, 0.5, (K, net.n_connections))
    epochs = epochs_for(algorithm)
    got = train_many(net, X, T, algorithm=algorithm, initial_weights=W, max_epochs=epochs,
                     method="lanes")
    assert got[0].setup["batch"]["method"] == "lanes"
    for i in range(K):
        alone = train(net.copy().set_weights(W[i]), X, T, algorithm=algorithm,
                      max_epochs=epochs)
        assert_same_run(got[i], alone, rtol=1e-10)
    err, w = oracle(algorithm, net.copy().set_weights(W[K - 1]), X, T, epochs)
    assert_allclose(got.train_error[K - 1], err * 100.0 / T.size, rtol=1e-10)
    assert_allclose(got.weights[K - 1], w, rtol=1e-9, atol=1e-12)


def each_equals_alone(net, X, T, Xv, Tv, W, method, **kw):
    """train_many of the initial weights W; each trial checked against train alone."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_many(net, X, T, Xv, Tv, initial_weights=W, method=method, **kw)
        for i in range(W.shape[0]):
            assert_same_run(got[i], train(net.copy().set_weights(W[i]), X, T, Xv, Tv, **kw))
    return got


@pytest.mark.parametrize("algorithm", RULES, ids=spec_of)
def test_validation_stops_trials_at_different_epochs(algorithm):
    X, T = data(40, seed=7)
    Xv, Tv = data(20, seed=8)
    net = MLP(3, (6,), 2)
    K = 12
    W = np.random.default_rng(1).uniform(-0.5, 0.5, (K, net.n_connections))
    got = each_equals_alone(net, X, T, Xv, Tv, W, "lanes", algorithm=algorithm,
                            max_epochs=epochs_for(algorithm), stop=GL(0.5), strip=3)
    assert len(set(got.epochs.tolist())) > 1


def _xor(copies=1):
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]] * copies)
    return X, np.array([[0.], [1.], [1.], [0.]] * copies)


XOR_RULES = [Backprop(learning_rate=0.5, momentum=0.9), Quickprop(epsilon=0.5),
             Adam(learning_rate=0.05)]


@pytest.mark.parametrize("algorithm", XOR_RULES, ids=spec_of)
def test_success_check_runs_in_the_lanes(algorithm, monkeypatch):
    # The loop would check at strip ends through train_outputs: the lanes do it.
    def no_loop_check(self, i):
        raise AssertionError("the loop checked a trial")

    monkeypatch.setattr(_lanes.LanesBackend, "train_outputs", no_loop_check)
    X, T = _xor()
    net = MLP(2, (2,), 1, output_activation="logistic")
    K = 2 * L
    W = np.random.default_rng(2).uniform(-1, 1, (K, net.n_connections))
    kw = dict(algorithm=algorithm, max_epochs=300, stop=Correct(), strip=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_many(net, X, T, initial_weights=W, method="lanes", **kw)
        # (Quickprop's trials part from the single network's after some tens
        # of epochs: the stop epochs are compared for the others)
        if not isinstance(algorithm, Quickprop):
            for i in range(K):
                assert_same_run(got[i], train(net.copy().set_weights(W[i]), X, T, **kw))
    assert "correct" in got.stop_reason
    assert len(set(got.epochs[np.array(got.stop_reason) == "correct"].tolist())) > 1


def _parting(a, b, tol=1e-10):
    """The first epoch (from 1) whose training errors in ``a`` and ``b`` differ by more
    than ``tol`` relative; len(a) + 1 if none does."""
    k = np.flatnonzero(np.abs(a - b) > tol * np.abs(a))
    return int(k[0]) + 1 if k.size else len(a) + 1


@pytest.mark.parametrize("hidden", [(4,), (3, 2)])
@pytest.mark.parametrize("algorithm", [QUICKPROP, Quickprop()], ids=spec_of)
def test_quickprop_trials_part_from_alone_where_rounding_alone_does(algorithm, hidden):
    # "To rounding", made checkable for the rule that magnifies rounding: Quickprop
    # trained alone from weights one ulp away parts from its own run (1e-10 in the
    # training error) after some tens of epochs; trials in the lanes (the gradient
    # summed in another order, rounded afresh every epoch) must part no earlier than
    # half as late, taken over the trials (the median; measured 0.8-1.2 times as late,
    # in the sanitizer build too), and each no earlier than half as late as the
    # typical ulp's parting: one trial's parting is chance (on an AVX2 core, one trial
    # of 16 alone never parted from its ulp neighbours in 200 epochs and parted from
    # its lanes twin at 51). A wrong rule or gradient parts every trial in the first
    # epochs (a 1e-9 change of epsilon: 4-6).
    X, T = data(30, seed=3)
    net = MLP(3, hidden, 2)
    K, epochs = 2 * L, 200
    W = np.random.default_rng(4).uniform(-0.5, 0.5, (K, net.n_connections))
    kw = dict(algorithm=algorithm, max_epochs=epochs)
    got = train_many(net, X, T, initial_weights=W, method="lanes", **kw)
    rounding, lanes = [], []
    for i in range(K):
        alone = train(net.copy().set_weights(W[i]), X, T, **kw).train_error
        rounding.append(min(_parting(alone, train(net.copy().set_weights(
            np.nextafter(W[i], side)), X, T, **kw).train_error) for side in (np.inf, -np.inf)))
        lanes.append(_parting(alone, got.train_error[i, :epochs]))
    typical = np.median(rounding)
    assert np.median(lanes) >= typical // 2, (lanes, rounding)
    assert min(lanes) >= min(typical, np.min(rounding)) // 2, (lanes, rounding)
    # (the premise: rounding alone parts the runs within the call, after tens of epochs)
    assert 20 <= typical <= epochs


@pytest.mark.parametrize("algorithm", [RULES[1], RULES[3], QUICKPROP], ids=spec_of)
def test_trials_handed_off_go_on_with_their_state(algorithm):
    # "mixed": once the trials left fill too little of their last group, they go
    # on in the single-network kernels with the state the lanes leave them (the
    # epoch count too: backprop's decay, Adam's bias corrections).
    X, T = data(30, seed=3)
    Xv, Tv = data(20, seed=9)
    net = MLP(3, (4,), 2)
    K = 2 * L
    W = np.random.default_rng(4).uniform(-0.5, 0.5, (K, net.n_connections))
    got = each_equals_alone(net, X, T, Xv, Tv, W, "mixed", algorithm=algorithm,
                            max_epochs=epochs_for(algorithm), stop=GL(0.2), strip=2)
    assert got[0].setup["batch"]["handoffs"]



@pytest.mark.parametrize("strip", [1, 3])
@pytest.mark.parametrize("algorithm", [XOR_RULES[0], Backprop(learning_rate=0.4, decay=True),
                                       XOR_RULES[2]], ids=spec_of)
def test_trials_beyond_the_weight_limit_go_on_alone(algorithm, strip, monkeypatch):
    # The rules without a bound on their changes stop a trial in the lanes before
    # an epoch that would start from weights beyond w_limit (w_safe: no value of
    # the epoch can overflow below it); the trial trains the rest of the call and
    # on in the single-network kernels, checked at the same epochs. A small
    # limit here makes trials cross it mid-call.
    monkeypatch.setattr(_lanes, "safe_weight", lambda *args, **kwargs: 2.5)
    X, T = _xor()
    net = MLP(2, (2,), 1, output_activation="logistic")
    K = 2 * L
    W = np.random.default_rng(2).uniform(-1, 1, (K, net.n_connections))
    kw = dict(algorithm=algorithm, max_epochs=200, stop=Correct(), strip=strip)
    got = each_equals_alone(net, X, T, None, None, W, "lanes", **kw)
    handed = sum(got[0].setup["batch"]["handoffs"])
    assert 0 < handed < K
    assert "correct" in got.stop_reason
