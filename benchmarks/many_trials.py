"""Many trials of one topology at once: fastnet against JAX (jit + vmap), one core.

A timing study trains one topology from many initialisations on the same data. This
script measures, in one process and alternately (A B A B ...), the CPU time of (after
`WARMUP` untimed rounds of every contestant; each call timed with the garbage collector
off, as timeit times; ``--collect``: a full collection before each call instead)

* fastnet ``train_rprop_many`` with trials as arrays (one network giving the topology,
  ``n_trials=K, seed=12345``: the K x C initial weights drawn inside the timed call,
  the same array JAX gets; results in columns),
* fastnet ``train_rprop_many`` with a list of networks (all trials in one call, building
  the trials' networks from the initial weights included; the call alone, its networks
  built beforehand; and the call followed by ``list(results)``, which builds every
  trial's ``TrainResult`` object),
* fastnet ``train_rprop`` called once per trial (what a loop over trials costs),
* JAX at its best: the whole training under ``jax.jit`` with ``lax.scan`` over epochs,
  ``jax.value_and_grad`` for the gradient, iRPROP- with ``jnp.where``, ``jax.vmap`` over
  the trials' initial weights, float64, XLA held to one thread and the process pinned
  to one core (compile time excluded: a warm-up call first),

on the studies: XOR 2-2-1 1000 trials x 200 epochs, an 8-3-8 encoder 1000 x 300,
cancer1 4+2 (shortcuts) 100 x 300, thyroid1 16+8 (shortcuts) 60 x 300, with Proben1's
network (x/(1+|x|) hidden units, linear outputs, shortcut connections); and XOR 2-2-1
1000 x 200 and a 10-5-10 encoder 200 x 200 with ``fastnet study``'s default network
(tanh hidden units, logistic outputs, no shortcuts). All: iRPROP-, fixed epochs, initial
weights uniform(-0.5, 0.5) per trial, Delta0 0.1, eta+ 1.2, eta- 0.5, Delta_max 50. The
arrays call's time per trial and epoch is printed beside the ratio.
Equal work is checked: every trial's final training SSE agrees between JAX and fastnet
to 1e-9 relative.

    pip install ".[bench]"            # jax
    FASTNET_DATA=... python benchmarks/many_trials.py [--repeats 5] [--json out.json]

**float32** (``--dtype float32``, or ``--dtype float64,float32`` for both precisions side
by side): trials as arrays of a float32 network (``MLP(..., dtype="float32")``,
``train_rprop_many(net, X, T, n_trials=K, seed=12345, init_scale=0.5)``) against JAX at its
default precision (float32, ``jax_enable_x64`` off; the same ``jit(vmap(train))`` of iRPROP-,
whole-set epochs, float32 data and initial weights), on the study's default network (tanh
hidden, logistic outputs): XOR 2-2-1 1000 x 200 and encoder 10-5-10 200 x 200 (``--studies``
picks others). Each tool and precision runs in its own worker process pinned to one core,
the workers taking turns (XLA's thread pool spins after a call: timed in one process, the
next tool is charged for it); CPU time per call (collector off), medians, ratios of the
medians and [paired] the median of the per-turn ratios. Bars (issue 48): fastnet float32 >=
6x JAX float32 on XOR, >= 4x on the encoder. While fastnet refuses float32 its column says
"fastnet float32 unavailable" and the bars "n/a"::

    python benchmarks/many_trials.py --dtype float64,float32 --repeats 7 --json f32.json

**CPU levels** (``--levels default,avx2,none``): with one level, the float64 forms above run
at it (in this process, or in one child process started with that level's ``FASTNET_SIMD``);
with several, trials as arrays run in the worker mode of the float32 study (any ``--dtype``):
one fastnet worker per level and precision, in the same turns as JAX's, one table per level
headed by the CPU and the level, its ratios against that level's fastnet::

    python benchmarks/many_trials.py --levels default,avx2,none --repeats 5 --json levels.json
"""
from __future__ import annotations

import os

# Before jax is imported: one XLA thread, no eigen thread pool.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import fastnet  # noqa: E402
from _peers import levels  # noqa: E402
from fastnet import MLP, train_rprop, train_rprop_many  # noqa: E402

