"""``train_rprop_many`` with a list of networks in two trees of fastnet, run alternately.

The studies of ``benchmarks/many_trials.py`` (XOR 2-2-1, 8-3-8 encoder, cancer1
4+2, thyroid1 16+8; iRPROP-, fixed epochs), each timed as one call (the
networks built beforehand, ``time.process_time``, median of ``--calls`` after a
warm-up) in a fresh process per tree, A then B (A B A B ...), with that tree's
``src`` first on ``PYTHONPATH``. Prints per study the median seconds of each
tree and the median of the per-repeat ratios B/A::

    FASTNET_DATA=... python benchmarks/ab_many.py /work/base/src src --repeats 5

The process is pinned to one core where the OS allows it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(names, calls):
    import gc

    sys.path.insert(0, HERE)
    import many_trials as mt

    from fastnet import MLP, train_rprop_many

    out = {}
    for name, data, hidden, trials, epochs in mt.STUDIES:
        if name.split()[0] not in names:
            continue
        X, T = mt.load(data)
        net = MLP(X.shape[1], hidden, T.shape[1])
        W0 = mt.initial_weights(net, trials)

        def nets(net=net, W0=W0):
            return [net.copy().set_weights(w) for w in W0]

        train_rprop_many(nets(), X, T, max_epochs=epochs, **mt.RPROP)       # warm-up
        times = []
        for _ in range(calls):
            built = nets()
            gc.collect()
            t0 = time.process_time()
            train_rprop_many(built, X, T, max_epochs=epochs, **mt.RPROP)
            times.append(time.process_time() - t0)
        out[name] = statistics.median(times)
    print(json.dumps(out))


def run(src, names, calls):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    res = subprocess.run([sys.executable, __file__, "--worker", ",".join(names), "--calls",
                          str(calls)], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", nargs="?", help="tree A's src directory")
    ap.add_argument("b", nargs="?", help="tree B's src directory")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=5, help="timed calls per study and process")
    ap.add_argument("--studies", default="XOR,encoder,cancer1,thyroid1")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})   # one core
    if args.worker is not None:
        worker(args.worker.split(","), args.calls)
        return
    if args.a is None or args.b is None:
        ap.error("give the src directories of trees A and B")
    names = args.studies.split(",")
    times = {"a": [], "b": []}
    for _ in range(args.repeats):
        times["a"].append(run(args.a, names, args.calls))
        times["b"].append(run(args.b, names, args.calls))
    print(f"A = {args.a}, B = {args.b}; medians of {args.repeats} alternating processes; "
          f"load {os.getloadavg()}")
    for case in times["a"][0]:
        a = [t[case] for t in times["a"]]
        b = [t[case] for t in times["b"]]
        ratio = statistics.median(y / x for x, y in zip(a, b))
        print(f"{case:<16} A {1e3 * statistics.median(a):9.3f} ms  B {1e3 * statistics.median(b):9.3f} ms"
              f"  B/A {ratio:.3f}")


if __name__ == "__main__":
    main()
