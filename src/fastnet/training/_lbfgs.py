"""L-BFGS through SciPy: ``scipy.optimize.minimize(method="L-BFGS-B")`` on
fastnet's error and gradient, one SciPy iteration per epoch.

SciPy's minimiser runs to its end in one call, in the caller's thread, and the
strip loop's work happens inside it (`Algorithm.drive`): SciPy's callback
records each iteration's epoch, and the first evaluation SciPy asks for beyond
the strip hands the strip to the loop (``next_strip``), which measures, tests
the criteria, calls the user's callback, and gives the next strip or stops the
trial (the evaluation then raises, ending the minimiser). The strip ends there,
not in the callback, because SciPy tests its convergence only after the
callback: the evaluation is the sign that the iteration was not its last.
Nothing runs once the call returns or raises, whatever stopped it.
"""
from __future__ import annotations


import numpy as np

from fastnet._docstrings import fill, xor_example
from fastnet.training._algorithms import Algorithm
from fastnet.training._registry import Param, rule

__all__ = ["MAX_MAXCOR", "LBFGS"]

# SciPy's own limits, set beyond reach: the loop's max_epochs and stopping rule decide.
_NO_LIMIT = 2 ** 31 - 1


class _Stopped(Exception):
    """The loop stopped the trial at a strip end."""


class _NonFinite(Exception):
    """An evaluation gave a non-finite error."""


class _Minimising:
    """One trial's run of the minimiser: the objective, the callback, and the
    strip being trained (``out`` its buffer of errors, ``j`` its epochs done)."""

    def __init__(self, ws, counts, next_strip):
        self.ws, self.counts, self.next_strip = ws, counts, next_strip
        self.out, self.j, self.f_start, self.pending = next_strip(), 0, None, 0

    def fun(self, x):
        if self.j == self.out.shape[0]:       # SciPy goes on: the strip has ended
            self.out = self.next_strip(0)
            if self.out is None:
                raise _Stopped
            self.j = 0
        ws = self.ws
        g = np.empty_like(ws.g)             # (the network's dtype; SciPy works in float64)
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
        return f, g.astype(np.float64, copy=False)

    def callback(self, intermediate_result):
        # Iteration done: its epoch's E_tr is the error it started from.
        self.out[self.j] = self.f_start
        self.f_start = float(intermediate_result.fun)
        self.ws.w[:] = intermediate_result.x
        self.j += 1
        self.pending = 0

    def ended(self, res):
        """The status of SciPy's own end (``res``): -k, its last epoch the k-th of the strip."""
        if self.pending:                    # an iteration that ended without a new point
            self.out[self.j] = self.f_start
            self.j += 1
            self.ws.w[:] = res.x
        return -self.j


class _LBFGSState:
    __slots__ = ("counts", "stop_reason", "message")

    def __init__(self):
        self.counts, self.stop_reason, self.message = [0, 0, 0, 0], None, None


#: Most correction pairs of L-BFGS (`LBFGS.maxcor`): SciPy's workspace grows as
#: maxcor * (2 C + 11 maxcor) floats (1000 pairs: 88 MB besides 2000 C floats).
MAX_MAXCOR = 1000


@rule("lbfgs", params=(Param("maxcor", 10, kind=int, low=1, high=MAX_MAXCOR),
                      Param("ftol", 2.220446049250313e-09, low=0.0),
                      Param("gtol", 1e-05, low=0.0),
                      Param("maxls", 20, kind=int, low=1)))
@fill(example=xor_example("LBFGS", 50))
class LBFGS(Algorithm):
    """Limited-memory BFGS, SciPy's L-BFGS-B without bounds, one iteration per epoch.

    fastnet gives ``scipy.optimize.minimize(method="L-BFGS-B")`` the summed
    squared error and its gradient over the whole training set (compiled
    kernels) and trains one SciPy iteration per epoch; SciPy runs in the
    caller's thread, and the strip loop's stopping rule, validation and callback
    stop it from inside SciPy's run. Trials of :func:`fastnet.train_many` train
    one after another.
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
    evaluations). A stop at a strip end is measured there like any strip end
    (validation and test errors of the final weights, counted in
    ``min_val_error``, ``gl_end`` and the relevant epoch). SciPy's iteration and
    evaluation limits are never reached.

    In a float32 network SciPy still works in float64 (its iterates, the
    correction pairs, the line search); each evaluation rounds SciPy's point
    to float32 and runs the pass in float32, and the weights take each
    iterate rounded. The error is then known to about 1e-7 relative, so
    ``ftol`` below that ends the run as a failed line search (``"abnormal"``)
    where float64 would go on.

    References
    ----------
    Liu, D. C. & Nocedal, J. (1989). On the limited memory BFGS method for large
    scale optimization. Mathematical Programming 45, 503-528.
    Byrd, R. H., Lu, P., Nocedal, J. & Zhu, C. (1995). A limited memory algorithm
    for bound constrained optimization. SIAM J. Sci. Comput. 16(5), 1190-1208.

    {{example}}
    """

    objectives = True       # (it minimises whatever the workspace's gradient is of)

    def record(self):
        return ("L-BFGS (scipy.optimize L-BFGS-B)",
                {"maxcor": self.maxcor, "ftol": self.ftol, "gtol": self.gtol,
                 "maxls": self.maxls})

    def start(self, n_connections, rng, max_epochs):
        import scipy.optimize  # noqa: F401  (imported before the clock starts)

        return _LBFGSState()

    def drive(self, ws, state, next_strip):
        from scipy.optimize import minimize

        run = _Minimising(ws, state.counts, next_strip)
        options = dict(maxcor=self.maxcor, ftol=self.ftol, gtol=self.gtol, maxls=self.maxls,
                       maxiter=_NO_LIMIT, maxfun=_NO_LIMIT)
        try:
            res = minimize(run.fun, ws.w.copy(), jac=True, method="L-BFGS-B",
                           callback=run.callback, options=options)
        except _Stopped:
            return
        except _NonFinite:
            status = run.j + 1
        else:
            status = run.ended(res)
            state.stop_reason = "converged" if res.success else "abnormal"
            state.message = str(res.message)
        next_strip(status)                  # (the loop: stops the trial, or raises)

    def traversals(self, state, n_train, n_connections):
        return tuple(state.counts)
