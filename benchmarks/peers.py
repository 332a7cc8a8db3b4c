#!/usr/bin/env python
"""fastnet against its peers (FANN, PyTorch, plain NumPy, JAX, ffnet) on cases A-G, in one run.

Every peer trains the same networks from the same fixed initial weights with the same
full-batch iRPROP- settings, single-threaded, in float64 and in float32; only the epoch
loop is timed (CPU time is the main figure, wall time is reported too). Each peer and
precision runs in its own worker process, all pinned to one core, taking turns (A B C ...,
A B C ...): XLA's thread pool spins after a jitted call, so a tool's process must not time
another (``--inline``: the older protocol, every peer in this process, one after another).
See benchmarks/README.md.

    python benchmarks/peers.py                          # A-G and G/tanh, all available peers, both precisions
    python benchmarks/peers.py --native-blas --peers fastnet,jax,torch,numpy --json f32.json
                                                        # the float32 comparison (issue 48's bars)
    python benchmarks/peers.py --dtype float64 --cases A,C --peers fastnet,numpy   # the "core bar" check
    python benchmarks/peers.py --cases A,S --activation proben1,tanh,logistic,relu
    python benchmarks/peers.py --levels default,avx2,none    # one table per fastnet CPU level, one run

``--levels``: fastnet runs in one worker per level (``FASTNET_SIMD`` set in that worker's
environment; the peers run once, at their own level); each level gets its own tables, headed
by the CPU and the level, with the ratios against that level's fastnet times.

float32 is the default precision of JAX (x64 off), PyTorch and ONNX runtimes: every float32
column gets float32 data and weights (JAX jit at its default precision, PyTorch with
``torch.set_num_threads(1)``, NumPy float32, FANN's libfloatfann) and fastnet runs
``MLP(..., dtype="float32")``; while fastnet refuses that, its column says "fastnet float32
unavailable" and the float32 bars print "n/a".

Case S (synthetic 4096 x 32-32-4, one hidden layer, no shortcuts) is not one of the cases A-G; with
``--activation`` every peer runs the same hidden units (tanh, logistic, relu; proben1 is
x/(1+|x|), the default), outputs linear. A case with another activation is reported as
e.g. ``S/tanh``. benchmarks/activations.py measures the same cases in alternation.
"""

from __future__ import annotations

import os
import sys

