"""Larsen & Hansen (1995): resampled hold-out estimates of the generalization error.

The model is trained on ``J`` random subsets of the data and scored on the left-out
parts; the resulting estimates describe the distribution of the generalization error.
This module calls a user-supplied ``fit_and_score`` and knows nothing about networks.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ._common import _FrozenResult, _check_sample
from fastnet._validation import check_int, check_choice, check_probability

__all__ = [
    "GeneralizationSummary",
    "PairedTTestResult",
    "ResampledComparison",
    "ResampledHoldoutResult",
    "compare_resampled",
    "holdout_paired_ttest",
    "resampled_holdout",
]

#: Fraction cut from each end for Larsen & Hansen's trimmed average tavr (5%-95%).
TAVR_TRIM = 0.05
_ALTERNATIVES = ("two-sided", "less", "greater")


class GeneralizationSummary(_FrozenResult):
    r"""Location and dispersion of a set of generalization-error estimates.

    Attributes
    ----------
    avr : float
        Mean.
    tavr : float
        Trimmed mean without the lowest and highest 5% (:func:`scipy.stats.trim_mean`
        with 0.05, which cuts ``int(0.05 J)`` values from each end).
    med : float
        Median.
    std : float
        Standard deviation with ``J - 1`` in the denominator.
    mad : float
        :math:`\mathrm{med}_j |G_j - \mathrm{med}(G)|` (unscaled).
    iqr : float
        :math:`G_{75\%} - G_{25\%}` with :func:`numpy.percentile`'s linear interpolation.
    """

    avr: float
    tavr: float
    med: float
    std: float
    mad: float
    iqr: float


def _summary(g):
    q25, q75 = np.percentile(g, [25, 75])
    return GeneralizationSummary(
        avr=float(g.mean()),
        tavr=float(stats.trim_mean(g, TAVR_TRIM)),
        med=float(np.median(g)),
        std=float(g.std(ddof=1)) if g.size > 1 else np.nan,
        mad=float(stats.median_abs_deviation(g, scale=1.0)),
        iqr=float(q75 - q25),
    )


class ResampledHoldoutResult(_FrozenResult):
    r"""Result of :func:`resampled_holdout`.

    Attributes
    ----------
    estimates : ndarray, shape (J,)
        :math:`\hat G_j`, the mean loss on the left-out examples of split ``j``.
    splits : ndarray of int, shape (J, N_c)
        Row ``j`` holds the sorted indices of the examples left out (scored) in split
        ``j``; the model of split ``j`` was trained on all other examples.
    summary : GeneralizationSummary
        avr, tavr, med, std, mad, iqr of the estimates :math:`\hat G_j`.
    log_summary : GeneralizationSummary
        The same for :math:`\tilde G_j = \log(1 + \hat G_j)`.
    gamma : float
        Requested leave-out fraction.
    n_left_out : int
        :math:`N_c = \lceil \gamma N \rceil`.
    n_examples : int
        :math:`N`.
    """

    estimates: np.ndarray
    splits: np.ndarray
    summary: GeneralizationSummary
    log_summary: GeneralizationSummary
    gamma: float
    n_left_out: int
    n_examples: int

    def empirical_cdf(self, g):
        r"""Empirical distribution :math:`P_{emp}(G) = J^{-1} \#\{j: \hat G_j \le G\}`.

        Parameters
        ----------
        g : float or array_like
            Generalization-error values.

        Returns
        -------
        float or ndarray
        """
        srt = np.sort(self.estimates)
        out = np.searchsorted(srt, np.asarray(g, dtype=np.float64), side="right") / srt.size
        return float(out) if np.ndim(out) == 0 else out


def _n_left_out(gamma, n):
    # ceil(gamma * N), guarded against binary fractions such as 0.1 * 30 = 3.0000000000000004
    return int(math.ceil(gamma * n - 1e-9))


def _unrank_combination(rank, n, k):
    """The `rank`-th k-subset of range(n) in lexicographic order (combinatorial number system)."""
    out = []
    x = 0
    for slot in range(k):
        while True:
            count = math.comb(n - x - 1, k - slot - 1)
            if rank < count:
                out.append(x)
                x += 1
                break
            rank -= count
            x += 1
    return out


def _draw_splits(n, n_c, n_splits, rng):
    """`n_splits` distinct random k-subsets of range(n), each sorted, as an int array."""
    total = math.comb(n, n_c)
    if n_splits > total:
        raise ValueError(
            f"`J` = {n_splits} exceeds the number of distinct splits C({n}, {n_c}) = {total}."
        )
    if total <= 2 * n_splits:
        # Few possible splits: draw distinct ranks and unrank them (no rejection loop).
        ranks = rng.choice(total, size=n_splits, replace=False)
        return np.array([_unrank_combination(int(r), n, n_c) for r in ranks], dtype=np.intp)
    seen = set()
    rows = []
    while len(rows) < n_splits:  # expected draws < 2 * n_splits since total > 2 * n_splits
        idx = np.sort(rng.choice(n, size=n_c, replace=False))
        key = idx.tobytes()
        if key in seen:
            continue
        seen.add(key)
        rows.append(idx)
    return np.array(rows, dtype=np.intp).reshape(n_splits, n_c)


def _check_data(X, Y):
    X = np.asarray(X)
    Y = np.asarray(Y)
    if X.ndim == 0 or Y.ndim == 0:
        raise ValueError("`X` and `Y` must be arrays with one row per example.")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"`X` has {X.shape[0]} examples but `Y` has {Y.shape[0]}."
        )
    if X.shape[0] < 2:
        raise ValueError(f"`X` must hold at least 2 examples, got {X.shape[0]}.")
    return X, Y


def _check_splits(splits, n, gamma):
    s = np.asarray(splits)
    if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] == 0:
        raise ValueError(f"`splits` must be a 2-D integer array (J, N_c), got shape {s.shape}.")
    if not np.issubdtype(s.dtype, np.integer):
        raise ValueError("`splits` must hold integer example indices.")
    if s.min() < 0 or s.max() >= n:
        raise ValueError(f"`splits` holds indices outside [0, {n - 1}].")
    s = np.sort(s, axis=1)
    if np.any(np.diff(s, axis=1) == 0):
        raise ValueError("`splits` has a row that repeats an example.")
    if np.unique(s, axis=0).shape[0] != s.shape[0]:
        raise ValueError("`splits` repeats a split; each split must be used once.")
    if gamma is not None and s.shape[1] != _n_left_out(gamma, n):
        raise ValueError(
            f"`splits` leaves out {s.shape[1]} examples but ceil(gamma * N) = "
            f"{_n_left_out(gamma, n)}."
        )
    return s.astype(np.intp)


def _prepare(X, Y, gamma, J, seed, splits):
    X, Y = _check_data(X, Y)
    n = X.shape[0]
    if splits is None:
        gamma = check_probability(gamma, "gamma")
        J = check_int(J, "J", minimum=1)
        n_c = _n_left_out(gamma, n)
        if n_c >= n:
            raise ValueError(
                f"`gamma` = {gamma} leaves out all {n} examples (ceil(gamma N) = {n_c}); "
                "nothing is left for training."
            )
        rng = np.random.default_rng(seed)
        splits = _draw_splits(n, n_c, J, rng)
    else:
        if gamma is not None:
            gamma = check_probability(gamma, "gamma")
        splits = _check_splits(splits, n, gamma)
        if splits.shape[1] >= n:
            raise ValueError("`splits` leaves nothing for training.")
        if gamma is None:
            gamma = splits.shape[1] / n
    return X, Y, float(gamma), splits


def _run(fit_and_score, X, Y, splits, name):
    n = X.shape[0]
    estimates = np.empty(splits.shape[0])
    mask = np.ones(n, dtype=bool)
    for j, test_idx in enumerate(splits):
        mask[:] = True
        mask[test_idx] = False
        train_idx = np.flatnonzero(mask)
        losses = np.asarray(
            fit_and_score(X[train_idx], Y[train_idx], X[test_idx], Y[test_idx]), dtype=np.float64
        )
        if losses.shape != (test_idx.size,):
            raise ValueError(
                f"`{name}` must return one loss per left-out example, shape "
                f"({test_idx.size},); got shape {losses.shape} in split {j}."
            )
        if not np.all(np.isfinite(losses)):
            raise ValueError(f"`{name}` returned NaN or infinite losses in split {j}.")
        estimates[j] = losses.mean()
    return estimates


def _result(estimates, splits, gamma, n):
    if np.any(estimates <= -1):
        log_summary = GeneralizationSummary(*([np.nan] * 6))
    else:
        log_summary = _summary(np.log1p(estimates))
    return ResampledHoldoutResult(
        estimates=estimates,
        splits=splits,
        summary=_summary(estimates),
        log_summary=log_summary,
        gamma=gamma,
        n_left_out=int(splits.shape[1]),
        n_examples=int(n),
    )


def resampled_holdout(fit_and_score, X, Y, gamma=0.25, J=100, seed=0, *, splits=None):
    r"""Distribution of the generalization error by resampled hold-out cross-validation.

    Parameters
    ----------
    fit_and_score : callable
        ``fit_and_score(X_train, Y_train, X_test, Y_test) -> losses``: trains a fresh
        model on the training part and returns one loss per test example (shape
        ``(N_c,)``), e.g. squared errors or 0/1 losses.
    X, Y : array_like, shape (N, ...)
        Inputs and targets; the first axis indexes examples.
    gamma : float, default=0.25
        Leave-out fraction :math:`0 < \gamma < 1`; :math:`N_c = \lceil \gamma N \rceil`
        examples are scored per split.
    J : int, default=100
        Number of splits, at most :math:`\binom{N}{N_c}`.
    seed : int or numpy.random.Generator, default=0
        Seed of the split generator.
    splits : array_like of int, shape (J, N_c), optional
        Use these left-out index sets instead of drawing new ones (e.g. ``splits`` of an
        earlier result). `gamma` may then be None; `J` and `seed` are ignored.

    Returns
    -------
    ResampledHoldoutResult
        ``estimates`` :math:`\hat G_j`, the ``splits``, ``summary`` (avr, tavr, med, std,
        mad, iqr of :math:`\hat G`), ``log_summary`` (of :math:`\log(1 + \hat G)`),
        ``gamma``, ``n_left_out`` and ``n_examples``.

    Raises
    ------
    ValueError
        If `X` and `Y` differ in length or hold fewer than 2 examples; `gamma` is not in
        (0, 1) or leaves nothing for training; `J` < 1 or exceeds the number of distinct
        splits; `splits` is malformed or repeats a split; `fit_and_score` returns the
        wrong shape or non-finite losses.

    See Also
    --------
    compare_resampled : two models on the same splits.
    holdout_paired_ttest : two models on one hold-out set.

    Notes
    -----
    For :math:`j = 1, \dots, J` a left-out set :math:`\mathcal C_j` of
    :math:`N_c = \lceil \gamma N \rceil` examples is drawn uniformly **without
    replacement** and **no split is used twice**; the model is trained on
    :math:`\mathcal T_j = \mathcal D \setminus \mathcal C_j` and

    .. math:: \hat G_j = \frac{1}{N_c} \sum_{k \in \mathcal C_j} \ell(y_k, \hat y_k; \hat w_j).

    When :math:`\binom{N}{N_c} \le 2J` the splits are drawn as distinct ranks of the
    lexicographic list of subsets; otherwise subsets are drawn and repeats rejected.
    The summaries are those of Larsen & Hansen: avr, tavr (the mean of the central
    5%-95%), med, std, mad and iqr, for :math:`\hat G` and for the Box-Cox-like
    :math:`\tilde G = \log(1 + \hat G)` (NaN if some :math:`\hat G_j \le -1`). The
    :math:`\hat G_j` are dependent (training sets overlap), so they describe the
    spread of the error over training sets, not a sample of independent values.

    References
    ----------
    .. [1] J. Larsen, L. K. Hansen, "Empirical generalization assessment of neural
       network models", Proc. IEEE Workshop on Neural Networks for Signal Processing V,
       1995, pp. 30-39.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 1)); Y = 2 * X[:, 0] + rng.normal(size=40)
    >>> def mean_model(X_tr, Y_tr, X_te, Y_te):        # predicts the training mean
    ...     return (Y_te - Y_tr.mean()) ** 2
    >>> r = resampled_holdout(mean_model, X, Y, gamma=0.25, J=20, seed=1)
    >>> r.splits.shape, r.n_left_out
    ((20, 10), 10)
    """
    if not callable(fit_and_score):
        raise TypeError(f"`fit_and_score` must be callable, got {type(fit_and_score).__name__}.")
    X, Y, gamma, splits = _prepare(X, Y, gamma, J, seed, splits)
    estimates = _run(fit_and_score, X, Y, splits, "fit_and_score")
    return _result(estimates, splits, gamma, X.shape[0])


class PairedTTestResult(_FrozenResult):
    r"""Paired t-test on differences ``a - b`` (:func:`scipy.stats.ttest_rel`).

    Attributes
    ----------
    statistic : float
        :math:`t = \bar\Delta / \widehat{\mathrm{std}}(\bar\Delta)`.
    pvalue : float
        p-value for ``alternative``.
    df : int
        ``n - 1``.
    mean_difference : float
        :math:`\bar\Delta`, mean of ``a - b``; negative favours ``a`` (smaller loss).
    std_error : float
        :math:`\widehat{\mathrm{std}}(\bar\Delta) =
        \sqrt{\sum_k (\Delta_k - \bar\Delta)^2 / (n (n - 1))}`.
    alternative : str
        ``"two-sided"``, ``"less"`` (``a`` has the smaller mean loss) or ``"greater"``.
    """

    statistic: float
    pvalue: float
    df: int
    mean_difference: float
    std_error: float
    alternative: str

    def confidence_interval(self, confidence_level=0.95):
        """Two-sided t confidence interval of the mean difference ``a - b``.

        Parameters
        ----------
        confidence_level : float, default=0.95

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        level = check_probability(confidence_level, "confidence_level")
        half = float(stats.t.isf((1 - level) / 2, self.df)) * self.std_error
        return (self.mean_difference - half, self.mean_difference + half)


