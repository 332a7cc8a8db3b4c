"""Ablation of Proben1's multilayer training rules against the published Tables 3-4, 10-11.

Two steps, both resumable:

``collect``  trains the runs of ``fastnet reproduce proben1 noshortcut|linear`` (same
             networks, same seeds: ``run_seed(0, problem, network, run)``) under one
             *training* variant (RPROP parameters, initial weights) and stores each run's
             whole trajectory -- E_tr of every epoch, E_va, E_te and the test
             classification error at every strip end -- as one JSON line. A run is
             trained until the literal Proben1 multilayer rule (or P5 < 0.1, or the
             linear rule for linear nets) has stopped it, plus a margin of strips, so
             every stopping rule that stops no later can be applied afterwards.
``table``    applies a named *stopping* variant to the stored trajectories (exactly what
             ``train_rprop(stop=...)`` would have done: criteria see the same strip ends)
             and prints ours beside the published means with the match test per column
             and the counts.

Stopping a run never changes its trajectory up to the stop, so one collection serves
every stopping variant; only RPROP/initialisation variants need new training.

    python benchmarks/proben1_ablation.py collect base --tables 10 11 -r 60 -j 2
    python benchmarks/proben1_ablation.py table base literal any3 gl5 ...
    python benchmarks/proben1_ablation.py rules          # list the stopping variants

Findings (60 runs per file, master seed 0; counts = files within the match test of 42):

    training                          stop rule          te  epochs relevant GL-end
    eta+ 1.1, init 0.5 (old preset)   literal (all ever) 26    0      9       7
    eta+ 1.1, init 0.5                GL2                31   24     24      34
    eta+ 1.2, init 0.2, d0 .05-.2     literal            37    0     18       5
    eta+ 1.2, init 0.2, d0 .05-.2     any of GL5/UP8/PQ3 40   14     31      12
    eta+ 1.2, init 0.2, d0 .05-.2     GL2 (recommended)  41   38     36      40
    (same, master seed 1)             GL2                38   36     37      39

The literal rule is the report's rule for its architecture-finding runs (reused for its
study of stopping criteria: it runs until the slowest criterion of each class, GL5, UP8,
PQ3, has fired). Tables 10-11 fit GL2 or P5 < 0.1 or 3000 epochs: GL at the end
2.2-2.5 (sd 0.3-0.6) on gene and diabetes is reproduced in mean and deviation. An initial
weight range of +-0.5 fails the test errors of every problem with >= 24 inputs; eta+ = 1.2
(the linear networks' value) gives the published speed (mean relevant epoch ratio 1.00
against 1.17-1.21 with 1.1).

Results live in $PROBEN1_ABLATION (default ./proben1-ablation), never in the repository.
The published tables are the ones fastnet ships (fastnet/datasets/proben1_published); the
match test is fastnet.reproduction.match: |ours - published| <= max(3 standard errors of
the difference, 5 % of the published mean (15 % for epochs), 0.02).
"""
import argparse
import json
import math
import os
import sys
from multiprocessing import Pool

import numpy as np

OUT = os.environ.get("PROBEN1_ABLATION", "proben1-ablation")
TABLES = os.path.join(os.path.dirname(os.path.abspath(__import__("fastnet.datasets").datasets.__file__)),
                      "proben1_published")
TABLE_FILES = {3: "table3_linear.csv", 4: "table4_linear.csv",
               10: "table10_noshortcut.csv", 11: "table11_noshortcut.csv"}
STRIP = 5
MARGIN_STRIPS = 12
# PROBEN1_NO_P_STOP=1: collect past P5 < 0.1 (to study the progress criterion itself)
NO_P_STOP = os.environ.get("PROBEN1_NO_P_STOP") == "1"

