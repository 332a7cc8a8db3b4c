"""Generated benchmark tasks (Hamey 1992; Lawrence et al. 1997): XOR, encoder, teacher, Mackey-Glass."""

from __future__ import annotations

import math
import numbers
from types import MappingProxyType

import numpy as np

from fastnet._validation import check_int, check_positive
from fastnet.datasets._dataset import Dataset, Split
from fastnet.datasets._registry import Architecture, _count_connections

__all__ = ["make_xor", "make_encoder", "make_teacher", "make_mackey_glass",
           "TEACHER_BIAS_RANGE", "MAX_ENCODER"]

#: Most patterns of an encoder task (`make_encoder`'s n): its inputs and targets are
#: n x n identity matrices, 8 MiB each at 1024 (100,000 asked for 2 x 74.5 GiB).
MAX_ENCODER = 1024
#: Teacher biases are drawn from U(-0.01, 0.01) (Lawrence et al. 1997, section 3.4).
TEACHER_BIAS_RANGE = 0.01


def _split(X, Y) -> Split:
    return Split(np.ascontiguousarray(X, dtype=np.float64),
                 np.ascontiguousarray(Y, dtype=np.float64))


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.flags.writeable = False
    return a


def make_xor() -> Dataset:
    """The 2-2-1 XOR task: four patterns, training set only.

    Returns
    -------
    Dataset
        ``train`` holds inputs ``[[0, 0], [0, 1], [1, 0], [1, 1]]`` with targets
        ``[[0], [1], [1], [0]]``; ``val`` and ``test`` are ``None`` (the task is
        judged on its training set, e.g. by Hamey's threshold correctness).
        ``architecture`` is the 2-2-1 net without shortcuts (9 connections).

    Examples
    --------
    >>> ds = make_xor()
    >>> ds.train.Y.ravel().tolist(), ds.val is None, ds.architecture.connections
    ([0.0, 1.0, 1.0, 0.0], True, 9)
    """
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float64)
    Y = np.array([[0], [1], [1], [0]], dtype=np.float64)
    return Dataset(
        name="xor", kind="classification", n_in=2, n_out=1, train=_split(X, Y),
        val=None, test=None,
        architecture=Architecture(2, (2,), 1, "s", False, _count_connections(2, (2,), 1, False)),
        params=MappingProxyType({}),
    )


def make_encoder(n: int = 10, m: int = 5) -> Dataset:
    """The n-m-n encoder task: n one-hot patterns to be reproduced at the outputs.

    Parameters
    ----------
    n : int, default=10
        Number of inputs, outputs and patterns, from 2 to ``MAX_ENCODER`` (1024).
    m : int, default=5
        Hidden units of the task's network (>= 1); it does not change the data.

    Returns
    -------
    Dataset
        ``train`` has ``X = Y = identity(n)``; ``val`` and ``test`` are ``None``.
        ``architecture`` is the n-m-n net without shortcuts, sigmoid outputs.

    Raises
    ------
    TypeError
        If `n` or `m` is not an integer.
    ValueError
        If `n` < 2 or `n` > ``MAX_ENCODER``, or `m` < 1.

    Examples
    --------
    >>> ds = make_encoder(4, 2)
    >>> ds.name, ds.train.X.shape, bool((ds.train.X == ds.train.Y).all())
    ('encoder-4-2-4', (4, 4), True)
    """
    n = check_int(n, "n", minimum=2, maximum=MAX_ENCODER)
    m = check_int(m, "m", minimum=1)
    eye = np.eye(n, dtype=np.float64)
    return Dataset(
        name=f"encoder-{n}-{m}-{n}", kind="classification", n_in=n, n_out=n,
        train=_split(eye, eye.copy()), val=None, test=None,
        architecture=Architecture(n, (m,), n, "s", False, _count_connections(n, (m,), n, False)),
        params=MappingProxyType({"n": n, "m": m}),
    )


