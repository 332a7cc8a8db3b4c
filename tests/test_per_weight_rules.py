"""Quickprop (Fahlman 1988) and Adam (Kingma & Ba 2015) in the kernels, against
the NumPy oracle of tests/_reference.py."""
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import _reference as ref
from fastnet import MLP, train
from fastnet._engine import RuleArgs
from fastnet._kernels import _per_weight
from fastnet._kernels._rules import Rule
from fastnet.algorithms import ALGORITHMS, Adam, Backprop, Quickprop, from_spec, spec_of
from fastnet.gradients import value_and_grad
from fastnet.stopping import Correct

EPOCHS = 60
NONE = np.zeros(0)          # (an array the rule does not keep)


def data(n=30, seed=0, n_out=2):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (n, 3)), rng.uniform(0, 1, (n, n_out))


def scaled(sse, T):
    """The oracle's SSE as fastnet's squared error percentage (targets in [0, 1])."""
    return sse * 100.0 / T.size


# ------------------------------------------------------------------------ Quickprop

BRANCHES = ("up-grow", "up-secant", "down-grow", "down-secant", "within")


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden", [(), (4,), (4, 3)])
def test_quickprop_matches_reference(hidden, shortcut):
    # Quickprop's parabola term s d / (d- - d) magnifies rounding differences
    # wherever d- is close to d, so two correct implementations whose gradients
    # differ in the last bit can part after some tens of epochs. On these data
    # and weights the 60 epochs stay well-conditioned; the next test checks the
    # rule on the kernel's own gradients, where no such difference exists.
    X, T = data(seed=3)
    net = MLP(3, hidden, 2, shortcut=shortcut).init_weights(2)
    branches = {}
    params = dict(threshold=1e-3, momentum=0.5)
    err_ref, w_ref = ref.train_quickprop(net, X, T, EPOCHS, 0.001, branches=branches, **params)
    r = train(net, X, T, algorithm=Quickprop(epsilon=0.001, **params), max_epochs=EPOCHS)
    assert_allclose(r.train_error, scaled(err_ref, T), rtol=1e-10)
    # (the weights that the last epochs moved through the parabola term part at 5e-10)
    assert_allclose(net.weights, w_ref, rtol=1e-9, atol=1e-12)
    # the run goes through the parabola, growth and plain-gradient cases both ways
    for case in BRANCHES:
        assert branches.get(case, 0) > 0, (case, branches)


def kernel_gradient(net, X, T):
    E, g = value_and_grad(net, X, T)
    return g, E


@pytest.mark.parametrize("params", [
    dict(epsilon=0.01), dict(epsilon=0.005, decay=0.0, mu=2.5),
    dict(epsilon=0.02, decay=1e-2, threshold=0.05, momentum=0.9)])
@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden", [(), (4,), (4, 3)])
def test_quickprop_rule_on_the_kernel_gradients(hidden, shortcut, params):
    # The oracle's rule fed with fastnet's own gradients: the kernels' epochs
    # (state carried across strips included) follow it to the last bits.
    X, T = data(40, seed=1)
    net = MLP(3, hidden, 2, shortcut=shortcut).init_weights(4)
    kw = dict(params)
    err_ref, w_ref = ref.train_quickprop(net, X, T, EPOCHS, kw.pop("epsilon"), grad=kernel_gradient,
                                         **kw)
    r = train(net, X, T, algorithm=Quickprop(**params), max_epochs=EPOCHS, strip=7,
              X_val=X[:5], Y_val=T[:5])
    assert r.epochs == EPOCHS
    assert_allclose(r.train_error, scaled(err_ref, T), rtol=1e-13)
    r2 = train(MLP(3, hidden, 2, shortcut=shortcut).init_weights(4), X, T,
               algorithm=Quickprop(**params), max_epochs=EPOCHS)
    assert_allclose(r2.net.weights, w_ref, rtol=1e-13, atol=1e-15)


def quickprop_twin(params, w, g, s_prev, d_prev):
    w, s_prev, d_prev = w.copy(), s_prev.copy(), d_prev.copy()
    rule = Rule("quickprop", **dict(zip(("epsilon", "mu", "decay", "threshold", "momentum"),
                                        params)))
    _per_weight.rule_step(rule, w, g, d_prev, s_prev, NONE, np.zeros(1, np.intp))
    return w, s_prev, d_prev


