"""Lacoste et al. (2012) over several datasets: the Poisson binomial test, and the sign
and Wilcoxon signed-rank tests as the paper defines them.

References
----------
Lacoste, A., Laviolette, F. & Marchand, M. (2012). Bayesian comparison of machine
learning algorithms on single and multiple datasets. AISTATS, JMLR W&CP 22, 665-675.
"""
from __future__ import annotations


import numpy as np
from scipy import special, stats

from fastnet._validation import check_positive

from ._common import _FrozenResult, _check_sample

__all__ = ["PoissonBinomialResult", "SignTestResult", "WilcoxonResult", "poisson_binomial_test",
           "sign_test", "wilcoxon_test"]


class PoissonBinomialResult(_FrozenResult):
    r"""Result of :func:`poisson_binomial_test`.

    Attributes
    ----------
    probability : float
        :math:`\Pr(A \succ B)`: posterior probability that A beats B more often than not
        in the context the datasets were drawn from. ``1 - probability`` is
        :math:`\Pr(B \succ A)`.
    pmf : ndarray, shape (N + 1,)
        :math:`\Pr(\kappa)`, the Poisson-binomial distribution of the number of datasets
        on which A's classifier is truly better.
    p : ndarray, shape (N,)
        The per-dataset probabilities :math:`p_i = \Pr(h_i \succ g_i)` used.
    prior : float
        Beta prior parameter :math:`\hat\beta` of the win rate.
    """

    probability: float
    pmf: np.ndarray
    p: np.ndarray
    prior: float

    @property
    def expected_wins(self):
        """Expected number of datasets on which A is truly better, :math:`\\sum_i p_i`."""
        return float(self.p.sum())

    @property
    def better(self):
        """``"A"`` if ``probability > 0.5``, ``"B"`` if below, None at exactly 0.5."""
        if self.probability > 0.5:
            return "A"
        if self.probability < 0.5:
            return "B"
        return None


def _poisson_binomial_pmf(p):
    """q_N(kappa) by the O(N^2) recursion of Lacoste et al. (2012), Section 5."""
    q = np.ones(1)
    for pi in p:
        nxt = np.empty(q.size + 1)
        nxt[:-1] = (1.0 - pi) * q          # q_{i-1}(kappa) (1 - p_i)
        nxt[-1] = 0.0
        nxt[1:] += pi * q                  # + p_i q_{i-1}(kappa - 1)
        q = nxt
    return q


def poisson_binomial_test(p, prior=1.0):
    r"""Poisson binomial test: probability that algorithm A is better than B.

    Parameters
    ----------
    p : array_like, shape (N,)
        For each of ``N`` datasets, :math:`p_i = \Pr(h_i \succ g_i)`, the probability that
        A's classifier is better than B's on that dataset (:func:`prob_better`).
    prior : float, default=1.0
        Parameter :math:`\hat\beta > 0` of the symmetric Beta prior on the rate
        :math:`r` at which A beats B; 1 is uniform.

    Returns
    -------
    PoissonBinomialResult
        ``probability`` :math:`= \Pr(A \succ B)`, the ``pmf`` of the number of wins
        :math:`\kappa`, the inputs ``p`` and ``prior``.

    Raises
    ------
    ValueError
        If `p` is not 1-D, is empty, or has values outside [0, 1] or non-finite; if
        `prior` is not positive and finite.

    See Also
    --------
    prob_better, sign_test, wilcoxon_test, pairwise_table

    Notes
    -----
    The number of datasets :math:`\kappa` on which A is truly better follows the
    Poisson-binomial distribution :math:`\Pr(\kappa) = q_N(\kappa)` with

    .. math::

        q_0(0) = 1, \qquad q_i(\kappa) = 0 \ (\kappa < 0 \text{ or } \kappa > i), \qquad
        q_i(\kappa) = p_i\, q_{i-1}(\kappa - 1) + (1 - p_i)\, q_{i-1}(\kappa),

    and, with a :math:`\mathrm{Beta}(\hat\beta, \hat\beta)` prior on the win rate,

    .. math::

        \Pr(A \succ B) = \sum_{\kappa=0}^{N} \Pr(\kappa)\,
        I_{1/2}(N - \kappa + \hat\beta, \kappa + \hat\beta).

    This is a posterior probability, not a p-value. Lacoste et al. note that in their
    simulations a threshold of 0.85 had a lower type-I error than the sign and
    Wilcoxon tests at confidence 0.90.

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, "Bayesian comparison of machine
       learning algorithms on single and multiple datasets", AISTATS 2012, Section 5.

    Examples
    --------
    >>> r = poisson_binomial_test([1.0, 1.0, 1.0])    # A certainly better on all three
    >>> r.pmf.tolist(), r.probability                  # I_{1/2}(1, 4) = 1 - 2**-4
    ([0.0, 0.0, 0.0, 1.0], 0.9375)
    """
    prior = check_positive(prior, "prior")
    p = _check_sample(p, "p", min_size=1)
    if np.any((p < 0) | (p > 1)):
        raise ValueError(
            f"`p` must hold probabilities in [0, 1], got range [{p.min():g}, {p.max():g}]."
        )
    pmf = _poisson_binomial_pmf(p)
    n = p.size
    kappa = np.arange(n + 1)
    weights = special.betainc(n - kappa + prior, kappa + prior, 0.5)
    prob = float(np.clip(np.dot(pmf, weights), 0.0, 1.0))
    return PoissonBinomialResult(probability=prob, pmf=pmf, p=p, prior=prior)


