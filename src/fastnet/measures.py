"""Error measures (Prechelt 1994; Lawrence et al. 1997; Hamey 1992 after Fahlman), on numpy arrays.

All functions take the network's outputs ``Y_pred`` and the targets ``Y``, in that
order, of shape (n_patterns, n_outputs) (1-D arrays are read as one output per
pattern). ``Y`` names targets throughout fastnet, as in ``train_rprop(net, X, Y)``.
"""
from __future__ import annotations

import time

import numpy as np

from fastnet._docstrings import fill
from fastnet._typing import ArrayLike
from fastnet._validation import check_float, refuse_complex

__all__ = [
    "sum_squared_error",
    "mean_squared_error",
    "squared_error_percentage",
    "classification_error",
    "nmse",
    "threshold_correct",
    "is_one_hot",
    "cpu_timer",
]


#: The Parameters and Returns, and the Raises, of the measures of one pair of arrays.
_PAIR = """
Parameters
----------
Y_pred, Y : array-like of shape (n_patterns, n_outputs)
    Network outputs and targets (a 1-D array is one output per pattern);
    real and finite.

Returns
-------
float
"""
_PAIR_RAISES = """
Raises
------
ValueError
    If the shapes differ, there are no patterns, or a value is not finite.
TypeError
    If a value is not a real number.
"""


