"""Comparing algorithms across problems: performance profiles and the AlgoPerf score
(Dolan & Moré 2002; Dahl et al. 2023) and the expected best result after k trials (Dodge
et al. 2019); the problems-by-algorithms table they share (`_table`). The Friedman test
with Nemenyi's critical difference is in `_rank_tests`, the Bayesian signed-rank test in
`_bayesian_signed_rank`.

References
----------
Dolan, E. D. & Moré, J. J. (2002). Benchmarking optimization software with performance
profiles. Mathematical Programming 91, 201-213.
Dahl, G. E. et al. (2023). Benchmarking neural network training algorithms.
arXiv:2306.07179.
Dodge, J., Gururangan, S., Card, D., Schwartz, R. & Smith, N. A. (2019). Show your work:
improved reporting of experimental results. EMNLP-IJCNLP 2019, 2185-2194.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fastnet._docstrings import fill
from fastnet._validation import as_generator, check_float, check_int, check_probability

from ._common import _as_floats, _check_sample, _FrozenResult

__all__ = ["PerformanceProfiles", "ExpectedBest", "performance_profiles", "expected_best"]

#: Rows of Monte Carlo samples evaluated at once (memory bound) by
#: `bayesian_signed_rank`, and a scale of `expected_best`'s bootstrap blocks.
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


#: The first attributes of a result over an algorithms x problems table.
TABLE_ATTRIBUTES = """
Attributes
----------
algorithms : tuple of str
    Row names.
problems : tuple of str
    Column names.
"""


# ------------------------------------------------------------------ performance profiles

@fill(table_attributes=TABLE_ATTRIBUTES)
class PerformanceProfiles(_FrozenResult):
    r"""Result of :func:`performance_profiles`.

    {{table_attributes}}
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

class ExpectedBest(_FrozenResult):
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