def make_teacher(K: float = 1.0, n_train: int = 1000, n_val: int = 0, n_test: int = 5000,
                 *, n_in: int = 5, n_hidden: int = 5, seed=0,
                 standardize: bool = False) -> Dataset:
    """Lawrence et al.'s artificial task: data labelled by a random 5-5-1 teacher net.

    Parameters
    ----------
    K : float, default=1.0
        Teacher weights (biases excluded) are drawn from U(-K, K); larger `K`
        gives a more complex target function. Lawrence et al. use K = 1, 5, 10, 15.
    n_train : int, default=1000
        Training examples (>= 1); Lawrence et al. use 1000.
    n_val : int, default=0
        Validation examples (>= 0); 0 means ``val`` is ``None``, as in the paper.
    n_test : int, default=5000
        Test examples (>= 0); 0 means ``test`` is ``None``. The paper uses 5000.
    n_in, n_hidden : int, default=5
        Teacher inputs and hidden units (the paper's 5 and 5); one output.
    seed : int, numpy.random.Generator or None, default=0
        Passed to `numpy.random.default_rng`. The same integer gives identical
        arrays; ``None`` draws fresh entropy.
    standardize : bool, default=False
        If True the inputs of every set are standardised by the training set's
        mean and standard deviation (:func:`fastnet.datasets.standardize`), as
        Lawrence et al. normalise all inputs; the targets stay the teacher's
        outputs of the raw inputs.

    Returns
    -------
    Dataset
        ``kind="approximation"``; ``architecture`` the teacher (no shortcuts,
        linear output); ``params`` holds ``K``, ``seed``, the sizes, the
        activations and the teacher's read-only weights ``W_hidden`` (n_in,
        n_hidden), ``b_hidden`` (n_hidden,), ``W_out`` (n_hidden, 1), ``b_out`` (1,).

    Raises
    ------
    TypeError, ValueError
        For invalid `K`, sizes or counts.

    Notes
    -----
    The teacher computes ``Y = tanh(X @ W_hidden + b_hidden) @ W_out + b_out``.
    The paper states neither activation; tanh hidden units (an odd sigmoid, which
    suits zero-mean inputs) and a linear output are our choice. Inputs are
    independent N(0, 1) (zero mean, unit variance, as in the paper); targets are
    not rescaled (Lawrence et al. report the scale-free NMSE).

    Draw order, part of the reproducibility contract: ``W_hidden``, ``W_out``,
    ``b_hidden``, ``b_out``, then training, validation and test inputs.

    References
    ----------
    S. Lawrence, A. D. Back, A. C. Tsoi, C. L. Giles, "On the distribution of
    performance from multiple neural network trials", IEEE Trans. Neural
    Networks 8(6), 1997, section 3.4.

    Examples
    --------
    >>> ds = make_teacher(K=5, n_train=100, n_test=50, seed=1)
    >>> ds.name, ds.train.X.shape, ds.test.Y.shape, ds.val is None
    ('teacher-K5', (100, 5), (50, 1), True)
    """
    K = check_positive(K, "K")
    n_train = check_int(n_train, "n_train", minimum=1)
    n_val = check_int(n_val, "n_val", minimum=0)
    n_test = check_int(n_test, "n_test", minimum=0)
    n_in = check_int(n_in, "n_in", minimum=1)
    n_hidden = check_int(n_hidden, "n_hidden", minimum=1)
    rng = np.random.default_rng(seed)
    W_hidden = rng.uniform(-K, K, size=(n_in, n_hidden))
    W_out = rng.uniform(-K, K, size=(n_hidden, 1))
    b_hidden = rng.uniform(-TEACHER_BIAS_RANGE, TEACHER_BIAS_RANGE, size=n_hidden)
    b_out = rng.uniform(-TEACHER_BIAS_RANGE, TEACHER_BIAS_RANGE, size=1)

    def sample(n):
        if n == 0:
            return None
        X = rng.standard_normal(size=(n, n_in))
        return _split(X, np.tanh(X @ W_hidden + b_hidden) @ W_out + b_out)

    train, valid, test = sample(n_train), sample(n_val), sample(n_test)
    if _check_flag(standardize, "standardize"):
        train, valid, test = _standardized(train, valid, test)
    params = {
        "K": K, "seed": seed, "standardize": bool(standardize), "n_train": n_train, "n_val": n_val, "n_test": n_test,
        "hidden_activation": "tanh", "output_activation": "linear",
        "W_hidden": _readonly(W_hidden), "b_hidden": _readonly(b_hidden),
        "W_out": _readonly(W_out), "b_out": _readonly(b_out),
    }
    return Dataset(
        name=f"teacher-K{K:g}", kind="approximation", n_in=n_in, n_out=1,
        train=train, val=valid, test=test,
        architecture=Architecture(n_in, (n_hidden,), 1, "l", False,
                                  _count_connections(n_in, (n_hidden,), 1, False)),
        params=MappingProxyType(params),
    )


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be True or False, got {value!r}.")
    return bool(value)


def _standardized(*parts):
    """The Splits ``parts`` (None kept) with inputs standardised by the first's."""
    from fastnet.datasets._preprocess import standardize
    return tuple(None if p is None else _split(p.X, p.Y) for p in standardize(*parts))


