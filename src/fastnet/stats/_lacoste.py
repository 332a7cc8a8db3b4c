"""Lacoste, Laviolette & Marchand (2012): Bayesian comparison of classifiers and algorithms.

Single test set: Pr(h better than g) from the counts of examples on which exactly one of
the two classifiers errs. Several datasets: the Poisson binomial test, with the sign test
and the Wilcoxon signed-rank test as defined in the paper, and a pairwise table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ._common import _ReprMixin, _check_sample
from fastnet._validation import check_choice, check_positive

__all__ = [
    "PairwiseTable",
    "PoissonBinomialResult",
    "SignTestResult",
    "WilcoxonResult",
    "pairwise_table",
    "poisson_binomial_test",
    "prob_better",
    "prob_better_predictions",
    "sign_test",
    "wilcoxon_test",
]

#: Methods of :func:`pairwise_table`.
PAIRWISE_METHODS = ("poisson_binomial", "sign", "wilcoxon")


def _check_counts(k, name):
    arr = np.asarray(k, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if np.any(arr < 0):
        raise ValueError(f"`{name}` must be >= 0, got minimum {arr.min():g}.")
    return arr


def prob_better(k_h, k_g, prior=1.0):
    r"""Posterior probability that classifier h has a smaller true risk than g.

    Parameters
    ----------
    k_h : int or array_like
        Number of test examples that **h gets wrong and g gets right**.
    k_g : int or array_like
        Number of test examples that g gets wrong and h gets right.
    prior : float, default=1.0
        Dirichlet prior parameter :math:`\tilde\alpha = \alpha'_h = \alpha'_g > 0`;
        1 is the uniform prior the paper recommends.

    Returns
    -------
    float or ndarray
        :math:`\Pr(h \succ g) = I_{1/2}(k_h + \tilde\alpha, k_g + \tilde\alpha)`;
        a float when both counts are scalars, else an array of the broadcast shape.

    Raises
    ------
    ValueError
        If a count is negative or not finite, or `prior` is not positive and finite.

    See Also
    --------
    prob_better_predictions : the same from two prediction vectors and the targets.
    poisson_binomial_test : combines these probabilities over several datasets.

    Notes
    -----
    On one test set the outcomes per example (h wrong and g right, h right and g
    wrong, both equal) are multinomial with probabilities :math:`(p_h, p_g, \bar p)`.
    Under the Dirichlet posterior, :math:`z = p_h/(p_h + p_g)` is
    :math:`\mathrm{Beta}(k_h + \tilde\alpha, k_g + \tilde\alpha)`, and h is better
    (:math:`p_h < p_g`) iff :math:`z < 1/2` (Theorem 4.1):

    .. math:: \Pr(h \succ g) = B_c\!\left(\tfrac12; k_h + \tilde\alpha, k_g + \tilde\alpha\right)
              = I_{1/2}(k_h + \tilde\alpha, k_g + \tilde\alpha),

    computed with :func:`scipy.special.betainc`. More examples that only h gets wrong
    (larger ``k_h``) lower the probability. Examples on which both classifiers agree do
    not matter.

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, "Bayesian comparison of machine
       learning algorithms on single and multiple datasets", AISTATS 2012, Theorem 4.1.

    Examples
    --------
    >>> prob_better(0, 0)        # no disagreement: no information
    0.5
    >>> prob_better(0, 2)        # I_{1/2}(1, 3) = 1 - (1/2)**3
    0.875
    >>> prob_better(2, 0)
    0.125
    """
    prior = check_positive(prior, "prior")
    kh = _check_counts(k_h, "k_h")
    kg = _check_counts(k_g, "k_g")
    p = special.betainc(kh + prior, kg + prior, 0.5)
    if np.ndim(p) == 0:
        return float(p)
    return p


def _error_mask(pred, y):
    """Boolean per-example 'wrong' mask; rows are examples for 2-D predictions."""
    if pred.ndim == 1:
        return pred != y
    return np.any(pred != y, axis=tuple(range(1, pred.ndim)))


def prob_better_predictions(pred_h, pred_g, y, prior=1.0):
    r"""Posterior probability that classifier h is better than g, from their predictions.

    Parameters
    ----------
    pred_h, pred_g : array_like, shape (n,) or (n, ...)
        Predicted labels of the two classifiers on the same ``n`` test examples. For more
        than one dimension, the first axis indexes examples and an example counts as
        correct only if every entry matches (e.g. one-hot rows).
    y : array_like, same shape
        True labels.
    prior : float, default=1.0
        Dirichlet prior parameter (see :func:`prob_better`).

    Returns
    -------
    float
        :math:`I_{1/2}(k_h + \tilde\alpha, k_g + \tilde\alpha)` with
        :math:`k_h = \#\{i: h_i \ne y_i, g_i = y_i\}` and
        :math:`k_g = \#\{i: g_i \ne y_i, h_i = y_i\}`.

    Raises
    ------
    ValueError
        If the three arrays do not have the same shape or are empty.

    See Also
    --------
    prob_better

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Section 4.

    Examples
    --------
    >>> y = [0, 1, 1, 0, 1]
    >>> prob_better_predictions([0, 1, 1, 0, 0], [0, 1, 0, 1, 0], y)   # k_h=0, k_g=2
    0.875
    """
    ph, pg, yy = np.asarray(pred_h), np.asarray(pred_g), np.asarray(y)
    if ph.shape != yy.shape or pg.shape != yy.shape:
        raise ValueError(
            f"`pred_h`, `pred_g` and `y` must have the same shape, got {ph.shape}, "
            f"{pg.shape} and {yy.shape}."
        )
    if yy.ndim == 0 or yy.shape[0] == 0:
        raise ValueError(f"`y` must hold at least one example, got shape {yy.shape}.")
    wrong_h = _error_mask(ph, yy)
    wrong_g = _error_mask(pg, yy)
    k_h = int(np.count_nonzero(wrong_h & ~wrong_g))
    k_g = int(np.count_nonzero(wrong_g & ~wrong_h))
    return prob_better(k_h, k_g, prior)


@dataclass(frozen=True, repr=False)
class PoissonBinomialResult(_ReprMixin):
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
    def favours(self):
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


@dataclass(frozen=True, repr=False)
class SignTestResult(_ReprMixin):
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
    favours : str or None
        ``"A"`` if :math:`\kappa_+ > \kappa_-`, ``"B"`` if below, None if equal.
    """

    statistic: int
    n_minus: int
    pvalue: float
    favours: str | None

    @property
    def confidence(self):
        """``1 - pvalue``, the confidence level Lacoste et al. tabulate."""
        return 1.0 - self.pvalue


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
        two-sided ``pvalue`` and ``favours``.

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
    favours = "A" if k_plus > k_minus else "B" if k_plus < k_minus else None
    return SignTestResult(statistic=k_plus, n_minus=k_minus, pvalue=pvalue, favours=favours)


