"""Lawrence et al. (1997) descriptive statistics of a distribution of trial results."""

from __future__ import annotations


import numpy as np
from scipy import special, stats

from ._common import _FrozenResult, _check_sample, _stephens_pvalue
from fastnet._validation import check_int

__all__ = ["Description", "describe", "segment_points"]

#: Fraction cut from *each* end for the trimmed mean (Lawrence's "5% trimmed mean").
TRIM_FRACTION = 0.05
#: Default number of Monte Carlo samples for the Lilliefors p-value.
LILLIEFORS_MC_SAMPLES = 9999
#: Most Monte Carlo samples accepted (about 20 s of simulation at the largest size).
MAX_MC_SAMPLES = 10**6
#: Largest sample size simulated by the Lilliefors Monte Carlo. Larger samples are
#: compared through Stephens' (1974) modified statistic
#: :math:`D(\sqrt n - 0.01 + 0.85/\sqrt n)`, whose distribution hardly depends on
#: ``n``, with samples of this size; so the cost is bounded (about 0.2 s for 9999
#: samples) instead of growing with ``n`` (a minute for ``n = 10**5``).
LILLIEFORS_MAX_SIMULATED_SIZE = 1000
#: Simulated values held in memory at once by the Lilliefors Monte Carlo (~8 MB).
_MC_BATCH_VALUES = 1 << 20


def _median_sorted(xs):
    """Median of an already sorted 1-D array (Lawrence eq. 2)."""
    n = xs.size
    h = n // 2
    if n % 2:
        return float(xs[h])
    return 0.5 * (float(xs[h - 1]) + float(xs[h]))


def _halves(xs):
    """Lower and upper halves of a sorted array about its median.

    For odd ``n`` the middle value (the median itself) belongs to neither half, so both
    halves have ``(n - 1) / 2`` values: "split into two equal groups about the median".
    """
    h = xs.size // 2
    return xs[:h], xs[xs.size - h:]


def _split_points(xs, depth):
    """Interior division points of a sorted array, split `depth` times at medians."""
    if depth == 0 or xs.size == 0:
        return []
    lower, upper = _halves(xs)
    return _split_points(lower, depth - 1) + [_median_sorted(xs)] + _split_points(upper, depth - 1)


def segment_points(sample, n_segments=4):
    r"""Division points of a sample into equal-count segments by repeated medians.

    The box-whiskers plot divides the sorted data into four segments at the median and
    the medians of the two halves (Q1, Q3). Lawrence et al.'s *extended* box-whiskers
    plot divides each quarter again at its own median, giving eight segments.

    Parameters
    ----------
    sample : array_like, shape (n,)
        Finite values.
    n_segments : {2, 4, 8, 16, ...}, default=4
        Number of segments, a power of two >= 2.

    Returns
    -------
    ndarray, shape (n_segments + 1,)
        ``[min, ..., max]``: the minimum, the interior division points in increasing
        order and the maximum. For ``n_segments=4`` this is ``[min, Q1, median, Q3, max]``.

    Raises
    ------
    ValueError
        If `sample` is not 1-D, holds NaN/inf, or has fewer than ``n_segments / 2``
        values; if `n_segments` is not a power of two >= 2.

    See Also
    --------
    describe : the quartiles Q1 and Q3 computed the same way.

    Notes
    -----
    A part with an even number of values is split between its two middle values; a part
    with an odd number ``m`` has its median at the middle value, which then belongs to
    neither half, so both halves have ``(m - 1)/2`` values. The median of a part is
    Lawrence's eq. (2): the middle value, or the mean of the two middle values.

    References
    ----------
    .. [1] S. Lawrence, A. D. Back, A. C. Tsoi, C. L. Giles, "On the distribution of
       performance from multiple neural network trials", IEEE Trans. Neural Networks
       8(6), 1997. Sections 2.1 (quartiles as medians of the halves) and 4 (extended
       box-whiskers plots).

    Examples
    --------
    >>> segment_points([1, 2, 3, 4, 5, 6, 7, 8], n_segments=4).tolist()
    [1.0, 2.5, 4.5, 6.5, 8.0]
    >>> segment_points(range(1, 10), n_segments=8).tolist()  # halves 1..4 | 6..9
    [1.0, 1.5, 2.5, 3.5, 5.0, 6.5, 7.5, 8.5, 9.0]
    """
    n_segments = check_int(n_segments, "n_segments", minimum=2)
    depth = int(np.log2(n_segments))
    if 2**depth != n_segments:
        raise ValueError(f"`n_segments` must be a power of two >= 2, got {n_segments}.")
    min_size = 2 ** (depth - 1)
    x = _check_sample(sample, "sample", min_size=min_size)
    xs = np.sort(x)
    inner = _split_points(xs, depth)
    return np.array([xs[0], *inner, xs[-1]], dtype=np.float64)


