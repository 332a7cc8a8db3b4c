#!/usr/bin/env python
"""A fingerprint of the float64 activation functions' bits, to compare two builds.

Hashes (SHA-256) the results of every elementwise activation, with and without its
derivative, at every CPU level this machine runs (``_forward.activation_at_level``),
and of softmax outputs (``MLP.predict``), over a dense sweep: a grid of [-800, 800],
log-spaced magnitudes from the subnormals to the largest double, a million random bit
patterns (NaNs with payloads, subnormals, infinities among them) and the edges
(+-0, +-inf, NaN, the saturation and overflow thresholds); each as one long row and
in rows of 1 to 17 values (every vector width's tail and the across-rows form of
narrow layers). A change that must leave float64 alone (a new value type in the
activation template, say) keeps every line of this output; print it before and after:

    python benchmarks/activation_bits.py > before.txt   # ... change, rebuild ...
    python benchmarks/activation_bits.py | diff before.txt -
"""
import hashlib

import numpy as np

from fastnet import MLP
from fastnet._kernels import _forward
from fastnet.network import ACTIVATIONS

ELEMENTWISE = ["linear", "proben1", "logistic", "tanh", "relu"]


def sweep():
    """The float64 inputs: a grid, magnitudes, random bits, edges."""
    rng = np.random.default_rng(48)
    mags = np.logspace(-323.5, 308.2, 200_001)
    edges = np.array([0.0, 5e-324, 2.2250738585072009e-308, 2.2250738585072014e-308, 0.55,
                      np.nextafter(0.55, 0), np.nextafter(0.55, 1), 20.0, 36.7, 36.8, 708.39,
                      709.782712893384, 709.7827128933841, 710.0, 745.13, 745.2, 746.0,
                      np.finfo(float).max, np.inf, np.nan])
    return np.concatenate([np.linspace(-800.0, 800.0, 2_000_001), mags, -mags,
                           rng.integers(0, 2**64, 1_000_000, dtype=np.uint64, endpoint=False).view(np.float64),
                           edges, -edges])


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).view(np.uint8).tobytes())
    return h.hexdigest()[:32]


def main():
    x = sweep()
    n_short = (len(x) // 1_000) * 1_000
    for level in (2, 1, 0):
        for name in ELEMENTWISE:
            for deriv in (False, True):
                layouts = {"row": x.reshape(1, -1)}
                for width in (1, 2, 3, 5, 7, 8, 9, 15, 16, 17):
                    m = (min(n_short, 170_000) // width) * width
                    layouts[f"rows{width}"] = x[:m].reshape(-1, width)
                for layout, z0 in layouts.items():
                    z = np.array(z0)
                    d = np.empty_like(z) if deriv else None
                    if not _forward.activation_at_level(level, ACTIVATIONS[name], z, d):
                        break
                    out = (z, d) if deriv else (z,)
                    print(level, name, "f'" if deriv else "f ", layout, digest(*out))
    rng = np.random.default_rng(5)
    for hidden in ("tanh", "logistic"):
        net = MLP(7, (13,), 5, hidden_activation=hidden, output_activation="softmax", seed=3)
        X = np.concatenate([rng.normal(0, 40, (3000, 7)), rng.normal(0, 1, (3000, 7))])
        print("predict softmax", hidden, digest(net.predict(X)))


if __name__ == "__main__":
    main()