# One thread for every BLAS/OpenMP pool: must happen before numpy (or torch) is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
# --native-blas: let OpenBLAS pick its kernel for this CPU (this process only; see README).
ORIGINAL_OPENBLAS_ENV = {v: os.environ.get(v) for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
if "--native-blas" in sys.argv[1:]:
    for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(_var, None)

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peers import cases as cases_mod  # noqa: E402
from _peers import levels, machine  # noqa: E402
from _peers.harness import PeerUnavailable, measure  # noqa: E402
from _peers.workers import label, measure_in_turns, peer_class  # noqa: E402,F401  (peer_class: activations.py)

ALL_PEERS = ("fastnet", "numpy", "fann", "torch", "jax", "ffnet")
# Peers that train another network (ffnet: logistic units, its own data scaling): their time
# per epoch is compared, their SSE is not, and they are no candidates for "best peer".
OTHER_NETWORK = ("ffnet",)
DTYPES = ("float64", "float32")
SHORT = {"float64": "f64", "float32": "f32"}
INIT_RTOL = {"float64": 1e-10, "float32": 1e-5}   # SSE at init vs the float64 reference
FINAL_ORDER = 5.0   # final SSE more than this factor from the NumPy f64 (or median) value is flagged

# Bars: (issue, case, peer to beat: "numpy"/"fann"/"jax"/"best", factor); float64 unless listed
# in BARS_F32: (issue, case, peer to beat in float32 or "fastnet f64", factor).
BARS = [
    ("issue 2", "A", "numpy", 2.0),
    ("issue 2", "C", "numpy", 1.0),
    ("issue 7", "A", "fann", 3.0),
    ("issue 7", "B", "best", 1.5),
    ("issue 7", "C", "best", 1.5),
    ("issue 7", "F", "best", 1.5),
    ("issue 7", "D", "best", 1.3),
    ("issue 7", "E", "best", 1.3),
    ("issue 7", "G", "best", 1.3),
] + [("issue 23", key, "ffnet", 3.0) for key in "ABCDEFG"] + [
    # every activation as fast as Proben1's: >= 1.2x the best peer per epoch
    ("issue 31", f"{key}/{act}", "best", 1.2) for key in "AS" for act in ("tanh", "logistic", "relu")
] + [("issue 31", f"{key}/tanh", "best", 1.2) for key in "BCDEFG"] + [
    ("issue 31", key, "best", 1.2) for key in "S"]
BARS_F32 = [("issue 48", key, "jax", 1.2) for key in ("A", "B", "C", "D", "E", "F", "G", "G/tanh")] + [
    ("issue 48", "G", "fastnet f64", 1.6)]
DEFAULT_CASES = "A,B,C,D,E,F,G,G/tanh"


def availability(name):
    """None if the peer can be tried, else the reason it cannot."""
    try:
        if name == "fastnet":
            from _peers.fastnet_peer import import_fastnet
            import_fastnet()
        elif name == "torch":
            from _peers.torch_peer import import_torch
            import_torch()
        elif name == "fann":
            from _peers.fann import _load
            _load("float64")
        elif name == "jax":
            from _peers.jax_peer import import_jax
            import_jax()
        elif name == "ffnet":
            from _peers.ffnet_peer import import_ffnet
            import_ffnet()
    except PeerUnavailable as exc:
        return str(exc)
    return None


def parse_cases(text, activations):
    """[(case key, activation)] from ``--cases`` ("A,G,G/tanh"); a key alone runs every ``activations``."""
    runs = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        key, _, act = item.partition("/")
        key = key.upper()
        if key not in cases_mod.CASES:
            raise SystemExit(f"`--cases`: unknown {key}; valid: {', '.join(cases_mod.CASES)}")
        if act and act not in cases_mod.HIDDEN_ACTIVATIONS:
            raise SystemExit(f"`--cases`: unknown activation {act} in {item}; valid: "
                             f"{', '.join(cases_mod.HIDDEN_ACTIVATIONS)}")
        for a in ([act] if act else activations):
            if (key, a) not in runs:
                runs.append((key, a))
    return runs


def parse_list(text, valid, what):
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in valid]
    if bad:
        raise SystemExit(f"`--{what}`: unknown {', '.join(bad)}; valid: {', '.join(valid)}")
    return items


def fmt_ms(s):
    return "—" if s is None else f"{s * 1e3:.4g}"


def col(r):
    return f"{r['peer']} {SHORT[r['dtype']]}"


# --------------------------------------------------------------------------- per case

def progress(msg):
    """Progress of a running case (stderr: stdout keeps the tables)."""
    print(msg, file=sys.stderr, flush=True)


def case_key(key, activation):
    """A case's name in the tables and the JSON: "A" (proben1 units) or "A/tanh"."""
    return key if activation == "proben1" else f"{key}/{activation}"