# ----------------------------------------------------------------------------------------
# training variants: train_rprop keyword overrides on top of the run's preset
TRAIN_VARIANTS = {
    "base": {},                                            # the presets as they are
    "eta12": dict(eta_plus=1.2),                           # multilayer with eta+ = 1.2
    "lindelta": dict(eta_plus=1.2, delta0=(0.005, 0.02)),  # linear nets' RPROP parameters
    "lindelta11": dict(delta0=(0.005, 0.02)),
    "init01": dict(init_scale=0.1),
    "irprop-": dict(variant="irprop-"),
    "rprop-": dict(variant="rprop-"),
    "d01": dict(delta0=0.1),
    "init001": dict(init_scale=0.01),
    # the linear networks' whole parameter set (eta+ 1.2, delta0 in [0.005, 0.02],
    # initial weights in [-0.01, 0.01]) on the multilayer nets
    "linall": dict(eta_plus=1.2, delta0=(0.005, 0.02), init_scale=0.01),
    "linall11": dict(delta0=(0.005, 0.02), init_scale=0.01),
    "eta12init01": dict(eta_plus=1.2, init_scale=0.1),
    "eta12init001": dict(eta_plus=1.2, init_scale=0.01),
    "init005": dict(init_scale=0.05),
    "eta12init02": dict(eta_plus=1.2, init_scale=0.2),
    "init02": dict(init_scale=0.2),
    "eta12init005": dict(eta_plus=1.2, init_scale=0.05),
    "eta12init03": dict(eta_plus=1.2, init_scale=0.3),
    "eta12init01irp": dict(eta_plus=1.2, init_scale=0.1, variant="irprop-"),
    "eta12init01lind": dict(eta_plus=1.2, init_scale=0.1, delta0=(0.005, 0.02)),
}


def _published(tables):
    import csv
    rows = {}
    for t in tables:
        with open(os.path.join(TABLES, TABLE_FILES[t])) as fh:
            for r in csv.DictReader(fh):
                # mushroom1 (Table 3) is a single run: its deviations are printed as "|"
                rows[r["problem"]] = ({k: (float(v) if v.strip() not in ("|", "") else 0.0)
                                       for k, v in r.items() if k != "problem"}, t)
    return rows


def _network_kind(table):
    return "linear" if table in (3, 4) else "noshortcut"


def _collect_one(task):
    problem, network, run, variant, root, master = task
    import warnings

    from fastnet import train_rprop
    from fastnet.datasets import load_proben1
    from fastnet.experiment import build_network, run_seed
    from fastnet.rprop import PRESETS

    ds = load_proben1(problem, root)
    net, preset = build_network(network, ds)
    seed = run_seed(master, problem, network, run)
    X_te, Y_te = ds.test
    classification = ds.kind == "classification"
    t_cls = np.argmax(Y_te, axis=1) if classification else None
    cls = []
    linear = preset == "proben1-linear"
    st = {"done_at": None}

    def callback(epoch, state):
        if classification:
            cls.append(float(100.0 * np.mean(np.argmax(net.predict(X_te), axis=1) != t_cls)))
        if st["done_at"] is None:
            v = state.val_errors
            feats = _features(state.train_errors, v)
            j = len(v) - 1
            if linear:
                done = feats["gl"][j] > 5 or feats["p"][j] < 0.1
            else:
                done = ((feats["p"][j] < 0.1 and not NO_P_STOP) or (
                    np.any(feats["gl"][:j + 1] > 5) and np.any(feats["up"][:j + 1] >= 8)
                    and np.any(feats["pq"][:j + 1] > 3)))
            if done:
                st["done_at"] = epoch
        return st["done_at"] is not None and epoch >= st["done_at"] + MARGIN_STRIPS * STRIP

    kw = dict(TRAIN_VARIANTS[variant]) if not linear else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = train_rprop(net, *ds.train, *ds.val, X_test=X_te, Y_test=Y_te, seed=seed,
                        preset=preset, stop=None, max_epochs=3000, callback=callback, **kw)
    return {"problem": problem, "network": network, "run": run, "variant": variant,
            "preset": preset, "params": {k: list(v) if isinstance(v, tuple) else v
                                         for k, v in {**PRESETS[preset], **kw}.items()},
            "epochs": r.epochs, "truncated": st["done_at"] is None,
            "tr": r.train_error.tolist(), "va": r.val_error.tolist(),
            "te": r.test_error.tolist(), "cls": cls if classification else None,
            "cpu": r.cpu_time}


