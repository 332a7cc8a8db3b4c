"""A success study (Hamey 1992) against JAX jit + vmap, one core, CPU time.

Per case and rule (iRPROP-, RPROP+; delta0 0.1, eta+ 1.2, eta- 0.5, Delta_max 50), K
trials from the initial weights of ``fastnet study`` (uniform +-1, seed 0, trial i row i
of ``draw_trials``), success Hamey's 40-20-40 (every output < 0.4 for target 0, > 0.6
for target 1) within T epochs, the study's network (tanh hidden, logistic outputs):

* fastnet: ``train_many(net, X, Y, initial_weights=W, stop=Correct(0.4), strip=1,
  max_epochs=T)``; its cost per **trained** trial-epoch (the epochs each trial ran);
* fastnet fixed epochs: the same trials, ``stop=None``, ``FIXED`` epochs (the cost per
  trial-epoch of the benchmarks that train a fixed number of epochs);
* JAX: ``jit(vmap(train))``, ``lax.scan`` over all T epochs (a vmapped trial cannot
  stop), the 40-20-40 check on the outputs of the forward pass each epoch computes for
  its gradient (``value_and_grad(..., has_aux=True)``), the first epoch after which it
  holds kept per trial; float64, one XLA thread (compile time excluded).

Each tool runs in its own persistent worker process pinned to one core, the workers
taking turns (A B C A B C ...); reported: medians over ``--repeats`` of each call's CPU
time (``time.process_time`` inside the worker), the study's whole time and the cost per
trained trial-epoch, and how many trials JAX and fastnet end at the same epoch.

    pip install "jax[cpu]"
    python benchmarks/study_peers.py [--trials 20000] [--encoder-trials 20000] [--repeats 5]
    python benchmarks/study_peers.py --dtype float32 --json f32.json     # in float32
    python benchmarks/study_peers.py --levels default,avx2,none          # fastnet at each CPU level

``--dtype float32``: the same studies with a float32 network (``MLP(..., dtype="float32")``,
float32 data and initial weights) against JAX at its default precision (float32, x64 left
off). While fastnet refuses float32, its two columns say "fastnet float32 unavailable" and
JAX is timed alone.

``--levels default,avx2,none``: fastnet's two workers (the study, fixed epochs) once per level,
``FASTNET_SIMD`` set in their environment, in the same turns as JAX's; one table per level,
headed by the CPU and the level, with JAX's time over that level's fastnet time.
"""
from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

#: Epochs of the fixed-epoch run.
FIXED = 200
RULES = ("irprop-", "rprop+")
R_C = 0.4


def case(name):
    """(X, Y, hidden) of a case."""
    if name == "xor":
        X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
        return X, np.array([[0.], [1.], [1.], [0.]]), 2
    return np.eye(10), np.eye(10), 5                           # encoder 10-5-10


def start(name, trials, dtype="float64"):
    """(network, X, Y, initial weights) in ``dtype`` (the weights drawn in float64, then rounded)."""
    from fastnet import MLP
    from fastnet.training import draw_trials

    X, Y, h = case(name)
    kwargs = dict(shortcut=False, hidden_activation="tanh", output_activation="logistic")
    net = MLP(X.shape[1], [h], Y.shape[1], **kwargs)
    W = draw_trials(net, trials, 0, 1.0)[0]
    return net, X.astype(dtype), Y.astype(dtype), W.astype(dtype)


def fastnet_net(net, dtype):
    """``net``'s topology in ``dtype``; raises RuntimeError saying so where fastnet refuses it."""
    if dtype == "float64":
        return net
    from fastnet import MLP

    try:
        return MLP(net.n_in, net.hidden, net.n_out, shortcut=False, hidden_activation="tanh",
                   output_activation="logistic", dtype=dtype)
    except Exception as exc:
        raise RuntimeError(f"fastnet {dtype} unavailable: MLP(..., dtype={dtype!r}) raised "
                           f"{type(exc).__name__}: {exc}") from exc


