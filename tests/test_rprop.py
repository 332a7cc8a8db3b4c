"""train_rprop against the NumPy oracle, reproducibility, counts and input checks."""
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import MLP, count_traversals, train_rprop
from fastnet.stopping import MaxEpochs

VARIANTS = ["rprop+", "rprop-", "irprop-", "irprop+"]
NETS = [((5,), True), ((5,), False), ((4, 3), True), ((4, 3), False),
        ((4, 3, 3), True), ((4, 3, 3), False), ((8, 6), True), ((8, 6), False),
        ((40,), True), ((40,), False)]


def data(n=40, n_in=4, n_out=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in))
    T = (rng.uniform(size=(n, n_out)) > 0.5).astype(float)
    return X, T


@pytest.mark.parametrize("blas_min", [0, 10**12])
@pytest.mark.parametrize("hidden,shortcut", NETS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_training_matches_reference(variant, hidden, shortcut, blas_min):
    X, T = data()
    net = MLP(4, hidden, 2, shortcut=shortcut).init_weights(1, scale=0.5)
    epochs = 60
    step0 = np.random.default_rng(5).uniform(0.05, 0.2, net.n_connections)
    err_ref, w_ref = ref.train_rprop(net, X, T, variant, epochs, step0, eta_plus=1.2,
                                     eta_minus=0.5, step_min=0.0, step_max=50.0)
    trained = net.copy()
    res = train_rprop(trained, X, T, variant=variant, delta0=(0.05, 0.2), max_epochs=epochs,
                      seed=np.random.default_rng(5), blas_min=blas_min, block_size=16)
    scale = 100.0 / T.size
    assert res.epochs == epochs and res.stop_reason == "max_epochs"
    assert_allclose(res.train_error, err_ref * scale, rtol=1e-10)
    assert_allclose(trained.weights, w_ref, rtol=1e-10, atol=1e-12)


def test_backtracking_happens_in_reference_comparison():
    # The comparison above is only meaningful if sign changes (backtracking) occur.
    X, T = data()
    net = MLP(4, (4, 3), 2).init_weights(1)
    opt = ref.Rprop("rprop+", np.full(net.n_connections, 0.1))
    n_down = 0
    for _ in range(30):
        g, e = ref.gradient(net, X, T)
        n_down += int(np.sum(opt.g_prev * g < 0))
        net.set_weights(opt.update(net.weights.copy(), g, e))
    assert n_down > 20


def test_same_seed_is_bit_identical_and_other_seeds_differ():
    X, T = data()
    runs = []
    for seed in (3, 3, 4):
        net = MLP(4, (5,), 2)
        r = train_rprop(net, X, T, delta0=(0.05, 0.2), init_scale=0.5, max_epochs=40, seed=seed)
        runs.append((net.weights.copy(), r.train_error))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[2][0])


def test_trains_exactly_max_epochs_without_stopping_rule():
    X, T = data()
    for n in (1, 7, 1234):
        r = train_rprop(MLP(4, (3,), 2).init_weights(0), X, T, max_epochs=n)
        assert r.epochs == n == r.train_error.size and r.relevant_epoch == n


@pytest.mark.parametrize("with_val", [False, True])
@pytest.mark.parametrize("with_test", [False, True])
def test_traversal_counts_equal_formula(with_val, with_test):
    X, T = data(50)
    Xv, Tv = data(13, seed=1)
    Xt, Tt = data(9, seed=2)
    net = MLP(4, (3, 2), 2).init_weights(0)
    C = net.n_connections
    epochs, strip = 23, 5
    r = train_rprop(net, X, T, *((Xv, Tv) if with_val else (None, None)),
                    X_test=Xt if with_test else None, Y_test=Tt if with_test else None,
                    max_epochs=epochs, strip=strip)
    measurements = epochs // strip  # strip ends 5, 10, 15, 20 (23 is not one)
    assert r.traversals.forward == epochs * 50 * C
    assert r.traversals.backward == epochs * 50 * C
    assert r.traversals.update == epochs * C
    expected_eval = measurements * C * ((13 if with_val else 0) + (9 if with_test else 0))
    assert r.traversals.evaluation == expected_eval
    assert r.traversals.training == epochs * count_traversals(net.layer_sizes, 50, shortcut=True)
    assert r.traversals.total == r.traversals.training + expected_eval
    if with_val:
        assert list(r.val_epochs) == [5, 10, 15, 20]


