"""float32 against float64 in the lanes kernels, and against JAX float32 (jit + vmap).

The kernels called directly (``_trials.trials_train``: epochs of iRPROP- for every trial,
no stopping, as ``benchmarks/many_trials.py`` times ``train_rprop_many``), on the studies
of the issue's bar with ``fastnet study``'s default network (tanh hidden units, logistic
outputs, no shortcuts): XOR 2-2-1 1000 trials x 200 epochs (the tiny kernel) and the
10-5-10 encoder 200 x 200 (the generic lanes kernel). CPU time of the process; the
contestants take turns, median of the rounds; ns per trained trial-epoch. Run it on one
core::

    taskset -c 1 python benchmarks/lanes_f32.py --rounds 11

JAX: the iRPROP- of ``benchmarks/many_trials.py`` in float32 (``jax_enable_x64`` off), the
whole training under ``jax.jit`` with ``lax.scan`` over epochs and ``jax.vmap`` over trials,
one XLA thread.
"""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from fastnet import MLP  # noqa: E402
from fastnet._kernels import _trials  # noqa: E402
from fastnet._kernels._rules import Rule  # noqa: E402

STUDY_NET = dict(hidden_activation="tanh", output_activation="logistic", shortcut=False)
STUDIES = [("XOR 2-2-1", np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]),
            np.array([[0.], [1.], [1.], [0.]]), 2, 1000, 200),
           ("encoder 10-5-10", np.eye(10), np.eye(10), 5, 200, 200)]
RULE = dict(eta_plus=1.2, eta_minus=0.5, delta_min=0.0, delta_max=50.0)


#: The error rows' placement: 0, at 64 bytes (the tiny kernels then stream each row of
#: errors past the cache, fn_tiny_transpose8); 8, one double past it (stored through the
#: cache). Where NumPy places a fresh array varies with the process's heap.
SSE_OFFSET = 0


def aligned_rows(n, m):
    """An (n, m) float64 array starting SSE_OFFSET bytes past a 64-byte boundary."""
    raw = np.empty(n * m + 16)
    start = (-raw.ctypes.data % 64 + SSE_OFFSET) // 8
    return raw[start:start + n * m].reshape(n, m)


def kernel_trainer(net, X, T, W0, epochs, dtype):
    """A call of trials_train for every trial of W0 from its start (state made afresh)."""
    L = _trials.LANES_OF[np.dtype(dtype).name]
    K, C = W0.shape
    G = -(-K // L)
    rows = np.concatenate([W0, np.repeat(W0[:1], G * L - K, axis=0)]).astype(dtype)
    w0 = np.ascontiguousarray(rows.reshape(G, L, C).transpose(0, 2, 1))
    X, T = np.ascontiguousarray(X, dtype), np.ascontiguousarray(T, dtype)
    rule = Rule("irprop_minus", **RULE)
    work = np.zeros(_trials.work_size(net.n_units, X.shape[0], net.n_in, dtype=dtype), dtype)
    sse = aligned_rows(G * L, epochs)

    def run():
        w = w0.copy()
        g, gp, dw = (np.zeros_like(w) for _ in range(3))
        st = np.full_like(w, 0.1)
        _trials.trials_train(net.layer_table, net.n_in, X, T, w, g, gp, dw, st,
                             np.full(G * L, np.inf), np.zeros(G * L, np.int64), work, rule, sse,
                             t_max=epochs)
        return w
    return run


def jax_trainer(net, X, T, W0, epochs):
    import jax
    import jax.numpy as jnp

    layers = [tuple(int(v) for v in row) for row in net.layer_table]
    Xj, Tj = jnp.asarray(X, jnp.float32), jnp.asarray(T, jnp.float32)
    acts = {2: jax.nn.sigmoid, 3: jnp.tanh}

    def forward(w):
        A = Xj
        for _start, size, lo, hi, w_off, b_off, act in layers:
            W = w[w_off:b_off].reshape(size, hi - lo)
            A = jnp.concatenate([A, acts[act](A[:, lo:hi] @ W.T + w[b_off:b_off + size])], axis=1)
        return A[:, -T.shape[1]:]

    grad = jax.value_and_grad(lambda w: jnp.sum((forward(w) - Tj) ** 2))

    def epoch(carry, _):
        w, g_prev, step = carry
        e, g = grad(w)
        prod = g * g_prev
        step = jnp.where(prod > 0, jnp.minimum(step * 1.2, 50.0),
                         jnp.where(prod < 0, jnp.maximum(step * 0.5, 0.0), step))
        g = jnp.where(prod < 0, 0.0, g)
        return (w - jnp.sign(g) * step, g, step), e

    def train(w0):
        (w, _, _), errors = jax.lax.scan(epoch, (w0, jnp.zeros_like(w0), jnp.full_like(w0, 0.1)),
                                         None, length=epochs)
        return w, errors

    fn = jax.jit(jax.vmap(train))
    W0j = jnp.asarray(W0, jnp.float32)
    return lambda: jax.block_until_ready(fn(W0j))


def cpu(fn):
    gc.disable()
    try:
        t = time.process_time()
        fn()
        return time.process_time() - t
    finally:
        gc.enable()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--sse-offset", type=int, default=0, choices=(0, 8),
                    help="the error rows 64-byte aligned (0) or not (8)")
    args = ap.parse_args(argv)
    global SSE_OFFSET
    SSE_OFFSET = args.sse_offset
    for name, X, T, hidden, trials, epochs in STUDIES:
        net = MLP(X.shape[1], (hidden,), T.shape[1], **STUDY_NET)
        W0 = np.random.default_rng(12345).uniform(-0.5, 0.5, (trials, net.n_connections))
        runs = {"float64": kernel_trainer(net, X, T, W0, epochs, "float64"),
                "float32": kernel_trainer(net, X, T, W0, epochs, "float32")}
        if not args.no_jax:
            try:
                runs["jax float32"] = jax_trainer(net, X, T, W0, epochs)
            except ImportError:
                print("  (jax not installed)")
        for fn in runs.values():              # warm-up (and JAX's compile)
            fn(), fn()
        times = {k: [] for k in runs}
        for _ in range(args.rounds):
            for k, fn in runs.items():
                times[k].append(cpu(fn))
        per = trials * epochs
        med = {k: statistics.median(v) for k, v in times.items()}
        line = ", ".join(f"{k} {med[k] * 1e9 / per:.2f} ns" for k in runs)
        ratio = statistics.median(a / b for a, b in zip(times["float64"], times["float32"]))
        print(f"{name} {trials} x {epochs} (ns per trial-epoch): {line}; "
              f"float64/float32 {ratio:.2f}x", end="")
        if "jax float32" in times:
            rj = statistics.median(a / b for a, b in zip(times["jax float32"], times["float32"]))
            print(f"; JAX float32/fastnet float32 {rj:.2f}x", end="")
        print()


if __name__ == "__main__":
    main()
