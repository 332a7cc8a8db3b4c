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
    the normal-equations kernel (``fastnet.gradients._NormalEquations``) with
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

Timing: process CPU time, one thread (BLAS included), the process pinned to one core;
the implementations run alternately (A B C A B C ...), each repeat restarting from the
same weights and mu; medians over the repeats; the time split (Jacobian or normal
equations, J^T J, solve, error evaluations of the tries) is summed over the epochs of
a run. Every implementation must end at the same SSE (checked).

    python benchmarks/lm_epoch.py                    # cases A and C, 5 repeats
    python benchmarks/lm_epoch.py --cases C --repeats 3 --epochs 3
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
from _peers.cases import load_case  # noqa: E402

MU, MU_DEC, MU_INC, MU_MAX = 1e-3, 0.1, 10.0, 1e10
EPOCHS = {"A": 40, "C": 4}
PARTS = ("jacobian", "JtJ", "solve", "error")


class Clock:
    """CPU seconds per part, summed."""

    def __init__(self):
        self.t = dict.fromkeys(PARTS, 0.0)
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
        from fastnet.gradients import _NormalEquations

        self.ne = _NormalEquations(net, X, T, factored=self.factored)

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


# --------------------------------------------------------------------------- the epoch loop
def lm_run(impl, w0, epochs):
    """`epochs` LM epochs from w0 with mu = MU; returns (final SSE, clock, tries)."""
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


def measure(key, repeats, epochs):
    import fastnet

    case = load_case(key)
    net = fastnet.MLP(case.sizes[0], case.sizes[1:-1], case.sizes[-1], shortcut=case.shortcut,
                      hidden_activation="proben1", output_activation="linear")
    net.set_params(*case.init_copy())
    X, T = np.ascontiguousarray(case.X), np.ascontiguousarray(case.T)
    w0 = net.weights.copy()
    impls = [NumpyLM(net, X, T), FastnetJ(net.copy(), X, T), FastnetNESyrk(net.copy(), X, T),
             FastnetNE(net.copy(), X, T)]
    J_np = impls[0].jacobian(w0)[0]
    if not np.allclose(J_np, fastnet.jacobian(net, X), rtol=1e-12, atol=1e-14):
        raise AssertionError("the NumPy Jacobian differs from fastnet.jacobian")
    for impl in impls:                        # warm-up
        lm_run(impl, w0, 1)
    runs = {impl.name: [] for impl in impls}
    for _ in range(repeats):
        for impl in impls:
            t0 = time.process_time()
            sse, clock, tries = lm_run(impl, w0, epochs)
            runs[impl.name].append((time.process_time() - t0, clock.t, sse, tries))
    return case, runs


def report(case, runs, epochs):
    N, C = case.n_patterns, case.n_connections
    print(f"\ncase {case.spec.label}: N = {N}, C = {C}, n_out = {case.sizes[-1]}, "
          f"J = {N * case.sizes[-1]} x {C}; {epochs} LM epochs per run, medians over "
          f"{len(next(iter(runs.values())))} runs (CPU ms per epoch)")
    print(f"  {'implementation':<16} {'epoch':>9} " + " ".join(f"{p:>9}" for p in PARTS)
          + f" {'tries':>6} {'final SSE':>14}")
    med = {}
    for name, rs in runs.items():
        total = statistics.median(r[0] for r in rs) / epochs
        parts = [statistics.median(r[1][p] for r in rs) / epochs for p in PARTS]
        med[name] = total
        print(f"  {name:<16} {total * 1e3:9.3f} " + " ".join(f"{p * 1e3:9.3f}" for p in parts)
              + f" {rs[0][3] / epochs:6.2f} {rs[0][2]:14.8g}")
    ref = runs["numpy"][0][2]
    for name, rs in runs.items():
        if abs(rs[0][2] - ref) > 1e-6 * max(1.0, abs(ref)):   # rounding differs in J
            print(f"  !! {name} ends at SSE {rs[0][2]!r}, numpy at {ref!r}")
    for name in med:
        if name != "numpy":
            per_run = [a[0] / b[0] for a, b in zip(runs["numpy"], runs[name])]
            print(f"  numpy / {name}: {med['numpy'] / med[name]:.2f}x "
                  f"(per run: {', '.join(f'{x:.2f}' for x in per_run)})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="A,C")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=None, help="LM epochs per run (default: A 40, C 4)")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})   # one core
    print(f"load average before: {os.getloadavg()}")
    for key in args.cases.split(","):
        epochs = args.epochs or EPOCHS[key]
        case, runs = measure(key, args.repeats, epochs)
        report(case, runs, epochs)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
