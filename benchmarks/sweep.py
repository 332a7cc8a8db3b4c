"""How fastnet's cost grows with the training-set size N and connections C.

Trains networks of several sizes on synthetic data for a fixed number of epochs
(full-batch RPROP, one thread). For each network it fits
t_epoch = t0 + b * (2 N C + C) over N by relative least squares: t0 is the fixed
per-epoch overhead and 1/b the traversal rate once past it (the rate itself grows
with layer width, from plain loops on narrow layers to BLAS on wide ones).
Prints a table and the fits; ``--json PATH`` writes the figures.

    python benchmarks/sweep.py [--epochs 200] [--json sweep.json]
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from fastnet import MLP, train_rprop  # noqa: E402

SIZES_N = (64, 256, 1024, 4096)
NETS = ((16, (4,), 4), (32, (16,), 4), (32, (32, 16), 8), (64, (64, 32), 10), (128, (96, 48), 10))


def measure(n_in, hidden, n_out, N, epochs, repeats=3):
    rng = np.random.default_rng(2024)
    X = rng.uniform(-1, 1, (N, n_in))
    T = np.eye(n_out)[rng.integers(0, n_out, N)]
    net = MLP(n_in, hidden, n_out, shortcut=False).init_weights(12345)
    train_rprop(net.copy(), X, T, variant="irprop-", max_epochs=5)  # warm-up
    times = [train_rprop(net.copy(), X, T, variant="irprop-", max_epochs=epochs).cpu_time
             for _ in range(repeats)]
    return net.n_connections, float(np.median(times)) / epochs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'net':>16s} {'C':>6s} {'N':>6s} {'ms/epoch':>10s} {'Mtrav/s':>9s}")
    for n_in, hidden, n_out in NETS:
        for N in SIZES_N:
            C, t = measure(n_in, hidden, n_out, N, args.epochs)
            trav = 2 * N * C + C
            rows.append({"layers": [n_in, *hidden, n_out], "C": C, "N": N,
                         "seconds_per_epoch": t, "traversals_per_epoch": trav})
            name = "-".join(map(str, (n_in, *hidden, n_out)))
            print(f"{name:>16s} {C:6d} {N:6d} {t * 1e3:10.4f} {trav / t / 1e6:9.0f}")
    fits = []
    print(f"\n{'net':>16s} {'t0 [us]':>8s} {'G trav/s past t0':>17s} {'worst dev':>10s}")
    for n_in, hidden, n_out in NETS:
        layers = [n_in, *hidden, n_out]
        sub = [r for r in rows if r["layers"] == layers]
        x = np.array([r["traversals_per_epoch"] for r in sub], dtype=float)
        y = np.array([r["seconds_per_epoch"] for r in sub])
        # Relative least squares (each point weighted by 1/y): small N counts as much as large.
        A = np.column_stack([np.ones_like(x), x]) / y[:, None]
        (t0, b), *_ = np.linalg.lstsq(A, np.ones_like(y), rcond=None)
        worst = float(np.max(np.abs(t0 + b * x - y) / y))
        fits.append({"layers": layers, "t0_seconds": t0, "seconds_per_traversal": b,
                     "worst_relative_deviation": worst})
        name = "-".join(map(str, layers))
        print(f"{name:>16s} {t0 * 1e6:8.2f} {1 / b / 1e9:17.2f} {worst:10.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "fits": fits, "epochs": args.epochs,
                       "date": time.strftime("%Y-%m-%d")}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
