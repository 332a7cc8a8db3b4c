"""Where each trial trains: the lanes, the single-network kernels, or first one then
the other (a hand-off; method "mixed").

Trials of a batch stop at different epochs (early stopping), but a group of
vector lanes costs the same however few of its lanes still train. Whenever the
trials still training fill too little of the last group of lanes they need,
that group's trials go on in the single-network kernels, each with its state as
the lanes left it (weights, previous gradient and change, steps, last error),
so that each goes on in the kernel :func:`train_rprop` uses; the others stay in
full groups. The strip loop sees one small interface (:class:`Backend`)
whatever the backends: :class:`fastnet.training._serial.Serial` (one network at
a time) and :class:`Trials` (lanes, and the hand-off to a `Serial`) implement it.
"""
import numpy as np

from fastnet.training import _status

__all__ = ["MAX_EPOCHS_PER_CALL", "HANDOFF_FILL", "HANDOFF_EPOCHS", "lanes_fill", "Backend",
           "Trials"]

#: Without strips (no validation, no criterion, no callback) the kernels still
#: return to Python every this many epochs, so Ctrl-C stays responsive.
MAX_EPOCHS_PER_CALL = 1000

#: A batch of method "mixed" hands the trials of the last group of lanes they
#: need to the single-network kernels when they fill less than this share of it.
#: Lanes train 1.2-1.5x faster than one network at a time per trial-epoch on the
#: Proben1 pivot networks beyond the narrow lanes' limit (16 trials, full lanes),
#: so below about 3/4 full one at a time is faster (see docs/performance.md).
HANDOFF_FILL = 0.75

#: With the success check in the kernel (no strips to return at), a batch of
#: method "mixed" still returns every this many epochs (rounded to strips) to
#: see whether the trials left should be handed off.
HANDOFF_EPOCHS = 20


