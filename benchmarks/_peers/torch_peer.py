"""PyTorch CPU peer: autograd + ``torch.optim.Rprop`` (iRPROP-), as a user would write it.

Parameters ``W_j`` of shape ``(fan_in, n_j)`` and ``b_j``; ``torch.addmm``; shortcut inputs
built with ``torch.cat``; ``F.softsign`` (= x/(1+|x|)) hidden units, linear outputs; loss
``((y - t)**2).sum()``; ``Rprop(lr=delta0, etas=(eta-, eta+), step_sizes=(delta_min, delta_max))``
with ``foreach`` left at its CPU default. One thread (``torch.set_num_threads(1)``).
"""

from __future__ import annotations

import numpy as np

from .cases import RPROP, sources
from .harness import Peer, PeerUnavailable

_torch = None


def import_torch():
    """Import torch once, single-threaded; raise PeerUnavailable if it is missing."""
    global _torch
    if _torch is None:
        try:
            import torch  # noqa: PLC0415
        except ImportError as exc:
            raise PeerUnavailable(f"torch not installed ({exc}); `pip install torch==2.13.0` "
                                  "(or the `bench` extra) adds the torch column") from exc
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set, or parallel work already started
            pass
        _torch = torch
    return _torch


class TorchPeer(Peer):
    name = "torch"

    def __init__(self, case, dtype="float64"):
        torch = import_torch()
        self.torch = torch
        self.F = torch.nn.functional
        self.case = case
        self.dtype = dtype
        self.tdt = {"float64": torch.float64, "float32": torch.float32}[dtype]
        self.X = torch.from_numpy(np.ascontiguousarray(case.X, dtype=dtype))
        self.T = torch.from_numpy(np.ascontiguousarray(case.T, dtype=dtype))
        sizes = case.sizes
        self.L = len(sizes) - 1
        self.src = {j: sources(sizes, case.shortcut, j) for j in range(1, self.L + 1)}
        self.W, self.b = {}, {}
        for j in range(1, self.L + 1):
            fan_in = sum(sizes[i] for i in self.src[j])
            self.W[j] = torch.zeros((fan_in, sizes[j]), dtype=self.tdt, requires_grad=True)
            self.b[j] = torch.zeros(sizes[j], dtype=self.tdt, requires_grad=True)
        self.params = [p for j in range(1, self.L + 1) for p in (self.W[j], self.b[j])]
        self.extra = {"torch_version": torch.__version__}

    @property
    def hidden(self):
        torch, F = self.torch, self.F
        return {"proben1": F.softsign, "tanh": torch.tanh, "logistic": torch.sigmoid,
                "relu": F.relu}[self.case.activation]

    def reset(self):
        torch = self.torch
        with torch.no_grad():
            for j in range(1, self.L + 1):
                Wj = np.vstack([self.case.W0[(i, j)] for i in self.src[j]])
                self.W[j].copy_(torch.from_numpy(Wj))
                self.b[j].copy_(torch.from_numpy(self.case.b0[j]))
                self.W[j].grad = None
                self.b[j].grad = None
        self.opt = torch.optim.Rprop(
            self.params, lr=RPROP["delta0"], etas=(RPROP["eta_minus"], RPROP["eta_plus"]),
            step_sizes=(RPROP["delta_min"], RPROP["delta_max"]))

    def forward(self):
        torch, hidden = self.torch, self.hidden
        acts = [self.X]
        for j in range(1, self.L + 1):
            src = self.src[j]
            A = acts[src[0]] if len(src) == 1 else torch.cat([acts[i] for i in src], dim=1)
            z = torch.addmm(self.b[j], A, self.W[j])
            acts.append(z if j == self.L else hidden(z))
        return acts[-1]

    def run(self, epochs):
        opt, T = self.opt, self.T
        for _ in range(epochs):
            opt.zero_grad()
            loss = ((self.forward() - T) ** 2).sum()
            loss.backward()
            opt.step()

    def sse(self):
        with self.torch.no_grad():
            Y = self.forward().numpy().astype(np.float64)
        d = Y - self.case.T
        return float(np.einsum("ij,ij->", d, d))
