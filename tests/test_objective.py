"""Prepared objects for embedding: fastnet.gradients.Objective, fastnet.Trainer and the
estimators' partial_fit, each against the function it stands for (bit for bit)."""
import pickle
import re

import numpy as np
import pytest

from fastnet import MLP, DivergenceError, Trainer, jacobian, train, value_and_grad
from fastnet.gradients import Objective
from _extras import needs

XOR = (np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]), np.array([[0.], [1.], [1.], [0.]]))


def _problem(n, sizes=(5, (4, 3), 2), seed=0, **kw):
    rng = np.random.default_rng(seed)
    net = MLP(sizes[0], sizes[1], sizes[2], seed=seed, **kw)
    X = rng.standard_normal((n, sizes[0]))
    Y = rng.uniform(size=(n, sizes[2]))
    return net, X, Y


@pytest.mark.parametrize("n", [0, 1, 7, 200, 1000])
@pytest.mark.parametrize("kw", [{}, {"hidden_activation": "tanh", "shortcut": False},
                                {"output_activation": "softmax", "loss": "cross_entropy",
                                 "weight_decay": 0.01}])
def test_objective_equals_value_and_grad_bit_for_bit(n, kw):
    kw = dict(kw)
    loss, decay = kw.pop("loss", "sse"), kw.pop("weight_decay", 0.0)
    net, X, Y = _problem(n, **kw)
    if loss == "cross_entropy":
        Y = Y / Y.sum(axis=1, keepdims=True)
    obj = Objective(net, X, Y, loss=loss, weight_decay=decay)
    rng = np.random.default_rng(1)
    for _ in range(3):
        w = rng.uniform(-1, 1, net.n_connections)
        ref = value_and_grad(net.copy().set_weights(w), X, Y, loss=loss, weight_decay=decay)
        E, g = obj(w)
        assert E == ref.error and np.array_equal(g, ref.gradient)
        out = np.full(net.n_connections, np.nan)
        E2, g2 = obj(w, out=out)
        assert g2 is out and E2 == E and np.array_equal(out, g)
        assert np.array_equal(obj.grad(w), g)
        assert obj.value(w) == pytest.approx(E, rel=1e-12, abs=1e-300)
        assert np.array_equal(obj.jacobian(w), jacobian(net.copy().set_weights(w), X))


def test_objective_keeps_its_own_copy_of_the_data():
    net, X, Y = _problem(20)
    obj = Objective(net, X, Y)
    ref = obj(net.weights)
    X[:] = 0.0
    Y[:] = 0.0
    again = obj(net.weights)
    assert again.error == ref.error and np.array_equal(again.gradient, ref.gradient)


def test_objective_with_scipy_minimize():
    from scipy.optimize import minimize

    net, X, Y = _problem(50)
    obj = Objective(net, X, Y)
    res = minimize(obj, net.weights, jac=True, method="L-BFGS-B", options={"maxiter": 50})
    assert res.fun < obj.value(net.weights)
    assert res.fun == pytest.approx(value_and_grad(net.copy().set_weights(res.x), X, Y).error)


def test_objective_converts_real_arrays():
    net, X, Y = _problem(10)
    obj = Objective(net, X, Y)
    w = net.weights
    ref = obj(w)
    assert obj(list(w)).error == ref.error
    strided = np.repeat(w, 2)[::2]
    assert obj(strided).error == ref.error
    assert obj(w.astype(np.float32)).error == obj(w.astype(np.float32).astype(float)).error


