"""What every subcommand shares: exit statuses, user errors in the options' words,
and the option types."""
import argparse
import contextlib
import re
import signal
import sys

#: Exit status for errors the user can fix (bad names, missing data, bad files).
EXIT_USER_ERROR = 1
#: Exit status for command-line usage errors (argparse's convention).
EXIT_USAGE = 2
#: Exit status after Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130
#: Exit status after SIGTERM (128 + SIGTERM), handled as Ctrl-C is (`on_sigterm`).
EXIT_TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt, so that what a command does
    after Ctrl-C (say what is saved, end the worker processes, free its locks) it does
    after SIGTERM too."""


@contextlib.contextmanager
def on_sigterm():
    """Within the block, SIGTERM raises `Terminated` (a KeyboardInterrupt) in the main
    thread, as SIGINT raises KeyboardInterrupt; the previous handler is put back after.
    Outside the main thread (no handler can be set there) nothing changes."""
    def raise_terminated(signum, frame):
        raise Terminated("SIGTERM")

    try:
        previous = signal.signal(signal.SIGTERM, raise_terminated)
    except (ValueError, AttributeError, OSError):     # (not the main thread, no SIGTERM)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def add_rules(p):
    """``--rules FILE`` (repeatable): rules of the user's own for ``-a``."""
    p.add_argument("--rules", metavar="FILE", action="append", default=None,
                   help="a Python file of your own training rules (repeatable). fastnet runs "
                   "it: your own code, with your rights, as `python FILE` would (imported as a "
                   "module: its __main__ block does not run). Each public "
                   "fastnet.algorithms.Algorithm subclass it defines is an algorithm named by "
                   "its class name in lower case, its dataclass fields the parameters (class "
                   "Mine: -a \"mine(rate=0.1)\")")


@contextlib.contextmanager
def loaded_rules(args):
    """The rules files of ``--rules`` loaded for the command, and unloaded after it (a
    command run in this process, as tests and notebooks run it, leaves no algorithm
    behind); a file refused is named with the option."""
    paths = list(dict.fromkeys(getattr(args, "rules", None) or ()))
    if not paths:
        yield ()
        return
    from fastnet.algorithms import load_rules

    with contextlib.ExitStack() as stack:
        loaded = []
        for path in paths:
            try:
                rules = load_rules(path)
            except (ValueError, TypeError) as exc:
                text = str(exc)
                text = text[len("`path`"):] if text.startswith("`path`") else f" {path!r}: {text}"
                # (the user's own exception stays chained: FASTNET_DEBUG=1 shows it)
                raise type(exc)("`--rules`" + text) from exc.__cause__
            stack.callback(rules.unload)
            loaded.append(rules)
        yield tuple(loaded)


class _UserError(Exception):
    """An error whose message is all the user needs (no traceback)."""


def _err(*parts):
    print(*parts, file=sys.stderr)


#: Library parameter names that differ from the option feeding them, with the options'
#: `dest` to try in turn (the others match: `max_epochs` is --max-epochs).
_LIBRARY_NAMES = {"name": ("problems", "problem"), "networks": ("networks", "network"),
                  "spec": ("networks", "network"), "root": ("data",), "results": ("files",),
                  "path": ("file", "out")}


def _in_options(message, parser):
    """``message`` with the library's parameter names in backticks (`max_epochs`) replaced
    by what the user typed on the command line of `parser` (`--max-epochs`)."""

    typed = {}
    for action in parser._actions:
        if action.option_strings:
            typed[action.dest] = max(action.option_strings, key=len)
        elif action.dest != "help":
            typed[action.dest] = action.metavar or action.dest

    def option(m):
        for dest in (*_LIBRARY_NAMES.get(m.group(1), ()), m.group(1)):
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

def _check_out(args, out=None):
    """Refuse `--out` (or ``out``, the file written without it) in a directory that does
    not exist, or naming a directory, before any work."""
    from pathlib import Path

    out = args.out if out is None else out
    if out is None:
        return
    if Path(out).is_dir():
        raise _UserError(f"`--out` must name a file, got the directory {out}.")
    parent = Path(out).resolve().parent
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
    _add_dtype(p)


def _add_dtype(p):
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="the networks' value type (default float64): float32 trains and "
                        "predicts in float32, the reported error sums accumulated in float64; "
                        "part of the set-up (a result file is not resumed in another dtype)")


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
                   help="runs of one problem and network trained together (default 16; "
                        "in whole blocks of 30 where runs are handed from the lanes "
                        "to the single-network kernels; 1 = one train_rprop call per run, for "
                        "comparison)")
    p.add_argument("--keep-predictions", action="store_true",
                   help="store per-example test predictions (for Lacoste's tests in `compare`)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--algorithms", "-a", nargs="+", default=None, metavar="ALG",
                   help="algorithms with parameters, e.g. rprop+ \"backprop(learning_rate=0.1, "
                   "momentum=0.9)\" (default rprop+: Proben1's RPROP presets); each trains "
                   "every problem, network and run under the preset's strips, stopping rule "
                   "and initial weights; more algorithms extend a file")
    _add_training(p)
    _add_data(p)


def _add_resumable(p, jobs, *, jobs_help, workers, pictures, data_help):
    """The options a study and a suite share: where they train (``--jobs`` of type ``jobs``,
    ``--scheduler``, the Dask workers needing ``workers``), ``--no-pictures`` (of ``pictures``),
    ``--quiet`` and ``--data``."""
    p.add_argument("--jobs", "-j", type=jobs, default=1, metavar="N", help=jobs_help)
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="train on a Dask cluster, e.g. tcp://host:8786 (needs "
                   f"dask.distributed; the workers need {workers})")
    p.add_argument("--no-pictures", action="store_true",
                   help=f"no {pictures} in the page (no matplotlib needed)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--data", metavar="DIR", default=None, help=data_help)
