"""Per-call cost of short ``train_rprop`` runs in two trees of fastnet, run alternately.

What a study pays around the kernels when it trains many small networks one
call at a time: set-up, the strip loop's per-strip work, result assembly. Two
cases, each timed as many calls in one process (``time.process_time`` after a
warm-up):

* ``xor``: XOR 2-2-1 (4 patterns), 20 epochs, no validation set;
* ``cancer1``: cancer1 4+2 (shortcuts), validation set, GL5 stopping, strips of 5.

Each repeat starts one fresh process per tree, A then B (A B A B ...), with that
tree's ``src`` first on ``PYTHONPATH``; prints per case the median microseconds
per call of each tree and the median of the per-repeat ratios B/A::

    FASTNET_DATA=... python benchmarks/overhead.py /work/base/src src --repeats 7

The process is pinned to one core where the OS allows it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

def worker(calls):
    import numpy as np

    from fastnet import MLP, train_rprop
    from fastnet.stopping import GL

    xor = (np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]), np.array([[0.], [1.], [1.], [0.]]))
    net_x = MLP(2, (2,), 1)
    from fastnet.datasets import load_proben1

    data = load_proben1("cancer1")
    (X, Y), (X_val, Y_val) = data.train, data.val
    net_c = MLP(X.shape[1], (4, 2), Y.shape[1])

    def xor_call(i):
        train_rprop(net_x, *xor, max_epochs=20, init_scale=0.5, seed=i)

    def cancer_call(i):
        train_rprop(net_c, X, Y, X_val, Y_val, max_epochs=300, stop=GL(5), init_scale=0.5,
                    seed=i)

    out = {}
    for name, call, n in (("xor", xor_call, calls), ("cancer1", cancer_call, max(1, calls // 20))):
        for i in range(max(1, n // 10)):             # warm-up
            call(i)
        t0 = time.process_time()
        for i in range(n):
            call(i)
        out[name] = (time.process_time() - t0) / n
    print(json.dumps(out))


def alternate(script, a, b, repeats, worker_args):
    """Run ``script --worker ...`` in a fresh process per tree, A then B, ``repeats``
    times (each tree's ``src`` first on PYTHONPATH); each worker prints one JSON
    line of seconds per case. Returns the list of those dicts per tree."""
    times = {"a": [], "b": []}
    for _ in range(repeats):
        for key, src in (("a", a), ("b", b)):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
            res = subprocess.run([sys.executable, script, "--worker", *worker_args], env=env,
                                 capture_output=True, text=True, check=True)
            times[key].append(json.loads(res.stdout.strip().splitlines()[-1]))
    return times["a"], times["b"]


def report(times_a, times_b, a, b, scale, unit):
    """Per case: the medians of each tree (seconds times ``scale``, in ``unit``) and
    the median of the per-repeat ratios B/A."""
    print(f"A = {a}, B = {b}; medians of {len(times_a)} alternating processes; "
          f"load {os.getloadavg()}")
    for case in times_a[0]:
        ta = [t[case] for t in times_a]
        tb = [t[case] for t in times_b]
        ratio = statistics.median(y / x for x, y in zip(ta, tb))
        print(f"{case:<16} A {scale * statistics.median(ta):10.3f} {unit}  "
              f"B {scale * statistics.median(tb):10.3f} {unit}  B/A {ratio:.3f}")


def pin_one_core():
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def one_core_one_thread():
    """Pin the process to one core and hold every loaded BLAS/OpenMP pool to one thread."""
    pin_one_core()
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass


def parser(doc, repeats, calls, calls_help):
    """The arguments of an A/B script: the two trees' src, repeats, calls, the worker flag."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("a", nargs="?", help="tree A's src directory")
    ap.add_argument("b", nargs="?", help="tree B's src directory")
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--calls", type=int, default=calls, help=calls_help)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return ap


def main(argv=None):
    ap = parser(__doc__, 7, 2000, "XOR calls per process (cancer1: 1/20)")
    args = ap.parse_args(argv)
    pin_one_core()
    if args.worker is not None:
        worker(int(args.worker))
        return
    if args.a is None or args.b is None:
        ap.error("give the src directories of trees A and B")
    times_a, times_b = alternate(__file__, args.a, args.b, args.repeats, [str(args.calls)])
    report(times_a, times_b, args.a, args.b, 1e6, "us/call")


if __name__ == "__main__":
    main()