#: Proben1's network: x/(1+|x|) hidden units, linear outputs, shortcut connections.
PROBEN1_NET = dict(hidden_activation="proben1", output_activation="linear", shortcut=True)
#: ``fastnet study``'s default network: tanh hidden units, logistic outputs, no shortcuts.
STUDY_NET = dict(hidden_activation="tanh", output_activation="logistic", shortcut=False)
STUDIES = [
    # name, data, hidden, trials, epochs, network
    ("XOR 2-2-1", "xor", (2,), 1000, 200, PROBEN1_NET),
    ("encoder 8-3-8", "encoder", (3,), 1000, 300, PROBEN1_NET),
    ("cancer1 4+2", "cancer1", (4, 2), 100, 300, PROBEN1_NET),
    ("thyroid1 16+8", "thyroid1", (16, 8), 60, 300, PROBEN1_NET),
    ("XOR 2-2-1 tanh/logistic", "xor", (2,), 1000, 200, STUDY_NET),
    ("encoder 10-5-10 tanh/logistic", "encoder10", (5,), 200, 200, STUDY_NET),
]
RPROP = dict(variant="irprop-", eta_plus=1.2, eta_minus=0.5, delta0=0.1, delta_min=0.0,
             delta_max=50.0)


def load(data):
    if data == "xor":
        X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
        return X, np.array([[0.], [1.], [1.], [0.]])
    if data == "encoder":
        return np.eye(8), np.eye(8)
    if data == "encoder10":
        return np.eye(10), np.eye(10)
    from fastnet.datasets import load_proben1

    return load_proben1(data).train


SEED = 12345


def initial_weights(net, trials):
    """What ``train_rprop_many(net, ..., n_trials=trials, seed=SEED, init_scale=0.5)``
    draws (see fastnet.training.draw_trials)."""
    rng = np.random.default_rng(SEED)
    return rng.uniform(-0.5, 0.5, (trials, net.n_connections))


# ----------------------------------------------------------------------------- JAX

def jax_trainer(net, X, T, epochs, dtype="float64"):
    """jit(vmap(train)) over flat weight vectors in fastnet's layout; float32: JAX's default
    precision (x64 left off), float32 data (give it float32 initial weights too)."""
    import jax
    import jax.numpy as jnp

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    layers = [tuple(int(v) for v in row) for row in net.layer_table]
    Xj, Tj = jnp.asarray(X, dtype=dtype), jnp.asarray(T, dtype=dtype)
    p = RPROP
    # fastnet's activation codes (fastnet.network.ACTIVATIONS)
    ACTIVATIONS_JAX = {0: lambda z: z, 1: lambda z: z / (1.0 + jnp.abs(z)), 2: jax.nn.sigmoid,
                       3: jnp.tanh, 4: jax.nn.relu}

    def forward(w):
        A = Xj
        for _start, size, lo, hi, w_off, b_off, act in layers:
            W = w[w_off:b_off].reshape(size, hi - lo)
            z = A[:, lo:hi] @ W.T + w[b_off:b_off + size]
            a = ACTIVATIONS_JAX[act](z)
            A = jnp.concatenate([A, a], axis=1)
        return A[:, -T.shape[1]:]

    def sse(w):
        return jnp.sum((forward(w) - Tj) ** 2)

    grad = jax.value_and_grad(sse)

    def epoch(carry, _):
        w, g_prev, step = carry
        e, g = grad(w)
        prod = g * g_prev
        step = jnp.where(prod > 0, jnp.minimum(step * p["eta_plus"], p["delta_max"]),
                         jnp.where(prod < 0, jnp.maximum(step * p["eta_minus"], p["delta_min"]),
                                   step))
        g = jnp.where(prod < 0, 0.0, g)
        w = w - jnp.sign(g) * step
        return (w, g, step), e

    def train(w0):
        (w, _, _), errors = jax.lax.scan(
            epoch, (w0, jnp.zeros_like(w0), jnp.full_like(w0, p["delta0"])), None,
            length=epochs)
        return w, errors

    return jax.jit(jax.vmap(train))


# ------------------------------------------------------------------------- timing

#: Untimed rounds of every contestant before the timed ones.
WARMUP = 3

#: Collect garbage before each timed call (``--collect``) instead of timeit's
#: convention (the collector off during the call, nothing collected before it).
COLLECT = False