def jax_study(net, X, Y, rule, T):
    """jit(vmap(train)): every trial T epochs, the 40-20-40 check on each epoch's forward
    pass; returns each trial's epochs to success (T: failure). In the precision of ``X``
    (float32: JAX's default, x64 left off)."""
    import jax
    import jax.numpy as jnp

    import many_trials as mt

    if X.dtype == np.float64:
        jax.config.update("jax_enable_x64", True)
    layers = [tuple(int(v) for v in row) for row in net.layer_table]
    Xj, Yj = jnp.asarray(X), jnp.asarray(Y)
    p = mt.RPROP
    acts = {0: lambda z: z, 2: jax.nn.sigmoid, 3: jnp.tanh}

    def forward(w):
        A = Xj
        for _start, size, lo, hi, w_off, b_off, act in layers:
            z = A[:, lo:hi] @ w[w_off:b_off].reshape(size, hi - lo).T + w[b_off:b_off + size]
            A = jnp.concatenate([A, acts[act](z)], axis=1)
        return A[:, -Yj.shape[1]:]

    def sse(w):
        out = forward(w)
        return jnp.sum((out - Yj) ** 2), out

    grad = jax.value_and_grad(sse, has_aux=True)

    def correct(out):
        return jnp.all(jnp.where(Yj > 0.5, out > 1 - R_C, out < R_C))

    def epoch(carry, i):
        w, g_prev, step, dw, first = carry
        (_, out), g = grad(w)
        # weights after i epochs are right: success after epoch i (i >= 1)
        first = jnp.where((first == T) & (i >= 1) & correct(out), i, first)
        prod = g * g_prev
        step = jnp.where(prod > 0, jnp.minimum(step * p["eta_plus"], p["delta_max"]),
                         jnp.where(prod < 0, jnp.maximum(step * p["eta_minus"], p["delta_min"]),
                                   step))
        if rule == "rprop+":                   # backtrack the last change on a sign change
            dw = jnp.where(prod < 0, -dw, -jnp.sign(g) * step)
        else:
            dw = -jnp.sign(jnp.where(prod < 0, 0.0, g)) * step
        g = jnp.where(prod < 0, 0.0, g)
        return (w + dw, g, step, dw, first), None

    def train(w0):
        z = jnp.zeros_like(w0)
        carry = (w0, z, jnp.full_like(w0, p["delta0"]), z, jnp.asarray(T))
        (w, _, _, _, first), _ = jax.lax.scan(epoch, carry, jnp.arange(T))
        return jnp.where((first == T) & correct(forward(w)), T, first)

    return jax.jit(jax.vmap(train))


def worker(conn, tool, name, rule, trials, T, dtype="float64", level=None):
    """One tool's persistent process: set up (and compile) once, then one timed call per
    message; answers (CPU seconds, epochs per trial). ``level``: fastnet's CPU level, set by
    the parent in this process's environment (``_peers.levels``), checked here."""
    import overhead
    from _peers import levels

    overhead.pin_one_core()
    from fastnet import train_many
    from fastnet.stopping import Correct

    net, X, Y, W = start(name, trials, dtype)
    record = {}
    if tool != "jax":
        try:
            net = fastnet_net(net, dtype)
        except RuntimeError as exc:
            conn.send(("unavailable", str(exc)))
            return
        record = levels.verify(level) if level is not None else {}
    if tool == "jax":
        try:
            import jax
        except ImportError as exc:
            conn.send(("unavailable", f"jax not installed ({exc})"))
            return

        fn, Wj = jax_study(net, X, Y, rule, T), jax.numpy.asarray(W)

        def call():
            return np.asarray(jax.block_until_ready(fn(Wj)))
    else:
        stop, epochs = (Correct(R_C), T) if tool == "fastnet" else (None, FIXED)

        def call():
            # (the study's form: no per-epoch history, as `fastnet study` trains)
            return train_many(net, X, Y, initial_weights=W, algorithm=rule, stop=stop,
                              strip=1, max_epochs=epochs, history=False).epochs
    import warnings

    warnings.simplefilter("ignore")
    call()                                                       # warm-up (compile)
    conn.send(("ready", record))
    while conn.recv() == "run":
        c0 = time.process_time()
        ran = call()
        conn.send((time.process_time() - c0, np.asarray(ran).tolist()))


