"""Many trials of the per-weight rules in the vector lanes against one ``fastnet.train``
call per trial.

For each rule -- batch backpropagation with momentum, Quickprop, full-batch Adam and
(for reference) iRPROP- -- this script measures, in one process and alternately
(A B A B ...), the process CPU time of

* ``fastnet.train_many(net, X, Y, algorithm=..., n_trials=K, seed=s)`` (the trials
  side by side in the lanes; the K x C initial weights drawn inside the timed call),
* ``fastnet.train(...)`` called once per trial from the same initial weights (drawn
  beforehand, outside the timing),

on XOR 2-2-1 (x/(1+|x|) hidden units, linear outputs, shortcut connections, initial
weights uniform(-0.5, 0.5)), 1000 trials x 200 epochs, fixed epochs. It prints the
medians, the ratio (one call per trial / many trials) and, for equal work, the
largest relative difference of a trial's final training error between the two
and the ratio of their means (relative to errors above 1e-6). Backprop and RPROP agree to about 1e-10; Adam's
trials near a minimum (error ~1e-3) to about 1e-9; Quickprop magnifies rounding
differences (its secant step divides by a difference of slopes), so over 200
epochs its trials part (the lanes sum a gradient in another order than the
single network) and only the means compare.

    PYTHONPATH=src python benchmarks/many_rules.py [--repeats 5] [--trials 1000]
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np

import fastnet
from fastnet import MLP
from fastnet.algorithms import RPROP, Adam, Backprop, Quickprop
from fastnet.datasets import make_xor
from fastnet.training import draw_trials

RULES = [
    ("backprop", Backprop(learning_rate=0.1, momentum=0.9)),
    ("quickprop", Quickprop(epsilon=0.1)),
    ("adam", Adam(learning_rate=0.05)),
    ("irprop-", RPROP(variant="irprop-")),
]


def _cpu(fn):
    gc.collect()
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def measure(name, algorithm, K, epochs, repeats, seed=12345):
    """(median seconds of train_many, of one train call per trial, ratio)."""
    X, Y = make_xor().train
    net = MLP(2, (2,), 1)
    W, _ = draw_trials(net, K, seed)

    def many():
        return fastnet.train_many(net, X, Y, algorithm=algorithm, n_trials=K, seed=seed,
                                  max_epochs=epochs).train_error[:, -1]

    def single():
        return np.array([fastnet.train(net.copy().set_weights(W[i]), X, Y, algorithm=algorithm,
                                       max_epochs=epochs).train_error[-1] for i in range(K)])

    fastnet.train_many(net, X, Y, algorithm=algorithm, n_trials=8, seed=seed, max_epochs=epochs)
    fastnet.train(net.copy().set_weights(W[0]), X, Y, algorithm=algorithm, max_epochs=epochs)
    a_times, b_times = [], []                       # (after a warm-up call of each)
    for _ in range(repeats):
        ta, ea = _cpu(many)
        tb, eb = _cpu(single)
        a_times.append(ta)
        b_times.append(tb)
    dev = float(np.max(np.abs(ea - eb) / np.maximum(np.abs(eb), 1e-6)))   # (XOR errors reach ~0)
    a, b = statistics.median(a_times), statistics.median(b_times)
    return a, b, b / a, dev, float(ea.mean() / eb.mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--rules", nargs="*", default=None, help="e.g. quickprop backprop")
    args = ap.parse_args()
    print(f"XOR 2-2-1, {args.trials} trials x {args.epochs} epochs, process CPU time, "
          f"medians of {args.repeats} (alternate runs)")
    print(f"{'rule':<10} {'train_many':>11} {'train x K':>11} {'ratio':>7}  {'max rel dev':>11}"
          f"  {'mean ratio':>10}")
    for name, algorithm in RULES:
        if args.rules and name not in args.rules:
            continue
        a, b, r, dev, mean = measure(name, algorithm, args.trials, args.epochs, args.repeats)
        print(f"{name:<10} {a:>10.4f}s {b:>10.4f}s {r:>6.1f}x  {dev:>11.1e}  {mean:>10.6f}")


if __name__ == "__main__":
    main()