def collect(args):
    pub = _published(args.tables)
    problems = [p for p in pub if not args.problems or p in args.problems]
    os.makedirs(OUT, exist_ok=True)
    path = _traj_path(args.variant, args.seed)
    done = set()
    if os.path.exists(path):
        with open(path) as fh:
            good = []
            for line in fh:
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    break  # torn last line
                good.append(line)
                done.add((rec["problem"], rec["network"], rec["run"]))
        with open(path, "w") as fh:
            fh.writelines(good)
    tasks = [(p, _network_kind(pub[p][1]), r, args.variant, args.data, args.seed)
             for r in range(args.runs) for p in problems
             if (p, _network_kind(pub[p][1]), r) not in done]
    print(f"{len(tasks)} runs to train ({len(done)} stored) -> {path}", flush=True)
    with open(path, "a") as fh, Pool(args.jobs) as pool:
        for i, rec in enumerate(pool.imap_unordered(_collect_one, tasks), 1):
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            if i % 100 == 0:
                print(f"  {i}/{len(tasks)}", flush=True)


# ----------------------------------------------------------------------------------------
# features at strip ends: everything a Proben1 criterion reads

def _features(train_err, val_err, k=STRIP, tr_mode="forward"):
    """Per strip end j (epoch k(j+1)): GL, P_k, GL/P_k, UP run length, E_opt."""
    tr = np.asarray(train_err, dtype=float)
    va = np.asarray(val_err, dtype=float)
    n = len(va)
    strips = tr[:n * k].reshape(n, k) if len(tr) >= n * k else None
    if strips is None:  # callback during training: train_errors is exactly n*k long
        strips = tr[:n * k].reshape(n, k)
    if tr_mode == "after":  # E_tr after the update = forward error of the next epoch
        nxt = np.append(tr[1:], tr[-1])
        strips = nxt[:n * k].reshape(n, k)
    low = strips.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 1000.0 * (strips.mean(axis=1) / low - 1.0)
    eopt = np.minimum.accumulate(va)
    with np.errstate(divide="ignore", invalid="ignore"):
        gl = 100.0 * (va / eopt - 1.0)
        pq = np.where(p > 0, gl / p, np.where(gl > 0, np.inf, 0.0))
    up = np.zeros(n, dtype=int)
    for j in range(1, n):
        up[j] = up[j - 1] + 1 if va[j] > va[j - 1] else 0
    return {"gl": gl, "p": p, "pq": pq, "up": up, "eopt": eopt, "epoch": k * np.arange(1, n + 1)}


# ----------------------------------------------------------------------------------------
# stopping variants: f(features, rec) -> index j of the strip end where training stops
# (None: not within the trajectory)

def _first(mask):
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def _ever(mask):
    return np.logical_or.accumulate(mask)


def _min_none(*xs):
    xs = [x for x in xs if x is not None]
    return min(xs) if xs else None


def _limit(f):
    """Add Proben1's P5(t) < 0.1 and 3000-epoch stops to a rule."""
    def rule(F, rec):
        j = f(F, rec)
        return _min_none(j, _first(F["p"] < 0.1), _first(F["epoch"] >= 3000))
    return rule


def _all_ever(gl=5, up=8, pq=3):
    return _limit(lambda F, r: _first(_ever(F["gl"] > gl) & _ever(F["up"] >= up)
                                      & _ever(F["pq"] > pq)))


def _any(gl=5, up=8, pq=3):
    return _limit(lambda F, r: _first((F["gl"] > gl) | (F["up"] >= up) | (F["pq"] > pq)))


