"""Hamey (1992): training graph, efficiency, optimal epoch limit and asymptotic performance.

Input: for each of N training trials the number of epochs t_i it needed to reach a correct
network; trials that did not succeed within the epoch limit T are recorded as t_i = T.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import _as_vector, _FrozenResult
from ._hamey_fit import _count_time, _fit_candidate
from fastnet._validation import check_int, check_probability

__all__ = ["AsymptoticModel", "HameyResult", "hamey_analysis"]

#: Scale of Hamey's efficiency: successes per 1000 epochs.
EFFICIENCY_SCALE = 1000.0
#: Largest default grid ``1, 2, ..., floor(T)``; above it the default grid holds only
#: the epochs where the graphs change (see :func:`hamey_analysis`), so the epoch limit
#: never sizes an array.
MAX_DENSE_GRID = 10**6
#: Status values of :class:`HameyResult`.
STATUSES = ("ok", "poor_fit", "too_few_successes", "degenerate_fit", "fit_failed",
            "not_requested")


class AsymptoticModel(_FrozenResult):
    r"""Hamey's model of the tail of the training graph.

    Successful training times after :math:`T_0` follow

    .. math:: F(t) = 1 - [a (t - T_0) + 1]^{-k}, \qquad t > T_0.

    Attributes
    ----------
    t0 : float
        :math:`T_0`, where the model starts to fit.
    a, k : float
        Maximum-likelihood scale and shape.
    gamma : float
        :math:`\gamma`, fraction of all trials successful by :math:`T_0` (:math:`t_i \le T_0`).
    lambda_rest : float
        :math:`\lambda_T`, fraction of the other trials successful by :math:`T`
        (:math:`T_0 < t_i < T`).
    n_fit : int
        :math:`M`, number of successes in :math:`(T_0, T)` used in the fit.
    loglik : float
        Maximised log-likelihood.
    ks_statistic, ks_pvalue : float
        KS distance between the successes in :math:`(T_0, T)` and the fitted
        :math:`F(t)/F(T)`, and its p-value
        :math:`Q_{KS}((\sqrt M + 0.12 + 0.11/\sqrt M) D)` (optimistic, since the
        parameters were fitted to the same data; used to choose :math:`T_0`).
    limit : float
        The epoch limit :math:`T`.
    candidates : ndarray
        The :math:`T_0` values tried.
    candidate_pvalues : ndarray
        KS p-value of the fit at each candidate (NaN where the fit failed).
    at_bound : bool
        True if the maximum-likelihood estimate lies on a bound of the search
        (:math:`k` at 1e-3 or 1e3, :math:`a (T - T_0)` at 1e-6 or 1e6): the data are
        at a limit of the family and :math:`a, k` themselves are not meaningful. At
        the upper bound of :math:`k` the tail is (nearly) exponential and the
        extrapolation still holds; at the lower bounds the result has status
        ``"degenerate_fit"``.
    """

    t0: float
    a: float
    k: float
    gamma: float
    lambda_rest: float
    n_fit: int
    loglik: float
    ks_statistic: float
    ks_pvalue: float
    limit: float
    candidates: np.ndarray
    candidate_pvalues: np.ndarray
    at_bound: bool

    def cdf(self, t):
        """:math:`F(t)`, 0 for :math:`t \\le T_0`."""
        x = np.maximum(np.asarray(t, dtype=np.float64) - self.t0, 0.0)
        out = -np.expm1(-self.k * np.log1p(self.a * x))
        return float(out) if np.ndim(out) == 0 else out

    def success_fraction(self, t):
        r"""Model fraction of all trials successful by epoch ``t > T_0``:
        :math:`\gamma + (1 - \gamma) \lambda_T F(t)/F(T)` (uncapped)."""
        scale = (1.0 - self.gamma) * self.lambda_rest / self.cdf(self.limit)
        out = self.gamma + scale * np.asarray(self.cdf(t))
        return float(out) if np.ndim(out) == 0 else out


class HameyResult(_FrozenResult):
    r"""Result of :func:`hamey_analysis`.

    Attributes
    ----------
    n_trials : int
        :math:`N`.
    limit : float
        Epoch limit :math:`T`.
    n_successes : int
        :math:`S = \#\{i: t_i < T\}`.
    success_rate : float
        :math:`\lambda_T = S/N`.
    mean_time : float
        Mean successful time :math:`\bar T = S^{-1} \sum_{t_i < T} t_i` (NaN if S = 0).
    median_time : float
        Median successful time: the epoch at which :math:`S/2` trials are successes,
        i.e. the :math:`\lceil S/2 \rceil`-th smallest successful time (NaN if S = 0).
    grid : ndarray
        Epoch limits ``t`` at which the graphs are evaluated.
    training_graph : ndarray
        Fraction of trials successful by ``t``: :math:`\#\{i: t_i \le t, t_i < T\}/N`.
    efficiency : ndarray
        :math:`E(t) = 1000\, \#\{i: t_i < t\} / \sum_i \min(t, t_i)`.
    optimal_limit : float
        :math:`T_E`, the grid point of maximum efficiency (the first if tied; NaN if
        S = 0).
    peak_efficiency : float
        :math:`e = E(T_E)`.
    efficiency_range : tuple of float
        :math:`(T_{E1}, T_{E2})`: the ends of the contiguous run of grid points around
        :math:`T_E` with :math:`E \ge e/2`.
    range_censored : bool
        True if :math:`E \ge e/2` still holds at the last grid point, so :math:`T_{E2}`
        is only a lower bound.
    fahlman_average : float
        Optimised Fahlman average :math:`1000/e`: expected epochs per success when trials
        are restarted at :math:`T_E`.
    status : str
        State of the asymptotic model: ``"ok"``; ``"poor_fit"`` (fitted, but no candidate
        :math:`T_0` passed the KS test at ``ks_alpha``: read the model with care);
        ``"too_few_successes"`` (fewer than ``min_fit_successes`` successes after every
        candidate :math:`T_0`; no model); ``"degenerate_fit"`` (the estimate reached
        :math:`a \to 0` or :math:`k \to 0`, where :math:`F(T) \to 0` and the tail
        predicts nothing beyond :math:`T`, e.g. for uniformly spread successes; the
        model is returned for inspection, the corrected measures are NaN);
        ``"fit_failed"`` (the optimiser failed for every candidate; no model);
        ``"not_requested"``.
    model : AsymptoticModel or None
        The fitted model, or None.
    asymptotic_success_rate : float
        :math:`\lambda = \min(1, \gamma + \lambda_T (1 - \gamma)/F(T))` (NaN without model).
    capped : bool
        Whether :math:`\lambda` was capped at 1.
    corrected_mean : float
        Mean successful time as :math:`T \to \infty` (NaN without model; ``inf`` if
        :math:`k \le 1`, where the model's mean does not exist).
    corrected_median : float
        Epoch at which :math:`\lambda N / 2` trials are successes (NaN without model).
    """

    n_trials: int
    limit: float
    n_successes: int
    success_rate: float
    mean_time: float
    median_time: float
    grid: np.ndarray
    training_graph: np.ndarray
    efficiency: np.ndarray
    optimal_limit: float
    peak_efficiency: float
    efficiency_range: tuple
    range_censored: bool
    fahlman_average: float
    status: str
    model: AsymptoticModel | None
    asymptotic_success_rate: float
    capped: bool
    corrected_mean: float
    corrected_median: float

    _repr_skip = ("grid", "training_graph", "efficiency")


def _check_times(times, limit):
    if isinstance(limit, bool) or not isinstance(limit, (int, float, np.integer, np.floating)):
        raise TypeError(f"`limit` must be a number, got {type(limit).__name__}.")
    try:
        limit = float(limit)
    except OverflowError:  # an int beyond float range
        raise ValueError("`limit` must be positive and finite, got an integer beyond "
                         "float64's range.") from None
    if not (np.isfinite(limit) and limit > 0):
        raise ValueError(f"`limit` must be positive and finite, got {limit!r}.")
    t = _as_vector(times, "times")   # a copy: failures are set to `limit` below
    if t.size < 1:
        raise ValueError("`times` needs at least 1 trial, got 0.")
    if np.any(np.isnan(t)):
        raise ValueError("`times` contains NaN; record failures as `limit` (or +inf).")
    if np.any(t <= 0):
        raise ValueError(f"`times` must be > 0 (epochs to success), got minimum {t.min():g}.")
    finite = np.isfinite(t)
    if np.any(t[finite] > limit):
        raise ValueError(
            f"`times` has values above `limit` = {limit:g} (maximum {t[finite].max():g}); "
            "failures are recorded as t_i = limit."
        )
    t[~finite] = limit
    return t, limit


def _check_grid(grid, limit):
    if grid is None:
        top = math.floor(limit)
        if top < 1:
            raise ValueError(f"`limit` = {limit:g} < 1; pass an explicit `grid`.")
        return np.arange(1, top + 1, dtype=np.float64) if top <= MAX_DENSE_GRID else None
    g = np.asarray(grid, dtype=np.float64)
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"`grid` must be a non-empty 1-D array, got shape {g.shape}.")
    if not np.all(np.isfinite(g)) or np.any(g <= 0) or np.any(g > limit):
        raise ValueError(f"`grid` must hold finite epoch limits in (0, {limit:g}].")
    if np.any(np.diff(g) <= 0):
        raise ValueError("`grid` must be strictly increasing.")
    return g


def _efficiency(t_all, csum, g):
    """E(g) = 1000 #{t_i < g} / sum_i min(g, t_i) on sorted times with cumulative sums."""
    below = np.searchsorted(t_all, g, side="left")           # #{t_i < t}
    denom = csum[below] + g * (t_all.size - below)            # sum_i min(t, t_i) > 0
    return EFFICIENCY_SCALE * below / denom


def _sparse_grid(t_all, t_succ, csum, top):
    """The integer epochs 1..top where the graphs change or the efficiency range ends.

    #{t_i < t} is constant on runs of integers starting at 1 and at floor(t_i) + 1,
    where E(t) does not increase; so its maximum over all integers is at a run's start,
    and the points with E >= e/2 form a prefix of each run, whose end is found by
    bisection. Scanning this grid gives the same optimum and range as 1, 2, ..., top.
    """
    starts = np.unique(np.concatenate(([1.0], np.floor(t_all) + 1.0)))
    starts = starts[starts <= top]
    ends = np.append(starts[1:] - 1.0, float(top))
    steps = np.ceil(t_succ)
    e = float(_efficiency(t_all, csum, starts).max())
    lo, hi = starts - 1.0, ends + 1.0          # E(lo) >= e/2 > E(hi), as sentinels
    active = hi - lo > 1
    while active.any():
        idx = np.flatnonzero(active)
        mid = np.floor(lo[idx] + (hi[idx] - lo[idx]) / 2)
        ok = _efficiency(t_all, csum, mid) >= e / 2
        stuck = (mid <= lo[idx]) | (mid >= hi[idx])   # beyond 2**53 floats skip integers
        lo[idx] = np.where(ok, mid, lo[idx])
        hi[idx] = np.where(ok, hi[idx], mid)
        active = hi - lo > 1
        active[idx[stuck]] = False
    points = np.concatenate((starts, ends, lo[lo >= starts], steps[(steps >= 1) & (steps <= top)]))
    return np.unique(points)


def _default_candidates(t_succ, min_fit, max_candidates):
    cand = np.unique(np.concatenate(([0.0], t_succ)))
    # T0 must leave at least min_fit successes strictly after it.
    counts_after = t_succ.size - np.searchsorted(t_succ, cand, side="right")
    cand = cand[counts_after >= min_fit]
    if cand.size > max_candidates:
        idx = np.unique(np.round(np.linspace(0, cand.size - 1, max_candidates)).astype(int))
        cand = cand[idx]
    return cand



def _peak(g, efficiency, n_successes):
    """Peak efficiency e, its epoch limit T_E, the range of limits where the
    efficiency is at least e/2 (and whether it reaches the grid's end), Fahlman's
    average."""
    if not n_successes:
        return 0.0, np.nan, (np.nan, np.nan), False, np.inf
    i_peak = int(np.argmax(efficiency))
    e = float(efficiency[i_peak])
    half = efficiency >= e / 2
    lo = i_peak
    while lo > 0 and half[lo - 1]:
        lo -= 1
    hi = i_peak
    while hi < g.size - 1 and half[hi + 1]:
        hi += 1
    fahlman = EFFICIENCY_SCALE / e if e > 0 else np.inf
    return e, float(g[i_peak]), (float(g[lo]), float(g[hi])), bool(hi == g.size - 1), fahlman

def hamey_analysis(
    times,
    limit,
    *,
    grid=None,
    fit_model=True,
    t0_candidates=None,
    ks_alpha=0.05,
    min_fit_successes=10,
    max_candidates=40,
):
    r"""Hamey's benchmark measures from the epochs each training trial needed.

    Parameters
    ----------
    times : array_like, shape (N,)
        :math:`t_i`, epochs trial ``i`` needed to reach a correct network; failures are
        recorded as ``limit`` (``+inf`` is accepted and treated as ``limit``).
    limit : float
        The epoch limit :math:`T` of the experiment.
    grid : array_like, optional
        Strictly increasing epoch limits in ``(0, T]`` at which the training graph and the
        efficiency are evaluated; default ``1, 2, ..., floor(T)`` if ``floor(T) <=
        MAX_DENSE_GRID`` (10**6), else the integer epochs among these where the
        graphs change or the efficiency range ends (see Notes).
    fit_model : bool, default=True
        Fit the asymptotic model and compute the corrected measures.
    t0_candidates : array_like, optional
        Values of :math:`T_0` to try; default 0 and the distinct successful times that
        leave at least `min_fit_successes` successes after them, thinned to at most
        `max_candidates` evenly spaced (by rank) values.
    ks_alpha : float, default=0.05
        Level of the KS test of the fit.
    min_fit_successes : int, default=10
        Fewest successes in :math:`(T_0, T)` for which a fit is attempted.
    max_candidates : int, default=40
        Cap on the number of default candidates.

    Returns
    -------
    HameyResult
        Success rate, mean and median successful time, ``training_graph`` and
        ``efficiency`` on ``grid``, ``optimal_limit`` :math:`T_E`, ``peak_efficiency``
        :math:`e`, ``efficiency_range`` :math:`(T_{E1}, T_{E2})`, ``fahlman_average``
        :math:`1000/e`, and from the model (``status``, ``model``):
        ``asymptotic_success_rate`` :math:`\lambda`, ``corrected_mean`` and
        ``corrected_median``. Without a usable model these three are NaN and
        ``status`` says why; no exception is raised.

    Raises
    ------
    ValueError
        If `times` is not 1-D, is empty, holds NaN, values <= 0 or finite values above
        `limit`; if `limit` is not positive and finite; if `grid` or `t0_candidates` is
        malformed; or an option is out of range.

    See Also
    --------
    fastnet.plots.training_graph, fastnet.plots.efficiency_graph

    Notes
    -----
    *Efficiency* of an epoch limit ``t`` (Hamey's strict ``<``: a failure carries
    :math:`t_i = T` and never counts as a success below ``T``):

    .. math:: E(t) = 1000\, \frac{\#\{i: t_i < t\}}{\sum_i \min(t, t_i)} .

    :math:`T_E = \arg\max_t E(t)`, :math:`e = E(T_E)`, the range where
    :math:`E \ge e/2`, and the optimised Fahlman average :math:`1000/e`. The training
    graph counts :math:`t_i \le t`; it equals the numerator of :math:`E(t')` at the next
    integer epoch :math:`t' = t + 1` on the default grid.

    *Large epoch limits.* Beyond ``MAX_DENSE_GRID`` epochs the default grid keeps, of
    ``1, ..., floor(T)``, 1 and ``floor(T)``, every :math:`\lceil t_i \rceil` and
    :math:`\lfloor t_i \rfloor + 1` with the epoch before it, and the ends of the
    efficiency range: :math:`\#\{i: t_i < t\}` is constant between these, where
    :math:`E(t)` decreases, so :math:`T_E`, :math:`e` and :math:`(T_{E1}, T_{E2})`
    are those of the full grid while the work is O(N log N log T).

    *Asymptotic model.* For a candidate :math:`T_0`, the :math:`M` successes in
    :math:`(T_0, T)` are fitted by maximum likelihood to the truncated distribution
    :math:`F(t)/F(T)`, :math:`F(t) = 1 - [a(t - T_0) + 1]^{-k}`, maximising

    .. math:: \ell(a, k) = M[\ln a + \ln k - \ln(1 - (a(T - T_0) + 1)^{-k})]
              - (k + 1) \sum_{T_0 < t_i < T} \ln(a(t_i - T_0) + 1)

    with Nelder-Mead (:func:`scipy.optimize.minimize`) over :math:`(\ln a, \ln k)`.
    :math:`k` is bounded to [1e-3, 1e3] and :math:`a(T - T_0)` to [1e-6, 1e6].
    :math:`T_0` is "the point where the model commences to fit": the smallest candidate
    whose fit passes the KS test, i.e. whose KS distance :math:`D` between the
    successes and :math:`F(t)/F(T)` has p-value
    :math:`Q_{KS}((\sqrt M + 0.12 + 0.11/\sqrt M) D) \ge` `ks_alpha` (Stephens 1974).
    If no candidate passes, the one with the largest p-value is used and ``status`` is
    ``"poor_fit"``. (Taking the largest p-value in every case is not a good rule: it
    favours late :math:`T_0` with few successes, where any fit looks good.) Then

    .. math:: \lambda = \gamma + \frac{\lambda_T (1 - \gamma)}{F(T)},

    with :math:`\gamma = \#\{t_i \le T_0\}/N` and :math:`\lambda_T = M/(N - N\gamma)`;
    :math:`\lambda` is capped at 1 (``capped``), which happens when almost all trials
    succeed. The model predicts :math:`N\lambda - S` further successes after ``T``,
    distributed as :math:`F` conditioned on :math:`t > T`, whose mean is
    :math:`T + (1 + a(T - T_0))/(a(k - 1))` for :math:`k > 1`. So

    .. math:: \bar T_c = \frac{\sum_{t_i < T} t_i + (N\lambda - S)\,
              E[t \mid t > T]}{N\lambda},

    and the corrected median is the epoch where :math:`N\lambda/2` trials have
    succeeded: the :math:`\lceil N\lambda/2 \rceil`-th successful time if
    :math:`N\lambda/2 \le S`, else the model's solution of
    :math:`S + (N\lambda - S)(F(t) - F(T))/(1 - F(T)) = N\lambda/2`.

    Hamey notes that the model does not suit every algorithm; check ``status`` and
    ``model.ks_pvalue``.

    References
    ----------
    .. [1] L. G. C. Hamey, "Benchmarking feed-forward neural networks: models and
       measures", Advances in Neural Information Processing Systems 4, 1992,
       pp. 1167-1174.
    .. [2] M. A. Stephens, "EDF statistics for goodness of fit and some comparisons",
       J. American Statistical Association 69, 1974.

    Examples
    --------
    >>> r = hamey_analysis([2, 3, 3, 5, 10, 10], limit=10, fit_model=False)
    >>> r.n_successes, r.success_rate, r.mean_time        # four successes below T = 10
    (4, 0.6666666666666666, 3.25)
    >>> r.optimal_limit, round(r.peak_efficiency, 6)     # E(6) = 1000 * 4 / (2+3+3+5+6+6)
    (6.0, 160.0)
    >>> r.efficiency_range, r.fahlman_average            # E(3) = 58.8 < 80 <= E(4) = 150
    ((4.0, 10.0), 6.25)
    """
    t, limit = _check_times(times, limit)
    g = _check_grid(grid, limit)
    ks_alpha = check_probability(ks_alpha, "ks_alpha")
    min_fit = check_int(min_fit_successes, "min_fit_successes", minimum=2)
    max_candidates = check_int(max_candidates, "max_candidates", minimum=1)

    n = t.size
    success = t < limit
    t_succ = np.sort(t[success])
    s = int(t_succ.size)
    mean_time = float(t_succ.mean()) if s else np.nan
    median_time = _count_time(t_succ, s / 2) if s else np.nan

    # Graphs on the grid (sorted cumulative sums: O((N + G) log N)).
    t_all = np.sort(t)
    csum = np.concatenate(([0.0], np.cumsum(t_all)))
    if g is None:
        g = _sparse_grid(t_all, t_succ, csum, float(math.floor(limit)))
    efficiency = _efficiency(t_all, csum, g)
    graph = np.searchsorted(t_succ, g, side="right") / n      # #{t_i <= t, success} / N

    e, t_e, e_range, censored, fahlman = _peak(g, efficiency, s)

    common = dict(
        n_trials=int(n), limit=limit, n_successes=s, success_rate=s / n,
        mean_time=mean_time, median_time=median_time, grid=g, training_graph=graph,
        efficiency=efficiency, optimal_limit=t_e, peak_efficiency=e,
        efficiency_range=e_range, range_censored=censored, fahlman_average=fahlman,
    )
    no_model = dict(model=None, asymptotic_success_rate=np.nan, capped=False,
                    corrected_mean=np.nan, corrected_median=np.nan)
    if not fit_model:
        return HameyResult(status="not_requested", **common, **no_model)

    cand = _fit_candidates(t0_candidates, t_succ, limit, min_fit, max_candidates)
    if cand.size == 0:
        return HameyResult(status="too_few_successes", **common, **no_model)

    fits = [_fit_candidate(t_succ, t0, limit) for t0 in cand]
    pvals = np.array([f["ks_p"] if f is not None else np.nan for f in fits])
    ok = np.flatnonzero(np.isfinite(pvals))
    if ok.size == 0:
        return HameyResult(status="fit_failed", **common, **no_model)
    passing = ok[pvals[ok] >= ks_alpha]
    if passing.size:
        best = int(passing[0])  # the smallest T0 at which the model fits
    else:
        best = int(ok[np.argmax(pvals[ok])])  # the best of the poor fits (first on ties)
    status = "ok" if pvals[best] >= ks_alpha else "poor_fit"
    f, t0 = fits[best], float(cand[best])

    gamma = float(np.count_nonzero(t <= t0)) / n
    lambda_rest = f["m"] / (n - n * gamma)
    model = AsymptoticModel(
        t0=t0, a=f["a"], k=f["k"], gamma=gamma, lambda_rest=lambda_rest, n_fit=f["m"],
        loglik=f["loglik"], ks_statistic=f["ks_d"], ks_pvalue=f["ks_p"], limit=limit,
        candidates=cand, candidate_pvalues=pvals, at_bound=f["at_bound"],
    )
    if f["degenerate"]:
        return HameyResult(status="degenerate_fit", **common, model=model,
                           asymptotic_success_rate=np.nan, capped=False,
                           corrected_mean=np.nan, corrected_median=np.nan)
    lam_raw, lam, corrected_mean, corrected_median = _corrected_times(model, n, t_succ,
                                                                      mean_time)
    return HameyResult(
        status=status, **common, model=model, asymptotic_success_rate=float(lam),
        capped=bool(lam_raw > 1.0), corrected_mean=float(corrected_mean),
        corrected_median=float(corrected_median),
    )


def _fit_candidates(t0_candidates, t_succ, limit, min_fit, max_candidates):
    """The T0 to fit the model from: the given ones checked (or the default spread over
    the successful times), keeping those with at least ``min_fit`` successes after."""
    s = int(t_succ.size)
    if t0_candidates is None:
        cand = _default_candidates(t_succ, min_fit, max_candidates)
    else:
        cand = np.unique(np.asarray(t0_candidates, dtype=np.float64))
        if cand.ndim != 1 or cand.size == 0 or not np.all(np.isfinite(cand)):
            raise ValueError("`t0_candidates` must be a non-empty 1-D array of finite values.")
        if np.any(cand < 0) or np.any(cand >= limit):
            raise ValueError(f"`t0_candidates` must lie in [0, {limit:g}).")
        m_after = s - np.searchsorted(t_succ, cand, side="right")
        cand = cand[m_after >= min_fit]
    return cand


def _corrected_times(model, n, t_succ, mean_time):
    """``(lam_raw, lam, corrected_mean, corrected_median)``: the asymptotic success rate
    (uncapped and capped at 1) and the mean and median time to success once the
    fitted model supplies the successes it predicts after the limit."""
    t0, a, k, limit = model.t0, model.a, model.k, model.limit
    gamma, lambda_rest = model.gamma, model.lambda_rest
    s = int(t_succ.size)
    f_limit = model.cdf(limit)
    lam_raw = gamma + lambda_rest * (1.0 - gamma) / f_limit
    lam = min(1.0, lam_raw)
    extra = max(n * lam - s, 0.0)  # predicted successes after T
    if extra <= 1e-12:
        corrected_mean = mean_time
    elif k <= 1.0:
        corrected_mean = np.inf
    else:
        tail_mean = limit + (1.0 + a * (limit - t0)) / (a * (k - 1.0))
        corrected_mean = (t_succ.sum() + extra * tail_mean) / (n * lam)
    target = n * lam / 2.0
    if target <= s:
        corrected_median = _count_time(t_succ, target)
    else:
        u = (target - s) / extra
        f_t = f_limit + u * (1.0 - f_limit)
        corrected_median = t0 + ((1.0 - f_t) ** (-1.0 / k) - 1.0) / a
    return lam_raw, lam, corrected_mean, corrected_median
