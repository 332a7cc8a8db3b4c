"""fastnet.stats.describe and segment_points (Lawrence et al. 1997)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special, stats

from fastnet.stats import Description, describe, segment_points
# (the distribution functions behind describe's normality tests)
from fastnet.stats._common import _q_ks, _stephens_pvalue


def q_ks_series(x, terms=200):
    """Lawrence eq. (5): Q_KS(x) = 2 sum_{j>=1} (-1)^(j-1) exp(-2 j^2 x^2)."""
    j = np.arange(1, terms + 1)
    return 2.0 * np.sum((-1.0) ** (j - 1) * np.exp(-2.0 * j**2 * x**2))


@pytest.mark.parametrize("x", [0.3, 0.5, 0.8, 1.0, 1.36, 2.0, 3.0])
def test_q_ks_matches_series_and_scipy(x):
    # The alternating series converges fast for x >= 0.3; for small x it is ~1.
    assert_allclose(_q_ks(x), q_ks_series(x), rtol=1e-12)
    assert_allclose(_q_ks(x), special.kolmogorov(x), rtol=0)


def test_q_ks_known_values():
    # Kolmogorov's 5% critical value: Q_KS(1.3581) = 0.05 (scipy.special.kolmogi(0.05)).
    assert_allclose(_q_ks(special.kolmogi(0.05)), 0.05, rtol=1e-10)
    assert_allclose(special.kolmogi(0.05), 1.3580986393225505, rtol=1e-12)


def test_hand_computed_small_sample():
    x = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    d = describe(x, lilliefors=False)
    assert isinstance(d, Description)
    assert d.n == 5
    assert d.mean == 4.0
    # sd: squared deviations 9 + 4 + 1 + 0 + 36 = 50; 50 / 4 = 12.5
    assert_allclose(d.std, np.sqrt(12.5))
    assert d.median == 3.0
    # odd n: the median 3 is in neither half -> halves (1, 2) and (4, 10)
    assert (d.q1, d.q3, d.iqr) == (1.5, 7.0, 5.5)
    assert (d.min, d.max) == (1.0, 10.0)
    # |x - 3| = 2, 1, 0, 1, 7 -> median 1
    assert d.mad == 1.0
    # int(0.05 * 5) = 0 values cut: the plain mean
    assert d.trimmed_mean == 4.0
    assert np.isnan(d.lilliefors_pvalue)


def test_even_n_quartiles():
    d = describe([7.0, 1.0, 3.0, 5.0, 2.0, 8.0], lilliefors=False)
    # sorted 1 2 3 5 7 8: median (3 + 5)/2, halves (1 2 3) and (5 7 8)
    assert (d.median, d.q1, d.q3) == (4.0, 2.0, 7.0)


def test_against_scipy_on_random_sample():
    rng = np.random.default_rng(0)
    x = rng.lognormal(size=101)
    d = describe(x, n_mc_samples=999, seed=1)
    assert_allclose(d.mean, np.mean(x))
    assert_allclose(d.std, np.std(x, ddof=1))
    assert_allclose(d.median, np.median(x))
    assert_allclose(d.trimmed_mean, stats.trim_mean(x, 0.05))
    assert_allclose(d.mad, stats.median_abs_deviation(x))
    z = (x - x.mean()) / x.std(ddof=1)
    ks = stats.kstest(z, "norm", method="exact")  # scipy.stats.kstest(z, "norm")
    assert_allclose(d.ks_statistic, ks.statistic, rtol=1e-14)
    assert_allclose(d.ks_pvalue_exact, ks.pvalue, rtol=1e-12)
    n = x.size
    assert_allclose(d.ks_pvalue, special.kolmogorov((np.sqrt(n) + 0.12 + 0.11 / np.sqrt(n)) * ks.statistic))
    assert d.lilliefors_pvalue < 0.01  # lognormal data: clearly not normal


def test_lilliefors_matches_scipy_goodness_of_fit():
    x = np.random.default_rng(21).gamma(5.0, size=30)
    d = describe(x, n_mc_samples=20000, seed=2)
    # scipy.stats.goodness_of_fit(stats.norm, x, statistic="ks", n_mc_samples=20000)
    ref = stats.goodness_of_fit(stats.norm, x, statistic="ks", n_mc_samples=20000,
                                rng=np.random.default_rng(1))
    assert_allclose(ref.statistic, d.ks_statistic, rtol=1e-12)  # same standardisation (n - 1 sd)
    # Independent Monte Carlo runs: agree within 4 standard errors of the difference.
    se = np.sqrt(2 * ref.pvalue * (1 - ref.pvalue) / 20000)
    assert abs(d.lilliefors_pvalue - ref.pvalue) < 4 * se
    assert 0.02 < d.lilliefors_pvalue < 0.5  # this sample is neither clearly normal nor not


def test_lilliefors_critical_value():
    # Lilliefors (1967), Table 1: 5% critical value of D for n = 20 is 0.190 (Monte
    # Carlo; more precise modern value 0.192). A sample with D near it has p near 5%.
    from fastnet.stats._describe import _lilliefors_pvalue

    p = _lilliefors_pvalue(0.192, 20, 40000, np.random.default_rng(0))
    assert abs(p - 0.05) < 0.006


def test_lilliefors_is_sharper_than_ks_with_estimated_parameters():
    # With mean and sd estimated, D is smaller under H0, so the KS p-values that treat
    # them as known are too large (Lilliefors 1967).
    x = np.random.default_rng(11).gamma(4.0, size=40)
    d = describe(x)
    assert d.lilliefors_pvalue < d.ks_pvalue_exact
    assert d.lilliefors_pvalue < d.ks_pvalue


def test_lilliefors_reproducible_with_default_seed():
    x = np.random.default_rng(3).normal(size=30)
    assert describe(x).lilliefors_pvalue == describe(x).lilliefors_pvalue


def test_normal_sample_passes():
    x = np.random.default_rng(5).normal(size=200)
    d = describe(x, n_mc_samples=999)
    assert d.ks_pvalue > 0.05 and d.lilliefors_pvalue > 0.05


def test_constant_sample_gives_nan_normality():
    d = describe([2.0, 2.0, 2.0, 2.0])
    assert d.std == 0 and d.iqr == 0
    assert np.isnan(d.ks_statistic) and np.isnan(d.ks_pvalue) and np.isnan(d.lilliefors_pvalue)


def test_stephens_formula():
    # Lawrence Table 1 (a): D = 0.051, N = 100 -> P = 0.95
    assert_allclose(_stephens_pvalue(0.051, 100), 0.95, atol=0.005)


def test_repr_and_as_dict():
    d = describe([1.0, 2.0, 4.0], lilliefors=False)
    assert repr(d).startswith("Description(n=3, mean=2.33333")
    assert list(d.as_dict())[:3] == ["n", "mean", "std"]


@pytest.mark.parametrize(
    "sample, match",
    [
        ([1.0, 2.0], r"`sample` needs at least 3 values, got 2"),
        ([1.0, np.nan, 2.0, 3.0], r"`sample` contains NaN or infinite"),
        ([1.0, np.inf, 2.0, 3.0], r"`sample` contains NaN or infinite"),
        ([[1.0, 2.0], [3.0, 4.0]], r"`sample` must be one-dimensional, got shape \(2, 2\)"),
    ],
)
def test_describe_validation(sample, match):
    with pytest.raises(ValueError, match=match):
        describe(sample)


def test_describe_type_and_option_validation():
    with pytest.raises(TypeError, match="`sample` must be a sequence of numbers"):
        describe(["a", "b", "c"])
    with pytest.raises(TypeError, match=r"^`sample` must be real, got dtype complex128\.$"):
        describe(np.array([1.0, 2.0, 3.0]) + 1e-3j)
    with pytest.raises(ValueError, match="`n_mc_samples` must be >= 1, got 0"):
        describe([1.0, 2.0, 3.0], n_mc_samples=0)


# --- segment points (box-whiskers and extended box-whiskers) ---------------------


def test_segment_points_four_equals_quartiles():
    x = np.random.default_rng(2).normal(size=37)
    d = describe(x, lilliefors=False)
    assert_allclose(segment_points(x, 4), [d.min, d.q1, d.median, d.q3, d.max])


def test_segment_points_eight_by_hand():
    # 16 values 1..16: halves 1..8 | 9..16, quarters 1..4 | 5..8 | 9..12 | 13..16
    p = segment_points(np.arange(1, 17), 8)
    assert p.tolist() == [1, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 14.5, 16]
    # each of the 8 segments then holds exactly 2 values
    counts = np.histogram(np.arange(1, 17), bins=p)[0]
    assert counts.tolist() == [2] * 8


def test_segment_points_two_is_median():
    assert segment_points([3.0, 1.0, 2.0], 2).tolist() == [1.0, 2.0, 3.0]


def test_segment_points_validation():
    with pytest.raises(ValueError, match="`n_segments` must be a power of two >= 2, got 6"):
        segment_points([1, 2, 3, 4, 5, 6, 7], 6)
    with pytest.raises(ValueError, match="`n_segments` must be >= 2, got 1"):
        segment_points([1, 2, 3], 1)
    with pytest.raises(ValueError, match="`sample` needs at least 4 values, got 3"):
        segment_points([1, 2, 3], 8)
    with pytest.raises(TypeError, match="`n_segments` must be an integer"):
        segment_points([1, 2, 3], 4.0)


def test_describe_of_100000_values_is_fast():
    import time

    start = time.process_time()
    d = describe(np.arange(1e5))
    assert time.process_time() - start < 2.0
    assert d.lilliefors_pvalue == pytest.approx(1 / 10000)    # uniform: far from normal


@pytest.mark.parametrize("c, level", [(0.805, 0.10), (0.886, 0.05), (1.031, 0.01)])
def test_lilliefors_beyond_the_simulated_size_agrees_with_full_simulation(monkeypatch, c, level):
    # Stephens' modified statistic makes the null distribution nearly size-free: p-values
    # from samples of 1000 for n = 3000 match a full simulation of size 3000 and
    # Lilliefors' asymptotic critical values c / sqrt(n) (Stephens 1974, Table 1A)
    import fastnet.stats._describe as describe_module  # (its simulation cap is patched)

    n = 3000
    d = c / np.sqrt(n)
    capped = describe_module._lilliefors_pvalue(d, n, 4000, np.random.default_rng(1))
    monkeypatch.setattr(describe_module, "LILLIEFORS_MAX_SIMULATED_SIZE", n)
    full = describe_module._lilliefors_pvalue(d, n, 4000, np.random.default_rng(2))
    assert abs(capped - full) < 0.01 + level / 3
    assert abs(capped - level) < 0.01 + level / 3


@pytest.mark.parametrize("n_mc", [10**6 + 1, 2**63, 10**400])
def test_monte_carlo_sample_counts_are_capped(n_mc):
    with pytest.raises(ValueError, match=r"`n_mc_samples` must be at most MAX_MC_SAMPLES = "
                                         r"1000000, got"):
        describe([1.0, 2.0, 4.0], n_mc_samples=n_mc)


def test_every_stats_result_is_a_frozen_dataclass():
    # The results' base makes each subclass a frozen dataclass with the readable repr
    # (no per-class decorator to forget): every result class fastnet.stats exports is one.
    import dataclasses

    import fastnet.stats as fs
    from fastnet.stats._common import _FrozenResult

    results = [c for c in vars(fs).values()
               if isinstance(c, type) and issubclass(c, _FrozenResult)]
    assert len(results) >= 15
    for cls in results:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        assert cls.__repr__ is _FrozenResult.__repr__, cls
    d = describe([1.0, 2.0, 4.0], lilliefors=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.n = 4
