"""Whole-batch second-order rules in NumPy over the kernels' error, gradient and
normal equations: scaled conjugate gradient (Møller 1993) and Levenberg-Marquardt
(Hagan & Menhaj 1994). L-BFGS is in :mod:`fastnet.training._lbfgs`.

Each epoch is one iteration of the rule. The errors and gradients are computed
over the whole training set in the compiled kernels (no Python per example);
the rule's vector arithmetic is NumPy on vectors of n_connections numbers.
``train_error[t]`` is E at the weights iteration t starts from, as for every rule.
"""
from __future__ import annotations


import numpy as np

from fastnet._engine import NormalEquations
from fastnet._docstrings import fill, xor_example
from fastnet._validation import check_choice
from fastnet.training import _status
from fastnet.training._algorithms import Algorithm
from fastnet.training._registry import Param, rule

__all__ = ["FullBatchRule", "SCG", "LevenbergMarquardt", "LM_MAX_MEMORY", "normal_equation_flops"]

#: Default limit, in bytes, on the two C x C matrices of Levenberg-Marquardt
#: (J^T J and its Cholesky factor, 16 C^2 bytes): 1 GiB, C up to 8192 connections.
LM_MAX_MEMORY = 1 << 30


class _Counts:
    """Traversals a trial ran: forward, backward, update, flops (Prechelt 1994's units)."""

    __slots__ = ("counts", "N", "C")

    def __init__(self, ws):
        self.counts = [0, 0, 0, 0]
        self.N, self.C = ws.A.shape[0], ws.w.shape[0]

    def gradient(self, new_point):
        """One gradient pass (forward and backward), at a new weight vector or not."""
        c, NC = self.counts, self.N * self.C
        c[0] += NC
        c[1] += NC
        c[2] += self.C if new_point else 0

    def error(self):
        """One error evaluation (a forward pass) at a new weight vector."""
        self.counts[0] += self.N * self.C
        self.counts[2] += self.C


class FullBatchRule(Algorithm):
    """The one driver of rules that need the whole gradient (or the Jacobian) at
    an epoch's weights and whose cost varies by epoch (SCG, Levenberg-Marquardt).

    A trial's state has ``count`` (None until its first epoch) and
    ``stop_reason``. At the first epoch the driver counts from zero
    (`_Counts`: what the rule runs, in Prechelt 1994's units) and lets the rule
    make its buffers (:meth:`begin`); every call then trains a strip
    (:meth:`strip`), whose status is the kernels' (``training._status``: -k with
    ``state.stop_reason`` set when the rule stops itself).
    """

    def begin(self, ws, state):
        """Make the trial's buffers at its first epoch (``state.count`` is set)."""

    def strip(self, ws, state, sse_out):
        """Train ``len(sse_out)`` epochs; the errors into ``sse_out``; the status."""
        raise NotImplementedError

    def epochs(self, ws, state, sse_out, check):
        if state.count is None:
            state.count = _Counts(ws)
            self.begin(ws, state)
        return self.strip(ws, state, sse_out)

    def traversals(self, state, n_train, n_connections):
        return tuple(state.count.counts) if state.count is not None else (0, 0, 0, 0)


_INF = float("inf")
_FLOAT64 = np.dtype(np.float64)


def _wide(a):
    """``a`` in float64: SCG's vectors and scalars are float64 whatever the network's
    dtype (its passes run in the network's; a float32 gradient is widened exactly)."""
    return a if a.dtype == _FLOAT64 else a.astype(_FLOAT64)


def _dot(a, b):
    """a . b summed term by term in index order, each product rounded alone (no fused
    multiply-add): the order of SCG's lanes kernel, and the same on every CPU. ``a @ b``
    goes to BLAS, whose dot kernel (and so the last bits) is chosen per CPU: on one
    Intel AVX-512 core one trial in 40 took an iteration more alone than in the lanes."""
    return float(np.add.accumulate(np.multiply(a, b))[-1])


class _SCGState:
    __slots__ = ("r", "p", "s", "delta", "lam", "lam_bar", "success", "k", "E",
                 "count", "stop_reason")

    def __init__(self):
        self.count, self.stop_reason = None, None


@rule("scg", params=(Param("sigma", 1e-4, low=0.0, low_open=True),
                     Param("lambda1", 1e-6, low=0.0, low_open=True)))
