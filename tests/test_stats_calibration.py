"""Calibration by simulation: under equal algorithms, how often does each test reject at 5%?

Lacoste et al. (2012, Section 6) simulate *synthetic contexts*: per dataset the outcome
probabilities (p_h, p_g, p_bar) are drawn from a Dirichlet distribution and the counts
(k_h, k_g, k_bar) from the multinomial. A Dirichlet that is symmetric in h and g makes the
two algorithms equal (q_AB = 1/2), so every rejection is a false positive.

Each simulation uses a fixed seed; bounds are about 3.5 binomial standard errors around
the nominal (or, for the discrete and Bayesian tests, the attainable) rate, so a correct
implementation passes for any seed with high probability.
"""

import numpy as np
import pytest

from fastnet.stats import (
    compare_errors,
    holdout_paired_ttest,
    poisson_binomial_test,
    prob_better,
    sign_test,
    wilcoxon_test,
)

ALPHA = 0.05


def binomial_bound(m, rate=ALPHA, z=3.5):
    return z * np.sqrt(rate * (1 - rate) / m)


def null_context(seed, m, n_datasets=15, n_test=2000, concentration=(2.0, 2.0, 40.0)):
    """m experiments x n_datasets of (k_h, k_g) under a symmetric Dirichlet context."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(concentration, size=(m, n_datasets))
    counts = np.empty((m, n_datasets, 3), dtype=np.int64)
    for i in range(m):
        for j in range(n_datasets):
            counts[i, j] = rng.multinomial(n_test, p[i, j])
    return counts[..., 0], counts[..., 1], n_test


@pytest.fixture(scope="module")
def context():
    return null_context(seed=20120421, m=1000)


def test_sign_test_false_positive_rate(context):
    k_h, k_g, n = context
    rate = np.mean([sign_test(a / n, b / n).pvalue < ALPHA for a, b in zip(k_h, k_g)])
    # The sign test is discrete: with 15 datasets its attainable size is 3.5% (ties lower it).
    assert 0.01 <= rate <= ALPHA + binomial_bound(len(k_h))


def test_wilcoxon_false_positive_rate(context):
    k_h, k_g, n = context
    rate = np.mean([wilcoxon_test(a / n, b / n).pvalue < ALPHA for a, b in zip(k_h, k_g)])
    assert abs(rate - ALPHA) <= binomial_bound(len(k_h))


def test_poisson_binomial_false_positive_rate(context):
    # Declaring "A better" when Pr(A > B) > 0.975 or "B better" when it is < 0.025 is the
    # two-sided 5% decision; as a Bayesian posterior it is conservative, never liberal.
    k_h, k_g, _ = context
    probs = np.array([poisson_binomial_test(prob_better(a, b)).probability
                      for a, b in zip(k_h, k_g)])
    rate = np.mean(np.maximum(probs, 1 - probs) > 1 - ALPHA / 2)
    assert rate <= ALPHA + binomial_bound(len(probs))
    # ... and it is not degenerate: under the null the posterior spreads over (0, 1).
    assert 0.3 < np.mean(probs > 0.5) < 0.7


def test_poisson_binomial_detects_a_better_algorithm():
    # Not a calibration but a sanity check of direction: h errs less (Dirichlet 2 < 4).
    k_h, k_g, _ = null_context(seed=5, m=200, concentration=(2.0, 4.0, 40.0))
    probs = np.array([poisson_binomial_test(prob_better(a, b)).probability
                      for a, b in zip(k_h, k_g)])
    assert np.mean(probs > 0.975) > 0.5


def test_welch_and_cochran_cox_false_positive_rate():
    # Equal log-normal medians, unequal spreads and sizes (the Behrens-Fisher case):
    # compare_errors with Proben1's outlier rule on.
    rng = np.random.default_rng(1994)
    m = 400
    cc = welch = 0
    for _ in range(m):
        a = np.exp(rng.normal(0.0, 0.3, 20))
        b = np.exp(rng.normal(0.0, 0.6, 35))
        r = compare_errors(a, b)
        cc += r.cochran_cox.pvalue < ALPHA
        welch += r.welch.pvalue < ALPHA
    bound = binomial_bound(m)
    assert abs(welch / m - ALPHA) <= bound
    # Cochran/Cox's critical value is a little more conservative than Welch's.
    assert 0.01 <= cc / m <= ALPHA + bound


def test_holdout_paired_ttest_false_positive_rate():
    # Two models whose per-example losses differ by symmetric noise around 0.
    rng = np.random.default_rng(1995)
    m = 1000
    x = rng.normal(size=(m, 30))
    base = x**2
    la = base + rng.normal(0, 0.5, (m, 30))
    lb = base + rng.normal(0, 0.5, (m, 30))
    rate = np.mean([holdout_paired_ttest(a, b).pvalue < ALPHA for a, b in zip(la, lb)])
    assert abs(rate - ALPHA) <= binomial_bound(m)