def run_case(key, activation, peers, dtypes, args, peaks, unavailable, log):
    case = cases_mod.load_case(key, activation)
    info = {
        "label": case.spec.label, "dataset": case.spec.dataset, "hidden": list(case.spec.hidden),
        "activation": activation,
        "shortcut": case.shortcut, "sizes": list(case.sizes), "N": case.n_patterns,
        "C": case.n_connections, "traversals_per_epoch": case.traversals_per_epoch,
        "flop_per_epoch": case.flop_per_epoch, "sse_init_ref": case.sse_init_ref,
        "data": case.data_note, "results": [], "skipped": {},
    }
    log(f"\n== {case.spec.label}: N={case.n_patterns} inputs={case.sizes[0]} outputs={case.sizes[-1]} "
        f"C={case.n_connections}; {case.traversals_per_epoch:,} traversals/epoch; "
        f"{case.flop_per_epoch / 1e6:.3g} MFLOP/epoch; SSE at init (f64 reference) {case.sse_init_ref:.6g}")
    log(f"   data: {case.data_note}")
    columns = []   # fastnet once per level (each its own worker), every peer once
    for dtype in dtypes:
        for name in peers:
            for level in (args.levels if name == "fastnet" else [None]):
                if name in unavailable:
                    info["skipped"][label((name, dtype, level))] = unavailable[name]
                else:
                    columns.append((name, dtype, level))
    if args.inline:
        results = measure_inline(case, columns, args, info, log)
    else:
        results, skipped = measure_in_turns(key, activation, columns, args.epochs, args.repeats, log,
                                            args.verbose)
        info["skipped"].update(skipped)
    for r in results:
        t = r["cpu_s_per_epoch"]
        r["traversals_per_s"] = case.traversals_per_epoch / t
        r["gflops"] = case.flop_per_epoch / t / 1e9
        r["frac_peak"] = case.flop_per_epoch / t / peaks[r["dtype"]]["flops_cpu"]
        progress(f"   {label((r['peer'], r['dtype'], r.get('level'))):<20} {t * 1e3:9.4f} ms/epoch CPU, "
                 f"{r['wall_s_per_epoch'] * 1e3:9.4f} wall")
    views = {}
    for level in args.levels:
        views[level] = view = level_view(info, results, level)
        log(f"   -- {levels.table_heading(view['results'], level)}")
        for r in view["results"]:
            if r["peer"] == "fastnet":
                fastnet_own_account(r, case, args, log)
        derive(view, args)
        print_case_table(view, args, log)
    return views


def level_view(info, results, level):
    """The case as seen at one fastnet level: that level's fastnet rows and every peer's, each
    row a copy recording the level (its ratios are against that level's fastnet)."""
    view = dict(info, level=level, skipped=levels.own(info["skipped"], level))
    view["results"] = [dict(r, level=level) for r in results if r["peer"] != "fastnet" or r["level"] == level]
    return view


def measure_inline(case, columns, args, info, log):
    """The older protocol (``--inline``): every column in this process, one after the other."""
    results = []
    for name, dtype, level in columns:
        what = label((name, dtype, level))
        peer = None
        try:
            peer = peer_class(name)(case, dtype)
            results.append(measure(peer, args.epochs, args.repeats))
            if name == "fastnet":   # this process's level, set before fastnet was imported
                results[-1].update(levels.verify(args.levels[0]))
        except PeerUnavailable as exc:
            info["skipped"][what] = str(exc)
            log(f"   {what}: skipped: {exc}")
        except Exception as exc:  # a peer that breaks must not stop the others
            info["skipped"][what] = f"ERROR {type(exc).__name__}: {exc}"
            log(f"   {what}: ERROR {type(exc).__name__}: {exc}")
            if args.verbose:
                traceback.print_exc()
        finally:
            if peer is not None:
                peer.close()
    return results


def fastnet_own_account(r, case, args, log):
    """fastnet's own res.cpu_time and traversal count for the timed calls."""
    timed = r.get("own_calls", [])[1:1 + args.repeats]   # calls: warm-up, repeats, SSE@20 run
    if len(timed) != args.repeats:
        return
    r["own_cpu_s_per_epoch"] = statistics.median(c[1] / c[0] for c in timed)
    expected = args.epochs * case.traversals_per_epoch
    counted = [c[2] for c in timed]
    r["traversals_counted_ok"] = all(c == expected for c in counted)
    log(f"   fastnet: res.cpu_time {r['own_cpu_s_per_epoch'] * 1e3:.4f} ms/epoch (inside train_rprop); "
        f"res.traversals.total {counted[0]:,} "
        + ("= " if r["traversals_counted_ok"] else "!= ") + f"{expected:,} expected")


