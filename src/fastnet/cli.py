"""The ``fastnet`` command line (also ``python -m fastnet``).

Only this module (and its progress lines, ``fastnet._progress``) prints.

Subcommands: ``datasets`` (``list``, ``fetch``), ``train`` (one run), ``bench`` (an
experiment to a result file), ``report``, ``compare``, ``reproduce proben1 ...`` and
``demo``. Every one has ``--help``. User errors (unknown problems, missing data,
malformed result files) print one ``fastnet: error: ...`` line to stderr and return
a non-zero status, without a traceback.
"""
import argparse
import os
import sys
import time
import warnings

from fastnet._progress import EpochProgress, RunProgress, TaskProgress

__all__ = ["main", "build_parser"]

#: Exit status for errors the user can fix (bad names, missing data, bad files).
EXIT_USER_ERROR = 1
#: Exit status for command-line usage errors (argparse's convention).
EXIT_USAGE = 2
#: Exit status after Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


class _UserError(Exception):
    """An error whose message is all the user needs (no traceback)."""


def _err(*parts):
    print(*parts, file=sys.stderr)


#: Library parameter names that differ from the option feeding them, with the options'
#: `dest` to try in turn (the others match: `max_epochs` is --max-epochs).
_LIBRARY_NAMES = {"name": ("problems", "problem"), "networks": ("networks", "network"),
                  "spec": ("networks", "network"), "root": ("data",), "results": ("files",),
                  "path": ("file",)}


def _in_options(message, parser):
    """``message`` with the library's parameter names in backticks (`max_epochs`) replaced
    by what the user typed on the command line of `parser` (`--max-epochs`)."""
    import re

    typed = {}
    for action in parser._actions:
        if action.option_strings:
            typed[action.dest] = max(action.option_strings, key=len)
        elif action.dest != "help":
            typed[action.dest] = action.metavar or action.dest

    def option(m):
        for dest in _LIBRARY_NAMES.get(m.group(1), (m.group(1),)):
            if dest in typed:
                return f"`{typed[dest]}`"
        return m.group(0)
    return re.sub(r"`(\w+)`", option, message)


def _command_parser(parser, func):
    """The (sub)parser whose command runs `func`."""
    todo = [parser]
    while todo:
        p = todo.pop()
        if p.get_default("func") is func:
            return p
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return parser


# --------------------------------------------------------------------------- datasets

def _datasets_list(args):
    """List the 15 Proben1 problems and whether their files are present."""
    from fastnet.datasets import list_proben1, proben1_search_dirs

    rows = list_proben1(args.data)
    print("Proben1 data searched in: " + ", ".join(str(d) for d in proben1_search_dirs(args.data)))
    print(f"{'problem':10s} {'kind':15s} {'inputs':>6s} {'outputs':>7s} {'examples':>8s}  files")
    for r in rows:
        found = sum(p is not None for p in r.paths)
        where = f"present in {r.paths[0].parent}" if r.available else (
            f"{found} of 3 present" if found else "missing")
        print(f"{r.problem:10s} {r.kind:15s} {r.n_in:6d} {r.n_out:7d} {r.n_examples:8d}  {where}")
    n = sum(r.available for r in rows)
    print(f"{n} of {len(rows)} problems present.")
    if n < len(rows):
        print("Fetch the data with `fastnet datasets fetch`, or set FASTNET_DATA to a directory "
              "holding the .dt files.")
    return 0


def _datasets_fetch(args):
    """Download the Proben1 archive and install its 45 files, SHA-256 verified."""
    from fastnet.datasets import DEFAULT_URL, fetch_proben1

    target = fetch_proben1(args.url or DEFAULT_URL, args.dest, force=args.force,
                           timeout=args.timeout)
    print(f"Proben1 data (45 files, SHA-256 verified) in {target}")
    if args.dest is not None:
        print(f"Use it with --data {target} or FASTNET_DATA={target}.")
    return 0


# --------------------------------------------------------------------------- train

def _options(args):
    opts = {}
    if getattr(args, "max_epochs", None) is not None:
        opts["max_epochs"] = args.max_epochs
    if getattr(args, "variant", None) is not None:
        opts["variant"] = args.variant
    return opts


