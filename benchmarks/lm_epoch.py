#!/usr/bin/env python
"""One Levenberg-Marquardt epoch: fastnet's kernels against NumPy at its best.

Levenberg-Marquardt (Hagan & Menhaj 1994; MATLAB ``trainlm``'s mu schedule) per epoch:
e = vec(O - T), J = d vec(O) / dw, A = J^T J; repeat dw = -(A + mu I)^-1 J^T e
(Cholesky) and evaluate E(w + dw) until E falls (accept, mu *= 0.1) or mu passes
mu_max (mu *= 10 on each failure). Every implementation below runs exactly this loop
from the same weights (cases A = cancer1 4+2 and C = thyroid1 16+8, shortcuts, of
benchmarks/peers.py); they differ in how the parts are computed:

``numpy``
    NumPy at its best: all activations in one buffer, the exact Jacobian vectorised
    (the n_out backward passes of every example at once, one matmul per layer,
    outer products by broadcasting into J), A by BLAS ``dsyrk``, J^T e by ``gemv``,
    LAPACK Cholesky (``scipy.linalg.cho_factor`` / ``cho_solve``), the error by a
    NumPy forward pass.
``fastnet-J``
    ``fastnet.jacobian`` (the kernel) + the same ``dsyrk``, ``gemv`` and Cholesky;
    the error by ``MLP.sum_squared_error``'s kernel.
``fastnet-NE-syrk``
    the normal-equations kernel (``fastnet._engine.NormalEquations``) with
    ``factored=False``: J^T J and J^T e block by block, each block of Jacobian rows fed
    to ``dsyrk``/``dgemv`` while it is in cache, J never stored; the solve (LAPACK
    ``dpotrf``/``dpotrs`` called from the kernel) and the trial error (forward kernel at
    the trial weights, no copy) through the same object.
``fastnet-NE``
    the same with J^T J through the structure of J's rows: the part of row (p, k) that
    belongs to layer j is delta^k_p (x) a_p (deltas times source activations), so the
    rows of H of unit u are sum_p a_p (x) R_u[p] with R_u[p] = sum_k delta^k_pu J[(p, k)]
    -- the example's n_out rows summed before the product, which then costs 1/n_out of
    dsyrk's multiply-adds (plus forming R, 2 U / C of them; U = units).
``fastnet-train``
    what users run: ``fastnet.train(net, X, T, algorithm=LevenbergMarquardt(),
    max_epochs=n)``, the ``fastnet-NE`` kernels inside the training loop; the whole
    call is timed (argument checks, buffers, the loop, the final errors), the split
    through a timing subclass of the kernel object the rule builds. The bar: an epoch
    >= 3x faster than ``numpy`` on A, >= 1.3x on C (printed PASS / FAIL).
``pyrenn/tanh`` (a peer, when pyrenn 0.1 is installed; ``--no-pyrenn`` leaves it out)
    pyrenn's ``train_LM(P, Y, net, k_max=n, E_stop=0, dampfac=1e-3, dampconst=10)``:
    pure NumPy with a Python loop over the examples (real-time recurrent learning for
    the Jacobian, one forward pass per example), ``inv(J^T J + mu I)`` for the step, the
    same mu schedule without mu_max. pyrenn builds layered nets only (tanh hidden
    units, linear outputs, biases, no shortcuts), so it runs on the case's layers
    without shortcuts (A: C = 56, C: C = 515, which is case F's net), from weights
    drawn as the case's; ``fastnet-train/tanh`` is fastnet.train on that same net from
    the same weights, and both must end at the same SSE. pyrenn's run computes n + 1
    Jacobians (the last one for its error history), counted in its epoch (CPU time / n)
    and printed apart; its "solve" column holds J^T J, J^T e and the inverse.

Timing: process CPU time, one thread (BLAS included), the process pinned to one core;
the implementations run alternately (A B C A B C ...), each repeat restarting from the
same weights and mu; medians over the repeats; the time split (Jacobian or normal
equations, J^T J, solve, error evaluations of the tries) is summed over the epochs of
a run; "other" is the rest of a run (set-up, the loop, final errors). Every
implementation must end at the same SSE as the others on its net (checked).

    python benchmarks/lm_epoch.py                    # cases A and C, 5 repeats
    python benchmarks/lm_epoch.py --cases C --repeats 3 --epochs 3
    pip install pyrenn==0.1                          # the pyrenn column
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402
from scipy.linalg.blas import dgemv, dsyrk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers.cases import init_weights, load_case  # noqa: E402

MU, MU_DEC, MU_INC, MU_MAX = 1e-3, 0.1, 10.0, 1e10
EPOCHS = {"A": 40, "C": 4}
PARTS = ("jacobian", "JtJ", "solve", "error")


class Clock:
    """CPU seconds per part, summed."""

    def __init__(self):
        self.t = dict.fromkeys(PARTS + ("other",), 0.0)
        self.last = time.process_time()

    def lap(self, part):
        now = time.process_time()
        self.t[part] += now - self.last
        self.last = now


# --------------------------------------------------------------------------- NumPy
class NumpyLM:
    """LM's parts in plain vectorised NumPy, on fastnet's flat weight layout."""

    name = "numpy"

    def __init__(self, net, X, T):
        self.T = T
        self.n_in, self.n_out, self.C = net.n_in, net.n_out, net.n_connections
        N = X.shape[0]
        self.A = np.zeros((N, net.n_units))
        self.A[:, :net.n_in] = X
        self.layers = [tuple(int(v) for v in row) for row in net.layer_table]
        self.acts = [net.hidden_activation] * (len(self.layers) - 1) + [net.output_activation]
        assert set(self.acts) <= {"proben1", "linear"}
        self.Dv = np.empty((N, net.n_units - net.n_in))        # f'(net) of non-input units
        self.V = np.empty((N, self.n_out, net.n_units - net.n_in))   # virtual deltas
        self.J = np.empty((N, self.n_out, self.C))

    def forward(self, w):
        A, n_in = self.A, self.n_in
        for (start, size, lo, hi, w_off, b_off, _), act in zip(self.layers, self.acts):
            Z = A[:, lo:hi] @ w[w_off:b_off].reshape(size, hi - lo).T
            Z += w[b_off:b_off + size]
            if act == "proben1":
                d = 1.0 / (1.0 + np.abs(Z))
                A[:, start:start + size] = Z * d
                self.Dv[:, start - n_in:start - n_in + size] = d * d
            else:
                A[:, start:start + size] = Z
                self.Dv[:, start - n_in:start - n_in + size] = 1.0
        return A[:, -self.n_out:]

    def sse(self, w):
        d = self.forward(w) - self.T
        return float(np.einsum("ij,ij->", d, d))

    def jacobian(self, w):
        """J (N * n_out, C) and e = vec(O - T); leaves J in self.J."""
        A, V, J, n_in = self.A, self.V, self.J, self.n_in
        e = (self.forward(w) - self.T).ravel()
        V[:] = 0.0
        c_out = self.layers[-1][0] - n_in
        k = np.arange(self.n_out)
        V[:, k, c_out + k] = self.Dv[:, c_out:c_out + self.n_out]
        for j in range(len(self.layers) - 1, -1, -1):
            start, size, lo, hi, w_off, b_off, _ = self.layers[j]
            c = start - n_in
            delta = V[:, :, c:c + size]
            if j < len(self.layers) - 1:
                delta *= self.Dv[:, None, c:c + size]
            np.multiply(delta[:, :, :, None], A[:, None, None, lo:hi],
                        out=J[:, :, w_off:b_off].reshape(A.shape[0], self.n_out, size, hi - lo))
            J[:, :, b_off:b_off + size] = delta
            src0 = max(lo, n_in)
            if hi > src0:
                W = w[w_off:b_off].reshape(size, hi - lo)[:, src0 - lo:]
                V[:, :, src0 - n_in:hi - n_in] += delta @ W
        return J.reshape(-1, self.C), e

    def normal_equations(self, w, clock):
        J, e = self.jacobian(w)
        clock.lap("jacobian")
        H = dsyrk(1.0, J.T)                  # upper triangle of J^T J (J.T: Fortran order)
        r = dgemv(1.0, J.T, e)
        clock.lap("JtJ")
        return H, r, float(e @ e)


    def step(self, H, r, mu):
        """-(H + mu I)^-1 r by LAPACK Cholesky (H: upper triangle set)."""
        A = H.copy()
        A.flat[::A.shape[0] + 1] += mu
        return -sla.cho_solve(sla.cho_factor(A, lower=False, overwrite_a=True,
                                             check_finite=False), r, check_finite=False)


# --------------------------------------------------------------------------- fastnet
class FastnetJ(NumpyLM):
    """fastnet.jacobian + BLAS dsyrk; errors by fastnet's forward kernel."""

    name = "fastnet-J"

    def __init__(self, net, X, T):
        import fastnet

        self.net, self.X, self.T = net, X, T
        self._jacobian = fastnet.jacobian

    def sse(self, w):
        self.net.set_weights(w)
        return self.net.sum_squared_error(self.X, self.T)

    def normal_equations(self, w, clock):
        self.net.set_weights(w)
        J = self._jacobian(self.net, self.X)
        e = (self.net.predict(self.X) - self.T).ravel()
        clock.lap("jacobian")
        H = dsyrk(1.0, J.T)
        r = dgemv(1.0, J.T, e)
        clock.lap("JtJ")
        return H, r, float(e @ e)