def test_quickprop_each_branch_as_specified():
    eps, mu, decay, threshold, momentum = 0.1, 1.75, 0.01, 0.001, 0.5
    shrink = mu / (1 + mu)
    # weights chosen so that d = -(g + decay w) is exactly the d below (w = 0)
    s_prev = np.array([0.5, 0.5, 0.5, 0.5, -0.5, -0.5, -0.5, -0.5, 0.0005, -0.0005, 0.5, 0.5,
                       0.0])
    d_prev = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 3.0, 3.0, -2.0, 0.0, 0.0])
    d = np.array([0.9, 0.2, -0.5, -0.5, -0.9, -0.2, 0.4, 0.4, 2.0, 2.0, -2.0, 0.0, 0.7])
    w, g = np.zeros(d.size), -d
    step = [
        eps * 0.9 + mu * 0.5,                     # s > thr, d > 0, d > shrink d-: grow
        eps * 0.2 + 0.5 * 0.2 / (1.0 - 0.2),      # s > thr, d > 0, parabola
        0.0 + 0.5 * -0.5 / (1.0 + 0.5),           # s > thr, d < 0 (slope turned): parabola
        0.0 + mu * 0.5,                           # s > thr, d < 0 but d > shrink d-: grow
        eps * -0.9 + mu * -0.5,                   # s < -thr, d < 0, d < shrink d-: grow
        eps * -0.2 + -0.5 * -0.2 / (-1.0 + 0.2),  # s < -thr, d < 0, parabola
        0.0 + -0.5 * 0.4 / (-1.0 - 0.4),          # s < -thr, d > 0 (slope turned): parabola
        0.0 + mu * -0.5,                          # s < -thr, d > 0 but d < shrink d-: grow
        eps * 2.0 + momentum * 0.0005,            # |s| within the threshold
        eps * 2.0 + momentum * -0.0005,
        0.0,                                      # d- = d: the quotient term is 0
        0.0,                                      # d- = d = 0
        eps * 0.7,                                # no previous step (the start)
    ]
    assert -0.5 > shrink * -1.0 and not -2.0 > shrink * -2.0 and 0.4 < shrink * 1.0
    params = (eps, mu, decay, threshold, momentum)
    w_new, s_new, d_new = quickprop_twin(params, w, g, s_prev, d_prev)
    assert_allclose(w_new, step, rtol=1e-15, atol=0)
    assert_array_equal(s_new, w_new)
    assert_array_equal(d_new, d)
    w_ref, s_ref, d_ref = ref.quickprop_update(w, g, s_prev, d_prev, *params)
    assert_array_equal(w_new, w_ref)
    assert_array_equal(s_new, s_ref)


def test_quickprop_decay_enters_the_slope():
    params = (0.1, 1.75, 0.01, 0.0, 0.0)
    w, g = np.array([2.0, -3.0]), np.array([0.5, 0.5])
    w_new, _, d_new = quickprop_twin(params, w, g, np.zeros(2), np.zeros(2))
    assert_array_equal(d_new, -(g + 0.01 * w))
    assert_allclose(w_new, w + 0.1 * d_new, rtol=1e-15)


# ----------------------------------------------------------------------------- Adam

@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden", [(), (4,), (4, 3)])
def test_adam_matches_reference(hidden, shortcut):
    X, T = data()
    net = MLP(3, hidden, 2, shortcut=shortcut).init_weights(2)
    err_ref, w_ref = ref.train_adam(net, X, T, EPOCHS, lr=0.02, beta1=0.8, beta2=0.99)
    r = train(net, X, T, algorithm=Adam(learning_rate=0.02, beta1=0.8, beta2=0.99),
              max_epochs=EPOCHS)
    assert_allclose(r.train_error, scaled(err_ref, T), rtol=1e-10)
    assert_allclose(net.weights, w_ref, rtol=1e-10, atol=1e-12)
    assert r.train_error[-1] < r.train_error[0]


