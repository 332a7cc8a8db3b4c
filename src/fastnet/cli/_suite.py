"""The ``fastnet suite`` subcommand (its parser and what it runs)."""
import sys
import time

__all__ = ["add_suite_parser"]


def _suite(args):
    """Compare algorithms across problems with their tuning counted: each algorithm text is
    a search space ("adam(learning_rate=loguniform(1e-4, 1e-1))"); each of S studies draws K
    configurations, each trained R times on every problem; selection by validation error
    (Proben1), then performance profiles, ranks with the Friedman and Nemenyi tests, the
    Bayesian signed-rank and Lacoste's tests per pair and the expected best after k
    configurations. Writes suite.html, scores.csv, suite.json and summary.md into -o DIR and
    prints the summary (Markdown); rerun to resume."""
    from fastnet.suite import Suite, run_suite, summary_markdown
    from fastnet.suite._analyse import plural

    suite = Suite(tuple(args.problems), tuple(args.algorithms), budget=args.budget,
                  runs=args.runs, studies=args.studies, seed=args.seed, network=args.network,
                  max_epochs=args.max_epochs, limit=args.limit, target=args.target,
                  rope=args.rope, root=args.data)
    say = (lambda line: None) if args.quiet else (
        lambda line: print(line, file=sys.stderr, flush=True))
    where = (f"Dask scheduler {args.scheduler}" if args.scheduler else
             f"up to {args.jobs} local processes" if args.jobs > 1 else
             "this process" if args.jobs == 1 else "all local cores")
    say(f"fastnet: suite of {plural(len(suite.algorithms), 'algorithm')} x "
        f"{plural(len(suite.problems), 'problem')}, budget {suite.budget} x "
        f"{plural(suite.studies, 'study', 'studies')} x {plural(suite.runs, 'run')} (at most "
        f"{plural(suite.n_runs, 'run')}) on {where}; results in {args.out}")
    last = [-1.0]

    def progress(p):
        now = time.monotonic()
        if p.done == p.todo or now - last[0] >= 1.0:
            last[0] = now
            say(f"[{p.done}/{p.todo}] cells ({p.n_resumed} already done)  elapsed "
                f"{p.elapsed:.0f} s  ETA {p.eta:.0f} s  (last: {p.problem} {p.configuration})")
    try:
        result = run_suite(suite, args.out, jobs=args.jobs, scheduler=args.scheduler,
                           progress=progress, pictures=not args.no_pictures)
    except KeyboardInterrupt:
        say(f"fastnet: interrupted; the finished cells are saved in {args.out}: rerun the same "
            "command to resume.")
        raise
    print(summary_markdown(result), end="")
    say(f"fastnet: {plural(result.n_trained, 'cell')} trained, {result.n_resumed} resumed; wrote "
        f"suite.html, scores.csv, suite.json, summary.md into {args.out}")
    return 0


def add_suite_parser(sub, positive_int, seed, jobs):
    """Add ``suite`` to the subcommands ``sub`` (``positive_int``, ``seed``, ``jobs``: the
    command line's argument types)."""
    from fastnet.cli._common import _add_resumable

    su = sub.add_parser("suite", help="compare algorithms across problems, tuning counted "
                        "(resumable)", description=_suite.__doc__)
    su.add_argument("--problems", "-p", nargs="+", required=True, metavar="PROBLEM",
                    help="Proben1 data sets (cancer1, or cancer for its three permutations) "
                    "and generated tasks (xor, encoder8-3-8, parity3)")
    su.add_argument("--algorithms", "-a", nargs="+", required=True, metavar="SPEC",
                    help="algorithms with search spaces, e.g. rprop+ "
                    "\"adam(learning_rate=loguniform(1e-4, 1e-1))\" "
                    "\"backprop(learning_rate=loguniform(1e-4, 1e-2), momentum=uniform(0, 0.9))\"; "
                    "also intuniform(a, b), intloguniform(a, b), choice([v, ...])")
    su.add_argument("--budget", "-k", type=positive_int, default=16,
                    help="configurations K per study (default 16; one for a text without "
                    "distributions)")
    su.add_argument("--runs", "-r", type=positive_int, default=10,
                    help="runs R per configuration (default 10)")
    su.add_argument("--studies", "-s", type=positive_int, default=3,
                    help="studies S, each drawing its own configurations (default 3)")
    su.add_argument("--out", "-o", metavar="DIR", required=True,
                    help="output directory: cells/, suite.html, scores.csv, suite.json, "
                    "summary.md (rerun to resume)")
    su.add_argument("--network", "-n", default="pivot",
                    help="the Proben1 problems' network: pivot (default), linear, noshortcut or "
                    "a Proben1 spec such as '8+4 s'")
    su.add_argument("--max-epochs", type=positive_int, default=None,
                    help="epoch cap of the Proben1 runs (a multiple of 5, at most 3000)")
    su.add_argument("--limit", "-T", type=positive_int, default=1000,
                    help="epoch limit of the generated tasks (default 1000)")
    su.add_argument("--target", type=float, default=None,
                    help="validation squared error percentage to reach (default: per problem "
                    "the median over algorithms of their selected configurations' best "
                    "validation errors)")
    su.add_argument("--rope", type=float, default=1.0,
                    help="region of practical equivalence of the Bayesian signed-rank test, "
                    "in percentage points of error (default 1)")
    su.add_argument("--seed", type=seed, default=0, help="master seed (default 0)")
    _add_resumable(su, jobs, jobs_help="local worker processes (default 1; -1 = all cores)",
                   workers="fastnet and the data", pictures="pictures",
                   data_help="directory with the Proben1 .dt files (default $FASTNET_DATA)")
    su.set_defaults(func=_suite)
    return su
