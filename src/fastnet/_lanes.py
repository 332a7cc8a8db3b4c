"""The trials' state side by side in vector lanes (for ``train_rprop_many``).

Trial ``g * LANES + k`` sits in lane k of group g: every array of per-weight state
has shape (groups, connections, LANES), so that one vector load reads the same
weight of LANES trials.
"""
import numpy as np

from fastnet._kernels import _trials

__all__ = ["LANES", "Lanes", "aligned", "to_lanes", "from_lanes"]

LANES = _trials.LANES


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
