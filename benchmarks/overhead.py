"""Per-call cost of short ``train_rprop`` runs in two trees of fastnet, run alternately.

What a study pays around the kernels when it trains many small networks one
call at a time: set-up, the strip loop's per-strip work, result assembly. Two
cases, each timed as many calls in one process (``time.process_time`` after a
warm-up):

* ``xor``: XOR 2-2-1 (4 patterns), 20 epochs, no validation set;
* ``cancer1``: cancer1 4+2 (shortcuts), validation set, GL5 stopping, strips of 5.

Each repeat starts one fresh process per tree, A then B (A B A B ...), with that
tree's ``src`` first on ``PYTHONPATH``; prints per case the median microseconds
per call of each tree and the median of the per-repeat ratios B/A::

    FASTNET_DATA=... python benchmarks/overhead.py /work/base/src src --repeats 7

``--calls-of [src]`` (one tree, default ``src``): the cost of one call
beside its kernel's, and JAX's jitted peers, each tool in its own process, taking
turns (fastnet, JAX, fastnet, JAX, ...; medians over the repeats, calls timed with
``time.perf_counter`` after warm-up calls, the collector off, one core; JAX with
one XLA thread):

* ``vag``: the gradient of a 24-8-2 tanh net (no shortcuts) on 200 rows, float64
  (or, with ``--dtype float32``, float32; SimpleChains.jl's README case): ``Objective`` call, ``obj(w, out=g)``,
  ``value_and_grad``, the kernel alone; JAX ``jit(value_and_grad)``, NumPy in and out;
* ``lbfgs``: ``scipy.optimize.minimize(..., jac=True, method="L-BFGS-B")`` on cancer1
  4+2 (shortcuts, Proben1 units, linear outputs), 200 iterations (tolerances 0),
  through ``Objective`` and through a jitted JAX objective;
* ``xor``: XOR 2-2-1, 10 epochs of iRPROP-/RPROP+ per call: ``Trainer.run(10)``,
  ``train_rprop(max_epochs=10)`` and the epoch kernel alone (10 epochs)::

    FASTNET_DATA=... python benchmarks/overhead.py --calls-of src --repeats 7

The process is pinned to one core where the OS allows it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

def worker(calls):
    import numpy as np

    from fastnet import MLP, train_rprop
    from fastnet.stopping import GL

    xor = (np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]]), np.array([[0.], [1.], [1.], [0.]]))
    net_x = MLP(2, (2,), 1)
    from fastnet.datasets import load_proben1

    data = load_proben1("cancer1")
    (X, Y), (X_val, Y_val) = data.train, data.val
    net_c = MLP(X.shape[1], (4, 2), Y.shape[1])

    def xor_call(i):
        train_rprop(net_x, *xor, max_epochs=20, init_scale=0.5, seed=i)

    def cancer_call(i):
        train_rprop(net_c, X, Y, X_val, Y_val, max_epochs=300, stop=GL(5), init_scale=0.5,
                    seed=i)

    out = {}
    for name, call, n in (("xor", xor_call, calls), ("cancer1", cancer_call, max(1, calls // 20))):
        for i in range(max(1, n // 10)):             # warm-up
            call(i)
        t0 = time.process_time()
        for i in range(n):
            call(i)
        out[name] = (time.process_time() - t0) / n
    print(json.dumps(out))


def _per_call(call, n, warm=None):
    """Seconds per call of ``call()``: the median of 5 batches of ``n`` calls, after
    ``warm`` (default n // 5 + 1) warm-up calls, the collector off."""
    import gc

    for _ in range(n // 5 + 1 if warm is None else warm):
        call()
    gc.disable()
    try:
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                call()
            times.append((time.perf_counter() - t0) / n)
    finally:
        gc.enable()
    return statistics.median(times)


def _vag_case(dtype):
    import numpy as np

    from fastnet import MLP

    rng = np.random.default_rng(0)
    net = MLP(24, (8,), 2, shortcut=False, hidden_activation="tanh", seed=0, dtype=dtype)
    return (net, rng.standard_normal((200, 24)).astype(dtype),
            rng.standard_normal((200, 2)).astype(dtype))


def _lbfgs_case(dtype):
    from fastnet import MLP
    from fastnet.datasets import load_proben1

    X, Y = load_proben1("cancer1").train
    net = MLP.from_proben1("4+2 l", X.shape[1], Y.shape[1]).astype(dtype)
    return net.init_weights(0, 0.5), X.astype(dtype), Y.astype(dtype)


_LBFGS = {"maxiter": 200, "ftol": 0.0, "gtol": 0.0, "maxfun": 10**6, "maxls": 50}


def calls_fastnet(n, dtype):
    """The fastnet side of ``--calls-of``: seconds per call of each case, in ``dtype``."""
    import numpy as np
    from scipy.optimize import minimize

    from fastnet import MLP, Trainer, train_rprop, value_and_grad
    from fastnet._engine import DEFAULT_BLAS_MIN, Workspace
    from fastnet._kernels import _backward
    from fastnet.gradients import Objective
    from fastnet.network import kernel_layers
    from fastnet.training._algorithms import RPROP, start_trial

    out = {}
    net, X, Y = _vag_case(dtype)
    obj, w, g = Objective(net, X, Y), net.weights.copy(), np.empty(net.n_connections, dtype)
    out["vag: Objective obj(w)"] = _per_call(lambda: obj(w), n)
    out["vag: obj(w, out=g)"] = _per_call(lambda: obj(w, out=g), n)
    out["vag: value_and_grad"] = _per_call(lambda: value_and_grad(net, X, Y), n)
    A, D, Dl, _ = obj._free[0]            # (the Objective's kept workspace)
    L = kernel_layers(net)
    out["vag: kernel alone"] = _per_call(
        lambda: _backward.gradient(A, Y, L, net.n_in, w, g, D, Dl, DEFAULT_BLAS_MIN), n)
    net, X, Y = _lbfgs_case(dtype)
    obj, w0 = Objective(net, X, Y), net.weights.copy()

    def lbfgs():
        res = minimize(obj, w0, jac=True, method="L-BFGS-B", options=_LBFGS)
        assert res.nit == _LBFGS["maxiter"], res.message
    out["lbfgs: scipy through Objective"] = _per_call(lbfgs, max(1, n // 2000), warm=1)
    Xx = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]], dtype)
    Yx = np.array([[0.], [1.], [1.], [0.]], dtype)
    net = MLP(2, (2,), 1, seed=0, dtype=dtype)
    trainer = Trainer(net, Xx, Yx, init_scale=0.5, seed=1)
    out["xor: Trainer.run(10)"] = _per_call(lambda: trainer.run(10), n)
    out["xor: train_rprop(max_epochs=10)"] = _per_call(
        lambda: train_rprop(net, Xx, Yx, max_epochs=10, init_scale=0.5, seed=1), max(1, n // 5))
    rule = RPROP()
    ws = Workspace(net, Xx, Yx, w=net.weights.copy())
    state, sse = start_trial(rule, net.n_connections, None, 10, net.dtype), np.empty(10)
    out["xor: 10 epochs, kernel alone"] = _per_call(lambda: rule.epochs(ws, state, sse, None), n)
    return out


def _jax_layers(net):
    """(lo, hi, size, w_off, b_off, act code) per layer of ``net``'s layer table."""
    return [(lo, hi, size, w_off, b_off, act)
            for _, size, lo, hi, w_off, b_off, act in net.layer_table.tolist()]


def calls_jax(n, dtype):
    """The JAX side of ``--calls-of``: jitted value_and_grad (NumPy in, NumPy out), in
    ``dtype`` (float32: JAX's default precision, x64 off)."""
    os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                               "intra_op_parallelism_threads=1")
    import jax
    import jax.numpy as jnp
    import numpy as np
    from scipy.optimize import minimize

    jax.config.update("jax_enable_x64", dtype == "float64")
    acts = {0: lambda z: z, 1: lambda z: z / (1.0 + jnp.abs(z)), 3: jnp.tanh}

    def objective(net, X, Y):
        layers, X, Y = _jax_layers(net), jnp.asarray(X), jnp.asarray(Y)

        def sse(w):
            A = X
            for lo, hi, size, w_off, b_off, act in layers:
                W = w[w_off:b_off].reshape(size, hi - lo)
                A = jnp.concatenate([A, acts[act](A[:, lo:hi] @ W.T + w[b_off:b_off + size])],
                                    axis=1)
            return jnp.sum((A[:, A.shape[1] - Y.shape[1]:] - Y) ** 2)
        f = jax.jit(jax.value_and_grad(sse))

        def call(w):
            v, g = f(w)
            return float(v), np.asarray(g)
        return call

    out = {}
    net, X, Y = _vag_case(dtype)
    call, w = objective(net, X, Y), net.weights.copy()
    out["vag: Objective obj(w)"] = _per_call(lambda: call(w), n)
    net, X, Y = _lbfgs_case(dtype)
    call, w0 = objective(net, X, Y), net.weights.copy()

    def lbfgs():
        res = minimize(call, w0, jac=True, method="L-BFGS-B", options=_LBFGS)
        assert res.nit == _LBFGS["maxiter"], res.message
    out["lbfgs: scipy through Objective"] = _per_call(lbfgs, max(1, n // 2000), warm=1)
    return out


def calls_report(src, repeats, n, dtype):
    """Run the ``--calls-of`` workers (fastnet, JAX) in turn; print each case's medians."""
    runs = {"fastnet": [], "jax": []}
    for _ in range(repeats):
        for tool in runs:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
            res = subprocess.run([sys.executable, __file__, "--worker", f"{tool}:{n}:{dtype}"],
                                 env=env, capture_output=True, text=True, check=True)
            runs[tool].append(json.loads(res.stdout.strip().splitlines()[-1]))
    print(f"one call in {dtype}, medians of {repeats} processes per tool, taking turns; "
          f"load {os.getloadavg()}")
    print(f"{'case':<40} {'fastnet':>12} {'JAX jit':>12} {'JAX/fastnet':>12}")
    for case in runs["fastnet"][0]:
        f = statistics.median(r[case] for r in runs["fastnet"])
        j = (statistics.median(r[case] for r in runs["jax"]) if case in runs["jax"][0]
             else None)
        unit, scale = ("ms", 1e3) if case.startswith("lbfgs") else ("us", 1e6)
        shown = f"{scale * j:9.2f} {unit}" if j is not None else ""
        ratio = f"{j / f:11.2f}x" if j is not None else ""
        print(f"{case:<40} {scale * f:9.2f} {unit} {shown:>12} {ratio:>12}")


def alternate(script, a, b, repeats, worker_args):
    """Run ``script --worker ...`` in a fresh process per tree, A then B, ``repeats``
    times (each tree's ``src`` first on PYTHONPATH); each worker prints one JSON
    line of seconds per case. Returns the list of those dicts per tree."""
    times = {"a": [], "b": []}
    for _ in range(repeats):
        for key, src in (("a", a), ("b", b)):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
            res = subprocess.run([sys.executable, script, "--worker", *worker_args], env=env,
                                 capture_output=True, text=True, check=True)
            times[key].append(json.loads(res.stdout.strip().splitlines()[-1]))
    return times["a"], times["b"]


def report(times_a, times_b, a, b, scale, unit):
    """Per case: the medians of each tree (seconds times ``scale``, in ``unit``) and
    the median of the per-repeat ratios B/A."""
    print(f"A = {a}, B = {b}; medians of {len(times_a)} alternating processes; "
          f"load {os.getloadavg()}")
    for case in times_a[0]:
        ta = [t[case] for t in times_a]
        tb = [t[case] for t in times_b]
        ratio = statistics.median(y / x for x, y in zip(ta, tb))
        print(f"{case:<16} A {scale * statistics.median(ta):10.3f} {unit}  "
              f"B {scale * statistics.median(tb):10.3f} {unit}  B/A {ratio:.3f}")


def pin_one_core():
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def one_core_one_thread():
    """Pin the process to one core and hold every loaded BLAS/OpenMP pool to one thread."""
    pin_one_core()
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass


def parser(doc, repeats, calls, calls_help):
    """The arguments of an A/B script: the two trees' src, repeats, calls, the worker flag."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("a", nargs="?", help="tree A's src directory")
    ap.add_argument("b", nargs="?", help="tree B's src directory")
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--calls", type=int, default=calls, help=calls_help)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return ap


def main(argv=None):
    ap = parser(__doc__, 7, 2000, "XOR calls per process (cancer1: 1/20)")
    ap.add_argument("--calls-of", dest="calls_src", nargs="?", const="src",
                    default=None, help="the one-call cases in the tree whose src is given "
                    "(default src), against JAX")
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                    help="the value type of the --calls-of cases (float32: JAX's default)")
    args = ap.parse_args(argv)
    pin_one_core()
    if args.worker is not None:
        if ":" in args.worker:
            tool, n, dtype = args.worker.split(":")
            print(json.dumps((calls_fastnet if tool == "fastnet" else calls_jax)(int(n), dtype)))
            return
        worker(int(args.worker))
        return
    if args.calls_src is not None:
        calls_report(args.calls_src, args.repeats, args.calls, args.dtype)
        return
    if args.a is None or args.b is None:
        ap.error("give the src directories of trees A and B")
    times_a, times_b = alternate(__file__, args.a, args.b, args.repeats, [str(args.calls)])
    report(times_a, times_b, args.a, args.b, 1e6, "us/call")


if __name__ == "__main__":
    main()
