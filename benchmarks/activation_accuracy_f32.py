#!/usr/bin/env python
"""The float32 activation functions checked on every float32 input (all 2^32 bit patterns).

tanh, logistic and exp of fastnet's float32 template (_kernels/_activations.h at the
value type float, reached through ``_forward``'s level entries) at every CPU level this machine
runs, against the exact value: libm's float64 function (within 2 ulp of double, far
below float's ulp) for tanh and exp, and e / (1 + e), e = exp(-|x|), in float64 for
logistic. The error is measured in ulp of float32 at the exact value, as a real number
(0.5 is the best a rounded result can do). Also checked on every input: NaN in, NaN out
(and no other NaN); tanh keeps the sign (of zero too); exp and logistic lie in their
ranges; results beyond float's range are +inf (exp) exactly where the exact value
rounds to it.

    python benchmarks/activation_accuracy_f32.py            # every input, ~5 min a level
    python benchmarks/activation_accuracy_f32.py --step 97  # every 97th bit pattern
    python benchmarks/activation_accuracy_f32.py --step 97 --jax   # and JAX's float32 beside them

``--jax`` adds JAX's own float32 functions (``jit`` of ``jnp.tanh``, ``jax.nn.sigmoid``,
``jnp.exp``, x64 off, one XLA thread) as one more "level". XLA's CPU code flushes subnormal
results to zero; those inputs are counted apart ("flushed") and left out of its error.

Prints, per function and level, the largest error, an input where it occurs and how
many inputs lie more than 1 and more than 2 ulp off.
"""
import argparse
import time

import numpy as np

from fastnet._kernels import _forward
from fastnet.network import ACTIVATIONS

LEVELS = {2: "AVX-512", 1: "AVX2", 0: "baseline", -1: "JAX"}
_JAX = {}
FUNCTIONS = ("tanh", "logistic", "exp")
CHUNK = 1 << 24


def exact(name, x):
    """The function in float64 at the float32 inputs x."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = x.astype(np.float64)
        if name == "tanh":
            return np.tanh(x)
        if name == "exp":
            return np.exp(x)
        e = np.exp(-np.abs(x))
        return np.where(x < 0, e, 1.0) / (1.0 + e)


def ulp32(ref):
    """float32's ulp at each (float64) value: 2^(floor(log2|ref|) - 23), 2^-149 at least."""
    _, e = np.frexp(np.abs(ref))
    e = np.where(ref == 0, -149 + 24, e)
    return np.ldexp(1.0, np.maximum(e - 24, -149))


def run(name, level, x):
    """The function at one level on the float32 values x (a copy); level -1: JAX's."""
    if level == -1:
        if not _JAX:
            import os
            os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
            import jax
            import jax.numpy as jnp
            _JAX.update(tanh=jax.jit(jnp.tanh), logistic=jax.jit(jax.nn.sigmoid), exp=jax.jit(jnp.exp))
        return np.asarray(_JAX[name](x))
    z = np.array(x)
    if name == "exp":
        done = _forward.exp_at_level(level, z)
    else:
        z2 = z.reshape(1, -1)
        done = _forward.activation_at_level(level, ACTIVATIONS[name], z2)
    return z if done else None


class Tally:
    """The worst error of one function at one level, and the counts."""

    def __init__(self):
        self.worst, self.where, self.over1, self.over2, self.wrong = 0.0, None, 0, 0, []
        self.flushed = 0

    def add(self, name, x, got, ref, ulp, ftz=False):
        if ftz:                      # subnormal exact results returned as zero: counted apart
            flushed = (got == 0) & (np.abs(ref) < 2.0**-126) & (ref != 0)
            self.flushed += int(np.count_nonzero(flushed))
            x, got, ref, ulp = x[~flushed], got[~flushed], ref[~flushed], ulp[~flushed]
        nan_x = np.isnan(x)
        if np.any(np.isnan(got) != nan_x):
            self.wrong.append(f"NaN at {x[np.isnan(got) != nan_x][:3]}")
        ok = ~nan_x
        x, got, ref, ulp = x[ok], got[ok].astype(np.float64), ref[ok], ulp[ok]
        # beyond float's range: +inf exactly where the exact value rounds to it
        big = ref >= float(np.finfo(np.float32).max) + 2.0**103
        if np.any(np.isinf(got) != big):
            self.wrong.append(f"overflow at {x[np.isinf(got) != big][:3]}")
        fin = ~big & ~np.isinf(got)
        err = np.abs(got[fin] - ref[fin]) / ulp[fin]
        if name == "tanh" and np.any(np.signbit(got) != np.signbit(x)):
            self.wrong.append(f"sign at {x[np.signbit(got) != np.signbit(x)][:3]}")
        if name != "tanh" and np.any(got < 0):
            self.wrong.append(f"negative at {x[got < 0][:3]}")
        if name == "logistic" and np.any(got > 1):
            self.wrong.append(f"above 1 at {x[got > 1][:3]}")
        if err.size:
            i = int(np.argmax(err))
            if err[i] > self.worst:
                self.worst, self.where = float(err[i]), float(x[fin][i])
            self.over1 += int(np.count_nonzero(err > 1))
            self.over2 += int(np.count_nonzero(err > 2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="check every STEP-th bit pattern (1: all)")
    ap.add_argument("--levels", default="2,1,0", help="CPU levels to check (2 AVX-512, 1 AVX2, 0 baseline)")
    ap.add_argument("--jax", action="store_true", help="JAX's float32 functions too (x64 off, jit)")
    args = ap.parse_args()
    levels = [int(v) for v in args.levels.split(",")] + ([-1] if args.jax else [])
    tallies = {(f, lv): Tally() for f in FUNCTIONS for lv in levels}
    missing = set()
    t0 = time.perf_counter()
    span = CHUNK * args.step
    for start in range(0, 1 << 32, span):
        x = np.arange(start, min(start + span, 1 << 32), args.step, dtype=np.uint64).astype(np.uint32).view(np.float32)
        for name in FUNCTIONS:
            ref = exact(name, x)
            ulp = ulp32(ref)
            for lv in levels:
                got = run(name, lv, x)
                if got is None:
                    missing.add(lv)
                    continue
                tallies[name, lv].add(name, x, got, ref, ulp, ftz=lv == -1)
    n = len(range(0, 1 << 32, args.step))
    print(f"float32 activations on {n} inputs (every {args.step}-th bit pattern), "
          f"{time.perf_counter() - t0:.0f} s; error in ulp of float32 at the exact value")
    print(f"{'function':<9} {'level':<9} {'worst ulp':>9}  {'at x':>16} {'> 1 ulp':>9} {'> 2 ulp':>8}  other")
    for (name, lv), t in tallies.items():
        if lv in missing:
            continue
        flushed = f"; {t.flushed} subnormal results flushed to 0" if t.flushed else ""
        print(f"{name:<9} {LEVELS[lv]:<9} {t.worst:9.4f}  {t.where!r:>16} {t.over1:9d} {t.over2:8d}  "
              f"{'; '.join(t.wrong) or 'ok'}{flushed}")
    for lv in sorted(missing):
        print(f"(level {LEVELS[lv]}: not on this CPU or build)")


if __name__ == "__main__":
    main()
