"""CPU time per trained trial-epoch of an online-backpropagation success study (Hamey
1992): the lanes' queue against the strips it replaced and against fixed epochs, in one
process taking turns (A B C D A B C D ...; medians, and the fastest).

    python benchmarks/online_study.py [--trials 2000] [--epochs 1000] [--repeat 5]
                                      [--rate 0.3] [--momentum 0.0]

XOR 2-2-1, tanh hidden units, logistic output, no shortcuts, initial weights uniform in
+-1, ``Backprop("online", rate, momentum)`` (each trial its own generator of orders),
without per-epoch histories (``history=False``, as ``fastnet study``). The modes:

* **queue**: ``stop=Correct()``, ``strip=1``: the lanes' queue (a lane whose trial
  stopped takes the next at once; Hamey's check a forward pass of its own after every
  epoch);
* **strips**: the same study in the strips, a return to Python after every epoch and
  the check there (the path before the queue; the queue's history limit set to 0);
* **fixed**: ``stop=None``, every trial to T (the strip kernel, no check);
* **queue, no check**: the queue with ``ErrorBelow(1e-300)`` (no trial stops, no check's
  pass): what the check's own pass costs is the difference to **queue** per trial-epoch.
"""
import argparse
import time
import warnings

import numpy as np

from fastnet import MLP, train_many
from fastnet.exceptions import NoConvergenceWarning
from fastnet.stopping import Correct, ErrorBelow
from fastnet.training import _loop

XOR = (np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]), np.array([[0.], [1.], [1.], [0.]]))
MODES = {"queue": Correct(), "strips": Correct(), "fixed": None, "queue, no check": ErrorBelow(1e-300)}


def run(mode, algorithm, K, T):
    """(CPU seconds, trained trial-epochs, share correct) of one study in ``mode``."""
    net = MLP(2, (2,), 1, shortcut=False, hidden_activation="tanh", output_activation="logistic")
    limit = _loop.QUEUE_MAX_HISTORY
    _loop.QUEUE_MAX_HISTORY = 0 if mode == "strips" else limit
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoConvergenceWarning)
            c0 = time.process_time()
            r = train_many(net, *XOR, algorithm=algorithm, n_trials=K, seed=1, init_scale=1.0,
                           stop=MODES[mode], strip=1, max_epochs=T, history=False)
            cpu = time.process_time() - c0
    finally:
        _loop.QUEUE_MAX_HISTORY = limit
    assert r[0].setup["batch"]["queued"] == mode.startswith("queue")
    return cpu, int(np.sum(r.epochs)), float(np.mean(np.asarray(r.stop_reason) == "correct"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rate", type=float, default=0.3)
    ap.add_argument("--momentum", type=float, default=0.0)
    a = ap.parse_args()
    algorithm = f"backprop(mode='online', learning_rate={a.rate}, momentum={a.momentum})"
    run("queue", algorithm, 64, a.epochs)                        # (warm-up)
    runs = {mode: [] for mode in MODES}
    for _ in range(a.repeat):
        for mode in MODES:
            cpu, n, ok = run(mode, algorithm, a.trials, a.epochs)
            runs[mode].append((cpu / n * 1e9, cpu, n, ok))
    median = {mode: float(np.median([r[0] for r in runs[mode]])) for mode in MODES}
    for mode in MODES:
        per, fastest = median[mode], min(r[0] for r in runs[mode])
        _, cpu, n, ok = runs[mode][0]
        print(f"{mode:16s} {per:9.1f} ns per trained trial-epoch (median; fastest {fastest:.1f}; "
              f"{cpu:.3f} s CPU, {n} trial-epochs, {ok:.1%} correct) "
              f"{median['strips'] / per:7.1f}x the strips")


if __name__ == "__main__":
    main()
