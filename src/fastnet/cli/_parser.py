"""The ``fastnet`` command's argument parser."""
import argparse

from fastnet.cli._commands import (_bench, _compare, _datasets_fetch, _datasets_list, _demo,
                                   _export, _report, _reproduce, _reproduce_lawrence, _train)
from fastnet.cli._common import (_add_data, _add_running, _add_training, _int_option,
                                 _jobs_option, _positive_int, _runs_option, _seed, add_rules)
from fastnet.cli._study import add_study_parser
from fastnet.cli._suite import add_suite_parser


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

    _datasets_parser(sub)
    _train_parser(sub, net_help)
    _bench_parser(sub, net_help)
    _report_parser(sub)
    _demo_parser(sub)
    _compare_parser(sub)
    _reproduce_parser(sub, NETWORK_KINDS)
    add_study_parser(sub, _positive_int, _seed)
    add_suite_parser(sub, _positive_int, _seed, _jobs_option())
    _export_parser(sub)
    return parser


def _export_parser(sub):
    """``export``: a saved network as ONNX or C."""
    ex = sub.add_parser("export", help="export a saved network as an ONNX model or C source",
                        description=_export.__doc__ + " See fastnet.export.")
    ex.add_argument("network", metavar="NET.npz", help="a network file (fastnet.MLP.save)")
    ex.add_argument("--format", "-f", choices=("onnx", "c"), required=True,
                    help="onnx: an ONNX model (needs the onnx package: pip install onnx); "
                    "c: one self-contained C99 file")
    ex.add_argument("--out", "-o", metavar="FILE", required=True,
                    help="the file to write (replaced atomically)")
    ex.add_argument("--dtype", choices=("float64", "float32"), default=None,
                    help="element type of the weights and arithmetic (default: the network's "
                    "own; float64 for a float32 network is a deliberate choice)")
    ex.add_argument("--name", default="fastnet_predict",
                    help="the C function's name (default fastnet_predict; the batch function "
                    "is NAME_batch), or the ONNX graph's")
    ex.set_defaults(func=_export)


def _datasets_parser(sub):
    """``datasets list`` and ``datasets fetch``."""
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


def _train_parser(sub, net_help):
    """``train``: one run."""
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
                         "'backprop(learning_rate=0.01, momentum=0.9)' or a rule of your own "
                         "from --rules FILE (default: rprop+ with "
                         "Proben1's parameters; an RPROP name keeps the preset's parameters but "
                         "those it sets); the preset's stopping rule, strips and initial "
                         "weights apply to every algorithm")
    tr.add_argument("--loss", choices=("sse", "cross_entropy"), default="sse",
                    help="training objective (default sse, Proben1's); cross_entropy gives the "
                         "network softmax outputs where every target row is one-hot (one class "
                         "per example), else logistic outputs; the reported errors stay "
                         "Proben1's squared error and classification error")
    tr.add_argument("--weight-decay", type=float, default=0.0, metavar="LAMBDA",
                    help="L2 weight decay: LAMBDA * sum of squared weights joins the objective "
                         "(default 0)")
    add_rules(tr)
    _add_training(tr)
    _add_data(tr)
    tr.set_defaults(func=_train)


def _bench_parser(sub, net_help):
    """``bench``: an experiment into a result file."""
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


def _report_parser(sub):
    """``report``: Proben1's tables of a result file."""
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


def _demo_parser(sub):
    """``demo``: generated tasks, no data needed."""
    dm = sub.add_parser("demo", help="three small success studies on generated tasks (no data needed)",
                        description=_demo.__doc__)
    dm.add_argument("--runs", type=_positive_int, default=10, help="runs per task (default 10)")
    dm.add_argument("--seed", type=_seed, default=0, help="master seed (default 0)")
    dm.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    dm.set_defaults(func=_demo)


def _compare_parser(sub):
    """``compare``: result files against each other."""
    cp = sub.add_parser("compare", help="compare result files (t-tests, sign, Wilcoxon, Lacoste)",
                        description=_compare.__doc__)
    cp.add_argument("files", nargs="+", metavar="FILE", help="two or more result files (or one "
                    "with several networks or algorithms)")
    cp.add_argument("--labels", nargs="+", default=None, help="one label per file")
    cp.add_argument("--measure", choices=("squared", "classification"), default="squared",
                    help="test squared error percentage (default) or classification error")
    cp.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    cp.add_argument("--plot", metavar="DIR", default=None,
                    help="write box-whiskers pictures per problem into DIR (needs matplotlib)")
    cp.add_argument("--format", "-f", choices=("text", "csv", "latex", "html"), default="text",
                    help="output format (default text; csv: one row per problem and pair; "
                    "html: one self-contained page with pictures of the distributions side by "
                    "side, needs matplotlib and -o)")
    cp.add_argument("--out", "-o", metavar="FILE", default=None,
                    help="write the output to FILE (replaced atomically) instead of printing it")
    cp.set_defaults(func=_compare)


def _reproduce_parser(sub, NETWORK_KINDS):
    """``reproduce proben1 ...``: a Proben1 protocol."""
    rr = sub.add_parser("reproduce", help="run a Proben1 protocol or Lawrence et al.'s (1997) "
                        "set-ups and print their tables",
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
    lw = rr_sub.add_parser("lawrence", help="Lawrence et al. (1997): Table 3's MLP row and "
                           "Table 4", description=_reproduce_lawrence.__doc__)
    lw.add_argument("--runs", "-r", type=_int_option(3, "an integer from 3 to 10000",
                                                     maximum=10000), default=100,
                    help="trials per set-up (default 100, the paper's)")
    lw.add_argument("--teachers", "-t", type=_int_option(1, "an integer from 1 to 100",
                                                         maximum=100), default=5,
                    help="teacher seeds 0..N-1 of Table 4 (default 5)")
    lw.add_argument("--tables", nargs="+", type=int, choices=(3, 4), default=[3, 4],
                    help="which tables (default both)")
    lw.add_argument("--seed", type=_int_option(0, "an integer >= 0"), default=0,
                    help="master seed of the trials (default 0)")
    lw.add_argument("--out", "-o", metavar="FILE.json", default=None,
                    help="write the rows {table, model, K, set, statistic, paper, ours} "
                         "(and the per-teacher values) as JSON")
    lw.set_defaults(func=_reproduce_lawrence)
    rr.set_defaults(func=None, subparser=rr)