@pytest.mark.parametrize("batch_size", [1, 8, 30, 100])
@pytest.mark.parametrize("hidden", [(), (4, 3)])
def test_adam_mini_batches_match_reference(hidden, batch_size):
    X, T = data()
    net = MLP(3, hidden, 2, shortcut=True).init_weights(2)
    rng = np.random.default_rng(7)
    orders = [rng.permutation(30) for _ in range(EPOCHS)]
    err_ref, w_ref = ref.train_adam(net, X, T, EPOCHS, lr=0.01, batch_size=batch_size,
                                    orders=orders)
    r = train(net, X, T, algorithm=Adam(learning_rate=0.01, batch_size=batch_size),
              max_epochs=EPOCHS, seed=7)
    assert_allclose(r.train_error, scaled(err_ref, T), rtol=1e-10)
    assert_allclose(net.weights, w_ref, rtol=1e-10, atol=1e-12)
    batches = -(-30 // batch_size)
    assert r.traversals.update == EPOCHS * batches * net.n_connections
    assert r.traversals.forward == r.traversals.backward == EPOCHS * 30 * net.n_connections


def test_adam_bias_correction():
    # From zero moments, update 1 is w -= lr g / (|g| + eps) exactly (mhat = g,
    # vhat = g^2); without the correction it would be sqrt(1 - beta2) / (1 - beta1)
    # ~ 0.32 times as large. Update 2 with the same gradient again moves by lr g / (|g| + eps).
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    g = np.array([3.0, -0.25, 1e-3])
    w, m, v, t = np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(1, np.intp)
    rule = Rule("adam", learning_rate=lr, beta1=b1, beta2=b2, epsilon=eps)
    _per_weight.rule_step(rule, w, g, m, v, NONE, t)
    assert t[0] == 1
    assert_allclose(w, -lr * g / (np.abs(g) + eps), rtol=1e-12)
    before = w.copy()
    _per_weight.rule_step(rule, w, g, m, v, NONE, t)
    assert t[0] == 2
    assert_allclose(w - before, -lr * g / (np.abs(g) + eps), rtol=1e-12)
    w_ref, m_ref, v_ref = ref.adam_update(before, g, m * 0 + (1 - b1) * g, v * 0 + (1 - b2) * g * g,
                                          2, lr, b1, b2, eps)
    assert_allclose(w, w_ref, rtol=1e-15)
    assert_allclose(m, m_ref, rtol=1e-15)


def test_adam_order_comes_from_the_seed():
    X, T = data()
    a = MLP(3, (4,), 2).init_weights(0)
    b, c = a.copy(), a.copy()
    for net, seed in ((a, 1), (b, 1), (c, 2)):
        train(net, X, T, algorithm=Adam(learning_rate=0.01, batch_size=4), max_epochs=3, seed=seed)
    assert a == b and a != c


# ----------------------------------------------------------- both: the training loop

RULES = [Quickprop(epsilon=0.02), Adam(learning_rate=0.05), Adam(learning_rate=0.02, batch_size=5)]


@pytest.mark.parametrize("algorithm", RULES, ids=spec_of)
def test_traversals_are_exact(algorithm):
    X, T = data(23)
    net = MLP(3, (4,), 2).init_weights(1)
    r = train(net, X, T, algorithm=algorithm, max_epochs=17, seed=0 if algorithm.draws else None)
    C = net.n_connections
    per_epoch = C * (5 if algorithm == RULES[2] else 1)        # ceil(23 / 5) = 5 batches
    assert (r.traversals.forward, r.traversals.backward, r.traversals.update,
            r.traversals.evaluation) == (17 * 23 * C, 17 * 23 * C, 17 * per_epoch, 0)


@pytest.mark.parametrize("algorithm", RULES + [Backprop(learning_rate=0.3, momentum=0.8)],
                         ids=spec_of)
def test_kernel_success_check_equals_the_loop(algorithm):
    # Correct alone: the kernel checks between epochs; with a callback the loop
    # checks at strip ends. Same epoch, same weights.
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]] * 3)
    T = np.array([[0.], [1.], [1.], [0.]] * 3)
    nets = [MLP(2, (3,), 1, output_activation="logistic") for _ in range(2)]
    runs = [train(nets[0], X, T, algorithm=algorithm, stop=Correct(), max_epochs=3000,
                  init_scale=0.5, seed=3, strip=2),
            train(nets[1], X, T, algorithm=algorithm, stop=Correct(), max_epochs=3000,
                  init_scale=0.5, seed=3, strip=2, callback=lambda epoch, state: None)]
    assert runs[0].stop_reason == runs[1].stop_reason == "correct"
    assert runs[0].epochs == runs[1].epochs < 3000
    assert_array_equal(nets[0].weights, nets[1].weights)
    assert runs[0].traversals == runs[1].traversals


def test_names_and_records():
    assert ALGORITHMS["quickprop"] is Quickprop and ALGORITHMS["adam"] is Adam
    q = from_spec("quickprop(epsilon=0.01, threshold=0.001)")
    assert q == Quickprop(epsilon=0.01, threshold=0.001)
    assert from_spec(spec_of(q)) == q
    a = from_spec("adam(batch_size=16)")
    assert a.draws and not Adam().draws and not q.draws
    assert spec_of(Adam()) == "adam"
    assert Quickprop().record() == ("Quickprop (Fahlman 1988), epoch-batched",
                                    dict(epsilon=1e-4, mu=1.75, decay=1e-4, threshold=0.0,
                                         momentum=0.0))
    assert a.record()[0] == "Adam (Kingma & Ba 2015), mini-batches of 16"
    X, T = data()
    r = train(MLP(3, (2,), 2).init_weights(0), X, T, algorithm="adam", max_epochs=2)
    assert r.setup["algorithm"].startswith("Adam")