@dataclass(frozen=True, repr=False)
class WilcoxonResult(_ReprMixin):
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
    favours : str or None
        ``"A"`` if :math:`c_+ > c_-`, ``"B"`` if below, None if equal.
    """

    statistic: float
    c_minus: float
    pvalue: float
    n: int
    favours: str | None

    @property
    def confidence(self):
        """``1 - pvalue``, the confidence level Lacoste et al. tabulate."""
        return 1.0 - self.pvalue


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
        ``favours``.

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
        return WilcoxonResult(statistic=0.0, c_minus=0.0, pvalue=1.0, n=0, favours=None)
    ranks = stats.rankdata(np.abs(d))  # mid-ranks
    c_plus = float(ranks[d > 0].sum())
    c_minus = float(ranks[d < 0].sum())
    scores2 = np.rint(2 * ranks).astype(np.int64)
    c2 = 2 * min(c_plus, c_minus)
    pvalue = min(1.0, 2.0 * _signed_rank_null_cdf(scores2, c2))
    favours = "A" if c_plus > c_minus else "B" if c_plus < c_minus else None
    return WilcoxonResult(
        statistic=c_plus, c_minus=c_minus, pvalue=pvalue, n=int(d.size), favours=favours
    )


@dataclass(frozen=True, repr=False)
class PairwiseTable(_ReprMixin):
    r"""Pairwise comparison of several algorithms over several datasets.

    Attributes
    ----------
    names : tuple of str
        Algorithm names, in row/column order.
    matrix : ndarray, shape (k, k)
        For ``method="poisson_binomial"``: :math:`\Pr(\text{row} \succ \text{col})`
        (diagonal 0.5; ``matrix + matrix.T == 1``), as in Lacoste et al.'s Table 2.
        For ``"sign"`` and ``"wilcoxon"``: the confidence ``1 - pvalue`` where the row
        algorithm wins more (sign) or has the larger rank sum (Wilcoxon), NaN elsewhere and
        on the diagonal, as in their Tables 3 and 4.
    pvalue : ndarray, shape (k, k) or None
        Two-sided p-values (symmetric, NaN diagonal) for ``"sign"`` and ``"wilcoxon"``;
        None for ``"poisson_binomial"``.
    method : str
        ``"poisson_binomial"``, ``"sign"`` or ``"wilcoxon"``.
    datasets : tuple of str or None
        Dataset names if given.
    """

    names: tuple
    matrix: np.ndarray
    pvalue: np.ndarray | None
    method: str
    datasets: tuple | None

    def __str__(self):
        width = max(8, *(len(n) for n in self.names)) + 1
        head = " " * width + "".join(f"{n:>{width}}" for n in self.names)
        rows = [head]
        for name, row in zip(self.names, self.matrix):
            cells = "".join(
                f"{'-':>{width}}" if np.isnan(v) else f"{v:>{width}.2f}" for v in row
            )
            rows.append(f"{name:<{width}}{cells}")
        what = {
            "poisson_binomial": "Pr(row better than column), Poisson binomial test",
            "sign": "1 - p of the sign test where row wins more often",
            "wilcoxon": "1 - p of the Wilcoxon signed-rank test where row has larger rank sum",
        }[self.method]
        return what + "\n" + "\n".join(rows)


def _as_per_example(errors, names):
    """Coerce a nested structure algorithm -> dataset -> per-example 0/1 losses."""
    out = []
    n_datasets = None
    for name, per_alg in zip(names, errors):
        if isinstance(per_alg, np.ndarray) and per_alg.ndim == 2:
            per_alg = list(per_alg)
        per_alg = list(per_alg)
        if n_datasets is None:
            n_datasets = len(per_alg)
        elif len(per_alg) != n_datasets:
            raise ValueError(
                f"`errors` must give every algorithm the same datasets; {name!r} has "
                f"{len(per_alg)}, expected {n_datasets}."
            )
        vecs = []
        for j, v in enumerate(per_alg):
            v = np.asarray(v, dtype=np.float64)
            if v.ndim != 1 or v.size == 0:
                raise ValueError(
                    f"`errors[{name!r}][{j}]` must be a non-empty 1-D array of per-example "
                    f"0/1 losses, got shape {v.shape}."
                )
            if not np.all((v == 0) | (v == 1)):
                raise ValueError(
                    f"`errors[{name!r}][{j}]` must hold 0/1 losses (1 = wrong) for the "
                    "Poisson binomial test."
                )
            vecs.append(v.astype(bool))
        out.append(vecs)
    for j in range(n_datasets or 0):
        sizes = {len(out[i][j]) for i in range(len(out))}
        if len(sizes) != 1:
            raise ValueError(
                f"`errors`: dataset {j} has test sets of different sizes {sorted(sizes)}; "
                "all algorithms must be tested on the same examples."
            )
    return out


def pairwise_table(errors, *, names=None, method="poisson_binomial", datasets=None,
                   n_test=None, prior=1.0):
    r"""Compare every pair of algorithms over several datasets (Lacoste et al., Tables 2-4).

    Parameters
    ----------
    errors : mapping or sequence
        Per algorithm (a mapping ``name -> data`` or a sequence in the order of `names`):

        * for ``method="poisson_binomial"``: a sequence over datasets of 1-D arrays of
          per-example 0/1 losses (1 = misclassified) on each dataset's test set, the same
          examples in the same order for every algorithm (needed to count the examples
          only one of two classifiers gets wrong);
        * for ``"sign"`` and ``"wilcoxon"``: either of the above, or a 2-D array of shape
          (n_algorithms, n_datasets) of error rates (or counts with `n_test`).
    names : sequence of str, optional
        Algorithm names; taken from the mapping keys, else ``"A0", "A1", ...``.
    method : {"poisson_binomial", "sign", "wilcoxon"}, default="poisson_binomial"
    datasets : sequence of str, optional
        Dataset names, stored for display.
    n_test : array_like of int, shape (n_datasets,), optional
        Test-set sizes to turn error counts into rates (``"sign"``, ``"wilcoxon"``).
    prior : float, default=1.0
        Prior parameter of :func:`prob_better` and :func:`poisson_binomial_test`.

    Returns
    -------
    PairwiseTable
        ``names``, ``matrix`` (see :class:`PairwiseTable`), ``pvalue``, ``method``,
        ``datasets``; ``str(table)`` prints it.

    Raises
    ------
    ValueError
        If fewer than 2 algorithms are given, the datasets or test-set sizes do not match
        between algorithms, the losses are not 0/1 (Poisson binomial), a 2-D array of rates
        is given for the Poisson binomial test, or `method` is unknown.

    See Also
    --------
    poisson_binomial_test, sign_test, wilcoxon_test

    Notes
    -----
    For the Poisson binomial test, dataset :math:`d` gives
    :math:`p_d = I_{1/2}(k_{ij} + \tilde\alpha, k_{ji} + \tilde\alpha)` with
    :math:`k_{ij}` the number of test examples algorithm i gets wrong and j right; then
    ``matrix[i, j]`` = :func:`poisson_binomial_test` of these :math:`p_d`. Because
    :math:`I_{1/2}(a, b) = 1 - I_{1/2}(b, a)`, ``matrix[j, i] = 1 - matrix[i, j]``.
    The relation is not transitive (Section 5.1), so the table is not a ranking, and no
    correction for multiple comparisons is applied (Section 8).

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Section 7.

    Examples
    --------
    >>> rates = {"svm": [0.157, 0.140, 0.003], "ann": [0.157, 0.150, 0.012],
    ...          "parzen": [0.172, 0.140, 0.006]}
    >>> t = pairwise_table(rates, method="sign")
    >>> t.names, float(t.pvalue[0, 1])   # svm vs ann: 2 wins, 0 losses, 1 tie
    (('svm', 'ann', 'parzen'), 0.5)
    """
    check_choice(method, "method", PAIRWISE_METHODS)
    prior = check_positive(prior, "prior")
    if isinstance(errors, Mapping):
        if names is not None and tuple(names) != tuple(errors.keys()):
            raise ValueError("`names` must match the keys of `errors` when `errors` is a mapping.")
        names = tuple(str(k) for k in errors.keys())
        data = list(errors.values())
    else:
        data = list(errors) if not isinstance(errors, np.ndarray) else errors
        names = tuple(names) if names is not None else tuple(f"A{i}" for i in range(len(data)))
        if len(names) != len(data):
            raise ValueError(
                f"`names` has {len(names)} entries but `errors` has {len(data)} algorithms."
            )
    k = len(names)
    if k < 2:
        raise ValueError(f"`errors` must hold at least 2 algorithms, got {k}.")
    if len(set(names)) != k:
        raise ValueError(f"`names` must be distinct, got {names!r}.")

    # Decide the input form: a rectangular table of numbers (rates) or nested losses.
    rates = None
    try:
        arr = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is not None and arr.ndim == 2 and method != "poisson_binomial":
        rates = arr
    if rates is None:
        if arr is not None and arr.ndim == 2 and method == "poisson_binomial":
            raise ValueError(
                "`errors` holds one number per algorithm and dataset; the Poisson binomial "
                "test needs per-example 0/1 losses for every dataset (or use method='sign' "
                "or 'wilcoxon')."
            )
        losses = _as_per_example(data, names)
        n_datasets = len(losses[0])
        if n_datasets == 0:
            raise ValueError("`errors` must hold at least one dataset.")
        if method != "poisson_binomial":
            rates = np.array([[v.mean() for v in per_alg] for per_alg in losses])
    else:
        if not np.all(np.isfinite(rates)):
            raise ValueError("`errors` contains NaN or infinite values.")
        n_datasets = rates.shape[1]
        if n_datasets == 0:
            raise ValueError("`errors` must hold at least one dataset.")
        if n_test is not None:
            m = np.asarray(n_test, dtype=np.float64)
            if m.shape != (n_datasets,) or np.any(m <= 0):
                raise ValueError(
                    f"`n_test` must hold {n_datasets} test-set sizes > 0, got {m.tolist()}."
                )
            rates = rates / m
    if datasets is not None:
        datasets = tuple(str(d) for d in datasets)
        if len(datasets) != n_datasets:
            raise ValueError(f"`datasets` has {len(datasets)} names for {n_datasets} datasets.")

    matrix = np.full((k, k), np.nan)
    pvals = None
    if method == "poisson_binomial":
        np.fill_diagonal(matrix, 0.5)
        for i in range(k):
            for j in range(i + 1, k):
                p = np.array([
                    prob_better(
                        np.count_nonzero(losses[i][d] & ~losses[j][d]),
                        np.count_nonzero(losses[j][d] & ~losses[i][d]),
                        prior,
                    )
                    for d in range(n_datasets)
                ])
                prob = poisson_binomial_test(p, prior).probability
                matrix[i, j] = prob
                matrix[j, i] = 1.0 - prob
    else:
        pvals = np.full((k, k), np.nan)
        test = sign_test if method == "sign" else wilcoxon_test
        for i in range(k):
            for j in range(i + 1, k):
                r = test(rates[i], rates[j])
                pvals[i, j] = pvals[j, i] = r.pvalue
                if r.favours == "A":
                    matrix[i, j] = 1.0 - r.pvalue
                elif r.favours == "B":
                    matrix[j, i] = 1.0 - r.pvalue
    return PairwiseTable(names=names, matrix=matrix, pvalue=pvals, method=method, datasets=datasets)