@pytest.mark.parametrize("w, exc, match", [
    (np.zeros(3), ValueError, r"`w` must have shape \(\d+,\)"),
    (np.zeros((2, 2)), ValueError, "`w` must have shape"),
    ("abc", TypeError, "`w`"),
    (None, TypeError, "`w`"),
])
def test_objective_refuses_bad_w(w, exc, match):
    net, X, Y = _problem(10)
    with pytest.raises(exc, match=match):
        Objective(net, X, Y)(w)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_objective_refuses_non_finite_w(bad):
    net, X, Y = _problem(10)
    obj = Objective(net, X, Y)
    w = net.weights.copy()
    w[3] = bad
    for call in (obj, obj.value, obj.grad, obj.jacobian):
        with pytest.raises(FloatingPointError, match=r"`w` must be finite.*index 3"):
            call(w)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_objective_takes_huge_finite_w_without_a_warning(dtype):
    # logistic outputs saturate: a finite result although w @ w overflows (in float32
    # from |w| ~ 1e19 on); the check of w warns nothing (filterwarnings = error)
    net, X, Y = _problem(10, output_activation="logistic")
    net = net.astype(dtype)
    obj = Objective(net, X, Y)
    big = 1e300 if dtype == "float64" else 3e37
    w = np.full(net.n_connections, big)
    E, g = obj(w)
    assert np.isfinite(E) and np.isfinite(g).all()
    assert obj.value(w) == pytest.approx(E, rel=1e-6)
    assert np.isfinite(obj.jacobian(w)).all()


@pytest.mark.parametrize("dtype, big", [("float64", 1e300), ("float64", 1e200),
                                        ("float32", 3e38), ("float32", 1e20)])
def test_objective_refuses_a_result_that_overflowed(dtype, big):
    # finite weights whose products overflow give NaN or inf in the value or the
    # gradient (value_and_grad returns them): a FloatingPointError names the overflow,
    # never "NaN or infinite weights", and no NumPy warning leaks
    net, X, Y = _problem(10)
    net = net.astype(dtype)
    obj = Objective(net, X, Y)
    w = np.full(net.n_connections, big)
    match = (rf"^`w` must keep the network's arithmetic within {dtype} \(magnitudes up to "
             + re.escape(f"{np.finfo(dtype).max:g}") + r"\), got weights that are finite but "
             r"so large that the result overflowed: .*(NaN or infinite|the value is)")
    for call in (obj, obj.grad):
        with pytest.raises(FloatingPointError, match=match):
            call(w)
    if dtype == "float32":
        with pytest.raises(FloatingPointError, match="or use a float64 network"):
            obj(w)


def test_objective_refuses_an_overflowing_value_and_jacobian():
    net, X, Y = _problem(10, sizes=(5, (4, 3), 2), hidden_activation="relu")
    obj = Objective(net.astype("float32"), X, Y)
    w = np.full(net.n_connections, 3e38)
    with pytest.raises(FloatingPointError, match=r"overflowed: the value is nan\."):
        obj.value(w)
    with pytest.raises(FloatingPointError, match=r"overflowed: \d+ of the \d+ Jacobian entries"):
        obj.jacobian(w)


@pytest.mark.parametrize("wide", [np.float64, np.longdouble])
def test_float32_objective_names_weights_beyond_its_range(wide):
    net, X, Y = _problem(10)
    obj = Objective(net.astype("float32"), X, Y)
    w = net.weights.astype(wide)
    w[3], w[7] = 1e39, -1e39
    for call in (obj, obj.value, obj.jacobian):
        with pytest.raises(ValueError, match=(
                r"^`w` must lie within the float32 range of the network \(magnitude at most "
                rf"3\.40282e\+38; larger {np.dtype(wide).name} weights overflow float32\), "
                r"got 1e\+39 at index 3 \(and 1 more\)\.$")):
            call(w)
    w[7] = np.nan                         # (still named as beyond the range first)
    with pytest.raises(ValueError, match="at index 3.$"):
        obj(w)
    w[3] = 1e38                           # (within the range: NaN is the fault now)
    with pytest.raises(FloatingPointError, match="`w` must be finite.*index 7"):
        obj(w)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("decay", [0.0, 0.01])