@pytest.mark.parametrize("cls,kwargs,exc,match", [
    (Quickprop, dict(epsilon=0.0), ValueError, r"`epsilon` must be in \(0.0, inf\)"),
    (Quickprop, dict(epsilon="big"), TypeError, "`epsilon` must be a real number"),
    (Quickprop, dict(mu=-1.0), ValueError, "`mu` must be in"),
    (Quickprop, dict(decay=-1e-4), ValueError, "`decay` must be in"),
    (Quickprop, dict(threshold=-0.1), ValueError, "`threshold` must be in"),
    (Quickprop, dict(momentum=1.0), ValueError, r"`momentum` must be in \[0.0, 1.0\)"),
    (Quickprop, dict(mu=float("nan")), ValueError, "`mu` must be finite"),
    (Adam, dict(learning_rate=0.0), ValueError, "`learning_rate` must be in"),
    (Adam, dict(beta1=1.0), ValueError, r"`beta1` must be in \[0.0, 1.0\)"),
    (Adam, dict(beta1=-0.1), ValueError, "`beta1` must be in"),
    (Adam, dict(beta2=1.5), ValueError, "`beta2` must be in"),
    (Adam, dict(epsilon=0.0), ValueError, "`epsilon` must be in"),
    (Adam, dict(batch_size=0), ValueError, "`batch_size` must be >= 1"),
    (Adam, dict(batch_size=2.5), TypeError, "`batch_size` must be an integer"),
    (Adam, dict(batch_size=True), TypeError, "`batch_size` must be an integer"),
])
def test_bad_parameters_are_named(cls, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        cls(**kwargs)
    spec = f"{cls.__name__.lower()}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    if "nan" not in spec:
        with pytest.raises(exc, match=match):
            from_spec(spec)


def test_kernels_refuse_mismatched_buffers():
    X, T = data()
    net = MLP(3, (4,), 2).init_weights(0)
    from fastnet._engine import Workspace  # (the kernels' buffer checks, behind the public trainers)
    ws = Workspace(net, X, T)
    C, sse = net.n_connections, np.zeros(2)
    check = (0, 0.4, -1.0)
    t, last = np.zeros(1, np.intp), np.array([np.inf])
    none = np.zeros((0, 0), np.intp)

    def args(algorithm, g_prev, step, order=none, batch=1):
        return RuleArgs(algorithm.kernel_rule(), g_prev, step, NONE, t, 2, last, order, batch)

    with pytest.raises(ValueError, match="g_prev must hold one value per weight"):
        ws.epochs(args(Quickprop(), np.zeros(C - 1), np.zeros(C)), sse, check)
    with pytest.raises(ValueError, match="step must hold one value per weight"):
        ws.epochs(args(Adam(), np.zeros(C), np.zeros(C + 1)), sse, check)
    bad = np.zeros((2, 30), np.intp)
    bad[1, 3] = 30
    with pytest.raises(ValueError, match="presentation order out of range"):
        ws.epochs(args(Adam(), np.zeros(C), np.zeros(C), bad, 4), sse, check)
    with pytest.raises(ValueError, match="presentation order has the wrong shape"):
        ws.epochs(args(Adam(), np.zeros(C), np.zeros(C), np.zeros((2, 29), np.intp), 4), sse,
                  check)
    with pytest.raises(ValueError, match="t and last_error must have length 1"):
        ws.epochs(args(Adam(), np.zeros(C), np.zeros(C))._replace(t=np.zeros(2, np.intp)), sse,
                  check)
    # (the arrays a rule does not keep are not read: any length)
    ws.epochs(args(Backprop(), NONE, NONE)._replace(dw_prev=ws.dw_prev), sse[:1], check)
    sse[:] = 0.0
    assert_array_equal(sse, 0.0)


def test_divergence_is_reported():
    from fastnet.exceptions import DivergenceError
    X, T = data()
    net = MLP(3, (4,), 2).init_weights(0)
    with pytest.raises(DivergenceError):
        train(net, X, T, algorithm=Quickprop(epsilon=50.0, mu=10.0), max_epochs=500)
