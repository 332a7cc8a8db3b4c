"""The trials' state side by side in vector lanes (for ``train_rprop_many``).

Trial ``g * LANES + k`` sits in lane k of group g: every array of per-weight state
has shape (groups, connections, LANES), so that one vector load reads the same
weight of LANES trials.
"""
import numpy as np

from fastnet._kernels import _trials

__all__ = ["LANES", "SAFE_LOG2", "Lanes", "aligned", "to_lanes", "from_lanes", "safe_weight"]

LANES = _trials.LANES

#: The lanes vouch for a trial's numbers only while every value of its epoch
#: (net inputs, outputs, errors, gradient sums) stays below 2**SAFE_LOG2 in
#: magnitude, far from the float64 overflow at 2**1024 (see `safe_weight`).
SAFE_LOG2 = 1000.0


def aligned(shape):
    """A zeroed C-contiguous float64 array starting at a 64-byte boundary: the
    kernels load a vector of 8 lanes at a time, and one that straddles two cache
    lines costs two loads (unaligned, cancer1 4+2 trains at 0.72x, thyroid1 16+8
    at 0.53x the speed)."""
    n = int(np.prod(shape))
    buf = np.zeros(n + 8)
    start = (-buf.__array_interface__["data"][0] % 64) // 8
    return buf[start:start + n].reshape(shape)


def to_lanes(flat, G, C):
    """(G * LANES, C) rows -> (G, C, LANES) blocks (trial g * LANES + k in lane k of group g)."""
    out = aligned((G, C, LANES))
    out[...] = flat.reshape(G, LANES, C).transpose(0, 2, 1)
    return out


def from_lanes(blocks):
    """(G, C, LANES) blocks -> (G * LANES, C) rows."""
    G, C, _ = blocks.shape
    return blocks.transpose(0, 2, 1).reshape(G * LANES, C)


def safe_weight(n_units, n_layers, n_patterns, data_max):
    """The weight magnitude below which no value of an epoch can overflow.

    The lanes' products are fused multiply-adds: an exact product beyond
    float64's range added to an infinite partial sum of the other sign stays
    infinite, where a separate product and sum (the single-network kernels, and
    so :func:`fastnet.train_rprop`) give NaN. tanh and logistic units then
    saturate at a finite value, and a diverged trial would report a finite error
    (Python decides: such a trial trains in the single-network kernels instead,
    and gets train_rprop's DivergenceError). Where no value can overflow, both
    agree to rounding. With every weight at most W >= 1 in magnitude, U =
    ``n_units`` + 1 (a fan-in or fan-out plus the bias), A = max(1,
    ``data_max``) (inputs and targets), L = ``n_layers`` and N = ``n_patterns``:
    a net input is at most (U W)**L A, f'(net) <= 1 for every activation, a
    backpropagated delta at most (U W)**L times four such net inputs, and a
    gradient sum or the SSE at most 4 N (U W)**(3 L) A**2. That stays below
    2**SAFE_LOG2 for W below the value returned.
    """
    log2 = (SAFE_LOG2 - np.log2(4.0 * n_patterns) - 2.0 * np.log2(max(1.0, data_max)))
    return float(2.0 ** min(1000.0, log2 / (3.0 * n_layers))) / (n_units + 1.0)


class Lanes:
    """The trials' weights and RPROP state, side by side in vector lanes.

    ``slot[i]`` is trial i's row in the flat (G * LANES) numbering, -1 once the
    trial has been packed away (`repack`): finished trials leave the lanes, so
    that they cost nothing more.
    """

    _STATE = ("w", "g", "g_prev", "dw_prev", "step")

    def __init__(self, flat, K, steps):
        """``flat``: (G * LANES, C) initial weights, trial i in row i (rows K.. are
        padding); ``steps``: (K, C) or (1, C) initial steps."""
        C = flat.shape[1]
        self.C = C
        self.G = flat.shape[0] // LANES
        self.w = to_lanes(flat, self.G, C)
        flat = np.zeros_like(flat)
        flat[:K] = steps
        self.step = to_lanes(flat, self.G, C)
        self.g = aligned(self.w.shape)
        self.g_prev = aligned(self.w.shape)
        self.dw_prev = aligned(self.w.shape)
        self.last_error = np.full(self.G * LANES, np.inf)
        # Padding lanes never train (status 1 is "frozen").
        self.status = np.zeros(self.G * LANES, np.int64)
        self.status[K:] = 1
        self.slot = np.arange(K)
        self.in_place = True           # trial i in row i of the (G * LANES) numbering

    def rows(self, trials):
        """The current weights of ``trials`` (an index array): (len(trials), C)."""
        s = self.slot[trials]
        return self.w[s // LANES, :, s % LANES]

    def weights(self, i):
        s = self.slot[i]
        return self.w[s // LANES, :, s % LANES]

    def largest(self, trials=None):
        """max |w| of each of ``trials`` (an index array) at its current weights;
        None: of all lanes (padding and frozen lanes included), one number."""
        if trials is None:
            return max(float(self.w.max()), -float(self.w.min()))
        s = self.slot[trials]
        return np.abs(self.w).max(axis=1)[s // LANES, s % LANES]

    def repack(self, keep):
        """Keep the trials of the boolean mask ``keep`` only, in as few groups as they fill."""
        rows = self.slot[keep]
        G = max(1, -(-rows.size // LANES))
        for name in self._STATE:
            flat = np.zeros((G * LANES, self.C))
            flat[:rows.size] = from_lanes(getattr(self, name))[rows]
            setattr(self, name, to_lanes(flat, G, self.C))
        last = np.full(G * LANES, np.inf)
        last[:rows.size] = self.last_error[rows]
        status = np.ones(G * LANES, np.int64)
        status[:rows.size] = self.status[rows]
        self.last_error, self.status, self.G = last, status, G
        self.slot = np.where(keep, np.cumsum(keep) - 1, -1)
        self.in_place = False