def _train(args):
    """Train one network on one Proben1 dataset and print the result and set-up."""
    from fastnet.rprop import train_rprop
    from fastnet.datasets import load_proben1
    from fastnet.experiment import build_network, expand_problems, training_arguments

    names = expand_problems(args.problem)
    if len(names) != 1:
        raise _UserError(f"`train` takes one dataset such as {names[0]!r}, got {args.problem!r} "
                         f"({len(names)} datasets); use `fastnet bench` for several.")
    from pathlib import Path

    for option, path in (("--save", args.save), ("--plot", args.plot)):
        # refused before training, not after it
        if path and not Path(path).resolve().parent.is_dir():
            raise _UserError(f"`{option}`: no such directory {Path(path).resolve().parent}.")
    if args.plot and Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise _UserError(f"`--plot` must end in .png, .svg or .pdf, got {args.plot!r}.")
    ds = load_proben1(names[0], args.data)
    net, preset = build_network(args.network, ds, args.rule)
    kwargs = training_arguments(preset, _options(args))
    from fastnet.rprop import PRESETS

    algorithm = _algorithm_option(args)
    limit = kwargs.get("max_epochs", PRESETS.get(kwargs.get("preset"), {}).get("max_epochs"))
    progress = None if args.quiet else EpochProgress(limit)
    if algorithm is None or algorithm.__class__.__name__ == "RPROP":
        kwargs.update(_rprop_overrides(algorithm))
        r = train_rprop(net, *ds.train, *ds.val, X_test=ds.test[0], Y_test=ds.test[1],
                        seed=args.seed, callback=progress, **kwargs)
    else:
        from fastnet.training._train import train

        r = train(net, *ds.train, *ds.val, X_test=ds.test[0], Y_test=ds.test[1],
                  algorithm=algorithm, seed=args.seed, callback=progress,
                  **_policy(preset, kwargs))
    if progress is not None:
        progress.finish()
    shown = (args.network if args.network.strip() == net.proben1_spec
             else f"{args.network} = {net.proben1_spec}")
    print(f"{ds.name}: network {shown} "
          f"({'shortcuts' if net.shortcut else 'no shortcuts'}, {net.n_connections} connections), "
          f"preset {preset}, seed {args.seed}")
    gl = "-" if r.gl_end is None else f"{r.gl_end:.2f}"
    print(f"stopped by {r.stop_reason} after {r.epochs} epochs; relevant epoch "
          f"{r.relevant_epoch}; GL at end {gl}")
    print(f"{'':12s} {'squared error %':>16s} {'classification error %':>23s}")
    for name, e in (("training", r.final_train), ("validation", r.final_val),
                    ("test", r.final_test)):
        cls = "-" if e.classification_error is None else f"{e.classification_error:.3f}"
        print(f"{name:12s} {e.squared_error_percentage:16.4f} {cls:>23s}")
    t = r.traversals
    print(f"traversals: forward {t.forward}, backward {t.backward}, update {t.update}, "
          f"evaluation {t.evaluation}, total {t.total}"
          + (f"; normal equations {t.flops} flops" if t.flops else ""))
    print(f"CPU time {r.cpu_time:.4f} s (wall {r.wall_time:.4f} s); "
          f"{r.traversals_per_cpu_second():.4g} traversals per CPU second")
    print("set-up:")
    for line in r.describe_setup().splitlines():
        print("  " + line)
    if args.save:
        net.save(args.save)
        print(f"network (weights of the relevant epoch) saved to {args.save}; "
              "load it with fastnet.MLP.load")
    if args.plot:
        from fastnet import plots

        plots.learning_curves(r, log_y=True, path=args.plot,
                              title=f"{ds.name}, network {net.proben1_spec}, seed {args.seed}: "
                                    f"stopped by {r.stop_reason} after {r.epochs} epochs")
        print(f"learning curves drawn to {args.plot}")
    return 0


