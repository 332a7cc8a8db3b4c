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
    prints the summary (Markdown); rerun to resume. --baseline-suite runs the baseline
    database's suite (every algorithm fastnet ships) and writes the database into DIR too;
    --baselines trains only the given algorithms and compares them beside the database's."""
    from fastnet.suite import run_suite, summary_markdown
    from fastnet.suite._analyse import plural

    suite, database = _setup(args)
    say = (lambda line: None) if args.quiet else (
        lambda line: print(line, file=sys.stderr, flush=True))
    where = (f"Dask scheduler {args.scheduler}" if args.scheduler else
             f"up to {args.jobs} local processes" if args.jobs > 1 else
             "this process" if args.jobs == 1 else "all local cores")
    beside = "" if database is None else (
        f" beside the {plural(len(database.algorithms), 'baseline')} of {database.where}")
    say(f"fastnet: suite of {plural(len(suite.algorithms), 'algorithm')}{beside} x "
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
    run = dict(jobs=args.jobs, scheduler=args.scheduler, progress=progress,
               pictures=not args.no_pictures)
    try:
        if args.baseline_suite:
            from fastnet.suite._compare import build_database

            result = build_database(suite, args.out, command=_command(args), **run)
        else:
            result = run_suite(suite, args.out, baselines=database, **run)
    except KeyboardInterrupt:
        say(f"fastnet: interrupted; the finished cells are saved in {args.out}: rerun the same "
            "command to resume.")
        raise
    print(summary_markdown(result), end="")
    extra = ", baselines.json, baselines.csv.gz" if args.baseline_suite else ""
    say(f"fastnet: {plural(result.n_trained, 'cell')} trained, {result.n_resumed} resumed; wrote "
        f"suite.html, scores.csv, suite.json, summary.md{extra} into {args.out}")
    return 0


def _setup(args):
    """(Suite, baseline database or None) of the command line."""
    from fastnet.suite import Suite

    if args.baseline_suite and args.baselines is not None:
        raise ValueError("`baseline_suite` and `baselines` exclude each other: the first makes "
                         "a database, the second compares against one.")
    if args.baselines is not None:
        from fastnet.suite._compare import suite_beside
        from fastnet.suite._database import baselines

        if not args.algorithms:
            raise ValueError("`algorithms` must name the new algorithms to compare against "
                             "the baselines, got none.")
        changed = [o for o, v in (("--budget", args.budget), ("--runs", args.runs),
                                  ("--studies", args.studies), ("--seed", args.seed),
                                  ("--network", args.network), ("--max-epochs", args.max_epochs),
                                  ("--limit", args.limit), ("--target", args.target),
                                  ("--dtype", None if args.dtype == "float64" else args.dtype))
                   if v is not None]
        if changed:
            raise ValueError(f"`baselines`: the set-up comes from the database (its budget, "
                             f"runs, studies, seed, networks, epoch caps and targets); drop "
                             f"{', '.join(changed)}.")
        db = baselines(None if args.baselines == "shipped" else args.baselines)
        return suite_beside(db, args.algorithms, problems=args.problems, rope=args.rope,
                            root=args.data), db
    given = {k: v for k, v in (("budget", args.budget), ("runs", args.runs),
                               ("studies", args.studies), ("seed", args.seed),
                               ("network", args.network), ("max_epochs", args.max_epochs),
                               ("limit", args.limit), ("dtype", args.dtype)) if v is not None}
    if args.baseline_suite:
        from fastnet.suite._preset import baseline_suite

        if args.problems:
            given["problems"] = tuple(args.problems)
        if args.algorithms:
            given["algorithms"] = tuple(args.algorithms)
        return baseline_suite(root=args.data, rope=args.rope,
                              target="frozen" if args.target is None else args.target,
                              **given), None
    for name in ("problems", "algorithms"):
        if not getattr(args, name):
            raise ValueError(f"`{name}` is required (unless --baseline-suite or --baselines).")
    return Suite(tuple(args.problems), tuple(args.algorithms), target=args.target,
                 rope=args.rope, root=args.data, **given), None


def _command(args):
    """The command line that ``args`` came from, in a canonical form (for the manifest)."""
    import shlex

    words = ["fastnet", "suite", "--baseline-suite", "-o", args.out, "-j", str(args.jobs)]
    for opt, v in (("--problems", args.problems), ("--algorithms", args.algorithms)):
        if v:
            words += [opt, *v]
    for path in args.rules or ():
        words += ["--rules", path]
    for opt, v in (("--budget", args.budget), ("--runs", args.runs), ("--studies", args.studies),
                   ("--seed", args.seed), ("--network", args.network),
                   ("--max-epochs", args.max_epochs), ("--limit", args.limit),
                   ("--target", args.target), ("--scheduler", args.scheduler),
                   ("--dtype", None if args.dtype == "float64" else args.dtype)):
        if v is not None:
            words += [opt, str(v)]
    return " ".join(shlex.quote(w) for w in words)


def _target(text):
    """--target's type: a number or ``frozen``."""
    import argparse

    if text == "frozen":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number or 'frozen', got {text!r}") from None


def add_suite_parser(sub, positive_int, seed, jobs):
    """Add ``suite`` to the subcommands ``sub`` (``positive_int``, ``seed``, ``jobs``: the
    command line's argument types)."""
    from fastnet.cli._common import _add_dtype, _add_resumable, add_rules

    su = sub.add_parser("suite", help="compare algorithms across problems, tuning counted "
                        "(resumable)", description=_suite.__doc__)
    su.add_argument("--problems", "-p", nargs="+", metavar="PROBLEM",
                    help="Proben1 data sets (cancer1, or cancer for its three permutations) "
                    "and generated tasks (xor, encoder8-3-8, parity3); required unless "
                    "--baseline-suite or --baselines (default: the database's problems)")
    su.add_argument("--algorithms", "-a", nargs="+", metavar="SPEC",
                    help="algorithms with search spaces, e.g. rprop+ "
                    "\"adam(learning_rate=loguniform(1e-4, 1e-1))\" "
                    "\"backprop(learning_rate=loguniform(1e-4, 1e-2), momentum=uniform(0, 0.9))\"; "
                    "also intuniform(a, b), intloguniform(a, b), choice([v, ...]); a rule of "
                    "your own from --rules FILE by its class name in lower case")
    su.add_argument("--budget", "-k", type=positive_int, default=None,
                    help="configurations K per study (default 16; one for a text without "
                    "distributions)")
    su.add_argument("--runs", "-r", type=positive_int, default=None,
                    help="runs R per configuration (default 10)")
    su.add_argument("--studies", "-s", type=positive_int, default=None,
                    help="studies S, each drawing its own configurations (default 3)")
    su.add_argument("--out", "-o", metavar="DIR", required=True,
                    help="output directory: cells/, suite.html, scores.csv, suite.json, "
                    "summary.md (rerun to resume)")
    su.add_argument("--network", "-n", default=None,
                    help="the Proben1 problems' network: pivot (default), linear, noshortcut or "
                    "a Proben1 spec such as '8+4 s'")
    su.add_argument("--max-epochs", type=positive_int, default=None,
                    help="epoch cap of the Proben1 runs (a multiple of 5, at most 3000)")
    su.add_argument("--limit", "-T", type=positive_int, default=None,
                    help="epoch limit of the generated tasks (default 1000)")
    su.add_argument("--target", type=_target, default=None,
                    help="validation squared error percentage to reach, or 'frozen': per "
                    "problem the frozen targets shipped with fastnet, which never move with the "
                    "algorithms (default: per problem the median over algorithms of their "
                    "selected configurations' best validation errors; --baseline-suite: "
                    "frozen)")
    su.add_argument("--rope", type=float, default=1.0,
                    help="region of practical equivalence of the Bayesian signed-rank test, "
                    "in percentage points of error (default 1)")
    su.add_argument("--seed", type=seed, default=None, help="master seed (default 0)")
    su.add_argument("--baseline-suite", action="store_true",
                    help="run the baseline database's suite (every algorithm fastnet ships with "
                    "its search space on Proben1's 15 problems, partitioning 1, and xor, "
                    "encoder8-3-8, parity3; budget 8, 3 runs, 1 study, at most 1000 epochs, frozen "
                    "targets; -k/-r/-s/-p/-a/--max-epochs change it) and write baselines.json and "
                    "baselines.csv.gz into -o DIR")
    su.add_argument("--baselines", nargs="?", const="shipped", default=None, metavar="DIR",
                    help="compare the algorithms of -a against a baseline database (default the "
                    "one shipped in fastnet, or DIR as --baseline-suite wrote it): only they "
                    "are trained, on the database's problems (or those of -p), seeds, budget and "
                    "targets")
    _add_resumable(su, jobs, jobs_help="local worker processes (default 1; -1 = all cores)",
                   workers="fastnet and the data", pictures="pictures",
                   data_help="directory with the Proben1 .dt files (default $FASTNET_DATA)")
    _add_dtype(su)
    add_rules(su)
    su.set_defaults(func=_suite)
    return su
