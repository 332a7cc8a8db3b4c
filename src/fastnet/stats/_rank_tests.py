"""The Friedman test over problems with Nemenyi's critical difference (Demšar 2006).

References
----------
Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7,
1-30.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from fastnet._docstrings import fill
from fastnet._validation import check_int, check_probability

from ._common import _FrozenResult
from ._across import TABLE_ATTRIBUTES, _table

__all__ = ["FriedmanNemenyi", "friedman_nemenyi", "nemenyi_q"]


# ------------------------------------------------------------------ Friedman and Nemenyi

@fill(table_attributes=TABLE_ATTRIBUTES)
class FriedmanNemenyi(_FrozenResult):
    r"""Result of :func:`friedman_nemenyi`.

    {{table_attributes}}
    ranks : ndarray, shape (a, p)
        Rank of each algorithm on each problem, 1 the best, ties averaged.
    mean_ranks : ndarray, shape (a,)
        Mean rank over the problems.
    statistic : float
        Friedman's :math:`\chi^2_F` (with the correction for ties of
        :func:`scipy.stats.friedmanchisquare`).
    pvalue : float
        Its p-value (:math:`\chi^2` with a - 1 degrees of freedom).
    iman_davenport : float
        Iman and Davenport's :math:`F_F`, which Demšar recommends over :math:`\chi^2_F`.
    iman_davenport_pvalue : float
        Its p-value (F with a - 1 and (a - 1)(p - 1) degrees of freedom).
    alpha : float
        Level of the Nemenyi test.
    q_alpha : float
        The critical value :math:`q_\alpha` (Demšar's Table 5a/b).
    critical_difference : float
        Mean ranks closer than this are not significantly different.
    cliques : tuple of tuple of str
        Maximal groups of algorithms, in rank order, whose mean ranks all lie within
        less than the critical difference (the bars of the diagram).
    """

    algorithms: tuple
    problems: tuple
    ranks: np.ndarray
    mean_ranks: np.ndarray
    statistic: float
    pvalue: float
    iman_davenport: float
    iman_davenport_pvalue: float
    alpha: float
    q_alpha: float
    critical_difference: float
    cliques: tuple

    _repr_skip = ("problems", "ranks")

    @property
    def different(self):
        """Boolean matrix (a, a): the Nemenyi test finds the two algorithms different
        (their mean ranks differ by at least the critical difference)."""
        d = np.abs(self.mean_ranks[:, None] - self.mean_ranks[None, :])
        return d >= self.critical_difference


def nemenyi_q(k, alpha=0.05):
    r"""Critical value :math:`q_\alpha` of the Nemenyi test for `k` algorithms.

    Parameters
    ----------
    k : int
        Number of algorithms, >= 2.
    alpha : float, default=0.05
        Level, in (0, 1).

    Returns
    -------
    float
        The studentized range quantile with infinite degrees of freedom divided by
        :math:`\sqrt 2`: ``studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)``.

    Raises
    ------
    ValueError
        If `k` < 2 or `alpha` is not in (0, 1).

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006 (Table 5).

    Examples
    --------
    >>> round(nemenyi_q(2), 3), round(nemenyi_q(5), 3), round(nemenyi_q(10, 0.10), 3)
    (1.96, 2.728, 2.92)
    """
    k = check_int(k, "k", minimum=2)
    alpha = check_probability(alpha, "alpha")
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def _cliques(names, mean_ranks, cd):
    order = np.argsort(mean_ranks, kind="stable")
    r = mean_ranks[order]
    out, reach = [], -1
    for i in range(r.size):
        j = i
        while j + 1 < r.size and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and j > reach:   # not inside the previous clique
            out.append(tuple(names[o] for o in order[i:j + 1]))
            reach = j
    return tuple(out)


def friedman_nemenyi(costs, *, algorithms=None, problems=None, alpha=0.05, lower_is_better=True):
    r"""Mean ranks, Friedman's test and Nemenyi's critical difference (Demšar 2006).

    Parameters
    ----------
    costs : array_like, shape (a, p), or mapping
        A table algorithm x problem (the same forms as :func:`performance_profiles`);
        with `lower_is_better`, ``inf`` (a missed target) ranks after every finite
        value, and misses tie; otherwise the values must be finite.
    algorithms : sequence of str, optional
        Names of the rows; not with a mapping.
    problems : sequence of str, optional
        Names of the columns; not with mappings per algorithm.
    alpha : float, default=0.05
        Level of the Nemenyi test, in (0, 1).
    lower_is_better : bool, default=True
        True for errors and times (rank 1 is the least); False for accuracies.

    Returns
    -------
    FriedmanNemenyi
        Ranks, mean ranks, the Friedman and Iman-Davenport statistics and p-values, the
        critical difference and the cliques. :func:`fastnet.plots.cd_diagram` draws it.

    Raises
    ------
    ValueError
        If the table has fewer than 2 algorithms or 2 problems, or holds NaN, -inf, or
        inf where higher is better; if `alpha` is not in (0, 1).

    Notes
    -----
    On each of the :math:`N` problems the :math:`k` algorithms are ranked, 1 the best,
    tied algorithms sharing the mean of their ranks; :math:`R_j` is algorithm
    :math:`j`'s mean rank. Friedman's statistic

    .. math:: \chi^2_F = \frac{12 N}{k(k+1)} \Big[\sum_j R_j^2 - \frac{k(k+1)^2}{4}\Big]
              \Big/ \Big(1 - \frac{\sum (t^3 - t)}{N k (k^2 - 1)}\Big)

    (the divisor corrects for ties, :math:`t` the size of each group of tied
    algorithms, as :func:`scipy.stats.friedmanchisquare` does) is :math:`\chi^2` with
    :math:`k - 1` degrees of freedom under the null hypothesis that all algorithms are
    equivalent; Iman and Davenport's :math:`F_F = (N-1)\chi^2_F / (N(k-1) - \chi^2_F)`
    is F with :math:`k-1` and :math:`(k-1)(N-1)` degrees of freedom and less
    conservative. When the null hypothesis is rejected, the Nemenyi test calls two
    algorithms different when their mean ranks differ by at least

    .. math:: CD = q_\alpha \sqrt{\frac{k(k+1)}{6N}},

    :math:`q_\alpha` the studentized range statistic's quantile at :math:`1 - \alpha`
    for :math:`k` groups and infinite degrees of freedom, over :math:`\sqrt 2`
    (:func:`nemenyi_q`; Demšar's Table 5). autorank (Herbold 2020) computes the same.

    References
    ----------
    .. [1] J. Demšar, "Statistical comparisons of classifiers over multiple data sets",
       Journal of Machine Learning Research 7, 1-30, 2006.
    .. [2] M. Friedman, "A comparison of alternative tests of significance for the
       problem of m rankings", Annals of Mathematical Statistics 11, 86-92, 1940.
    .. [3] R. L. Iman and J. M. Davenport, "Approximations of the critical region of the
       Friedman statistic", Communications in Statistics 9, 571-595, 1980.
    .. [4] P. B. Nemenyi, "Distribution-free multiple comparisons", PhD thesis,
       Princeton University, 1963.
    .. [5] S. Herbold, "Autorank: a Python package for automated ranking of
       classifiers", Journal of Open Source Software 5(48), 2173, 2020.

    Examples
    --------
    >>> r = friedman_nemenyi({"A": [1, 1, 1, 2], "B": [2, 2, 3, 1], "C": [3, 3, 2, 3]})
    >>> r.mean_ranks.tolist()
    [1.25, 2.0, 2.75]
    >>> round(r.statistic, 3), round(r.critical_difference, 3)
    (4.5, 1.657)
    """
    lower_is_better = bool(lower_is_better)
    values, algorithms, problems = _table(costs, algorithms, problems, allow_inf=lower_is_better)
    alpha = check_probability(alpha, "alpha")
    k, n = values.shape
    if k < 2 or n < 2:
        raise ValueError(f"Ranking needs at least 2 algorithms and 2 problems, got {k} and {n}.")
    ranks = stats.rankdata(values if lower_is_better else -values, axis=0)
    mean_ranks = ranks.mean(axis=1)
    ties = 0.0
    for column in values.T:
        _, counts = np.unique(column, return_counts=True)
        ties += float(np.sum(counts**3 - counts))
    c = 1.0 - ties / (n * k * (k * k - 1))
    s = 12.0 * n / (k * (k + 1)) * (np.sum(mean_ranks**2) - k * (k + 1) ** 2 / 4.0)
    statistic = float(max(s, 0.0) / c) if c > 0 else 0.0   # c = 0: all tied everywhere
    pvalue = float(stats.chi2.sf(statistic, k - 1))
    denominator = n * (k - 1) - statistic
    if denominator > 0:
        f = (n - 1) * statistic / denominator
        f_p = float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    else:
        f, f_p = math.inf, 0.0
    q = nemenyi_q(k, alpha)
    cd = q * math.sqrt(k * (k + 1) / (6.0 * n))
    return FriedmanNemenyi(algorithms, problems, ranks, mean_ranks, statistic, pvalue, float(f),
                           f_p, alpha, q, cd, _cliques(algorithms, mean_ranks, cd))
