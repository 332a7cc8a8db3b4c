"""What each subcommand runs (``args`` from :func:`fastnet.cli.build_parser`)."""
import os
import sys
import time

from fastnet.cli._common import _check_out, _emit, _err, _UserError
from fastnet.cli._progress import EpochProgress, RunProgress, TaskProgress


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
    net, preset = build_network(args.network, ds, args.rule, args.dtype)
    spec = net.proben1_spec              # (the outputs' change below leaves Proben1's notation)
    if args.loss == "cross_entropy":
        net = _probability_outputs(net, ds.train[1])
    kwargs = training_arguments(preset, _options(args))
    kwargs.update(loss=args.loss, weight_decay=args.weight_decay)
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
                  loss=args.loss, weight_decay=args.weight_decay, **_policy(preset, kwargs))
    if progress is not None:
        progress.finish()
    shown = args.network if args.network.strip() == spec else f"{args.network} = {spec}"
    objective = ("" if args.loss == "sse" and not args.weight_decay else
                 f", loss {args.loss} ({net.output_activation} outputs)"
                 + (f" + {args.weight_decay:g} * sum w^2" if args.weight_decay else ""))
    print(f"{ds.name}: network {shown} "
          f"({'shortcuts' if net.shortcut else 'no shortcuts'}, {net.n_connections} connections"
          f"{'' if net.dtype == 'float64' else ', ' + net.dtype.name}), "
          f"preset {preset}, seed {args.seed}{objective}")
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
    from fastnet.training._rules_files import rules_of

    for rules in rules_of([args.algorithm] if args.algorithm else []):
        print(f"  rules file: {rules.file_name} (SHA-256 {rules.sha256}), defining "
              f"{', '.join(rules.names)}")
    if args.save:
        net.save(args.save)
        print(f"network (weights of the relevant epoch) saved to {args.save}; "
              "load it with fastnet.MLP.load")
    if args.plot:
        from fastnet import plots

        plots.learning_curves(r, log_y=True, path=args.plot,
                              title=f"{ds.name}, network {net.proben1_spec}, "
                                    f"{r.setup.get('algorithm', '?')}, seed {args.seed}:\n"
                                    f"stopped by {r.stop_reason} after {r.epochs} epochs")
        print(f"learning curves drawn to {args.plot}")
    return 0


def _probability_outputs(net, Y):
    """``net`` with outputs for the cross-entropy: softmax where every row of the
    targets ``Y`` is one-hot (one class per example), else logistic."""
    from fastnet.measures import is_one_hot
    from fastnet.network import MLP

    return MLP(net.n_in, net.hidden, net.n_out, shortcut=net.shortcut,
               hidden_activation=net.hidden_activation,
               output_activation="softmax" if is_one_hot(Y) else "logistic", dtype=net.dtype)


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
        algorithms = tuple(args.algorithms) if args.algorithms else ("rprop+",)
        return Experiment(problems=problems, networks=networks, runs=runs, seed=args.seed,
                          options=_options(args), keep_predictions=args.keep_predictions,
                          root=args.data, rule=args.rule, algorithms=algorithms,
                          dtype=getattr(args, "dtype", "float64"))
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
        algos = f"{len(exp.algorithms)} algorithms x " if len(exp.algorithms) > 1 else ""
        _err(f"fastnet: {n} runs ({len(exp.problems)} datasets x {len(exp.networks)} networks x "
             f"{algos}{exp.runs} runs, master seed {exp.seed}) on {where}; results in {out}")
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


def _export(args):
    """Export a saved network (MLP.save, `fastnet train --save`) as an ONNX model or C source."""
    import numpy as np

    from fastnet.export import to_c, to_onnx
    from fastnet.network import MLP

    net = MLP.load(args.network)
    if args.format == "onnx":
        to_onnx(net, args.out, dtype=args.dtype, name=args.name)
    else:
        to_c(net, args.out, name=args.name, dtype=args.dtype)
    # (--dtype None: the network's own, which the file holds)
    dtype = args.dtype or np.dtype(net.dtype).name
    what = "ONNX model" if args.format == "onnx" else "C99 source"
    _err(f"fastnet: wrote {args.out} ({what}, {dtype}) from {net!r}")
    return 0


def _compare(args):
    """Compare result files: Proben1 t-tests per problem, sign/Wilcoxon/Lacoste over problems."""
    from fastnet.report import compare

    _check_out(args)
    cmp = compare(args.files, labels=args.labels, measure=args.measure, alpha=args.alpha)
    _emit(args, {"html": cmp.to_html, "csv": cmp.to_csv, "latex": cmp.to_latex}.get(
        args.format, lambda: cmp.to_text() + "\n")())
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
    _check_out(args, out)
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


def _reproduce_lawrence(args):
    """Run Lawrence et al.'s (1997) Table 3 (MLP on Mackey-Glass) and Table 4 (5-5-1
    students of 5-5-1 teachers) and print them beside the paper's figures; Table 4 is run
    for several teachers (the paper does not give its own) and shown as the spread over
    them."""
    from fastnet._files import atomic_write
    from fastnet.reproduction import reproduce_lawrence

    _check_out(args)                       # before the minutes (or hours) of training
    rep = reproduce_lawrence(args.runs, teachers=tuple(range(args.teachers)),
                             tables=tuple(sorted(set(args.tables))), seed=args.seed,
                             progress=lambda text: print(text, file=sys.stderr))
    print(rep.to_text())
    if args.out:
        text = rep.to_json().encode()
        atomic_write(args.out, lambda f: f.write(text))
        print(f"rows written to {args.out}")
    return 0


def _demo(args):
    """Three small success studies on generated tasks (XOR, an encoder, a teacher net): how
    many runs reach the goal, in how many epochs, how fast; works on a fresh install, no data."""
    from fastnet.demo import run_demo

    print(run_demo(runs=args.runs, seed=args.seed, progress=TaskProgress(args.quiet)).summary())
    return 0


# --------------------------------------------------------------------------- parser
