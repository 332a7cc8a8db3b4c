"""Larsen & Hansen (1995): resampled hold-out, compare_resampled, holdout_paired_ttest."""

from math import comb

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from fastnet.stats import (
    GeneralizationSummary,
    PairedTTestResult,
    ResampledHoldoutResult,
    compare_resampled,
    holdout_paired_ttest,
    resampled_holdout,
)


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    Y = X @ np.array([1.5, -0.5]) + rng.normal(scale=0.5, size=n)
    return X, Y


def mean_model(X_tr, Y_tr, X_te, Y_te):
    return (Y_te - Y_tr.mean()) ** 2


def linear_model(X_tr, Y_tr, X_te, Y_te):
    w = np.linalg.lstsq(X_tr, Y_tr, rcond=None)[0]
    return (Y_te - X_te @ w) ** 2


def test_splits_are_distinct_of_size_ceil_gamma_n():
    X, Y = data(30)
    r = resampled_holdout(mean_model, X, Y, gamma=0.1, J=50, seed=3)
    assert isinstance(r, ResampledHoldoutResult)
    # N_c = ceil(0.1 * 30) = 3 (not 4: 0.1 * 30 is 3.0000000000000004 in binary)
    assert r.n_left_out == 3 and r.splits.shape == (50, 3) and r.n_examples == 30
    assert r.gamma == 0.1
    assert np.all(np.diff(r.splits, axis=1) > 0)  # sorted, no repeated example
    assert np.unique(r.splits, axis=0).shape[0] == 50  # no split repeated
    r2 = resampled_holdout(mean_model, X, Y, gamma=0.25, J=5)
    assert r2.n_left_out == 8  # ceil(7.5)


def test_all_splits_when_j_equals_the_number_of_subsets():
    X, Y = data(6)
    r = resampled_holdout(mean_model, X, Y, gamma=0.5, J=comb(6, 3), seed=1)
    assert np.unique(r.splits, axis=0).shape[0] == 20
    with pytest.raises(ValueError, match=r"`J` = 21 exceeds the number of distinct splits C\(6, 3\) = 20"):
        resampled_holdout(mean_model, X, Y, gamma=0.5, J=21)


def test_fit_and_score_gets_a_partition_and_estimates_are_means():
    X, Y = data(20)
    seen = []

    def spy(X_tr, Y_tr, X_te, Y_te):
        assert X_tr.shape[0] == 15 and X_te.shape[0] == 5
        seen.append((X_tr.copy(), X_te.copy()))
        return np.abs(Y_te)

    r = resampled_holdout(spy, X, Y, gamma=0.25, J=7, seed=2)
    for (X_tr, X_te), split, g in zip(seen, r.splits, r.estimates):
        assert_allclose(X_te, X[split])
        rest = np.setdiff1d(np.arange(20), split)
        assert_allclose(X_tr, X[rest])
        assert_allclose(g, np.abs(Y[split]).mean())


def test_summaries_match_numpy_and_scipy():
    X, Y = data(40)
    r = resampled_holdout(mean_model, X, Y, gamma=0.25, J=60, seed=4)
    for s, g in ((r.summary, r.estimates), (r.log_summary, np.log1p(r.estimates))):
        assert isinstance(s, GeneralizationSummary)
        assert_allclose(s.avr, g.mean())
        assert_allclose(s.tavr, stats.trim_mean(g, 0.05))  # drops 3 of 60 at each end
        assert_allclose(s.med, np.median(g))
        assert_allclose(s.std, g.std(ddof=1))
        assert_allclose(s.mad, np.median(np.abs(g - np.median(g))))
        q25, q75 = np.percentile(g, [25, 75])
        assert_allclose(s.iqr, q75 - q25)
    assert r.empirical_cdf(np.inf) == 1.0 and r.empirical_cdf(-np.inf) == 0.0
    assert_allclose(r.empirical_cdf(r.summary.med), 0.5)


def test_reuse_splits_and_seed_reproducibility():
    X, Y = data(30)
    r1 = resampled_holdout(mean_model, X, Y, gamma=0.2, J=10, seed=7)
    r2 = resampled_holdout(mean_model, X, Y, gamma=0.2, J=10, seed=7)
    assert np.array_equal(r1.splits, r2.splits)
    r3 = resampled_holdout(linear_model, X, Y, gamma=None, splits=r1.splits)
    assert np.array_equal(r3.splits, r1.splits) and r3.gamma == 0.2


def test_compare_resampled_uses_the_same_splits_and_eq9():
    X, Y = data(40)
    c = compare_resampled(linear_model, mean_model, X, Y, gamma=0.25, J=25, seed=5)
    assert np.array_equal(c.result_a.splits, c.result_b.splits)
    ga, gb = c.result_a.estimates, c.result_b.estimates
    assert_allclose(c.differences, ga - gb)
    # scipy.stats.ttest_rel(ga, gb)
    ref = stats.ttest_rel(ga, gb)
    assert_allclose(c.statistic, ref.statistic, rtol=1e-12)
    assert_allclose(c.pvalue, ref.pvalue, rtol=1e-12)
    # Larsen & Hansen eq. (9)
    d = ga - gb
    std9 = np.sqrt(np.sum((d - d.mean()) ** 2) / ((25 - 1) * 25))
    assert_allclose(c.ttest.std_error, std9, rtol=1e-12)
    assert_allclose(c.fraction_a_better, np.mean(ga < gb))
    assert c.fraction_a_better > 0.9 and c.pvalue < 1e-6  # the linear model is right


