"""fastnet.stats.compare_errors and cochran_cox_ttest (Prechelt 1994, Proben1)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from fastnet.stats import (
    CochranCoxResult,
    ErrorComparison,
    cochran_cox_ttest,
    compare_errors,
)


def lognormal(seed, mu, sigma, n):
    return np.exp(np.random.default_rng(seed).normal(mu, sigma, n))


# --- Cochran/Cox ---------------------------------------------------------------


def test_cochran_cox_hand_computed_unequal_n():
    a = np.array([1.0, 2.0, 3.0, 4.0])          # mean 2.5, var 5/3, n 4
    b = np.array([2.0, 4.0, 6.0, 8.0, 10.0, 12.0])  # mean 7, var 14, n 6
    r = cochran_cox_ttest(a, b, alpha=0.05)
    w1, w2 = (5 / 3) / 4, 14 / 6
    assert_allclose(r.statistic, (2.5 - 7.0) / np.sqrt(w1 + w2), rtol=1e-14)
    # t1 = scipy.stats.t.isf(0.025, 3) = 3.182446305284263
    # t2 = scipy.stats.t.isf(0.025, 5) = 2.570581835636314
    t1, t2 = 3.182446305284263, 2.570581835636314
    assert_allclose(r.critical_value, (w1 * t1 + w2 * t2) / (w1 + w2), rtol=1e-12)
    # The p-value is the level at which the critical value equals |t|.
    ta = stats.t.isf(r.pvalue / 2, 3)
    tb = stats.t.isf(r.pvalue / 2, 5)
    assert_allclose((w1 * ta + w2 * tb) / (w1 + w2), abs(r.statistic), rtol=1e-10)
    # It lies between the two Student p-values with 3 and 5 df.
    p3, p5 = 2 * stats.t.sf(abs(r.statistic), 3), 2 * stats.t.sf(abs(r.statistic), 5)
    assert min(p3, p5) < r.pvalue < max(p3, p5)
    assert isinstance(r, CochranCoxResult)


def test_cochran_cox_equal_n_is_student():
    a, b = lognormal(0, 0, 1, 12), lognormal(1, 0.5, 2, 12)
    r = cochran_cox_ttest(a, b)
    # equal n: t' = t_{n-1}; scipy.stats.ttest_ind(a, b, equal_var=True) has the same t
    assert_allclose(r.statistic, stats.ttest_ind(a, b).statistic, rtol=1e-12)
    assert_allclose(r.pvalue, 2 * stats.t.sf(abs(r.statistic), 11), rtol=1e-10)
    assert_allclose(r.critical_value, stats.t.isf(0.025, 11), rtol=1e-12)


def test_cochran_cox_extremes():
    assert cochran_cox_ttest([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]).pvalue == 1.0
    x = np.linspace(0.0, 1e-6, 50)
    r = cochran_cox_ttest(x, 100.0 + x)  # t ~ -1e9 with 49 df
    assert r.pvalue == 0.0  # beyond the 1e-200 floor


def test_cochran_cox_validation():
    with pytest.raises(ValueError, match="`a` and `b` are both constant"):
        cochran_cox_ttest([1.0, 1.0], [2.0, 2.0])
    with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\), got 1.5"):
        cochran_cox_ttest([1.0, 2.0], [2.0, 3.0], alpha=1.5)
    with pytest.raises(ValueError, match="`b` needs at least 2 values, got 1"):
        cochran_cox_ttest([1.0, 2.0], [2.0])


# --- compare_errors --------------------------------------------------------------


def test_welch_matches_scipy_on_logs():
    a, b = lognormal(2, 0.0, 0.2, 20), lognormal(3, 0.2, 0.4, 30)
    r = compare_errors(a, b, remove_outliers=False)
    # scipy.stats.ttest_ind(np.log(a), np.log(b), equal_var=False)
    ref = stats.ttest_ind(np.log(a), np.log(b), equal_var=False)
    assert_allclose(r.welch.statistic, ref.statistic, rtol=1e-12)
    assert_allclose(r.welch.pvalue, ref.pvalue, rtol=1e-12)
    assert_allclose(r.welch.df, ref.df, rtol=1e-12)
    cc = cochran_cox_ttest(np.log(a), np.log(b))
    assert_allclose(r.cochran_cox.pvalue, cc.pvalue, rtol=1e-12)
    assert isinstance(r, ErrorComparison)


def test_log_false_uses_raw_values():
    a, b = np.array([1.0, 2.0, 3.0, 4.5]), np.array([2.0, 3.5, 4.0, 6.0])
    r = compare_errors(a, b, log=False)
    assert_allclose(r.welch.statistic, stats.ttest_ind(a, b, equal_var=False).statistic)
    assert_allclose(r.mean_difference, a.mean() - b.mean())


def test_verdict_and_table_entry():
    a, b = lognormal(4, 0.0, 0.1, 30), lognormal(5, 0.2, 0.1, 30)
    r = compare_errors(a, b, names=("P", "S"))
    assert r.significant and r.better == "P" and not r.unreliable
    assert r.pvalue == r.cochran_cox.pvalue and r.statistic == r.cochran_cox.statistic
    assert r.pvalue_percent == 100 * r.pvalue
    assert r.table_entry().startswith("P ")
    assert r.table_entry(labels=("x", "y")).startswith("x ")
    text = str(r)
    assert "Cochran/Cox" in text and "Welch" in text and "P is better" in text


def test_not_significant_gives_dash():
    a, b = lognormal(7, 0.0, 0.3, 20), lognormal(8, 0.0, 0.3, 20)
    r = compare_errors(a, b)
    assert not r.significant and r.better is None
    assert r.table_entry() == "-"


def test_decided_by_welch():
    a, b = lognormal(8, 0.0, 0.2, 10), lognormal(9, 0.2, 0.6, 40)
    r = compare_errors(a, b, decided_by="welch")
    assert r.pvalue == r.welch.pvalue and r.decided_by == "welch"


def test_outlier_removed_when_it_restores_normality():
    a = lognormal(10, 0.0, 0.1, 30)
    a[7] = 50.0  # one wild run
    b = lognormal(11, 0.1, 0.1, 30)
    r = compare_errors(a, b)
    s = r.sample_a
    assert s.normality_pvalue_before < 0.05
    assert s.removed_index.tolist() == [7]
    assert s.removed.tolist() == [50.0]
    assert s.n == 29 and s.normal and not r.unreliable
    assert_allclose(s.normality_pvalue, stats.shapiro(np.log(np.delete(a, 7))).pvalue)
    assert r.sample_b.n_removed == 0


def test_outliers_never_exceed_ten_percent_and_flag_unreliable():
    # A bimodal sample is non-normal in its bulk: trimming 10% cannot fix it.
    rng = np.random.default_rng(12)
    a = np.exp(np.concatenate([rng.normal(0, 0.05, 15), rng.normal(2, 0.05, 15)]))
    b = lognormal(13, 1.0, 0.2, 30)
    r = compare_errors(a, b)
    assert r.sample_a.n_removed == 0  # removal did not restore normality: remove nothing
    assert not r.sample_a.normal and r.unreliable
    assert r.table_entry().startswith("(") and r.table_entry().endswith(")")


def test_at_most_floor_ten_percent_removed():
    a = lognormal(14, 0.0, 0.1, 20)
    a[[0, 1]] = [40.0, 60.0]  # two outliers out of 20: exactly the 10% budget
    r = compare_errors(a, lognormal(15, 0, 0.1, 20))
    assert r.sample_a.n_removed == 2 and r.sample_a.normal
    a[2] = 80.0  # three outliers: over budget, nothing may be removed
    r = compare_errors(a, lognormal(15, 0, 0.1, 20))
    assert r.sample_a.n_removed == 0 and r.unreliable


def test_small_samples_are_never_trimmed():
    a = np.array([1.0, 1.1, 0.9, 1.05, 0.95, 1.02, 0.98, 1.01, 30.0])  # n = 9: budget 0
    r = compare_errors(a, lognormal(16, 0, 0.1, 9))
    assert r.sample_a.n_removed == 0 and r.unreliable


def test_remove_outliers_false_and_ks_normality():
    a = lognormal(10, 0.0, 0.1, 30)
    a[7] = 50.0
    r = compare_errors(a, lognormal(11, 0.1, 0.1, 30), remove_outliers=False)
    assert r.sample_a.n_removed == 0 and r.unreliable
    r = compare_errors(a, lognormal(11, 0.1, 0.1, 30), normality_test="ks")
    assert r.normality_test == "ks"
    assert r.sample_a.n_removed <= 3


def test_constant_sample_is_unreliable_not_an_error():
    r = compare_errors([2.0, 2.0, 2.0, 2.0], lognormal(17, 0, 0.1, 10))
    assert r.unreliable and np.isnan(r.sample_a.normality_pvalue)


def test_repr_is_readable():
    r = compare_errors(lognormal(1, 0, 0.1, 10), lognormal(2, 0, 0.1, 10))
    assert repr(r).startswith("ErrorComparison(names=('a', 'b'), pvalue=")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(a=[1.0, 2.0], b=[1.0, 2.0, 3.0]), "`a` needs at least 3 values, got 2"),
        (dict(a=[1.0, 2.0, np.nan], b=[1.0, 2.0, 3.0]), "`a` contains NaN or infinite"),
        (dict(a=[1.0, 2.0, 3.0], b=[[1.0, 2.0, 3.0]]), "`b` must be one-dimensional"),
        (dict(a=[1.0, 0.0, 3.0], b=[1.0, 2.0, 3.0]), r"`a` has values <= 0 \(smallest 0\)"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], alpha=0.0), r"`alpha` must be in \(0, 1\)"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], normality_alpha=2.0),
         r"`normality_alpha` must be in \(0, 1\)"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], max_outlier_fraction=0.5),
         r"`max_outlier_fraction` must be < 0.5"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], max_outlier_fraction=-0.1),
         r"`max_outlier_fraction` must be in \[0, 1\]"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], normality_test="lilliefors"),
         r"`normality_test` must be one of \['ks', 'shapiro'\], got 'lilliefors'"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], decided_by="student"),
         r"`decided_by` must be one of \['cochran_cox', 'welch'\]"),
        (dict(a=[1.0, 2.0, 3.0], b=[1.0, 2.0, 3.0], names=("x", "x")),
         "`names` must be two different strings"),
        (dict(a=[2.0, 2.0, 2.0], b=[3.0, 3.0, 3.0]), "`a` and `b` are both constant"),
    ],
)
def test_compare_errors_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        compare_errors(**kwargs)


def test_table_entry_labels_validation():
    r = compare_errors(lognormal(1, 0, 0.1, 10), lognormal(2, 0, 0.1, 10))
    with pytest.raises(ValueError, match="`labels` must hold two labels, got 3"):
        r.table_entry(labels=("a", "b", "c"))


@pytest.mark.parametrize("alpha", [-10**400, 10**400])
def test_alpha_beyond_float_range_is_a_value_error(alpha):
    with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\), got an integer of about "
                                         r"400 digits"):
        cochran_cox_ttest([1.0, 2.0, 3.0], [2.0, 3.0, 5.0], alpha=alpha)
    with pytest.raises(ValueError, match=r"`a` must hold finite numbers, got an integer beyond"):
        cochran_cox_ttest([1.0, 2.0, 10**400], [2.0, 3.0, 5.0])


def test_compare_errors_on_4000_values_is_fast():
    import time

    rng = np.random.default_rng(0)
    a, b = rng.uniform(1, 2, 4000), rng.uniform(1, 2, 4000)   # never normal: every removal tried
    start = time.process_time()
    r = compare_errors(a, b)
    assert time.process_time() - start < 2.0
    assert r.unreliable and r.sample_a.n_removed == 0


def test_max_outliers_caps_the_removals():
    rng = np.random.default_rng(3)
    a = np.exp(np.concatenate([rng.normal(0, 0.1, 60), [3.0, 3.5, 4.0]]))
    b = np.exp(rng.normal(0, 0.1, 63))
    assert compare_errors(a, b).sample_a.n_removed == 3
    assert compare_errors(a, b, max_outliers=2).sample_a.n_removed == 0   # 2 never suffice
    with pytest.raises(ValueError, match=r"`max_outliers` must be >= 0, got -1"):
        compare_errors(a, b, max_outliers=-1)
