"""L-BFGS through SciPy: ``scipy.optimize.minimize(method="L-BFGS-B")`` on
fastnet's error and gradient, one SciPy iteration per epoch.

SciPy's minimiser runs to its end in one call, while the strip loop trains a
few epochs at a time (and may stop at any strip end). So each trial's
minimiser runs in a thread of its own that the loop drives: the thread pauses
at the first evaluation of an epoch the loop has not asked for yet, and the
loop's call returns. The two never run at once (each waits for the other), so
the thread uses the trial's workspace without locks. When the trial stops, the
paused evaluation raises and the thread ends (also if the state is dropped
after an error).
"""
from __future__ import annotations

import queue
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from fastnet._validation import check_float, check_int
from fastnet.training._algorithms import Algorithm

__all__ = ["MAX_MAXCOR", "LBFGS"]

# SciPy's own limits, set beyond reach: the loop's max_epochs and stopping rule decide.
_NO_LIMIT = 2 ** 31 - 1


class _Closed(Exception):
    """The trial stopped while its minimiser was paused."""


class _NonFinite(Exception):
    """An evaluation gave a non-finite error."""


class _Worker:
    """The minimiser's side: the objective, the callback, and the epochs of the
    current call (``out`` the loop's ``sse_out``, ``j`` the epochs done in it)."""

    def __init__(self, ws, counts, inbox, outbox):
        self.ws, self.counts, self.inbox, self.outbox = ws, counts, inbox, outbox
        self.out, self.j, self.f_start, self.pending = None, 0, None, 0

    def fun(self, x):
        if self.j == self.out.shape[0]:       # the next epoch belongs to the next call
            self.outbox.put(("ok",))
            out = self.inbox.get()
            if out is None:
                raise _Closed
            self.out, self.j = out, 0
        ws = self.ws
        g = np.empty_like(ws.g)
        f = ws.gradient(np.array(x, dtype=float), g)
        c, NC = self.counts, ws.A.shape[0] * ws.w.shape[0]
        c[0] += NC
        c[1] += NC
        self.pending += 1
        if self.f_start is None:            # (the start: no weight vector formed)
            self.f_start = f
        else:
            c[2] += ws.w.shape[0]
        if not np.isfinite(f):
            self.out[self.j] = f
            raise _NonFinite
        return f, g

    def callback(self, intermediate_result):
        # Iteration done: its epoch's E_tr is the error it started from.
        self.out[self.j] = self.f_start
        self.f_start = float(intermediate_result.fun)
        self.ws.w[:] = intermediate_result.x
        self.j += 1
        self.pending = 0

    def run(self, options):
        from scipy.optimize import minimize

        try:
            self.out = self.inbox.get()
            if self.out is None:
                return
            res = minimize(self.fun, self.ws.w.copy(), jac=True, method="L-BFGS-B",
                           callback=self.callback, options=options)
        except _Closed:
            return
        except _NonFinite:
            self.outbox.put(("nonfinite", self.j + 1))
            return
        except BaseException as exc:        # handed to the loop's thread, raised there
            self.outbox.put(("error", exc))
            return
        if self.pending:                    # an iteration that ended without a new point
            self.out[self.j] = self.f_start
            self.j += 1
            self.ws.w[:] = res.x
        self.outbox.put(("stopped", self.j, "converged" if res.success else "abnormal",
                         str(res.message)))


class _LBFGSState:
    __slots__ = ("counts", "inbox", "outbox", "thread", "stop_reason", "message", "_finalizer",
                 "__weakref__")

    def __init__(self):
        self.counts, self.thread, self.stop_reason, self.message = [0, 0, 0, 0], None, None, None


def _close(inbox, thread):
    # (the state may be collected in the worker itself, which must not join itself)
    if thread is not None and thread.is_alive():
        inbox.put(None)
        if thread is not threading.current_thread():
            thread.join()


#: Most correction pairs of L-BFGS (`LBFGS.maxcor`): SciPy's workspace grows as
#: maxcor * (2 C + 11 maxcor) floats (1000 pairs: 88 MB besides 2000 C floats).
MAX_MAXCOR = 1000