@fill(example=xor_example("SCG", 100))
class SCG(FullBatchRule):
    """Scaled conjugate gradient (Møller 1993), one iteration per epoch.

    Conjugate directions with a Levenberg-Marquardt-like scale λ instead of a
    line search: the curvature along the direction p comes from a difference of
    two gradients, and λ is raised whenever the quadratic model predicts the
    error's reduction badly (Møller's comparison parameter Δ < 1/4) or the
    curvature is not positive. The direction restarts as the steepest descent
    every C iterations (C the number of weights).

    Parameters
    ----------
    sigma : float > 0, default 1e-4
        σ: the probe's step σ/‖p‖ for the second-order information.
    lambda1 : float > 0, default 1e-6
        λ₁: the initial scale.

    Raises
    ------
    ValueError, TypeError
        For a parameter that is not a positive number, naming it.

    Notes
    -----
    Iteration k (E the summed squared error, g its gradient; r = p = -g(w₁),
    λ = λ₁, λ̄ = 0 and "success" at the start):

    1. if success: σ_k = σ/‖p‖, s = (g(w + σ_k p) - g(w))/σ_k, δ = p·s;
    2. s += (λ - λ̄)p, δ += (λ - λ̄)‖p‖²;
    3. if δ ≤ 0: s += (λ - 2δ/‖p‖²)p, λ̄ = 2(λ - δ/‖p‖²), δ = -δ + λ‖p‖², λ = λ̄;
    4. μ = p·r, α = μ/δ;
    5. Δ = 2δ(E(w) - E(w + αp))/μ²;
    6. if Δ ≥ 0: w += αp, r' = -g(w), λ̄ = 0, success; p = r' every C-th
       iteration, else r' + ((‖r'‖² - r'·r)/μ)p; r = r'; if Δ ≥ 3/4, λ = λ/4.
       Otherwise λ̄ = λ, no success;
    7. if Δ < 1/4: λ += δ(1 - Δ)/‖p‖² (δ and p of step 3).

    Training stops with reason ``"converged"`` once r = 0 (a zero gradient),
    or once λ overflows: at a minimum to working precision the error
    differences of step 5 are rounding noise, steps fail and λ grows until it
    is no longer a finite number (the weights stay at the last step taken).
    It stops the same way when ‖p‖², μ or μ² underflow to zero (no reduction
    left to working precision), and with reason ``"abnormal"`` when ‖p‖², δ,
    μ, α or μ² overflow or δ is not positive after step 3 (gradients or
    curvatures beyond the floating-point range, such as on unscaled data of
    magnitude 1e150): the weights stay at the last step taken, every error
    finite. A stop at a strip end is measured there like any strip end.
    An iteration costs one gradient at a probe point after a success, an
    error evaluation at w + αp and, if the step is taken, the gradient there;
    ``traversals`` counts each (see :class:`fastnet.Traversals`).

    In a float32 network the passes (errors and gradients) run in float32 and
    the iteration's vectors (r, p, s) and scalars in float64: each point
    w + σ_k p and w + αp is rounded to float32 where it is evaluated, and a
    step taken leaves the weights at that rounded point.

    References
    ----------
    Møller, M. F. (1993). A scaled conjugate gradient algorithm for fast
    supervised learning. Neural Networks 6(4), 525-533.

    {{example}}
    """

    objectives = True       # (E and g are the workspace's: the run's objective)

    def record(self):
        return ("scaled conjugate gradient (Møller 1993)",
                {"sigma": self.sigma, "lambda1": self.lambda1})

    def start(self, n_connections, rng, max_epochs):
        return _SCGState()

    def begin(self, ws, st):
        st.E = ws.gradient()
        st.count.gradient(False)
        st.r = -_wide(ws.g)
        st.p = st.r.copy()
        st.s, st.delta = np.zeros_like(st.r), 0.0
        st.lam, st.lam_bar, st.success, st.k = self.lambda1, 0.0, True, 1

    def strip(self, ws, state, sse_out):
        # the scalars that leave the floating-point range are checked where they arise
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for j in range(sse_out.shape[0]):
                sse_out[j] = state.E
                if not np.isfinite(state.E):
                    return j + 1
                if not state.r.any():
                    state.stop_reason = "converged"
                    return -(j + 1)
                outcome = self._iteration(ws, state)
                if outcome is not True:
                    if outcome is False:
                        return j + 1
                    state.stop_reason = outcome
                    return -(j + 1)
                if not state.r.any() or not np.isfinite(state.lam):
                    state.stop_reason = "converged"
                    return -(j + 1)
        return 0

    def _iteration(self, ws, st):
        """One iteration (steps 1-7 of the class notes): True, False if an error was
        not finite, or the stop reason when a scalar left the floating-point range
        ("converged" below it, "abnormal" above it)."""
        w, p, r, count = ws.w, st.p, st.r, st.count
        p2 = _dot(p, p)
        if not 0.0 < p2 < _INF:
            return "converged" if p2 == 0.0 else "abnormal"
        if st.success:                                          # (1)
            sigma_k = self.sigma / np.sqrt(p2)
            g = ws.g.copy()
            probe = np.empty_like(g)
            ws.gradient(w + sigma_k * p, probe)
            count.gradient(True)
            st.s = (_wide(probe) - _wide(g)) / sigma_k
            st.delta = _dot(p, st.s)
        st.s += (st.lam - st.lam_bar) * p                       # (2)
        st.delta += (st.lam - st.lam_bar) * p2
        if st.delta <= 0:                                       # (3)
            st.s += (st.lam - 2.0 * st.delta / p2) * p
            st.lam_bar = 2.0 * (st.lam - st.delta / p2)
            st.delta = -st.delta + st.lam * p2
            st.lam = st.lam_bar
        mu = _dot(p, r)                                     # (4)
        if not (0.0 < st.delta < _INF and -_INF < mu < _INF):    # (NaN fails too)
            return "abnormal"
        if mu == 0.0:
            return "converged"
        alpha = mu / st.delta
        if not -_INF < alpha < _INF:
            return "abnormal"
        trial = w + alpha * p
        E_new = ws.sse(trial)                                   # (5)
        count.error()
        if not np.isfinite(E_new):
            return False
        try:
            Delta = 2.0 * st.delta * (st.E - E_new) / mu ** 2
        except OverflowError:
            return "abnormal"
        except ZeroDivisionError:                               # (mu**2 underflowed)
            return "converged"
        if Delta >= 0:                                          # (6)
            w[:] = trial
            st.E = ws.gradient()
            count.gradient(False)
            r_new = -_wide(ws.g)
            st.lam_bar, st.success = 0.0, True
            if st.k % w.shape[0] == 0:
                st.p = r_new.copy()
            else:
                st.p = r_new + ((_dot(r_new, r_new) - _dot(r_new, r)) / mu) * p
            st.r = r_new
            if Delta >= 0.75:
                st.lam = st.lam / 4.0
        else:
            st.lam_bar, st.success = st.lam, False
        if Delta < 0.25:                                        # (7)
            st.lam = st.lam + st.delta * (1.0 - Delta) / p2
        st.k += 1
        return True