class FastnetNE(FastnetJ):
    """fastnet's normal-equations kernel: J^T J and J^T e without storing J."""

    name = "fastnet-NE"
    factored = True

    def __init__(self, net, X, T):
        super().__init__(net, X, T)
        from fastnet._engine import NormalEquations

        self.ne = NormalEquations(net, X, T, factored=self.factored)

    def normal_equations(self, w, clock):
        self.net.set_weights(w)
        H, r, sse = self.ne.compute()
        clock.lap("JtJ")                      # Jacobian and products in one kernel
        return H, r, sse

    def step(self, H, r, mu):
        return self.ne.solve(mu)

    def sse(self, w):
        return self.ne.sse(w)


class FastnetNESyrk(FastnetNE):
    name = "fastnet-NE-syrk"
    factored = False


class FastnetTrain:
    """What users run: ``fastnet.train(net, X, T, algorithm=LevenbergMarquardt(...))``.

    The whole call is timed (argument checks, workspace, the strip loop, the final
    errors), as it runs. Its epochs and their tries run in one kernel call
    (``_jacobian.lm_epochs``) on the kernels of ``fastnet-NE``, whose split applies;
    its row shows the whole time as ``other``.
    """

    name = "fastnet-train"

    def __init__(self, net, X, T):
        import fastnet
        from fastnet.algorithms import LevenbergMarquardt

        self.net, self.X, self.T, self.train = net, X, T, fastnet.train
        self.rule = LevenbergMarquardt(mu=MU, mu_dec=MU_DEC, mu_inc=MU_INC, mu_max=MU_MAX)

    def run(self, w0, epochs):
        clock = Clock()
        self.net.set_weights(w0)
        res = self.train(self.net, self.X, self.T, algorithm=self.rule, max_epochs=epochs)
        if res.epochs != epochs:
            raise AssertionError(f"fastnet.train stopped after {res.epochs} epochs "
                                 f"({res.stop_reason}), not {epochs}")
        tries = res.traversals.update // self.net.n_connections
        return self.net.sum_squared_error(self.X, self.T), clock, tries


