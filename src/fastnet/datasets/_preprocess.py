"""Standardisation of inputs by the training set (Lawrence et al. 1997)."""
from __future__ import annotations

import numpy as np

from fastnet.datasets._dataset import Split
from fastnet._validation import refuse_complex

__all__ = ["standardize"]


def _inputs(a, name):
    """``a`` as a 2-D float64 array of finite inputs."""
    refuse_complex(a, name)
    try:
        X = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be an array of numbers, a Split or None, got "
                        f"{type(a).__name__}.") from None
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (n_examples, n_in), got shape {X.shape}.")
    if not np.isfinite(X).all():
        raise ValueError(f"`{name}` must be finite, got NaN or infinite values.")
    return X


def _statistics(X):
    """Mean and standard deviation (ddof 0) of each column of ``X`` in units of a power of two.

    Returns ``exponent, mean, sd`` with ``mean * 2**exponent`` and ``sd * 2**exponent``
    the column's statistics. Each column is scaled by the power of two just above its
    largest magnitude before summing and squaring: multiplying by a power of two is
    exact, so ordinary columns get the bits of ``X.mean(axis=0)`` and
    ``X.std(axis=0)``, while neither the sums of a column near 1e300 overflow nor the
    squares of a column of spread 1e-200 underflow (only a spread of exactly 0 gives
    a standard deviation of 0).
    """
    _, exponent = np.frexp(np.abs(X).max(axis=0))         # |x| < 2**exponent; 0 for a zero column
    scaled = np.ldexp(X, -exponent)                        # |scaled| < 1, exact
    return exponent, scaled.mean(axis=0), scaled.std(axis=0)


def standardize(train, *others):
    """Scale inputs to zero mean and unit variance by the training set's statistics.

    Each column j of every set becomes ``(x - m_j) / s_j``, with ``m_j`` and
    ``s_j`` the mean and standard deviation (ddof 0) of column j of the
    *training* set: the training inputs end with mean 0 and variance 1, and
    the others are moved by the same amounts, so nothing of the validation or
    test sets leaks into the training (Lawrence et al. 1997: "all inputs were
    normalized to zero mean and unit variance").

    Parameters
    ----------
    train : array-like of shape (n_train, n_in) or Split
        The training inputs, or a ``(X, Y)`` :class:`Split` whose ``X`` is
        standardised and whose ``Y`` is kept as it is (targets are not inputs).
    *others : array-like of shape (n, n_in), Split or None
        Further sets (validation, test), moved by the training set's
        statistics; None is passed through (a :class:`Dataset` without
        validation set has ``val=None``).

    Returns
    -------
    tuple
        The standardised sets in the order given, ``train`` first: new
        C-contiguous float64 arrays (2-D; a 1-D input is one column), or
        Splits with the new ``X`` and the same ``Y``. Always a tuple, also
        for ``train`` alone.

    Raises
    ------
    ValueError
        If a set is not 2-D, holds NaN or infinite values, the training set has
        no rows, a set has another number of columns than ``train``, or a value
        would leave float range once standardised (1e300 beside a training set
        of spread 1e-10).
    TypeError
        If a set is not an array of real numbers, a Split or None (``train``
        must not be None).

    Notes
    -----
    A column constant in the training set (standard deviation 0) is centred
    and not scaled, as scikit-learn's ``StandardScaler`` does: there is no
    variance to scale to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet.datasets import standardize
    >>> X_train = np.array([[1.0, 10.0], [3.0, 10.0]])
    >>> X_test = np.array([[5.0, 12.0]])
    >>> Z_train, Z_test = standardize(X_train, X_test)
    >>> Z_train.tolist(), Z_test.tolist()
    ([[-1.0, 0.0], [1.0, 0.0]], [[3.0, 2.0]])
    """
    if train is None:
        raise TypeError("`train` must be an array of inputs or a Split, got None.")
    sets = (train, *others)
    names = ["train"] + [f"others[{i}]" for i in range(len(others))]
    arrays = [None if s is None else _inputs(s.X if isinstance(s, Split) else s, n)
              for s, n in zip(sets, names)]
    X = arrays[0]
    if X.shape[0] == 0:
        raise ValueError("`train` must have at least one row (example), got none.")
    for a, n in zip(arrays[1:], names[1:]):
        if a is not None and a.shape[1] != X.shape[1]:
            raise ValueError(f"`{n}` must have {X.shape[1]} columns, as `train` has, got "
                             f"{a.shape[1]}.")
    exponent, mean, sd = _statistics(X)
    constant = sd == 0.0                    # (centred in their own units, not scaled)
    sd[constant] = 1.0
    centre = np.ldexp(mean[constant], exponent[constant])
    out = []
    for s, a, name in zip(sets, arrays, names):
        if a is None:
            out.append(None)
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            Z = np.ascontiguousarray((np.ldexp(a, -exponent) - mean) / sd)   # in the scaled units
            Z[:, constant] = a[:, constant] - centre
        if not np.isfinite(Z).all():
            row, col = np.argwhere(~np.isfinite(Z))[0]
            raise ValueError(f"`{name}` row {row}, column {col}: {float(a[row, col])!r} lies "
                             f"beyond float range from the training mean "
                             f"{float(np.ldexp(mean[col], exponent[col]))!r} in units of its "
                             f"standard deviation {float(np.ldexp(sd[col], exponent[col]))!r}; "
                             f"scale the data first.")
        out.append(Split(Z, s.Y) if isinstance(s, Split) else Z)
    return tuple(out)
