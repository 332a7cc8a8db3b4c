"""Hamey (1992): efficiency, optimal epoch limit, asymptotic model, corrected measures."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from fastnet.stats import AsymptoticModel, HameyResult, hamey_analysis


def brute_efficiency(t, grid):
    """E(t) = 1000 #{i: t_i < t} / sum_i min(t, t_i), literally."""
    return np.array([1000.0 * np.sum(t < g) / np.sum(np.minimum(g, t)) for g in grid])


def generate(seed, n=5000, limit=1000, t0=50, a=0.005, k=2.0, rho=0.7, whole_epochs=True):
    """Trial times from Hamey's model: a fraction rho of the trials succeeds at
    t0 + Lomax(k, scale 1/a), i.e. F(t) = 1 - [a (t - t0) + 1]^-k; the rest never do.
    Times are rounded up to whole epochs (if `whole_epochs`) and failures recorded at
    the limit."""
    rng = np.random.default_rng(seed)
    t = np.full(n, np.inf)
    ok = rng.random(n) < rho
    t[ok] = t0 + ((1.0 - rng.random(ok.sum())) ** (-1.0 / k) - 1.0) / a
    if whole_epochs:
        t = np.ceil(t)
    t[t >= limit] = limit
    return t


def test_hand_example():
    r = hamey_analysis([2, 3, 3, 5, 10, 10], limit=10, fit_model=False)
    assert isinstance(r, HameyResult)
    assert (r.n_trials, r.n_successes) == (6, 4)
    assert r.mean_time == 3.25  # (2 + 3 + 3 + 5) / 4
    assert r.median_time == 3.0  # the 2nd smallest successful time: S/2 = 2 successes
    # E(4) = 1000 * 3 / (2 + 3 + 3 + 4 + 4 + 4) = 150; E(6) = 1000 * 4 / 25 = 160
    assert_allclose(r.efficiency[[3, 5]], [150.0, 160.0])
    assert r.optimal_limit == 6.0 and r.peak_efficiency == 160.0
    assert r.fahlman_average == 1000 / 160
    # E(3) = 1000 / 17 = 58.8 < 80 <= E(4): the range starts at 4 and runs to T
    assert r.efficiency_range == (4.0, 10.0) and r.range_censored
    # training graph counts t_i <= t among successes
    assert_allclose(r.training_graph[[0, 1, 2, 4, 9]], [0, 1 / 6, 3 / 6, 4 / 6, 4 / 6])
    assert r.status == "not_requested" and r.model is None
    assert np.isnan(r.asymptotic_success_rate)


def test_failures_never_count_strict_less_than():
    # a failure carries t_i = T: E(T) must not count it; +inf is recorded as T
    r = hamey_analysis([5.0, np.inf], limit=10, grid=[10.0], fit_model=False)
    assert_allclose(r.efficiency, [1000.0 * 1 / (5 + 10)])
    assert r.n_successes == 1 and r.success_rate == 0.5


def test_efficiency_matches_literal_formula():
    t = generate(1, n=300)
    grid = np.linspace(0.5, 1000, 700)
    r = hamey_analysis(t, 1000, grid=grid, fit_model=False)
    assert_allclose(r.efficiency, brute_efficiency(t, grid), rtol=1e-12)
    half = r.efficiency >= r.peak_efficiency / 2
    lo, hi = r.efficiency_range
    assert np.all(half[(grid >= lo) & (grid <= hi)])
    assert r.peak_efficiency == r.efficiency.max()


def test_no_successes():
    r = hamey_analysis([100, 100, 100], limit=100)
    assert r.n_successes == 0 and r.peak_efficiency == 0.0
    assert np.isnan(r.optimal_limit) and r.fahlman_average == np.inf
    assert np.isnan(r.mean_time) and r.status == "too_few_successes"
    assert r.model is None and np.isnan(r.corrected_mean)


def test_too_few_successes_gives_status_not_numbers():
    t = [3, 5, 8, 13, 21, 100, 100]
    r = hamey_analysis(t, 100)
    assert r.status == "too_few_successes" and r.model is None
    assert np.isnan(r.asymptotic_success_rate) and np.isnan(r.corrected_median)
    # the efficiency measures do not need the model: E(9) = 1000 * 3 / (3+5+8+4*9)
    assert r.optimal_limit == 9.0 and r.peak_efficiency == 3000 / 52


# Tolerances: about 4 standard deviations of the estimators at N = 5000, measured over
# 30 simulated experiments (sd: k 0.28, a 0.00064, lambda 0.0084, corrected median 2.9,
# corrected mean 17 epochs); k is skewed to the right, hence the wider upper bound.
K_RANGE = (1.3, 3.4)
A_RTOL = 0.5
LAMBDA_ATOL = 0.035
MEDIAN_ATOL = 12
MEAN_ATOL = 70


