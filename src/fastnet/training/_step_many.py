"""A user's rule over every trial at once (`Algorithm.step_many`): a success study of
one's own algorithm at the speed of the shipped rules.

One trial at a time, a rule written in NumPy costs a Python call and a dozen small
NumPy calls per epoch and trial (about 26 µs an XOR epoch). Here every epoch is one
call of the rule for all trials still training: the lanes' kernels compute each
trial's summed squared error and gradient side by side (``trials_gradient``), the
rule updates the (k, C) matrix of their weights, and Hamey's success check runs on
one forward pass of all of them (``trials_outputs``), so Python is paid once per
epoch for the whole batch.

The strip loop drives it as any backend (`StepManyBackend`): strips, validation and
test sets, stopping criteria, callbacks, the history or none, divergence. A trial
whose weights come near the lanes' safe range (`safe_weight`: the lanes' fused
multiply-adds and the single-network kernels' separate products part there) goes on
with its gradient from the single-network kernels, its row still updated by the one
call of the rule.
"""
import numpy as np

from fastnet._engine import Evaluator, Workspace
from fastnet.measures import _winner_takes_all_error, hamey_correct
from fastnet.training._algorithms import NO_CHECK, has_step_many
from fastnet.training._user_rules import stepped
from fastnet.training._backends import Backend
from fastnet.training._lanes import (aligned, lanes_kernels, lanes_per_group, lanes_take,
                                     safe_weight, to_lanes)

__all__ = ["step_many_applies", "StepManyBackend", "take_rows", "put_rows"]


def step_many_applies(net, algorithm, sets, run):
    """Whether a batch of ``algorithm`` trains all its trials at once (`StepManyBackend`):
    the rule defines ``step_many``, the objective is the summed squared error (the
    lanes' kernels compute its gradient), no softmax outputs, a layer table the lanes
    take."""
    if not (has_step_many(algorithm) and run.squared_error
            and net.output_activation != "softmax"):
        return False
    return lanes_take(net, sets.X, sets.Y)     # (else a layer table the lanes do not take)


def take_rows(state, rows):
    """The rows ``rows`` of a rule's state over trials: an array, or a tuple (or list)
    of arrays, each with the trial on its first axis; None stays None."""
    if state is None:
        return None
    if isinstance(state, (tuple, list)):
        return type(state)(s[rows] for s in state)
    return state[rows]


def put_rows(state, rows, new):
    """``new`` (as `take_rows` gives) into the rows ``rows`` of ``state``, in place."""
    if state is None:
        return
    if isinstance(state, (tuple, list)):
        for s, n in zip(state, new):
            s[rows] = n
    else:
        state[rows] = new


def _checked_state(state, k, name, what):
    """A rule's state over ``k`` trials, checked: None, an array or a tuple (list) of
    arrays whose first axis has the k trials (so that fastnet can take rows out)."""
    parts = state if isinstance(state, (tuple, list)) else (state,)
    if state is None:
        return None
    for p in parts:
        if not isinstance(p, np.ndarray) or p.ndim == 0 or p.shape[0] != k:
            got = (f"an array of shape {p.shape}" if isinstance(p, np.ndarray)
                   else type(p).__name__)
            raise TypeError(f"{name}.{what} must return the state as an array or a tuple of "
                            f"arrays with the {k} trials on the first axis, got {got}.")
    return state


