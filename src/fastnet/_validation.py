"""Input checks shared by the public entry points (Python decides, Cython computes)."""
import math
import numbers
import os
import sys
import warnings

import numpy as np


def _huge(value):
    """A huge int for a message (str() of one refuses beyond 4300 digits)."""
    return f"an integer of about {int(abs(int(value)).bit_length() * 0.30103)} digits"


def shown_int(value):
    """An integer for a message: its digits, or their count when there are too many."""
    return str(value) if -10**30 < value < 10**30 else _huge(value)


def check_int(value, name, *, minimum=None, maximum=None):
    """Return ``value`` as an int, or raise TypeError/ValueError naming ``name``."""
    if type(value) is not int and (isinstance(value, (bool, np.bool_))
                                   or not isinstance(value, numbers.Integral)):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__} {value!r}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {shown_int(value)}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be <= {maximum}, got {shown_int(value)}.")
    return value


def check_count(value, name, maximum, minimum=1):
    """``value`` as an int in [minimum, maximum], else an error naming ``name``
    (a count such as runs or worker processes; huge values are described by
    their size, not printed)."""
    value = check_int(value, name)
    if not minimum <= value <= maximum:
        raise ValueError(f"`{name}` must be from {minimum} to {maximum}, got {shown_int(value)}.")
    return value


def check_float(value, name, *, low=None, high=None, low_open=False, high_open=False):
    """Return ``value`` as a finite float in the given range, or raise."""
    if type(value) is not float and (isinstance(value, (bool, np.bool_))
                                     or not isinstance(value, numbers.Real)):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__} {value!r}.")
    try:
        value = float(value)
    except OverflowError:  # an int beyond float's range
        raise ValueError(f"`{name}` must be finite, got {_huge(value)}.") from None
    if not math.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {value}.")
    bad_low = low is not None and (value <= low if low_open else value < low)
    bad_high = high is not None and (value >= high if high_open else value > high)
    if bad_low or bad_high:
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        interval = ("(" if low_open or low is None else "[") + f"{lo}, {hi}" + (
            ")" if high_open or high is None else "]")
        raise ValueError(f"`{name}` must be in {interval}, got {value}.")
    return value


def check_positive(value, name):
    """Return ``value`` as a finite float > 0, or raise naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__} {value!r}.")
    try:
        value = float(value)
    except OverflowError:
        value = float("inf")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"`{name}` must be positive and finite, got {value}.")
    return value


def check_probability(value, name, *, open_interval=True):
    """Return a level such as ``alpha`` as a float in (0, 1) (or [0, 1]), or raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__} {value!r}.")
    interval = "(0, 1)" if open_interval else "[0, 1]"
    try:
        value = float(value)
    except OverflowError:  # an int beyond float range
        raise ValueError(f"`{name}` must be in {interval}, got {_huge(value)}.") from None
    ok = 0.0 < value < 1.0 if open_interval else 0.0 <= value <= 1.0
    if not ok:
        raise ValueError(f"`{name}` must be in {interval}, got {value!r}.")
    return value


def check_bool(value, name):
    """``value`` as a bool; a TypeError naming ``name`` unless it is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be True or False, got {value!r}.")
    return bool(value)


def check_choice(value, name, choices):
    """Return ``value`` if it is one of ``choices`` (strings), else raise."""
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be a string, one of {sorted(choices)}, got {value!r}.")
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {sorted(choices)}, got {value!r}.")
    return value


def refuse_complex(x, name):
    """Raise TypeError naming ``name`` if ``x`` holds complex numbers.

    NumPy casts a complex array (or a list holding one) to float64 with only a
    ComplexWarning, dropping the imaginary parts; a bare complex number already
    fails to convert. Anything that does not convert is left to the caller.
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None and isinstance(x, (list, tuple)):
        try:
            dtype = np.asarray(x).dtype
        except (TypeError, ValueError):      # ragged and the like: the caller says what
            return
    if getattr(dtype, "kind", None) == "c":
        raise TypeError(f"`{name}` must be real, got dtype {dtype}.")


#: Floating-point types narrower than a network's: data of these types is widened with a warning.
_NARROW_FLOATS = {np.dtype(np.float64): (np.dtype(np.float16), np.dtype(np.float32)),
                  np.dtype(np.float32): (np.dtype(np.float16),)}