def measure(name, rule, trials, T, repeats, dtype="float64", levels=("default",)):
    """One case and rule: fastnet's two workers (the study, fixed epochs) per level and JAX's,
    in turns; the row of each level (its ratios against that level's fastnet)."""
    from _peers import levels as levels_mod

    ctx = mp.get_context("spawn")
    tools = [(tool, level) for level in levels for tool in ("fastnet", "fixed")] + [("jax", None)]
    pipes, procs, ran, unavailable = {}, [], {}, {}
    for key in tools:
        a, b = ctx.Pipe()
        proc = ctx.Process(target=worker, args=(b, key[0], name, rule, trials, T, dtype, key[1]), daemon=True)
        with levels_mod.environment(key[1]):              # spawn hands it to the worker
            proc.start()
        pipes[key] = a
        procs.append(proc)
    for key in tools:
        try:
            status, detail = pipes[key].recv()
        except EOFError:
            status, detail = "error", "worker died"
        if status == "ready":
            ran[key] = detail
        else:                                  # fastnet refuses the dtype, JAX is missing, ...
            unavailable[key] = detail
            print(f"  {key[0]}{levels_mod.suffix(key[1])}: skipped: {detail}", file=sys.stderr)
    tools = [k for k in tools if k in ran]
    times, epochs = {t: [] for t in tools}, {}
    for _ in range(repeats):
        for tool in tools:                                      # taking turns
            pipes[tool].send("run")
            t, e = pipes[tool].recv()
            times[tool].append(t)
            epochs[tool] = np.array(e)
    for tool in tools:
        pipes[tool].send("stop")
    for proc in procs:
        proc.join()
    med = {t: statistics.median(v) for t, v in times.items()}
    rows = []
    for level in levels:
        row = {"case": name, "rule": rule, "trials": trials, "T": T, "repeats": repeats, "dtype": dtype,
               "level": level, **ran.get(("fastnet", level), {})}
        f, x, j = ("fastnet", level), ("fixed", level), ("jax", None)
        if j in med:
            row.update(jax_study_s=med[j], jax_ns_per_computed_epoch=1e9 * med[j] / (trials * T),
                       jax_ns_per_trained_epoch=1e9 * med[j] / int(epochs[j].sum()),
                       successes_jax=int(np.count_nonzero(epochs[j] < T)))
        else:
            row["jax"] = unavailable.get(j, "not measured")
        if f not in med or x not in med:
            row["fastnet"] = unavailable.get(f, unavailable.get(x, "not measured"))
            rows.append(row)
            continue
        trained = int(epochs[f].sum())
        row.update(fastnet_study_s=med[f], fastnet_ns_per_trained_epoch=1e9 * med[f] / trained,
                   fixed_ns_per_epoch=1e9 * med[x] / (trials * FIXED),
                   study_vs_fixed=(med[f] / trained) / (med[x] / (trials * FIXED)),
                   successes=int(np.count_nonzero(epochs[f] < T)))
        if j in med:
            row.update(jax_over_fastnet=med[j] / med[f], same_epochs=float(np.mean(epochs[j] == epochs[f])))
        rows.append(row)
    return rows


def print_row(row):
    """One case and rule of a level's table."""
    head = f"{row['case']:16s} {row['rule']:8s} K={row['trials']} T={row['T']} {row['dtype']}:"
    if "jax_study_s" not in row:
        jax = f"JAX: {row['jax']}"
    elif "jax_over_fastnet" in row:
        jax = (f"JAX {row['jax_study_s']:.3f} s ({row['jax_over_fastnet']:.2f}x fastnet; "
               f"{row['jax_ns_per_computed_epoch']:.1f} ns per computed epoch); same epochs "
               f"{100 * row['same_epochs']:.1f}%")
    else:
        jax = f"JAX {row['jax_study_s']:.3f} s ({row['jax_ns_per_computed_epoch']:.1f} ns per computed epoch)"
    if "fastnet" in row:
        print(f"{head} {row['fastnet']}; {jax}", flush=True)
        return
    print(f"{head} study {row['fastnet_study_s']:.3f} s ({row['fastnet_ns_per_trained_epoch']:.1f} ns per "
          f"trained trial-epoch; fixed {row['fixed_ns_per_epoch']:.1f} ns, x{row['study_vs_fixed']:.2f}); "
          f"{jax}", flush=True)


def versions():
    """The versions of the tools measured (for --json)."""
    import fastnet
    from _peers import levels

    out = {"fastnet": fastnet.__version__, "fastnet_kernels_built": levels.running()[1],
           "cpu_kernels": levels.cpu_best()}
    try:
        import jax
        out["jax"] = jax.__version__
    except ImportError:
        pass
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="float32: python benchmarks/study_peers.py --dtype float32 (a float32 "
                                 "network against JAX at its default precision)")
    ap.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    ap.add_argument("--trials", type=int, default=20_000)
    ap.add_argument("--encoder-trials", type=int, default=20_000)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None)
    from _peers import levels

    levels.add_argument(ap)
    args = ap.parse_args(argv)
    from _peers.machine import describe, git_commit

    measured = []                       # per case and rule, the rows of every level
    for name, trials in (("xor", args.trials), ("encoder 10-5-10", args.encoder_trials)):
        for rule in RULES:
            print(f"  measuring {name} {rule} ...", file=sys.stderr, flush=True)
            measured.append(measure(name, rule, trials, args.limit, args.repeats, args.dtype, args.levels))
    rows, headings = [], {}
    for i, level in enumerate(args.levels):
        mine = [by_level[i] for by_level in measured]
        headings[level] = levels.table_heading(mine, level)
        print(f"\n== {headings[level]}")
        for row in mine:
            print_row(row)
        rows += mine
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": describe({"fastnet_commit": git_commit(HERE), **versions()}),
                       "dtype": args.dtype, "levels": headings, "rows": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
