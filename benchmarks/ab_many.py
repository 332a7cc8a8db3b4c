"""``train_rprop_many`` with a list of networks in two trees of fastnet, run alternately.

The studies of ``benchmarks/many_trials.py`` (XOR 2-2-1, 8-3-8 encoder, cancer1
4+2, thyroid1 16+8 with Proben1's network; XOR and a 10-5-10 encoder with the
study's default network; iRPROP-, fixed epochs), each timed as one call (the
networks built beforehand, ``time.process_time``, median of ``--calls`` after a
warm-up) in a fresh process per tree, A then B (A B A B ...), with that tree's
``src`` first on ``PYTHONPATH``. Prints per study the median seconds of each
tree and the median of the per-repeat ratios B/A::

    FASTNET_DATA=... python benchmarks/ab_many.py /work/base/src src --repeats 5

The process is pinned to one core where the OS allows it.
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import overhead  # noqa: E402


def worker(names, calls):
    import gc

    import many_trials as mt

    from fastnet import MLP, train_rprop_many

    out = {}
    for name, data, hidden, trials, epochs, network in mt.STUDIES:
        if name.split()[0] not in names:
            continue
        X, T = mt.load(data)
        net = MLP(X.shape[1], hidden, T.shape[1], **network)
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


def main(argv=None):
    ap = overhead.parser(__doc__, 5, 5, "timed calls per study and process")
    ap.add_argument("--studies", default="XOR,encoder,cancer1,thyroid1")
    args = ap.parse_args(argv)
    overhead.pin_one_core()
    if args.worker is not None:
        worker(args.worker.split(","), args.calls)
        return
    if args.a is None or args.b is None:
        ap.error("give the src directories of trees A and B")
    times_a, times_b = overhead.alternate(__file__, args.a, args.b, args.repeats,
                                          [args.studies, "--calls", str(args.calls)])
    overhead.report(times_a, times_b, args.a, args.b, 1e3, "ms")


if __name__ == "__main__":
    main()