def test_model_recovers_parameters_with_known_t0():
    t = generate(2024)
    r = hamey_analysis(t, 1000, t0_candidates=[50])
    m = r.model
    assert isinstance(m, AsymptoticModel)
    assert r.status == "ok" and m.t0 == 50 and m.gamma == 0.0 and not m.at_bound
    assert K_RANGE[0] < m.k < K_RANGE[1]
    assert_allclose(m.a, 0.005, rtol=A_RTOL)
    assert abs(r.asymptotic_success_rate - 0.7) < LAMBDA_ATOL
    # true median of the successful times: t0 + (sqrt(2) - 1)/a = 132.8, rounded up
    assert abs(r.corrected_median - 133) < MEDIAN_ATOL
    # true mean: t0 + 1/(a (k - 1)) = 250 (+0.5 for rounding up)
    assert abs(r.corrected_mean - 250.5) < MEAN_ATOL
    # the observed success rate underestimates the asymptotic one, F(T) = 0.970
    assert r.success_rate < r.asymptotic_success_rate


def test_model_recovers_with_default_t0_search():
    t = generate(7)
    r = hamey_analysis(t, 1000)
    m = r.model
    assert r.status == "ok"
    # T0 = 0 does not fit (nothing succeeds before epoch 51); the first candidate that
    # fits lies just after the true start.
    assert m.candidate_pvalues[0] < 0.05
    assert 50 <= m.t0 <= 100
    assert K_RANGE[0] < m.k < K_RANGE[1]
    # after T0 > 50 the model is the same family with a' = a / (1 + a (T0 - 50))
    assert_allclose(m.a, 0.005 / (1 + 0.005 * (m.t0 - 50)), rtol=A_RTOL)
    assert abs(r.asymptotic_success_rate - 0.7) < LAMBDA_ATOL
    assert abs(r.corrected_median - 133) < MEDIAN_ATOL
    assert abs(r.corrected_mean - 250.5) < MEAN_ATOL
    # model curve meets the observed training graph at T
    assert_allclose(m.success_fraction(1000.0), r.success_rate, rtol=1e-12)


def test_corrected_median_from_the_model_beyond_t():
    # Heavy truncation (F(T) ~ 0.56): most successes come after T, so the corrected
    # median needs the model. This checks the formula, not the (poor) precision of the
    # estimates in such a case.
    t = generate(0, n=5000, limit=80, a=0.01, k=2.0, rho=0.9, whole_epochs=False)
    r = hamey_analysis(t, 80, t0_candidates=[50], grid=np.linspace(1, 80, 200))
    assert r.status == "ok"
    n_lambda = r.asymptotic_success_rate * r.n_trials
    assert n_lambda / 2 > r.n_successes
    m = r.model
    # S + (N lambda - S) (F(t) - F(T)) / (1 - F(T)) = N lambda / 2 at the corrected median
    f_t, f_lim = m.cdf(r.corrected_median), m.cdf(80.0)
    reached = r.n_successes + (n_lambda - r.n_successes) * (f_t - f_lim) / (1 - f_lim)
    assert_allclose(reached, n_lambda / 2, rtol=1e-10)
    assert r.corrected_median > 80


def test_all_successful_caps_lambda():
    t = generate(4, n=1000, rho=1.0, a=0.05)  # F(T) ~ 1: everything succeeds before T
    t[t >= 1000] = 999
    r = hamey_analysis(t, 1000, t0_candidates=[50])
    assert r.asymptotic_success_rate == 1.0 and r.capped
    assert r.corrected_mean == r.mean_time


def test_heavy_tail_has_infinite_corrected_mean():
    t = generate(5, n=4000, limit=2000, a=0.01, k=0.7)
    r = hamey_analysis(t, 2000, t0_candidates=[50])
    assert r.model.k < 1 and r.corrected_mean == np.inf


def test_poor_fit_status():
    # The model's density decreases after T0; gamma(3) times rise first and do not fit.
    rng = np.random.default_rng(0)
    t = np.concatenate([rng.gamma(3.0, 30.0, 2000), np.full(300, 500.0)])
    t[t >= 500] = 500
    r = hamey_analysis(t, 500, t0_candidates=[0], grid=np.linspace(1, 500, 100))
    assert r.status == "poor_fit"
    assert r.model.ks_pvalue < 1e-10 and r.model.ks_pvalue == r.model.candidate_pvalues[0]
    assert np.isfinite(r.asymptotic_success_rate)  # given, but flagged by the status


def test_uniform_successes_hit_the_bound_of_a():
    # Uniform times are the a -> 0 limit of the family: F(t) ~ k a (t - T0).
    t = np.concatenate([np.arange(1, 400, 1.0), np.full(100, 400.0)])
    r = hamey_analysis(t, 400, t0_candidates=[0])
    assert r.model.at_bound and r.status == "degenerate_fit"
    # F(T) -> 0 would extrapolate to lambda_T / F(T) >> 1: no numbers are given
    assert r.model.cdf(400.0) < 1e-3
    assert np.isnan(r.asymptotic_success_rate) and np.isnan(r.corrected_mean)


