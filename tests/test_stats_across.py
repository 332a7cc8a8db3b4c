"""Statistics across problems: performance profiles and the AlgoPerf score, the expected
best of k trials, Friedman/Nemenyi, and the Bayesian signed-rank test."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from fastnet.stats import (
    bayesian_signed_rank,
    expected_best,
    friedman_nemenyi,
    nemenyi_q,
    performance_profiles,
)
from _extras import needs

# ------------------------------------------------------------------ performance profiles


def _score_by_grid(ratios, r_max, points=200001):
    """The score as a fine Riemann sum (midpoints): a check of the exact integral."""
    tau = np.linspace(1.0, r_max, points)
    mid = (tau[1:] + tau[:-1]) / 2
    rho = (ratios[:, :, None] <= mid).mean(axis=1)
    return (rho * np.diff(tau)).sum(axis=1) / (r_max - 1)


def test_profile_at_one_is_the_share_of_problems_won_ties_counting_for_each():
    costs = np.array([[1.0, 5.0, 2.0, np.inf, 3.0],
                      [1.0, 4.0, 3.0, 7.0, 3.0],
                      [2.0, 6.0, 2.0, 8.0, 9.0]])
    r = performance_profiles(costs, algorithms=["a", "b", "c"])
    best = costs.min(axis=0)
    wins = (costs == best).mean(axis=1)    # ties: a win for every tied algorithm
    assert r.won.tolist() == wins.tolist() == [3 / 5, 4 / 5, 1 / 5]
    assert r.rho(1.0).tolist() == wins.tolist()
    assert r.rho(0.999).tolist() == [0.0, 0.0, 0.0]
    assert r.rho([1.0, 100.0]).shape == (3, 2)
    assert r.rho(np.inf)[0] == 4 / 5      # a miss never counts


def test_score_by_hand():
    # A: ratios 1, 2, 5 (beyond r_max), inf -> (3 + 2 + 0 + 0) / 3 / 4
    # B: ratios 1.5, 1, 1, 1 -> (2.5 + 3 + 3 + 3) / 3 / 4
    r = performance_profiles({"A": [2.0, 2.0, 5.0, np.inf], "B": [3.0, 1.0, 1.0, 7.0]})
    assert r.ratios.tolist() == [[1.0, 2.0, 5.0, np.inf], [1.5, 1.0, 1.0, 1.0]]
    assert r.scores == pytest.approx([5 / 12, 11.5 / 12], abs=1e-15)
    # one problem, ratio 2, r_max 3: the profile is 0 on [1, 2) and 1 on [2, 3]: score 1/2
    r = performance_profiles([[1.0], [2.0]], r_max=3.0)
    assert r.scores.tolist() == [1.0, 0.5]
    assert r.taus.tolist() == [1.0, 2.0]


def test_exact_score_equals_a_fine_grid():
    rng = np.random.default_rng(4)
    costs = rng.lognormal(0.0, 0.7, (4, 9))
    costs[rng.random((4, 9)) < 0.15] = np.inf
    costs[:, 3] = costs[0, 3]               # a four-way tie
    for r_max in (4.0, 2.5):
        r = performance_profiles(costs, r_max=r_max)
        assert r.scores == pytest.approx(_score_by_grid(r.ratios, r_max), abs=2e-5)


def test_a_problem_every_algorithm_missed_counts_as_missed_by_each():
    r = performance_profiles({"A": {"p": 1.0, "q": np.inf}, "B": {"q": np.inf, "p": 2.0}})
    assert r.problems == ("p", "q")
    assert r.all_missed.tolist() == [False, True]
    assert np.isinf(r.ratios[:, 1]).all()
    assert r.rho(1e9).tolist() == [0.5, 0.5]
    assert r.scores.tolist() == [0.5, pytest.approx(2 / 3 / 2)]


def test_zero_costs_the_zeros_win_the_rest_never_reach():
    r = performance_profiles([[0.0, 1.0], [0.0, 2.0], [0.5, 3.0]])
    assert r.ratios[:, 0].tolist() == [1.0, 1.0, np.inf]
    assert r.ratios[:, 1].tolist() == [1.0, 2.0, 3.0]


def test_profiles_refuse_what_has_no_ratio():
    with pytest.raises(ValueError, match="NaN"):
        performance_profiles([[1.0, np.nan], [1.0, 2.0]])
    with pytest.raises(ValueError, match=">= 0"):
        performance_profiles([[1.0, -1.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match="r_max"):
        performance_profiles([[1.0]], r_max=1.0)
    with pytest.raises(ValueError, match="problems"):
        performance_profiles({"A": {"p": 1.0}, "B": {"q": 1.0}})
    with pytest.raises(ValueError, match="names"):
        performance_profiles([[1.0, 2.0]], problems=["p"])
    with pytest.raises(ValueError, match="distinct"):
        performance_profiles([[1.0, 2.0]], problems=["p", "p"])


# ------------------------------------------------------------------ expected best of k


def _brute_force(values, k, best):
    """Mean of `best` over all n^k ordered draws with replacement (each equally likely)."""
    draws = list(itertools.product(values, repeat=k))
    return sum(best(d) for d in draws) / len(draws)


@pytest.mark.parametrize("values", [[3.0, 1.0, 2.0], [0.5, 0.5, 2.0, 1.0], [4.0], [1.0, 1.0, 1.0]])
def test_expected_best_equals_enumeration_of_every_draw(values):
    n = len(values)
    for lower in (True, False):
        r = expected_best(values, lower_is_better=lower, k=5, n_boot=0)
        assert r.k.tolist() == [1, 2, 3, 4, 5]
        assert r.low is None and r.high is None
        for k in range(1, 6):
            pick = min if lower else max
            want = _brute_force(values, k, pick)
            assert r.expected[k - 1] == pytest.approx(want, rel=1e-12)
            sq = _brute_force(values, k, lambda d, pick=pick: pick(d) ** 2)
            assert r.std[k - 1] == pytest.approx(math.sqrt(max(sq - want**2, 0)), abs=1e-9)
    assert expected_best(values, n_boot=0).k.tolist() == list(range(1, n + 1))


def test_expected_best_k_one_is_the_mean_and_tends_to_the_extreme():
    x = np.random.default_rng(0).normal(size=30)
    r = expected_best(x, k=[1, 1000], n_boot=0)
    assert r.expected[0] == pytest.approx(x.mean())
    assert r.expected[1] == pytest.approx(x.min(), abs=1e-9)
    r = expected_best(x, lower_is_better=False, k=[1000], n_boot=0)
    assert r.expected[0] == pytest.approx(x.max(), abs=1e-9)
    assert np.all(np.diff(expected_best(x, n_boot=0).expected) <= 1e-15)   # never worse


def test_expected_best_band_is_the_percentile_bootstrap_and_seeded():
    x = np.random.default_rng(1).exponential(size=12)
    r = expected_best(x, n_boot=400, confidence=0.9, seed=5)
    assert np.all(r.low <= r.high)
    # the same band by simulation: resample, take the exact curve of each resample
    rng = np.random.default_rng(5)
    curves = np.array([expected_best(x[rng.integers(0, 12, 12)], n_boot=0).expected
                       for _ in range(400)])
    low, high = np.quantile(curves, [0.05, 0.95], axis=0)
    assert r.low == pytest.approx(low, rel=1e-12) and r.high == pytest.approx(high, rel=1e-12)
    again = expected_best(x, n_boot=400, confidence=0.9, seed=5)
    assert again.low.tolist() == r.low.tolist()


def test_expected_best_matches_simulation_of_random_search():
    x = np.array([0.31, 0.12, 0.5, 0.12, 0.44, 0.2, 0.9])
    rng = np.random.default_rng(2)
    sims = x[rng.integers(0, x.size, size=(200000, 4))].min(axis=1)
    r = expected_best(x, k=[4], n_boot=0)
    assert r.expected[0] == pytest.approx(sims.mean(), abs=4 * sims.std() / math.sqrt(sims.size))


def test_expected_best_refuses():
    with pytest.raises(ValueError):
        expected_best([1.0, np.inf])
    with pytest.raises(ValueError):
        expected_best([])
    with pytest.raises(ValueError):
        expected_best([1.0], k=0)
    with pytest.raises(ValueError):
        expected_best([1.0], confidence=1.0)


# ------------------------------------------------------------------ Friedman and Nemenyi

DEMSAR_TABLE5 = {0.05: [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164],
                 0.10: [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]}


@pytest.mark.parametrize("alpha", sorted(DEMSAR_TABLE5))
def test_nemenyi_q_is_demsars_table_5(alpha):
    got = [nemenyi_q(k, alpha) for k in range(2, 11)]
    # Demšar's table rounds or cuts at the third decimal
    assert got == pytest.approx(DEMSAR_TABLE5[alpha], abs=1.1e-3)


@pytest.mark.parametrize("seed, ties", [(0, False), (1, True), (2, True)])
def test_friedman_statistic_equals_scipy(seed, ties):
    rng = np.random.default_rng(seed)
    table = rng.normal(size=(4, 11))
    if ties:
        table = np.round(table, 0)           # many ties within problems
        table[2, 3] = np.inf                 # and a miss
    r = friedman_nemenyi(table)
    want = stats.friedmanchisquare(*table)
    assert r.statistic == pytest.approx(want.statistic, rel=1e-12)
    assert r.pvalue == pytest.approx(want.pvalue, rel=1e-10)
    assert r.mean_ranks == pytest.approx(stats.rankdata(table, axis=0).mean(axis=1))
    n, k = table.shape[1], table.shape[0]
    ff = (n - 1) * r.statistic / (n * (k - 1) - r.statistic)
    assert r.iman_davenport == pytest.approx(ff)


def test_ranks_mean_ties_direction_and_demsars_worked_cd():
    r = friedman_nemenyi({"A": [0.1, 0.2, 0.3], "B": [0.1, 0.3, 0.2], "C": [0.5, 0.1, 0.4]})
    assert r.ranks.tolist() == [[1.5, 2.0, 2.0], [1.5, 3.0, 1.0], [3.0, 1.0, 3.0]]
    hi = friedman_nemenyi({"A": [0.1, 0.2, 0.3], "B": [0.1, 0.3, 0.2], "C": [0.5, 0.1, 0.4]},
                          lower_is_better=False)
    assert hi.ranks.tolist() == [[2.5, 2.0, 2.0], [2.5, 1.0, 3.0], [1.0, 3.0, 1.0]]
    # Demšar (2006), Section 3.2.2: k = 4 algorithms on N = 14 data sets, alpha = 0.05
    table = np.random.default_rng(3).normal(size=(4, 14))
    assert friedman_nemenyi(table).critical_difference == pytest.approx(
        2.569 * math.sqrt(4 * 5 / (6 * 14)), abs=1e-3)   # 1.25 in the paper
    assert round(friedman_nemenyi(table).critical_difference, 2) == 1.25


def test_cliques_are_the_maximal_groups_within_the_critical_difference():
    # mean ranks 1, 2, 3, 4 after ranking; 40 problems of the same order: CD 0.74
    table = np.tile(np.arange(1.0, 5.0)[:, None], (1, 40))
    r = friedman_nemenyi(table, algorithms=list("abcd"))
    assert r.mean_ranks.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert r.critical_difference < 1.0 and r.cliques == ()
    assert r.different.sum() == 12 and r.pvalue < 1e-10
    # every algorithm tied on every problem: one clique, no test statistic
    r = friedman_nemenyi(np.ones((3, 5)), algorithms=list("abc"))
    assert r.statistic == 0.0 and r.pvalue == 1.0 and r.cliques == (("a", "b", "c"),)
    # mean ranks 1.5, 1.5, 3, 4 with CD between 1.5 and 2.5: (a b c), (c d)
    from fastnet.stats._rank_tests import _cliques  # (the CD diagram's cliques alone)

    assert _cliques(("a", "b", "c", "d"), np.array([1.5, 1.5, 3.0, 4.0]), 1.6) == (
        ("a", "b", "c"), ("c", "d"))
    assert _cliques(("a", "b", "c"), np.array([3.0, 1.0, 2.0]), 1.5) == (("b", "c"), ("c", "a"))


def test_friedman_refuses_too_small_a_table():
    with pytest.raises(ValueError, match="at least 2"):
        friedman_nemenyi([[1.0, 2.0]])
    with pytest.raises(ValueError, match="at least 2"):
        friedman_nemenyi([[1.0], [2.0]])
    with pytest.raises(ValueError):
        nemenyi_q(1)
    with pytest.raises(ValueError, match="finite"):   # a miss is a cost, not an accuracy
        friedman_nemenyi([[1.0, np.inf], [2.0, 3.0]], lower_is_better=False)


# ------------------------------------------------------------------ Bayesian signed-rank test


def _mc_tolerance(p, n):
    return 5 * math.sqrt(max(p * (1 - p), 1e-4) / n)


def test_all_differences_far_outside_the_rope_exact_probability():
    # z_i = 5 for n problems, z_0 = 0: theta_A = 1 - w_0^2 and theta_rope = w_0^2, with
    # w_0 ~ Beta(s, n): A wins where w_0 < 1/sqrt(2)
    n, s = 6, 0.5
    r = bayesian_signed_rank(np.zeros(n), np.full(n, 5.0), rope=0.1, n_samples=40000, seed=1)
    want = stats.beta(s, n).cdf(2**-0.5)
    assert r.p_a_better == pytest.approx(want, abs=_mc_tolerance(want, 40000))
    assert r.p_equivalent == pytest.approx(1 - want, abs=_mc_tolerance(want, 40000))
    assert r.p_b_better == 0.0
    assert want > 0.999
    # the same with higher-is-better results: B is the better one
    r = bayesian_signed_rank(np.zeros(n), np.full(n, 5.0), rope=0.1, lower_is_better=False)
    assert r.p_b_better > 0.999


def test_one_problem_between_one_and_two_ropes_counts_walsh_averages_with_i_equal_j():
    # z_1 = 1, rope 0.75: z_0 + z_0 = 0 and z_0 + z_1 = 1 fall inside 2 * rope = 1.5,
    # only z_1 + z_1 = 2 above: theta_A = w_1^2, w_1 ~ Beta(1, s); A wins where w_1 > 2**-0.5
    r = bayesian_signed_rank([1.0], [2.0], rope=0.75, n_samples=40000, seed=2)
    want = stats.beta(1, 0.5).sf(2**-0.5)
    assert r.p_a_better == pytest.approx(want, abs=_mc_tolerance(want, 40000))
    assert r.p_a_better + r.p_equivalent + r.p_b_better == pytest.approx(1.0)
    assert np.allclose(r.samples.sum(axis=1), 1.0)


def test_all_differences_inside_the_rope_are_equivalent():
    r = bayesian_signed_rank([1.0, 2.0, 3.0], [1.05, 1.98, 3.0], rope=0.1, n_samples=2000)
    assert (r.p_a_better, r.p_equivalent, r.p_b_better) == (0.0, 1.0, 0.0)


def test_no_difference_without_a_rope_splits_evenly():
    r = bayesian_signed_rank([1.0, 2.0], [1.0, 2.0], rope=0.0, n_samples=1000)
    assert (r.p_a_better, r.p_equivalent, r.p_b_better) == (0.5, 0.0, 0.5)


def test_seeded_and_refusals():
    a, b = [0.1, 0.3, 0.2, 0.5], [0.2, 0.2, 0.4, 0.6]
    assert np.array_equal(bayesian_signed_rank(a, b, rope=0.01, seed=3).samples,
                          bayesian_signed_rank(a, b, rope=0.01, seed=3).samples)
    with pytest.raises(ValueError, match="same length"):
        bayesian_signed_rank([1.0], [1.0, 2.0], rope=0)
    with pytest.raises(ValueError, match="rope"):
        bayesian_signed_rank([1.0], [1.0], rope=-1)
    with pytest.raises(ValueError):
        bayesian_signed_rank([1.0, np.inf], [1.0, 2.0], rope=0)
    with pytest.raises(TypeError):
        bayesian_signed_rank([1.0], [1.0])   # the ROPE must be stated


CASES = [(10, 0.05, 0.05), (8, 0.0, 0.02), (15, 0.1, 0.0), (4, 0.02, 0.2)]


@pytest.mark.parametrize("n, rope, shift", CASES)
def test_bayesian_signed_rank_agrees_with_baycomp(n, rope, shift):
    baycomp = needs("baycomp")
    rng = np.random.default_rng(n)
    a = rng.random(n)
    b = a + rng.normal(shift, 0.1, n)
    samples = 50000
    # baycomp: x = a, y = b, its differences y - x; "right" (y - x > rope) is A's lower error
    left, equal, right = baycomp.SignedRankTest(a, b, rope, nsamples=samples,
                                                random_state=1).probs()
    r = bayesian_signed_rank(a, b, rope=rope, n_samples=samples, seed=2)
    for mine, theirs in ((r.p_a_better, right), (r.p_equivalent, equal), (r.p_b_better, left)):
        tol = math.sqrt(2) * _mc_tolerance(theirs, samples)
        assert mine == pytest.approx(theirs, abs=tol)


def test_the_three_forms_of_a_table_agree():
    table = [[1.0, 2.0, np.inf], [2.0, 1.0, 4.0]]
    as_array = performance_profiles(table, algorithms=["A", "B"], problems=["p", "q", "r"])
    as_rows = performance_profiles({"A": table[0], "B": table[1]}, problems=["p", "q", "r"])
    as_maps = performance_profiles({"A": dict(zip("pqr", table[0])),
                                    "B": dict(zip("rqp", table[1][::-1]))})
    for r in (as_rows, as_maps):
        assert r.algorithms == as_array.algorithms and r.problems == as_array.problems
        assert r.ratios.tolist() == as_array.ratios.tolist()
    assert friedman_nemenyi(table).ranks.tolist() == friedman_nemenyi(
        {"A": table[0], "B": table[1]}).ranks.tolist() == [[1.0, 2.0, 2.0], [2.0, 1.0, 1.0]]
    with pytest.raises(ValueError, match="not both"):
        performance_profiles({"A": table[0]}, algorithms=["A"])


def test_without_a_prior_far_differences_decide_for_certain():
    r = bayesian_signed_rank(np.zeros(5), np.full(5, 3.0), rope=0.5, prior=0, n_samples=500)
    assert (r.p_a_better, r.p_equivalent, r.p_b_better) == (1.0, 0.0, 0.0)
    assert np.allclose(r.samples[:, 0], 1.0)