def derive(info, args):
    """Ratios to fastnet and the best peer, and the SSE checks."""
    res = info["results"]
    for dtype in DTYPES:
        rows = [r for r in res if r["dtype"] == dtype]
        fast = next((r for r in rows if r["peer"] == "fastnet"), None)
        others = [r for r in rows if r["peer"] not in ("fastnet",) + OTHER_NETWORK]
        best = min(others, key=lambda r: r["cpu_s_per_epoch"]) if others else None
        for r in rows:
            r["fastnet_speedup"] = (r["cpu_s_per_epoch"] / fast["cpu_s_per_epoch"]
                                    if fast and r is not fast else None)
        if best:
            info.setdefault("best_peer", {})[dtype] = col(best)
        if fast and best:
            info.setdefault("fastnet_vs_best", {})[dtype] = best["cpu_s_per_epoch"] / fast["cpu_s_per_epoch"]
    fast64 = next((r for r in res if r["peer"] == "fastnet" and r["dtype"] == "float64"), None)
    anyp = [r for r in res if r["peer"] not in ("fastnet",) + OTHER_NETWORK]
    if fast64 and anyp and len({r["dtype"] for r in anyp}) > 1:
        best = min(anyp, key=lambda r: r["cpu_s_per_epoch"])
        info["fastnet_f64_vs_best_any"] = {"peer": col(best),
                                           "ratio": best["cpu_s_per_epoch"] / fast64["cpu_s_per_epoch"]}
    # SSE checks
    ref_final = next((r for r in res if r["peer"] == "numpy" and r["dtype"] == "float64"), None)
    finals = [r["sse_final"] for r in res if r["peer"] not in OTHER_NETWORK]
    ref_value = ref_final["sse_final"] if ref_final else (statistics.median(finals) if finals else None)
    for r in res:
        if r["peer"] in OTHER_NETWORK:
            r["sse_init_relerr"] = None
            r["flags"] = ["other network: SSE not compared"]
            continue
        flags = []
        rel = abs(r["sse_init"] / info["sse_init_ref"] - 1.0)
        r["sse_init_relerr"] = rel
        if not rel <= INIT_RTOL[r["dtype"]]:
            flags.append(f"INIT SSE OFF by {rel:.1e}")
        if not all(math.isfinite(v) for v in r["sse_final_repeats"]):
            flags.append("NON-FINITE SSE")
        elif ref_value and ref_value > 0:
            ratio = r["sse_final"] / ref_value
            if ratio > FINAL_ORDER or ratio < 1 / FINAL_ORDER:
                flags.append(f"FINAL SSE x{ratio:.3g} of reference")
        reps = r["sse_final_repeats"]
        if max(reps) - min(reps) > 1e-9 * max(abs(max(reps)), 1.0):
            flags.append("repeats differ")
        r["flags"] = flags
    # agreement of the exact-iRPROP- float64 peers (numpy, torch, fastnet)
    exact = [r for r in res if r["dtype"] == "float64" and r["peer"] in ("numpy", "torch", "fastnet")]
    if ref_final and len(exact) > 1:
        agree = {}
        for r in exact:
            if r is ref_final:
                continue
            agree[r["peer"]] = {
                "early": abs(r["sse_early"] / ref_final["sse_early"] - 1),
                "final": abs(r["sse_final"] / ref_final["sse_final"] - 1)}
        info["f64_agreement_vs_numpy"] = agree