# --------------------------------------------------------------------------- pyrenn
class Pyrenn:
    """pyrenn 0.1's ``train_LM`` (pure NumPy, a Python loop over the examples).

    pyrenn builds layered nets only: tanh hidden units, linear outputs, biases, no
    shortcut connections. It runs on that net (``pyrenn_net``), from the same weights
    as ``fastnet-train/tanh`` (fastnet on the same net), with ``dampfac = mu = 1e-3``
    and ``dampconst = 10`` (trainlm's x0.1 / x10; pyrenn has no mu_max). Its step is
    ``inv(J^T J + mu I) @ g``, an explicit inverse. ``train_LM(k_max=n)`` computes
    n + 1 Jacobians (the last one for its error history): the epoch is the run's CPU
    time / n, as for the others; ``last_jacobian`` holds that extra one's time.
    """

    name = "pyrenn/tanh"
    MAX_TRIES = 60          # mu past 1e10 from 1e-3 takes 14 failures; pyrenn has no limit

    def __init__(self, sizes, W, b, X, T):
        import pyrenn

        self.pr = pyrenn
        net = pyrenn.CreateNN(list(sizes))
        IW = {(1, 1, 0): W[(0, 1)].T}
        LW = {(m, m - 1, 0): W[(m - 1, m)].T for m in range(2, len(sizes))}
        self.w0 = pyrenn.Wb2w(net, IW, LW, {m: b[m] for m in range(1, len(sizes))})
        self.base, self.P, self.Y = net, np.ascontiguousarray(X.T), np.ascontiguousarray(T.T)
        data, _ = pyrenn.prepare_data(self.P, self.Y, dict(net))
        if not (np.array_equal(data["P"], self.P) and np.array_equal(data["Y"], self.Y)):
            raise AssertionError("pyrenn rescales these data (an input or target beyond 1)")
        self.data, self.last_jacobian = data, []

    def sse(self, w):
        return float(self.pr.calc_error(dict(self.base, w=w), self.data))

    def run(self, w0, epochs):
        import contextlib
        import io

        pr, clock = self.pr, Clock()
        rtrl, calc_error = pr.RTRL, pr.calc_error
        state = {"tries": 0, "run": 0, "first": True, "jac": 0.0}

        def timed_rtrl(net, data):
            clock.lap("other" if state["first"] else "solve")
            state["first"], state["run"] = False, 0
            t0 = time.process_time()
            out = rtrl(net, data)
            state["jac"] = time.process_time() - t0
            clock.lap("jacobian")
            return out

        def timed_error(net, data):
            clock.lap("solve")                  # J^T J, J^T e and the inverse
            state["tries"] += 1
            state["run"] += 1
            if state["run"] > self.MAX_TRIES:
                raise RuntimeError(f"pyrenn found no step in {self.MAX_TRIES} tries")
            out = calc_error(net, data)
            clock.lap("error")
            return out

        net = dict(self.base, w=w0.copy())
        pr.RTRL, pr.calc_error = timed_rtrl, timed_error
        try:
            with contextlib.redirect_stdout(io.StringIO()):   # "Maximum number of iterations"
                clock.lap("other")
                net = pr.train_LM(self.P, self.Y, net, k_max=epochs, E_stop=0.0,
                                  dampfac=MU, dampconst=MU_INC)
                clock.lap("other")
        finally:
            pr.RTRL, pr.calc_error = rtrl, calc_error
        self.last_jacobian.append(state["jac"])
        return self.sse(net["w"]), clock, state["tries"]


