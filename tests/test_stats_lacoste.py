"""Lacoste, Laviolette & Marchand (2012): prob_better, Poisson binomial, sign, Wilcoxon, tables."""

import itertools
from math import comb

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special, stats

from fastnet.stats import (
    PairwiseTable,
    PoissonBinomialResult,
    pairwise_table,
    poisson_binomial_test,
    prob_better,
    prob_better_predictions,
    sign_test,
    wilcoxon_test,
)

# --- single test set ---------------------------------------------------------------


def test_prob_better_closed_forms():
    assert prob_better(0, 0) == 0.5
    # I_{1/2}(1, k + 1) = 1 - 2**-(k+1)
    for k in range(6):
        assert_allclose(prob_better(0, k), 1 - 0.5 ** (k + 1), rtol=1e-14)
    # symmetry: I_{1/2}(a, b) = 1 - I_{1/2}(b, a)
    assert_allclose(prob_better(7, 3) + prob_better(3, 7), 1.0, rtol=1e-14)
    # scipy.special.betainc(13 + 1, 20 + 1, 0.5)
    assert_allclose(prob_better(13, 20), special.betainc(14, 21, 0.5), rtol=1e-14)


def test_more_errors_for_h_means_lower_probability():
    p = prob_better(np.arange(0, 30), 10)
    assert isinstance(p, np.ndarray)
    assert np.all(np.diff(p) < 0)
    assert p[0] > 0.5 > p[-1]


def test_prob_better_matches_dirichlet_posterior_by_monte_carlo():
    # Theorem 4.1: Pr(p_h < p_g) under Dirichlet(k_h + 1, k_g + 1, kbar + 1).
    k_h, k_g, k_bar = 12, 20, 300
    draws = np.random.default_rng(0).dirichlet([k_h + 1, k_g + 1, k_bar + 1], size=200_000)
    mc = np.mean(draws[:, 0] < draws[:, 1])
    assert abs(prob_better(k_h, k_g) - mc) < 0.005  # MC standard error ~0.001


def test_prob_better_prior():
    # prior alpha: I_{1/2}(k_h + alpha, k_g + alpha)
    assert_allclose(prob_better(2, 5, prior=0.5), special.betainc(2.5, 5.5, 0.5))


def test_prob_better_predictions():
    y = np.array([0, 1, 1, 0, 1, 2])
    h = np.array([0, 1, 1, 0, 0, 2])   # wrong on example 4
    g = np.array([0, 1, 0, 1, 0, 1])   # wrong on 2, 3, 4, 5
    # k_h = #(h wrong, g right) = 0; k_g = #(g wrong, h right) = 3 (examples 2, 3, 5)
    assert prob_better_predictions(h, g, y) == prob_better(0, 3)
    assert prob_better_predictions(g, h, y) == prob_better(3, 0)


def test_prob_better_predictions_one_hot_rows():
    y = np.eye(3)[[0, 1, 2, 1]]
    h = np.eye(3)[[0, 1, 2, 2]]  # wrong on the last row
    g = np.eye(3)[[0, 0, 2, 1]]  # wrong on the second row
    assert prob_better_predictions(h, g, y) == 0.5  # k_h = k_g = 1


def test_prob_better_validation():
    with pytest.raises(ValueError, match="`k_h` must be >= 0"):
        prob_better(-1, 3)
    with pytest.raises(ValueError, match="`k_g` contains NaN or infinite"):
        prob_better(1, np.nan)
    with pytest.raises(ValueError, match="`prior` must be positive and finite, got 0.0"):
        prob_better(1, 2, prior=0.0)
    with pytest.raises(ValueError, match="`pred_h`, `pred_g` and `y` must have the same shape"):
        prob_better_predictions([0, 1], [0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="`y` must hold at least one example"):
        prob_better_predictions([], [], [])


# --- Poisson binomial test -------------------------------------------------------------


def brute_force_pmf(p):
    """Eq. (5): sum over d in {0,1}^N of I(sum d = kappa) prod p^d (1-p)^(1-d)."""
    n = len(p)
    pmf = np.zeros(n + 1)
    for d in itertools.product((0, 1), repeat=n):
        d = np.array(d)
        pmf[d.sum()] += np.prod(np.where(d == 1, p, 1 - p))
    return pmf


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12])
def test_poisson_binomial_recursion_vs_enumeration(n):
    p = np.random.default_rng(n).random(n)
    r = poisson_binomial_test(p)
    ref = brute_force_pmf(p)
    assert_allclose(r.pmf, ref, rtol=1e-12, atol=1e-15)
    kappa = np.arange(n + 1)
    expected = np.sum(ref * special.betainc(n - kappa + 1, kappa + 1, 0.5))
    assert_allclose(r.probability, expected, rtol=1e-12)
    assert_allclose(r.expected_wins, p.sum())
    assert isinstance(r, PoissonBinomialResult)


