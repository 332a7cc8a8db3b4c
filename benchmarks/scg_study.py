"""CPU time per trained trial-epoch of an XOR success study (Hamey 1992): the
full-batch rules (SCG, and LM and L-BFGS for reference) against rprop+, in one
process taking turns (the median of the runs, and their fastest).

    python benchmarks/scg_study.py [--task xor|encoder] [--trials 1000] [--epochs 1000] [--repeat 5]
                                   [--algorithms scg,rprop+]

xor: 2-2-1; encoder: 10-5-10 (one-hot patterns); tanh hidden units, logistic outputs, no
shortcuts, initial weights uniform in +-1, Hamey's 40-20-40 check after every epoch.
"""
import argparse
import time
import warnings

import numpy as np

from fastnet import MLP, train_many
from fastnet.exceptions import NoConvergenceWarning
from fastnet.stopping import Correct

XOR = (np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]), np.array([[0.], [1.], [1.], [0.]]))
TASKS = {"xor": (XOR, (2, (2,), 1)), "encoder": ((np.eye(10), np.eye(10)), (10, (5,), 10))}


def run(algorithm, K, T, task="xor"):
    (X, Y), (n_in, hidden, n_out) = TASKS[task]
    net = MLP(n_in, hidden, n_out, shortcut=False, hidden_activation="tanh",
              output_activation="logistic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        c0 = time.process_time()
        r = train_many(net, X, Y, algorithm=algorithm, n_trials=K, seed=1, init_scale=1.0,
                       stop=Correct(), strip=1, max_epochs=T, history=False)
        cpu = time.process_time() - c0
    epochs = np.asarray(r.epochs)
    return cpu, int(epochs.sum()), float(np.mean(np.asarray(r.stop_reason) == "correct"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=sorted(TASKS), default="xor")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--algorithms", default="scg,rprop+")
    a = ap.parse_args()
    names = a.algorithms.split(",")
    runs = {name: [] for name in names}
    for _ in range(a.repeat):
        for name in names:
            cpu, n, ok = run(name, a.trials, a.epochs, a.task)
            runs[name].append((cpu / n * 1e9, cpu, n, ok))
    median = {name: float(np.median([r[0] for r in runs[name]])) for name in names}
    base = median.get("rprop+")
    for name in names:
        per, fastest = median[name], min(r[0] for r in runs[name])
        _, cpu, n, ok = runs[name][0]
        ratio = f"{per / base:6.2f}x rprop+" if base else ""
        print(f"{name:8s} {per:8.1f} ns per trained trial-epoch (median; fastest {fastest:.1f}; "
              f"{cpu:.3f} s CPU, {n} trial-epochs, {ok:.1%} correct) {ratio}")


if __name__ == "__main__":
    main()