def lanes_fill(n, lanes):
    """The share of the lanes that ``n`` trials fill, packed into as few groups as they need."""
    return n / (lanes * -(-n // lanes)) if n else 0.0


class Backend:
    """Where a set of trials trains: the interface the strip loop sees.

    Trial ``i`` (0 <= i < K) is named by its number; ``trials`` is an ascending
    intp array of such numbers, ``which`` one of "train", "val", "test".

    Attributes
    ----------
    top : float or None
        The largest training error the last :meth:`run` wrote, where a kernel
        kept it (the loop's growth check then reads no history); None: not kept.
    aligned : bool
        Whether the training-error history should start at a 64-byte boundary
        (the lanes' kernels stream whole cache lines of it).
    returns_every : int
        Epochs per :meth:`run` when nothing else makes the loop return (no
        strips): often enough for Ctrl-C, and for a hand-off to be noticed.
    block_size : int
        Patterns per cache block of the training kernels (for the set-up record).
    """

    top = None
    aligned = False
    returns_every = MAX_EPOCHS_PER_CALL

    def run(self, trials, n, check, history, epoch):
        """Train ``n`` epochs of ``trials`` (``check``: Hamey's success check in the
        kernels, (every, r_c, analog), or None); their scaled training errors into
        ``history[i, epoch:epoch + n]``; one status per trial (see
        ``fastnet.training._status``)."""
        raise NotImplementedError

    def drive(self, i, next_strip):
        """Train trial ``i`` by its rule's own loop (`Algorithm.drive`), strip by strip
        as ``next_strip`` (the loop's) gives them; the scaled training errors into
        each strip's buffer."""
        raise NotImplementedError

    def weights(self, trials):
        """The current weights of ``trials``: (len(trials), C), a copy."""
        raise NotImplementedError

    def row(self, i):
        """Trial ``i``'s current weights (possibly a view: copy before it trains on)."""
        raise NotImplementedError

    def sse(self, which, trials):
        """Summed squared errors of ``trials`` on the "val" or "test" set."""
        raise NotImplementedError

    def sse_one(self, which, i):
        """Summed squared error of trial ``i`` on the "val" or "test" set (a float)."""
        raise NotImplementedError

    def train_outputs(self, i):
        """Trial ``i``'s outputs on the training set."""
        raise NotImplementedError

    def stopped(self, trials):
        """``trials`` train no more: let their room go (lanes they held)."""
        raise NotImplementedError

    def stop_reason(self, i):
        """The reason trial ``i``'s rule gave for stopping itself, or None."""
        raise NotImplementedError

    def counts(self, trials):
        """(forward, backward, update, flops) of ``trials`` by their rules' own
        counts (rules whose cost varies by epoch)."""
        raise NotImplementedError

    def final(self, which, rows, classification, current=False):
        """(SSE, classification error or None) of the weights ``rows`` (K, C) on
        ``which`` set; ``current``: ``rows`` are the weights each trial stopped at."""
        raise NotImplementedError

    def hand_off(self, stopped, n):
        """Before ``n`` epochs, with the boolean mask ``stopped`` of the trials that
        stopped: move trials between backends (nothing to move here). Returns the
        epochs to train: ``n``."""
        return n

    def pack(self, stopped):
        """After a call: let stopped trials' room go (nothing to free here)."""


class Trials(Backend):
    """K trials spread over a lanes backend and a serial one (either may be None).

    ``in_lanes[i]`` says where trial i trains; ``handoff`` the fill of the lanes'
    last group below which its trials move to ``make_serial()`` (None: never).
    """

    def __init__(self, K, lanes=None, serial=None, make_serial=None, handoff=None):
        self.lanes, self.serial, self.make_serial, self.handoff = lanes, serial, make_serial, handoff
        self.aligned = lanes is not None
        # (a batch that hands trials off returns more often, to notice stopped trials)
        self.returns_every = MAX_EPOCHS_PER_CALL if handoff is None else HANDOFF_EPOCHS
        self.in_lanes = np.empty(K, bool)
        self.in_lanes.fill(lanes is not None)
        self.finals = lanes if lanes is not None else serial     # who computes final errors
        # What moved, for the batch record: trials per hand-off; (groups before,
        # trials kept) per repacking of the lanes.
        self.handoffs, self.repacks = [], []
        self.top = None                 # see run()
        # trials that left the lanes for that
        self.overflowing = np.zeros(K, bool) if lanes is not None else None

    @property
    def block_size(self):
        return self.finals.block_size

    def _split(self, trials):
        mine = self.in_lanes[trials]
        return mine, trials[mine], trials[~mine]

    def run(self, trials, n, check, history, epoch):
        """``n`` epochs of ``trials`` wherever they train; one status per trial.
        ``self.top``: the largest training error the call wrote where the lanes
        alone trained them (the lanes' kernel keeps it), else None."""
        self.top = None
        if self.lanes is None:
            return self.serial.run(trials, n, check, history, epoch)
        if self.serial is None:
            status = self.lanes.run(trials, n, check, history, epoch, in_place=True)
            top = self.lanes.top
        else:
            mine, in_lanes, alone = self._split(trials)
            status = np.zeros(trials.size, np.int64)
            if in_lanes.size:
                status[mine] = self.lanes.run(in_lanes, n, check, history, epoch,
                                              in_place=False)
            if alone.size:
                status[~mine] = self.serial.run(alone, n, check, history, epoch)
            top = None
        if self.lanes.w_limit:          # (trials that came near overflow)
            for j in _status.beyond(status):
                status[j] = self._go_on_alone(trials, int(trials[j]), int(_status.after(status[j])),
                                              n, check, history, epoch)
                top = None                      # (it trained on in the single-network kernels)
        self.top = top
        return status

    def drive(self, i, next_strip):
        """Trial ``i`` trains by its rule's own loop, in the serial backend (rules
        that drive themselves have no lanes)."""
        self.top = None
        self.serial.drive(i, next_strip)

    def _go_on_alone(self, trials, i, k, n, check, history, epoch):
        """Trial ``i`` stopped in the lanes after ``k`` of the call's ``n`` epochs,
        its weights beyond their safe range (`LanesBackend.w_limit`): it trains
        the other n - k in the single-network kernels, its success checks at the
        same epochs (a first part up to the next check's epoch); its status for
        the whole call."""
        training = np.zeros(self.in_lanes.size, bool)
        training[trials] = True
        self._hand_off(np.array([i]), training, epoch + k)
        self.overflowing[i] = True
        every = 0 if check is None else check[0]
        first = -k % every if every else 0             # epochs to the next check
        m1 = min(first, n - k)
        done = k
        for m, each in ((m1, first), (n - k - m1, every)):
            if m <= 0:
                continue
            part = None if check is None else (each,) + tuple(check[1:])
            s = int(self.serial.run(np.array([i]), m, part, history, epoch + done)[0])
            if s:
                return _status.shifted(s, done)
            done += m
        return 0

    def _gather(self, trials, lanes_fn, serial_fn, *args):
        if self.serial is None:
            return lanes_fn(*args, trials)
        if self.lanes is None:
            return serial_fn(*args, trials)
        mine, in_lanes, alone = self._split(trials)
        first = lanes_fn(*args, in_lanes) if in_lanes.size else serial_fn(*args, alone)
        out = np.empty((trials.size,) + first.shape[1:], first.dtype)
        if in_lanes.size:
            out[mine] = first
        if alone.size:
            out[~mine] = serial_fn(*args, alone)
        return out

    def weights(self, trials):
        """The current weights of ``trials`` (an index array): (len(trials), C)."""
        return self._gather(trials, getattr(self.lanes, "weights", None),
                            getattr(self.serial, "weights", None))

    def sse(self, which, trials):
        """Summed squared errors of ``trials`` on the "val" or "test" set."""
        return self._gather(trials, getattr(self.lanes, "sse", None),
                            getattr(self.serial, "sse", None), which)

    def row(self, i):
        """Trial ``i``'s current weights (possibly a view: copy before it trains on)."""
        return (self.serial if self.lanes is None or not self.in_lanes[i] else self.lanes).row(i)

    def sse_one(self, which, i):
        """Summed squared error of trial ``i`` on the "val" or "test" set (a float)."""
        return (self.serial if self.lanes is None or not self.in_lanes[i]
                else self.lanes).sse_one(which, i)

    def train_outputs(self, i):
        """Trial ``i``'s outputs on the training set."""
        return (self.lanes if self.in_lanes[i] else self.serial).train_outputs(i)

    def stopped(self, trials):
        """``trials`` stopped: their lanes train no more."""
        if self.lanes is not None and trials.size:
            self.lanes.freeze(trials[self.in_lanes[trials]])

    def stop_reason(self, i):
        """The reason trial ``i``'s rule gave for stopping itself, or None."""
        return None if self.in_lanes[i] else self.serial.stop_reason(i)

    def counts(self, trials):
        """(forward, backward, update, flops) of ``trials`` by their rules' own
        counts (rules whose cost varies by epoch train in the serial backend)."""
        return self.serial.counts(trials)

    def hand_off(self, stopped, n):
        """Before ``n`` epochs: the trials of the lanes' last group leave for the
        single-network kernels if they fill too little of it (method "mixed";
        ``stopped``: a boolean mask of the trials that stopped). (A trial whose
        weights come near overflow leaves in `run`, at the epoch the kernel stops it:
        see `LanesBackend.w_limit`.) Returns the epochs to train: ``n``."""
        if self.lanes is None or self.handoff is None:
            return n
        training = ~stopped
        mine = np.flatnonzero(training & self.in_lanes)
        L = self.lanes.L                    # (trials per group of the network's dtype)
        rest = mine.size - L * max(0, -(-mine.size // L) - 1)
        if mine.size and lanes_fill(rest, L) < self.handoff:
            self._hand_off(mine[mine.size - rest:], training)
        return n

    def pack(self, stopped):
        """Finished trials leave the lanes once the others fit in fewer groups."""
        if self.lanes is None:
            return
        training = ~stopped
        n_left = int(np.count_nonzero(training & self.in_lanes))
        if n_left and n_left <= self.lanes.L * (self.lanes.groups - 1):
            self._repack(training & self.in_lanes)

    def _repack(self, keep):
        self.repacks.append((self.lanes.groups, int(np.count_nonzero(keep))))
        self.lanes.repack(keep)

    def _hand_off(self, out, training, epoch=None):
        if self.serial is None:
            self.serial = self.make_serial()
        for i, w, state, dw_prev in self.lanes.release(out, epoch):
            self.serial.add(i, self.serial.vector(i, w), state, dw_prev)
        self.handoffs.append(int(out.size))
        self.in_lanes[out] = False
        self.lanes.freeze(out)
        keep = training & self.in_lanes
        if keep.any():
            self._repack(keep)

    def final(self, which, rows, classification, current=False):
        """(SSE, classification error or None) of the weights ``rows`` (K, C) on
        the "train", "val" or "test" set: by the backend the batch started in,
        but by the single-network kernels for trials that might overflow.
        ``current``: ``rows`` are the weights each trial stopped at."""
        if self.lanes is not None:
            # (the lanes still hold them if no trial ever left)
            sse, cls = self.lanes.final(which, rows, classification,
                                        current and self.serial is None)
        else:
            sse, cls = self.serial.final(which, rows, classification)
        # (a trial that might overflow left the lanes for the serial backend)
        alone = (np.flatnonzero(self.overflowing) if self.lanes is not None
                 and self.serial is not None else ())
        if len(alone):
            sse[alone], c = self.serial.final(which, rows[alone], classification)
            if cls is not None:
                cls[alone] = c
        return sse, cls