def test_objective_out_may_be_w_itself(dtype, decay):
    # the kernels write the gradient while they read the weights: a call whose out
    # shares memory with w reads a copy of w, so the result is the one of a separate out
    net, X, Y = _problem(20)
    net = net.astype(dtype)
    obj, C = Objective(net, X, Y, weight_decay=decay), net.n_connections
    w = net.weights.copy()
    ref = obj(w.copy())
    same = w.copy()
    E, g = obj(same, out=same)
    assert g is same and E == ref.error and np.array_equal(same, ref.gradient)
    buf = np.zeros(2 * C, dtype)            # out overlapping half of w
    buf[:C] = w
    E, g = obj(buf[:C], out=buf[C // 2:C // 2 + C])
    assert E == ref.error and np.array_equal(g, ref.gradient)
    J_ref = obj.jacobian(w)
    J = np.empty_like(J_ref)
    J[1] = w
    assert np.array_equal(obj.jacobian(J[1], out=J), J_ref)


def _points(net, n, seed=5):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, net.n_connections) for _ in range(n)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_one_objective_from_many_threads_gives_the_lone_results(dtype):
    # one Objective in a thread pool: the kernels release the GIL, so calls overlap; each
    # running call has a workspace of its own, and every result is the one a lone call
    # gives, bit for bit (sharing the buffers gave wrong values, silently)
    from concurrent.futures import ThreadPoolExecutor

    net, X, Y = _problem(400, sizes=(16, (24, 12), 3))
    net = net.astype(dtype)
    obj, alone = Objective(net, X, Y), Objective(net, X, Y)
    points = _points(net, 16)
    ref = [alone(w) for w in points]
    ref_value = [alone.value(w) for w in points]
    ref_J = [alone.jacobian(w) for w in points[:2]]

    def work(i):
        k = i % len(points)
        if i % 7 == 3:
            return "value", k, obj.value(points[k])
        if i % 29 == 5:
            return "jacobian", k % 2, obj.jacobian(points[k % 2])
        return "call", k, obj(points[k])

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, range(600)))
    wrong = 0
    for kind, k, got in results:
        if kind == "call":
            wrong += not (got.error == ref[k].error and np.array_equal(got.gradient, ref[k].gradient))
        elif kind == "value":
            wrong += got != ref_value[k]
        else:
            wrong += not np.array_equal(got, ref_J[k])
    assert wrong == 0
    assert 1 <= len(obj._free) <= 4        # (one workspace per call that ran at once, kept)


def test_objective_call_while_its_workspace_is_held_elsewhere():
    # what a call finds when another thread's call holds the kept workspace: it makes
    # its own (the inputs copied), computes the same and keeps it for later calls
    net, X, Y = _problem(30)
    obj = Objective(net, X, Y)
    w = net.weights
    ref, ref_J = obj(w), obj.jacobian(w)
    held = obj._free.pop()                 # (as a running call holds it)
    before = [a.copy() for a in held if a is not None]
    E, g = obj(w)
    assert E == ref.error and np.array_equal(g, ref.gradient)
    assert np.array_equal(obj.jacobian(w), ref_J) and obj.value(w) == obj.value(w)
    assert all(np.array_equal(a, b) for a, b in zip(before, [a for a in held if a is not None]))
    assert len(obj._free) == 1 and obj._free[0] is not held


def test_objective_refuses_bad_out():
    net, X, Y = _problem(10)
    obj, w, C = Objective(net, X, Y), net.weights, net.n_connections
    with pytest.raises(TypeError, match="`out` must have dtype float64"):
        obj(w, out=np.zeros(C, np.float32))
    with pytest.raises(ValueError, match="`out` must have shape"):
        obj(w, out=np.zeros(C + 1))
    with pytest.raises(ValueError, match="`out` must be C-contiguous and writeable"):
        obj(w, out=np.zeros(2 * C)[::2])
    with pytest.raises(TypeError, match="`out` must be a numpy.ndarray"):
        obj(w, out=[0.0] * C)


def test_objective_checks_its_arguments_once():
    net, X, Y = _problem(10)
    with pytest.raises(TypeError, match="`net` must be a fastnet.MLP"):
        Objective("net", X, Y)
    with pytest.raises(ValueError, match="`X`"):
        Objective(net, X[:, :2], Y)
    with pytest.raises(ValueError, match="`loss`"):
        Objective(net, X, Y, loss="hinge")
    with pytest.raises(ValueError, match="`weight_decay`"):
        Objective(net, X, Y, weight_decay=-1.0)