class StepManyBackend(Backend):
    """The K trials of a `step_many` rule: their weights as the rows of one (K, C) matrix,
    the rule's state with the trial on its first axis, trained epoch by epoch together.

    The success check (Hamey 1992) runs after each strip of epochs on the outputs of
    every trial still training, in one forward pass, as the shipped rules' kernels run it
    (``checks_success``: the strip loop hands it to `run`).
    """

    checks_success = True
    lanes = serial = handoff = None         # (the lanes' queue does not take it)

    def __init__(self, net, algorithm, sets, run, W):
        self.net, self.algorithm, self.sets, self.options = net, algorithm, sets, run
        K, C = W.shape
        self.W = np.array(W, dtype=net.dtype, order="C")
        self.C, self.L = C, lanes_per_group(net.dtype)
        self.k = lanes_kernels(net.dtype)
        self.work = aligned((self.k.work_size(net.n_units),), dtype=net.dtype)
        self.scale = run.scale(sets.X.shape[0], net.n_out)
        name = type(algorithm).__name__
        self.state = _checked_state(algorithm.init_state_many(self.W.copy()), K, name,
                                    "init_state_many")
        data = [a for a in (sets.X, sets.Y, sets.X_val, sets.Y_val, sets.X_test, sets.Y_test)
                if a is not None]
        self.w_safe = safe_weight(net.n_units, len(net.layer_table), max(a.shape[0] for a in data),
                                  max(float(np.abs(a).max(initial=0.0)) for a in data), net.dtype)
        self.alone = {}                 # trial -> its single-network Workspace (near overflow)
        # each trial's lowest training error so far (history=False keeps it alone)
        self.lowest = np.full(K, np.inf)
        binary = (sets.Y == 0.0) | (sets.Y == 1.0)
        self._binary = binary
        self._block = None
        self.handoffs, self.repacks = [], []

    # ------------------------------------------------------------------ training

    def _lanes(self, rows):
        """(k, C) rows -> the lanes' (G, C, L) blocks and G."""
        G = -(-rows.shape[0] // self.L)
        return to_lanes(rows, G, self.C), G

    def _alone_gradients(self, idx, W, sse, grad, won=None, r_c=0.4, analog=-1.0):
        """The SSE and gradient (and, given ``won``, Hamey's check) of the trials of
        ``idx`` (rows of ``W``) whose weights reached the lanes' safe range, from the
        single-network kernels (from then on)."""
        for j in np.flatnonzero(~(np.abs(W).max(axis=1, initial=0.0) < self.w_safe)).tolist():
            i = int(idx[j])
            if i not in self.alone:             # (NaN weights too)
                self.alone[i] = Workspace(self.net, self.sets.X, self.sets.Y,
                                          w=np.array(W[j]), objective=self.options.objective)
                self.handoffs.append(1)
        for j, i in enumerate(idx.tolist()):
            ws = self.alone.get(i)
            if ws is not None:
                ws.w[:] = W[j]
                sse[j] = ws.gradient()
                grad[j] = ws.g
                if won is not None:
                    won[j] = bool(hamey_correct(
                        np.asarray(ws.forward(), dtype=np.float64), self.sets.Y, r_c,
                        None if analog == NO_CHECK[2] else analog, self._binary).all())

    def run(self, trials, n, check, history, epoch):
        """``n`` epochs of ``trials``; scaled errors into ``history[i, epoch:epoch + n]``;
        one status each (k > 0: the error of epoch k was not finite; -k: the check held
        after epoch k).

        The trials still training are kept compact (their weights, state and lowest
        error in arrays of their own, written back when some stop and at the call's
        end); the rule is called once an epoch for all of them. Hamey's check of an
        epoch's update rides on the next epoch's forward pass, in the kernel, as the
        lanes' rules check (the call's last update: a pass of its own). (Calling the
        rule per block of 1024 trials, for the cache, measured no faster.)"""
        status = np.zeros(trials.size, np.int64)
        every = 0 if check is None else check[0]
        r_c, analog = (check[1], check[2]) if every else (NO_CHECK[1], NO_CHECK[2])
        rule, net, sets, kern = self.algorithm, self.net, self.sets, self.k
        name = type(rule).__name__
        layers, n_in, X, Y, C, L = net.layer_table, net.n_in, sets.X, sets.Y, self.C, self.L
        live = np.arange(trials.size)               # (positions in ``trials``)
        idx = trials
        W, state, low = self.W[idx], take_rows(self.state, idx), self.lowest[idx]
        G0 = -(-idx.size // L)                          # (groups for all: buffers made once)
        w = aligned((G0, C, L), dtype=net.dtype)
        g = aligned((G0, C, L), zero=False, dtype=net.dtype)
        sse_b, ok_b = np.empty(G0 * L), np.empty(G0, np.int64)
        lane = np.arange(L)
        top = -np.inf

        def gradient_pass(checked):
            """The SSE and gradient (copies) of the trials still training and, if
            ``checked``, which are right (Hamey) at the weights given."""
            k = idx.size
            G = -(-k // L)
            to_lanes(W, G, C, out=w[:G])
            kern.trials_gradient(layers, n_in, X, Y, w[:G], g[:G], self.work, sse_b[:G * L],
                                 ok_b[:G] if checked else None, r_c, analog)
            grad = np.array(g[:G].transpose(0, 2, 1).reshape(G * L, C)[:k])
            e = sse_b[:k].copy()
            won = ((ok_b[:G, None] >> lane) & 1).reshape(-1)[:k].astype(bool) if checked else None
            if self.alone or not (W.max(initial=0.0) < self.w_safe
                                  and -W.min(initial=0.0) < self.w_safe):
                self._alone_gradients(idx, W, e, grad, won, r_c, analog)
            return e, grad, won

        for j in range(n + 1):
            # (the check of the last epoch's update: on this pass; after the call's last
            # epoch, on a pass of its own)
            due = bool(every) and j > 0 and (epoch + j) % every == 0
            if j == n:
                if due:
                    status[live[gradient_pass(True)[2]]] = -j
                break
            sse, grad, won = gradient_pass(due)
            gone = ~np.isfinite(sse)
            if won is not None and won.any():
                status[live[won]] = -j                  # (right after epoch j)
                gone &= ~won
            status[live[gone]] = j + 1                  # (not finite in epoch j + 1)
            if won is not None:
                gone |= won
            go = ~gone
            if go.any():
                rows = slice(None) if go.all() else np.flatnonzero(go)
                e = sse if go.all() else sse[go]
                new, new_state = stepped(rule.step_many(W[rows], grad[rows], e,
                                                        take_rows(state, rows)),
                                         rule, (e.size, C), "step_many")
                W[rows] = new
                put_rows(state, rows, _checked_state(new_state, e.size, name, "step_many"))
            scaled = sse * self.scale
            history[idx, epoch + j] = scaled
            trained = ~gone | (status[live] > 0)        # (a trial right already: no epoch j + 1)
            np.fmin(low, np.where(trained, scaled, np.inf), out=low)
            top = max(top, float(np.fmax.reduce(scaled[trained], initial=-np.inf)))
            if gone.any():
                W, state, low, idx, live = self._leave(gone, W, state, low, idx, live)
                if not idx.size:
                    break
        self._leave(np.ones(idx.size, bool), W, state, low, idx, live)
        self.top = top if np.isfinite(top) else None
        return status

    def _leave(self, gone, W, state, low, idx, live):
        """The compact rows of the trials ``gone`` written back; the others kept compact."""
        self.W[idx[gone]] = W[gone]
        put_rows(self.state, idx[gone], take_rows(state, gone))
        self.lowest[idx[gone]] = low[gone]
        stay = ~gone
        return W[stay], take_rows(state, stay), low[stay], idx[stay], live[stay]

    # ---------------------------------------------------------- what the loop reads

    def outputs(self, X, rows):
        """The outputs (k, n, n_out) of the weights ``rows`` (k, C) on ``X``, in the lanes."""
        w, G = self._lanes(np.ascontiguousarray(rows, dtype=self.net.dtype))
        out = aligned((G, X.shape[0], self.net.n_out, self.L), dtype=self.net.dtype)
        self.k.trials_outputs(self.net.layer_table, self.net.n_in, X, w, self.work, out)
        out = out.transpose(0, 3, 1, 2).reshape(G * self.L, X.shape[0], self.net.n_out)
        return out[:rows.shape[0]].astype(np.float64, copy=False)

    def _sse(self, X, Y, rows):
        w, G = self._lanes(np.ascontiguousarray(rows, dtype=self.net.dtype))
        sse = np.empty(G * self.L)
        self.k.trials_sse(self.net.layer_table, self.net.n_in, X, Y, w, self.work, sse)
        return sse[:rows.shape[0]]

    def _set(self, which):
        s = self.sets
        return {"train": (s.X, s.Y), "val": (s.X_val, s.Y_val), "test": (s.X_test, s.Y_test)}[which]

    def weights(self, trials):
        return self.W[trials]

    def row(self, i):
        return self.W[i]

    def sse(self, which, trials):
        sse = self._sse(*self._set(which), self.W[trials])
        for j, i in enumerate(np.asarray(trials).tolist()):
            if i in self.alone:
                sse[j] = self._alone_sse(which, self.W[i])
        return sse

    def _alone_sse(self, which, w):
        X, Y = self._set(which)
        return Evaluator(self.net, X, Y, self.options.blas_min, w=np.array(w)).sse()


    def sse_one(self, which, i):
        return float(self.sse(which, np.array([i]))[0])

    def train_outputs(self, i):
        from fastnet.network import outputs_at

        return outputs_at(self.net, self.sets.X, np.ascontiguousarray(self.W[i]))

    def stopped(self, trials):
        """``trials`` train no more (the rows stay: `run` is given the others)."""

    def stop_reason(self, i):
        return None

    @property
    def block_size(self):
        """Patterns per cache block of the single-network kernels (the set-up record
        gives what a run alone would use)."""
        if self._block is None:
            s, run = self.sets, self.options
            self._block = Workspace(self.net, s.X[:1], s.Y[:1],
                                    self.algorithm.block_size(run.block_size),
                                    run.blas_min).block_size
        return self._block

    def final(self, which, rows, classification, current=False):
        """(SSE, classification error or None) of ``rows`` (K, C) on ``which`` set: the
        lanes for all, the single-network kernels for rows near overflow."""
        X, Y = self._set(which)
        rows = np.ascontiguousarray(rows, dtype=self.net.dtype)
        sse = self._sse(X, Y, rows)
        near = np.flatnonzero(~(np.abs(rows).max(axis=1, initial=0.0) < self.w_safe))
        for k in near.tolist():
            sse[k] = Evaluator(self.net, X, Y, self.options.blas_min, w=rows[k].copy()).sse()
        cls = None
        if classification:
            out = self.outputs(X, rows)
            cls = np.array([_winner_takes_all_error(out[k], Y) for k in range(rows.shape[0])])
            for k in near.tolist():
                ev = Evaluator(self.net, X, Y, self.options.blas_min, w=rows[k].copy())
                cls[k] = _winner_takes_all_error(ev.outputs(), Y)
        return sse, cls