class _LMState:
    __slots__ = ("mu", "ne", "count", "stop_reason", "trials")

    def __init__(self, mu):
        self.mu, self.ne, self.count, self.stop_reason, self.trials = mu, None, None, None, 0


def normal_equation_flops(n_rows, n_connections, n_solves):
    """Floating-point operations of Levenberg-Marquardt's normal equations, as
    counted in ``Traversals.flops``: forming J^T J (its upper triangle,
    ``n_rows * C * (C + 1)``) and J^T e (``2 * n_rows * C``) once, and for each
    of ``n_solves`` trial steps adding the damping (C), the Cholesky
    factorisation (``C (C + 1) (2C + 1) / 6``) and two triangular solves (``2 C^2``)."""
    C = n_connections
    per_solve = C + C * (C + 1) * (2 * C + 1) // 6 + 2 * C * C
    return n_rows * C * (C + 1) + 2 * n_rows * C + n_solves * per_solve


@rule("lm", params=(
    Param("mu", 1e-3, low=0.0, low_open=True),
    Param("mu_dec", 0.1, low=0.0, high=1.0, low_open=True, high_open=True),
    Param("mu_inc", 10.0, low=1.0, low_open=True),
    Param("mu_max", 1e10, low=0.0, low_open=True),
    Param("damping", "identity", kind=None, doc="'identity' or 'diagonal'"),
    Param("max_memory", LM_MAX_MEMORY, kind=int, low=1)))
