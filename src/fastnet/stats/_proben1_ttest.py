"""Proben1's comparison of two samples of test errors (Prechelt 1994, section 7.x / Table 11).

Log transform, outlier removal only where it restores normality (at most 10% per sample),
the Cochran/Cox t' test for unequal variances, and Welch's test alongside.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from ._common import (
    _FrozenResult,
    _check_sample,
    _format_percent,
    _stephens_pvalue,
)
from fastnet._validation import check_choice, check_int, check_probability

from ._cochran_cox import CochranCoxResult, _cochran_cox, cochran_cox_ttest

__all__ = [
    "CleanedSample",
    "CochranCoxResult",
    "ErrorComparison",
    "WelchResult",
    "cochran_cox_ttest",
    "compare_errors",
]

#: Proben1's limit on the outliers removed from one sample.
MAX_OUTLIER_FRACTION = 0.10
#: Default cap on the outliers removed from one sample, whatever its size. Trying ``r``
#: removals costs ``r + 1`` normality tests, so the rule costs ``(r_max + 1)(r_max + 2)/2``
#: tests: with the 10% rule alone 80,000 for 4000 runs (15 s). With this cap at most 350
#: tests per sample; it binds only above 250 runs (Proben1 used 60).
MAX_OUTLIERS = 25
#: Normality tests accepted by :func:`compare_errors`.
NORMALITY_TESTS = ("shapiro", "ks")
#: Tests that may decide the verdict of :func:`compare_errors`.
DECIDING_TESTS = ("cochran_cox", "welch")


class WelchResult(_FrozenResult):
    """Result of Welch's unequal-variance t-test (:func:`scipy.stats.ttest_ind`).

    Attributes
    ----------
    statistic : float
        Welch's t.
    pvalue : float
        Two-sided p-value.
    df : float
        Welch-Satterthwaite degrees of freedom.
    confidence_interval : tuple of float
        ``(low, high)``: the interval for the difference of means (first sample minus
        second) at ``confidence_level``, from the Welch-Satterthwaite t distribution
        (``confidence_interval`` of :func:`scipy.stats.ttest_ind`'s result).
    confidence_level : float
        Its level (``1 - alpha`` in :func:`compare_errors`).
    """

    statistic: float
    pvalue: float
    df: float
    confidence_interval: tuple = (float("nan"), float("nan"))
    confidence_level: float = 0.95


class CleanedSample(_FrozenResult):
    """One sample after the transformation and Proben1's outlier rule.

    Attributes
    ----------
    values : ndarray
        The transformed values that entered the t-tests (outliers removed).
    removed_index : ndarray of int
        Indices into the input sample of the removed outliers (empty if none).
    removed : ndarray
        The removed values in the input's units (not log-transformed).
    normality_pvalue_before : float
        Normality test p-value of all transformed values.
    normality_pvalue : float
        Normality test p-value of ``values``.
    normal : bool
        Whether ``values`` passes the normality test (``normality_pvalue >=
        normality_alpha``). False makes the comparison unreliable.
    """

    values: np.ndarray
    removed_index: np.ndarray
    removed: np.ndarray
    normality_pvalue_before: float
    normality_pvalue: float
    normal: bool

    @property
    def n(self):
        """Number of values used in the tests."""
        return int(self.values.size)

    @property
    def n_removed(self):
        """Number of outliers removed."""
        return int(self.removed_index.size)


class ErrorComparison(_FrozenResult):
    """Result of :func:`compare_errors` (Proben1's log-error t-test).

    Attributes
    ----------
    names : tuple of str
        Labels of the two samples, ``(a, b)``.
    cochran_cox : CochranCoxResult
        Cochran/Cox t' test on the cleaned, transformed samples.
    welch : WelchResult
        Welch's t-test on the same values.
    pvalue : float
        Two-sided p-value of the test named by ``decided_by``.
    significant : bool
        ``pvalue < alpha``.
    better : str or None
        Name of the sample with the smaller mean (transformed) error if ``significant``,
        else None.
    unreliable : bool
        True if either cleaned sample still fails the normality test; Proben1 prints the
        entry in parentheses.
    sample_a, sample_b : CleanedSample
        What entered the tests, what was removed and the normality p-values.
    mean_difference : float
        Mean of transformed ``a`` minus mean of transformed ``b``; negative favours ``a``.
        Its Welch interval at level ``1 - alpha`` is ``welch.confidence_interval``.
    alpha : float
        Significance level.
    log : bool
        Whether the errors were log-transformed.
    decided_by : str
        ``"cochran_cox"`` or ``"welch"``.
    normality_test : str
        ``"shapiro"`` or ``"ks"``.
    """

    names: tuple
    cochran_cox: CochranCoxResult
    welch: WelchResult
    pvalue: float
    significant: bool
    better: str | None
    unreliable: bool
    sample_a: CleanedSample
    sample_b: CleanedSample
    mean_difference: float
    alpha: float
    log: bool
    decided_by: str
    normality_test: str

    _repr_skip = ("sample_a", "sample_b", "cochran_cox", "welch")

    @property
    def statistic(self):
        """t statistic of the test named by ``decided_by`` (the same t for both tests)."""
        test = self.cochran_cox if self.decided_by == "cochran_cox" else self.welch
        return test.statistic

    @property
    def pvalue_percent(self):
        """``pvalue`` in percent, as Proben1 reports it."""
        return 100.0 * self.pvalue

    def table_entry(self, labels=None):
        """Proben1 Table-11 notation for this comparison.

        Parameters
        ----------
        labels : tuple of str, optional
            Short labels for ``(a, b)`` (Proben1 uses ``P`` and ``S``); default ``names``.

        Returns
        -------
        str
            ``"<label of the better sample> <p in percent>"`` when significant, ``"-"``
            when not; in parentheses when ``unreliable``.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> a = np.exp(rng.normal(0.0, 0.2, 20)); b = np.exp(rng.normal(0.5, 0.2, 20))
        >>> compare_errors(a, b, names=("P", "S")).table_entry()
        'P <0.01'
        """
        labels = self.names if labels is None else tuple(labels)
        if len(labels) != 2:
            raise ValueError(f"`labels` must hold two labels, got {len(labels)}.")
        if self.significant:
            entry = f"{labels[self.names.index(self.better)]} {_format_percent(self.pvalue)}"
        else:
            entry = "-"
        return f"({entry})" if self.unreliable else entry

    def __str__(self):
        what = "log errors" if self.log else "errors"
        lines = [f"Proben1 comparison of {what}: {self.names[0]} vs {self.names[1]}"]
        for name, s in zip(self.names, (self.sample_a, self.sample_b)):
            removed = (
                f", removed {s.n_removed} outlier(s): {np.array2string(s.removed, precision=4)}"
                if s.n_removed
                else ""
            )
            state = "normal" if s.normal else "NOT normal"
            lines.append(
                f"  {name}: n={s.n}{removed}, mean={s.values.mean():.4g}, "
                f"sd={s.values.std(ddof=1):.4g}, {state} "
                f"({self.normality_test} p={s.normality_pvalue:.3g})"
            )
        cc, w = self.cochran_cox, self.welch
        lines.append(
            f"  Cochran/Cox t' test: t={cc.statistic:.4g}, "
            f"t'({cc.alpha:g})={cc.critical_value:.4g}, "
            f"p={_format_percent(cc.pvalue)} %"
        )
        lo, hi = w.confidence_interval
        lines.append(
            f"  Welch t test:        t={w.statistic:.4g}, df={w.df:.4g}, "
            f"p={_format_percent(w.pvalue)} %"
        )
        lines.append(
            f"  difference of means ({self.names[0]} - {self.names[1]}): "
            f"{self.mean_difference:.4g}, {100 * w.confidence_level:g} % CI "
            f"[{lo:.4g}, {hi:.4g}] (Welch)"
        )
        if self.significant:
            verdict = (
                f"{self.better} is better (p = {_format_percent(self.pvalue)} %, "
                f"{self.decided_by})"
            )
        else:
            verdict = f"no significant difference at {100 * self.alpha:g} % ({self.decided_by})"
        if self.unreliable:
            verdict += "; UNRELIABLE: a sample is not normal"
        lines.append(f"  verdict: {verdict}")
        lines.append(f"  table entry: {self.table_entry()}")
        return "\n".join(lines)


def _shapiro_p(x):
    if np.ptp(x) == 0:
        return np.nan
    with warnings.catch_warnings():
        # scipy warns that the p-value "may not be accurate" for n > 5000; the value is
        # still the best available and the docs say so.
        warnings.filterwarnings("ignore", message=r".*p-value may not be accurate.*")
        return float(stats.shapiro(x).pvalue)


def _ks_p(x):
    sd = x.std(ddof=1)
    if not sd > 0:
        return np.nan
    z = (x - x.mean()) / sd
    d = stats.kstest(z, "norm", method="asymp").statistic
    return _stephens_pvalue(float(d), x.size)


_NORMALITY = {"shapiro": _shapiro_p, "ks": _ks_p}


def _clean(original, transformed, test, normality_alpha, max_remove, remove):
    """Proben1's outlier rule for one sample (see compare_errors Notes)."""
    n = transformed.size
    order = np.argsort(transformed, kind="stable")
    p_before = test(transformed)

    def result(kept_sorted_slice, p_after):
        kept = np.sort(order[kept_sorted_slice])
        removed_idx = np.setdiff1d(np.arange(n), kept)
        return CleanedSample(
            values=transformed[kept],
            removed_index=removed_idx,
            removed=original[removed_idx],
            normality_pvalue_before=p_before,
            normality_pvalue=p_after,
            normal=bool(p_after >= normality_alpha),
        )

    if p_before >= normality_alpha or not remove:
        return result(slice(0, n), p_before)
    for r in range(1, max_remove + 1):
        best = None
        for low in range(r + 1):
            high = r - low
            p = test(transformed[order[low:n - high]])
            if p >= normality_alpha and (best is None or p > best[0]):
                best = (p, low, high)
        if best is not None:
            p, low, high = best
            return result(slice(low, n - high), p)
    # Removing up to max_remove extremes never restores normality: remove nothing.
    return result(slice(0, n), p_before)


def compare_errors(
    a,
    b,
    *,
    log=True,
    alpha=0.05,
    remove_outliers=True,
    max_outlier_fraction=MAX_OUTLIER_FRACTION,
    max_outliers=MAX_OUTLIERS,
    normality_test="shapiro",
    normality_alpha=0.05,
    decided_by="cochran_cox",
    names=("a", "b"),
):
    r"""Compare two samples of test errors by Proben1's rules.

    Takes logarithms, removes outliers only where that makes a sample pass a normality
    test (never more than 10% of a sample), flags samples that stay non-normal, and runs
    the Cochran/Cox t' test for unequal variances and Welch's t-test.

    Parameters
    ----------
    a, b : array_like, shape (n1,), (n2,)
        Test errors of independent runs of two set-ups (e.g. squared error percentages
        or classification errors); at least 3 finite values each, and positive if `log`.
    log : bool, default=True
        Compare ``log(error)`` (Proben1: test errors are approximately log-normal).
    alpha : float, default=0.05
        Significance level of the verdict.
    remove_outliers : bool, default=True
        Apply the outlier rule; if False, only test normality.
    max_outlier_fraction : float, default=0.10
        At most ``floor(max_outlier_fraction * n)`` values are removed from a sample.
    max_outliers : int, default=25
        And at most this many, which bounds the cost (see ``MAX_OUTLIERS``); it
        binds only for samples of more than ``max_outliers / max_outlier_fraction``
        values.
    normality_test : {"shapiro", "ks"}, default="shapiro"
        ``"shapiro"``: :func:`scipy.stats.shapiro`. ``"ks"``: the KS distance of the
        standardised sample with Lawrence's :math:`Q_{KS}` p-value (as in
        :func:`describe`).
    normality_alpha : float, default=0.05
        A sample is normal when the normality p-value is ``>= normality_alpha``.
    decided_by : {"cochran_cox", "welch"}, default="cochran_cox"
        Which test gives ``pvalue``, ``significant`` and ``better`` (Proben1 used
        Cochran/Cox).
    names : tuple of two str, default=("a", "b")
        Labels of the samples, used in ``better`` and the printed forms.

    Returns
    -------
    ErrorComparison
        With ``cochran_cox`` and ``welch`` (each ``statistic``, two-sided ``pvalue``),
        the verdict (``better``, ``pvalue``, ``pvalue_percent``, ``significant``), the
        ``unreliable`` flag, and per sample what was removed (``sample_a``,
        ``sample_b``). ``str(result)`` is a readable summary and
        ``result.table_entry()`` gives Proben1's table notation.

    Raises
    ------
    ValueError
        If a sample is not 1-D, holds NaN/inf, has fewer than 3 values, or has values
        ``<= 0`` while ``log=True``; if both samples are constant; if an option is
        outside its valid set or range.

    See Also
    --------
    cochran_cox_ttest, scipy.stats.ttest_ind, scipy.stats.shapiro

    Notes
    -----
    *Outlier rule.* Let ``x`` be a transformed sample of size ``n`` and ``r_max =
    min(floor(max_outlier_fraction * n), max_outliers)``. If ``x`` passes the normality test, nothing is
    removed. Otherwise, for ``r = 1, ..., r_max``, every way of removing the ``i``
    smallest and ``r - i`` largest values (``i = 0..r``) is tested; the first ``r`` for
    which some way passes is used, choosing the way with the largest normality p-value.
    If no way passes, *nothing* is removed (removal is justified only where it restores
    normality) and the sample is flagged non-normal, which makes the comparison
    ``unreliable``. Outliers are always extreme values, so only the ends are tried.
    Samples with fewer than 10 values (``r_max = 0`` at 10%) are never trimmed.

    *Tests.* Cochran/Cox's critical value is
    :math:`t' = (w_1 t_1 + w_2 t_2)/(w_1 + w_2)`, :math:`w_i = s_i^2/n_i`, with
    :math:`t_i` the two-sided critical t for :math:`n_i - 1` degrees of freedom; its
    p-value solves :math:`t'(p) = |t|` (see :func:`cochran_cox_ttest`). Welch's test is
    :func:`scipy.stats.ttest_ind` with ``equal_var=False``.

    References
    ----------
    .. [1] L. Prechelt, "Proben1 -- a set of neural network benchmark problems and
       benchmarking rules", Technical Report 21/94, Universitaet Karlsruhe, 1994.
       Sections 3.x (outliers, log transform) and the t-test comparison table.
    .. [2] W. G. Cochran, G. M. Cox, *Experimental Designs*, 2nd ed., Wiley, 1957.
    .. [3] B. L. Welch, "The generalization of Student's problem when several different
       population variances are involved", Biometrika 34, 1947.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> pivot = np.exp(rng.normal(np.log(2.0), 0.1, 30))      # squared error percentages
    >>> shortcut = np.exp(rng.normal(np.log(2.3), 0.1, 30))
    >>> r = compare_errors(pivot, shortcut, names=("P", "S"))
    >>> r.better, r.significant, r.unreliable
    ('P', True, False)
    """
    alpha = check_probability(alpha, "alpha")
    normality_alpha = check_probability(normality_alpha, "normality_alpha")
    max_outlier_fraction = check_probability(
        max_outlier_fraction, "max_outlier_fraction", open_interval=False
    )
    if max_outlier_fraction >= 0.5:
        raise ValueError(
            f"`max_outlier_fraction` must be < 0.5, got {max_outlier_fraction!r}."
        )
    max_outliers = check_int(max_outliers, "max_outliers", minimum=0)
    check_choice(normality_test, "normality_test", NORMALITY_TESTS)
    check_choice(decided_by, "decided_by", DECIDING_TESTS)
    names = tuple(names)
    if len(names) != 2 or not all(isinstance(s, str) for s in names) or names[0] == names[1]:
        raise ValueError(f"`names` must be two different strings, got {names!r}.")
    samples = []
    for arg, x in (("a", a), ("b", b)):
        x = _check_sample(x, arg, min_size=3)
        if log and np.any(x <= 0):
            raise ValueError(
                f"`{arg}` has values <= 0 (smallest {x.min():g}); the log transform needs "
                "positive errors. Pass log=False or add a documented offset."
            )
        samples.append(x)
    if log:
        transformed = [np.log(x) for x in samples]
    else:
        transformed = [x.copy() for x in samples]
    test = _NORMALITY[normality_test]
    cleaned = [
        _clean(
            x,
            t,
            test,
            normality_alpha,
            min(int(np.floor(max_outlier_fraction * x.size + 1e-9)), max_outliers),
            remove_outliers,
        )
        for x, t in zip(samples, transformed)
    ]
    va, vb = cleaned[0].values, cleaned[1].values
    cc = _cochran_cox(va, vb, alpha)
    with warnings.catch_warnings():
        if np.ptp(va) == 0 or np.ptp(vb) == 0:
            # An exactly constant sample has variance 0, which is exact; scipy would warn
            # about "precision loss" for nearly identical data.
            warnings.filterwarnings("ignore", message=r".*Precision loss occurred.*")
        welch_res = stats.ttest_ind(va, vb, equal_var=False)
        ci = welch_res.confidence_interval(confidence_level=1.0 - alpha)
    welch = WelchResult(
        statistic=float(welch_res.statistic),
        pvalue=float(welch_res.pvalue),
        df=float(welch_res.df),
        confidence_interval=(float(ci.low), float(ci.high)),
        confidence_level=1.0 - alpha,
    )
    pvalue = cc.pvalue if decided_by == "cochran_cox" else welch.pvalue
    diff = float(va.mean() - vb.mean())
    significant = bool(pvalue < alpha)
    better = (names[0] if diff < 0 else names[1]) if significant else None
    return ErrorComparison(
        names=names,
        cochran_cox=cc,
        welch=welch,
        pvalue=float(pvalue),
        significant=significant,
        better=better,
        unreliable=not (cleaned[0].normal and cleaned[1].normal),
        sample_a=cleaned[0],
        sample_b=cleaned[1],
        mean_difference=diff,
        alpha=alpha,
        log=bool(log),
        decided_by=decided_by,
        normality_test=normality_test,
    )