def _algorithm_option(args):
    """The algorithm ``--algorithm`` names (None: the preset's RPROP), or a
    _UserError naming the option."""
    if args.algorithm is None:
        return None
    from fastnet.algorithms import RPROP, from_spec

    try:
        algorithm = from_spec(args.algorithm)
    except (ValueError, TypeError) as exc:
        text = str(exc)
        if text.startswith("`algorithm`"):
            raise _UserError("`--algorithm`" + text[len("`algorithm`"):]) from None
        raise _UserError(f"`--algorithm` {args.algorithm!r}: {text}") from None
    if isinstance(algorithm, RPROP) and args.variant is not None:
        raise _UserError(f"`--algorithm` {args.algorithm!r} and `--variant` {args.variant!r} "
                         "both choose the RPROP variant; give one of them.")
    return algorithm


def _rprop_overrides(algorithm):
    """An RPROP ``--algorithm``'s variant and the parameters it sets (others: the preset's)."""
    import dataclasses

    if algorithm is None:
        return {}
    out = {"variant": algorithm.variant}
    for field in dataclasses.fields(algorithm):
        if getattr(algorithm, field.name) != field.default:
            out[field.name] = getattr(algorithm, field.name)
    return out


def _policy(preset, kwargs):
    """fastnet.train's run options of a preset (strips, initial weights, stopping
    rule, epoch cap) with the command's overrides."""
    from fastnet.rprop import PRESETS, proben1_stopping

    p = PRESETS[preset]
    return {"max_epochs": kwargs.get("max_epochs", p["max_epochs"]), "strip": p["strip"],
            "init_scale": p["init_scale"],
            "stop": kwargs.get("stop", proben1_stopping(p["stop"]))}


# --------------------------------------------------------------------------- bench

def _experiment(args, problems, networks, runs):
    from fastnet.experiment import Experiment

    try:
        return Experiment(problems=problems, networks=networks, runs=runs, seed=args.seed,
                          options=_options(args), keep_predictions=args.keep_predictions,
                          root=args.data, rule=args.rule)
    except ValueError as exc:
        if str(exc).startswith("`runs` "):    # the grid's size: name the option typed
            raise _UserError(f"`--runs`{str(exc)[6:]}") from None
        raise


def _run(args, exp, out):
    from fastnet.experiment import run_experiment

    if not args.quiet:
        n = len(exp.run_keys())
        where = (f"Dask scheduler {args.scheduler}" if args.scheduler else
                 f"up to {args.jobs} local processes" if args.jobs > 1 else
                 "this process" if args.jobs == 1 else "all local cores")
        _err(f"fastnet: {n} runs ({len(exp.problems)} datasets x {len(exp.networks)} networks x "
             f"{exp.runs} runs, master seed {exp.seed}) on {where}; results in {out}")
    try:
        from fastnet.experiment import BATCH_SIZE

        res = run_experiment(exp, out, jobs=args.jobs, scheduler=args.scheduler,
                             progress=RunProgress(args.quiet),
                             batch_size=args.batch_size or BATCH_SIZE)
    except KeyboardInterrupt:
        _err(f"fastnet: interrupted; the finished runs are saved in {out}: rerun the same "
             "command to resume.")
        raise
    asked = (os.cpu_count() or 1) if args.jobs == -1 else args.jobs
    if not args.scheduler and res.n_new and res.workers < asked:
        _err(f"fastnet: note: ran on {res.workers} local process"
             f"{'es' if res.workers != 1 else ''}, not {asked} (--jobs): no more than the "
             "batches of runs to do.")
    return res


def _bench(args):
    """Run an experiment into a result file (resuming it), then print its timing."""
    from fastnet.report import timing_summary

    from fastnet.datasets import PROBEN1_PROBLEMS, parse_proben1_name
    from fastnet.experiment import expand_problems

    problems = expand_problems(args.problems)
    if {n.strip() for n in args.networks} <= {"pivot", "noshortcut"}:
        # Proben1 gives no pivot for some problems (mushroom): `-p all` with the default
        # network means "every problem that has one", not an error.
        without = [p for p in problems
                   if PROBEN1_PROBLEMS[parse_proben1_name(p)[0]].pivots is None]
        if without and len(without) < len(problems):
            _err(f"fastnet: note: {', '.join(without)} left out: Proben1 (Table 7) gives no "
                 "pivot architecture for them; run them with -n linear or a spec like '16+8 l'.")
            problems = [p for p in problems if p not in without]
    exp = _experiment(args, problems, args.networks, args.runs)
    res = _run(args, exp, args.out)
    print(f"{len(res.records)} runs in {res.path}: {res.n_new} new, {res.n_resumed} resumed; "
          f"{res.wall_time:.2f} s wall ({res.backend})")
    print(timing_summary(res.path).to_text())
    return 0


