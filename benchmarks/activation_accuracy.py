#!/usr/bin/env python
"""How far each tool's float64 exp, tanh and logistic are from the exact values.

A dense sweep of each function's working range (--points per function, evenly spaced,
plus N(0, 3^2) samples for tanh and logistic, where network inputs live), evaluated by
fastnet's vector functions at every CPU level this machine runs, by the C library
(Python's ``math``), by NumPy, JAX (``jit``, x64) and PyTorch when installed. The
reference is the exact value rounded to double, computed in long double (``tanhl``,
``expl``: 11 more bits than double). Reported per tool: the largest distance in ulp
(doubles between the two values) from the exact value and from the C library, and the
share of values more than 1 and more than 2 ulp from the exact value.

The tests (tests/test_activations.py) check fastnet's functions on a sparser sweep that
includes every edge (subnormals, saturation, infinities, NaN); this script is the dense
measurement behind the accuracy figures of docs/performance.md.

    python benchmarks/activation_accuracy.py                     # 4M points per function
    python benchmarks/activation_accuracy.py --points 32000000 --functions tanh
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peers import machine  # noqa: E402

FUNCTIONS = ("tanh", "logistic", "exp")
RANGES = {"tanh": (-20.0, 20.0), "logistic": (-745.0, 40.0), "exp": (-708.0, 709.7)}
LEVELS = {2: "fastnet AVX-512", 1: "fastnet AVX2", 0: "fastnet baseline"}


def sweep(name, points, seed=0):
    lo, hi = RANGES[name]
    x = [np.linspace(lo, hi, points)]
    if name != "exp":
        x.append(np.random.default_rng(seed).normal(0.0, 3.0, points // 4))
    return np.concatenate(x)


def exact(name, x):
    """The exact value rounded to double (through long double)."""
    xl = x.astype(np.longdouble)
    with np.errstate(over="ignore"):
        if name == "tanh":
            return np.tanh(xl).astype(np.float64)
        if name == "exp":
            return np.exp(xl).astype(np.float64)
        return (1.0 / (1.0 + np.exp(-xl))).astype(np.float64)


def c_library(name, x):
    if name == "logistic":
        return None                     # the C library has no logistic
    f = math.tanh if name == "tanh" else math.exp
    return np.frompyfunc(f, 1, 1)(x).astype(np.float64)


def ulp_distance(a, b):
    """Doubles between a and b (finite values of one sign region; int64 is wide enough)."""
    def ordered(v):
        i = np.ascontiguousarray(v, dtype=np.float64).view(np.int64)
        return np.where(i < 0, np.int64(np.iinfo(np.int64).min) - i, i)
    return np.abs(ordered(a) - ordered(b))


def tools(names):
    """(label, f(name, x)) for every tool available here."""
    from fastnet._kernels import _forward
    from fastnet.network import ACTIVATIONS

    out = []
    for level, label in LEVELS.items():
        def fastnet_at(name, x, level=level):
            if name == "exp":
                return None             # exp is reached through logistic (below)
            z = np.array(x).reshape(1, -1)
            if not _forward.activation_at_level(level, ACTIVATIONS[name], z, None):
                return "unavailable"
            return z.ravel()
        out.append((label, fastnet_at))
    if "numpy" in names:
        def numpy_logistic(v):
            with np.errstate(over="ignore"):
                return 1.0 / (1.0 + np.exp(-v))
        out.append(("NumPy", lambda name, x: {"tanh": np.tanh, "exp": np.exp}.get(
            name, numpy_logistic)(x)))
    if "jax" in names:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp
            jax_fns = {"tanh": jax.jit(jnp.tanh), "exp": jax.jit(jnp.exp),
                       "logistic": jax.jit(jax.nn.sigmoid)}
            out.append(("JAX jit", lambda name, x: np.asarray(jax_fns[name](x))))
        except ImportError:
            pass
    if "torch" in names:
        try:
            import torch
            torch_fns = {"tanh": torch.tanh, "exp": torch.exp, "logistic": torch.sigmoid}
            out.append(("PyTorch", lambda name, x: torch_fns[name](torch.from_numpy(x)).numpy()))
        except ImportError:
            pass
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=4_000_000)
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--tools", default="numpy,jax,torch")
    args = ap.parse_args(argv)
    print(f"machine: {machine.cpu_model()}")
    for name in args.functions.split(","):
        x = sweep(name, args.points)
        ref = exact(name, x)
        lib = c_library(name, x)
        keep = np.isfinite(ref) & (ref != 0) & (np.abs(ref) >= np.finfo(float).tiny)
        samples = "" if name == "exp" else " and N(0, 3^2) samples"
        print(f"\n{name}: {keep.sum():,} points, evenly in {RANGES[name]}{samples}; "
              "ulp from the exact value [from the C library]")
        if lib is not None:
            d = ulp_distance(lib[keep], ref[keep])
            print(f"  {'C library':<18} max {d.max():>3}   > 1 ulp {np.mean(d > 1):8.4%}   "
                  f"> 2 ulp {np.mean(d > 2):8.4%}")
        for label, f in tools(args.tools.split(",")):
            got = f(name, x)
            if got is None or isinstance(got, str):
                continue
            got = np.asarray(got, dtype=np.float64)
            d = ulp_distance(got[keep], ref[keep])
            vs_lib = ""
            if lib is not None:
                dl = ulp_distance(got[keep], lib[keep])
                vs_lib = f"   [max {dl.max()} from the C library, points beyond 2: {np.sum(dl > 2)}]"
            print(f"  {label:<18} max {d.max():>3}   > 1 ulp {np.mean(d > 1):8.4%}   "
                  f"> 2 ulp {np.mean(d > 2):8.4%}{vs_lib}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