def test_traversal_formula_matches_instrumented_loop():
    # Count multiply-adds of a naive per-connection loop over one epoch.
    for sizes, shortcut in [((2, 3, 4), False), ((9, 4, 2, 2), True), ((5, 3), True)]:
        net = MLP(sizes[0], sizes[1:-1], sizes[-1], shortcut=shortcut)
        n = 7
        fwd = bwd = 0
        for _ in range(n):
            for (i, j) in net.connected_pairs():
                fwd += sizes[i] * sizes[j]
                bwd += sizes[i] * sizes[j]
            for j in range(1, len(sizes)):     # bias connections
                fwd += sizes[j]
                bwd += sizes[j]
        upd = net.n_connections
        assert count_traversals(sizes, n, phase="forward", shortcut=shortcut) == fwd
        assert count_traversals(sizes, n, phase="backward", shortcut=shortcut) == bwd
        assert count_traversals(sizes, n, shortcut=shortcut) == fwd + bwd + upd


def test_xor_smoke_most_seeds_learn():
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    T = np.array([[0.], [1.], [1.], [0.]])
    learned = 0
    for seed in range(10):
        net = MLP(2, (2,), 1, shortcut=False, hidden_activation="tanh",
                  output_activation="logistic")
        train_rprop(net, X, T, max_epochs=500, init_scale=1.0, seed=seed)
        learned += np.mean((net.predict(X) - T) ** 2) < 1e-3
    assert learned >= 7  # some XOR trials get stuck (Hamey measures exactly that)


def test_cpu_time_and_rates_reported():
    X, T = data(200)
    net = MLP(4, (8,), 2).init_weights(0)
    r = train_rprop(net, X, T, max_epochs=200)
    # process CPU time of the epoch loop: positive, and (one thread in the kernels)
    # not more than the wall time on all cores, with a little timer slack
    assert 0 < r.cpu_time <= r.wall_time * os.cpu_count() + 0.01
    C = net.n_connections
    assert r.traversals.total == 200 * (2 * 200 * C + C)   # 200 epochs of N = 200 patterns
    assert r.traversals_per_cpu_second() == r.traversals.total / r.cpu_time


def test_delta0_range_drawn_per_weight_from_seed():
    X, T = data()
    a = MLP(4, (3,), 2).init_weights(0)
    b = a.copy()
    train_rprop(a, X, T, delta0=(0.05, 0.2), max_epochs=1, seed=11)
    train_rprop(b, X, T, delta0=(0.05, 0.2), max_epochs=1, seed=11)
    steps = np.abs(a.weights - MLP(4, (3,), 2).init_weights(0).weights)
    assert np.array_equal(a.weights, b.weights)
    assert 0.05 <= steps.min() and steps.max() <= 0.2 and np.unique(steps).size > 10


BAD = [
    (dict(eta_minus=1.5), ValueError, "`eta_minus` must be in"),
    (dict(eta_minus=0.0), ValueError, "`eta_minus`"),
    (dict(eta_plus=1.0), ValueError, "`eta_plus` must be in"),
    (dict(delta_min=-1.0), ValueError, "`delta_min`"),
    (dict(delta_min=2.0, delta_max=1.0), ValueError, "`delta_min` must be <= `delta_max`"),
    (dict(delta0=0.0), ValueError, "`delta0`"),
    (dict(delta0=(0.2, 0.1)), ValueError, "lo <= hi"),
    (dict(delta0=(0.1, 0.2, 0.3)), ValueError, "range"),
    (dict(delta0=100.0), ValueError, "must not exceed `delta_max`"),
    (dict(variant="rprop"), ValueError, "`variant` must be one of"),
    (dict(max_epochs=0), ValueError, "`max_epochs` must be >= 1"),
    (dict(max_epochs=2.5), TypeError, "`max_epochs` must be an integer"),
    (dict(strip=0), ValueError, "`strip`"),
    (dict(eta_plus="x"), TypeError, "`eta_plus` must be a real number"),
    (dict(eta_plus=float("nan")), ValueError, "`eta_plus` must be finite"),
    (dict(preset="proben2"), ValueError, "`preset` must be one of"),
    (dict(stop="GL5"), ValueError, r"`stop` must be None, a fastnet.stopping criterion such as GL\(5\)"),
    (dict(stop=MaxEpochs(3), callback=5), TypeError, "`callback`"),
    (dict(target_range=(1.0, 0.0)), ValueError, "`target_range`"),
    (dict(seed=-1), ValueError, "`seed`"),
    (dict(seed="a"), TypeError, "`seed`"),
    (dict(init_scale=-1.0), ValueError, "`init_scale`"),
]