# --------------------------------------------------------------------------- report

def _check_out(args):
    """Refuse `--out` in a directory that does not exist, before any work."""
    from pathlib import Path

    if args.out is None:
        return
    parent = Path(args.out).resolve().parent
    if not parent.is_dir():
        raise _UserError(f"`--out`: no such directory {parent}.")


def _emit(args, text):
    """Print `text`, or write it (UTF-8) atomically to `--out` and say so on stderr."""
    if args.out is None:
        if args.format == "html":
            # a page with its pictures embedded is not for a terminal: say how big it is
            n = len(text.encode("utf-8"))
            size = f"{n / 1024:.0f} KB" if n < 1024 ** 2 else f"{n / 1024 ** 2:.1f} MB"
            raise _UserError(f"`--format html` makes a page of {size} (pictures embedded): give the "
                             "file with -o FILE (e.g. -o report.html).")
        sys.stdout.write(text)
        return
    from fastnet._files import atomic_write

    atomic_write(args.out, [text.encode("utf-8")])
    _err(f"fastnet: wrote {args.out}")


def _report(args):
    """Summarise a result file in Proben1's table columns."""
    from fastnet.report import summarize, timing_summary

    _check_out(args)
    rep = summarize(args.file, exclude="worst-half" if args.exclude_worst_half else None)
    timing = timing_summary(args.file) if args.timing else None
    if args.format == "html":
        _emit(args, rep.to_html(timing=timing))
        return 0
    if args.format == "markdown":
        text = rep.to_markdown() + "\n"
    elif args.format == "csv":
        text = rep.to_csv()
    elif args.format == "latex":
        text = rep.to_latex()
    else:
        text = rep.to_text() + "\n"
    if timing is not None:
        text += "\n" + timing.to_text() + "\n"
    _emit(args, text)
    return 0


def _compare(args):
    """Compare result files: Proben1 t-tests per problem, sign/Wilcoxon/Lacoste over problems."""
    from fastnet.report import compare

    _check_out(args)
    cmp = compare(args.files, labels=args.labels, measure=args.measure, alpha=args.alpha)
    _emit(args, cmp.to_html() if args.format == "html" else cmp.to_text() + "\n")
    if args.plot:
        paths = cmp.plot(args.plot)
        print(f"\n{len(paths)} pictures written to {args.plot}")
    return 0


# --------------------------------------------------------------------------- reproduce

def _reproduce(args):
    """Run Proben1's protocol for linear, pivot or no-shortcut networks and print the tables."""
    from fastnet.datasets import PROBEN1_PROBLEMS
    from fastnet.report import summarize, timing_summary

    which = args.networks
    if args.problems:
        problems = args.problems
    elif which == "linear":
        problems = ["all"]
    else:  # mushroom has no pivot architecture in Proben1's Table 7
        problems = [p for p, info in PROBEN1_PROBLEMS.items() if info.pivots is not None]
    from fastnet.experiment import PROBEN1_RUNS

    runs = args.runs if args.runs is not None else PROBEN1_RUNS[which]
    out = args.out or f"proben1-{which}.jsonl"
    exp = _experiment(args, problems, (which,), runs)
    t0 = time.perf_counter()
    res = _run(args, exp, out)
    wall = time.perf_counter() - t0
    print(f"Proben1 {which} networks: {len(res.records)} runs in {res.path} "
          f"({res.n_new} new, {res.n_resumed} resumed); {wall:.1f} s wall on {res.backend}")
    print()
    print(summarize(res.path).to_text())
    print()
    print(timing_summary(res.path).to_text())
    print()
    from fastnet.reproduction import compare_with_published

    table = {"linear": "Tables 3-4", "pivot": "Tables 8-9", "noshortcut": "Tables 10-11"}[which]
    print(f"Beside Prechelt's (1994) published means ({table}), multilayer rule "
          f"{args.rule!r}:")
    print(compare_with_published(res.path, which).to_text())
    return 0


