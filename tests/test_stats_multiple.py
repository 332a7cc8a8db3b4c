"""Holm's adjustment, the smallest p-value over N datasets, and the Welch interval."""
import itertools

import numpy as np
import pytest
from scipy import stats

from fastnet.stats import (
    compare_errors, datasets_needed, holm, sign_test, smallest_pvalue, wilcoxon_test,
)


def test_holm_hand_example():
    # Holm (1979) by hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, then running max.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.2]) == pytest.approx([0.2])
    out = holm([0.01, np.nan, 0.02])  # a test not made is not counted
    assert np.isnan(out[1]) and out[[0, 2]] == pytest.approx([0.02, 0.02])


def _holm_rejects(p, alpha):
    """Holm's procedure as the paper states it: step down until the first acceptance."""
    order = np.argsort(p, kind="stable")
    rejected = np.zeros(len(p), bool)
    for k, i in enumerate(order):
        if p[i] > alpha / (len(p) - k):
            break
        rejected[i] = True
    return rejected


@pytest.mark.parametrize("seed", range(20))
def test_holm_adjusted_values_reject_what_the_procedure_rejects(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.1, rng.integers(1, 12)) ** rng.uniform(0.5, 2)
    adj = holm(p)
    assert np.all(adj >= p) and np.all(adj <= 1)
    for alpha in (0.01, 0.05, 0.1):
        assert np.array_equal(adj <= alpha, _holm_rejects(p, alpha))


def test_holm_refuses_bad_input():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match="1-D"):
        holm([[0.1]])


@pytest.mark.parametrize("n", range(1, 9))
def test_smallest_pvalue_is_what_the_tests_give_when_one_side_wins_everywhere(n):
    a, b = np.arange(1.0, n + 1), np.arange(1.0, n + 1) + np.arange(1, n + 1) / 10
    assert sign_test(a, b).pvalue == pytest.approx(smallest_pvalue(n))
    assert wilcoxon_test(a, b).pvalue == pytest.approx(smallest_pvalue(n))
    assert stats.binomtest(n, n).pvalue == pytest.approx(smallest_pvalue(n))
    # and no pattern of signs gives less (all 2^n of them, exact Wilcoxon)
    pmin = min(wilcoxon_test(a, a + np.array(s) * np.arange(1, n + 1)).pvalue
               for s in itertools.product((-1, 1), repeat=n))
    assert pmin == pytest.approx(smallest_pvalue(n))


def test_datasets_needed():
    for alpha in (0.2, 0.05, 0.01, 0.001):
        n = datasets_needed(alpha)
        assert smallest_pvalue(n) < alpha <= smallest_pvalue(n - 1)
    assert datasets_needed() == 6 and smallest_pvalue(0) == 1.0


def test_welch_interval_of_compare_errors():
    rng = np.random.default_rng(3)
    a, b = np.exp(rng.normal(0, 0.2, 12)), np.exp(rng.normal(0.3, 0.4, 9))
    r = compare_errors(a, b, alpha=0.1)
    la, lb = np.log(a), np.log(b)  # both samples normal here: nothing removed
    assert r.sample_a.n_removed == r.sample_b.n_removed == 0
    wa, wb = la.var(ddof=1) / la.size, lb.var(ddof=1) / lb.size
    df = (wa + wb) ** 2 / (wa ** 2 / (la.size - 1) + wb ** 2 / (lb.size - 1))
    half = stats.t.ppf(0.95, df) * np.sqrt(wa + wb)
    d = la.mean() - lb.mean()
    assert r.welch.confidence_level == pytest.approx(0.9)
    assert r.welch.confidence_interval == pytest.approx((d - half, d + half))
    assert r.mean_difference == pytest.approx(d)
    assert "90 % CI" in str(r)
