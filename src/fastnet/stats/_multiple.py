"""Many tests at once: Holm's step-down adjustment, and the smallest p-value the tests over
datasets can give."""
from __future__ import annotations

import math

import numpy as np

from fastnet._validation import check_int, check_probability

from ._common import _as_floats

__all__ = ["holm", "smallest_pvalue", "datasets_needed"]


def holm(pvalues):
    r"""Holm's step-down adjusted p-values (family-wise error rate).

    Parameters
    ----------
    pvalues : array_like, shape (m,)
        p-values of the ``m`` tests of one family, each in [0, 1]; NaN marks a test not
        made and stays NaN (it is not counted in ``m``).

    Returns
    -------
    ndarray, shape (m,)
        Adjusted p-values in the input's order: reject the ``i``-th hypothesis at
        family-wise level :math:`\alpha` when ``adjusted[i] < alpha``.

    Raises
    ------
    ValueError
        If `pvalues` is not 1-D or holds a value outside [0, 1].

    Notes
    -----
    With the ``m`` p-values sorted, :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted
    value of :math:`p_{(i)}` is
    :math:`\max_{j \le i} \min(1, (m - j + 1)\, p_{(j)})`. Rejecting where it is below
    :math:`\alpha` is Holm's procedure: it keeps the probability of any false rejection
    at most :math:`\alpha` whatever the dependence between the tests, and rejects
    everything Bonferroni's correction rejects, and possibly more.
    (:func:`scipy.stats.false_discovery_control` controls the false discovery rate
    instead, a weaker guarantee.)

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure",
       Scandinavian Journal of Statistics 6(2), 65-70, 1979.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.005]).tolist()   # 4*0.005, 3*0.01, 2*0.03, max(0.04, 0.06)
    [0.03, 0.06, 0.06, 0.02]
    """
    p = _as_floats(pvalues, "pvalues", "p-values")
    if p.ndim != 1:
        raise ValueError(f"`pvalues` must be 1-D, got shape {p.shape}.")
    made = ~np.isnan(p)
    if np.any((p[made] < 0) | (p[made] > 1)):
        raise ValueError("`pvalues` must lie in [0, 1].")
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(made)
    order = idx[np.argsort(p[idx], kind="stable")]
    m = order.size
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out


def smallest_pvalue(n):
    """The smallest two-sided p-value the sign and Wilcoxon signed-rank tests can give
    on ``n`` datasets.

    Parameters
    ----------
    n : int
        Number of datasets (problems) without a tie; ``n >= 0``.

    Returns
    -------
    float
        :math:`\\min(1, 2^{1-n})`, reached when one algorithm is better on every dataset.

    Raises
    ------
    ValueError
        If `n` is not a non-negative integer.

    Notes
    -----
    Under the null hypothesis every one of the :math:`2^n` sign patterns is equally
    likely; the most extreme two (all wins, all losses) have probability
    :math:`2 \\cdot 2^{-n}`, for the sign test and for the exact Wilcoxon signed-rank
    test alike. On fewer than :func:`datasets_needed` datasets neither test can be
    significant, whatever the errors (Demšar 2006 counts the sign test's critical
    values in his Table 4).

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006.

    Examples
    --------
    >>> smallest_pvalue(2), smallest_pvalue(5), smallest_pvalue(6)
    (0.5, 0.0625, 0.03125)
    """
    n = check_int(n, "n", minimum=0)
    return min(1.0, 2.0 ** (1 - n))


def datasets_needed(alpha=0.05):
    """The fewest datasets on which the sign and Wilcoxon tests can reach level `alpha`.

    Parameters
    ----------
    alpha : float, default=0.05
        Significance level, in (0, 1).

    Returns
    -------
    int
        The smallest ``n`` with ``smallest_pvalue(n) < alpha``.

    Raises
    ------
    ValueError
        If `alpha` is not in (0, 1).

    Examples
    --------
    >>> datasets_needed(0.05), datasets_needed(0.01)
    (6, 8)
    """
    alpha = check_probability(alpha, "alpha")
    n = max(0, math.floor(1 - math.log2(alpha)))
    while smallest_pvalue(n) >= alpha:
        n += 1
    while n > 0 and smallest_pvalue(n - 1) < alpha:
        n -= 1
    return n