def print_case_table(info, args, log):
    res = info["results"]
    if not res:
        return
    early = f"SSE@{res[0]['sse_early_epochs']}"
    head = (f"   {'peer':<12} {'CPU ms/ep':>10} {'wall ms/ep':>10} {'spread':>6} {'Mtrav/s':>9} "
            f"{'GFLOP/s':>8} {'%peak':>6} {'fastnet x':>9}  {'SSE init':>11} {early:>11} "
            f"{'SSE@' + str(args.epochs):>11}  check")
    log(head)
    for r in res:
        sp = "" if r["fastnet_speedup"] is None else f"{r['fastnet_speedup']:.2f}"
        spread = "" if r["spread_cpu"] is None else f"{100 * r['spread_cpu']:.0f}%"
        log(f"   {col(r):<12} {r['cpu_s_per_epoch'] * 1e3:10.4f} {r['wall_s_per_epoch'] * 1e3:10.4f} {spread:>6} "
            f"{r['traversals_per_s'] / 1e6:9.0f} {r['gflops']:8.3g} {100 * r['frac_peak']:6.2f} {sp:>9}  "
            f"{r['sse_init']:11.6g} {r['sse_early']:11.6g} {r['sse_final']:11.6g}  "
            f"{'; '.join(r['flags']) or 'ok'}")
    for dtype, ratio in info.get("fastnet_vs_best", {}).items():
        log(f"   fastnet {SHORT[dtype]} vs best peer {info['best_peer'][dtype]}: {ratio:.2f}x "
            f"({'fastnet faster' if ratio > 1 else 'fastnet slower'})")
    anyb = info.get("fastnet_f64_vs_best_any")
    if anyb:
        log(f"   fastnet f64 vs best peer of any precision ({anyb['peer']}): {anyb['ratio']:.2f}x")
    agree = info.get("f64_agreement_vs_numpy")
    if agree:
        log("   f64 SSE vs numpy f64 (relative): " + ", ".join(
            f"{p} {v['early']:.1e} @{res[0]['sse_early_epochs']} / {v['final']:.1e} @{args.epochs}"
            for p, v in agree.items()))


# --------------------------------------------------------------------------- summary

def summary(all_cases, args, log, heading):
    cols = []
    for c in all_cases.values():
        for r in c["results"]:
            if col(r) not in cols:
                cols.append(col(r))
    if not cols:
        return
    log(f"\n== Summary, {heading}")
    log("   median CPU ms per epoch (fastnet x = best peer time / fastnet time, same precision)")
    log(f"   {'case':<24} " + " ".join(f"{k:>11}" for k in cols) + "  " +
        " ".join(f"{'fastnet x best ' + SHORT[d]:>17}" for d in args.dtypes))
    for _key, c in all_cases.items():
        cells = {col(r): fmt_ms(r["cpu_s_per_epoch"]) for r in c["results"]}
        vs = c.get("fastnet_vs_best", {})
        best = [f"{vs[d]:17.2f}" if d in vs else f"{'—':>17}" for d in args.dtypes]
        log(f"   {c['label']:<24} " + " ".join(f"{cells.get(k, '—'):>11}" for k in cols) + "  " + " ".join(best))
    if len(args.dtypes) > 1:
        precision_summary(all_cases, log)


def precision_summary(all_cases, log):
    """Per peer, its float64 time / its float32 time; and JAX f32 time / fastnet f64 time."""
    names = [n for n in ALL_PEERS if any(r["peer"] == n for c in all_cases.values() for r in c["results"])]
    log("\n== float64 time / float32 time per peer (> 1: float32 faster); last column: JAX f32 time / "
        "fastnet f64 time (> 1: fastnet f64 faster than JAX at its default precision)")
    log(f"   {'case':<24} " + " ".join(f"{n:>9}" for n in names) + f"  {'jax f32 / fastnet f64':>22}")
    for c in all_cases.values():
        t = {(r["peer"], r["dtype"]): r["cpu_s_per_epoch"] for r in c["results"]}
        cells = [f"{t[(n, 'float64')] / t[(n, 'float32')]:9.2f}" if (n, "float64") in t and (n, "float32") in t
                 else f"{'—':>9}" for n in names]
        jf = (f"{t[('jax', 'float32')] / t[('fastnet', 'float64')]:22.2f}"
              if ("jax", "float32") in t and ("fastnet", "float64") in t else f"{'—':>22}")
        c["jax_f32_over_fastnet_f64"] = (t[("jax", "float32")] / t[("fastnet", "float64")]
                                         if ("jax", "float32") in t and ("fastnet", "float64") in t else None)
        log(f"   {c['label']:<24} " + " ".join(cells) + "  " + jf)


def _opponent(rows, target, other_rows):
    """The row fastnet is measured against: a named peer, the best peer, or fastnet f64."""
    if target == "best":
        others = [r for p, r in rows.items() if p not in ("fastnet",) + OTHER_NETWORK]
        return min(others, key=lambda r: r["cpu_s_per_epoch"]) if others else None
    if target == "fastnet f64":
        return other_rows.get("fastnet")
    return rows.get(target)