def cpu(fn):
    """(process CPU seconds of ``fn()``, its result), the garbage collector off
    during the call as :mod:`timeit` times. A full collection just before each
    call (``--collect``) walks every object and evicts the caches that a call of
    1-2 ms then refills: on XOR it costs fastnet's arrays call about 0.3 ms and
    JAX's about as much in absolute terms (XOR ratio 9.4x instead of 10.8x in one
    measurement, load 1.2)."""
    if COLLECT:
        gc.collect()
    gc.disable()
    try:
        t = time.process_time()
        out = fn()
        return time.process_time() - t, out
    finally:
        gc.enable()


def study(name, data, hidden, trials, epochs, network, repeats):
    X, T = load(data)
    net = MLP(X.shape[1], hidden, T.shape[1], **network)
    W0 = initial_weights(net, trials)

    def nets():
        out = []
        for w in W0:
            n = net.copy()
            n.set_weights(w)
            out.append(n)
        return out

    def many():
        return train_rprop_many(nets(), X, T, max_epochs=epochs, **RPROP)

    def arrays():
        # trials as arrays: the initial weights drawn inside the call
        return train_rprop_many(net, X, T, n_trials=trials, seed=SEED, init_scale=0.5,
                                max_epochs=epochs, **RPROP)

    def many_objects():
        # train_rprop_many builds each TrainResult object when it is first read:
        # this times the call and the building of every one of them.
        return list(train_rprop_many(nets(), X, T, max_epochs=epochs, **RPROP))

    def loop():
        return [train_rprop(n, X, T, max_epochs=epochs, **RPROP) for n in nets()]

    times = {"arrays": [], "many": [], "call_only": [], "many_objects": [], "loop": [],
             "jax": []}
    jax_fn = None
    try:
        import jax

        jax_fn = jax_trainer(net, X, T, epochs)
        W0j = jax.numpy.asarray(W0)
        jax.block_until_ready(jax_fn(W0j))                 # compile
    except ImportError:
        print("  (jax not installed: pip install '.[bench]')")
    # Warm-up, untimed, for every contestant alike (JAX's first call compiles; a
    # process's first calls of fastnet grow the heap, 200-600 page faults each for
    # XOR's arrays, and ran 1.9-2.8 ms against 1.5 after).
    for _ in range(WARMUP):
        arrays()
        many()
        if jax_fn is not None:
            jax.block_until_ready(jax_fn(W0j))
    results = None
    for _ in range(repeats):
        t, columns = cpu(arrays)
        times["arrays"].append(t)
        t, results = cpu(many)
        times["many"].append(t)
        assert np.array_equal(columns.weights, results.weights)       # the same trials
        if jax_fn is not None:
            t, jout = cpu(lambda: jax.block_until_ready(jax_fn(W0j)))
            times["jax"].append(t)
        # the call alone, its networks built beforehand (as JAX gets its W0 array)
        built = nets()
        times["call_only"].append(cpu(
            lambda built=built: train_rprop_many(built, X, T, max_epochs=epochs, **RPROP))[0])
        times["many_objects"].append(cpu(many_objects)[0])
        times["loop"].append(cpu(loop)[0])
    row = {"study": name, "trials": trials, "epochs": epochs, "C": net.n_connections,
           "method": results[0].setup["batch"]["method"], **network}
    for k, v in times.items():
        if v:
            row[f"{k}_s"] = statistics.median(v)
    row["many_vs_loop"] = statistics.median(o / m for o, m in zip(times["loop"], times["many"]))
    if jax_fn is not None:
        row["arrays_vs_jax"] = statistics.median(
            j / m for j, m in zip(times["jax"], times["arrays"]))
        row["many_vs_jax"] = statistics.median(j / m for j, m in zip(times["jax"], times["many"]))
        row["call_only_vs_jax"] = statistics.median(
            j / m for j, m in zip(times["jax"], times["call_only"]))
        row["many_objects_vs_jax"] = statistics.median(
            j / m for j, m in zip(times["jax"], times["many_objects"]))
        # equal work: every trial's training SSE after the last epoch's update
        w_jax = np.asarray(jout[0])
        worst, diffs = 0.0, []
        for i, r in enumerate(results):
            ours = r.final_train.squared_error_percentage
            other = MLP(X.shape[1], hidden, T.shape[1], **network)
            other.set_weights(w_jax[i])
            theirs = 100.0 / T.size * float(np.sum((other.predict(X) - T) ** 2))
            # relative where the error is not ~0 (XOR ends near 0 SSE)
            diffs.append(abs(ours - theirs) / (abs(theirs) + 1e-6))
            worst = max(worst, diffs[-1])
        row["max_rel_sse_diff"] = worst
        # Saturated logistic outputs (the encoder's one-hot targets) leave gradients of
        # ~1e-16 whose signs decide RPROP's steps: last-bit differences between fastnet's
        # and XLA's exp then send a few trials elsewhere (as a different seed would). The
        # work is the same (every trial runs every epoch); the share that agrees is shown.
        row["share_sse_agree_1e-6"] = float(np.mean(np.array(diffs) < 1e-6))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="float32: python benchmarks/many_trials.py --dtype float64,float32 "
                                 "[--repeats 7] [--json PATH] (trials as arrays of a float32 network against "
                                 "JAX float32 jit+vmap, each tool in its own process)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--studies", nargs="*", default=None, help="names' first words, e.g. XOR")
    ap.add_argument("--collect", action="store_true",
                    help="a full garbage collection before each timed call (see cpu())")
    ap.add_argument("--dtype", default="float64",
                    help="float64 (this process, every form; the default), or float32 / float64,float32: "
                    "trials as arrays against JAX jit+vmap in that precision, each tool in its own process "
                    "(issue 48's bars: fastnet f32 >= 6x JAX f32 on XOR, >= 4x on the encoder)")
    levels.add_argument(ap)
    args = ap.parse_args(argv)
    dtypes = [d.strip() for d in args.dtype.split(",") if d.strip()]
    if any(d not in ("float64", "float32") for d in dtypes) or not dtypes:
        ap.error(f"`--dtype` must be float64, float32 or float64,float32, got {args.dtype!r}")
    if "float32" in dtypes or len(args.levels) > 1:
        from _peers.trials import run_in_turns

        run_in_turns(STUDIES, STUDY_NET, dtypes, args.studies, args.repeats, args.json, args.levels)
        return
    level = args.levels[0]
    if os.environ.get(levels.VAR) == levels.ENV[level]:
        in_process(args, level)
    else:   # fastnet, imported above, runs at this process's level: the study goes to a child at its own
        import multiprocessing as mp

        child = mp.get_context("spawn").Process(target=in_process, args=(args, level))
        with levels.environment(level):
            child.start()
        child.join()
        if child.exitcode:
            raise SystemExit(child.exitcode)