@pytest.mark.parametrize("kwargs,exc,match", BAD)
def test_bad_hyper_parameters(kwargs, exc, match):
    X, T = data()
    with pytest.raises(exc, match=match):
        train_rprop(MLP(4, (3,), 2), X, T, **kwargs)


def test_bad_data():
    X, T = data()
    net = MLP(4, (3,), 2)
    with pytest.raises(ValueError, match="`X` has 3 inputs but the network has 4"):
        train_rprop(net, X[:, :3], T)
    with pytest.raises(ValueError, match="`Y` has 1 outputs but the network has 2"):
        train_rprop(net, X, T[:, :1])
    with pytest.raises(ValueError, match="40 patterns but `Y` has 39"):
        train_rprop(net, X, T[:-1])
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="`X` must be finite; found nan at row 3, column 1"):
        train_rprop(net, bad, T)
    with pytest.raises(ValueError, match="`Y` must be finite"):
        train_rprop(net, X, np.where(T > 0, np.inf, 0))
    with pytest.raises(ValueError, match="no rows"):
        train_rprop(net, X[:0], T[:0])
    with pytest.raises(ValueError, match="must be 2-D"):
        train_rprop(net, X[:, 0], T)
    with pytest.raises(TypeError, match="must hold numbers"):
        train_rprop(net, X.astype(str), T)
    with pytest.raises(ValueError, match="give both `X_val` and `Y_val`"):
        train_rprop(net, X, T, X)
    with pytest.raises(ValueError, match="`X_val` has 2 inputs"):
        train_rprop(net, X, T, X[:, :2], T)
    with pytest.raises(TypeError, match="`net` must be a fastnet.MLP"):
        train_rprop("net", X, T)
    with pytest.raises(ValueError, match="needs a validation set"):
        train_rprop(net, X, T, preset="proben1-linear")


def test_data_is_coerced_not_copied_back():
    X, T = data()
    Xf = np.asfortranarray(X.astype(np.float32))
    with pytest.warns(UserWarning, match=r"`X` has dtype float32: the network computes in float64"):
        r1 = train_rprop(MLP(4, (3,), 2).init_weights(0), Xf, T.tolist(), max_epochs=5)
    r2 = train_rprop(MLP(4, (3,), 2).init_weights(0), X.astype(np.float32).astype(float), T,
                     max_epochs=5)
    assert np.array_equal(r1.train_error, r2.train_error)


def test_divergence_raises_floating_point_error():
    from fastnet import train_backprop
    X, T = data()
    X = X * 1e150
    with pytest.raises(FloatingPointError, match="non-finite"):
        train_backprop(MLP(4, (), 2, output_activation="linear").init_weights(0), X, T,
                       learning_rate=1e10, max_epochs=20)


XOR_X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
XOR_T = np.array([[0.0], [1.0], [1.0], [0.0]])


def _hamey_pair(net, X, T, **kwargs):
    """One run through the kernel's success check, one through the general loop
    (a callback forces the per-strip loop in Python)."""
    import warnings

    from fastnet.exceptions import NoConvergenceWarning

    results = []
    for callback in (None, lambda epoch, state: None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoConvergenceWarning)
            results.append(train_rprop(net.copy(), X, T, callback=callback, **kwargs))
    return results


