"""The lanes backend: trials side by side in vector lanes (for ``train_rprop_many``).

Trial ``g * LANES + k`` sits in lane k of group g: every array of per-weight state
has shape (groups, connections, LANES), so that one vector load reads the same
weight of LANES trials.
"""
import contextlib
import math

import numpy as np

from fastnet._kernels import _trials
from fastnet.network import outputs_at
from fastnet.training import _orders
from fastnet.training._algorithms import NO_CHECK

__all__ = ["LANES", "SAFE_LOG2", "Lanes", "LanesBackend", "aligned", "to_lanes", "from_lanes",
           "safe_weight", "lanes_per_group", "lanes_kernels", "lanes_take"]

#: Trials per group of lanes in float64 (one AVX-512 vector of doubles).
LANES = _trials.LANES


#: The lanes' kernels of each dtype, chosen once per run: ``_trials.INSTANCES`` (each
#: value type's entries without the dtype test of ``_trials``' own; the float32 one is
#: the module ``_trials32``, the lanes' sources compiled for float).
_KERNELS = {np.dtype(np.float64): _trials.INSTANCES["float64"],
            np.dtype(np.float32): _trials.INSTANCES["float32"]}
#: Trials per group of lanes of each dtype: float32 lanes are twice as many (16 floats
#: per AVX-512 vector).
_LANES_OF = {dtype: k.LANES for dtype, k in _KERNELS.items()}


def lanes_kernels(dtype):
    """The lanes' kernel module (``trials_train``, ``trials_sse``, ``work_size``, ...) of
    ``dtype``."""
    return _KERNELS[np.dtype(dtype)]

#: The lanes vouch for a trial's numbers only while every value of its epoch
#: (net inputs, outputs, errors, gradient sums) stays below 2**SAFE_LOG2 in
#: magnitude, far from the float64 overflow at 2**1024 (see `safe_weight`);
#: in float32, whose overflow is at 2**128, below 2**(SAFE_LOG2_OF[float32]).
SAFE_LOG2 = 1000.0
SAFE_LOG2_OF = {np.dtype(np.float64): SAFE_LOG2, np.dtype(np.float32): 120.0}


def lanes_per_group(dtype):
    """Trials per group of lanes (one vector of the kernels) in ``dtype``."""
    return _LANES_OF[np.dtype(dtype)]

_MAX, _MIN = np.maximum.reduce, np.minimum.reduce


def aligned(shape, zero=True, dtype=np.float64):
    """A C-contiguous array of ``dtype`` starting at a 64-byte boundary, zeroed unless
    ``zero`` is False: the kernels load a vector of 8 lanes at a time, and one that
    straddles two cache lines costs two loads (unaligned, cancer1 4+2 trains at
    0.72x, thyroid1 16+8 at 0.53x the speed)."""
    n, size = math.prod(shape), np.dtype(dtype).itemsize
    pad = 64 // size
    buf = np.zeros(n + pad, dtype) if zero else np.empty(n + pad, dtype)
    start = (-buf.__array_interface__["data"][0] % 64) // size
    return buf[start:start + n].reshape(shape)


def to_lanes(rows, G, C, out=None):
    """(K, C) rows, K <= G * L -> (G, C, L) blocks, L the lanes per group of the rows'
    dtype (trial g * L + k in lane k of group g; the lanes beyond K zero), into ``out``
    if given."""
    LANES = out.shape[2] if out is not None else lanes_per_group(rows.dtype)
    if out is None:
        out = aligned((G, C, LANES), zero=False, dtype=rows.dtype)
    K = rows.shape[0]
    full = K // LANES
    if full:
        out[:full] = rows[:full * LANES].reshape(full, LANES, C).transpose(0, 2, 1)
    if G > full:
        out[full:] = 0.0
        if K > full * LANES:
            out[full, :, :K - full * LANES] = rows[full * LANES:].T
    return out


def from_lanes(blocks):
    """(G, C, L) blocks -> (G * L, C) rows."""
    G, C, LANES = blocks.shape
    return blocks.transpose(0, 2, 1).reshape(G * LANES, C)