class _DatasetsTestResult(_FrozenResult):
    """What the tests over datasets share: a p-value and its confidence."""

    @property
    def confidence(self):
        """``1 - pvalue``, the confidence level Lacoste et al. tabulate."""
        return 1.0 - self.pvalue


class SignTestResult(_DatasetsTestResult):
    r"""Result of :func:`sign_test`.

    Attributes
    ----------
    statistic : int
        :math:`\kappa_+`, the number of datasets on which A has the smaller error.
    n_minus : int
        :math:`\kappa_-`, the number on which B has the smaller error. Ties are dropped.
    pvalue : float
        Two-sided :math:`\rho_s = \min(1, 2 \sum_{i \le \min(\kappa_+, \kappa_-)}
        \binom{\kappa_+ + \kappa_-}{i} 2^{-(\kappa_+ + \kappa_-)})`.
    better : str or None
        ``"A"`` if :math:`\kappa_+ > \kappa_-`, ``"B"`` if below, None if equal.
    """

    statistic: int
    n_minus: int
    pvalue: float
    better: str | None


def _check_pair(err_a, err_b):
    a = _check_sample(err_a, "err_a", min_size=1)
    b = _check_sample(err_b, "err_b", min_size=1)
    if a.size != b.size:
        raise ValueError(
            f"`err_a` and `err_b` must have one value per dataset each, got {a.size} and {b.size}."
        )
    return a, b


def sign_test(err_a, err_b):
    r"""Sign test over datasets, as defined by Lacoste et al. (2012), Section 6.1.

    Parameters
    ----------
    err_a, err_b : array_like, shape (N,)
        Error of algorithms A and B on each of ``N`` datasets (rates or counts; only the
        sign of each difference is used).

    Returns
    -------
    SignTestResult
        ``statistic`` :math:`\kappa_+` (A wins), ``n_minus`` :math:`\kappa_-`,
        two-sided ``pvalue`` and ``better``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, have NaN/inf, are empty or differ in length.

    See Also
    --------
    wilcoxon_test, poisson_binomial_test, scipy.stats.binomtest

    Notes
    -----
    Datasets with equal errors are ignored. Under :math:`H_0` (each algorithm wins with
    probability 1/2) :math:`\kappa_+ \sim \mathrm{Bin}(\kappa_+ + \kappa_-, 1/2)` and

    .. math:: \rho_s = 2 \sum_{i=0}^{\min(\kappa_+, \kappa_-)}
              \binom{\kappa_+ + \kappa_-}{i} 2^{-(\kappa_+ + \kappa_-)},

    capped at 1. This equals the two-sided :func:`scipy.stats.binomtest` p-value with
    ``p=0.5``, which computes it. With no untied dataset the p-value is 1.

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Section 6.1.

    Examples
    --------
    >>> r = sign_test([0.10, 0.20, 0.05, 0.30], [0.12, 0.25, 0.07, 0.30])
    >>> r.statistic, r.n_minus, r.pvalue    # 3 wins, 0 losses, 1 tie: 2 * 2**-3
    (3, 0, 0.25)
    """
    a, b = _check_pair(err_a, err_b)
    k_plus = int(np.count_nonzero(a < b))
    k_minus = int(np.count_nonzero(a > b))
    n = k_plus + k_minus
    pvalue = 1.0 if n == 0 else float(stats.binomtest(k_plus, n, 0.5).pvalue)
    better = "A" if k_plus > k_minus else "B" if k_plus < k_minus else None
    return SignTestResult(statistic=k_plus, n_minus=k_minus, pvalue=pvalue, better=better)


class WilcoxonResult(_DatasetsTestResult):
    r"""Result of :func:`wilcoxon_test`.

    Attributes
    ----------
    statistic : float
        :math:`c_+`, the sum of the ranks of :math:`|d_i|` over datasets where A has the
        smaller error (:math:`d_i > 0`).
    c_minus : float
        :math:`c_-`, the rank sum where B has the smaller error.
    pvalue : float
        Two-sided exact p-value :math:`\min(1, 2 \Pr(C \le \min(c_+, c_-)))`.
    n : int
        Number of datasets with :math:`d_i \ne 0`.
    better : str or None
        ``"A"`` if :math:`c_+ > c_-`, ``"B"`` if below, None if equal.
    """

    statistic: float
    c_minus: float
    pvalue: float
    n: int
    better: str | None


