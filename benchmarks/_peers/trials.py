"""Trials as arrays in float32 (and float64) against JAX jit + vmap, each tool in its own process.

The float32 mode of ``many_trials.py`` (``--dtype float32`` or ``float64,float32``). Per
study and precision two persistent worker processes, pinned to one core like the others:

* fastnet: ``train_rprop_many(net, X, T, n_trials=K, seed=12345, init_scale=0.5, ...)`` with
  ``net = MLP(..., dtype=dtype)`` and the data in that dtype (the initial weights drawn inside
  the timed call, as the float64 "arrays" form of ``many_trials.py``);
* JAX: ``many_trials.jax_trainer`` (``jit(vmap(train))``, ``lax.scan`` over whole-set epochs,
  ``value_and_grad``, iRPROP- with ``jnp.where``) in that dtype: float32 is JAX's default
  precision (x64 left off), with float32 data and the same initial weights rounded to float32.

Each worker makes its warm-up calls (JAX compiles there), then the parent asks the workers in
turn for one timed call each (CPU time of the worker, collector off). Afterwards each worker
hands over its trials' final weights; the parent computes every trial's training SSE with a
float64 forward pass and reports how many trials end at the same SSE in both tools.

With ``--levels`` (``levels.py``), fastnet has one worker per level and precision, in the same
turns as JAX's; each level gets its own table, its ratios against that level's fastnet.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import signal
import traceback

import numpy as np

from . import levels as levels_mod
from .harness import PeerUnavailable
from .workers import _pause

#: Issue 48's bars: fastnet float32 time x this <= JAX float32 time (study name -> factor).
BARS = {"XOR 2-2-1 tanh/logistic": 6.0, "encoder 10-5-10 tanh/logistic": 4.0}
#: Two trials "agree" when their final SSEs differ by less than this, relative: float32
#: trajectories of RPROP part on the sign of a tiny gradient, as a different seed would.
# Timed calls per turn, of which the median is the turn's time (see _serve).
CALLS_PER_TURN = 3
AGREE_RTOL = {"float64": 1e-6, "float32": 1e-3}


def _make_call(name, tool, dtype):
    """(call, the float64 network of the topology): one timed call of the study in a tool."""
    import many_trials as mt
    from fastnet import MLP

    _, data, hidden, trials, epochs, network = next(s for s in mt.STUDIES if s[0] == name)
    X, T = mt.load(data)
    net64 = MLP(X.shape[1], hidden, T.shape[1], **network)
    if tool == "jax":
        try:
            import jax
        except ImportError as exc:
            raise PeerUnavailable(f"jax not installed ({exc})") from exc

        fn = mt.jax_trainer(net64, X, T, epochs, dtype)
        W0 = jax.numpy.asarray(mt.initial_weights(net64, trials), dtype=dtype)
        return (lambda: jax.block_until_ready(fn(W0))[0]), net64
    if dtype == "float64":
        net = net64
    else:
        try:
            net = MLP(X.shape[1], hidden, T.shape[1], dtype=dtype, **network)
        except Exception as exc:
            raise PeerUnavailable(f"fastnet {dtype} unavailable: MLP(..., dtype={dtype!r}) raised "
                                  f"{type(exc).__name__}: {exc}") from exc
    Xd, Td = np.ascontiguousarray(X, dtype), np.ascontiguousarray(T, dtype)

    def call():
        return mt.train_rprop_many(net, Xd, Td, n_trials=trials, seed=mt.SEED, init_scale=0.5,
                                   max_epochs=epochs, **mt.RPROP).weights
    return call, net64


def _serve(conn, name, tool, dtype, level=None):
    """A worker: set up and warm up one tool, then one timed call per "run" until "stop".
    ``level``: fastnet's CPU level, set by the parent in this process's environment; checked."""
    import many_trials as mt

    from .workers import one_core_one_thread

    try:
        call, _ = _make_call(name, tool, dtype)
        ran = levels_mod.verify(level) if level is not None else {}
        one_core_one_thread()
        for _ in range(mt.WARMUP):
            out = call()
    except PeerUnavailable as exc:
        conn.send(("unavailable", str(exc)))
        return
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which goes on
        conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
        return
    conn.send(("ready", ran))
    while True:
        msg = conn.recv()
        if msg == "run":
            # (the median of a few calls in a row: the first call of a turn, after the
            # other tool's turn, runs on cold caches and a clock that may have dropped,
            # which costs a 2 ms call up to a third and a 15 ms one little)
            runs = [mt.cpu(call) for _ in range(CALLS_PER_TURN)]
            t, out = sorted(runs, key=lambda r: r[0])[CALLS_PER_TURN // 2]
            conn.send(t)
        elif msg == "weights":
            conn.send(np.asarray(out, dtype=np.float64))
        else:
            return


def _final_sse(net64, X, T, W):
    """Each trial's training SSE of its final weights, a float64 forward pass."""
    out = np.empty(W.shape[0])
    for i, w in enumerate(W):
        net64.set_weights(w)
        d = net64.predict(X) - T
        out[i] = float(np.sum(d * d))
    return out