@fill(example=xor_example("LevenbergMarquardt", 30, flops=True))
class LevenbergMarquardt(FullBatchRule):
    """Levenberg-Marquardt (Hagan & Menhaj 1994) with MATLAB trainlm's μ schedule.

    Each epoch solves the damped normal equations (JᵀJ + μD) Δw = -Jᵀe, with J
    the Jacobian of the outputs and e = vec(O - T), by Cholesky factorisation
    (never an explicit inverse). A step that lowers the summed squared error is
    taken and μ shrinks by ``mu_dec``; otherwise μ grows by ``mu_inc`` and the
    step is solved again, until one is taken or μ exceeds ``mu_max``, which stops
    training with reason ``"mu_max"`` (a stop at a strip end is measured there
    like any strip end). μ carries over from epoch to epoch.

    In a float32 network the passes (the Jacobian's rows, the trial
    evaluations) and the weights are float32; JᵀJ and Jᵀe are accumulated in
    float64 and solved by a float64 Cholesky factorisation (JᵀJ squares the
    Jacobian's condition number, which float32's seven digits do not hold),
    each trial point w + Δw rounded to float32.

    Parameters
    ----------
    mu : float > 0, default 1e-3
        The initial damping μ.
    mu_dec : float in (0, 1), default 0.1
    mu_inc : float > 1, default 10.0
    mu_max : float > mu, default 1e10
    damping : {"identity", "diagonal"}, default "identity"
        D = I (Levenberg) or D = diag(JᵀJ) (Marquardt).
    max_memory : int > 0, default ``LM_MAX_MEMORY`` (1 GiB)
        Limit in bytes on the two C x C matrices (JᵀJ and its Cholesky factor,
        16 C² bytes for C connections); a larger network is refused when
        training starts.

    Raises
    ------
    ValueError, TypeError
        For a parameter out of its range (``mu_dec`` not in (0, 1), ``mu_inc``
        not above 1, ``mu_max`` not above ``mu``, an unknown ``damping``),
        naming it; when training starts, if 16 C² bytes exceed ``max_memory``.

    Notes
    -----
    Cost of an epoch (see :class:`fastnet.Traversals`): the Jacobian's forward
    pass (N·C) and its n_out backward passes per example (n_out·N·C), and for
    every trial step an error evaluation (N·C forward, C update). The normal
    equations' floating-point operations are counted in ``traversals.flops``
    (:func:`normal_equation_flops`): JᵀJ and Jᵀe once an epoch, the damping, the
    factorisation and two triangular solves per trial step. A damped matrix
    that is not numerically positive definite counts as a step that failed.

    References
    ----------
    Hagan, M. T. & Menhaj, M. B. (1994). Training feedforward networks with the
    Marquardt algorithm. IEEE Transactions on Neural Networks 5(6), 989-993.
    Marquardt, D. W. (1963). An algorithm for least-squares estimation of
    nonlinear parameters. SIAM J. Appl. Math. 11(2), 431-441.

    {{example}}
    """

    def __post_init__(self):
        if self.mu_max <= self.mu:
            raise ValueError(f"`mu_max` must be > `mu`={self.mu}, got {self.mu_max}.")
        object.__setattr__(self, "damping", check_choice(self.damping, "damping",
                                                         {"identity", "diagonal"}))

    def record(self):
        kind = "Levenberg" if self.damping == "identity" else "Marquardt"
        return (f"Levenberg-Marquardt ({kind} damping; Hagan & Menhaj 1994)",
                {"mu": self.mu, "mu_dec": self.mu_dec, "mu_inc": self.mu_inc,
                 "mu_max": self.mu_max, "damping": self.damping})

    def start(self, n_connections, rng, max_epochs):
        need = 16 * n_connections ** 2
        if need > self.max_memory:
            raise ValueError(
                f"LevenbergMarquardt needs two {n_connections} x {n_connections} matrices "
                f"({need} bytes) for a network of {n_connections} connections, more than "
                f"`max_memory`={self.max_memory} bytes; raise `max_memory` or train with "
                "SCG or LBFGS, whose memory grows linearly.")
        return _LMState(self.mu)

    def begin(self, ws, state):
        net = ws.net
        state.ne = NormalEquations(net, ws.A[:, :net.n_in], ws.Y)

    def strip(self, ws, state, sse_out):
        # the epochs and their tries run in the kernel (one call for the strip: a
        # Python loop over the tries cost 3 % of an epoch on cancer1 4+2)
        n, count = sse_out.shape[0], state.count
        solves, tries = np.empty((2, n), np.intp)
        mu = np.array([state.mu])
        status = state.ne.lm_epochs(ws.w, mu, self.mu_dec, self.mu_inc, self.mu_max,
                                    self.damping == "diagonal", sse_out, solves, tries)
        state.mu = float(mu[0])
        done = _status.epochs_run(status, n)      # epochs whose counts the kernel set
        n_solves, n_tries = int(solves[:done].sum()), int(tries[:done].sum())
        c, NC, C = count.counts, count.N * count.C, count.C
        # (a non-finite SSE ends the epoch before its solves)
        formed = done - _status.diverged_in(status)
        c[0] += done * NC + n_tries * NC
        c[1] += done * ws.Y.shape[1] * NC
        c[2] += n_tries * C
        c[3] += formed * normal_equation_flops(count.N * ws.Y.shape[1], C, 0) + n_solves * (
            normal_equation_flops(0, C, 1))
        state.trials += n_tries
        if _status.stopped_in(status):
            state.stop_reason = "mu_max"
        return status
