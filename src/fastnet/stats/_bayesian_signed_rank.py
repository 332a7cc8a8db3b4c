"""The Bayesian signed-rank test with a region of practical equivalence (Benavoli et al. 2017).

References
----------
Benavoli, A., Corani, G., Demšar, J. & Zaffalon, M. (2017). Time for a change: a tutorial
for comparing multiple classifiers through Bayesian analysis. JMLR 18(77), 1-36.
"""
from __future__ import annotations


import numpy as np

from fastnet._validation import as_generator, check_float, check_int

from ._across import _CHUNK
from ._common import _check_sample, _FrozenResult

__all__ = ["BayesianSignedRank", "bayesian_signed_rank"]


# ------------------------------------------------------------------ Bayesian signed-rank test

class BayesianSignedRank(_FrozenResult):
    r"""Result of :func:`bayesian_signed_rank`.

    Attributes
    ----------
    p_a_better : float
        Posterior probability that "A better by more than the ROPE" is the most probable
        of the three regions.
    p_equivalent : float
        The same for the ROPE (practical equivalence).
    p_b_better : float
        The same for "B better by more than the ROPE".
    rope : float
        Half-width of the region of practical equivalence.
    prior : float
        Strength :math:`s` of the Dirichlet process prior, its pseudo-observation at 0.
    n_samples : int
        Monte Carlo samples of the posterior.
    samples : ndarray, shape (n_samples, 3)
        The sampled probabilities :math:`(\theta_A, \theta_{rope}, \theta_B)` of the
        three regions (each row sums to 1).
    """

    p_a_better: float
    p_equivalent: float
    p_b_better: float
    rope: float
    prior: float
    n_samples: int
    samples: np.ndarray

    _repr_skip = ("samples",)


def _heaviside(x):
    """1 above 0, 1/2 at 0, 0 below."""
    return (x > 0).astype(np.float64) + 0.5 * (x == 0)


def bayesian_signed_rank(a, b, *, rope, lower_is_better=True, prior=0.5, n_samples=50000, seed=0):
    r"""Bayesian signed-rank test with a region of practical equivalence (Benavoli et al.
    2014, 2017), as baycomp implements it.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Results of algorithms A and B on the same n problems (finite).
    rope : float
        Half-width of the region of practical equivalence, >= 0, in the results' unit:
        differences within ``[-rope, rope]`` count as no difference in practice (say 1
        percentage point of error). 0 for none.
    lower_is_better : bool, default=True
        True for errors and times, False for accuracies.
    prior : float, default=0.5
        Strength :math:`s` of the Dirichlet process prior (>= 0; 0 drops it).
    n_samples : int, default=50000
        Monte Carlo samples of the posterior (the probabilities are shares of them, so
        their error is at most :math:`0.5/\sqrt{n\_samples}`: 0.0022 at 50000).
    seed : int or numpy.random.Generator, default=0
        Seed of the samples.

    Returns
    -------
    BayesianSignedRank
        ``p_a_better``, ``p_equivalent``, ``p_b_better`` (summing to 1) and the samples.

    Raises
    ------
    ValueError
        If `a` and `b` differ in length, are empty or hold NaN or inf, or `rope`,
        `prior` or `n_samples` is out of range.

    Notes
    -----
    Let :math:`z_i` be the differences in A's favour (``b - a`` when lower is better,
    ``a - b`` otherwise). The **prior** is a Dirichlet process of strength
    :math:`s` = `prior` whose base measure is a point mass at :math:`z_0 = 0`, a
    pseudo-observation of no difference (inside the ROPE when `rope` > 0). The posterior
    is the Dirichlet process with weights
    :math:`w \sim \mathrm{Dirichlet}(s, 1, \dots, 1)` on :math:`z_0, z_1, \dots, z_n`;
    for each sample of :math:`w`, the probabilities of the three regions of the signed
    rank (Walsh average :math:`(z_i + z_j)/2`, :math:`i = j` included) are

    .. math:: \theta_A = \sum_{i,j} w_i w_j\, H(z_i + z_j - 2r), \quad
              \theta_B = \sum_{i,j} w_i w_j\, H(-z_i - z_j - 2r), \quad
              \theta_{rope} = 1 - \theta_A - \theta_B,

    :math:`r` = `rope`, :math:`H` the Heaviside step with :math:`H(0) = 1/2`. As in
    baycomp, the reported probabilities are the shares of the posterior samples in
    which each region is the most probable of the three (a sample where two regions tie
    exactly counts half for each; baycomp gives it to the first). Benavoli et al. read
    a probability above 0.95 as a decision; otherwise the data do not decide.

    References
    ----------
    .. [1] A. Benavoli, G. Corani, F. Mangili, M. Zaffalon and F. Ruggeri, "A Bayesian
       Wilcoxon signed-rank test based on the Dirichlet process", ICML 2014, 1026-1034.
    .. [2] A. Benavoli, G. Corani, J. Demšar and M. Zaffalon, "Time for a change: a
       tutorial for comparing multiple classifiers through Bayesian analysis", Journal
       of Machine Learning Research 18(77), 1-36, 2017.
    .. [3] J. Demšar, A. Benavoli and G. Corani, baycomp (``SignedRankTest``),
       https://github.com/janezd/baycomp.

    Examples
    --------
    >>> r = bayesian_signed_rank([1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 4.0, 5.0, 6.0, 7.0], rope=0.5)
    >>> round(r.p_a_better, 2), round(r.p_equivalent, 2), round(r.p_b_better, 2)
    (1.0, 0.0, 0.0)
    """
    x = _check_sample(a, "a", min_size=1)
    y = _check_sample(b, "b", min_size=1)
    if x.size != y.size:
        raise ValueError(f"`a` and `b` must have the same length, got {x.size} and {y.size}.")
    rope = check_float(rope, "rope", low=0.0)
    prior = check_float(prior, "prior", low=0.0)
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    rng = as_generator(seed)
    z = (y - x) if lower_is_better else (x - y)
    weights = np.ones(z.size)
    if prior > 0:
        z = np.concatenate([[0.0], z])
        weights = np.concatenate([[prior], weights])
    sums = z[:, None] + z[None, :]
    above = _heaviside(sums - 2.0 * rope)    # A better
    below = _heaviside(-sums - 2.0 * rope)   # B better
    theta = np.empty((n_samples, 3))
    for start in range(0, n_samples, _CHUNK):
        stop = min(n_samples, start + _CHUNK)
        w = rng.dirichlet(weights, size=stop - start)
        theta[start:stop, 0] = ((w @ above) * w).sum(axis=1)
        theta[start:stop, 2] = ((w @ below) * w).sum(axis=1)
    theta[:, 1] = 1.0 - theta[:, 0] - theta[:, 2]
    top = theta == theta.max(axis=1, keepdims=True)
    share = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)
    return BayesianSignedRank(float(share[0]), float(share[1]), float(share[2]), rope, prior,
                              n_samples, theta)