def test_holdout_paired_ttest_against_scipy_and_larsen_formula():
    rng = np.random.default_rng(8)
    la = rng.gamma(2.0, size=50)
    lb = la + rng.normal(0.3, 1.0, 50)
    r = holdout_paired_ttest(la, lb)
    assert isinstance(r, PairedTTestResult)
    ref = stats.ttest_rel(la, lb)  # scipy.stats.ttest_rel(la, lb)
    assert_allclose([r.statistic, r.pvalue], [ref.statistic, ref.pvalue], rtol=1e-12)
    d = la - lb
    # (std(dG))^2 = (N_c - 1)^-1 N_c^-1 sum (d_k - mean d)^2
    assert_allclose(r.std_error**2, np.sum((d - d.mean()) ** 2) / (49 * 50), rtol=1e-12)
    assert r.df == 49
    assert_allclose(r.mean_difference, d.mean())
    lo, hi = r.confidence_interval(0.95)
    ci = ref.confidence_interval(0.95)
    assert_allclose([lo, hi], [ci.low, ci.high], rtol=1e-12)
    less = holdout_paired_ttest(la, lb, alternative="less")
    assert_allclose(less.pvalue, stats.ttest_rel(la, lb, alternative="less").pvalue)


def test_holdout_paired_ttest_hand_example():
    r = holdout_paired_ttest([1.0, 2.0, 3.0, 4.0], [1.5, 2.5, 3.0, 5.0])
    # d = -.5, -.5, 0, -1: mean -.5, sd sqrt(1/6), se sqrt(1/6)/2, t = -.5 / se
    assert r.mean_difference == -0.5
    assert_allclose(r.statistic, -0.5 / (np.sqrt(1 / 6) / 2))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(gamma=0.0), r"`gamma` must be in \(0, 1\), got 0.0"),
        (dict(gamma=1.0), r"`gamma` must be in \(0, 1\), got 1.0"),
        (dict(gamma=0.99), r"leaves out all 10 examples"),
        (dict(J=0), "`J` must be >= 1, got 0"),
    ],
)
def test_resampled_holdout_option_validation(kwargs, match):
    X, Y = data(10)
    args = dict(gamma=0.3, J=5, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        resampled_holdout(mean_model, X, Y, **args)


def test_resampled_holdout_data_and_callable_validation():
    X, Y = data(10)
    with pytest.raises(ValueError, match="`X` has 10 examples but `Y` has 9"):
        resampled_holdout(mean_model, X, Y[:9])
    with pytest.raises(ValueError, match="`X` must hold at least 2 examples, got 1"):
        resampled_holdout(mean_model, X[:1], Y[:1])
    with pytest.raises(ValueError, match="`X` and `Y` must be arrays with one row per example"):
        resampled_holdout(mean_model, 1.0, 2.0)
    with pytest.raises(TypeError, match="`fit_and_score` must be callable"):
        resampled_holdout("model", X, Y)
    with pytest.raises(ValueError, match=r"`fit_and_score` must return one loss per left-out example, "
                                         r"shape \(3,\); got shape \(\)"):
        resampled_holdout(lambda *a: 1.0, X, Y, gamma=0.3, J=2)
    with pytest.raises(ValueError, match="`fit_and_score` returned NaN or infinite losses in split 0"):
        resampled_holdout(lambda a, b, c, d: np.full(d.shape[0], np.nan), X, Y, gamma=0.3, J=2)


def test_splits_validation():
    X, Y = data(10)
    good = np.array([[0, 1, 2], [3, 4, 5]])
    with pytest.raises(ValueError, match="`splits` must be a 2-D integer array"):
        resampled_holdout(mean_model, X, Y, splits=[0, 1, 2])
    with pytest.raises(ValueError, match="`splits` must hold integer example indices"):
        resampled_holdout(mean_model, X, Y, splits=good.astype(float))
    with pytest.raises(ValueError, match=r"`splits` holds indices outside \[0, 9\]"):
        resampled_holdout(mean_model, X, Y, splits=good + 5)
    with pytest.raises(ValueError, match="`splits` has a row that repeats an example"):
        resampled_holdout(mean_model, X, Y, splits=[[0, 0, 1], [2, 3, 4]])
    with pytest.raises(ValueError, match="`splits` repeats a split"):
        resampled_holdout(mean_model, X, Y, splits=[[0, 1, 2], [2, 1, 0]])
    with pytest.raises(ValueError, match=r"`splits` leaves out 3 examples but ceil\(gamma \* N\) = 5"):
        resampled_holdout(mean_model, X, Y, gamma=0.5, splits=good)
    with pytest.raises(ValueError, match="`splits` leaves nothing for training"):
        resampled_holdout(mean_model, X[:3], Y[:3], gamma=None, splits=[[0, 1, 2]])


def test_compare_and_holdout_validation():
    X, Y = data(10)
    with pytest.raises(TypeError, match="`fit_b` must be callable"):
        compare_resampled(mean_model, None, X, Y)
    with pytest.raises(ValueError, match="`J` must be >= 2 for the paired t-test, got 1"):
        compare_resampled(mean_model, linear_model, X, Y, J=1)
    with pytest.raises(ValueError, match=r"`alternative` must be one of \['greater', 'less', 'two-sided'\]"):
        compare_resampled(mean_model, linear_model, X, Y, alternative="bigger")
    with pytest.raises(ValueError, match="differences between the two losses are constant"):
        compare_resampled(mean_model, mean_model, X, Y, J=5)
    with pytest.raises(ValueError, match="`loss_a` and `loss_b` must be losses on the same examples"):
        holdout_paired_ttest([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="`loss_a` needs at least 2 values, got 1"):
        holdout_paired_ttest([1.0], [1.0])
    with pytest.raises(ValueError, match=r"`confidence_level` must be in \(0, 1\)"):
        holdout_paired_ttest([1.0, 2.0, 4.0], [1.5, 2.0, 3.0]).confidence_interval(95)