def _demo(args):
    """A small timing study on generated tasks: works on a fresh install, no data."""
    from fastnet.demo import run_demo

    print(run_demo(runs=args.runs, seed=args.seed, progress=TaskProgress(args.quiet)).summary())
    return 0


# --------------------------------------------------------------------------- parser

def _int_option(minimum, expected, also=(), maximum=None):
    """An argparse type: an int in [minimum, maximum] (or one of `also`), else a
    clear message (argparse names the option the user typed)."""
    def parse(text):
        shown = text if len(text) <= 30 else f"{text[:20]}... ({len(text)} characters)"
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {shown!r}") from None
        if (v < minimum or (maximum is not None and v > maximum)) and v not in also:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {shown}")
        return v
    return parse


_positive_int = _int_option(1, "a positive integer")

def _runs_option():
    from fastnet.experiment import MAX_RUNS

    return _int_option(1, f"an integer from 1 to {MAX_RUNS} (MAX_RUNS)", maximum=MAX_RUNS)


def _jobs_option():
    from fastnet.experiment import MAX_JOBS

    return _int_option(1, f"an integer from 1 to {MAX_JOBS} (MAX_JOBS) or -1 (all cores)",
                       also=(-1,), maximum=MAX_JOBS)

_seed = _int_option(0, "a non-negative integer")


def _add_data(p):
    p.add_argument("--data", metavar="DIR", default=None,
                   help="directory with the Proben1 .dt files (default: $FASTNET_DATA, then "
                        "the user cache filled by `fastnet datasets fetch`)")


def _add_training(p):
    from fastnet.rprop import VARIANTS

    p.add_argument("--max-epochs", type=_positive_int, default=None, metavar="N",
                   help="cap on epochs, a multiple of 5 up to 3000 (default: Proben1's 3000); it "
                        "joins the stopping rule and is part of the set-up")
    p.add_argument("--variant", choices=sorted(VARIANTS), default=None,
                   help="RPROP variant (default: rprop+, as Proben1); part of the set-up")
    p.add_argument("--rule", choices=("tables", "literal"), default="tables",
                   help="reading of Proben1's multilayer set-up: 'tables' (default: GL2, "
                        "eta+ 1.2, weights within 0.2; reproduces the report's published "
                        "results) or 'literal' (the report's wording: GL5, UP8 and PQ3 each "
                        "held once, eta+ 1.1, weights within 0.5); part of the set-up")