def in_process(args, level):
    """The float64 forms of every study, alternately in this process, fastnet at ``level``."""
    global COLLECT
    COLLECT = args.collect
    ran = levels.verify(level)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})   # one core
    rows = []
    print(f"fastnet {fastnet.__version__}; {platform.processor() or platform.machine()}; load {os.getloadavg()}")
    print(f"== {levels.heading(level, ran['fastnet_kernels_ran'], ran['fastnet_kernels_built'])}")
    for name, data, hidden, trials, epochs, network in STUDIES:
        if args.studies and name.split()[0] not in args.studies:
            continue
        row = {**study(name, data, hidden, trials, epochs, network, args.repeats), **ran}
        rows.append(row)
        jax_part = (f"; JAX {row['jax_s']:.4f} s -> fastnet {row['arrays_vs_jax']:.2f}x JAX "
                    f"with trials as arrays; with a list of networks {row['many_vs_jax']:.2f}x "
                    f"({row['call_only_vs_jax']:.2f}x for the call alone, its networks built "
                    f"beforehand; {row['many_objects_vs_jax']:.2f}x with every result object "
                    f"built; "
                    f"SSE agree to {row['max_rel_sse_diff']:.1e} in "
                    f"{100 * row['share_sse_agree_1e-6']:.0f} % of the trials to 1e-6)"
                    if "jax_s" in row else "")
        row["arrays_ns_per_trial_epoch"] = 1e9 * row["arrays_s"] / (trials * epochs)
        print(f"{name:<16} {trials:>5} x {epochs:<4}: arrays {row['arrays_s']:.4f} s "
              f"({row['arrays_ns_per_trial_epoch']:.1f} ns per trial-epoch), "
              f"many {row['many_s']:.4f} s ({row['method']}), "
              f"one call per trial {row['loop_s']:.4f} s ({row['many_vs_loop']:.1f}x){jax_part}",
              flush=True)
    how = "a full collection before each call" if COLLECT else "collector off during each call"
    print(f"CPU seconds ({how}), medians of {args.repeats}; ratios are medians of per-repeat ratios "
          f"(measured alternately); load after: {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"level": level, "rows": rows, "load": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