@pytest.mark.parametrize("max_epochs", [300, 14])  # 14: some seeds fail, a partial last strip
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("strip", [1, 3])
def test_kernel_success_check_gives_the_general_loops_result(seed, strip, max_epochs):
    # Hamey-style runs (stop=Correct() alone) check success inside the kernel; the
    # result must be the one the Python loop gives, bit for bit: epochs, errors,
    # weights, traversal counts (some XOR seeds fail: max_epochs, no success).
    from fastnet.stopping import Correct

    net = MLP(2, (2,), 1).init_weights(seed, scale=1.0)
    fast, slow = _hamey_pair(net, XOR_X, XOR_T, stop=Correct(), max_epochs=max_epochs,
                             strip=strip)
    assert fast.epochs == slow.epochs and fast.stop_reason == slow.stop_reason
    assert_allclose(fast.train_error, slow.train_error, rtol=0, atol=0)
    assert_allclose(fast.net.weights, slow.net.weights, rtol=0, atol=0)
    assert fast.traversals == slow.traversals
    if fast.stop_reason == "correct":
        assert fast.epochs % strip == 0
        assert (fast.net.predict(XOR_X) > 0.6).ravel().tolist() == [False, True, True, False]


@pytest.mark.parametrize("analog", [None, 0.3])
def test_kernel_success_check_on_wide_nets_and_analog_targets(analog):
    # 8-3-8 encoder (8 rows: the AVX-512 forward path where the CPU has it), with
    # one analog target column when `analog` is given.
    from fastnet.stopping import Correct

    X = np.eye(8)
    T = np.eye(8)
    if analog is not None:
        T = np.hstack([T, np.linspace(0.2, 0.8, 8)[:, None]])
    net = MLP(8, (3,), T.shape[1]).init_weights(3, scale=1.0)
    fast, slow = _hamey_pair(net, X, T, stop=Correct(analog=analog), max_epochs=400, strip=1)
    assert fast.stop_reason == slow.stop_reason == "correct"
    assert fast.epochs == slow.epochs
    assert_allclose(fast.net.weights, slow.net.weights, rtol=0, atol=0)
    assert fast.traversals == slow.traversals


def test_kernel_success_check_runs_without_python_per_epoch():
    # The fast path must really be taken: the loop hands the check to the
    # kernels (an algorithm object that records what it is asked), and nothing
    # else runs a forward pass for it (one evaluation per epoch, no more).
    from fastnet import train
    from fastnet.algorithms import RPROP
    from fastnet.stopping import Correct

    asked = []

    class RecordingRPROP(RPROP):
        def epochs(self, ws, state, sse_out, check):
            asked.append(check)
            return super().epochs(ws, state, sse_out, check)

    net = MLP(2, (2,), 1).init_weights(0, scale=1.0)
    res = train(net, XOR_X, XOR_T, algorithm=RecordingRPROP(), stop=Correct(), max_epochs=2000,
                strip=1)
    assert res.stop_reason == "correct"
    assert asked and all(check is not None and check[0] == 1 for check in asked)
    assert res.traversals.evaluation == res.epochs * len(XOR_X) * net.n_connections


def test_kernel_success_check_rejects_non_binary_targets_without_analog():
    from fastnet.stopping import Correct

    T = XOR_T * 0.9
    with pytest.raises(ValueError, match="analog"):
        train_rprop(MLP(2, (2,), 1), XOR_X, T, stop=Correct(), max_epochs=10)


def test_signature_shows_readable_defaults():
    import inspect

    from fastnet import train_rprop_many

    for fn in (train_rprop, train_rprop_many):
        eta_plus = inspect.signature(fn).parameters["eta_plus"]
        assert "object at 0x" not in str(inspect.signature(fn))
        assert repr(eta_plus.default) == "<preset or default>"


def test_train_result_repr_is_compact_and_names_the_results():
    net = MLP(2, (2,), 1, seed=0)
    r = train_rprop(net, XOR_X, XOR_T, XOR_X, XOR_T, max_epochs=300)
    text = repr(r)
    assert len(text) < 400 and "array" not in text
    assert f"epochs={r.epochs}" in text and f"stop_reason={r.stop_reason!r}" in text
    assert f"E_tr={r.final_train.squared_error_percentage:.4g}" in text and "E_te=None" in text
    assert "300 training errors, 60 validation errors" in text