# --------------------------------------------------------------------------- the epoch loop
def lm_run(impl, w0, epochs):
    """`epochs` LM epochs from w0 with mu = MU; returns (final SSE, clock, tries)."""
    if hasattr(impl, "run"):                  # a whole training call (fastnet.train, pyrenn)
        return impl.run(w0, epochs)
    w, mu, tries = w0.copy(), MU, 0
    clock = Clock()
    for _ in range(epochs):
        H, r, E = impl.normal_equations(w, clock)
        while True:
            dw = impl.step(H, r, mu)
            clock.lap("solve")
            E_new = np.inf if dw is None else impl.sse(w + dw)   # None: not positive definite
            clock.lap("error")
            tries += 1
            if E_new < E:
                w += dw
                mu *= MU_DEC
                break
            mu *= MU_INC
            if mu > MU_MAX:
                return impl.sse(w), clock, tries
    return impl.sse(w), clock, tries


def implementations(case, X, T, peer):
    """(implementation, its starting weights, the implementation whose final SSE it must
    reach) for the case's net and, with ``peer``, for pyrenn's net."""
    import fastnet

    net = fastnet.MLP(case.sizes[0], case.sizes[1:-1], case.sizes[-1], shortcut=case.shortcut,
                      hidden_activation="proben1", output_activation="linear")
    net.set_params(*case.init_copy())
    w0 = net.weights.copy()
    J_np = NumpyLM(net, X, T).jacobian(w0)[0]
    if not np.allclose(J_np, fastnet.jacobian(net, X), rtol=1e-12, atol=1e-14):
        raise AssertionError("the NumPy Jacobian differs from fastnet.jacobian")
    impls = [(NumpyLM(net, X, T), w0, "numpy")]
    impls += [(cls(net.copy(), X, T), w0, "numpy")
              for cls in (FastnetJ, FastnetNESyrk, FastnetNE, FastnetTrain)]
    if peer:
        # pyrenn's net: the case's layers without shortcuts, tanh hidden units, weights
        # drawn as for the case (benchmarks/_peers/cases.py:init_weights)
        W, b = init_weights(case.sizes, False)
        tanh = fastnet.MLP(case.sizes[0], case.sizes[1:-1], case.sizes[-1], shortcut=False,
                           hidden_activation="tanh", output_activation="linear")
        tanh.set_params(W, b)
        ours = FastnetTrain(tanh, X, T)
        ours.name = "fastnet-train/tanh"
        theirs = Pyrenn(case.sizes, W, b, X, T)
        if abs(theirs.sse(theirs.w0) - tanh.sum_squared_error(X, T)) > 1e-9 * theirs.sse(theirs.w0):
            raise AssertionError("pyrenn's net does not start at fastnet's SSE")
        impls += [(ours, tanh.weights.copy(), ours.name), (theirs, theirs.w0, ours.name)]
    return impls


