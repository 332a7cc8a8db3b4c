"""Comparing algorithms across problems: performance profiles and the AlgoPerf score
(Dolan & Moré 2002; Dahl et al. 2023), the expected best result after k trials (Dodge et
al. 2019), the Friedman test with Nemenyi's critical difference (Demšar 2006), and the
Bayesian signed-rank test with a region of practical equivalence (Benavoli et al. 2017).

References
----------
Dolan, E. D. & Moré, J. J. (2002). Benchmarking optimization software with performance
profiles. Mathematical Programming 91, 201-213.
Dahl, G. E. et al. (2023). Benchmarking neural network training algorithms.
arXiv:2306.07179.
Dodge, J., Gururangan, S., Card, D., Schwartz, R. & Smith, N. A. (2019). Show your work:
improved reporting of experimental results. EMNLP-IJCNLP 2019, 2185-2194.
Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7,
1-30.
Benavoli, A., Corani, G., Demšar, J. & Zaffalon, M. (2017). Time for a change: a tutorial
for comparing multiple classifiers through Bayesian analysis. JMLR 18(77), 1-36.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from fastnet._validation import as_generator, check_float, check_int, check_probability

from ._common import _as_floats, _check_sample, _ReprMixin

__all__ = ["PerformanceProfiles", "ExpectedBest", "FriedmanNemenyi", "BayesianSignedRank",
           "performance_profiles", "expected_best", "friedman_nemenyi", "nemenyi_q",
           "bayesian_signed_rank"]

#: Rows of Monte Carlo samples `bayesian_signed_rank` evaluates at once (memory bound).
_CHUNK = 8192


def _table(costs, algorithms, problems, *, allow_inf):
    """A table algorithm x problem as (values (a, p), algorithm names, problem names).

    `costs` is a 2-D array (rows: algorithms), a mapping algorithm -> sequence of values
    (one per problem), or a mapping algorithm -> {problem: value} (the same problems for
    every algorithm; their order is that of the first)."""
    if isinstance(costs, Mapping):
        if algorithms is not None:
            raise ValueError("Give `algorithms` or a mapping in `costs`, not both.")
        algorithms = [str(k) for k in costs]
        rows = list(costs.values())
        if rows and all(isinstance(r, Mapping) for r in rows):
            if problems is not None:
                raise ValueError("Give `problems` or mappings problem -> value in `costs`, "
                                 "not both.")
            problems = [str(p) for p in rows[0]]
            for name, row in zip(algorithms, rows):
                if sorted(map(str, row)) != sorted(problems):
                    raise ValueError(f"`costs[{name!r}]` has problems {sorted(map(str, row))}, "
                                     f"the first algorithm {sorted(problems)}.")
            by_name = [{str(p): v for p, v in row.items()} for row in rows]
            rows = [[row[p] for p in problems] for row in by_name]
        values = _as_floats(rows, "costs", "a table of numbers (algorithm x problem)")
    else:
        values = _as_floats(costs, "costs", "a table of numbers (algorithm x problem)")
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
        raise ValueError("`costs` must be a table algorithm x problem with at least one of "
                         f"each, got shape {values.shape}.")
    a, p = values.shape
    algorithms = [str(i + 1) for i in range(a)] if algorithms is None else [str(x) for x in algorithms]
    problems = [str(j + 1) for j in range(p)] if problems is None else [str(x) for x in problems]
    if len(algorithms) != a:
        raise ValueError(f"`algorithms` has {len(algorithms)} names for {a} rows of `costs`.")
    if len(problems) != p:
        raise ValueError(f"`problems` has {len(problems)} names for {p} columns of `costs`.")
    if len(set(algorithms)) != a:
        raise ValueError(f"`algorithms` must be distinct, got {algorithms}.")
    if len(set(problems)) != p:
        raise ValueError(f"`problems` must be distinct, got {problems}.")
    if np.isnan(values).any():
        raise ValueError("`costs` contains NaN; mark a missed target with inf.")
    if not allow_inf and not np.isfinite(values).all():
        raise ValueError("`costs` must be finite.")
    if np.isneginf(values).any():
        raise ValueError("`costs` contains -inf.")
    return values, tuple(algorithms), tuple(problems)


# ------------------------------------------------------------------ performance profiles

@dataclass(frozen=True, repr=False)
class PerformanceProfiles(_ReprMixin):
    r"""Result of :func:`performance_profiles`.

    Attributes
    ----------
    algorithms : tuple of str
        Row names.
    problems : tuple of str
        Column names.
    ratios : ndarray, shape (a, p)
        Performance ratios :math:`r_{s,p} = t_{s,p} / \min_s t_{s,p}`, each >= 1; inf where
        the algorithm missed the target (or every algorithm did, or the best cost is 0 and
        this one's is not).
    scores : ndarray, shape (a,)
        The integrated score of each algorithm, in [0, 1].
    r_max : float
        Upper limit of the integral.
    all_missed : ndarray of bool, shape (p,)
        Problems every algorithm missed (counted as missed by each).
    """

    algorithms: tuple
    problems: tuple
    ratios: np.ndarray
    scores: np.ndarray
    r_max: float
    all_missed: np.ndarray

    def rho(self, tau):
        r"""The profiles at `tau`: :math:`\rho_s(\tau)`, the share of problems with
        :math:`r_{s,p} \le \tau`.

        Parameters
        ----------
        tau : float or array_like
            Ratios at which to evaluate (any real numbers; below 1 every profile is 0).

        Returns
        -------
        ndarray, shape (a,) + shape of `tau`
            One profile per algorithm (rows in the order of `algorithms`).
        """
        t = np.asarray(tau, dtype=np.float64)
        r = self.ratios[(...,) + (None,) * t.ndim]  # (a, p, 1, ...) against t
        return (np.isfinite(r) & (r <= t)).mean(axis=1)   # a miss never counts, even at inf

    @property
    def taus(self):
        """The ratios at which some profile steps up: the distinct finite ratios, sorted
        (1 first). Every profile is constant between two of them and after the last."""
        r = self.ratios[np.isfinite(self.ratios)]
        return np.unique(r)

    @property
    def won(self):
        """Share of problems on which each algorithm has the least cost, ties counted as
        a win for every tied algorithm: ``rho(1)``."""
        return self.rho(1.0)


def performance_profiles(costs, *, algorithms=None, problems=None, r_max=4.0):
    r"""Performance profiles (Dolan & Moré 2002) and the integrated score of AlgoPerf
    (Dahl et al. 2023).

    Parameters
    ----------
    costs : array_like, shape (a, p), or mapping
        A table algorithm x problem of costs, lower is better (a time to target, an
        error), each >= 0; ``inf`` marks a missed target. A mapping gives
        ``{algorithm: costs per problem}`` or ``{algorithm: {problem: cost}}``.
    algorithms : sequence of str, optional
        Names of the rows (default ``"1"``, ``"2"``, ...); not with a mapping.
    problems : sequence of str, optional
        Names of the columns (default ``"1"``, ``"2"``, ...); not with mappings per
        algorithm.
    r_max : float, default=4.0
        Upper limit of the integral, > 1 (AlgoPerf's 4: an algorithm more than four
        times slower than the best one counts as having missed).

    Returns
    -------
    PerformanceProfiles
        The ratios, the scores and the profiles (``rho(tau)``, ``taus``, ``won``).

    Raises
    ------
    ValueError
        If `costs` is not a table of at least one algorithm and problem, holds NaN, a
        negative value or ``-inf``, the names do not match, or `r_max` <= 1.

    Notes
    -----
    With :math:`t_{s,p}` the cost of algorithm :math:`s` on problem :math:`p`, the
    performance ratio is :math:`r_{s,p} = t_{s,p} / \min_{s'} t_{s',p}` and the profile
    of :math:`s` is

    .. math:: \rho_s(\tau) = \frac{1}{P}\, \big|\{p : r_{s,p} \le \tau\}\big|,

    a step function of :math:`\tau`. AlgoPerf's score is its mean over
    :math:`[1, r_{max}]`,

    .. math:: B_s = \frac{1}{r_{max} - 1} \int_1^{r_{max}} \rho_s(\tau)\, d\tau
              = \frac{1}{P} \sum_p \frac{\max(0,\; r_{max} - r_{s,p})}{r_{max} - 1},

    computed exactly from the steps (each problem contributes the length of
    :math:`[r_{s,p}, r_{max}]`), without a grid. A score of 1 means best on every
    problem; 0 means never within :math:`r_{max}` of the best.

    Conventions where the ratio is not defined by the formula:

    * **Ties**: every algorithm whose cost equals the least one has ratio 1, so
      :math:`\rho_s(1)` is the share of problems :math:`s` won, a tie counted as a win
      for each tied algorithm (``won``).
    * **A problem every algorithm missed** stays in :math:`P` with ratio inf for every
      algorithm: it lowers every profile alike and no profile reaches 1
      (``all_missed`` names these problems; drop their columns to leave them out).
    * **Zero costs**: where the least cost is 0, the algorithms at 0 have ratio 1 and
      the others ratio inf (no factor brings them within reach of 0). For errors that
      can be 0, consider adding a constant (a shift) before comparing.

    References
    ----------
    .. [1] E. D. Dolan and J. J. Moré, "Benchmarking optimization software with
       performance profiles", Mathematical Programming 91, 201-213, 2002.
    .. [2] G. E. Dahl et al., "Benchmarking neural network training algorithms",
       arXiv:2306.07179, 2023 (Section 4.5: performance profiles and the score).

    Examples
    --------
    >>> import numpy as np
    >>> r = performance_profiles({"A": [1.0, 2.0, np.inf], "B": [2.0, 2.0, 3.0]})
    >>> r.ratios.tolist()
    [[1.0, 1.0, inf], [2.0, 1.0, 1.0]]
    >>> r.won.tolist()                # A wins one problem, ties one; B ties one, wins one
    [0.6666666666666666, 0.6666666666666666]
    >>> r.rho(2.0).tolist()
    [0.6666666666666666, 1.0]
    >>> r.scores.round(4).tolist()    # A: (3 + 3 + 0) / 3 / 3; B: (2 + 3 + 3) / 3 / 3
    [0.6667, 0.8889]
    """
    values, algorithms, problems = _table(costs, algorithms, problems, allow_inf=True)
    if (values < 0).any():
        raise ValueError("`costs` must be >= 0 (a ratio of costs needs them).")
    r_max = check_float(r_max, "r_max", low=1.0, low_open=True)
    best = values.min(axis=0)
    missed = ~np.isfinite(best)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = values / best
    ratios[values == best] = 1.0
    ratios[:, missed] = np.inf
    ratios[~np.isfinite(values)] = np.inf
    scores = (np.clip(r_max - ratios, 0.0, None) / (r_max - 1.0)).mean(axis=1)
    return PerformanceProfiles(algorithms, problems, ratios, scores, r_max, missed)


# ------------------------------------------------------------------ expected best of k trials

@dataclass(frozen=True, repr=False)
class ExpectedBest(_ReprMixin):
    """Result of :func:`expected_best`.

    Attributes
    ----------
    k : ndarray of int, shape (m,)
        Numbers of trials.
    expected : ndarray, shape (m,)
        The expected best result of `k` trials drawn from the observed ones.
    std : ndarray, shape (m,)
        Its standard deviation over draws of `k` trials (the spread of the best of k,
        not an error of the estimate).
    low, high : ndarray, shape (m,), or None
        The bootstrap band of `expected` (None if ``n_boot=0``).
    lower_is_better : bool
        True: the best is the minimum; False: the maximum.
    confidence : float
        Coverage of the band.
    n_boot : int
        Bootstrap resamples.
    n : int
        Number of trial results.
    """

    k: np.ndarray
    expected: np.ndarray
    std: np.ndarray
    low: np.ndarray | None
    high: np.ndarray | None
    lower_is_better: bool
    confidence: float
    n_boot: int
    n: int


def _best_weights(n, k, lower_is_better):
    """Probability that the best of `k` draws (with replacement) from `n` sorted values
    is the i-th value: an (n, m) matrix, columns summing to 1."""
    i = np.arange(1, n + 1, dtype=np.float64)[:, None]
    kk = k.astype(np.float64)[None, :]
    if lower_is_better:   # min of k is v_(i): all >= v_(i), not all >= v_(i+1)
        return ((n - i + 1) / n) ** kk - ((n - i) / n) ** kk
    return (i / n) ** kk - ((i - 1) / n) ** kk   # max of k: F(v)^k - F(v-)^k


def expected_best(results, *, lower_is_better=True, k=None, n_boot=1000, confidence=0.95, seed=0):
    r"""Expected best result after k trials, from n observed trials (Dodge et al. 2019).

    Parameters
    ----------
    results : array_like, shape (n,)
        Finite results of n trials (say the validation errors of n configurations drawn
        by random search).
    lower_is_better : bool, default=True
        True for errors and times (the expected minimum of k), False for accuracies (the
        expected maximum).
    k : int or sequence of int, optional
        Numbers of trials: all of 1..k for an int, these for a sequence, 1..n by default.
        Values above n extrapolate the empirical distribution.
    n_boot : int, default=1000
        Bootstrap resamples of the n results for the band; 0 for none.
    confidence : float, default=0.95
        Coverage of the percentile bootstrap band, in (0, 1).
    seed : int or numpy.random.Generator, default=0
        Seed of the resampling.

    Returns
    -------
    ExpectedBest
        ``k``, ``expected``, ``std`` and the band ``low``, ``high``.

    Raises
    ------
    ValueError
        If `results` is empty, not 1-D or holds NaN or inf, or `k`, `n_boot` or
        `confidence` is out of range.

    Notes
    -----
    With :math:`\hat F` the empirical distribution function of the n results, k trials
    drawn from it independently (with replacement) have the expected maximum

    .. math:: \mathbb{E}[\max_k] = \sum_v v \,\big(\hat F(v)^k - \hat F(v^-)^k\big),

    the sum over the distinct values :math:`v` (Dodge et al. 2019, Eq. 1), and the
    expected minimum :math:`\sum_v v\,\big((1 - \hat F(v^-))^k - (1 - \hat F(v))^k\big)`.
    The standard deviation comes from the second moment of the same distribution.

    The band: the n results are resampled with replacement ``n_boot`` times, the curve
    is computed for each resample, and the band holds the central `confidence` share of
    the curves at each k (a percentile bootstrap; Tang et al. 2020 discuss why such an
    interval is wanted). It shows how much the curve owes to the particular n trials.

    References
    ----------
    .. [1] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Show your
       work: improved reporting of experimental results", EMNLP-IJCNLP 2019, 2185-2194.
    .. [2] R. Tang, J. Lee, J. Xin, X. Liu, Y. Yu and J. Lin, "Showing your work
       doesn't always work", ACL 2020, 2766-2772.

    Examples
    --------
    >>> r = expected_best([3.0, 1.0, 2.0], n_boot=0)
    >>> r.expected.round(4).tolist()   # k = 1: the mean; k = 2: (5 * 1 + 3 * 2 + 1 * 3) / 9
    [2.0, 1.5556, 1.3333]
    """
    x = _check_sample(results, "results", min_size=1)
    n = x.size
    if k is None:
        ks = np.arange(1, n + 1)
    elif np.ndim(k) == 0:
        ks = np.arange(1, check_int(k, "k", minimum=1) + 1)
    else:
        ks = np.array([check_int(v, "k", minimum=1) for v in k], dtype=np.int64)
        if ks.size == 0:
            raise ValueError("`k` must hold at least one number of trials.")
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    confidence = check_probability(confidence, "confidence")
    lower_is_better = bool(lower_is_better)
    w = _best_weights(n, ks, lower_is_better)
    v = np.sort(x)
    expected = v @ w
    std = np.sqrt(np.einsum("ik,ik->k", (v[:, None] - expected[None, :]) ** 2, w))
    low = high = None
    if n_boot:
        rng = as_generator(seed)
        curves = np.empty((n_boot, ks.size))
        step = max(1, _CHUNK * 64 // max(n, ks.size))
        for start in range(0, n_boot, step):
            stop = min(n_boot, start + step)
            sample = np.sort(x[rng.integers(0, n, size=(stop - start, n))], axis=1)
            curves[start:stop] = sample @ w
        tail = (1.0 - confidence) / 2
        low, high = np.quantile(curves, [tail, 1.0 - tail], axis=0)
    return ExpectedBest(ks, expected, std, low, high, lower_is_better, confidence, n_boot, n)


# ------------------------------------------------------------------ Friedman and Nemenyi

@dataclass(frozen=True, repr=False)
class FriedmanNemenyi(_ReprMixin):
    r"""Result of :func:`friedman_nemenyi`.

    Attributes
    ----------
    algorithms : tuple of str
        Row names.
    problems : tuple of str
        Column names.
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


# ------------------------------------------------------------------ Bayesian signed-rank test

@dataclass(frozen=True, repr=False)
class BayesianSignedRank(_ReprMixin):
    r"""Result of :func:`bayesian_signed_rank`.

    Attributes
    ----------
    p_a_better : float
        Posterior probability that "A better by more than the ROPE" is the most probable
        of the three regions.
    p_equivalent : float
        The same for the ROPE (practical equivalence).
    p_b_better : float
        The same for "B better by more than the ROPE".
    rope : float
        Half-width of the region of practical equivalence.
    prior : float
        Strength :math:`s` of the Dirichlet process prior, its pseudo-observation at 0.
    n_samples : int
        Monte Carlo samples of the posterior.
    samples : ndarray, shape (n_samples, 3)
        The sampled probabilities :math:`(\theta_A, \theta_{rope}, \theta_B)` of the
        three regions (each row sums to 1).
    """

    p_a_better: float
    p_equivalent: float
    p_b_better: float
    rope: float
    prior: float
    n_samples: int
    samples: np.ndarray

    _repr_skip = ("samples",)


def _heaviside(x):
    """1 above 0, 1/2 at 0, 0 below."""
    return (x > 0).astype(np.float64) + 0.5 * (x == 0)


def bayesian_signed_rank(a, b, *, rope, lower_is_better=True, prior=0.5, n_samples=50000, seed=0):
    r"""Bayesian signed-rank test with a region of practical equivalence (Benavoli et al.
    2014, 2017), as baycomp implements it.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Results of algorithms A and B on the same n problems (finite).
    rope : float
        Half-width of the region of practical equivalence, >= 0, in the results' unit:
        differences within ``[-rope, rope]`` count as no difference in practice (say 1
        percentage point of error). 0 for none.
    lower_is_better : bool, default=True
        True for errors and times, False for accuracies.
    prior : float, default=0.5
        Strength :math:`s` of the Dirichlet process prior (>= 0; 0 drops it).
    n_samples : int, default=50000
        Monte Carlo samples of the posterior (the probabilities are shares of them, so
        their error is at most :math:`0.5/\sqrt{n\_samples}`: 0.0022 at 50000).
    seed : int or numpy.random.Generator, default=0
        Seed of the samples.

    Returns
    -------
    BayesianSignedRank
        ``p_a_better``, ``p_equivalent``, ``p_b_better`` (summing to 1) and the samples.

    Raises
    ------
    ValueError
        If `a` and `b` differ in length, are empty or hold NaN or inf, or `rope`,
        `prior` or `n_samples` is out of range.

    Notes
    -----
    Let :math:`z_i` be the differences in A's favour (``b - a`` when lower is better,
    ``a - b`` otherwise). The **prior** is a Dirichlet process of strength
    :math:`s` = `prior` whose base measure is a point mass at :math:`z_0 = 0`, a
    pseudo-observation of no difference (inside the ROPE when `rope` > 0). The posterior
    is the Dirichlet process with weights
    :math:`w \sim \mathrm{Dirichlet}(s, 1, \dots, 1)` on :math:`z_0, z_1, \dots, z_n`;
    for each sample of :math:`w`, the probabilities of the three regions of the signed
    rank (Walsh average :math:`(z_i + z_j)/2`, :math:`i = j` included) are

    .. math:: \theta_A = \sum_{i,j} w_i w_j\, H(z_i + z_j - 2r), \quad
              \theta_B = \sum_{i,j} w_i w_j\, H(-z_i - z_j - 2r), \quad
              \theta_{rope} = 1 - \theta_A - \theta_B,

    :math:`r` = `rope`, :math:`H` the Heaviside step with :math:`H(0) = 1/2`. As in
    baycomp, the reported probabilities are the shares of the posterior samples in
    which each region is the most probable of the three (a sample where two regions tie
    exactly counts half for each; baycomp gives it to the first). Benavoli et al. read
    a probability above 0.95 as a decision; otherwise the data do not decide.

    References
    ----------
    .. [1] A. Benavoli, G. Corani, F. Mangili, M. Zaffalon and F. Ruggeri, "A Bayesian
       Wilcoxon signed-rank test based on the Dirichlet process", ICML 2014, 1026-1034.
    .. [2] A. Benavoli, G. Corani, J. Demšar and M. Zaffalon, "Time for a change: a
       tutorial for comparing multiple classifiers through Bayesian analysis", Journal
       of Machine Learning Research 18(77), 1-36, 2017.
    .. [3] J. Demšar, A. Benavoli and G. Corani, baycomp (``SignedRankTest``),
       https://github.com/janezd/baycomp.

    Examples
    --------
    >>> r = bayesian_signed_rank([1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 4.0, 5.0, 6.0, 7.0], rope=0.5)
    >>> round(r.p_a_better, 2), round(r.p_equivalent, 2), round(r.p_b_better, 2)
    (1.0, 0.0, 0.0)
    """
    x = _check_sample(a, "a", min_size=1)
    y = _check_sample(b, "b", min_size=1)
    if x.size != y.size:
        raise ValueError(f"`a` and `b` must have the same length, got {x.size} and {y.size}.")
    rope = check_float(rope, "rope", low=0.0)
    prior = check_float(prior, "prior", low=0.0)
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    rng = as_generator(seed)
    z = (y - x) if lower_is_better else (x - y)
    weights = np.ones(z.size)
    if prior > 0:
        z = np.concatenate([[0.0], z])
        weights = np.concatenate([[prior], weights])
    sums = z[:, None] + z[None, :]
    above = _heaviside(sums - 2.0 * rope)    # A better
    below = _heaviside(-sums - 2.0 * rope)   # B better
    theta = np.empty((n_samples, 3))
    for start in range(0, n_samples, _CHUNK):
        stop = min(n_samples, start + _CHUNK)
        w = rng.dirichlet(weights, size=stop - start)
        theta[start:stop, 0] = ((w @ above) * w).sum(axis=1)
        theta[start:stop, 2] = ((w @ below) * w).sum(axis=1)
    theta[:, 1] = 1.0 - theta[:, 0] - theta[:, 2]
    top = theta == theta.max(axis=1, keepdims=True)
    share = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)
    return BayesianSignedRank(float(share[0]), float(share[1]), float(share[2]), rope, prior,
                              n_samples, theta)