class Description(_FrozenResult):
    r"""Descriptive statistics of one sample of trial results (Lawrence et al. 1997).

    Attributes
    ----------
    n : int
        Number of values.
    mean : float
        Arithmetic mean.
    std : float
        Standard deviation with ``n - 1`` in the denominator.
    median : float
        Middle value, or the mean of the two middle values.
    q1, q3 : float
        First and third quartiles: the medians of the lower and upper halves (for odd
        ``n`` the median itself is in neither half).
    iqr : float
        ``q3 - q1``.
    min, max : float
        Extremes.
    trimmed_mean : float
        Mean after cutting ``int(0.05 n)`` values from each end
        (:func:`scipy.stats.trim_mean` with proportion 0.05).
    mad : float
        Median absolute deviation from the median, unscaled:
        :math:`\mathrm{med}_i |x_i - \mathrm{med}(x)|`.
    ks_statistic : float
        Kolmogorov-Smirnov distance :math:`D = \sup_x |S(x) - \Phi(x)|` between the
        empirical CDF of the standardised sample :math:`z_i = (x_i - \bar x)/s` and the
        standard normal CDF. NaN for a constant sample.
    ks_pvalue : float
        :math:`Q_{KS}((\sqrt{n} + 0.12 + 0.11/\sqrt{n}) D)` as in Lawrence's eq. (4).
    ks_pvalue_exact : float
        Exact p-value of the one-sample KS test of ``z`` against N(0, 1) by
        :func:`scipy.stats.kstest` (which, like ``ks_pvalue``, treats the mean and sd as known).
    lilliefors_pvalue : float
        Lilliefors p-value: Monte Carlo p-value of ``D`` when the mean and sd are
        estimated from the sample (the procedure of :func:`scipy.stats.goodness_of_fit`
        with ``statistic="ks"``, run in batches). NaN if skipped.
    """

    n: int
    mean: float
    std: float
    median: float
    q1: float
    q3: float
    iqr: float
    min: float
    max: float
    trimmed_mean: float
    mad: float
    ks_statistic: float
    ks_pvalue: float
    ks_pvalue_exact: float
    lilliefors_pvalue: float

    def as_dict(self):
        """Return the fields as an ordered ``dict`` (for tables and result files)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _ks_distance_rows(z):
    """KS distance to N(0, 1) of each row of `z` (rows already standardised)."""
    z = np.sort(z, axis=-1)
    n = z.shape[-1]
    cdf = special.ndtr(z)
    i = np.arange(1, n + 1)
    d_plus = np.max(i / n - cdf, axis=-1)
    d_minus = np.max(cdf - (i - 1) / n, axis=-1)
    return np.maximum(d_plus, d_minus)


def _stephens_modifier(n):
    """Stephens' (1974) factor making the distribution of D (normal, mean and sd
    estimated) nearly independent of n."""
    rn = np.sqrt(n)
    return rn - 0.01 + 0.85 / rn


def _lilliefors_pvalue(d, n, n_mc, rng):
    """Monte Carlo p-value of the KS distance `d` with estimated mean and sd."""
    if n > LILLIEFORS_MAX_SIMULATED_SIZE:  # same modified statistic, smaller samples
        m = LILLIEFORS_MAX_SIMULATED_SIZE
        return _lilliefors_pvalue(d * _stephens_modifier(n) / _stephens_modifier(m), m,
                                  n_mc, rng)
    batch = max(1, _MC_BATCH_VALUES // n)
    exceed = 0
    done = 0
    while done < n_mc:
        m = min(batch, n_mc - done)
        sim = rng.standard_normal((m, n))
        sim -= sim.mean(axis=1, keepdims=True)
        sim /= sim.std(axis=1, ddof=1, keepdims=True)
        # same tolerance as scipy's Monte Carlo tests for ties of the statistic
        exceed += int(np.count_nonzero(_ks_distance_rows(sim) >= d * (1 - 1e-14)))
        done += m
    return (exceed + 1) / (n_mc + 1)


def _standardised_ks(x):
    """KS distance of the standardised sample from N(0, 1), with both p-values.

    Returns ``(d, p_stephens, p_exact)``; all NaN for a constant sample.
    """
    sd = x.std(ddof=1)
    if not sd > 0 or x.min() == x.max():     # (equal values: sd is 0 or a rounding residue)
        return np.nan, np.nan, np.nan
    z = (x - x.mean()) / sd
    res = stats.kstest(z, "norm", method="exact")
    d = float(res.statistic)
    return d, _stephens_pvalue(d, x.size), float(res.pvalue)


def describe(sample, *, lilliefors=True, n_mc_samples=LILLIEFORS_MC_SAMPLES, seed=0):
    r"""Summarise a sample of trial results the way Lawrence et al. (1997) recommend.

    Parameters
    ----------
    sample : array_like, shape (n,)
        Finite results of independent trials (e.g. test errors), ``n >= 3``.
    lilliefors : bool, default=True
        Compute the Monte Carlo Lilliefors p-value (about 0.05 s for 9999 samples of
        size 100, at most about 0.2 s: see Notes). If False, ``lilliefors_pvalue``
        is NaN.
    n_mc_samples : int, default=9999
        Monte Carlo samples for the Lilliefors p-value, at most ``MAX_MC_SAMPLES``
        (10**6).
    seed : int or numpy.random.Generator, default=0
        Seed of the Monte Carlo draws; fixed by default so that the result is
        reproducible.

    Returns
    -------
    Description
        A frozen dataclass with ``n, mean, std, median, q1, q3, iqr, min, max,
        trimmed_mean, mad, ks_statistic, ks_pvalue, ks_pvalue_exact, lilliefors_pvalue``.

    Raises
    ------
    ValueError
        If `sample` is not 1-D, holds NaN or infinite values, or has fewer than 3 values;
        if `n_mc_samples` < 1 or above ``MAX_MC_SAMPLES``.

    See Also
    --------
    segment_points : the division points of the (extended) box-whiskers plot.
    scipy.stats.describe, scipy.stats.kstest, scipy.stats.goodness_of_fit

    Notes
    -----
    *Quartiles.* Q1 and Q3 are the medians of the lower and upper halves of the sorted
    sample ("split into two equal groups about the median"). For odd ``n`` the median
    value belongs to neither half. This is Tukey's definition without the median and
    differs from :func:`numpy.percentile` interpolation.

    *Normality.* The sample is standardised with its mean and ``(n - 1)`` standard
    deviation, :math:`z_i = (x_i - \bar x)/s`, and compared with the standard normal CDF
    :math:`\Phi`:

    .. math::

        D = \sup_x |S_n(x) - \Phi(x)|, \qquad
        P = Q_{KS}\big((\sqrt{n} + 0.12 + 0.11/\sqrt{n})\, D\big), \qquad
        Q_{KS}(x) = 2 \sum_{j \ge 1} (-1)^{j-1} e^{-2 j^2 x^2}.

    ``P`` (``ks_pvalue``, Lawrence's eq. 4, after Stephens 1974) and the exact KS p-value
    (``ks_pvalue_exact``) both treat the mean and sd as known; because they were estimated
    from the same data, both are conservative (too large). ``lilliefors_pvalue`` accounts for
    the estimation by simulating ``D`` for ``M = n_mc_samples`` standard normal samples
    of the same size, each standardised by its own mean and ``(n - 1)`` sd:
    :math:`p = (1 + \#\{D^{*}_m \ge D\}) / (M + 1)`. This is what
    :func:`scipy.stats.goodness_of_fit` computes for ``stats.norm`` with
    ``statistic="ks"``; it is done here in batches because scipy holds all
    ``M x n`` simulated values at once (gigabytes for ``n`` in the thousands). For
    ``n`` above ``LILLIEFORS_MAX_SIMULATED_SIZE`` (1000) the simulated samples have that
    size ``m`` and are compared through Stephens' (1974) modified statistic, whose
    distribution hardly depends on the sample size:
    :math:`D^{*}_m (\sqrt m - 0.01 + 0.85/\sqrt m) \ge D (\sqrt n - 0.01 + 0.85/\sqrt n)`;
    the cost stays bounded (O(n log n) for the rest of the summary). For a constant
    sample the three normality fields are NaN.

    References
    ----------
    .. [1] S. Lawrence, A. D. Back, A. C. Tsoi, C. L. Giles, "On the distribution of
       performance from multiple neural network trials", IEEE Trans. Neural Networks
       8(6), 1997. Sections 2.1-2.3.
    .. [2] M. A. Stephens, "EDF statistics for goodness of fit and some comparisons",
       J. American Statistical Association 69, 1974.
    .. [3] H. W. Lilliefors, "On the Kolmogorov-Smirnov test for normality with mean
       and variance unknown", J. American Statistical Association 62, 1967.

    Examples
    --------
    >>> d = describe([1.0, 2.0, 3.0, 4.0, 10.0], lilliefors=False)
    >>> d.median, d.q1, d.q3, d.iqr          # halves (1, 2) and (4, 10)
    (3.0, 1.5, 7.0, 5.5)
    >>> round(d.std, 4)
    3.5355
    """
    x = _check_sample(sample, "sample", min_size=3)
    n_mc_samples = check_int(n_mc_samples, "n_mc_samples", minimum=1)
    if n_mc_samples > MAX_MC_SAMPLES:
        raise ValueError(f"`n_mc_samples` must be at most MAX_MC_SAMPLES = {MAX_MC_SAMPLES}, "
                         f"got {n_mc_samples if n_mc_samples < 10**30 else 'a larger integer'}.")
    xs = np.sort(x)
    lower, upper = _halves(xs)
    q1, q3 = _median_sorted(lower), _median_sorted(upper)
    median = _median_sorted(xs)
    d, p, p_exact = _standardised_ks(x)
    lill = np.nan
    if lilliefors and np.isfinite(d):
        lill = _lilliefors_pvalue(d, x.size, n_mc_samples, np.random.default_rng(seed))
    return Description(
        n=int(x.size),
        mean=float(x.mean()),
        std=0.0 if xs[0] == xs[-1] else float(x.std(ddof=1)),   # (no rounding residue)
        median=median,
        q1=q1,
        q3=q3,
        iqr=q3 - q1,
        min=float(xs[0]),
        max=float(xs[-1]),
        trimmed_mean=float(stats.trim_mean(x, TRIM_FRACTION)),
        mad=float(stats.median_abs_deviation(x, scale=1.0)),
        ks_statistic=d,
        ks_pvalue=p,
        ks_pvalue_exact=p_exact,
        lilliefors_pvalue=lill,
    )
