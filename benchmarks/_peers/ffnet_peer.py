"""ffnet 0.8.6 peer: Fortran full-batch RPROP (``ffnet.train_rprop``), float64.

ffnet builds its Fortran kernels with f2py and needs gfortran (Debian ``gfortran``):

    apt-get update && apt-get install -y gfortran
    pip install --no-build-isolation ffnet==0.8.6

On Python < 3.12 with setuptools >= 80 that build fails: ffnet's ``setup.py`` runs ``f2py -c``,
whose default backend there is ``numpy.distutils``, and ``numpy.distutils`` cannot create
a compiler under setuptools' newer distutils (``TypeError: Compiler.__init__() takes from
1 to 3 positional arguments but 4 were given``). Building ffnet's sdist with
``f2py --backend meson`` works (meson and ninja installed): in the unpacked sdist, replace
``cmd = ['f2py', '-m', m, '-c', s]`` in ``setup.py`` by
``cmd = [sys.executable, '-m', 'numpy.f2py', '--backend', 'meson', '-m', m, '-c', s]``, then
``pip wheel --no-build-isolation --no-deps .`` and ``pip install --no-deps`` the wheel.

Set-up: ``tmlgraph`` (every layer feeds every later one: Proben1's shortcuts) or ``mlgraph``
(adjacent layers), biases on, so C equals the other peers'. ffnet's units are logistic
everywhere, outputs included, and it scales inputs and targets linearly itself, so its
network is not the others' (x/(1+|x|) hidden units, linear outputs) and its SSE is not
comparable: only the time per epoch is. Its RPROP (Riedmiller & Braun 1993, no
backtracking) runs a=1.2, b=0.5, step in [1e-6, 50], initial step 0.1. Initial weights:
uniform(-0.5, 0.5) from the cases' seed, in ffnet's own connection order. One timed call
``train_rprop(maxiter=epochs)`` per run (fresh steps each call, like the other peers'
fresh optimiser state); the call also scales the data once (O(N) Python work, included).
"""

from __future__ import annotations

import warnings

import numpy as np

from .cases import INIT_RANGE, INIT_SEED, RPROP
from .harness import Peer, PeerUnavailable


def import_ffnet():
    try:
        import ffnet
    except ImportError as exc:
        raise PeerUnavailable(
            f"ffnet not importable ({exc}); install: apt-get install -y gfortran, then "
            "pip install --no-build-isolation ffnet==0.8.6 (see benchmarks/_peers/ffnet_peer.py)"
        ) from None
    return ffnet


class FfnetPeer(Peer):
    name = "ffnet"
    comparable_sse = False   # logistic units and ffnet's own data scaling

    def __init__(self, case, dtype="float64"):
        if dtype != "float64":
            raise PeerUnavailable("ffnet computes in float64 only")
        ffnet = import_ffnet()
        self.case, self.dtype = case, dtype
        graph = ffnet.tmlgraph if case.shortcut else ffnet.mlgraph
        self.net = ffnet.ffnet(graph(case.sizes, biases=True))
        n_w = len(self.net.weights)
        if n_w != case.n_connections:
            raise PeerUnavailable(f"ffnet's graph has {n_w} weights, the case {case.n_connections}")
        self.w0 = np.random.default_rng(INIT_SEED).uniform(-INIT_RANGE, INIT_RANGE, n_w)
        self.X = np.ascontiguousarray(case.X, np.float64)
        self.T = np.ascontiguousarray(case.T, np.float64)
        self.extra = {"note": "logistic units everywhere, data scaled by ffnet: SSE not comparable"}

    def reset(self):
        self.net.weights[:] = self.w0

    def run(self, epochs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "input node takes a single value" (constant columns)
            self.net.train_rprop(self.X, self.T, a=RPROP["eta_plus"], b=RPROP["eta_minus"],
                                 mimin=1e-6, mimax=RPROP["delta_max"], xmi=RPROP["delta0"],
                                 maxiter=epochs)

    def sse(self):
        d = self.net(self.X) - self.T
        return float(np.einsum("ij,ij->", d, d))
