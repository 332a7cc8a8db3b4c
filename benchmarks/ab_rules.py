"""CPU time of every per-weight rule's paths in two builds of fastnet, run alternately.

For changes to the rules' plumbing (their table, records, epoch loops) that must
cost no speed anywhere: one network (each rule, a small and a larger net, online
backpropagation, a short ``train`` call), trials in the vector lanes (fixed epochs:
the tiny XOR kernel and the generic lanes) and a success study in the lanes' queue.
Build the old version in a copy (``git worktree add /tmp/old <rev> && cd /tmp/old
&& python setup.py build_ext --inplace``), then

    python benchmarks/ab_rules.py /tmp/old/src src --repeats 5

Each repeat starts one fresh process per build, A then B, with that build's ``src``
first on ``PYTHONPATH``; each process times every case with ``time.process_time``
after a warm-up. Prints per case the median seconds of each build and the median
of the per-repeat ratios B/A (below 1: B is faster).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _cases():
    import numpy as np

    from fastnet import MLP, train, train_many
    from fastnet.datasets import make_xor
    from fastnet.stopping import Correct

    rng = np.random.default_rng(0)
    small = (rng.uniform(-1, 1, (256, 8)), (rng.uniform(0, 1, (256, 2)) > 0.5) * 1.0,
             MLP(8, (4,), 2, seed=1))
    large = (rng.uniform(-1, 1, (3600, 21)), (rng.uniform(0, 1, (3600, 3)) > 0.7) * 1.0,
             MLP(21, (16, 8), 3, seed=2))
    X, Y = make_xor().train
    xor = MLP(2, (2,), 1, hidden_activation="tanh", output_activation="logistic", shortcut=False)
    Xe = np.eye(10)
    enc = MLP(10, (5,), 10, hidden_activation="tanh", output_activation="logistic",
              shortcut=False)
    rules = {"irprop-": "irprop-", "rprop+": "rprop+", "quickprop": "quickprop",
             "adam": "adam(learning_rate=0.01)", "backprop": "backprop(learning_rate=1e-5, "
             "momentum=0.5)"}
    cases = {}
    for name, spec in rules.items():
        for size, (Xd, Yd, net), epochs in (("8-4-2x256", small, 40000), ("21-16-8-3x3600", large, 600)):
            cases[f"one {name} {size}"] = (
                lambda Xd=Xd, Yd=Yd, net=net, spec=spec, epochs=epochs:
                train(net.copy(), Xd, Yd, algorithm=spec, max_epochs=epochs, strip=epochs))
    cases["one online 8-4-2x256 x4000"] = lambda: train(
        small[2].copy(), small[0], small[1], algorithm="backprop(learning_rate=1e-3, mode='online')",
        max_epochs=4000, seed=1)
    cases["train() xor 10 epochs x2000"] = lambda: [
        train(xor.copy(), X, Y, algorithm="irprop-", max_epochs=10, init_scale=0.5, seed=s)
        for s in range(2000)]
    for name in ("rprop+", "irprop-"):
        cases[f"lanes {name} xor 10000x200"] = (
            lambda name=name: train_many(xor, X, Y, algorithm=name, n_trials=10000, seed=1,
                                         init_scale=1.0, max_epochs=200, history=False))
    for name in ("rprop+", "quickprop", "adam", "backprop"):
        cases[f"lanes {name} encoder 2000x200"] = (
            lambda spec=rules[name]: train_many(enc, Xe, Xe, algorithm=spec, n_trials=2000,
                                                seed=1, init_scale=1.0, max_epochs=200,
                                                history=False))
    cases["queue rprop+ xor study 20000"] = lambda: train_many(
        xor, X, Y, algorithm="rprop+", n_trials=20000, seed=1, init_scale=1.0, max_epochs=1000,
        stop=Correct(), strip=1, history=False)
    cases["queue adam encoder study 2000"] = lambda: train_many(
        enc, Xe, Xe, algorithm="adam(learning_rate=0.05)", n_trials=2000, seed=1, init_scale=1.0,
        max_epochs=400, stop=Correct(), strip=1, history=False)
    return cases


def worker():
    import warnings
    warnings.simplefilter("ignore")
    out = {}
    for name, run in _cases().items():
        run()                                   # warm-up
        t0 = time.process_time()
        run()
        out[name] = time.process_time() - t0
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="src directory of build A (the old one)")
    ap.add_argument("b", help="src directory of build B")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    runs = {"A": [], "B": []}
    for _ in range(args.repeats):
        for tag, src in (("A", args.a), ("B", args.b)):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
            cmd = [sys.executable, os.path.abspath(__file__), "--worker"]
            if hasattr(os, "sched_setaffinity"):
                cmd = ["taskset", "-c", "0"] + cmd
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs[tag].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{'case':34s} {'A s':>9s} {'B s':>9s} {'B/A':>6s}")
    for name in runs["A"][0]:
        a = [r[name] for r in runs["A"]]
        b = [r[name] for r in runs["B"]]
        ratio = statistics.median(y / x for x, y in zip(a, b))
        print(f"{name:34s} {statistics.median(a):9.4f} {statistics.median(b):9.4f} {ratio:6.3f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        main()
