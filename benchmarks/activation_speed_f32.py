#!/usr/bin/env python
"""Speed per value of the activation functions, float32 against float64, per CPU level.

The activation template of _kernels/_activations.h at both value types, both through
``_forward.activation_at_level`` (float32: 16 lanes per AVX-512 vector, 8 per AVX2, 4 in the
baseline; float64: 8, 4, 2), exp of both through ``_forward.exp_at_level``. One row of --n
values (in the L2 cache) is activated in place --calls times per measurement (every function is
branch-free, so the values it leaves behind take as long as the first ones); float32 and float64 take turns, round
after round, and the median over the rounds is reported, in ns per value, with the
ratio float64 / float32 (> 1: float32 is faster). One core; the level is the argument of
the entry points, -1 the process's own (the CPU's, capped by FASTNET_SIMD=avx2 or none).

    python benchmarks/activation_speed_f32.py
    python benchmarks/activation_speed_f32.py --levels 2 --rounds 21
    FASTNET_SIMD=avx2 python benchmarks/activation_speed_f32.py --levels -1
"""
import argparse
import os
import statistics
import time

import numpy as np

from fastnet._kernels import _forward
from fastnet.network import ACTIVATIONS

LEVELS = {2: "AVX-512", 1: "AVX2", 0: "baseline", -1: "process"}
FUNCTIONS = ("tanh", "logistic", "exp", "relu", "proben1")


def runner(name, level, dtype, n, seed=0):
    """A function of no arguments that applies `name` once to one row of n values."""
    z = np.random.default_rng(seed).normal(0.0, 3.0, n).astype(dtype)
    if name == "exp":
        return lambda: _forward.exp_at_level(level, z)
    row = z.reshape(1, -1)
    code = ACTIVATIONS[name]
    if dtype == np.float32:
        return lambda: _forward.activation_at_level(level, code, row)
    return lambda: _forward.activation_at_level(level, code, row)


def per_value(f, calls, n):
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t0) / (calls * n) * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="2,1", help="CPU levels (2 AVX-512, 1 AVX2, 0 baseline, -1 the process's)")
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--n", type=int, default=1 << 15, help="values per row")
    ap.add_argument("--calls", type=int, default=100, help="calls per measurement")
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"ns per value, one row of {args.n} values, median of {args.rounds} rounds "
          f"(float32 and float64 taking turns); load {os.getloadavg()[0]:.1f}")
    print(f"{'function':<9} {'level':<9} {'float32':>8} {'float64':>8} {'f64/f32':>8}")
    for name in args.functions.split(","):
        for level in (int(v) for v in args.levels.split(",")):
            f32 = runner(name, level, np.float32, args.n)
            f64 = runner(name, level, np.float64, args.n)
            if not f32() or not f64():
                print(f"{name:<9} {LEVELS[level]:<9} (not on this CPU or build)")
                continue
            t32, t64 = [], []
            for _ in range(args.rounds):
                t32.append(per_value(f32, args.calls, args.n))
                t64.append(per_value(f64, args.calls, args.n))
            m32, m64 = statistics.median(t32), statistics.median(t64)
            print(f"{name:<9} {LEVELS[level]:<9} {m32:8.3f} {m64:8.3f} {m64 / m32:8.2f}")


if __name__ == "__main__":
    main()
