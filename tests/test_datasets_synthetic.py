"""Generated tasks: XOR, n-m-n encoder, Lawrence's teacher task, Mackey-Glass."""

import dataclasses

import numpy as np
import pytest

from fastnet.datasets import (
    TEACHER_BIAS_RANGE,
    Dataset,
    make_encoder,
    make_mackey_glass,
    make_teacher,
    make_xor,
)
# (the integrator alone, to measure its step-size error: no public face)
from fastnet.datasets._synthetic import _mackey_glass_series


def assert_split(split, n, n_in, n_out):
    X, T = split
    assert X.shape == (n, n_in) and T.shape == (n, n_out)
    assert X.dtype == T.dtype == np.float64
    assert X.flags.c_contiguous and T.flags.c_contiguous
    assert np.isfinite(X).all() and np.isfinite(T).all()


def assert_same(a, b):
    for s, t in ((a.train, b.train), (a.val, b.val), (a.test, b.test)):
        assert (s is None) == (t is None)
        if s is not None:
            np.testing.assert_array_equal(s.X, t.X)
            np.testing.assert_array_equal(s.Y, t.Y)


# --------------------------------------------------------------------------- XOR, encoder


def test_xor():
    ds = make_xor()
    assert isinstance(ds, Dataset) and ds.name == "xor" and ds.kind == "classification"
    assert_split(ds.train, 4, 2, 1)
    np.testing.assert_array_equal(ds.train.X, [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(ds.train.Y[:, 0], np.logical_xor(*ds.train.X.T))
    assert ds.val is None and ds.test is None and ds.n_val == ds.n_test == 0
    assert ds.training_set(with_validation=True) is ds.train
    a = ds.architecture
    assert a.layer_sizes == (2, 2, 1) and not a.shortcut and a.connections == 9
    assert ds.problem is None and ds.path is None and ds.partitioning is None


@pytest.mark.parametrize("n, m", [(10, 5), (8, 3), (4, 2), (2, 1)])
def test_encoder(n, m):
    ds = make_encoder(n, m)
    assert ds.name == f"encoder-{n}-{m}-{n}" and (ds.n_in, ds.n_out) == (n, n)
    assert_split(ds.train, n, n, n)
    np.testing.assert_array_equal(ds.train.X, np.eye(n))
    np.testing.assert_array_equal(ds.train.Y, np.eye(n))
    assert ds.train.X is not ds.train.Y
    assert ds.architecture.layer_sizes == (n, m, n)
    assert ds.architecture.connections == (n + 1) * m + (m + 1) * n
    assert ds.val is None and ds.test is None


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"n": 1}, ValueError, r"`n` must be >= 2, got 1"),
    ({"m": 0}, ValueError, r"`m` must be >= 1, got 0"),
    ({"n": 2.5}, TypeError, r"`n` must be an integer, got float"),
    ({"m": True}, TypeError, r"`m` must be an integer, got bool"),
])
def test_encoder_errors(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        make_encoder(**kwargs)


def test_encoder_accepts_numpy_integers():
    assert make_encoder(np.int64(6), np.int32(3)).name == "encoder-6-3-6"


# ---------------------------------------------------------------------------- teacher


@pytest.mark.parametrize("K", [1, 5, 10, 15])
def test_teacher_follows_lawrence(K):
    ds = make_teacher(K, seed=K)
    assert ds.name == f"teacher-K{K}" and ds.kind == "approximation"
    assert_split(ds.train, 1000, 5, 1)            # the paper's n_tr = 1000
    assert_split(ds.test, 5000, 5, 1)             # and n_te = 5000
    assert ds.val is None
    p = ds.params
    assert p["K"] == K and p["seed"] == K
    for w in (p["W_hidden"], p["W_out"]):
        assert np.all(np.abs(w) <= K)
    for b in (p["b_hidden"], p["b_out"]):
        assert np.all(np.abs(b) <= TEACHER_BIAS_RANGE) and TEACHER_BIAS_RANGE == 0.01
    assert p["W_hidden"].shape == (5, 5) and p["W_out"].shape == (5, 1)
    assert not p["W_hidden"].flags.writeable
    # targets are the teacher's outputs: tanh hidden layer, linear output
    for X, T in (ds.train, ds.test):
        h = np.tanh(X @ p["W_hidden"] + p["b_hidden"])
        np.testing.assert_allclose(T, h @ p["W_out"] + p["b_out"], rtol=1e-12, atol=1e-12)
    # inputs ~ N(0, 1): 25000 test values, mean within 5 s.e., variance within 5 %
    X = ds.test.X
    assert abs(X.mean()) < 5 / np.sqrt(X.size)
    assert abs(X.var() - 1) < 0.05
    assert ds.architecture.layer_sizes == (5, 5, 1) and ds.architecture.connections == 36


def test_teacher_weight_distribution():
    K = 4.0
    p = make_teacher(K, n_train=1, n_test=0, n_in=60, n_hidden=50, seed=0).params
    w = p["W_hidden"].ravel()                   # 3000 draws of U(-K, K)
    assert w.min() >= -K and w.max() <= K
    assert w.min() < -0.99 * K and w.max() > 0.99 * K
    assert abs(w.mean()) < 5 * K / np.sqrt(3 * w.size)
    assert abs(w.var() / (K * K / 3) - 1) < 0.1
    b = p["b_hidden"]
    assert b.min() >= -0.01 and b.max() <= 0.01 and b.max() - b.min() > 0.015


def test_teacher_reproducible_and_seed_dependent():
    a, b, c = make_teacher(5, 50, 20, 30, seed=7), make_teacher(5, 50, 20, 30, seed=7), \
        make_teacher(5, 50, 20, 30, seed=8)
    assert_same(a, b)
    for key in ("W_hidden", "b_hidden", "W_out", "b_out"):
        np.testing.assert_array_equal(a.params[key], b.params[key])
        assert not np.array_equal(a.params[key], c.params[key])
    assert not np.array_equal(a.train.X, c.train.X)
    assert_split(a.val, 20, 5, 1)
    with_val = a.training_set(with_validation=True)
    np.testing.assert_array_equal(with_val.X, np.vstack([a.train.X, a.val.X]))
    gen = make_teacher(5, 10, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(gen.params["W_hidden"], a.params["W_hidden"])


def test_teacher_sizes_and_no_test_set():
    ds = make_teacher(1, n_train=3, n_val=0, n_test=0, n_in=2, n_hidden=4)
    assert_split(ds.train, 3, 2, 1)
    assert ds.val is None and ds.test is None
    assert ds.architecture.connections == 3 * 4 + 5


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"K": 0}, ValueError, r"`K` must be positive and finite, got 0.0"),
    ({"K": -1}, ValueError, r"`K` must be positive"),
    ({"K": float("nan")}, ValueError, r"`K` must be positive and finite, got nan"),
    ({"K": float("inf")}, ValueError, r"`K` must be positive and finite"),
    ({"K": "5"}, TypeError, r"`K` must be a real number, got str"),
    ({"n_train": 0}, ValueError, r"`n_train` must be >= 1, got 0"),
    ({"n_val": -1}, ValueError, r"`n_val` must be >= 0, got -1"),
    ({"n_test": 1.0}, TypeError, r"`n_test` must be an integer, got float"),
    ({"n_in": 0}, ValueError, r"`n_in` must be >= 1"),
    ({"n_hidden": 0}, ValueError, r"`n_hidden` must be >= 1"),
])
def test_teacher_errors(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        make_teacher(**kwargs)


# ----------------------------------------------------------------------- Mackey-Glass

SMALL = dict(n_train=150, n_val=40, n_test=60, transient=300.0)


def test_mackey_glass_shapes_windows_and_bounds():
    ds = make_mackey_glass(**SMALL, seed=1)
    assert ds.name == "mackey-glass" and ds.kind == "approximation" and ds.n_in == 6
    assert_split(ds.train, 150, 6, 1)
    assert_split(ds.val, 40, 6, 1)
    assert_split(ds.test, 60, 6, 1)
    s = ds.params["series"]
    assert s.shape == (256,) and not s.flags.writeable
    X, T = np.vstack([ds.train.X, ds.val.X, ds.test.X]), np.vstack([ds.train.Y, ds.val.Y,
                                                                        ds.test.Y])
    for i in range(len(X)):                      # window of 6 samples, next sample as target
        np.testing.assert_array_equal(X[i], s[i:i + 6])
        assert T[i, 0] == s[i + 6]
    # bounded: the tau=30 attractor stays within roughly 0.2..1.4
    assert 0.1 < s.min() and s.max() < 1.5 and s.std() > 0.1
    assert ds.architecture.layer_sizes == (6, 5, 1) and ds.architecture.output == "l"


def test_mackey_glass_reproducible_and_seed_dependent():
    a, b = make_mackey_glass(**SMALL, seed=3), make_mackey_glass(**SMALL, seed=3)
    c = make_mackey_glass(**SMALL, seed=4)
    assert_same(a, b)
    assert a.params["x0"] == b.params["x0"] != c.params["x0"]
    assert 0.5 <= a.params["x0"] <= 1.5
    assert not np.array_equal(a.train.X, c.train.X)


def test_mackey_glass_given_x0_ignores_seed():
    a = make_mackey_glass(n_train=20, n_test=0, transient=60.0, x0=1.2, seed=1)
    b = make_mackey_glass(n_train=20, n_test=0, transient=60.0, x0=1.2, seed=2)
    assert_same(a, b)
    assert a.test is None and a.val is None and a.params["x0"] == 1.2


def test_mackey_glass_defaults_follow_lawrence():
    ds = make_mackey_glass()
    assert (ds.n_train, ds.n_val, ds.n_test) == (1000, 0, 1000)
    p = ds.params
    assert (p["tau"], p["a"], p["b"], p["c"], p["sample_step"], p["window"]) == (
        30.0, 0.2, 0.1, 10.0, 6.0, 6)


def test_mackey_glass_integration_is_fourth_order():
    # No transient: 40 samples (240 time units, 8 delays) from x0 = 1.2.
    args = (41, 1.2, 30.0, 0.2, 0.1, 10.0, 6.0)
    ref = _mackey_glass_series(*args, 0.0125, 0.0)
    err = {dt: np.abs(_mackey_glass_series(*args, dt, 0.0) - ref).max() for dt in (0.2, 0.1)}
    assert err[0.1] < 1e-8                      # the default step is accurate
    assert err[0.2] / err[0.1] > 10             # ~16 for a fourth-order scheme


def test_mackey_glass_short_time_matches_the_equation():
    # For t in [0, tau] the delayed term is constant (history x0), so
    # x(t) = g/b + (x0 - g/b) exp(-b t) exactly, g = a x0 / (1 + x0^c).
    x0, a, b, c = 0.8, 0.2, 0.1, 10.0
    s = _mackey_glass_series(6, x0, 30.0, a, b, c, 6.0, 0.1, 0.0)   # t = 0, 6, ..., 30
    g = a * x0 / (1 + x0 ** c)
    t = np.arange(6) * 6.0
    np.testing.assert_allclose(s, g / b + (x0 - g / b) * np.exp(-b * t), rtol=1e-10)


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"dt": 0.7}, ValueError, r"`dt` must divide `tau` into at least 2 steps, got dt=0.7"),
    ({"dt": 20.0}, ValueError, r"`dt` must divide `tau`"),
    ({"sample_step": 6.05}, ValueError, r"`dt` must divide `sample_step`"),
    ({"x0": 1.0}, ValueError, r"`x0` must not be 1.0, the equation's fixed point"),
    ({"x0": -0.5}, ValueError, r"`x0` must be positive"),
    ({"transient": -1.0}, ValueError, r"`transient` must be >= 0 and finite, got -1.0"),
    ({"transient": "long"}, TypeError, r"`transient` must be a real number"),
    ({"window": 0}, ValueError, r"`window` must be >= 1, got 0"),
    ({"tau": 0.0}, ValueError, r"`tau` must be positive"),
    ({"a": -0.2}, ValueError, r"`a` must be positive"),
    ({"b": float("nan")}, ValueError, r"`b` must be positive"),
    ({"c": None}, TypeError, r"`c` must be a real number, got NoneType"),
    ({"dt": 0.0}, ValueError, r"`dt` must be positive"),
    ({"n_train": 0}, ValueError, r"`n_train` must be >= 1"),
    ({"n_val": -2}, ValueError, r"`n_val` must be >= 0"),
    ({"n_test": 2.0}, TypeError, r"`n_test` must be an integer"),
])
def test_mackey_glass_errors(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        make_mackey_glass(**kwargs)


def test_generated_datasets_are_frozen():
    ds = make_mackey_glass(n_train=5, n_test=0, transient=0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "other"
    with pytest.raises(TypeError):
        ds.params["seed"] = 5


# ---- standardize (inputs by the training set's mean and sd)
def test_standardize_by_training_statistics():
    from fastnet.datasets import Split, standardize
    rng = np.random.default_rng(0)
    X = rng.normal([3.0, -2.0, 0.5], [2.0, 0.1, 5.0], size=(50, 3))
    V = rng.normal(size=(7, 3))
    Z, W, none = standardize(X, V, None)
    assert none is None
    assert np.allclose(Z.mean(axis=0), 0.0, atol=1e-14) and np.allclose(Z.std(axis=0), 1.0)
    # the other set moved by the training set's numbers, computed here by hand
    n = X.shape[0]
    for j in range(3):
        m = sum(X[:, j]) / n
        s = (sum((x - m) ** 2 for x in X[:, j]) / n) ** 0.5
        assert np.allclose(W[:, j], (V[:, j] - m) / s, rtol=1e-12)
    assert Z.flags.c_contiguous and W.dtype == np.float64
    # Splits keep their targets; a 1-D input is one column
    Y = rng.normal(size=(50, 1))
    (s,) = standardize(Split(X, Y))
    assert isinstance(s, Split) and s.Y is Y and np.array_equal(s.X, Z)
    (c,) = standardize([1.0, 2.0, 3.0])
    assert c.shape == (3, 1)
    # a constant column is centred, not scaled
    (k,) = standardize(np.array([[5.0, 1.0], [5.0, 3.0]]))
    assert k[:, 0].tolist() == [0.0, 0.0] and k[:, 1].tolist() == [-1.0, 1.0]


@pytest.mark.parametrize("spread", [1e-160, 1e-200, 1e-300, 5e-324])
def test_standardize_scales_columns_of_tiny_spread(spread):
    # (issue 46, item 3: the variance underflowed below a spread of ~1e-162, leaving the
    # column unscaled; at 1e-160 the result was inexact)
    from fastnet.datasets import standardize
    X = np.array([[0.0], [1.0], [2.0]]) * spread
    (Z,) = standardize(X)
    expected = np.array([[-1.0], [0.0], [1.0]]) * 1.5 ** 0.5
    if spread == 5e-324:                            # 0, 5e-324 and 1e-323: the smallest subnormals
        np.testing.assert_allclose(Z, expected, rtol=1e-15)
    else:
        np.testing.assert_allclose(Z, expected, rtol=4e-16, atol=1e-300)
    (W,) = standardize(np.array([[3e-200, 1e-200], [3e-200, 2e-200]]))   # only a spread of 0 stays
    assert W.tolist() == [[0.0, -1.0], [0.0, 1.0]]


def test_standardize_refuses_bad_sets():
    from fastnet.datasets import standardize
    with pytest.raises(ValueError, match="`others\\[0\\]` must have 2 columns"):
        standardize(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="`train` must be finite"):
        standardize(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="at least one row"):
        standardize(np.empty((0, 2)))
    with pytest.raises(TypeError, match="`train` must be an array of inputs or a Split, got None"):
        standardize(None)
    with pytest.raises(TypeError, match="`others\\[0\\]` must be an array of numbers"):
        standardize(np.ones((2, 1)), "abc")
    with pytest.raises(ValueError, match="must be 2-D"):
        standardize(np.ones((2, 2, 2)))


@pytest.mark.parametrize("make", [make_teacher, make_mackey_glass])
def test_generated_tasks_standardize_inputs_by_training_set(make):
    from fastnet.datasets import standardize
    raw = make(n_train=300, n_test=100, seed=4)
    std = make(n_train=300, n_test=100, seed=4, standardize=True)
    Z, T = standardize(raw.train.X, raw.test.X)
    assert np.array_equal(std.train.X, Z) and np.array_equal(std.test.X, T)
    assert np.array_equal(std.train.Y, raw.train.Y) and np.array_equal(std.test.Y, raw.test.Y)
    assert np.allclose(std.train.X.mean(axis=0), 0.0, atol=1e-12)
    assert std.params["standardize"] is True and raw.params["standardize"] is False
    with pytest.raises(TypeError, match="`standardize` must be True or False"):
        make(n_train=10, n_test=0, standardize="yes")


def test_standardize_centres_constant_columns_in_their_own_units():
    # a column constant in the training set is centred, not scaled (nor moved into the
    # power-of-two units the statistics are taken in)
    from fastnet.datasets import standardize

    X_train = np.array([[1.0, 10.0, 0.0, 3e300], [3.0, 10.0, 0.0, 3e300]])
    X_test = np.array([[5.0, 12.0, -2.5, 2e300]])
    Z_train, Z_test = standardize(X_train, X_test)
    assert Z_train.tolist() == [[-1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    assert Z_test.tolist() == [[3.0, 2.0, -2.5, -1e300]]