RULES = {
    # the literal reading (fastnet's preset): all three have held at least once
    "literal": _all_ever(),
    # all three at the same strip end
    "all-now": _limit(lambda F, r: _first((F["gl"] > 5) & (F["up"] >= 8) & (F["pq"] > 3))),
    # any one of the three
    "any3": _any(),
    # GL5 alone (the linear networks' rule)
    "gl5": _limit(lambda F, r: _first(F["gl"] > 5)),
    "gl2": _limit(lambda F, r: _first(F["gl"] > 2)),
    "gl3": _limit(lambda F, r: _first(F["gl"] > 3)),
    "pq3": _limit(lambda F, r: _first(F["pq"] > 3)),
    "up8": _limit(lambda F, r: _first(F["up"] >= 8)),
    "up2": _limit(lambda F, r: _first(F["up"] >= 2)),
    "up3": _limit(lambda F, r: _first(F["up"] >= 3)),
    "gl5|pq3": _limit(lambda F, r: _first((F["gl"] > 5) | (F["pq"] > 3))),
    "gl5|up8": _limit(lambda F, r: _first((F["gl"] > 5) | (F["up"] >= 8))),
    # GL2 with other progress limits (needs trajectories collected with PROBEN1_NO_P_STOP=1)
    "gl2-noP": lambda F, r: _min_none(_first(F["gl"] > 2), _first(F["epoch"] >= 3000)),
    "gl2-p0.05": lambda F, r: _min_none(_first((F["gl"] > 2) | (F["p"] < 0.05)),
                                        _first(F["epoch"] >= 3000)),
    "gl2-p0.02": lambda F, r: _min_none(_first((F["gl"] > 2) | (F["p"] < 0.02)),
                                        _first(F["epoch"] >= 3000)),
    # all three ever, but UP counts epochs (8 epochs ~ 2 strips)
    "all-ever-up2strips": _all_ever(up=2),
}


def _token(F, tok):
    """One criterion's mask over strip ends: glX, pqX, upN, pX (P_k < X)."""
    import re
    m = re.fullmatch(r"(gl|pq|up|p|ep)([0-9.]+)", tok)
    if not m:
        raise ValueError(f"unknown criterion {tok!r}")
    kind, x = m.group(1), float(m.group(2))
    return {"gl": lambda: F["gl"] > x, "pq": lambda: F["pq"] > x,
            "up": lambda: F["up"] >= x, "p": lambda: F["p"] < x,
            "ep": lambda: F["epoch"] >= x}[kind]()


def rule_function(rule):
    """A named rule of RULES, or a composed one:

    ``a+b+c``        stop when any of the criteria holds (plus P5 < 0.1 and 3000 epochs)
    ``ever:a+b+c``   stop once each has held at least once (plus P5 < 0.1, 3000 epochs)
    ``now:a+b+c``    stop when all hold at the same strip end (plus P5 < 0.1, 3000)
    with criteria glX, pqX, upN (N successive strips), pX (P5 < X), epN (epoch >= N).
    """
    if rule in RULES:
        return RULES[rule]
    mode, _, body = rule.rpartition(":")
    toks = body.split("+")
    if mode == "":
        return _limit(lambda F, r: _first(np.logical_or.reduce([_token(F, t) for t in toks])))
    if mode == "ever":
        return _limit(lambda F, r: _first(np.logical_and.reduce(
            [_ever(_token(F, t)) for t in toks])))
    if mode == "now":
        return _limit(lambda F, r: _first(np.logical_and.reduce([_token(F, t) for t in toks])))
    raise ValueError(f"unknown rule {rule!r}")


def _apply(rec, rule, tr_mode="forward"):
    F = _features(rec["tr"], rec["va"], tr_mode=tr_mode)
    j = rule_function(rule)(F, rec)
    if j is None:
        return None
    va = np.asarray(rec["va"][:j + 1])
    b = int(np.argmin(va))  # first minimum, as the trainer keeps (strict <)
    epochs = F["epoch"][j]
    return {"tr": float(np.min(rec["tr"][:epochs])), "va": float(va[b]), "te": rec["te"][b],
            "cls": rec["cls"][b] if rec["cls"] is not None else None,
            "gl": float(F["gl"][j]), "epochs": int(epochs), "relevant": int(F["epoch"][b]),
            "te_va": None}


COLUMNS = ["te", "cls", "epochs", "relevant", "gl", "tr", "va"]


