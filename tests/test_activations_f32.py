"""The float32 activation functions: _kernels/_activations.h's template at the value type float.

Reached through ``_forward.activation_at_level`` and ``_forward.exp_at_level`` (the
forward pass's own loops at float) at every CPU level this machine runs (AVX-512's
sixteen lanes, AVX2's eight, the baseline's four), as tests/test_activations.py
reaches the float64 forms. tanh, logistic and exp within 2 ulp of float32 of their
exact values (float64 references, far more accurate than float's ulp) on a dense sweep:
every 431st bit pattern of the 2^32 (10^7 inputs, every binade of both signs, NaNs and
subnormals among them), every float32 near the switches and thresholds, and the edges.
benchmarks/activation_accuracy_f32.py checks all 2^32 inputs (minutes a level).
The edges behave as in float64: saturation, the sign of zero, exp's overflow to +inf
and underflow to 0, NaN propagating; derivatives are the float64 side's formulas.
"""
import numpy as np
import pytest

from fastnet._kernels import _forward
from fastnet.network import ACTIVATIONS

LEVELS = {2: "x86-64-v4 (AVX-512)", 1: "x86-64-v3 (AVX2 + FMA)", 0: "baseline"}
ELEMENTWISE = ["linear", "proben1", "logistic", "tanh", "relu"]
MAX_ULP = 2
F32_MAX = float(np.finfo(np.float32).max)


def _apply(level, name, x, with_derivative=False):
    """f(x) (and f'(x)) in float32 at one CPU level; exp too. x 1-d: one row; 2-d: rows."""
    x = np.asarray(x, dtype=np.float32)
    if name == "exp":
        z = np.array(x.ravel())
        done = _forward.exp_at_level(level, z)
        d = None
    else:
        z = np.array(x.reshape(1, -1) if x.ndim == 1 else x)
        d = np.empty_like(z) if with_derivative else None
        done = _forward.activation_at_level(level, ACTIVATIONS[name], z, d)
    if not done:
        pytest.skip(f"this CPU or build has no {LEVELS[level]} level")
    z = z.reshape(x.shape)
    return (z, d.reshape(x.shape)) if with_derivative else z