def _is_multiple(x: float, step: float) -> bool:
    k = round(x / step)
    return k >= 1 and abs(k * step - x) <= 1e-9 * max(1.0, abs(x))


def _mackey_glass_series(n_samples, x0, tau, a, b, c, sample_step, dt, transient):
    """Integrate the Mackey-Glass equation and return `n_samples` samples.

    Classical RK4 with step `dt` and a constant history ``x(t) = x0`` for t <= 0.
    The delayed value at a half step comes from cubic Hermite interpolation of
    the stored values and derivatives at the two ends of that step, which keeps
    the scheme fourth order; it never interpolates across t = 0, where the
    derivative jumps from 0 (history) to ``g(x0) - b x0``. Samples are taken at
    ``t = transient + k * sample_step``.
    """
    m = round(tau / dt)                # delay in steps
    s = round(sample_step / dt)        # steps between samples
    n_transient = round(transient / dt)
    n_steps = n_transient + (n_samples - 1) * s
    off = m                            # x[off] is t = 0; x[0..off] is the history
    x = [x0] * (off + 1) + [0.0] * n_steps
    dx = [0.0] * (off + 1 + n_steps)   # dx[n] = x'(t_n) (right derivative at t = 0)
    h, h2, h8 = dt, dt / 2.0, dt / 8.0

    for n in range(off, off + n_steps):
        j = n - m                      # x[j] = x(t_n - tau)
        xd0, xd1 = x[j], x[j + 1]
        xn = x[n]
        g0 = a * xd0 / (1.0 + xd0 ** c)
        k1 = g0 - b * xn
        dx[n] = k1
        d1 = 0.0 if j + 1 == off else dx[j + 1]   # left derivative at the step's end
        xdh = 0.5 * (xd0 + xd1) + h8 * (dx[j] - d1)
        gh = a * xdh / (1.0 + xdh ** c)
        g1 = a * xd1 / (1.0 + xd1 ** c)
        k2 = gh - b * (xn + h2 * k1)
        k3 = gh - b * (xn + h2 * k2)
        k4 = g1 - b * (xn + h * k3)
        x[n + 1] = xn + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.array(x[off + n_transient::s], dtype=np.float64)


