"""The single-network backend: trials one after another, each in its own workspace.

Each trial trains in the single-network kernels (``fastnet._engine.Workspace``),
as :func:`fastnet.train_rprop` trains one network; K = 1 is `train_rprop`. The
trials share the activation buffers of the training, validation and test sets
(every pass rewrites them whole).
"""
import numpy as np

from fastnet._engine import Evaluator, Workspace, activations
from fastnet.measures import _winner_takes_all_error
from fastnet.training._backends import Backend
from fastnet.training._status import epochs_written

__all__ = ["Serial"]


def _copy(i, w):
    """Trial ``i``'s weight vector: a copy of ``w``, of its dtype (the network's; `Serial`'s
    default ``vector``)."""
    return np.array(w)


class Serial(Backend):
    """Trials in the single-network kernels, each with its algorithm state.

    A `fastnet.training._backends.Backend` of its own: where every trial trains
    here (no lanes, no hand-off) the strip loop drives it directly, and the
    single run of `train_rprop` goes through no layer in between. It keeps no
    largest error for the growth check (``top`` None), moves no trials
    (``hand_off`` and ``pack`` do nothing) and needs no aligned history.

    Parameters
    ----------
    net : MLP
        The topology (its own weights are not read).
    algorithm : Algorithm
    sets : Sets
    run : RunOptions
    vector : callable, optional
        ``vector(i, w)``: the weight vector trial i trains in, holding ``w``
        (default: a copy of ``w``); the list form gives each network's own.
    """

    def __init__(self, net, algorithm, sets, run, vector=None):
        self.net, self.algorithm, self.sets = net, algorithm, sets
        self.vector = vector if vector is not None else _copy
        self.block = algorithm.block_size(run.block_size)
        self.blas_min = run.blas_min
        self.objective = run.objective
        self.scale = run.scale(sets.X.shape[0], net.n_out)
        self.ws, self.state, self.val, self.test = {}, {}, {}, {}
        self._A, self._block = None, None          # (the workspaces' block_rows(net))
        self._A_val = activations(net, sets.X_val) if sets.X_val is not None else None
        self._A_test = activations(net, sets.X_test) if sets.X_test is not None else None

    @property
    def block_size(self):
        """Patterns per cache block of the training kernels (for the set-up record)."""
        ws = next(iter(self.ws.values()), None)
        return ws.block_size if ws is not None else Workspace(
            self.net, self.sets.X[:1], self.sets.Y[:1], self.block, self.blas_min).block_size

    def add(self, i, w, state, dw_prev=None):
        """Trial ``i`` trains in the weight vector ``w`` (in place) from ``state``
        (and the previous change ``dw_prev``, if it comes from another backend)."""
        s = self.sets
        ws = Workspace(self.net, s.X, s.Y, self.block, self.blas_min, w=w, A=self._A,
                       objective=self.objective)
        self._A, self._block = ws.A, ws.check_block
        if dw_prev is not None:
            ws.dw_prev[:] = dw_prev
        self.ws[i], self.state[i] = ws, state
        if self._A_val is not None:
            self.val[i] = Evaluator(self.net, None, s.Y_val, self.blas_min, A=self._A_val, w=w,
                                    block=self._block)
        if self._A_test is not None:
            self.test[i] = Evaluator(self.net, None, s.Y_test, self.blas_min, A=self._A_test,
                                     w=w, block=self._block)

    def run(self, trials, n, check, history, epoch):
        """``n`` epochs of each of ``trials``; their training errors (the objective,
        scaled as the SSE to squared error percentages) into ``history[i, epoch:epoch + n]``; one
        kernel status per trial."""
        status = np.empty(trials.shape[0], np.int64)
        for j, i in enumerate(trials.tolist()):
            sse = history[i, epoch:epoch + n]
            status[j] = s = self.algorithm.epochs(self.ws[i], self.state[i], sse, check)
            k = epochs_written(s, n)
            if k < n:
                sse[:k] *= self.scale
            else:
                sse *= self.scale
        return status

    def drive(self, i, next_strip):
        """Trial ``i`` trains by its rule's own loop (`Algorithm.drive`), strip by
        strip as the loop's ``next_strip`` gives them, each strip's errors scaled
        as :meth:`run` scales them before the loop reads them."""
        scale, out = self.scale, None

        def scaled_strip(status=None):
            nonlocal out
            if out is not None:
                out[:epochs_written(status, out.shape[0])] *= scale
            out = next_strip(status)
            return out
        self.algorithm.drive(self.ws[i], self.state[i], scaled_strip)

    def stopped(self, trials):
        """``trials`` train no more (their states hold nothing to release)."""

    def stop_reason(self, i):
        """The reason trial ``i``'s rule gave for stopping itself, or None."""
        return self.algorithm.stop_reason(self.state[i])

    def counts(self, trials):
        """(forward, backward, update, flops) of ``trials`` by their rules' counts."""
        N, C = self.sets.X.shape[0], self.net.n_connections
        return np.array([self.algorithm.traversals(self.state[i], N, C)
                         for i in np.asarray(trials).tolist()], dtype=np.int64).reshape(-1, 4)

    def weights(self, trials):
        """The current weights of ``trials``: (len(trials), n_connections), a copy."""
        ws = self.ws
        if len(trials) == 1:
            return ws[int(trials[0])].w.reshape(1, -1).copy()
        return np.array([ws[i].w for i in np.asarray(trials).tolist()]).reshape(
            len(trials), self.net.n_connections)

    def sse(self, which, trials):
        """Summed squared errors of ``trials`` on the validation or test set."""
        evaluators = self.val if which == "val" else self.test
        return np.array([evaluators[i].sse() for i in trials.tolist()], dtype=float)

    def row(self, i):
        """Trial ``i``'s weight vector (a view)."""
        return self.ws[i].w

    def sse_one(self, which, i):
        """Summed squared error of trial ``i`` on the validation or test set."""
        return (self.val if which == "val" else self.test)[i].sse()

    def train_outputs(self, i):
        """Trial ``i``'s outputs on the training set (a forward pass, a view)."""
        return self.ws[i].forward()

    def final(self, which, rows, classification, current=False):
        """(SSE, classification error or None) of the weights ``rows`` (K, C) on
        the training, validation or test set (trial k at row k; ``current``, as
        for `Trials.final`, changes nothing here)."""
        s = self.sets
        if which == "train":
            if self._A is None:
                self._A = activations(self.net, s.X)
            Y, A = s.Y, self._A
        elif which == "val":
            Y, A = s.Y_val, self._A_val
        else:
            Y, A = s.Y_test, self._A_test
        K = rows.shape[0]
        if rows.dtype != self.net.dtype:
            rows = rows.astype(self.net.dtype)
        sse, cls = np.empty(K), np.empty(K) if classification else None
        for k in range(K):
            ev = Evaluator(self.net, None, Y, self.blas_min, A=A, w=rows[k], block=self._block)
            sse[k] = ev.sse()
            if classification:
                cls[k] = _winner_takes_all_error(ev.outputs(), Y)
        return sse, cls