def check_bars(all_cases, args, log, level):
    log(f"\n== Bars at fastnet level {level} (CPU time per epoch; traversals/s ratios equal time ratios; "
        "[paired]: the median of the repeats' ratios, each pair timed in turn)")
    out = []
    for dtype, bars in (("float64", BARS), ("float32", BARS_F32)):
        for issue, key, target, factor in bars:
            out.append(check_bar(all_cases, args, log, dtype, issue, key, target, factor))
    return out


def check_bar(all_cases, args, log, dtype, issue, key, target, factor):
    c = all_cases.get(key)
    line = {"issue": issue, "case": key, "versus": target, "factor": factor, "dtype": dtype}
    rows = {r["peer"]: r for r in (c["results"] if c else []) if r["dtype"] == dtype}
    rows64 = {r["peer"]: r for r in (c["results"] if c else []) if r["dtype"] == "float64"}
    fast = rows.get("fastnet")
    opp = _opponent(rows, target, rows64)
    short = SHORT[dtype]
    what = f"{issue}: case {key}: fastnet {short} >= {factor:g}x " + (
        f"best peer {short}" if target == "best" else target if target == "fastnet f64" else f"{target} {short}")
    if c is None or fast is None or opp is None:
        missing = ("case not run" if c is None else f"fastnet {short} not measured" if fast is None
                   else f"{target} not measured")
        unavailable_f32 = dtype == "float32" and c is not None and fast is None
        status = "n/a" if unavailable_f32 else "SKIP"
        reason = c["skipped"].get(f"fastnet {short}", missing) if unavailable_f32 else missing
        line.update(status=status, reason=reason)
        log(f"{status} {what} ({reason if status == 'SKIP' else 'fastnet float32 unavailable'})")
        return line
    ratio = opp["cpu_s_per_epoch"] / fast["cpu_s_per_epoch"]
    pairs = list(zip(opp["cpu_s_per_epoch_repeats"], fast["cpu_s_per_epoch_repeats"]))
    paired = statistics.median(o / f for o, f in pairs)
    status = "PASS" if ratio >= factor else "FAIL"
    measured = sorted(p for p in rows if p not in ("fastnet",) + OTHER_NETWORK)
    missing = sorted(set(ALL_PEERS) - {"fastnet", *OTHER_NETWORK} - set(measured))
    extra = (f"; best of measured: {', '.join(measured)} -> {opp['peer']}" if target == "best" else "")
    if target == "best" and missing and status == "PASS":
        status = "PASS-PARTIAL"   # a missing peer could still be faster
        extra += f"; not measured: {', '.join(missing)}"
    line.update(status=status, ratio=ratio, paired_ratio=paired, peer=col(opp), peers_measured=measured)
    log(f"{status} {what}: {ratio:.2f}x [paired {paired:.2f}] ({fast['cpu_s_per_epoch'] * 1e3:.4g} vs "
        f"{opp['cpu_s_per_epoch'] * 1e3:.4g} ms/epoch{extra})")
    return line