def _pair(Y_pred, Y):
    refuse_complex(Y_pred, "Y_pred")
    refuse_complex(Y, "Y")
    Y_pred = np.asarray(Y_pred, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if Y_pred.ndim == 1:
        Y_pred = Y_pred[:, None]
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y_pred.ndim != 2 or Y.ndim != 2:
        raise ValueError(f"`Y_pred` and `Y` must be 2-D (n_patterns, n_outputs), got shapes "
                         f"{Y_pred.shape} and {Y.shape}.")
    if Y_pred.shape != Y.shape:
        raise ValueError(f"`Y_pred` has shape {Y_pred.shape} but `Y` has shape {Y.shape}.")
    if Y_pred.shape[0] == 0:
        raise ValueError("`Y_pred` and `Y` have no patterns.")
    if not (np.isfinite(Y_pred).all() and np.isfinite(Y).all()):
        raise ValueError("`Y_pred` and `Y` must be finite.")
    return Y_pred, Y


@fill(pair=_PAIR, pair_raises=_PAIR_RAISES)
def sum_squared_error(Y_pred: ArrayLike, Y: ArrayLike) -> float:
    """Summed squared error sum_p sum_i (o_pi - t_pi)**2 (no factor 1/2).

    {{pair}}

    {{pair_raises}}

    Examples
    --------
    >>> sum_squared_error([[0.5, 0.0]], [[1.0, 0.0]])
    0.25
    """
    Y_pred, Y = _pair(Y_pred, Y)
    return float(np.sum((Y_pred - Y) ** 2))


@fill(pair=_PAIR, pair_raises=_PAIR_RAISES)
def mean_squared_error(Y_pred: ArrayLike, Y: ArrayLike) -> float:
    """Mean over patterns and outputs of (o_pi - t_pi)**2.

    {{pair}}

    {{pair_raises}}

    Examples
    --------
    >>> mean_squared_error([[0.5, 0.0]], [[1.0, 0.0]])
    0.125
    """
    Y_pred, Y = _pair(Y_pred, Y)
    return float(np.mean((Y_pred - Y) ** 2))


def squared_error_percentage(Y_pred: ArrayLike, Y: ArrayLike, o_min: float = 0.0,
                             o_max: float = 1.0) -> float:
    r"""Proben1's squared error percentage.

    .. math:: E = 100 \frac{o_{max} - o_{min}}{N P} \sum_{p=1}^{P} \sum_{i=1}^{N} (o_{pi} - t_{pi})^2

    with N outputs and P patterns; o_min and o_max are the range of the target
    representation (0 and 1 for Proben1). It makes errors comparable across
    output counts and set sizes.

    Parameters
    ----------
    Y_pred, Y : array-like of shape (n_patterns, n_outputs)
    o_min, o_max : float, default 0.0 and 1.0 (o_min < o_max)

    Returns
    -------
    float

    References
    ----------
    Prechelt, L. (1994). Proben1 -- A set of neural network benchmark problems and
    benchmarking rules. Technical Report 21/94, Universität Karlsruhe, section 3.4.

    Examples
    --------
    >>> squared_error_percentage([[0.5, 0.0]], [[1.0, 0.0]])
    12.5
    """
    Y_pred, Y = _pair(Y_pred, Y)
    o_min = check_float(o_min, "o_min")
    o_max = check_float(o_max, "o_max")
    if not (o_max > o_min and np.isfinite(o_max - o_min)):
        raise ValueError(f"`o_max` - `o_min` must be positive and finite, got o_min={o_min}, "
                         f"o_max={o_max}.")
    return float(100.0 * (o_max - o_min) / Y.size * np.sum((Y_pred - Y) ** 2))


@fill(pair=_PAIR)
def classification_error(Y_pred: ArrayLike, Y: ArrayLike) -> float:
    """Percentage of patterns whose highest output is not the target class.

    Winner-takes-all: the output with the highest value names the class; the
    target class is the index of the highest target. Reported as an error (percent
    wrong), not an accuracy. Ties go to the first maximum (numpy.argmax).

    {{pair}}
        Percent of patterns wrong, 0 to 100.

    Raises
    ------
    ValueError
        As :func:`sum_squared_error`, and for fewer than 2 outputs.

    Examples
    --------
    >>> classification_error([[0.9, 0.2], [0.6, 0.7]], [[1, 0], [1, 0]])
    50.0
    """
    Y_pred, Y = _pair(Y_pred, Y)
    if Y_pred.shape[1] < 2:
        raise ValueError("classification error needs one output per class (at least 2 outputs), "
                         f"got {Y_pred.shape[1]}.")
    return _winner_takes_all_error(Y_pred, Y)


def _winner_takes_all_error(Y_pred, Y):
    # Unchecked core of classification_error, for arrays the caller has validated.
    wrong = np.count_nonzero(np.argmax(Y_pred, axis=1) != np.argmax(Y, axis=1))
    return float(100.0 * wrong / Y_pred.shape[0])


@fill(pair=_PAIR)
def nmse(Y_pred: ArrayLike, Y: ArrayLike) -> float:
    r"""Normalised mean squared error (Lawrence et al. 1997).

    .. math:: \mathrm{NMSE} = \frac{\sum (d - y)^2}{\sum (d - \bar d)^2}

    with d the targets, y the outputs, and means over all outputs and patterns.
    1.0 is the error of predicting the mean target.

    Lawrence et al.'s equation (10) divides the denominator alone by
    N_p N_o; read literally that multiplies this ratio by the number of
    values. The NMSE of Weigend & Gershenfeld (1993), which they cite, is the
    ratio above, and their tables' levels (0.0019 on Mackey-Glass) are of its
    size. Training results carry it as
    ``final_test.nmse`` (:class:`fastnet.SetErrors`).

    {{pair}}

    Raises
    ------
    ValueError
        As :func:`sum_squared_error`, and if the targets are constant (the
        denominator is zero).

    Examples
    --------
    >>> nmse([[1.0], [3.0]], [[0.0], [2.0]])   # (1 + 1) / ((0 - 1)^2 + (2 - 1)^2)
    1.0
    """
    Y_pred, Y = _pair(Y_pred, Y)
    denominator = np.sum((Y - Y.mean()) ** 2)
    if denominator == 0.0:
        raise ValueError("NMSE is undefined for constant targets (zero variance).")
    return float(np.sum((Y - Y_pred) ** 2) / denominator)


def threshold_correct(Y_pred: ArrayLike, Y: ArrayLike, r_c: float = 0.4,
                      analog: float | None = None) -> np.ndarray:
    """Which outputs are right by the Hamey/Fahlman threshold ("40-20-40") rule.

    A binary output (target 0 or 1) is right if it is < r_c for target 0 and
    > 1 - r_c for target 1. If ``analog`` is a tolerance r, outputs whose target
    is neither 0 nor 1 are right when within r of the target; with
    ``analog=None`` such targets are an error.

    Parameters
    ----------
    Y_pred, Y : array-like of shape (n_patterns, n_outputs)
    r_c : float in (0, 0.5], default 0.4
    analog : float > 0 or None

    Returns
    -------
    correct : ndarray of bool, shape (n_patterns, n_outputs)
        ``correct.all()`` says whether the network is correct (every output of
        every pattern right).

    Examples
    --------
    >>> threshold_correct([[0.7, 0.3]], [[1, 0]]).tolist()
    [[True, True]]
    >>> bool(threshold_correct([[0.5, 0.3]], [[1, 0]]).all())
    False
    """
    Y_pred, Y = _pair(Y_pred, Y)
    r_c = check_float(r_c, "r_c", low=0.0, high=0.5, low_open=True)
    binary = (Y == 0.0) | (Y == 1.0)
    return hamey_correct(Y_pred, Y, r_c, _check_analog(binary, analog), binary)


def hamey_correct(Y_pred, Y, r_c, analog, binary):
    """Hamey's rule on checked arrays, output by output: the one Python form of
    the success check (`threshold_correct` and the strip loop's ``Correct`` use
    it; the kernels' C form is ``correct`` in ``_kernels/_rules.h``, written once for
    one output, ``fn_correct_1``, and for vector lanes, ``fn_lanes_correct_gm``).

    ``Y_pred``, ``Y``: float64 arrays of one shape; ``r_c`` in (0, 0.5];
    ``analog``: the tolerance of targets other than 0 and 1, or None if every
    target is 0 or 1 (``binary``: the mask of those that are).
    """
    correct = np.where(Y == 1.0, Y_pred > 1.0 - r_c, Y_pred < r_c)
    if analog is not None:
        correct = np.where(binary, correct, np.abs(Y_pred - Y) <= analog)
    return correct


def _check_analog(binary, analog):
    """The `analog` tolerance to use given the mask of binary targets: None when
    every target is 0 or 1, else the checked tolerance (an error if none is given)."""
    if binary.all():
        return None
    if analog is None:
        raise ValueError("`Y` has targets other than 0 and 1; give an `analog` tolerance.")
    return check_float(analog, "analog", low=0.0, low_open=True)


def is_one_hot(Y: ArrayLike) -> bool:
    """True if every row of Y has exactly one 1 and zeros elsewhere (class coding).

    Parameters
    ----------
    Y : array-like
        Targets, one row per pattern.

    Returns
    -------
    bool
        False also for anything that is not a 2-D array of at least one row
        and two columns.

    Examples
    --------
    >>> is_one_hot([[0, 1], [1, 0]]), is_one_hot([[0.9, 0.1]])
    (True, False)
    """
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] < 2 or Y.shape[0] == 0:
        return False
    return bool(np.all((Y == 0) | (Y == 1)) and np.all(Y.sum(axis=1) == 1))


class cpu_timer:
    """Context manager measuring process CPU time (``time.process_time``) and wall time.

    Examples
    --------
    >>> with cpu_timer() as t:
    ...     _ = sum(range(1000))
    >>> t.cpu >= 0.0 and t.wall >= 0.0
    True
    """

    def __enter__(self):
        self._cpu0 = time.process_time()
        self._wall0 = time.perf_counter()
        self.cpu = self.wall = 0.0
        return self

    def __exit__(self, *exc):
        self.cpu = time.process_time() - self._cpu0
        self.wall = time.perf_counter() - self._wall0
        return False


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