def test_poisson_binomial_hand_values():
    # One dataset where A is surely better: kappa = 1, Pr = I_{1/2}(1, 2) = 3/4.
    assert_allclose(poisson_binomial_test([1.0]).probability, 0.75)
    # All p_i = 1/2: by symmetry Pr(A better) = 1/2.
    assert_allclose(poisson_binomial_test(np.full(9, 0.5)).probability, 0.5, rtol=1e-12)
    # Equal p_i = q: the pmf is binomial(N, q).
    assert_allclose(poisson_binomial_test(np.full(7, 0.3)).pmf, stats.binom.pmf(range(8), 7, 0.3))
    r = poisson_binomial_test([0.9, 0.95, 0.2])
    assert r.better == "A" and poisson_binomial_test([0.1, 0.05]).better == "B"


def test_poisson_binomial_swapping_roles():
    p = np.random.default_rng(3).random(10)
    assert_allclose(poisson_binomial_test(p).probability + poisson_binomial_test(1 - p).probability,
                    1.0, rtol=1e-12)


def test_poisson_binomial_validation():
    with pytest.raises(ValueError, match=r"`p` must hold probabilities in \[0, 1\]"):
        poisson_binomial_test([0.5, 1.2])
    with pytest.raises(ValueError, match="`p` needs at least 1 values, got 0"):
        poisson_binomial_test([])
    with pytest.raises(ValueError, match="`prior` must be positive and finite"):
        poisson_binomial_test([0.5], prior=-1)


# --- sign test -------------------------------------------------------------------------


def rho_s(k_plus, k_minus):
    """Lacoste et al. Section 6.1, capped at 1."""
    n = k_plus + k_minus
    return min(1.0, 2 * sum(comb(n, i) for i in range(min(k_plus, k_minus) + 1)) / 2**n)


def test_sign_test_matches_paper_formula_and_scipy():
    rng = np.random.default_rng(4)
    for _ in range(20):
        a, b = rng.integers(0, 6, 14), rng.integers(0, 6, 14)
        r = sign_test(a, b)
        kp, km = int(np.sum(a < b)), int(np.sum(a > b))
        assert (r.statistic, r.n_minus) == (kp, km)
        assert_allclose(r.pvalue, rho_s(kp, km), rtol=1e-12)
        if kp + km:
            # scipy.stats.binomtest(kp, kp + km, 0.5).pvalue
            assert_allclose(r.pvalue, stats.binomtest(kp, kp + km, 0.5).pvalue, rtol=1e-12)


def test_sign_test_hand_values_and_ties():
    r = sign_test([0.1, 0.2, 0.05, 0.3], [0.12, 0.25, 0.07, 0.3])
    assert (r.statistic, r.n_minus, r.pvalue, r.better) == (3, 0, 0.25, "A")
    assert r.confidence == 0.75
    r = sign_test([1, 2, 3], [1, 2, 3])
    assert r.pvalue == 1.0 and r.better is None


