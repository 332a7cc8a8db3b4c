"""The ``fastnet`` command line (also ``python -m fastnet``). Only this module prints."""
import argparse
import sys

import numpy as np

__all__ = ["main"]


def _demo(args):
    """A small experiment on generated tasks: works on a fresh install, no data."""
    from fastnet import MLP, train_rprop
    from fastnet.datasets import make_encoder, make_teacher, make_xor
    from fastnet.stopping import Correct, GL, MaxEpochs

    import warnings

    from fastnet.exceptions import NoConvergenceWarning

    # Failed trials are part of the measurement here (Hamey), not a problem to warn about.
    warnings.simplefilter("ignore", NoConvergenceWarning)
    seeds = np.random.SeedSequence(args.seed).spawn(3)
    rows = []

    def run_trials(name, data, make_net, n_runs, seed_seq, **kw):
        X, T = data.train
        epochs, successes, cpu, trav, errors = [], 0, 0.0, 0, []
        for child in seed_seq.spawn(n_runs):
            net = make_net()
            val = data.valid if data.valid is not None else (None, None)
            test = {"X_test": data.test[0], "Y_test": data.test[1]} if data.test is not None else {}
            r = train_rprop(net, X, T, *val, seed=child, **test, **kw)
            epochs.append(r.epochs)
            successes += r.stop_reason in ("correct", "GL5")
            cpu += r.cpu_time
            trav += r.traversals.total
            if r.final_test is not None:
                errors.append(r.final_test.squared_error_percentage)
        rows.append((name, n_runs, successes, int(np.median(epochs)),
                     float(np.median(errors)) if errors else float("nan"), cpu, trav))

    run_trials("XOR 2-2-1 (success = correct)", make_xor(),
               lambda: MLP(2, (2,), 1, shortcut=False, hidden_activation="tanh",
                           output_activation="logistic"),
               args.runs, seeds[0], stop=Correct(0.4), strip=1, max_epochs=1000, init_scale=1.0)
    run_trials("encoder 10-5-10 (success = correct)", make_encoder(10, 5),
               lambda: MLP(10, (5,), 10, shortcut=False, hidden_activation="tanh",
                           output_activation="logistic"),
               args.runs, seeds[1], stop=Correct(0.4), strip=1, max_epochs=1000, init_scale=1.0)
    teacher = make_teacher(K=5.0, n_train=500, n_valid=250, n_test=2000, seed=args.seed)
    run_trials("teacher K=5, 5-5-1 (GL5 early stop)", teacher,
               lambda: MLP(5, (5,), 1, shortcut=False, hidden_activation="tanh"),
               args.runs, seeds[2], stop=GL(5) | MaxEpochs(2000), max_epochs=2000,
               init_scale=0.5)

    print(f"fastnet demo: {args.runs} RPROP runs per task, master seed {args.seed}")
    print(f"{'task':40s} {'runs':>4s} {'stop':>4s} {'med ep':>6s} {'med test E':>10s} "
          f"{'CPU s':>7s} {'traversals/CPU s':>17s}")
    for name, n, succ, ep, err, cpu, trav in rows:
        rate = trav / cpu if cpu > 0 else float("inf")
        print(f"{name:40s} {n:4d} {succ:4d} {ep:6d} {err:10.3f} {cpu:7.3f} {rate:17.3g}")
    print("stop = runs that stopped by their criterion (correct / GL5) rather than the epoch "
          "limit; test E = squared error percentage (Proben1).")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="fastnet", description="Fast small feed-forward networks, measured honestly.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser("demo", help="run a small experiment on generated tasks (no data needed)",
                          description=_demo.__doc__)
    demo.add_argument("--runs", type=int, default=10, help="runs per task (default 10)")
    demo.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None):
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    if getattr(args, "runs", 1) < 1:
        parser.error("--runs must be >= 1")
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