def exact(name, x):
    """The function in float64 at float32 inputs."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = np.asarray(x, dtype=np.float32).astype(np.float64)
        if name == "tanh":
            return np.tanh(x)
        if name == "exp":
            return np.exp(x)
        e = np.exp(-np.abs(x))
        return np.where(x < 0, e, 1.0) / (1.0 + e)


def ulp_error(got, ref):
    """|got - ref| in ulp of float32 at ref (a real number; inf where one is infinite)."""
    _, e = np.frexp(np.abs(ref))
    ulp = np.ldexp(1.0, np.maximum(np.where(ref == 0, -125, e) - 24, -149))
    with np.errstate(invalid="ignore"):
        return np.abs(got.astype(np.float64) - ref) / ulp


def edges():
    f = np.float32
    tiny = np.array([1e-45, 1e-40, 1.1754942e-38, 1.1754944e-38, 1e-30, 1e-8, 2.4e-4], f)
    special = np.array([0.0, 0.55, np.nextafter(f(0.55), f(0)), np.nextafter(f(0.55), f(1)), 1.0, 9.0,
                        9.01, 9.02, 10.0, 16.6, 16.7, 17.4, 20.0, 87.3, 88.72, 88.7228, 88.72284,
                        88.7229, 89.0, 103.9, 103.97, 103.98, 104.0, 200.0, 1e30, F32_MAX, np.inf], f)
    both = np.concatenate([tiny, special])
    return np.concatenate([both, -both, [f(-0.0), f(np.nan)]]).astype(f)


def sweep():
    """Every 431st bit pattern, every float32 near the switches, and the edges."""
    patterns = np.arange(0, 1 << 32, 431, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = []
    for c in (0.55, 9.0, 16.6, 88.7228, 103.97, 0.3466, 1.0):        # a few thousand floats each side
        b = int(np.float32(c).view(np.uint32))
        around = np.arange(b - 3000, b + 3000, dtype=np.uint32).view(np.float32)
        near += [around, -around]
    return np.concatenate([patterns, *near, edges()])


X = None


def _x():
    global X
    if X is None:
        X = sweep()
    return X


@pytest.mark.parametrize("level", sorted(LEVELS, reverse=True))
@pytest.mark.parametrize("name", ["tanh", "logistic", "exp"])
def test_within_2_ulp_of_the_exact_value(level, name):
    x = _x()
    got = _apply(level, name, x)
    ref = exact(name, x)
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(got), nan)
    got, ref, x = got[~nan], ref[~nan], x[~nan]
    # beyond float's range (exp): +inf exactly where the exact value rounds to it
    big = ref >= F32_MAX + 2.0**103
    assert np.array_equal(np.isinf(got), big)
    err = ulp_error(got[~big], ref[~big])
    worst = int(np.argmax(err))
    assert err[worst] <= MAX_ULP, f"{err[worst]} ulp at x = {x[~big][worst]!r}"


@pytest.mark.parametrize("level", sorted(LEVELS, reverse=True))
def test_edges_as_in_float64(level):
    f = np.float32
    x = edges()
    t, lg, ex = (_apply(level, name, x) for name in ("tanh", "logistic", "exp"))
    fin = ~np.isnan(x)
    # tanh: odd (the sign of zero too), +-1 exactly from 9.02 on (where float rounds it
    # to 1), subnormals and tiny values unchanged
    assert np.array_equal(np.signbit(t[fin]), np.signbit(x[fin]))
    assert np.array_equal(t[np.abs(x) >= 9.02], np.sign(x[np.abs(x) >= 9.02]))
    small = np.abs(x) < 1e-8
    assert np.array_equal(t[small].view(np.uint32), x[small].view(np.uint32))
    # logistic: 1 above 17.4 and at +inf, 0 below -103.98 and at -inf, 0.5 at +-0
    assert np.all(lg[x >= 17.4] == 1) and np.all(lg[x <= -103.98] == 0)
    assert np.all(lg[x == 0] == 0.5) and lg[x == np.inf] == 1 and lg[x == -np.inf] == 0
    assert np.all((lg[fin] >= 0) & (lg[fin] <= 1))
    # exp: +inf from 88.72284 on (exp's overflow), 0 below -103.98, 1 at +-0, subnormal between
    assert np.all(np.isposinf(ex[x >= f(88.72284)])) and np.all(np.isfinite(ex[fin & (x <= f(88.7228))]))
    assert np.all(ex[x <= -103.98] == 0) and np.all(ex[x == 0] == 1) and ex[x == -np.inf] == 0
    assert 0 < ex[x == f(-103.9)][0] < np.finfo(f).tiny
    assert np.isnan(t[-1]) and np.isnan(lg[-1]) and np.isnan(ex[-1])


@pytest.mark.parametrize("level", sorted(LEVELS, reverse=True))
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_nan_propagates_and_infinities(level, name):
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    y, d = _apply(level, name, x, with_derivative=True)
    assert np.isnan(y[:2]).all()
    expected = {"linear": [np.inf, -np.inf, 0.0, -0.0], "proben1": [np.nan, np.nan, 0.0, -0.0],
                "logistic": [1.0, 0.0, 0.5, 0.5], "tanh": [1.0, -1.0, 0.0, -0.0],
                "relu": [np.inf, 0.0, 0.0, -0.0]}[name]
    np.testing.assert_array_equal(y[2:], np.array(expected, np.float32))
    if name in ("tanh", "linear", "relu", "proben1"):
        assert np.signbit(y[5]) and not np.signbit(y[4])


@pytest.mark.parametrize("level", sorted(LEVELS, reverse=True))
@pytest.mark.parametrize("name", ELEMENTWISE)
def test_derivatives_are_the_formulas_of_the_values(level, name):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 3, 1001), [0.0, -0.0, 1e-40, 50.0, -50.0]]).astype(np.float32)
    y, d = _apply(level, name, x, with_derivative=True)
    one = np.float32(1)
    if name == "proben1":
        q = one / (one + np.abs(x))
        np.testing.assert_array_equal(y, x * q)
        np.testing.assert_array_equal(d, q * q)
        np.testing.assert_array_equal(_apply(level, name, x), x / (one + np.abs(x)))
    elif name == "logistic":
        np.testing.assert_array_equal(d, y * (one - y))
    elif name == "tanh":
        # (1 - y^2 may run as one fused multiply-add: within one rounding of 1)
        np.testing.assert_allclose(d, one - y * y, rtol=0, atol=1.2e-7)
    elif name == "relu":
        np.testing.assert_array_equal(y, np.where(x < 0, np.float32(0), x))
        np.testing.assert_array_equal(d, (x > 0).astype(np.float32))
    else:
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(d, np.ones_like(x))
    assert y.dtype == d.dtype == np.float32
    if name != "proben1":
        assert np.array_equal(_apply(level, name, x).view(np.uint32), y.view(np.uint32))


@pytest.mark.parametrize("level", sorted(LEVELS, reverse=True))
@pytest.mark.parametrize("name", ["logistic", "tanh", "exp"])
def test_every_width_and_place_gives_the_same_bits(level, name):
    # Rows run sixteen (AVX-512), eight or four values at a time, a padded vector
    # or the one-lane form over the tail: a value's result must not depend on its place.
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(0, 2, 60), [0.3, 0.549, 0.551, 1e-45, -40.0]]).astype(np.float32)
    full = _apply(level, name, x)
    for n in range(1, 35):
        for start in (0, 3, 5, 16):
            part = _apply(level, name, x[start:start + n])
            assert np.array_equal(part.view(np.uint32), full[start:start + n].view(np.uint32)), (n, start)


@pytest.mark.parametrize("level", sorted(LEVELS, reverse=True))
@pytest.mark.parametrize("name", ["tanh", "logistic", "relu", "linear"])
@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 8, 15])
@pytest.mark.parametrize("rows", [37, 150])
def test_narrow_layers_give_each_value_the_bits_of_a_wide_row(level, name, width, rows):
    # Rows narrower than a vector run across the rows (tanh and logistic packed into a
    # buffer 64 rows at a time: 150 rows cross two of its boundaries): each value's
    # result and derivative must be the ones it gets alone.
    rng = np.random.default_rng(width)
    Z = rng.normal(0, 3, (rows, width)).astype(np.float32)
    y, d = _apply(level, name, Z, with_derivative=True)
    for i in range(len(Z)):
        yi, di = _apply(level, name, Z[i], with_derivative=True)
        assert np.array_equal(y[i].view(np.uint32), yi.view(np.uint32))
        assert np.array_equal(d[i].view(np.uint32), di.view(np.uint32))


@pytest.mark.parametrize("name", ["tanh", "logistic", "exp"])
def test_float32_agrees_with_float64_within_float32s_accuracy(name):
    # The same template at both value types: float64's result rounded to float32 and
    # float32's own lie within 2 ulp of float32 of each other (+ the rounding).
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0, 4, 100_000), rng.uniform(-100, 88, 100_000)]).astype(np.float32)
    x64 = x.astype(np.float64)
    if name == "exp":
        ref = np.array(x64)
        _forward.exp_at_level(-1, ref)
    else:
        ref = x64.reshape(1, -1).copy()
        _forward.activation_at_level(-1, ACTIVATIONS[name], ref, None)
        ref = ref.ravel()
    assert np.max(ulp_error(_apply(-1, name, x), ref)) <= MAX_ULP + 0.5


def test_the_entry_refuses_bad_arguments():
    z = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="`code`"):
        _forward.activation_at_level(-1, ACTIVATIONS["softmax"], z)
    with pytest.raises(ValueError, match="`D`"):
        _forward.activation_at_level(-1, ACTIVATIONS["tanh"], z, np.zeros((3, 2), np.float32))
    with pytest.raises(TypeError, match="`D`"):
        _forward.activation_at_level(-1, ACTIVATIONS["tanh"], z, np.zeros((2, 3)))   # float64 D
    with pytest.raises(TypeError, match="`z`"):
        _forward.exp_at_level(-1, np.zeros(3, np.int32))
