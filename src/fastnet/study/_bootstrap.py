"""The bootstrap interval of a ratio of two algorithms' median times to success (a
study's log-rank table): each algorithm's trials resampled on their own, the medians of
many trials drawn without drawing every resample."""
from __future__ import annotations

import numpy as np

__all__ = []

#: Resamples of the bootstrap interval of a ratio of medians.
BOOTSTRAP_RESAMPLES = 2000


#: Most trials whose bootstrap resamples are drawn index by index (B x K integers); beyond
#: it each resample's median is drawn by binomial splits of the sorted trials.
BOOTSTRAP_DIRECT_MAX = 5000


def _resampled_medians(times, seed, k):
    """Medians of `BOOTSTRAP_RESAMPLES` resamples (with replacement) of one algorithm's
    trial times, from a stream of its own (the study's seed and its index `k`)."""
    rng = np.random.default_rng([seed, k])
    if times.size > BOOTSTRAP_DIRECT_MAX:
        return _split_medians(np.sort(times), rng, BOOTSTRAP_RESAMPLES)
    draws = rng.integers(0, times.size, size=(BOOTSTRAP_RESAMPLES, times.size))
    return np.median(times[draws], axis=1)


def _split_medians(values, rng, resamples):
    """Medians of ``resamples`` resamples of the sorted ``values`` (n), each drawn as the
    resample's middle order statistics without the resample: how many of its n draws
    fall in the left half of a range of sorted positions is binomial given how many fall
    in the range, so halving the range around the wanted rank, log2(n) times, finds the
    position holding it (the same law as sorting n draws: O(B log n) work and memory).
    An even n's two middle ranks share their splits while they share a range (the halves
    are then independent given their counts)."""
    n = values.size
    ranks = sorted({(n - 1) // 2, n // 2})
    B = resamples
    lo = [np.zeros(B, np.int64) for _ in ranks]
    hi = [np.full(B, n, np.int64) for _ in ranks]
    count = [np.full(B, n, np.int64) for _ in ranks]
    before = [np.zeros(B, np.int64) for _ in ranks]
    while any(bool(np.any(h - v > 1)) for v, h in zip(lo, hi)):
        shared = None
        for j, r in enumerate(ranks):
            width = hi[j] - lo[j]
            mid = lo[j] + width // 2
            p = np.where(width > 1, (mid - lo[j]) / np.maximum(width, 1), 1.0)
            left = rng.binomial(count[j], p)
            if shared is not None:        # (the same range as the lower rank's: its split)
                same = (lo[j] == shared[0]) & (hi[j] == shared[1])
                left = np.where(same, shared[2], left)
            if j == 0 and len(ranks) > 1:
                shared = (lo[0].copy(), hi[0].copy(), left)
            go_left = before[j] + left > r
            active = width > 1
            hi[j] = np.where(active & go_left, mid, hi[j])
            before[j] = np.where(active & ~go_left, before[j] + left, before[j])
            count[j] = np.where(active, np.where(go_left, left, count[j] - left), count[j])
            lo[j] = np.where(active & ~go_left, mid, lo[j])
    if len(ranks) == 1:
        return values[lo[0]].astype(float)
    return (values[lo[0]] + values[lo[1]]) / 2.0


def _ratio_interval(medians_a, medians_b, level=0.95):
    """Percentile interval of the ratio of two algorithms' resampled medians: the
    two-sample percentile bootstrap (each algorithm's trials resampled on their own, as
    scipy.stats.bootstrap does with ``paired=False``), with every algorithm's resampled
    medians drawn once for all its pairs."""
    q = 100 * (1 - level) / 2
    lo, hi = np.percentile(medians_a / medians_b, [q, 100 - q])
    return float(lo), float(hi)
