"""Plain vectorised NumPy peer: full-batch iRPROP- on one flat weight vector.

* All activations live in one ``(N, inputs + hidden)`` buffer; layer j reads a column
  slice of it (inputs and every earlier hidden layer with shortcuts, the previous layer
  without), so shortcuts need no concatenation.
* Weights and gradients are views of one flat vector each: per layer j a ``(fan_in, n_j)``
  matrix followed by the ``(n_j,)`` bias.
* The update is vectorised iRPROP- as ``torch.optim.Rprop``: product > 0 -> step * eta+,
  product < 0 -> step * eta- and the gradient is zeroed (no move), product = 0 -> step
  kept; then clip the step to [delta_min, delta_max] and move by -sign(g) * step.
"""

from __future__ import annotations

import numpy as np

from .cases import RPROP, hidden_units, sources
from .harness import Peer


class NumpyPeer(Peer):
    name = "numpy"

    def __init__(self, case, dtype="float64"):
        self.case = case
        self.dtype = dtype
        dt = np.dtype(dtype)
        sizes, shortcut = case.sizes, case.shortcut
        N, n_in, n_out = case.n_patterns, sizes[0], sizes[-1]
        L = len(sizes) - 1
        self.L = L
        n_hidden = sum(sizes[1:-1])
        # column offset of each layer in the activation buffer (inputs, h1, h2, ...)
        col = [0]
        for n in sizes[:-1]:
            col.append(col[-1] + n)
        self.buf = np.empty((N, n_in + n_hidden), dt)
        self.buf[:, :n_in] = case.X
        self.T = np.ascontiguousarray(case.T, dt)
        self.dbuf = np.empty((N, n_hidden), dt)   # dE/d(activation) of the hidden columns

        self.w = np.empty(case.n_connections, dt)
        self.g = np.empty_like(self.w)
        self.layers = []
        off = 0
        for j in range(1, L + 1):
            src = sources(sizes, shortcut, j)
            lo, hi = col[src[0]], col[src[-1]] + sizes[src[-1]]   # contiguous source columns
            fan_in, n = hi - lo, sizes[j]
            Wv = self.w[off:off + fan_in * n].reshape(fan_in, n)
            gWv = self.g[off:off + fan_in * n].reshape(fan_in, n)
            off += fan_in * n
            bv, gbv = self.w[off:off + n], self.g[off:off + n]
            off += n
            # rows of W that come from hidden units (back-propagation) and their dbuf columns
            h_lo = max(lo, n_in)
            self.layers.append(dict(
                j=j, src=src, A=self.buf[:, lo:hi], W=Wv, b=bv, gW=gWv, gb=gbv,
                Z=np.empty((N, n), dt),
                D=np.empty((N, n), dt),             # f'(z) for hidden, delta for output
                out=None if j == L else self.buf[:, col[j]:col[j] + n],
                dout=None if j == L else self.dbuf[:, col[j] - n_in:col[j] - n_in + n],
                Wh=Wv[h_lo - lo:] if hi > h_lo else None,
                dsrc=self.dbuf[:, h_lo - n_in:hi - n_in] if hi > h_lo else None,
                tmp=np.empty((N, hi - h_lo), dt) if hi > h_lo else None,
            ))
        assert off == self.w.size
        self.gprev = np.empty_like(self.w)
        self.step = np.empty_like(self.w)
        self.s = np.empty_like(self.w)
        self.fac = np.empty_like(self.w)
        self.sgn = np.empty_like(self.w)
        self.E = np.empty((N, n_out), dt)
        self.eta_plus = dt.type(RPROP["eta_plus"])
        self.eta_minus = dt.type(RPROP["eta_minus"])
        self.dmin, self.dmax = dt.type(RPROP["delta_min"]), dt.type(RPROP["delta_max"])
        self.one = dt.type(1.0)

    # ------------------------------------------------------------------ protocol
    def reset(self):
        W0, b0 = self.case.W0, self.case.b0
        for lay in self.layers:
            j, r = lay["j"], 0
            for i in lay["src"]:
                n_i = self.case.sizes[i]
                lay["W"][r:r + n_i] = W0[(i, j)]
                r += n_i
            lay["b"][:] = b0[j]
        self.gprev.fill(0)
        self.step.fill(RPROP["delta0"])

    def forward(self):
        for lay in self.layers:
            Z = lay["Z"]
            np.matmul(lay["A"], lay["W"], out=Z)
            Z += lay["b"]
            if lay["out"] is not None:          # hidden: a = f(z), D = f'(z)
                hidden_units(self.case.activation, Z, lay["out"], lay["D"])
        return self.layers[-1]["Z"]

    def gradient(self):
        Y = self.forward()
        E = self.E
        np.subtract(Y, self.T, out=E)
        out = self.layers[-1]
        np.multiply(E, 2.0, out=out["D"])     # d(sum (y-t)^2)/dy, linear output
        first = True
        for lay in reversed(self.layers):
            delta = lay["D"]                    # output: 2(y - t), set above
            if lay["out"] is not None:          # hidden: dE/da * f'(z)
                delta *= lay["dout"]
            np.matmul(lay["A"].T, delta, out=lay["gW"])
            np.sum(delta, axis=0, out=lay["gb"])
            if lay["Wh"] is not None:
                if first or not self.case.shortcut:
                    np.matmul(delta, lay["Wh"].T, out=lay["tmp"])
                    lay["dsrc"][...] = lay["tmp"]
                else:
                    np.matmul(delta, lay["Wh"].T, out=lay["tmp"])
                    lay["dsrc"][...] += lay["tmp"]
            first = False

    def update(self):
        g, s, fac, step = self.g, self.s, self.fac, self.step
        np.multiply(g, self.gprev, out=s)
        fac.fill(self.one)
        np.copyto(fac, self.eta_plus, where=s > 0)
        neg = s < 0
        np.copyto(fac, self.eta_minus, where=neg)
        step *= fac
        np.clip(step, self.dmin, self.dmax, out=step)
        np.copyto(g, 0, where=neg)
        np.sign(g, out=self.sgn)
        self.sgn *= step
        self.w -= self.sgn
        self.gprev[...] = g

    def run(self, epochs):
        for _ in range(epochs):
            self.gradient()
            self.update()

    def sse(self):
        Y = self.forward()
        d = Y.astype(np.float64) - self.case.T
        return float(np.einsum("ij,ij->", d, d))