_FLOAT64 = np.dtype(np.float64)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _user_stacklevel():
    """The ``stacklevel`` of a warning that points at the first frame outside fastnet
    (the user's line, which Python's default filter shows once)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def check_matrix(X, name, *, n_cols=None, what="columns", allow_empty=False, dtype=_FLOAT64):
    """Coerce ``X`` to a C-contiguous 2-D array of finite numbers of ``dtype`` (a
    network's: float64 or float32).

    A 1-D array is not silently reshaped: the caller says what it meant. Data
    narrower than ``dtype`` (float32 for a float64 network) is widened with a
    UserWarning; wider data (float64 for a float32 network) is rounded silently:
    the network's dtype says the user chose float32.
    """
    if X is None:
        raise TypeError(f"`{name}` must be a 2-D array of numbers, got None.")
    try:
        arr = X if type(X) is np.ndarray else np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"`{name}` must be a 2-D array of numbers (rows of equal length), "
                         f"got a {type(X).__name__} that could not be converted to an array: "
                         f"{exc}") from None
    if arr.dtype != _FLOAT64:          # (float64, the usual case, is a real number type)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                       or arr.dtype == np.bool_):
            raise TypeError(f"`{name}` must hold numbers, got dtype {arr.dtype}.")
        refuse_complex(arr, name)
    if arr.ndim != 2:
        raise ValueError(
            f"`{name}` must be 2-D (n_patterns, n_{what}), got shape {arr.shape}"
            + (f" (use {name}.reshape(-1, 1) for a single {what[:-1]} or {name}.reshape(1, -1) "
               "for one pattern)." if arr.ndim == 1 else "."))
    if arr.shape[0] == 0 and not allow_empty:
        raise ValueError(f"`{name}` has no rows (shape {arr.shape}); at least one pattern is needed.")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise ValueError(f"`{name}` has {arr.shape[1]} {what} but the network has {n_cols}.")
    if arr.dtype != dtype and arr.dtype in _NARROW_FLOATS[dtype]:
        hint = (" or build the network with dtype='float32' to compute in float32"
                if arr.dtype == np.float32 else "")
        warnings.warn(f"`{name}` has dtype {arr.dtype}: the network computes in {dtype}, so it is "
                      f"converted to {dtype} (exactly, a copy of more memory); pass {dtype} data "
                      f"to avoid the copy{hint}.", UserWarning, stacklevel=_user_stacklevel())
    if arr.dtype != dtype and dtype != _FLOAT64 and arr.dtype.kind == "f":
        arr = _rounded(arr, dtype, name)
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if not np.logical_and.reduce(np.isfinite(arr), axis=None):     # (no Python wrapper)
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"`{name}` must be finite; found {arr[tuple(bad)]} at row {bad[0]}, column {bad[1]}.")
    return arr


def _rounded(arr, dtype, name):
    """Floating-point ``arr`` rounded to the narrower ``dtype`` (float32), refusing values
    beyond its range (which would round to inf) rather than warning of the overflow."""
    big = np.finfo(dtype).max
    with np.errstate(invalid="ignore"):
        beyond = np.isfinite(arr) & (np.abs(arr) > big)     # (inf and NaN: named as not finite)
    if beyond.any():
        bad = np.argwhere(beyond)[0]
        raise ValueError(f"`{name}` must lie within the {dtype} range of the network (magnitude "
                         f"at most {float(big):g}), got {arr[tuple(bad)]} at row {bad[0]}, "
                         f"column {bad[1]}.")
    return np.ascontiguousarray(arr, dtype=dtype)


def check_pair(X, Y, x_name, y_name, n_in, n_out, *, allow_empty=False, dtype=_FLOAT64):
    """Check a (patterns, targets) pair against a network's sizes; both of ``dtype``."""
    X = check_matrix(X, x_name, n_cols=n_in, what="inputs", allow_empty=allow_empty, dtype=dtype)
    Y = check_matrix(Y, y_name, n_cols=n_out, what="outputs", allow_empty=allow_empty,
                     dtype=dtype)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"`{x_name}` has {X.shape[0]} patterns but `{y_name}` has {Y.shape[0]}.")
    return X, Y


def check_seeds(seeds, n):
    """One seed per network (``seeds`` of train_rprop_many) as a list; None: n Nones."""
    if seeds is None:
        return [None] * n
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__"):
        raise TypeError(f"`seeds` must be a sequence with one seed per network or None, "
                        f"got {type(seeds).__name__}.")
    seeds = list(seeds)
    if len(seeds) != n:
        raise ValueError(f"`seeds` must hold one seed per network ({n}), got {len(seeds)}.")
    return seeds


def as_generator(seed, name="seed"):
    """Turn None, an int, a SeedSequence or a Generator into a numpy Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if type(seed) is int and seed >= 0:          # (the usual case, without the ABC check)
        return np.random.default_rng(seed)
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"`{name}` must be None, an int, a numpy SeedSequence or Generator, got {seed!r}.")
    if seed < 0:
        raise ValueError(f"`{name}` must be non-negative, got {seed}.")
    return np.random.default_rng(int(seed))


def import_pandas(feature):
    """pandas, imported on first use; an ImportError naming ``feature`` if it is missing."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"{feature} needs pandas: pip install pandas") from None
    return pandas
