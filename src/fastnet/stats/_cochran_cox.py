"""The Cochran/Cox t' test for two means with unequal variances (Cochran & Cox 1957),
the test Proben1's comparison (`compare_errors`) decides by, and its p-value."""

from __future__ import annotations


import numpy as np
from scipy import optimize, stats

from ._common import _FrozenResult, _check_sample
from fastnet._validation import check_probability

__all__ = ["CochranCoxResult", "cochran_cox_ttest"]

#: Smallest p-value searched for by the Cochran/Cox p-value inversion (scipy.stats.t.isf
#: loses accuracy below it for small df); below it the p-value is reported as 0.
_COCHRAN_COX_PMIN = 1e-200


class CochranCoxResult(_FrozenResult):
    r"""Result of the Cochran/Cox t' test for two means with unequal variances.

    Attributes
    ----------
    statistic : float
        :math:`t = (\bar a - \bar b)/\sqrt{w_1 + w_2}`, :math:`w_i = s_i^2/n_i`.
    pvalue : float
        Two-sided p-value: the level at which the Cochran/Cox critical value equals
        ``|statistic|`` (see :func:`cochran_cox_ttest`).
    critical_value : float
        :math:`t'` at level ``alpha``; reject equality of the means when
        ``|statistic| > critical_value``.
    alpha : float
        Level used for ``critical_value``.
    """

    statistic: float
    pvalue: float
    critical_value: float
    alpha: float


def _cochran_cox_critical(alpha, w1, w2, df1, df2):
    """Cochran/Cox critical value t' at two-sided level `alpha`."""
    t1 = stats.t.isf(alpha / 2, df1)
    t2 = stats.t.isf(alpha / 2, df2)
    return (w1 * t1 + w2 * t2) / (w1 + w2)


def _cochran_cox(a, b, alpha):
    n1, n2 = a.size, b.size
    w1, w2 = a.var(ddof=1) / n1, b.var(ddof=1) / n2
    if not w1 + w2 > 0:
        raise ValueError(
            "`a` and `b` are both constant; the t statistic is undefined."
        )
    t = (a.mean() - b.mean()) / np.sqrt(w1 + w2)
    crit = _cochran_cox_critical(alpha, w1, w2, n1 - 1, n2 - 1)
    abs_t = abs(t)
    if abs_t == 0:
        p = 1.0
    else:
        # t'(level) is decreasing in the level, from +inf (level -> 0) to 0 (level = 1):
        # solve t'(p) = |t| for p on a log scale.
        def g(u):
            return _cochran_cox_critical(np.exp(u), w1, w2, n1 - 1, n2 - 1) - abs_t

        u_lo = np.log(_COCHRAN_COX_PMIN)
        if g(u_lo) <= 0:
            p = 0.0
        else:
            u = optimize.brentq(g, u_lo, 0.0, xtol=1e-13, rtol=4 * np.finfo(float).eps)
            p = float(np.exp(u))
    return CochranCoxResult(statistic=float(t), pvalue=p, critical_value=float(crit), alpha=alpha)


def cochran_cox_ttest(a, b, *, alpha=0.05):
    r"""Two-sample t-test with the Cochran/Cox approximation for unequal variances.

    Parameters
    ----------
    a, b : array_like, shape (n1,), (n2,)
        Independent samples, each with at least 2 finite values.
    alpha : float, default=0.05
        Two-sided level at which ``critical_value`` is reported.

    Returns
    -------
    CochranCoxResult
        ``statistic``, two-sided ``pvalue``, ``critical_value`` and ``alpha``.

    Raises
    ------
    ValueError
        If a sample is not 1-D, has NaN/inf or fewer than 2 values, if both samples are
        constant, or if `alpha` is not in (0, 1).

    See Also
    --------
    compare_errors : Proben1's full procedure around this test.
    scipy.stats.ttest_ind : Welch's test (``equal_var=False``).

    Notes
    -----
    With :math:`w_i = s_i^2/n_i` (``s_i`` the ``(n_i - 1)`` standard deviation),

    .. math::

        t = \frac{\bar a - \bar b}{\sqrt{w_1 + w_2}}, \qquad
        t'(\alpha) = \frac{w_1 t_1(\alpha) + w_2 t_2(\alpha)}{w_1 + w_2},

    where :math:`t_i(\alpha)` is the two-sided critical value of Student's t with
    :math:`n_i - 1` degrees of freedom. Equal means are rejected at level
    :math:`\alpha` when :math:`|t| > t'(\alpha)`.

    The test defines only a critical value. Its p-value is the smallest level at which
    it rejects, i.e. the solution :math:`p` of :math:`t'(p) = |t|`; since
    :math:`t'` decreases monotonically from :math:`+\infty` (level 0) to 0 (level 1),
    the root is unique and is found by :func:`scipy.optimize.brentq` in
    :math:`\log p` (relative accuracy ~1e-13). With equal sample sizes,
    :math:`t' = t_1 = t_2` and the p-value is Student's
    :math:`2\,\mathrm{sf}(|t|; n - 1)`. p-values below 1e-200 are reported as 0
    (:func:`scipy.stats.t.isf` is unreliable beyond that for small df).

    References
    ----------
    .. [1] W. G. Cochran, G. M. Cox, *Experimental Designs*, 2nd ed., Wiley, 1957.
    .. [2] L. Prechelt, "Proben1 -- a set of neural network benchmark problems and
       benchmarking rules", Technical Report 21/94, Universitaet Karlsruhe, 1994.

    Examples
    --------
    >>> r = cochran_cox_ttest([1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0])
    >>> round(r.statistic, 4)          # (2.5 - 4.5) / sqrt(5/12 + 5/12)
    -2.1909
    >>> round(r.pvalue, 4)             # equal n: Student's t with 3 df
    0.1162
    """
    alpha = check_probability(alpha, "alpha")
    a = _check_sample(a, "a", min_size=2)
    b = _check_sample(b, "b", min_size=2)
    return _cochran_cox(a, b, alpha)
