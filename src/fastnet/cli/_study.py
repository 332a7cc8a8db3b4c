"""The ``fastnet study`` subcommand (its parser and what it runs)."""
import sys

__all__ = ["add_study_parser"]


def _study(args):
    """Hamey's timing study in one command: a task and a network, algorithms with their
    parameters (lists are grids: every cell is trained), K trials each from the same initial
    weights, success within T epochs; prints Hamey's measures, Lawrence's description and
    log-rank tests, and writes a page, every trial and a summary into -o DIR (rerun to
    resume: each finished chunk of trials is kept). -j N trains the chunks in N processes,
    --scheduler on a Dask cluster."""
    from fastnet.study import Study, run_study, summary_markdown

    study = Study(args.task, tuple(args.algorithms), network=args.network, trials=args.trials,
                  limit=args.limit, success=args.success, seed=args.seed,
                  init_scale=args.init_scale, hidden_activation=args.hidden_activation,
                  output_activation=args.output_activation, shortcut=args.shortcut,
                  cost=args.cost, dtype=args.dtype)
    from fastnet.cli._progress import StudyLines

    progress = None if args.quiet else StudyLines()
    try:
        result = run_study(study, args.out, root=args.data, progress=progress,
                           pictures=not args.no_pictures, n_jobs=args.jobs,
                           scheduler=args.scheduler)
    except KeyboardInterrupt:
        if args.out is not None and not args.quiet:
            print(f"fastnet: interrupted; the finished chunks of trials are saved in "
                  f"{args.out}: rerun the same command to resume.", file=sys.stderr)
        raise
    print(summary_markdown(result))
    if args.out is not None and not args.quiet:
        print(f"fastnet: wrote study.html, trials.csv, study.json, summary.md into {args.out}",
              file=sys.stderr)
    return 0


def add_study_parser(sub, positive_int, seed):
    """Add ``study`` to the subcommands ``sub`` (``positive_int``, ``seed``: the
    command line's argument types)."""
    from fastnet.cli._common import _add_dtype, _add_resumable, _jobs_option, add_rules
    from fastnet.study._setup import ACTIVATIONS

    st = sub.add_parser("study", help="Hamey's timing study of algorithms on one task "
                        "(resumable)", description=_study.__doc__)
    st.add_argument("task", help="xor, 'encoder 10-5-10', 'parity N', a Proben1 dataset "
                    "(cancer1) or .dt file (its training set)")
    st.add_argument("--algorithms", "-a", nargs="+", default=["rprop+"], metavar="ALG",
                    help="algorithms with parameters, e.g. rprop+ "
                    "\"backprop(learning_rate=0.1, momentum=0.9)\"; a list is a grid: "
                    "\"backprop(learning_rate=[0.1, 0.5])\" (default rprop+); a rule of your "
                    "own from --rules FILE by its class name in lower case")
    st.add_argument("--network", "-n", default=None, help="layer sizes '2-2-1' or hidden "
                    "sizes '4' (default: the task's: XOR 2-2-1, encoder N-M-N, parity N-N-1, "
                    "Proben1 n-4-m)")
    st.add_argument("--trials", "-k", type=positive_int, default=100,
                    help="trials per algorithm (default 100)")
    st.add_argument("--limit", "-T", type=positive_int, default=1000,
                    help="epoch limit T (default 1000)")
    st.add_argument("--success", "-s", default="40-20-40",
                    help="success criterion: 40-20-40 (default), rc=R, or error<E (training "
                    "squared error percentage)")
    st.add_argument("--seed", type=seed, default=0, help="seed of the initial weights "
                    "(default 0; the same for every algorithm)")
    st.add_argument("--init-scale", type=float, default=1.0,
                    help="initial weights uniform in +-this (default 1.0)")
    st.add_argument("--hidden-activation", choices=ACTIVATIONS, default="tanh",
                    help="default tanh")
    st.add_argument("--output-activation", choices=ACTIVATIONS, default="logistic",
                    help="default logistic")
    st.add_argument("--shortcut", action="store_true", help="shortcut connections")
    st.add_argument("--cost", choices=("auto", "traversals", "cpu"), default="auto",
                    help="unit of the verdicts: auto (epochs where every epoch costs the "
                    "same, else connection traversals, else CPU time; the default), "
                    "traversals or cpu")
    st.add_argument("--out", "-o", metavar="DIR", default=None,
                    help="output directory: study.html, trials.csv, study.json, summary.md "
                    "(rerun to resume)")
    add_rules(st)
    _add_dtype(st)
    _add_resumable(st, _jobs_option(), jobs_help="local worker processes training chunks of "
                   "trials (default 1; -1 = all cores); the trials train alike whatever N",
                   workers="fastnet", pictures="graphs",
                   data_help="directory with the Proben1 .dt files (a Proben1 task)")
    st.set_defaults(func=_study)
    return st