def test_exponential_tail_is_the_upper_bound_of_k():
    # k -> inf with a k fixed is the exponential distribution: still a usable model.
    rng = np.random.default_rng(9)
    t = np.ceil(20 + rng.exponential(150.0, 4000))
    t[t >= 600] = 600
    r = hamey_analysis(t, 600, t0_candidates=[20])
    assert r.status == "ok"
    # exponential: F(T) = 1 - exp(-580/150); everything succeeds eventually
    assert abs(r.asymptotic_success_rate - 1.0) < 0.02
    assert_allclose(r.model.a * r.model.k, 1 / 150, rtol=0.1)


@pytest.mark.parametrize(
    "times, limit, kwargs, match",
    [
        ([1.0, np.nan], 10, {}, "`times` contains NaN; record failures as `limit`"),
        ([1.0, 0.0], 10, {}, r"`times` must be > 0 \(epochs to success\), got minimum 0"),
        ([1.0, 11.0], 10, {}, "`times` has values above `limit` = 10"),
        ([[1.0, 2.0]], 10, {}, r"`times` must be one-dimensional, got shape \(1, 2\)"),
        ([], 10, {}, "`times` needs at least 1 trial, got 0"),
        ([1.0], 0, {}, "`limit` must be positive and finite, got 0.0"),
        ([1.0], np.inf, {}, "`limit` must be positive and finite"),
        ([0.2], 0.5, {}, "`limit` = 0.5 < 1; pass an explicit `grid`"),
        ([1.0], 10, dict(grid=[3.0, 2.0]), "`grid` must be strictly increasing"),
        ([1.0], 10, dict(grid=[0.0, 2.0]), r"`grid` must hold finite epoch limits in \(0, 10\]"),
        ([1.0], 10, dict(grid=[]), "`grid` must be a non-empty 1-D array"),
        ([1.0], 10, dict(t0_candidates=[10.0]), r"`t0_candidates` must lie in \[0, 10\)"),
        ([1.0], 10, dict(t0_candidates=[np.nan]), "`t0_candidates` must be a non-empty 1-D array"),
        ([1.0], 10, dict(ks_alpha=1.0), r"`ks_alpha` must be in \(0, 1\)"),
        ([1.0], 10, dict(min_fit_successes=1), "`min_fit_successes` must be >= 2, got 1"),
        ([1.0], 10, dict(max_candidates=0), "`max_candidates` must be >= 1, got 0"),
    ],
)
def test_validation(times, limit, kwargs, match):
    with pytest.raises(ValueError, match=match):
        hamey_analysis(times, limit, **kwargs)


def test_type_validation():
    with pytest.raises(TypeError, match="`limit` must be a number, got str"):
        hamey_analysis([1.0], "10")


# ----------------------------------------------- large epoch limits size no array

@pytest.mark.parametrize("seed", range(6))
def test_the_sparse_default_grid_gives_the_dense_grids_measures(monkeypatch, seed):
    import fastnet.stats._hamey as hamey  # (its grid size is patched)

    rng = np.random.default_rng(seed)
    limit = [300, 300.5, 97][seed % 3]
    t = rng.gamma(2.0, [20, 40, 5][seed % 3], 40)
    if seed % 2:
        t = np.ceil(t)
    t = np.where(t < limit, t, limit)
    if seed == 4:
        t = np.minimum(t, limit - 1)            # no failures
    dense = hamey_analysis(t, limit, fit_model=False)
    monkeypatch.setattr(hamey, "MAX_DENSE_GRID", 10)
    sparse = hamey_analysis(t, limit, fit_model=False)
    assert sparse.grid.size < dense.grid.size
    for field in ("optimal_limit", "peak_efficiency", "efficiency_range", "range_censored",
                  "fahlman_average", "median_time", "mean_time"):
        assert getattr(sparse, field) == getattr(dense, field), field
    at = np.searchsorted(dense.grid, sparse.grid)
    assert np.array_equal(dense.grid[at], sparse.grid)
    assert np.array_equal(dense.efficiency[at], sparse.efficiency)
    assert np.array_equal(dense.training_graph[at], sparse.training_graph)


def test_an_epoch_limit_of_2_to_the_31_allocates_no_grid_of_that_size():
    import time

    rng = np.random.default_rng(0)
    t = np.concatenate([rng.integers(1, 5000, 200), [2**31] * 20]).astype(float)
    start = time.process_time()
    r = hamey_analysis(t, 2**31)
    assert time.process_time() - start < 3.0
    assert r.grid.size < 6 * t.size
    assert r.efficiency_range[1] > 5000 and r.status in ("ok", "poor_fit")
    huge = hamey_analysis(np.minimum(t, 1e308), 1e308, fit_model=False)   # ends, too
    assert huge.optimal_limit == r.optimal_limit
    with pytest.raises(ValueError, match=r"`limit` must be positive and finite, got an integer "
                                         r"beyond float64's range"):
        hamey_analysis(t, 10**400)