def _agreement(a, b, rtol):
    rel = np.abs(a - b) / (np.abs(b) + 1e-6)
    return float(np.mean(rel < rtol)), float(rel.max())


def measure_study(name, dtypes, levels, repeats):
    """One study: every (tool, dtype) in its own process, fastnet once per level, in turns;
    the row of figures of each level."""
    import many_trials as mt

    _, data, hidden, trials, epochs, network = next(s for s in mt.STUDIES if s[0] == name)
    ctx = mp.get_context("spawn")
    workers, skipped, ran = {}, {}, {}
    for dtype in dtypes:
        for tool, level in [("fastnet", level) for level in levels] + [("jax", None)]:
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(there, name, tool, dtype, level), daemon=True)
            with levels_mod.environment(level):      # spawn hands it to the worker
                proc.start()
            there.close()
            workers[(tool, dtype, level)] = (proc, here)
    for key, (proc, conn) in list(workers.items()):
        try:
            status, detail = conn.recv()
        except EOFError:
            status, detail = "error", f"worker died (exit code {proc.exitcode})"
        if status == "ready":
            ran[key] = detail
            continue
        what = f"{key[0]} {key[1]}{levels_mod.suffix(key[2])}"
        skipped[what] = detail
        print(f"  {what}: {'skipped: ' if status == 'unavailable' else 'ERROR '}{detail.splitlines()[0]}")
        proc.join()
        del workers[key]
    times = {k: [] for k in workers}
    for _ in range(repeats):
        for key, (_proc, conn) in workers.items():      # taking turns
            others = [p for k2, (p, _) in workers.items() if k2 != key]
            _pause(others, signal.SIGSTOP)              # (nothing else runs while one is timed)
            try:
                conn.send("run")
                times[key].append(conn.recv())
            finally:
                _pause(others, signal.SIGCONT)
    weights = {}
    for key, (proc, conn) in workers.items():
        conn.send("weights")
        weights[key] = conn.recv()
        conn.send("stop")
        proc.join()
    from fastnet import MLP

    X, T = mt.load(data)
    net64 = MLP(X.shape[1], hidden, T.shape[1], **network)
    sse = {k: _final_sse(net64, X, T, w) for k, w in weights.items()}
    rows = []
    for level in levels:
        # this level's fastnet and every other tool, keyed (tool, dtype)
        mine = [k for k in times if k[2] in (None, level)]
        fastnet_ran = next((ran[k] for k in mine if k[0] == "fastnet"), {})
        row = {"study": name, "trials": trials, "epochs": epochs, "repeats": repeats, **network,
               "level": level, **fastnet_ran, "skipped": levels_mod.own(skipped, level)}
        rows.append(_figures(row, {k[:2]: times[k] for k in mine}, {k[:2]: sse[k] for k in mine}, dtypes))
    return rows


def _figures(row, times, sse, dtypes):
    """``row`` with the times of its tools (``{(tool, dtype): [seconds per turn]}``), their
    ratios and the agreement of the trials' final SSEs (``sse``)."""
    trials, epochs = row["trials"], row["epochs"]
    row["columns"] = {}
    for (tool, dtype), v in times.items():
        med = statistics.median(v)
        row["columns"][f"{tool} {dtype}"] = {"s": med, "s_repeats": v,
                                             "ns_per_trial_epoch": 1e9 * med / (trials * epochs)}
    for dtype in dtypes:
        f, j = ("fastnet", dtype), ("jax", dtype)
        if f in times and j in times:
            row[f"jax_over_fastnet_{dtype}"] = statistics.median(times[j]) / statistics.median(times[f])
            row[f"jax_over_fastnet_{dtype}_paired"] = statistics.median(
                a / b for a, b in zip(times[j], times[f]))
            row[f"sse_agree_{dtype}"] = _agreement(sse[f], sse[j], AGREE_RTOL[dtype])
    if ("jax", "float32") in times and ("fastnet", "float64") in times:
        row["jax_f32_over_fastnet_f64"] = (statistics.median(times[("jax", "float32")])
                                           / statistics.median(times[("fastnet", "float64")]))
    if ("jax", "float32") in sse and ("jax", "float64") in sse:
        # how far float32 alone moves the trials: JAX float32 against JAX float64
        row["sse_agree_jax_f32_vs_f64"] = _agreement(sse[("jax", "float32")], sse[("jax", "float64")],
                                                     AGREE_RTOL["float32"])
    return row


