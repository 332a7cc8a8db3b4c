"""Private helpers shared by the statistics modules: validation and result display."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import special

from fastnet._validation import refuse_complex

__all__ = []  # private module


def _as_floats(x, name, what, *, copy=False):
    """`x` as a float64 array, or TypeError/ValueError naming `name` (`what` it must be)."""
    refuse_complex(x, name)
    try:
        return np.array(x, dtype=np.float64, copy=copy or None)
    except OverflowError:  # a Python int beyond float range
        raise ValueError(f"`{name}` must hold finite numbers, got an integer beyond "
                         "float64's range.") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be {what}, got {type(x).__name__}.") from exc


def _as_vector(x, name):
    """`x` as a 1-D float64 array (a copy), or TypeError/ValueError naming `name`."""
    arr = _as_floats(x, name, "a sequence of numbers", copy=True)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}.")
    return arr


def _check_sample(x, name, *, min_size=1, allow_empty=False):
    """Return `x` as a finite 1-D float64 array, or raise ValueError/TypeError.

    Parameters
    ----------
    x : array_like
        The values to check.
    name : str
        Argument name used in messages (shown in backticks).
    min_size : int, default=1
        Minimum number of values.
    allow_empty : bool, default=False
        Accept an empty array even if ``min_size > 0``.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    arr = _as_vector(x, name)
    if arr.size == 0 and allow_empty:
        return arr
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if arr.size < min_size:
        raise ValueError(f"`{name}` needs at least {min_size} values, got {arr.size}.")
    return arr


def _q_ks(x):
    r"""Kolmogorov's survival function :math:`Q_{KS}(x)`.

    .. math:: Q_{KS}(x) = 2 \sum_{j=1}^{\infty} (-1)^{j-1} e^{-2 j^2 x^2},

    evaluated with :func:`scipy.special.kolmogorov` (which is exactly this function).
    """
    return special.kolmogorov(x)


def _stephens_pvalue(d, n):
    r"""Approximate KS p-value :math:`Q_{KS}((\sqrt{N} + 0.12 + 0.11/\sqrt{N}) D)`."""
    rn = np.sqrt(n)
    return float(_q_ks((rn + 0.12 + 0.11 / rn) * d))


def _fmt(value):
    """Short display of one field value in a result repr."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            body = ", ".join(_fmt(v) for v in value.ravel())
            return f"array([{body}])" if value.ndim == 1 else f"array(shape={value.shape})"
        return f"array(shape={value.shape})"
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, (np.bool_,)):
        return str(bool(value))
    return repr(value)


try:
    from typing import dataclass_transform
except ImportError:  # Python 3.10: the marker is only for type checkers
    def dataclass_transform(**_kwargs):
        return lambda cls: cls


@dataclass_transform(frozen_default=True)
class _FrozenResult:
    """Base of the statistics' results: every subclass is a frozen dataclass of its
    annotated fields, with a SciPy-style readable repr.

    Long arrays are shown by their shape only; fields listed in ``_repr_skip`` are omitted.
    """

    _repr_skip: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(frozen=True, repr=False)(cls)

    def __repr__(self):
        parts = []
        for f in dataclasses.fields(self):
            if f.name in self._repr_skip or not f.repr:
                continue
            parts.append(f"{f.name}={_fmt(getattr(self, f.name))}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _format_percent(p):
    """A p-value in percent as Proben1 prints it (two significant digits)."""
    pct = 100.0 * p
    if pct < 0.01:
        return "<0.01"
    return f"{pct:.2g}"