def lanes_take(net, X, Y):
    """Whether the lanes' kernels take ``net``'s layer table (a pass over one pattern of
    ``X``, ``Y``, which raises ValueError where they do not)."""
    try:
        LANES, k = lanes_per_group(net.dtype), lanes_kernels(net.dtype)
        k.trials_sse(net.layer_table, net.n_in, X[:1], Y[:1],
                     aligned((1, net.n_connections, LANES), dtype=net.dtype),
                     aligned((k.work_size(net.n_units),), dtype=net.dtype), np.empty(LANES))
    except ValueError:
        return False
    return True


def safe_weight(n_units, n_layers, n_patterns, data_max, dtype=np.float64):
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
    2**SAFE_LOG2 for W below the value returned (in float32, 2**120).
    """
    safe = SAFE_LOG2_OF[np.dtype(dtype)]
    log2 = (safe - math.log2(4.0 * n_patterns) - 2.0 * math.log2(max(1.0, data_max)))
    return float(2.0 ** min(safe, log2 / (3.0 * n_layers))) / (n_units + 1.0)


class Lanes:
    """The trials' weights and rule state, side by side in vector lanes (the
    rule's three arrays g_prev, dw_prev, step: RPROP's names; see
    fn_trials_state in ``_kernels/_lanes.h`` for what the other rules keep there).

    ``slot[i]`` is trial i's row in the flat (G * LANES) numbering, -1 once the
    trial has been packed away (`repack`): finished trials leave the lanes, so
    that they cost nothing more.
    """

    _STATE = ("w", "g", "g_prev", "dw_prev", "step")

    def __init__(self, weights, steps):
        """``weights``: (K, C) initial weights, trial i in row i, of the network's dtype
        (the lanes' too); ``steps``: (K, C) or (1, C) initial steps, or None (zeros: a
        rule without steps)."""
        K, C = weights.shape
        self.C, self.dtype = C, weights.dtype
        self.L = LANES = lanes_per_group(self.dtype)       # (trials per group)
        self.G = G = -(-K // LANES)
        # The five state arrays in one allocation (each starting at a 64-byte boundary):
        # a timing study's call pays for one buffer, not five.
        n = G * C * LANES
        pad = 64 // self.dtype.itemsize
        stride = -(-n // pad) * pad
        flat = aligned((5 * stride,), zero=False, dtype=self.dtype)
        self.w, self.g, self.g_prev, self.dw_prev, self.step = (
            flat[k * stride:k * stride + n].reshape(G, C, LANES) for k in range(5))
        to_lanes(weights, G, C, out=self.w)
        flat[2 * stride:4 * stride] = 0.0     # g_prev, dw_prev (g: set by the kernels first)
        if steps is None:
            self.step[...] = 0.0
        elif steps.shape[0] == 1:             # one step for every weight of every trial
            self.step[...] = steps[0][None, :, None]
        else:
            to_lanes(steps, G, C, out=self.step)
        self.last_error = np.empty(G * LANES)
        self.last_error.fill(np.inf)
        # Padding lanes never train (status 1 is "frozen").
        self.status = np.zeros(G * LANES, np.int64)
        self.status[K:] = 1
        self.slot = np.arange(K)
        self.in_place = True           # trial i in row i of the (G * LANES) numbering

    def rows(self, trials):
        """The current weights of ``trials`` (an ascending index array): (len(trials), C)."""
        if self.in_place and trials.size == self.slot.size:      # all, in order
            return from_lanes(self.w)[:trials.size]
        s = self.slot[trials]
        return self.w[s // self.L, :, s % self.L]

    def weights(self, i):
        s = self.slot[i]
        return self.w[s // self.L, :, s % self.L]

    def largest(self, trials=None):
        """max |w| of each of ``trials`` (an index array) at its current weights;
        None: of all lanes (padding and frozen lanes included), one number."""
        if trials is None:
            return max(float(_MAX(self.w, axis=None)), -float(_MIN(self.w, axis=None)))
        s = self.slot[trials]
        return np.abs(self.w).max(axis=1)[s // self.L, s % self.L]

    def restart(self, trials, weights):
        """Keep ``trials`` alone, back at ``weights``, their initial ones: after the queue
        (which trains in buffers of its own and leaves the lanes the rule state of the
        start, its final weights aside) the strips can train them again from the start."""
        s = self.slot[trials]
        self.w[s // self.L, :, s % self.L] = weights
        keep = np.zeros(self.slot.size, bool)
        keep[trials] = True
        self.repack(keep)

    def repack(self, keep):
        """Keep the trials of the boolean mask ``keep`` only, in as few groups as they fill."""
        rows, LANES = self.slot[keep], self.L
        G = max(1, -(-rows.size // LANES))
        for name in self._STATE:
            flat = np.zeros((G * LANES, self.C), self.dtype)
            flat[:rows.size] = from_lanes(getattr(self, name))[rows]
            setattr(self, name, to_lanes(flat, G, self.C))
        last = np.full(G * LANES, np.inf)
        last[:rows.size] = self.last_error[rows]
        status = np.ones(G * LANES, np.int64)
        status[:rows.size] = self.status[rows]
        self.last_error, self.status, self.G = last, status, G
        self.slot = np.where(keep, np.cumsum(keep) - 1, -1)
        self.in_place = False


class LanesBackend:
    """Trials side by side in the lanes of one vector (``fastnet._kernels._trials``).

    Parameters
    ----------
    net : MLP
        The topology.
    algorithm : Algorithm
        A rule with a lanes kernel (``algorithm.lanes``).
    sets : Sets
    run : RunOptions
    weights : ndarray of shape (K, C)
        The trials' initial weights, trial i in row i.
    steps : ndarray of shape (K, C) or (1, C), or None
        The initial steps (RPROP; None for the other rules).
    generators : sequence of numpy.random.Generator, optional
        Online training (``algorithm.per_pattern``): trial i's generator of its
        presentation orders (distinct bit generators), drawn from in the kernel.
    """

    block_size = _trials.BLOCK

    def __init__(self, net, algorithm, sets, run, weights, steps, generators=None):
        self.net, self.sets, self.K = net, sets, weights.shape[0]
        self.layers, self.n_in, self.n_out = net.layer_table, net.n_in, net.n_out
        self.algorithm, self.args = algorithm, algorithm.lanes_args()
        self.max_epochs, self.epoch = run.max_epochs, 0     # (epochs trained by the trials)
        self.lanes = Lanes(weights, steps)
        self.L, dtype = self.lanes.L, self.lanes.dtype      # (trials per group; the net's dtype)
        self.k = lanes_kernels(dtype)           # (the lanes' kernels of that dtype)
        self.start = (weights, steps)           # (for `queue`: each trial from its start)
        N = sets.X.shape[0]
        self.online = algorithm.per_pattern
        if self.online:
            # Each lane's generator (its C interface's address, by trial) and its
            # order of the last epoch it drew (a trial stopped within an epoch
            # takes that epoch's order along: see `release`).
            self.generators = list(generators)
            self.bitgens = _orders.addresses(self.generators)
            self.orders = np.zeros((self.lanes.G * self.L, N), dtype=np.int64)
            # (the forward passes of `sse` and `final` and the queue use it too)
            size = max(self.k.online_work_size(net.n_units, net.n_connections),
                       self.k.work_size(net.n_units, N, net.n_in))
        else:
            size = self.k.work_size(net.n_units, N, net.n_in)
        self.work = aligned((size,), dtype=dtype)
        self.scale = run.scale(sets.X.shape[0], net.n_out)
        data = [a for a in (sets.X, sets.Y, sets.X_val, sets.Y_val, sets.X_test, sets.Y_test)
                if a is not None]
        self.w_safe = safe_weight(net.n_units, len(self.layers), max(a.shape[0] for a in data),
                                  max(max(float(_MAX(a, axis=None)), -float(_MIN(a, axis=None)))
                                      for a in data), dtype)
        # The kernel stops a trial before an epoch that would start from weights
        # beyond w_safe (`w_limit`), and it goes on alone: the same test of the same
        # weights in the strips and in the queue, so that both hand off the same trials
        # at the same epoch. RPROP moves a weight at most max_change an epoch: where no
        # trial can come near w_safe in the run, nothing is watched.
        self.max_change = algorithm.max_change
        if (self.max_change is not None
                and self.lanes.largest() + run.max_epochs * self.max_change < self.w_safe):
            self.w_safe = None                      # no trial can come near it in this run

    @property
    def groups(self):
        """Groups of ``self.L`` trials the lanes hold now."""
        return self.lanes.G

    def repack(self, keep):
        """Keep the trials of the boolean mask ``keep`` only, in as few groups as they fill."""
        if self.online:         # (their orders of the last epoch move with them)
            rows = self.lanes.slot[keep]
            self.orders[:rows.size] = self.orders[rows]
        self.lanes.repack(keep)

    @property
    def w_limit(self):
        """The kernel's w_limit: a trial stops in the lanes before an epoch that
        would start from weights of w_safe or more (status ``_trials.BEYOND`` + its
        epochs) and trains on alone in the single-network kernels; 0: no limit
        (no trial can come near w_safe in this run)."""
        return 0.0 if self.w_safe is None else self.w_safe

    def run(self, trials, n, check, history, epoch, in_place):
        """``n`` epochs of every unfrozen lane; ``trials``' training errors (scaled)
        into ``history[i, epoch:epoch + n]`` (written there by the kernel while
        trial i is in row i and ``in_place``); one status per trial. ``self.top``:
        the largest error the call wrote (an upper bound of every error it trained)."""
        lanes, s = self.lanes, self.sets
        every, r_c, analog = NO_CHECK if check is None else check
        rows = lanes.slot[trials]
        in_place = in_place and lanes.in_place
        sse = history[:, epoch:epoch + n] if in_place else np.empty((lanes.G * self.L, n))
        if self.online:
            # (no success check in the kernel: the loop checks online trials at strip ends)
            bitgens = np.zeros(lanes.G * self.L, dtype=np.uintp)
            bitgens[rows] = self.bitgens[trials]
            with _orders.held([self.generators[i] for i in trials.tolist()]):
                self.top = self.k.trials_online(
                    self.layers, self.n_in, s.X, s.Y, lanes.w, lanes.dw_prev, lanes.status,
                    self.work, self.args, sse, self.orders[:lanes.G * self.L], bitgens,
                    sse_scale=self.scale, t0=epoch, t_max=self.max_epochs,
                    w_limit=self.w_limit)
        else:
            self.top = self.k.trials_train(
                self.layers, self.n_in, s.X, s.Y, lanes.w, lanes.g, lanes.g_prev,
                lanes.dw_prev, lanes.step, lanes.last_error, lanes.status, self.work, self.args,
                sse, every, r_c, analog, special=not self.w_limit > 0.0, sse_scale=self.scale,
                t0=epoch, t_max=self.max_epochs, w_limit=self.w_limit)
        self.epoch = epoch + n
        if not in_place:
            history[trials, epoch:epoch + n] = sse[rows]
        return lanes.status[rows]

    def queue(self, check, below, t_max, history):
        """Train every trial from its start until it stops, the lanes taking trial
        after trial (``_trials.trials_queue``: a lane whose trial stopped takes
        the next waiting one at once; Hamey's check ``check`` on each epoch's
        forward pass, online training's on a forward pass of its own after the
        epoch, or ``below`` = (threshold, every): the epoch's training error
        below threshold at a strip end); each trial's errors by epoch into
        ``history`` (K, t_max) rows, or None. Returns the per-trial columns of
        the kernel: weights, epochs, status, and the first, largest (with its
        epoch) and lowest error."""
        W, steps = self.start
        K, C = W.shape
        every, r_c, analog = check
        w_out, LANES = np.empty((K, C), W.dtype), self.L
        epochs, status, top_epoch = (np.empty(K, np.int64) for _ in range(3))
        first, top, low = np.empty(K), np.empty(K), np.empty(K)
        # (one group of lanes: it takes every trial in turn; its state stays in cache)
        state = [aligned((1, C, LANES), dtype=W.dtype) for _ in range(5)]
        w_limit = self.w_limit          # (watched as in the strips: the same hand-offs)
        online, saved = {}, None
        if self.online:
            # (each lane draws its trial's orders from the trial's generator; if the
            # strips must train them instead, each generator goes back to where it was)
            online = dict(orders=np.empty((LANES, self.sets.X.shape[0]), np.int64),
                          bitgens=self.bitgens)
            saved = [g.bit_generator.state for g in self.generators]
        with _orders.held(self.generators) if self.online else contextlib.nullcontext():
            self.top = self.k.trials_queue(
                self.layers, self.n_in, self.sets.X, self.sets.Y, *state, np.empty(LANES), self.work,
                self.args, W, steps, w_out, epochs, status, top_epoch, first, top, low, history,
                check_every=every, r_c=r_c, analog=analog, special=not w_limit > 0.0,
                sse_scale=self.scale, t_max=t_max, w_limit=w_limit,
                below=-1.0 if below is None else below[0],
                below_every=0 if below is None else below[1], **online)
        self._drawn_from = saved
        to_lanes(w_out, self.lanes.G, C, out=self.lanes.w)     # (the final errors read them)
        self.epoch = t_max
        return w_out, epochs, status, first, top, top_epoch, low

    def rewind(self):
        """After `queue`: online trials' generators back where they were before it
        (the strips train those trials again from their start)."""
        if self._drawn_from is not None:
            for g, was in zip(self.generators, self._drawn_from):
                g.bit_generator.state = was

    def weights(self, trials):
        return self.lanes.rows(trials)

    def sse(self, which, trials):
        s = self.sets
        X, T = (s.X_val, s.Y_val) if which == "val" else (s.X_test, s.Y_test)
        sse = np.empty(self.lanes.G * self.L)
        self.k.trials_sse(self.layers, self.n_in, X, T, self.lanes.w, self.work, sse)
        return sse[self.lanes.slot[trials]]

    def row(self, i):
        return self.lanes.rows(np.array([i]))[0]

    def sse_one(self, which, i):
        return float(self.sse(which, np.array([i]))[0])

    def train_outputs(self, i):
        return outputs_at(self.net, self.sets.X, np.ascontiguousarray(self.row(i)))   # a lane is strided

    def freeze(self, trials):
        """Trials that stopped (or left) keep their lanes but train no more."""
        s = self.lanes.slot[trials]
        self.lanes.status[s] = np.maximum(self.lanes.status[s], 1)

    def release(self, trials, epoch=None):
        """(trial, weights, rule state, previous change) of each of ``trials``
        (copies), as the lanes leave them: the state for the single-network
        kernels (``algorithm.lanes_state``, after ``epoch`` epochs: by default
        those of the last call), the previous change for their workspace.
        Online, the state also takes the trial's generator and, for a trial
        that stopped short of the call's end (``epoch`` given: at w_limit), the
        order the kernel drew for its next epoch."""
        lanes, rule = self.lanes, self.algorithm
        stopped_short = epoch is not None
        epoch = self.epoch if epoch is None else epoch
        for i in np.asarray(trials).tolist():
            s = int(lanes.slot[i])
            g, k = divmod(s, self.L)
            args = (lanes.g_prev[g, :, k], lanes.dw_prev[g, :, k], lanes.step[g, :, k],
                    lanes.last_error[s], epoch, self.max_epochs)
            if self.online:
                state = rule.lanes_state(*args, rng=self.generators[i],
                                         pending=self.orders[s] if stopped_short else None)
            else:
                state = rule.lanes_state(*args)
            yield i, lanes.w[g, :, k].copy(), state, lanes.dw_prev[g, :, k].copy()

    def final(self, which, rows, classification, current=False):
        """(SSE, classification error or None) of the weights ``rows`` (K, C);
        ``current``: they are the lanes' own (every trial where it trained)."""
        s = self.sets
        X, T = {"train": (s.X, s.Y), "val": (s.X_val, s.Y_val), "test": (s.X_test, s.Y_test)}[which]
        K, LANES = rows.shape[0], self.L
        if current and self.lanes.in_place and K == self.K:
            w, G = self.lanes.w, self.lanes.G
        else:
            G = -(-K // LANES)
            w = to_lanes(rows, G, rows.shape[1])
        # The kernel sums each trial's errors in a fixed order, so a trial's result
        # does not depend on how many trials share the call.
        sse = np.empty(G * LANES)
        self.k.trials_sse(self.layers, self.n_in, X, T, w, self.work, sse)
        cls = None
        if classification:
            out = np.empty((G, X.shape[0], self.n_out, LANES), w.dtype)
            self.k.trials_outputs(self.layers, self.n_in, X, w, self.work, out)
            outs = out.transpose(0, 3, 1, 2).reshape(G * LANES, X.shape[0], self.n_out)[:K]
            wrong = np.count_nonzero(np.argmax(outs, axis=2) != np.argmax(T, axis=1), axis=1)
            cls = 100.0 * wrong / T.shape[0]
        return sse[:K], cls