def run_in_turns(studies, study_net, dtypes, names, repeats, json_path, levels=("default",)):
    """The worker mode of ``many_trials.py`` (float32, or several ``--levels``): measure every
    study, then print each level's table (every study's row) and issue 48's bars."""
    import json
    import sys

    import fastnet

    from .machine import describe, git_commit

    picked = [s[0] for s in studies
              if (s[0].split()[0] in names if names else s[5] == study_net)]
    versions = {"fastnet": fastnet.__version__, "fastnet_kernels_built": levels_mod.running()[1],
                "cpu_kernels": levels_mod.cpu_best(),
                "repo_commit": git_commit(os.path.dirname(os.path.abspath(__file__)))}
    try:
        import jax
        versions["jax"] = jax.__version__
    except ImportError:
        print("(jax not installed: pip install '.[bench]')")
    desc = describe(versions)
    print(f"fastnet {versions['fastnet']}; jax {versions.get('jax')}; "
          f"{desc['cpu_model']}; load {desc.get('loadavg_at_start')}; precisions {', '.join(dtypes)}; "
          f"fastnet levels {', '.join(levels)}; each tool in its own process, one core, taking turns; "
          f"{repeats} turns")
    measured = []
    for name in picked:
        print(f"  measuring {name} ...", file=sys.stderr, flush=True)
        measured.append(measure_study(name, dtypes, levels, repeats))
    rows, bars, headings = [], [], {}
    for i, level in enumerate(levels):
        mine = [by_level[i] for by_level in measured]
        headings[level] = levels_mod.table_heading(mine, level)
        print(f"\n== {headings[level]}")
        for row in mine:
            _print_row(row, dtypes)
            rows.append(row)
            if row["study"] in BARS and "float32" in dtypes:
                bars.append({"level": level, **_bar(row, row["study"])})
    print(f"CPU seconds per call (collector off), medians of {repeats}; load after: {os.getloadavg()}")
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"machine": desc, "dtypes": dtypes, "repeats": repeats, "levels": headings,
                       "protocol": "each tool and precision in its own process, one core, taking turns",
                       "rows": rows, "bars": bars, "load_after": os.getloadavg()}, fh, indent=1, default=float)


def _print_row(row, dtypes):
    """One study's lines of a level's table."""
    cells = "; ".join(f"{k} {v['s']:.4f} s ({v['ns_per_trial_epoch']:.1f} ns/trial-epoch)"
                      for k, v in row["columns"].items())
    print(f"{row['study']:<30} {row['trials']:>5} x {row['epochs']:<4}: {cells}", flush=True)
    for dtype in dtypes:
        if f"jax_over_fastnet_{dtype}" in row:
            share, worst = row[f"sse_agree_{dtype}"]
            print(f"   {dtype}: JAX time / fastnet time {row[f'jax_over_fastnet_{dtype}']:.2f}x "
                  f"[paired {row[f'jax_over_fastnet_{dtype}_paired']:.2f}]; final SSE agree to "
                  f"{AGREE_RTOL[dtype]:g} in {100 * share:.0f} % of the trials (worst {worst:.1e})")
    if "jax_f32_over_fastnet_f64" in row:
        print(f"   JAX float32 time / fastnet float64 time {row['jax_f32_over_fastnet_f64']:.2f}x")
    if "sse_agree_jax_f32_vs_f64" in row:
        share, _ = row["sse_agree_jax_f32_vs_f64"]
        print(f"   JAX float32 vs JAX float64: final SSE agree to 1e-3 in {100 * share:.0f} % of the trials")


def _bar(row, name):
    factor = BARS[name]
    what = f"issue 48: {name} {row['trials']} x {row['epochs']}: fastnet f32 >= {factor:g}x JAX f32"
    ratio = row.get("jax_over_fastnet_float32")
    if ratio is None:
        why = row["skipped"].get("fastnet float32", row["skipped"].get("jax float32", "not measured"))
        status = "n/a" if "fastnet float32" in row["skipped"] else "SKIP"
        print(f"{status} {what} ({'fastnet float32 unavailable' if status == 'n/a' else why})")
        return {"bar": what, "status": status, "reason": why}
    status = "PASS" if ratio >= factor else "FAIL"
    print(f"{status} {what}: {ratio:.2f}x [paired {row['jax_over_fastnet_float32_paired']:.2f}]")
    return {"bar": what, "status": status, "ratio": ratio,
            "paired_ratio": row["jax_over_fastnet_float32_paired"]}