# --------------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--cases", default=DEFAULT_CASES,
                   help="comma list of A-G and S, each optionally with its hidden units as KEY/ACTIVATION "
                   f"(e.g. G/tanh; default {DEFAULT_CASES})")
    p.add_argument("--activation", default="proben1",
                   help="comma list of hidden activations for the cases given without one: "
                   + ",".join(cases_mod.HIDDEN_ACTIVATIONS))
    p.add_argument("--peers", default=None,
                   help=f"comma list of {','.join(ALL_PEERS)} (default: all that are available)")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dtype", default="float64,float32",
                   help="float64, float32 or both (the default): the float32 columns are JAX at its default "
                   "precision, PyTorch, NumPy and FANN in float32 and fastnet MLP(..., dtype='float32')")
    p.add_argument("--inline", action="store_true",
                   help="every peer in this process, one after the other (the older protocol; JAX's "
                   "spinning thread pool is then charged to the peers timed after it)")
    p.add_argument("--json", default=None, metavar="PATH", help="write every figure to this JSON file")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 if a bar FAILs or a peer's initial SSE differs from the reference")
    p.add_argument("--native-blas", action="store_true",
                   help="unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this run (numpy at its best)")
    levels.add_argument(p)
    p.add_argument("-v", "--verbose", action="store_true", help="tracebacks for peers that raise")
    args = p.parse_args(argv)
    if args.inline and len(args.levels) > 1:
        p.error("`--inline` runs fastnet in this process, at one level: give one `--levels`")
    args.activations = parse_list(args.activation, cases_mod.HIDDEN_ACTIVATIONS, "activation")
    args.runs = parse_cases(args.cases, args.activations)
    args.cases = sorted({k for k, _ in args.runs}, key=list(cases_mod.CASES).index)
    args.explicit_peers = args.peers is not None
    args.peers = parse_list(args.peers or ",".join(ALL_PEERS), ALL_PEERS, "peers")
    args.dtypes = parse_list(args.dtype, DTYPES, "dtype")
    if args.epochs < 1 or args.repeats < 1:
        raise SystemExit("`--epochs` and `--repeats` must be >= 1")
    return args


def tool_versions(args, unavailable):
    """The versions of the peers that run (and which kernels fastnet runs)."""
    versions = {}
    if "torch" not in unavailable and "torch" in args.peers:
        import torch
        versions["torch"] = torch.__version__
        versions["torch_threads"] = torch.get_num_threads()
    if "ffnet" not in unavailable and "ffnet" in args.peers:
        import ffnet
        versions["ffnet"] = getattr(ffnet, "version", None) or getattr(ffnet, "__version__", "?")
    if "jax" not in unavailable and "jax" in args.peers:
        import jax
        versions["jax"] = jax.__version__
        versions["jaxlib"] = getattr(__import__("jaxlib"), "__version__", "?")
    if "fann" not in unavailable and "fann" in args.peers:
        from _peers.fann import fann_version
        versions["fann"] = fann_version()
    if "fastnet" not in unavailable and "fastnet" in args.peers:
        from _peers.fastnet_peer import fastnet_version, import_fastnet
        versions["fastnet"] = fastnet_version()
        versions["fastnet_file"] = getattr(import_fastnet(), "__file__", None)
        # AVX-512, AVX2 or portable kernels: the figures depend on it. Each level's workers
        # record what they ran (fastnet_kernels_ran in every row); this build goes up to:
        versions["fastnet_kernels_built"] = levels.running()[1]
    versions["cpu_kernels"] = levels.cpu_best()
    versions["repo_commit"] = machine.git_commit(cases_mod.repo_root())
    return versions


def write_json(args, desc, peaks, unavailable, all_cases, bars, headings, elapsed):
    """Every figure; ``all_cases``, ``bars`` and ``headings`` by level."""
    out = {
        "machine": desc,
        "settings": {"epochs": args.epochs, "repeats": args.repeats, "warmup_epochs": 5,
                     "native_blas": args.native_blas, "openblas_env_before": ORIGINAL_OPENBLAS_ENV,
                     "protocol": ("inline: every peer in one process, one after the other" if args.inline
                                  else "each peer and precision in its own process, one core, in turns"),
                     "dtypes": args.dtypes, "peers": args.peers, "cases": args.cases,
                     "runs": [case_key(k, a) for k, a in args.runs],
                     "activations": args.activations,
                     "rprop": cases_mod.RPROP, "variant": "irprop-", "init_seed": cases_mod.INIT_SEED,
                     "init_range": cases_mod.INIT_RANGE, "synthetic_seed": cases_mod.SYNTH_SEED,
                     "timer": "process_time (main), perf_counter (wall)",
                     "statistic": "median over repeats of loop time / epochs"},
        "matmul_peak": peaks,
        "unavailable": unavailable,
        "levels": headings,   # level -> its tables' heading (the CPU, the level, what ran)
        # the first level's (the only one unless --levels lists more), as before
        "cases": all_cases[args.levels[0]],
        "bars": bars[args.levels[0]],
        "elapsed_s": elapsed,
    }
    if len(args.levels) > 1:
        out["by_level"] = {level: {"heading": headings[level], "cases": all_cases[level], "bars": bars[level]}
                           for level in args.levels}
    with open(args.json, "w") as fh:
        json.dump(out, fh, indent=1, default=float)


