"""Lacoste et al. (2012) on one test set: Pr(h better than g) from the examples on which
exactly one of two classifiers errs.

References
----------
Lacoste, A., Laviolette, F. & Marchand, M. (2012). Bayesian comparison of machine
learning algorithms on single and multiple datasets. AISTATS, JMLR W&CP 22, 665-675.
"""
from __future__ import annotations


import numpy as np
from scipy import special

from fastnet._validation import check_positive


__all__ = ["prob_better", "prob_better_predictions"]


def _check_counts(k, name):
    try:
        arr = np.asarray(k, dtype=np.float64)
    except OverflowError:  # a Python int beyond float range
        raise ValueError(f"`{name}` must hold finite counts, got an integer beyond float64's "
                         "range.") from None
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a count or an array of counts, got "
                        f"{type(k).__name__}.") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if np.any(arr < 0):
        raise ValueError(f"`{name}` must be >= 0, got minimum {arr.min():g}.")
    return arr


def prob_better(k_h, k_g, prior=1.0):
    r"""Posterior probability that classifier h has a smaller true risk than g.

    Parameters
    ----------
    k_h : int or array_like
        Number of test examples that **h gets wrong and g gets right**.
    k_g : int or array_like
        Number of test examples that g gets wrong and h gets right.
    prior : float, default=1.0
        Dirichlet prior parameter :math:`\tilde\alpha = \alpha'_h = \alpha'_g > 0`;
        1 is the uniform prior the paper recommends.

    Returns
    -------
    float or ndarray
        :math:`\Pr(h \succ g) = I_{1/2}(k_h + \tilde\alpha, k_g + \tilde\alpha)`;
        a float when both counts are scalars, else an array of the broadcast shape.

    Raises
    ------
    ValueError
        If a count is negative or not finite, or `prior` is not positive and finite.

    See Also
    --------
    prob_better_predictions : the same from two prediction vectors and the targets.
    poisson_binomial_test : combines these probabilities over several datasets.

    Notes
    -----
    On one test set the outcomes per example (h wrong and g right, h right and g
    wrong, both equal) are multinomial with probabilities :math:`(p_h, p_g, \bar p)`.
    Under the Dirichlet posterior, :math:`z = p_h/(p_h + p_g)` is
    :math:`\mathrm{Beta}(k_h + \tilde\alpha, k_g + \tilde\alpha)`, and h is better
    (:math:`p_h < p_g`) iff :math:`z < 1/2` (Theorem 4.1):

    .. math:: \Pr(h \succ g) = B_c\!\left(\tfrac12; k_h + \tilde\alpha, k_g + \tilde\alpha\right)
              = I_{1/2}(k_h + \tilde\alpha, k_g + \tilde\alpha),

    computed with :func:`scipy.special.betainc`. More examples that only h gets wrong
    (larger ``k_h``) lower the probability. Examples on which both classifiers agree do
    not matter.

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Theorem 4.1.

    Examples
    --------
    >>> prob_better(0, 0)        # no disagreement: no information
    0.5
    >>> prob_better(0, 2)        # I_{1/2}(1, 3) = 1 - (1/2)**3
    0.875
    >>> prob_better(2, 0)
    0.125
    """
    prior = check_positive(prior, "prior")
    kh = _check_counts(k_h, "k_h")
    kg = _check_counts(k_g, "k_g")
    p = special.betainc(kh + prior, kg + prior, 0.5)
    if np.ndim(p) == 0:
        return float(p)
    return p


def _error_mask(pred, y):
    """Boolean per-example 'wrong' mask; rows are examples for 2-D predictions."""
    if pred.ndim == 1:
        return pred != y
    return np.any(pred != y, axis=tuple(range(1, pred.ndim)))


def prob_better_predictions(pred_h, pred_g, y, prior=1.0):
    r"""Posterior probability that classifier h is better than g, from their predictions.

    Parameters
    ----------
    pred_h, pred_g : array_like, shape (n,) or (n, ...)
        Predicted labels of the two classifiers on the same ``n`` test examples. For more
        than one dimension, the first axis indexes examples and an example counts as
        correct only if every entry matches (e.g. one-hot rows).
    y : array_like, same shape
        True labels.
    prior : float, default=1.0
        Dirichlet prior parameter (see :func:`prob_better`).

    Returns
    -------
    float
        :math:`I_{1/2}(k_h + \tilde\alpha, k_g + \tilde\alpha)` with
        :math:`k_h = \#\{i: h_i \ne y_i, g_i = y_i\}` and
        :math:`k_g = \#\{i: g_i \ne y_i, h_i = y_i\}`.

    Raises
    ------
    ValueError
        If the three arrays do not have the same shape or are empty.

    See Also
    --------
    prob_better

    References
    ----------
    .. [1] A. Lacoste, F. Laviolette, M. Marchand, AISTATS 2012, Section 4.

    Examples
    --------
    >>> y = [0, 1, 1, 0, 1]
    >>> prob_better_predictions([0, 1, 1, 0, 0], [0, 1, 0, 1, 0], y)   # k_h=0, k_g=2
    0.875
    """
    ph, pg, yy = np.asarray(pred_h), np.asarray(pred_g), np.asarray(y)
    if ph.shape != yy.shape or pg.shape != yy.shape:
        raise ValueError(
            f"`pred_h`, `pred_g` and `y` must have the same shape, got {ph.shape}, "
            f"{pg.shape} and {yy.shape}."
        )
    if yy.ndim == 0 or yy.shape[0] == 0:
        raise ValueError(f"`y` must hold at least one example, got shape {yy.shape}.")
    wrong_h = _error_mask(ph, yy)
    wrong_g = _error_mask(pg, yy)
    k_h = int(np.count_nonzero(wrong_h & ~wrong_g))
    k_g = int(np.count_nonzero(wrong_g & ~wrong_h))
    return prob_better(k_h, k_g, prior)