@dataclass(frozen=True)
class LBFGS(Algorithm):
    """Limited-memory BFGS, SciPy's L-BFGS-B without bounds, one iteration per epoch.

    fastnet gives ``scipy.optimize.minimize(method="L-BFGS-B")`` the summed
    squared error and its gradient over the whole training set (compiled
    kernels) and trains one SciPy iteration per epoch; the strip loop's
    stopping rule, validation and callback stop it from SciPy's callback side.
    The parameters are SciPy's options of the same names, with SciPy's defaults.

    Parameters
    ----------
    maxcor : int, 1 <= maxcor <= MAX_MAXCOR (1000), default 10
        Correction pairs kept (the "m" of L-BFGS; Liu & Nocedal 1989 use 3 to 7).
        SciPy allocates (2 C + 11 m) m + 5 C + 8 m floats for them at the start, so
        the bound keeps a mistyped value from asking for petabytes.
    ftol : float >= 0, default 2.220446049250313e-09
        SciPy stops when ``(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) <= ftol``.
    gtol : float >= 0, default 1e-05
        SciPy stops when the largest gradient component is <= gtol.
    maxls : int >= 1, default 20
        Evaluations per line search at most.

    Raises
    ------
    ValueError, TypeError
        For a parameter out of its range, naming it.

    Notes
    -----
    ``train_error[t]`` is E at the point iteration t starts from. Every
    evaluation SciPy asks for (its line searches included) costs N·C forward,
    N·C backward and, at a new point (all but the start), C update traversals,
    all counted; SciPy's own vector work
    (O(maxcor·C) an iteration) is not. When SciPy's convergence tests end the
    run (``ftol``, ``gtol``), training stops with reason ``"converged"``; when
    its line search fails to lower the error, with reason ``"abnormal"`` (the
    weights stay at the last iterate; that last epoch counts, with its
    evaluations). SciPy's iteration and evaluation limits are never reached.

    References
    ----------
    Liu, D. C. & Nocedal, J. (1989). On the limited memory BFGS method for large
    scale optimization. Mathematical Programming 45, 503-528.
    Byrd, R. H., Lu, P., Nocedal, J. & Zhu, C. (1995). A limited memory algorithm
    for bound constrained optimization. SIAM J. Sci. Comput. 16(5), 1190-1208.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, train
    >>> from fastnet.algorithms import LBFGS
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> r = train(MLP(2, (2,), 1, output_activation="logistic"), X, Y, algorithm=LBFGS(),
    ...           max_epochs=50, init_scale=0.5, seed=0)
    >>> bool(r.train_error[-1] < r.train_error[0])
    True
    """

    maxcor: int = 10
    ftol: float = 2.220446049250313e-09
    gtol: float = 1e-05
    maxls: int = 20

    objectives = True       # (it minimises whatever the workspace's gradient is of)

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("maxcor", check_int(self.maxcor, "maxcor", minimum=1, maximum=MAX_MAXCOR))
        put("ftol", check_float(self.ftol, "ftol", low=0.0))
        put("gtol", check_float(self.gtol, "gtol", low=0.0))
        put("maxls", check_int(self.maxls, "maxls", minimum=1))

    def record(self):
        return ("L-BFGS (scipy.optimize L-BFGS-B)",
                {"maxcor": self.maxcor, "ftol": self.ftol, "gtol": self.gtol,
                 "maxls": self.maxls})

    def start(self, n_connections, rng, max_epochs):
        import scipy.optimize  # noqa: F401  (imported before the clock starts)

        return _LBFGSState()

    def epochs(self, ws, state, sse_out, check):
        if state.thread is None:
            state.inbox, state.outbox = queue.Queue(), queue.Queue()
            worker = _Worker(ws, state.counts, state.inbox, state.outbox)
            options = dict(maxcor=self.maxcor, ftol=self.ftol, gtol=self.gtol,
                           maxls=self.maxls, maxiter=_NO_LIMIT, maxfun=_NO_LIMIT)
            state.thread = threading.Thread(target=worker.run, args=(options,), daemon=True,
                                            name="fastnet-lbfgs")
            state._finalizer = weakref.finalize(state, _close, state.inbox, state.thread)
            state.thread.start()
        elif not state.thread.is_alive():
            raise RuntimeError("LBFGS: this trial's minimiser has ended.")
        state.inbox.put(sse_out)
        reply = state.outbox.get()
        if reply[0] == "ok":
            return 0
        state.thread.join()
        if reply[0] == "nonfinite":
            return reply[1]
        if reply[0] == "error":
            raise reply[1]
        state.stop_reason, state.message = reply[2], reply[3]
        return -reply[1]

    def close(self, state):
        if state.thread is not None:
            state._finalizer()

    def traversals(self, state, n_train, n_connections):
        return tuple(state.counts)