def main(argv=None):
    args = parse_args(argv)
    log = print
    if hasattr(os, "sched_setaffinity"):
        # One core for every peer (each runs one thread): JAX's idle XLA thread pool
        # would otherwise add CPU time that no single-threaded peer pays.
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    t_start = time.perf_counter()
    if args.inline:   # fastnet runs in this process: at its level, decided when it is imported
        levels.set_here(args.levels[0])
    unavailable = {}
    for name in args.peers:   # imports the peers (and the BLAS libraries they load)
        why = availability(name)
        if why:
            unavailable[name] = why
            log(f"{name}: {why}" if name == "fastnet" else f"{name}: skipped: {why}")
    limiter = None
    try:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(1)   # every pool loaded by now, on top of the *_NUM_THREADS=1
    except ImportError:
        pass

    versions = tool_versions(args, unavailable)
    desc = machine.describe(versions)
    log(f"machine: {desc['cpu_model']}, {desc['logical_cpus']} logical CPUs; python {desc['python']}, "
        f"numpy {desc['numpy']}" + "".join(f", {k} {v}" for k, v in versions.items() if k != "fastnet_file"))
    for b in desc["blas"]:
        log(f"   pool: {b['internal_api']} {b.get('version')} {b.get('architecture') or ''} "
            f"threads={b['num_threads']}")
    if desc["env"].get("OPENBLAS_CORETYPE"):
        log(f"   note: OPENBLAS_CORETYPE={desc['env']['OPENBLAS_CORETYPE']} is set; numpy's BLAS runs that kernel "
            "(`--native-blas` runs the kernel OpenBLAS picks for this CPU; see README)")
    if not args.explicit_peers:
        log(f"peers: {', '.join(n for n in args.peers if n not in unavailable)}")

    peaks = {}
    for dtype in args.dtypes:
        peaks[dtype] = machine.matmul_peak(dtype)
        log(f"single-core matmul peak {SHORT[dtype]} (2048^2, best of {peaks[dtype]['repeats']}): "
            f"{peaks[dtype]['flops_cpu'] / 1e9:.1f} GFLOP/s CPU time, {peaks[dtype]['flops_wall'] / 1e9:.1f} wall")

    all_cases = {level: {} for level in args.levels}   # level -> case -> that level's view
    for key, act in args.runs:
        views = run_case(key, act, args.peers, args.dtypes, args, peaks, unavailable, log)
        for level, view in views.items():
            all_cases[level][case_key(key, act)] = view

    bars, headings = {}, {}
    for level in args.levels:
        headings[level] = levels.table_heading([r for c in all_cases[level].values() for r in c["results"]], level)
        summary(all_cases[level], args, log, headings[level])
    for level in args.levels:
        bars[level] = check_bars(all_cases[level], args, log, level)
    init_bad = sorted({f"{k} {col(r)}" + (f" @{level}" if r["peer"] == "fastnet" and len(args.levels) > 1 else "")
                       for level, cases in all_cases.items() for k, c in cases.items()
                       for r in c["results"] if any(f.startswith("INIT") for f in r["flags"])})
    if init_bad:
        log("INITIAL SSE MISMATCH (not comparing equal work): " + ", ".join(init_bad))
    elapsed = time.perf_counter() - t_start
    log(f"\nrun took {elapsed:.0f} s")
    if args.json:
        write_json(args, desc, peaks, unavailable, all_cases, bars, headings, elapsed)
        log(f"wrote {args.json}")
    if limiter is not None:
        limiter.restore_original_limits()
    if args.strict and (init_bad or any(b["status"] == "FAIL" for level in bars for b in bars[level])):
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