def test_sign_test_validation():
    with pytest.raises(ValueError, match="`err_a` and `err_b` must have one value per dataset"):
        sign_test([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="`err_b` contains NaN"):
        sign_test([1, 2], [1, np.nan])


# --- Wilcoxon signed-rank --------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 6, 10, 20, 40])
def test_wilcoxon_matches_scipy_exact_without_ties(n):
    d = np.random.default_rng(n).normal(0.2, 1.0, n)
    r = wilcoxon_test(np.zeros(n), d)  # d_i = err_b - err_a = d
    # scipy.stats.wilcoxon(d, method="exact")
    ref = stats.wilcoxon(d, method="exact")
    assert_allclose(r.pvalue, ref.pvalue, rtol=1e-12)
    assert_allclose(min(r.statistic, r.c_minus), ref.statistic)
    assert r.statistic + r.c_minus == n * (n + 1) / 2


def brute_force_signed_rank_p(d):
    """Exact conditional p-value by enumerating all 2^n sign patterns on the mid-ranks."""
    d = d[d != 0]
    r = stats.rankdata(np.abs(d))
    c_plus = r[d > 0].sum()
    c_min = min(c_plus, r.sum() - c_plus)
    sums = np.array([np.dot(s, r) for s in itertools.product((0, 1), repeat=d.size)])
    return min(1.0, 2 * np.mean(sums <= c_min + 1e-9))


def test_wilcoxon_with_ties_and_zeros_vs_enumeration():
    a = np.array([0.10, 0.20, 0.30, 0.40, 0.10, 0.25, 0.33, 0.50, 0.12, 0.20, 0.31])
    b = np.array([0.12, 0.18, 0.30, 0.44, 0.12, 0.29, 0.30, 0.55, 0.10, 0.24, 0.35])
    r = wilcoxon_test(a, b)
    d = b - a
    assert r.n == np.count_nonzero(d)  # the zero difference is dropped
    assert_allclose(r.pvalue, brute_force_signed_rank_p(d), rtol=1e-12)


def test_wilcoxon_hand_values_and_n_test():
    r = wilcoxon_test([0.1, 0.2, 0.3], [0.2, 0.4, 0.6])
    assert (r.statistic, r.c_minus, r.pvalue, r.better) == (6.0, 0.0, 0.25, "A")
    # counts with test-set sizes: d_i = (k_B - k_A) / m_i
    r2 = wilcoxon_test([1, 2, 3], [2, 4, 6], n_test=[10, 10, 10])
    assert r2.pvalue == r.pvalue
    assert wilcoxon_test([1, 2], [1, 2]).pvalue == 1.0


def test_wilcoxon_validation():
    with pytest.raises(ValueError, match=r"`n_test` must have one size per dataset \(2\), got 3"):
        wilcoxon_test([1, 2], [2, 3], n_test=[5, 5, 5])
    with pytest.raises(ValueError, match="`n_test` must hold test-set sizes > 0"):
        wilcoxon_test([1, 2], [2, 3], n_test=[5, 0])


# --- pairwise table --------------------------------------------------------------------


def make_losses(seed, rates, n_datasets=6, n_examples=200):
    rng = np.random.default_rng(seed)
    return {name: [rng.random(n_examples) < r for _ in range(n_datasets)] for name, r in rates.items()}


def test_pairwise_poisson_binomial_table():
    losses = make_losses(0, {"svm": 0.1, "ann": 0.15, "parzen": 0.2})
    t = pairwise_table(losses, datasets=[f"d{i}" for i in range(6)])
    assert isinstance(t, PairwiseTable)
    assert t.names == ("svm", "ann", "parzen") and t.method == "poisson_binomial"
    assert_allclose(np.diag(t.matrix), 0.5)
    assert_allclose(t.matrix + t.matrix.T, 1.0, rtol=1e-12)
    # entry (svm, ann) = poisson_binomial_test of per-dataset prob_better
    a, b = losses["svm"], losses["ann"]
    p = [prob_better(np.sum(x & ~y), np.sum(y & ~x)) for x, y in zip(a, b)]
    assert_allclose(t.matrix[0, 1], poisson_binomial_test(p).probability, rtol=1e-14)
    assert t.matrix[0, 2] > 0.9  # 10% vs 20% error on 6 datasets of 200
    assert "Poisson binomial" in str(t) and "svm" in str(t)
    assert t.pvalue is None and t.datasets[0] == "d0"


def test_pairwise_sign_and_wilcoxon_from_rates():
    rates = np.array([[0.157, 0.140, 0.003, 0.000, 0.154],   # Lacoste Table 1: svm
                      [0.157, 0.150, 0.012, 0.000, 0.202],   # ann
                      [0.172, 0.140, 0.006, 0.001, 0.192]])  # parzen
    t = pairwise_table(rates, names=["svm", "ann", "parzen"], method="sign")
    # svm vs ann: svm wins Glass, MNIST:08, Sonar; 2 ties -> 3 wins, 0 losses
    assert_allclose(t.pvalue[0, 1], 0.25)
    assert_allclose(t.matrix[0, 1], 0.75)
    assert np.isnan(t.matrix[1, 0]) and np.isnan(t.matrix[0, 0])
    assert_allclose(t.pvalue, t.pvalue.T, equal_nan=True)
    w = pairwise_table(rates, names=["svm", "ann", "parzen"], method="wilcoxon")
    assert_allclose(w.pvalue[0, 2], wilcoxon_test(rates[0], rates[2]).pvalue)


def test_pairwise_sign_from_losses_uses_error_rates():
    losses = make_losses(1, {"x": 0.1, "y": 0.3}, n_datasets=5)
    t = pairwise_table(losses, method="sign")
    rates = {k: [v.mean() for v in vs] for k, vs in losses.items()}
    assert_allclose(t.pvalue[0, 1], sign_test(rates["x"], rates["y"]).pvalue)


def test_pairwise_counts_with_n_test():
    counts = [[10, 20, 30], [12, 25, 31]]
    t = pairwise_table(counts, method="wilcoxon", n_test=[100, 200, 300])
    assert_allclose(t.pvalue[0, 1],
                    wilcoxon_test([0.1, 0.1, 0.1], [0.12, 0.125, 31 / 300]).pvalue)


def test_pairwise_validation():
    with pytest.raises(ValueError, match=r"`method` must be one of \['poisson_binomial', 'sign', 'wilcoxon'\]"):
        pairwise_table({"a": [[0, 1]], "b": [[1, 1]]}, method="friedman")
    with pytest.raises(ValueError, match="Poisson binomial test needs per-example 0/1 losses"):
        pairwise_table(np.array([[0.1, 0.2], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="at least 2 algorithms, got 1"):
        pairwise_table({"a": [[0, 1]]})
    with pytest.raises(ValueError, match="must hold 0/1 losses"):
        pairwise_table({"a": [[0, 2]], "b": [[1, 1]]})
    with pytest.raises(ValueError, match="dataset 0 has test sets of different sizes"):
        pairwise_table({"a": [[0, 1, 1]], "b": [[1, 1]]})
    with pytest.raises(ValueError, match="must give every algorithm the same datasets"):
        pairwise_table({"a": [[0, 1], [1, 1]], "b": [[1, 1]]})
    with pytest.raises(ValueError, match="`names` has 3 entries but `errors` has 2"):
        pairwise_table([[0.1], [0.2]], names=["a", "b", "c"], method="sign")
    with pytest.raises(ValueError, match="`names` must be distinct"):
        pairwise_table([[0.1], [0.2]], names=["a", "a"], method="sign")
    with pytest.raises(ValueError, match=r"`datasets` has 1 names for 2 datasets"):
        pairwise_table([[0.1, 0.2], [0.2, 0.1]], method="sign", datasets=["x"])
    with pytest.raises(ValueError, match="`n_test` must hold 2 test-set sizes > 0"):
        pairwise_table([[1, 2], [2, 1]], method="sign", n_test=[10])
    with pytest.raises(ValueError, match="`errors` contains NaN or infinite"):
        pairwise_table([[0.1, np.nan], [0.2, 0.1]], method="sign")
    with pytest.raises(ValueError, match="`names` must match the keys"):
        pairwise_table({"a": [[0, 1]], "b": [[1, 1]]}, names=["b", "a"])


def test_counts_beyond_float_range_are_value_errors():
    with pytest.raises(ValueError, match=r"`k_h` must hold finite numbers, got an integer beyond "
                                         r"float64's range"):
        prob_better(10**400, 0)
    with pytest.raises(ValueError, match=r"`k_g` must hold finite numbers"):
        prob_better(0, [1, -10**400])
    with pytest.raises(TypeError, match=r"`k_h` must be a count or an array of counts, got str"):
        prob_better("many", 0)
    with pytest.raises(TypeError, match=r"^`k_h` must be real, got dtype complex128\.$"):
        prob_better(np.array([3 + 1j]), 0)


def test_complex_error_tables_are_refused_not_cut_to_their_real_parts():
    rates = np.array([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(TypeError, match=r"^`errors` must be real, got dtype complex128\.$"):
        pairwise_table(rates + 1e-3j, names=["a", "b"])
    losses = {"a": [np.array([0, 1, 1])], "b": [np.array([1, 0, 1]) + 0j]}
    with pytest.raises(TypeError, match=r"must be real, got dtype complex128\.$"):
        pairwise_table(losses, method="poisson_binomial")
