"""A user's own rule in a success study: ``step_many`` (over all trials at once) against the
shipped rule it rewrites and the per-network ``step``, per trained trial-epoch.

XOR 2-2-1 (tanh hidden, logistic output, no shortcuts), ``train_many(..., stop=Correct(),
strip=1, max_epochs=T, history=False)``, CPU time per trained trial-epoch (the epochs the
trials trained, summed). Each configuration runs in a process of its own, the processes
taking turns round after round (A B C ... A B C ...), and each makes an untimed call of
200 trials before its timed one (an idle worker's memory goes cold on shared machines).
Medians over the rounds; ratios from the same rounds. ``--levels default,avx2,none`` runs
every configuration at each kernel level (``FASTNET_SIMD``).

    python benchmarks/own_rule.py --trials 20000 --rounds 5 --levels default,avx2,none
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RULES = {
    "rprop+": "rprop+",
    "backprop(momentum)": "backprop(learning_rate=0.5, momentum=0.9)",
    "step_many momentum": "MANY",
    "step momentum": "STEP",
}
#: Trials of the per-network rule (Python per network and epoch: thousands of times slower).
STEP_TRIALS = 50


def _worker(rule, trials, limit, seed):
    """One timed study of ``rule`` (after an untimed one); prints a JSON line."""
    import warnings
    from dataclasses import dataclass

    import numpy as np

    from fastnet import MLP, train_many
    from fastnet._kernels import _simd
    from fastnet.algorithms import Algorithm
    from fastnet.datasets import make_xor
    from fastnet.stopping import Correct

    @dataclass(frozen=True)
    class MomentumMany(Algorithm):
        learning_rate: float = 0.5
        momentum: float = 0.9

        def init_state_many(self, weights):
            return np.zeros_like(weights)

        def step_many(self, weights, gradient, error, state):
            change = -self.learning_rate * gradient + self.momentum * state
            return weights + change, change

    @dataclass(frozen=True)
    class Momentum(Algorithm):
        learning_rate: float = 0.5
        momentum: float = 0.9

        def init_state(self, weights):
            return np.zeros_like(weights)

        def step(self, weights, gradient, error, state):
            change = -self.learning_rate * gradient + self.momentum * state
            return weights + change, change

    algorithm = {"MANY": MomentumMany(), "STEP": Momentum()}.get(rule, rule)
    X, Y = make_xor().train
    net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="logistic", shortcut=False)
    kw = dict(stop=Correct(), strip=1, max_epochs=limit, history=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train_many(net, X, Y, algorithm=algorithm, n_trials=min(200, trials), seed=seed + 1, **kw)
        t0 = time.process_time()
        r = train_many(net, X, Y, algorithm=algorithm, n_trials=trials, seed=seed, **kw)
        cpu = time.process_time() - t0
    epochs = int(r.epochs.sum())
    print(json.dumps({"cpu": cpu, "epochs": epochs, "ns": cpu / epochs * 1e9,
                      "level": _simd.simd_level(), "method": r[0].setup["batch"]["method"]}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=20000)
    p.add_argument("--limit", type=int, default=1000, help="epoch limit T")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--levels", default="default", help="default,avx2,none")
    p.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        rule, trials, limit, seed = a.worker
        _worker(rule, int(trials), int(limit), int(seed))
        return 0
    levels = a.levels.split(",")
    times = {(lv, name): [] for lv in levels for name in RULES}
    meta = {}
    for _ in range(a.rounds):
        for lv in levels:
            env = dict(os.environ)
            env.pop("FASTNET_SIMD", None)
            if lv != "default":
                env["FASTNET_SIMD"] = lv
            for name, rule in RULES.items():
                trials = STEP_TRIALS if rule == "STEP" else a.trials
                out = subprocess.run([sys.executable, __file__, "--worker", rule, str(trials),
                                      str(a.limit), str(a.seed)], env=env, check=True,
                                     capture_output=True, text=True).stdout
                row = json.loads(out.strip().splitlines()[-1])
                times[(lv, name)].append(row["ns"])
                meta[(lv, name)] = row
    print(f"XOR 2-2-1 success study, T = {a.limit}, {a.trials} trials ({STEP_TRIALS} for the "
          f"per-network step), {a.rounds} rounds; CPU ns per trained trial-epoch, medians")
    for lv in levels:
        base = statistics.median(times[(lv, "rprop+")])
        ref = statistics.median(times[(lv, "backprop(momentum)")])
        print(f"\nlevel {lv} (kernels: {meta[(lv, 'rprop+')]['level']})")
        print("| rule | ns | x rprop+ | x backprop(momentum) | method |")
        print("|---|---:|---:|---:|---|")
        for name in RULES:
            m = statistics.median(times[(lv, name)])
            print(f"| {name} | {m:.0f} | {m / base:.2f} | {m / ref:.2f} | "
                  f"{meta[(lv, name)]['method']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