# ------------------------------------------------------------------- Trainer
ALGORITHMS = ["rprop+", "rprop-", "irprop-", "irprop+", "rprop+(delta0=(0.05, 0.2))",
              "backprop(learning_rate=0.5, momentum=0.9)",
              "backprop(mode='online', learning_rate=0.3)",
              "backprop(learning_rate=0.5, decay=True)", "quickprop", "adam",
              "adam(batch_size=2)", "scg"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_trainer_runs_equal_one_train_call(algorithm):
    a = MLP(2, (2,), 1, output_activation="logistic")
    b = MLP(2, (2,), 1, output_activation="logistic")
    trainer = Trainer(a, *XOR, algorithm=algorithm, init_scale=0.5, seed=3, max_epochs=50)
    errors = [trainer.run(k).train_error for k in (1, 7, 3, 19, 20)]
    ref = train(b, *XOR, algorithm=algorithm, max_epochs=50, init_scale=0.5, seed=3)
    assert trainer.epochs == ref.epochs == 50
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(trainer.train_error, ref.train_error)
    assert np.array_equal(np.concatenate(errors), ref.train_error)


def test_trainer_with_objective_and_validation():
    net, X, Y = _problem(40, output_activation="logistic")
    Xv, Yv = X[:10] + 0.1, Y[:10]
    other = net.copy()
    trainer = Trainer(net, X, Y, Xv, Yv, loss="cross_entropy", weight_decay=0.001)
    for _ in range(4):
        run = trainer.run(5)
    ref = train(other, X, Y, max_epochs=20, loss="cross_entropy", weight_decay=0.001)
    assert np.array_equal(net.weights, other.weights)
    assert np.array_equal(trainer.train_error, ref.train_error)
    assert run.val_error == pytest.approx(100.0 * np.sum((net.predict(Xv) - Yv) ** 2) / Yv.size,
                                          rel=1e-12)
    with pytest.raises(ValueError, match="`X`, `Y` cannot change"):
        Trainer(net.copy(), X, Y, algorithm="scg").set_data(X[:5], Y[:5])


def test_trainer_stops_where_the_rule_stops():
    trainer = Trainer(MLP(2, (2,), 1, output_activation="logistic"), *XOR, algorithm="lm",
                      init_scale=0.5, seed=3)
    runs = [trainer.run(20) for _ in range(3)]
    stopped = [r for r in runs if r.stop_reason is not None]
    assert stopped and stopped[0].epochs < 20 and stopped[0].stop_reason == "mu_max"


def test_trainer_sees_weights_set_between_runs_and_refuses_what_it_cannot_train():
    net = MLP(2, (2,), 1, seed=0)
    trainer = Trainer(net, *XOR)
    trainer.run(3)
    w = np.linspace(-1, 1, net.n_connections)
    net.set_weights(w)
    before = value_and_grad(net, *XOR).error
    run = trainer.run(1)
    assert run.train_error[0] == pytest.approx(100.0 * before / 4)
    with pytest.raises(ValueError, match="`epochs` must be >= 1"):
        trainer.run(0)
    with pytest.raises(TypeError, match="`epochs` must be an integer"):
        trainer.run(2.0)
    with pytest.raises(ValueError, match="`algorithm` .* cannot pause"):
        Trainer(net, *XOR, algorithm="lbfgs")
    with pytest.raises(ValueError, match="`max_epochs` must be given"):
        Trainer(net, *XOR, algorithm="backprop(decay=True)")
    bounded = Trainer(net, *XOR, max_epochs=5)
    bounded.run(4)
    with pytest.raises(ValueError, match="`epochs` must be at most 1"):
        bounded.run(2)


def test_trainer_run_record_is_read_only_and_trainer_copies_data():
    X, Y = XOR[0].copy(), XOR[1].copy()
    a, b = MLP(2, (2,), 1, seed=0), MLP(2, (2,), 1, seed=0)
    trainer = Trainer(a, X, Y)
    X[:] = 5.0
    run = trainer.run(4)
    train(b, *XOR, max_epochs=4)
    assert np.array_equal(a.weights, b.weights)
    with pytest.raises(ValueError):
        run.train_error[0] = 0.0


def test_trainer_raises_on_divergence():
    net = MLP(1, (), 1, seed=0)
    X, Y = np.array([[1.0], [2.0]]), np.array([[1.0], [2.0]])
    trainer = Trainer(net, X, Y, algorithm="backprop(learning_rate=10.0)")
    with pytest.raises(DivergenceError):
        for _ in range(100):
            trainer.run(10)


# ---------------------------------------------------------------- partial_fit
def test_partial_fit_equals_fit_bit_for_bit():
    needs("sklearn")                          # (fastnet.sklearn raises ImportError without it)
    import fastnet.sklearn as sk
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = np.where(X[:, 0] + X[:, 1] > 0, "a", "b")
    for kw in ({}, {"solver": "adam"}, {"variant": "irprop+", "delta0": (0.05, 0.2)},
               {"preset": "proben1-multilayer"}):
        a = sk.RpropClassifier(hidden_layer_sizes=(5,), random_state=3, max_iter=12, **kw)
        a.fit(X, y)
        b = sk.RpropClassifier(hidden_layer_sizes=(5,), random_state=3, **kw)
        b.partial_fit(X, y, classes=["a", "b"])
        for _ in range(11):
            b.partial_fit(X, y)
        assert b.n_iter_ == 12
        assert np.array_equal(a.net_.weights, b.net_.weights), kw
        assert np.array_equal(a.loss_curve_, b.loss_curve_), kw
    yr = X[:, 0] ** 2
    a = sk.RpropRegressor(hidden_layer_sizes=(5,), random_state=3, max_iter=7).fit(X, yr)
    b = sk.RpropRegressor(hidden_layer_sizes=(5,), random_state=3)
    for _ in range(7):
        b.partial_fit(X, yr)
    assert np.array_equal(a.net_.weights, b.net_.weights)
    assert b.predict(X[:3]).shape == (3,)


def test_partial_fit_batches_pickling_and_errors():
    sk = pytest.importorskip("fastnet.sklearn")
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] - X[:, 1]
    reg = sk.RpropRegressor(hidden_layer_sizes=(4,), random_state=0)
    for i in range(0, 40, 10):                      # mini-batches
        reg.partial_fit(X[i:i + 10], y[i:i + 10])
    assert reg.n_iter_ == 4
    again = pickle.loads(pickle.dumps(reg))
    assert np.array_equal(again.predict(X), reg.predict(X))
    again.partial_fit(X, y)
    assert again.n_iter_ == 5
    fitted = sk.RpropRegressor(hidden_layer_sizes=(4,), random_state=0, max_iter=3).fit(X, y)
    w = fitted.net_.weights.copy()
    fitted.partial_fit(X, y)                        # continues the fit
    assert fitted.n_iter_ == 4 and not np.array_equal(w, fitted.net_.weights)
    with pytest.raises(ValueError, match="`y` has 2 target columns"):
        fitted.partial_fit(X, np.c_[y, y])
    clf = sk.RpropClassifier(hidden_layer_sizes=(4,), random_state=0)
    labels = np.where(y > 0, 1, 0)
    with pytest.raises(ValueError, match="`classes` must be given at the first call"):
        clf.partial_fit(X, labels)
    clf.partial_fit(X, labels, classes=[0, 1])
    with pytest.raises(ValueError, match=r"`y` has labels \[2\]"):
        clf.partial_fit(X, labels + 1)
    with pytest.raises(ValueError, match="`classes` must be the classes of the first call"):
        clf.partial_fit(X, labels, classes=[0, 1, 2])