def make_mackey_glass(n_train: int = 1000, n_val: int = 0, n_test: int = 1000, *,
                      seed=0, x0: float | None = None, tau: float = 30.0, a: float = 0.2,
                      b: float = 0.1, c: float = 10.0, sample_step: float = 6.0,
                      window: int = 6, dt: float = 0.1, transient: float = 1000.0,
                      standardize: bool = False) -> Dataset:
    """One-step-ahead prediction of the Mackey-Glass chaotic time series.

    Parameters
    ----------
    n_train : int, default=1000
        Training examples (>= 1); Lawrence et al. use 1000.
    n_val : int, default=0
        Validation examples (>= 0); 0 means ``val`` is ``None``.
    n_test : int, default=1000
        Test examples (>= 0); 0 means ``test`` is ``None``. The paper uses 1000.
    seed : int, numpy.random.Generator or None, default=0
        Draws the constant initial history ``x0`` from U(0.5, 1.5) when `x0` is
        not given; the same seed gives identical arrays.
    x0 : float, optional
        Constant history ``x(t) = x0`` for t <= 0 (> 0 and not the fixed point 1).
        If given, `seed` is not used.
    tau : float, default=30.0
        Delay; tau > 16.8 gives a chaotic attractor.
    a, b, c : float, default 0.2, 0.1, 10
        Constants of the equation.
    sample_step : float, default=6.0
        Time between samples of the series (the paper's Delta T = 6).
    window : int, default=6
        Number of consecutive samples given as inputs.
    dt : float, default=0.1
        Integration step; `tau` and `sample_step` must be multiples of it.
    transient : float, default=1000.0
        Time integrated and discarded before the first sample (rounded to whole
        steps), so the series lies on the attractor.
    standardize : bool, default=False
        If True the inputs of every set are standardised by the training set's
        mean and standard deviation (:func:`fastnet.datasets.standardize`), as
        Lawrence et al. normalise all inputs; the targets stay the raw series.

    Returns
    -------
    Dataset
        ``kind="approximation"``, ``n_in=window``, ``n_out=1``. With samples
        ``s_k = x(transient + k * sample_step)``, example i has inputs
        ``s_i .. s_{i+window-1}`` and target ``s_{i+window}``. Training examples
        come first in time, then validation, then test (consecutive windows, so
        neighbouring sets share samples at their boundary). Values are the raw
        series, about 0.2 to 1.4, not normalised. ``params["series"]`` holds all
        samples used (read-only); ``architecture`` is Lawrence et al.'s
        window-5-1 MLP (no shortcuts, linear output).

    Raises
    ------
    TypeError, ValueError
        For invalid sizes or constants, or a `dt` that does not divide `tau`
        (at least 2 steps) and `sample_step`.

    Notes
    -----
    The equation is

    .. math:: \\frac{dx}{dt} = \\frac{a\\,x(t-\\tau)}{1 + x(t-\\tau)^c} - b\\,x(t).

    It is integrated by classical fourth-order Runge-Kutta with step `dt` on a
    history buffer of ``tau / dt`` steps, starting from the constant history
    ``x(t) = x0`` for t <= 0. The delayed value at half steps is the cubic Hermite
    interpolation of the stored values and derivatives at the ends of the step,
    which keeps the scheme fourth order (halving `dt` divides the error by about
    16). The pure-Python loop takes well under 0.1 s for the defaults.

    References
    ----------
    M. C. Mackey, L. Glass, "Oscillation and chaos in physiological control
    systems", Science 197, 1977. S. Lawrence, A. D. Back, A. C. Tsoi,
    C. L. Giles, "On the distribution of performance from multiple neural
    network trials", IEEE Trans. Neural Networks 8(6), 1997, section 3.3.

    Examples
    --------
    >>> ds = make_mackey_glass(n_train=200, n_test=100, seed=3)
    >>> ds.train.X.shape, ds.test.Y.shape
    ((200, 6), (100, 1))
    >>> bool(ds.train.X[1:, -1].tolist() == ds.train.Y[:-1, 0].tolist())
    True
    """
    n_train = check_int(n_train, "n_train", minimum=1)
    n_val = check_int(n_val, "n_val", minimum=0)
    n_test = check_int(n_test, "n_test", minimum=0)
    window = check_int(window, "window", minimum=1)
    tau = check_positive(tau, "tau")
    a = check_positive(a, "a")
    b = check_positive(b, "b")
    c = check_positive(c, "c")
    sample_step = check_positive(sample_step, "sample_step")
    dt = check_positive(dt, "dt")
    if isinstance(transient, bool) or not isinstance(transient, numbers.Real):
        raise TypeError(f"`transient` must be a real number, got {type(transient).__name__}.")
    transient = float(transient)
    if not (math.isfinite(transient) and transient >= 0):
        raise ValueError(f"`transient` must be >= 0 and finite, got {transient}.")
    if not _is_multiple(tau, dt) or round(tau / dt) < 2:
        raise ValueError(f"`dt` must divide `tau` into at least 2 steps, got dt={dt}, tau={tau}.")
    if not _is_multiple(sample_step, dt):
        raise ValueError(f"`dt` must divide `sample_step`, got dt={dt}, sample_step={sample_step}.")
    if x0 is None:
        x0 = float(np.random.default_rng(seed).uniform(0.5, 1.5))
    else:
        x0 = check_positive(x0, "x0")
        if x0 == 1.0:
            raise ValueError("`x0` must not be 1.0, the equation's fixed point (the series "
                             "would stay constant).")

    n_total = n_train + n_val + n_test
    series = _mackey_glass_series(n_total + window, x0, tau, a, b, c, sample_step, dt,
                                  transient)
    # Sliding windows: row i = s[i : i + window], target s[i + window].
    idx = np.arange(n_total)[:, None] + np.arange(window)[None, :]
    X_all = series[idx]
    T_all = series[window:window + n_total, None]
    bounds = np.cumsum([0, n_train, n_val, n_test])
    parts = [None if lo == hi else _split(X_all[lo:hi], T_all[lo:hi])
             for lo, hi in zip(bounds[:-1], bounds[1:])]
    if _check_flag(standardize, "standardize"):
        parts = _standardized(*parts)
    params = {"seed": seed, "standardize": bool(standardize), "x0": x0, "tau": tau, "a": a, "b": b, "c": c,
              "sample_step": sample_step, "window": window, "dt": dt,
              "transient": transient, "n_train": n_train, "n_val": n_val,
              "n_test": n_test, "series": _readonly(series)}
    return Dataset(
        name="mackey-glass", kind="approximation", n_in=window, n_out=1,
        train=parts[0], val=parts[1], test=parts[2],
        architecture=Architecture(window, (5,), 1, "l", False,
                                  _count_connections(window, (5,), 1, False)),
        params=MappingProxyType(params),
    )