def _match(ours, sd_o, n_o, pub, sd_p, n_p, col):
    se = math.sqrt(sd_o ** 2 / n_o + sd_p ** 2 / n_p)
    tol = max(3 * se, (0.15 if col in ("epochs", "relevant") else 0.05) * abs(pub), 0.02)
    return abs(ours - pub) <= tol


def _traj_path(variant, seed=0):
    return os.path.join(OUT, f"traj-{variant}.jsonl" if seed == 0 else f"traj-{variant}-s{seed}.jsonl")


def load_traj(variant, seed=0):
    path = _traj_path(variant, seed)
    recs = []
    with open(path) as fh:
        for line in fh:
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return recs


def table(args):
    pub = _published(args.tables)
    recs = load_traj(args.variant, args.seed)
    by = {}
    for r in recs:
        if r["problem"] in pub and r["run"] < args.runs:
            by.setdefault(r["problem"], []).append(r)
    summary = {}
    for rule in args.rules:
        counts = {c: 0 for c in COLUMNS}
        totals = {c: 0 for c in COLUMNS}
        lines = []
        missing = 0
        for p in pub:
            if p not in by:
                continue
            res = [_apply(r, rule, args.tr_mode) for r in by[p]]
            missing += sum(x is None for x in res)
            res = [x for x in res if x is not None]
            n_p = 1 if p == "mushroom1" else 10 if pub[p][1] in (3, 4) else 60
            cells = []
            for c in COLUMNS:
                key = {"te": "te_mean", "cls": "cls_mean", "epochs": "epochs_mean",
                       "relevant": "relevant_mean", "gl": "gl_mean", "tr": "tr_mean",
                       "va": "va_mean"}[c]
                if key not in pub[p][0] or res[0][c] is None:
                    cells.append(f"{'':>17}")
                    continue
                vals = np.array([x[c] for x in res], dtype=float)
                ours, sd_o = float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
                ok = _match(ours, sd_o, len(vals), pub[p][0][key], pub[p][0][key.replace("mean", "sd")],
                            n_p, c)
                counts[c] += ok
                totals[c] += 1
                cells.append(f"{ours:7.2f}/{pub[p][0][key]:7.2f}{'  ' if ok else ' X'}")
            lines.append(f"{p:10s} n={len(res):2d} " + " ".join(cells))
        summary[rule] = (counts, totals, missing)
        if not args.quiet:
            print(f"== {args.variant} / {rule} (tr_mode={args.tr_mode}) ours/published, X = outside")
            print(f"{'':16s}" + " ".join(f"{c:>17s}" for c in COLUMNS))
            print("\n".join(lines))
        print(f"{args.variant:10s} {rule:22s} " + "  ".join(
            f"{c} {counts[c]}/{totals[c]}" for c in COLUMNS) + (
                f"  [{missing} runs truncated]" if missing else ""), flush=True)
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("variant", choices=TRAIN_VARIANTS)
    c.add_argument("--tables", type=int, nargs="+", default=[10, 11])
    c.add_argument("--problems", nargs="*")
    c.add_argument("-r", "--runs", type=int, default=10)
    c.add_argument("-j", "--jobs", type=int, default=2)
    c.add_argument("--data", default=os.environ.get("FASTNET_DATA"))
    c.add_argument("--seed", type=int, default=0, help="master seed (the reproduce default is 0)")
    t = sub.add_parser("table")
    t.add_argument("variant", choices=TRAIN_VARIANTS)
    t.add_argument("rules", nargs="+")
    t.add_argument("--tables", type=int, nargs="+", default=[10, 11])
    t.add_argument("-r", "--runs", type=int, default=60)
    t.add_argument("--tr-mode", default="forward", choices=["forward", "after"])
    t.add_argument("-q", "--quiet", action="store_true")
    t.add_argument("--seed", type=int, default=0)
    sub.add_parser("rules")
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        collect(args)
    elif args.cmd == "table":
        table(args)
    else:
        print("\n".join(RULES))


if __name__ == "__main__":
    sys.exit(main())
