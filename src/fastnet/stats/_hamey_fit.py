"""Hamey's asymptotic model fitted by maximum likelihood (Hamey 1992): the likelihood,
the Kolmogorov-Smirnov distance on distinct times, one candidate T0's fit."""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from ._common import _stephens_pvalue

#: Bounds of the shape k in the maximum-likelihood fit (k -> inf is the exponential
#: limit; k -> 0 a tail so heavy that almost nothing more succeeds).
K_BOUNDS = (1e-3, 1e3)
#: Bounds of a * (T - T0) in the fit.
A_SPAN_BOUNDS = (1e-6, 1e6)


def _count_time(sorted_success, count):
    """Smallest successful time by which at least `count` trials have succeeded."""
    j = max(int(math.ceil(count - 1e-9)), 1)
    return float(sorted_success[j - 1])


#: Fewest successes after T0 for which the fit works on the distinct times with their
#: counts (when they repeat: times in whole epochs); below it, on every time (as before).
GROUPED_FIT_MIN = 20_000


def _neg_loglik(theta, x, span, weights=None, m=None):
    """Negative log-likelihood of the truncated model; x = t_i - T0 in (0, span), or
    the distinct such values with their counts ``weights`` (``m`` successes in all)."""
    log_a, log_k = theta
    if abs(log_a) > 700 or abs(log_k) > 700:
        return np.inf
    a, k = math.exp(log_a), math.exp(log_k)
    m = x.size if m is None else m
    log_ft = math.log(-math.expm1(-k * math.log1p(a * span)))  # ln F(T)
    logs = np.log1p(a * x)
    total = logs.sum() if weights is None else (weights * logs).sum()
    val = m * (log_a + log_k - log_ft) - (k + 1.0) * total
    return -val if np.isfinite(val) else np.inf


def _ks_distance(values, counts, cdf):
    """``scipy.stats.kstest(sample, cdf).statistic`` of the sample holding the sorted
    distinct ``values`` ``counts`` times each, bit for bit: D+ = max(i/n - F(x_(i)))
    peaks at the last copy of a value, D- = max(F(x_(i)) - (i - 1)/n) at its first."""
    n = int(counts.sum())
    ends = np.cumsum(counts).astype(np.float64)
    f = cdf(values)
    return float(max((ends / n - f).max(), (f - (ends - counts) / n).max()))


def _fit_candidate(t_succ, t0, limit):
    x = t_succ[t_succ > t0] - t0
    span = limit - t0
    bounds = [
        (math.log(A_SPAN_BOUNDS[0] / span), math.log(A_SPAN_BOUNDS[1] / span)),
        (math.log(K_BOUNDS[0]), math.log(K_BOUNDS[1])),
    ]
    start = np.array([math.log(1.0 / np.median(x)), 0.0])
    start = np.clip(start, [b[0] for b in bounds], [b[1] for b in bounds])
    opts = {"xatol": 1e-7, "fatol": 1e-10, "maxiter": 4000, "maxfev": 8000}
    # (x is sorted: its distinct values and counts without another sort)
    cut = np.flatnonzero(np.diff(x)) + 1
    values, counts = x[np.concatenate(([0], cut))], np.diff(np.concatenate(([0], cut, [x.size])))
    grouped = x.size >= GROUPED_FIT_MIN and 4 * values.size <= x.size
    args = (values, span, counts.astype(np.float64), x.size) if grouped else (x, span)
    kw = dict(args=args, method="Nelder-Mead", bounds=bounds, options=opts)
    res = optimize.minimize(_neg_loglik, start, **kw)
    # One restart from the optimum guards against a collapsed simplex.
    res = optimize.minimize(_neg_loglik, res.x, **kw)
    if not (res.success and np.isfinite(res.fun)):
        return None
    a, k = float(np.exp(res.x[0])), float(np.exp(res.x[1]))
    f_limit = -math.expm1(-k * math.log1p(a * span))

    def cdf(t):
        return -np.expm1(-k * np.log1p(a * (np.asarray(t) - t0))) / f_limit

    d = _ks_distance(values + t0, counts, cdf)
    near = [(v - lo < 1e-6, hi - v < 1e-6) for v, (lo, hi) in zip(res.x, bounds)]
    at_bound = any(lo or hi for lo, hi in near)
    # a -> 0 or k -> 0 make F(T) -> 0: the fitted tail says nothing about t > T.
    degenerate = near[0][0] or near[1][0]
    return {"a": a, "k": k, "loglik": -float(res.fun), "ks_d": d,
            "ks_p": _stephens_pvalue(d, x.size), "m": int(x.size), "at_bound": at_bound,
            "degenerate": degenerate}
