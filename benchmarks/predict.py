#!/usr/bin/env python
"""``MLP.predict`` against a hand-written NumPy forward pass, for every hidden activation.

The NumPy pass is what a user would write with the weights prepared once:
``f(X @ W1 + b1) @ W2 + b2 ...`` (no shortcuts), float64, BLAS held to one thread. Both
are timed by ``timeit`` (best of ``--repeats`` runs of ``--number`` calls), taking turns
(A B A B ...), on one core; reported: the best time per call of each and NumPy's time
divided by fastnet's (> 1: fastnet faster). Cases: 10,000 rows of a 32-32-4 network
and one row of it.

    python benchmarks/predict.py [--rows 10000] [--repeats 7]
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402

from fastnet import MLP  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import one_core_one_thread  # noqa: E402

ACTIVATIONS = ("proben1", "tanh", "logistic", "relu")


def numpy_forward(net):
    """A closure computing the network's outputs with NumPy (weights prepared once)."""
    W, b = net.get_params()
    layers = [(W[(j - 1, j)], b[j]) for j in range(1, len(net.hidden) + 2)]
    f = {"proben1": lambda z: z / (1.0 + np.abs(z)), "tanh": np.tanh,
         "logistic": lambda z: 1.0 / (1.0 + np.exp(-z)), "relu": lambda z: np.maximum(z, 0.0)}
    act = f[net.hidden_activation]

    def forward(X):
        a = X
        for Wj, bj in layers[:-1]:
            a = act(a @ Wj + bj)
        Wj, bj = layers[-1]
        return a @ Wj + bj
    return forward


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    one_core_one_thread()
    rng = np.random.default_rng(0)
    print(f"load {os.getloadavg()}; best of {args.repeats}, taking turns; seconds per call")
    for rows in (args.rows, 1):
        X = rng.normal(0, 1, (rows, 32))
        number = max(1, 2_000_000 // (rows * 32))
        for act in ACTIVATIONS:
            net = MLP(32, (32,), 4, shortcut=False, hidden_activation=act, seed=1)
            ref = numpy_forward(net)
            assert np.allclose(net.predict(X), ref(X), rtol=1e-12, atol=1e-12)
            best = {"fastnet": np.inf, "numpy": np.inf}
            for _ in range(args.repeats):
                for name, call in (("fastnet", lambda net=net, X=X: net.predict(X)),
                                   ("numpy", lambda ref=ref, X=X: ref(X))):
                    best[name] = min(best[name], timeit.timeit(call, number=number) / number)
            print(f"{rows:>6} rows {act:<9} fastnet {best['fastnet']:.3e}  numpy {best['numpy']:.3e}"
                  f"  fastnet x numpy {best['numpy'] / best['fastnet']:.2f}")


if __name__ == "__main__":
    main()