def measure(key, repeats, epochs, peer):
    case = load_case(key)
    X, T = np.ascontiguousarray(case.X), np.ascontiguousarray(case.T)
    impls = implementations(case, X, T, peer)
    for impl, w0, _ in impls:                 # warm-up
        lm_run(impl, w0, 1)
    runs = {impl.name: [] for impl, _, _ in impls}
    for _ in range(repeats):
        for impl, w0, _ in impls:
            t0 = time.process_time()
            sse, clock, tries = lm_run(impl, w0, epochs)
            total = time.process_time() - t0
            runs[impl.name].append((total, clock.t, sse, tries, total))
    return case, impls, runs


def median_epoch(rs, epochs):
    return statistics.median(r[0] for r in rs) / epochs


def ratio_line(runs, slow, fast, epochs, note=""):
    per_run = [a[0] / b[0] for a, b in zip(runs[slow], runs[fast])]
    ratio = median_epoch(runs[slow], epochs) / median_epoch(runs[fast], epochs)
    print(f"  {slow} / {fast}: {ratio:.2f}x (per run: {', '.join(f'{x:.2f}' for x in per_run)})"
          + note)
    return ratio


def report(case, impls, runs, epochs):
    N, C, n_out = case.n_patterns, case.n_connections, case.sizes[-1]
    print(f"\ncase {case.spec.label}: N = {N}, C = {C}, n_out = {n_out}, "
          f"J = {N * n_out} x {C}; {epochs} LM epochs per run, medians over "
          f"{len(next(iter(runs.values())))} runs (CPU ms per epoch; other = the rest of "
          "the run: set-up, loop, final errors)")
    print(f"  {'implementation':<19} {'epoch':>9} " + " ".join(f"{p:>9}" for p in PARTS)
          + f" {'other':>9} {'tries':>6} {'final SSE':>14}")
    for name, rs in runs.items():
        total = median_epoch(rs, epochs)
        parts = [statistics.median(r[1][p] for r in rs) / epochs for p in PARTS]
        other = statistics.median(r[4] - sum(r[1][p] for p in PARTS) for r in rs) / epochs
        print(f"  {name:<19} {total * 1e3:9.3f} " + " ".join(f"{p * 1e3:9.3f}" for p in parts)
              + f" {other * 1e3:9.3f} {rs[0][3] / epochs:6.2f} {rs[0][2]:14.8g}")
    for impl, _, ref in impls:                # rounding differs in J^T J (and pyrenn inverts)
        sse, ref_sse = runs[impl.name][0][2], runs[ref][0][2]
        if abs(sse - ref_sse) > 1e-6 * max(1.0, abs(ref_sse)):
            print(f"  !! {impl.name} ends at SSE {sse!r}, {ref} at {ref_sse!r}")
    for impl, _, ref in impls:
        if ref == "numpy" and impl.name != "numpy":
            ratio_line(runs, "numpy", impl.name, epochs)
    bar = {"A": 3.0, "C": 1.3}.get(case.spec.key)
    if bar is not None:
        got = median_epoch(runs["numpy"], epochs) / median_epoch(runs["fastnet-train"], epochs)
        print(f"  bar: fastnet.train's LM epoch >= {bar}x NumPy's at its best: {got:.2f}x "
              f"{'PASS' if got >= bar else 'FAIL'}")
    if "pyrenn/tanh" in runs:
        pr = next(impl for impl, _, _ in impls if impl.name == "pyrenn/tanh")
        extra = statistics.median(pr.last_jacobian[-len(runs["pyrenn/tanh"]):]) / epochs
        print(f"  pyrenn's net: no shortcuts, tanh hidden units, C = "
              f"{pr.w0.size}; pyrenn's run computes {epochs + 1} Jacobians, "
              f"the last {extra * 1e3:.3f} ms per epoch of it")
        ratio_line(runs, "pyrenn/tanh", "fastnet-train/tanh", epochs, " (the same net)")
        for name in ("numpy", "fastnet-train"):
            ratio_line(runs, "pyrenn/tanh", name, epochs, f" ({name} on the case's net, C = {C})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="A,C")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=None, help="LM epochs per run (default: A 40, C 4)")
    ap.add_argument("--no-pyrenn", action="store_true", help="leave pyrenn out")
    args = ap.parse_args(argv)
    peer = not args.no_pyrenn
    if peer:
        try:
            import pyrenn  # noqa: F401
        except ImportError as exc:
            print(f"pyrenn: not installed ({exc}); `pip install pyrenn==0.1` adds it")
            peer = False
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core
    print(f"load average before: {os.getloadavg()}")
    for key in args.cases.split(","):
        epochs = args.epochs or EPOCHS[key]
        case, impls, runs = measure(key, args.repeats, epochs, peer)
        report(case, impls, runs, epochs)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