def _signed_rank_null_cdf(scores2, c2):
    """P(S <= c2) for S = sum_i scores2[i] * B_i, B_i ~ Bernoulli(1/2) independent.

    `scores2` are doubled ranks (integers even with mid-ranks), so the distribution is
    computed exactly by Lacoste et al.'s recursion w_n(c) = (w_{n-1}(c) + w_{n-1}(c - r_n))/2.
    """
    total = int(scores2.sum())
    w = np.zeros(total + 1)
    w[0] = 1.0
    top = 0
    for s in scores2:
        s = int(s)
        nxt = 0.5 * w
        nxt[s:top + s + 1] += 0.5 * w[:top + 1]
        w = nxt
        top += s
    return float(w[: int(np.floor(c2 + 1e-9)) + 1].sum())


def wilcoxon_test(err_a, err_b, n_test=None):
    r"""Wilcoxon signed-rank test over datasets, as defined by Lacoste et al. (2012).

    Parameters
    ----------
    err_a, err_b : array_like, shape (N,)
        Error of algorithms A and B on each of ``N`` datasets: rates, or counts if
        `n_test` is given.
    n_test : array_like of int, shape (N,), optional
        Test-set sizes :math:`m_i`; if given, :math:`d_i = (e_{B,i} - e_{A,i})/m_i`.

    Returns
    -------
    WilcoxonResult
        ``statistic`` :math:`c_+`, ``c_minus``, two-sided exact ``pvalue``, ``n`` and
        ``better``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, have NaN/inf, are empty or differ in length, or
        `n_test` has values <= 0.

    See Also
    --------
    sign_test, poisson_binomial_test, scipy.stats.wilcoxon

    Notes
    -----
    With :math:`d_i = R_{B,i} - R_{A,i}` (positive where A is better), datasets with
    :math:`d_i = 0` are dropped (set :math:`J`). Ranks of :math:`|d_i|` are mid-ranks,
    :math:`r_i = \tfrac12 (1 + \#\{j: |d_j| < |d_i|\} + \#\{j: |d_j| \le |d_i|\})`;
    :math:`c_\pm = \sum_{j \in J} r_j I(\pm d_j > 0)`. Under :math:`H_0` each sign is
    independently + or - with probability 1/2, and the null distribution of
    :math:`c_+` follows the recursion

    .. math:: w_n(c) = \tfrac12 \left(w_{n-1}(c) + w_{n-1}(c - r_n)\right),

    (the paper writes it for integer ranks :math:`r_n = n`; it is run here on doubled
    mid-ranks so that it stays exact with ties). The two-sided p-value is
    :math:`\rho_w = 2 \sum_{c \le \min(c_+, c_-)} w_{|J|}(c)`, capped at 1.
    The paper's base case :math:`w_1(c) = 1` for :math:`c \in \{0, 1\}` counts
    arrangements rather than probabilities; the probabilities used here are 1/2 each,
    which makes :math:`\rho_w` the usual p-value. Without ties this equals
    :func:`scipy.stats.wilcoxon` with ``method="exact"``. With no nonzero difference
    the p-value is 1.

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Section 6.2.
    .. [2] F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics
       Bulletin 1(6), 1945.

    Examples
    --------
    >>> r = wilcoxon_test([0.1, 0.2, 0.3], [0.2, 0.4, 0.6])   # A better on all three
    >>> r.statistic, r.c_minus, r.pvalue                     # 2 * P(C <= 0) = 2/8
    (6.0, 0.0, 0.25)
    """
    a, b = _check_pair(err_a, err_b)
    d = b - a
    if n_test is not None:
        m = _check_sample(n_test, "n_test", min_size=1)
        if m.size != d.size:
            raise ValueError(
                f"`n_test` must have one size per dataset ({d.size}), got {m.size}."
            )
        if np.any(m <= 0):
            raise ValueError("`n_test` must hold test-set sizes > 0.")
        d = d / m
    d = d[d != 0]
    if d.size == 0:
        return WilcoxonResult(statistic=0.0, c_minus=0.0, pvalue=1.0, n=0, better=None)
    ranks = stats.rankdata(np.abs(d))  # mid-ranks
    c_plus = float(ranks[d > 0].sum())
    c_minus = float(ranks[d < 0].sum())
    scores2 = np.rint(2 * ranks).astype(np.int64)
    c2 = 2 * min(c_plus, c_minus)
    pvalue = min(1.0, 2.0 * _signed_rank_null_cdf(scores2, c2))
    better = "A" if c_plus > c_minus else "B" if c_plus < c_minus else None
    return WilcoxonResult(
        statistic=c_plus, c_minus=c_minus, pvalue=pvalue, n=int(d.size), better=better
    )