def _paired(a, b, alternative):
    diff = a - b
    n = diff.size
    se = float(diff.std(ddof=1) / np.sqrt(n))
    if not se > 0:
        raise ValueError(
            "The differences between the two losses are constant; the paired t statistic "
            "is undefined."
        )
    res = stats.ttest_rel(a, b, alternative=alternative)
    return PairedTTestResult(
        statistic=float(res.statistic),
        pvalue=float(res.pvalue),
        df=int(n - 1),
        mean_difference=float(diff.mean()),
        std_error=se,
        alternative=alternative,
    )


def holdout_paired_ttest(loss_a, loss_b, *, alternative="two-sided"):
    r"""Compare two models on one hold-out set by a paired t-test on per-example losses.

    Parameters
    ----------
    loss_a, loss_b : array_like, shape (N_c,)
        Per-example losses of models a and b on the same hold-out examples, in the same
        order (e.g. squared errors :math:`e^2(k, \hat w)`).
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        ``"less"``: model a has the smaller expected loss.

    Returns
    -------
    PairedTTestResult
        ``statistic``, ``pvalue``, ``df = N_c - 1``, ``mean_difference`` (a - b),
        ``std_error``; ``confidence_interval()``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, hold NaN/inf, differ in length, have fewer than 2
        values, the differences are constant, or `alternative` is unknown.

    See Also
    --------
    compare_resampled, scipy.stats.ttest_rel

    Notes
    -----
    With :math:`\Delta_k = \ell_a(k) - \ell_b(k)` and :math:`\bar\Delta = \Delta\hat G`,
    Larsen & Hansen estimate

    .. math:: \widehat{\mathrm{std}}(\Delta \hat G)^2 = \frac{1}{(N_c - 1) N_c}
              \sum_{k \in \mathcal C} (\Delta_k - \Delta \hat G)^2

    and compare :math:`\Delta\hat G / \widehat{\mathrm{std}}` with Student's t on
    :math:`N_c - 1` degrees of freedom: the paired t-test
    (:func:`scipy.stats.ttest_rel`). The examples are assumed independent; the models
    share the training set, which is exactly why the losses are paired.

    References
    ----------
    .. [1] J. Larsen, L. K. Hansen, "Empirical generalization assessment of neural
       network models", NNSP 1995, section "Empirical generalization error estimation".

    Examples
    --------
    >>> r = holdout_paired_ttest([1.0, 2.0, 3.0, 4.0], [1.5, 2.5, 3.0, 5.0])
    >>> r.mean_difference, round(r.statistic, 4), r.df   # diffs -.5 -.5 0 -1
    (-0.5, -2.4495, 3)
    """
    check_choice(alternative, "alternative", _ALTERNATIVES)
    a = _check_sample(loss_a, "loss_a", min_size=2)
    b = _check_sample(loss_b, "loss_b", min_size=2)
    if a.size != b.size:
        raise ValueError(
            f"`loss_a` and `loss_b` must be losses on the same examples, got lengths "
            f"{a.size} and {b.size}."
        )
    return _paired(a, b, alternative)