def _add_running(p):
    p.add_argument("--seed", type=_seed, default=0, help="master seed (default 0)")
    p.add_argument("--jobs", "-j", type=_jobs_option(), default=1, metavar="N",
                   help="local worker processes (default 1; -1 = all cores; at most 256, and "
                        "no more than the batches of runs to do: one batch runs in this "
                        "process; the workers exit when this process dies)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on a Dask cluster, e.g. tcp://host:8786 (needs dask.distributed; "
                        "the workers need fastnet and the data)")
    p.add_argument("--batch-size", type=_positive_int, default=None, metavar="N",
                   help="runs of one problem and network trained together (default 16; 1 = "
                        "one train_rprop call per run, for comparison)")
    p.add_argument("--keep-predictions", action="store_true",
                   help="store per-example test predictions (for Lacoste's tests in `compare`)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    _add_training(p)
    _add_data(p)


def build_parser():
    """The argument parser of the ``fastnet`` command."""
    from fastnet.experiment import NETWORK_KINDS

    parser = argparse.ArgumentParser(
        prog="fastnet", description="Fast small feed-forward networks, measured honestly.",
        epilog="Run `fastnet COMMAND --help` for the options of a command.")
    from fastnet._version import __version__

    parser.add_argument("--version", action="version", version=f"fastnet {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    net_help = (f"network: {', '.join(NETWORK_KINDS)} or a Proben1 spec 'h1+h2 k' such as '8+4 s' "
                "(hidden layers of 8 and 4 units; k = l: linear outputs, s: sigmoid outputs; "
                "all with shortcut connections, as Proben1's)")

    ds = sub.add_parser("datasets", help="list or fetch the Proben1 data",
                        description="List or fetch the Proben1 benchmark data.")
    ds_sub = ds.add_subparsers(dest="datasets_command", metavar="ACTION")
    dl = ds_sub.add_parser("list", help="list the problems and whether their files are present",
                           description=_datasets_list.__doc__)
    _add_data(dl)
    dl.set_defaults(func=_datasets_list)
    df = ds_sub.add_parser("fetch", help="download and verify the Proben1 archive",
                           description=_datasets_fetch.__doc__)
    df.add_argument("--url", default=None, help="archive URL (default: the public Proben1 archive)")
    df.add_argument("--dest", metavar="DIR", default=None,
                    help="install directory (default: the user cache, which fastnet searches)")
    df.add_argument("--force", action="store_true", help="download even if the files are intact")
    df.add_argument("--timeout", type=float, default=60.0, help="network timeout in seconds")
    df.set_defaults(func=_datasets_fetch)
    ds.set_defaults(func=None, subparser=ds)

    tr = sub.add_parser("train", help="train one network on one dataset and print the result",
                        description=_train.__doc__)
    tr.add_argument("problem", help="Proben1 dataset, e.g. cancer1 or glass1d")
    tr.add_argument("--network", "-n", default="pivot", help=net_help + " (default pivot)")
    tr.add_argument("--seed", type=_seed, default=0, help="seed of the run (default 0)")
    tr.add_argument("--save", metavar="FILE.npz", default=None,
                    help="save the trained network (fastnet.MLP.load reads it)")
    tr.add_argument("--plot", metavar="FILE.png", default=None,
                    help="draw the learning curves (.png, .svg or .pdf; needs matplotlib)")
    tr.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    tr.add_argument("--algorithm", "-a", metavar="SPEC", default=None,
                    help="training algorithm, a name of fastnet.algorithms.ALGORITHMS with "
                         "optional parameters, e.g. scg, lm, lbfgs, irprop+, "
                         "'backprop(learning_rate=0.01, momentum=0.9)' (default: rprop+ with "
                         "Proben1's parameters; an RPROP name keeps the preset's parameters but "
                         "those it sets); the preset's stopping rule, strips and initial "
                         "weights apply to every algorithm")
    _add_training(tr)
    _add_data(tr)
    tr.set_defaults(func=_train)

    be = sub.add_parser("bench", help="run an experiment into a result file (resumable)",
                        description=_bench.__doc__ + " Rerunning the same command resumes: "
                        "finished runs are kept, missing ones are run.")
    be.add_argument("--problems", "-p", nargs="+", required=True, metavar="NAME",
                    help="datasets (cancer1, glass1d), problems (cancer = cancer1..3) or all")
    be.add_argument("--networks", "-n", nargs="+", default=["pivot"], metavar="NET",
                    help=net_help + " (default pivot)")
    be.add_argument("--runs", "-r", type=_runs_option(), default=10, help="runs per dataset "
                    "and network (default 10; at most 10,000, and 100,000 in the whole grid)")
    be.add_argument("--out", "-o", required=True, metavar="FILE", help="result file (JSON lines)")
    _add_running(be)
    be.set_defaults(func=_bench)

    rp = sub.add_parser("report", help="Proben1 tables from a result file",
                        description=_report.__doc__)
    rp.add_argument("file", help="result file written by `fastnet bench` or `reproduce`")
    rp.add_argument("--format", "-f", choices=("text", "markdown", "csv", "latex", "html"),
                    default="text", help="output format (default text, Proben1's layout; html: "
                    "one self-contained page with pictures of the runs' distributions, needs "
                    "matplotlib and -o)")
    rp.add_argument("--out", "-o", metavar="FILE", default=None,
                    help="write the output to FILE (replaced atomically) instead of printing it")
    rp.add_argument("--exclude-worst-half", action="store_true",
                    help="leave out exactly the worse half of the runs by validation error "
                         "(the only exclusion Proben1 allows)")
    rp.add_argument("--timing", action="store_true", help="also print traversals and CPU time")
    rp.set_defaults(func=_report)

    dm = sub.add_parser("demo", help="run a small experiment on generated tasks (no data needed)",
                        description=_demo.__doc__)
    dm.add_argument("--runs", type=_positive_int, default=10, help="runs per task (default 10)")
    dm.add_argument("--seed", type=_seed, default=0, help="master seed (default 0)")
    dm.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    dm.set_defaults(func=_demo)

    cp = sub.add_parser("compare", help="compare result files (t-tests, sign, Wilcoxon, Lacoste)",
                        description=_compare.__doc__)
    cp.add_argument("files", nargs="+", metavar="FILE", help="two or more result files (or one "
                    "with several networks)")
    cp.add_argument("--labels", nargs="+", default=None, help="one label per file")
    cp.add_argument("--measure", choices=("squared", "classification"), default="squared",
                    help="test squared error percentage (default) or classification error")
    cp.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    cp.add_argument("--plot", metavar="DIR", default=None,
                    help="write box-whiskers pictures per problem into DIR (needs matplotlib)")
    cp.add_argument("--format", "-f", choices=("text", "html"), default="text",
                    help="output format (default text; html: one self-contained page with "
                    "pictures of the distributions side by side, needs matplotlib and -o)")
    cp.add_argument("--out", "-o", metavar="FILE", default=None,
                    help="write the output to FILE (replaced atomically) instead of printing it")
    cp.set_defaults(func=_compare)

    rr = sub.add_parser("reproduce", help="run a Proben1 protocol and print its tables",
                        description=_reproduce.__doc__ + " Default runs: 10 for linear "
                        "networks, 60 for the others (Proben1).")
    rr_sub = rr.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    pr = rr_sub.add_parser("proben1", help="Proben1's linear, pivot or no-shortcut experiments",
                           description=_reproduce.__doc__)
    pr.add_argument("networks", choices=NETWORK_KINDS, help="which networks")
    pr.add_argument("--problems", "-p", nargs="+", default=None, metavar="NAME",
                    help="datasets or problems (default: all that have the network)")
    pr.add_argument("--runs", "-r", type=_runs_option(), default=None,
                    help="runs per dataset (default 10 for linear, 60 otherwise; at most 10,000, "
                         "and 100,000 in the whole grid)")
    pr.add_argument("--out", "-o", metavar="FILE", default=None,
                    help="result file (default proben1-NETWORKS.jsonl; rerun to resume)")
    _add_running(pr)
    pr.set_defaults(func=_reproduce)
    rr.set_defaults(func=None, subparser=rr)
    return parser


def main(argv=None):
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 for errors the user can fix (the message says how), 2 for
        usage errors, 130 after Ctrl-C.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help and usage errors: argparse already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if getattr(args, "func", None) is None:
        (getattr(args, "subparser", None) or parser).print_help(sys.stderr)
        return EXIT_USAGE
    from fastnet.exceptions import DataFormatError
    from fastnet.experiment import ResultFileError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        try:
            status = args.func(args)
        except KeyboardInterrupt:
            status = EXIT_INTERRUPTED
        except (_UserError, ResultFileError, DataFormatError, FileNotFoundError,
                ConnectionError, ImportError) as exc:
            _err(f"fastnet: error: {_in_options(str(exc), _command_parser(parser, args.func))}")
            status = EXIT_USER_ERROR
        except (ValueError, TypeError, OSError) as exc:
            # The library's argument checks name the argument in backticks (given here
            # as the option typed); set FASTNET_DEBUG=1 to see the traceback.
            if os.environ.get("FASTNET_DEBUG", "0") != "0":
                raise
            _err(f"fastnet: error: {_in_options(str(exc), _command_parser(parser, args.func))}")
            status = EXIT_USER_ERROR
        finally:
            for w in caught:
                _err(f"fastnet: warning: {w.message}")
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
