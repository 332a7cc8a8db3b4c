"""Per-epoch CPU time of ``train_rprop`` in two builds of fastnet, run alternately.

For kernel changes that must not cost speed: build the old version in a copy
(``git worktree add /tmp/old main && cd /tmp/old && python setup.py build_ext
--inplace``), then

    python benchmarks/ab_builds.py /tmp/old/src src --repeats 7 --levels default,avx2

``--activation tanh`` (or logistic, relu) gives the hidden units another
activation than Proben1's x/(1+|x|); the outputs stay linear.

Each repeat starts one fresh process per build, A then B (A B A B ...), with
that build's ``src`` first on ``PYTHONPATH`` and ``FASTNET_SIMD`` set to the level
(``default`` leaves it unset); each process times every case with
``time.process_time`` after a warm-up. Prints, per level and case, the median
seconds per epoch of each build and the median of the per-repeat ratios B/A.
The process is pinned to one core where the OS allows it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# name: (inputs, hidden, outputs, patterns, timed epochs, shortcut connections)
CASES = {
    "8-4-2 x256": (8, (4,), 2, 256, 50000, True),
    "120-16-3 x4096": (120, (16,), 3, 4096, 500, True),
    "100-200-10 x4096": (100, (200,), 10, 4096, 40, True),
    "21-16-8-3 x3600": (21, (16, 8), 3, 3600, 500, True),       # like case C (thyroid1)
    "128-64-32-10 x4096": (128, (64, 32), 10, 4096, 100, False),  # like case G
    "32-32-4 x4096": (32, (32,), 4, 4096, 300, False),          # case S of activations.py
}


def worker(names, activation="proben1"):
    import numpy as np

    import fastnet
    from fastnet import MLP, train_rprop

    out = {"fastnet": os.path.dirname(fastnet.__file__)}
    for name in names:
        n_in, hidden, n_out, n, epochs, shortcut = CASES[name]
        rng = np.random.default_rng(n_in * 1000 + n)
        X = rng.uniform(-1, 1, (n, n_in))
        Y = (rng.uniform(0, 1, (n, n_out)) > 0.5).astype(float)
        net = MLP(n_in, hidden, n_out, shortcut=shortcut,
                  hidden_activation=activation).init_weights(1, scale=0.5)
        train_rprop(net.copy(), X, Y, max_epochs=max(2, epochs // 10))  # warm-up
        t0 = time.process_time()
        train_rprop(net, X, Y, max_epochs=epochs)
        out[name] = (time.process_time() - t0) / epochs
    print(json.dumps(out))


def run(src, level, names, activation):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    env.pop("FASTNET_SIMD", None)
    if level != "default":
        env["FASTNET_SIMD"] = level
    res = subprocess.run([sys.executable, __file__, "--worker", ",".join(names),
                          "--activation", activation], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", nargs="?", help="src folder of build A (the baseline)")
    ap.add_argument("b", nargs="?", help="src folder of build B")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--levels", default="default", help="comma-separated: default, avx2, none")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated names of CASES (default: all)")
    ap.add_argument("--activation", default="proben1",
                    help="the hidden units' activation: proben1, tanh, logistic or relu")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker.split(","), args.activation)
        return
    if not (args.a and args.b):
        ap.error("give the src folders of both builds")
    names = args.cases.split(",")
    try:
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    except (AttributeError, OSError):
        pass
    for level in args.levels.split(","):
        times = {"a": {n: [] for n in names}, "b": {n: [] for n in names}}
        for _ in range(args.repeats):
            for build, src in (("a", args.a), ("b", args.b)):
                res = run(src, level, names, args.activation)
                for n in names:
                    times[build][n].append(res[n])
        print(f"level {level}, {args.activation} hidden units: {args.repeats} repeats, "
              f"A = {args.a}, B = {args.b}")
        print(f"  {'case':<20} {'A ms/epoch':>11} {'B ms/epoch':>11} {'B/A':>7}  (ratios min-max)")
        for n in names:
            ratios = [b / a for a, b in zip(times["a"][n], times["b"][n])]
            print(f"  {n:<20} {1e3 * statistics.median(times['a'][n]):>11.4f} "
                  f"{1e3 * statistics.median(times['b'][n]):>11.4f} {statistics.median(ratios):>7.3f}"
                  f"  ({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