class ResampledComparison(_FrozenResult):
    r"""Result of :func:`compare_resampled`.

    Attributes
    ----------
    result_a, result_b : ResampledHoldoutResult
        Each model's estimates on the **same** splits.
    differences : ndarray, shape (J,)
        :math:`\hat G_{a,j} - \hat G_{b,j}`.
    ttest : PairedTTestResult
        Paired t-test on ``differences`` (Larsen & Hansen eq. 9).
    fraction_a_better : float
        Fraction of splits with :math:`\hat G_{a,j} < \hat G_{b,j}`.
    fraction_b_better : float
        Fraction with :math:`\hat G_{b,j} < \hat G_{a,j}` (ties count in neither).
    """

    result_a: ResampledHoldoutResult
    result_b: ResampledHoldoutResult
    differences: np.ndarray
    ttest: PairedTTestResult
    fraction_a_better: float
    fraction_b_better: float

    _repr_skip = ("result_a", "result_b")

    @property
    def statistic(self):
        """The paired t statistic (``ttest.statistic``)."""
        return self.ttest.statistic

    @property
    def pvalue(self):
        """The paired t-test p-value (``ttest.pvalue``)."""
        return self.ttest.pvalue


def compare_resampled(fit_a, fit_b, X, Y, gamma=0.25, J=100, seed=0, *, splits=None,
                      alternative="two-sided"):
    r"""Compare two models by resampled hold-out cross-validation on the same splits.

    Parameters
    ----------
    fit_a, fit_b : callable
        ``fit(X_train, Y_train, X_test, Y_test) -> per-example losses`` for each model
        (see :func:`resampled_holdout`).
    X, Y : array_like, shape (N, ...)
    gamma : float, default=0.25
    J : int, default=100
    seed : int or numpy.random.Generator, default=0
    splits : array_like of int, shape (J, N_c), optional
        Reuse given splits.
    alternative : {"two-sided", "less", "greater"}, default="two-sided"
        For the paired t-test; ``"less"``: a has the smaller average error.

    Returns
    -------
    ResampledComparison
        Both models' :class:`ResampledHoldoutResult`, the ``differences``, the paired
        ``ttest`` and the fractions of splits each model wins.

    Raises
    ------
    ValueError
        As :func:`resampled_holdout`; also if ``J < 2`` or all differences are equal.

    See Also
    --------
    resampled_holdout, holdout_paired_ttest

    Notes
    -----
    With :math:`\Delta_j = \hat G_{a,j} - \hat G_{b,j}` and
    :math:`\Delta\widehat{avr} = J^{-1} \sum_j \Delta_j`,

    .. math:: \mathrm{std}(\Delta\widehat{avr}) = \sqrt{\frac{1}{(J - 1) J}
              \sum_{j=1}^J (\Delta_j - \Delta\widehat{avr})^2},

    and :math:`t = \Delta\widehat{avr}/\mathrm{std}` is compared with Student's t on
    :math:`J - 1` degrees of freedom (Larsen & Hansen eq. 9). The paper assumes the
    :math:`\Delta_j` independent; they are not (training sets overlap), which makes the
    test liberal (too many rejections), more so for small :math:`\gamma` (Nadeau &
    Bengio 2003). Read it together with the win fractions.

    References
    ----------
    .. [1] J. Larsen, L. K. Hansen, "Empirical generalization assessment of neural
       network models", NNSP 1995, eq. (9).
    .. [2] C. Nadeau, Y. Bengio, "Inference for the generalization error", Machine
       Learning 52, 2003.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 1)); Y = 2 * X[:, 0] + rng.normal(size=40)
    >>> def mean_model(X_tr, Y_tr, X_te, Y_te):
    ...     return (Y_te - Y_tr.mean()) ** 2
    >>> def linear_model(X_tr, Y_tr, X_te, Y_te):
    ...     w = np.linalg.lstsq(X_tr, Y_tr, rcond=None)[0]
    ...     return (Y_te - X_te @ w) ** 2
    >>> c = compare_resampled(linear_model, mean_model, X, Y, J=20, seed=1)
    >>> c.fraction_a_better, c.pvalue < 0.001      # the linear model wins 19 of 20 splits
    (0.95, True)
    """
    for name, f in (("fit_a", fit_a), ("fit_b", fit_b)):
        if not callable(f):
            raise TypeError(f"`{name}` must be callable, got {type(f).__name__}.")
    check_choice(alternative, "alternative", _ALTERNATIVES)
    X, Y, gamma, splits = _prepare(X, Y, gamma, J, seed, splits)
    if splits.shape[0] < 2:
        raise ValueError(f"`J` must be >= 2 for the paired t-test, got {splits.shape[0]}.")
    ga = _run(fit_a, X, Y, splits, "fit_a")
    gb = _run(fit_b, X, Y, splits, "fit_b")
    n = X.shape[0]
    return ResampledComparison(
        result_a=_result(ga, splits, gamma, n),
        result_b=_result(gb, splits, gamma, n),
        differences=ga - gb,
        ttest=_paired(ga, gb, alternative),
        fraction_a_better=float(np.mean(ga < gb)),
        fraction_b_better=float(np.mean(gb < ga)),
    )
