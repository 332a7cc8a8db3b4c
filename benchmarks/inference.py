#!/usr/bin/env python
"""Serving a trained network: ``MLP.predict`` against NumPy, onnxruntime, PyTorch and scikit-learn.

Every peer computes the same network with the same float64 weights, on one core:

* **fastnet** ``net.predict(X)`` (a new array) and ``net.predict(X, out=Y)``;
* **NumPy** at its best: the faster, per case, of the plain expression
  ``f(X @ W1 + b1) @ W2 + b2`` and the same with preallocated buffers and in-place
  ufuncs (``np.matmul(..., out=)``, ``np.tanh(z, out=z)``), and for one row also
  the 1-D form ``f(x @ W1 + b1)``; BLAS held to one thread;
* **onnxruntime** running ``fastnet.export.to_onnx(net)`` (float64, one thread, all
  graph optimisations);
* **PyTorch** ``torch.nn.Sequential`` of ``Linear`` layers and the activation
  modules (``Softsign`` is Proben1's x/(1+|x|)), float64, ``torch.inference_mode``,
  ``torch.set_num_threads(1)``, input converted with ``torch.from_numpy`` inside
  the timed call and the output returned as NumPy;
* **scikit-learn** ``MLPRegressor.predict`` with ``coefs_``/``intercepts_`` set
  (its activations are identity, logistic, tanh and relu, and its regressor's
  outputs are linear, so it runs the 32-32-4 networks but not Proben1's hidden
  units or logistic outputs: "n/a").

Networks (no shortcut connections, so every peer runs them): 10-8-1 tanh hidden,
logistic output; Proben1's 9-6-2 (x/(1+|x|) hidden, linear outputs); 32-32-4 with
proben1, tanh, logistic and relu hidden units and linear outputs. Rows: 1, 10,
1,000, 10,000, 100,000. Each call is timed by ``timeit`` (``--repeats`` rounds, the peers
taking turns within each round, each round timing a loop of calls that lasts about
``--seconds``); printed per case: each peer's best (minimum) time per call, and
fastnet's speed relative to each peer (peer time / fastnet time, > 1: fastnet faster),
from the minima and, in brackets, from the medians of the rounds.

    python benchmarks/inference.py [--repeats 7] [--seconds 0.05] [--rows 1 10 1000 10000 100000]
    python benchmarks/inference.py --threads     # two threads predicting with one network
    python benchmarks/inference.py --dtype float32 --json f32.json   # the float32 comparison

``--dtype float32`` compares serving in single precision, the precision ONNX runtimes and
PyTorch default to: the same network (32-32-4 tanh by default, 10,000 rows by default; the
weights drawn in float64 and rounded once) through fastnet ``MLP(..., dtype="float32")``
``predict`` (float32 in, float32 out), onnxruntime on ``to_onnx(net, dtype="float32")``
(``intra_op_num_threads = inter_op_num_threads = 1``, sequential execution, all graph
optimisations), NumPy float32 at its best and PyTorch float32 (one thread), with fastnet
float64 and onnxruntime float64 beside them. Issue 48's bar: fastnet float32 >= 1.5x
onnxruntime float32 on 10,000 x 32-32-4 tanh. While fastnet refuses float32 its column says
"fastnet float32 unavailable" and the bar "n/a". Outputs are checked against the float64
``predict`` to float32 accuracy (rtol 1e-4, atol 1e-5).

``--threads`` measures instead how two threads predicting with the same network scale
(the GIL is released): the wall time of 2 x k calls in one thread against k calls in
each of two threads, taking turns, on the 32-32-4 tanh network (rows as given, default
10,000 and 100); speed-up = one-thread time / two-thread time (2.0: perfect; needs two
idle cores, and the machine's load is printed).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402

from fastnet import MLP, __version__  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import one_core_one_thread  # noqa: E402

NETWORKS = [  # (label, n_in, hidden, n_out, hidden activation, output activation)
    ("10-8-1 tanh/logistic", 10, (8,), 1, "tanh", "logistic"),
    ("9-6-2 proben1", 9, (6,), 2, "proben1", "linear"),
    ("32-32-4 proben1", 32, (32,), 4, "proben1", "linear"),
    ("32-32-4 tanh", 32, (32,), 4, "tanh", "linear"),
    ("32-32-4 logistic", 32, (32,), 4, "logistic", "linear"),
    ("32-32-4 relu", 32, (32,), 4, "relu", "linear"),
]
PEERS = ("fastnet", "fastnet out=", "numpy", "onnxruntime", "torch", "sklearn")


def _numpy_forms(net, X):
    """The NumPy forward passes a careful user writes: plain, in place, and 1-D for one row
    (in the precision of ``X``: the weights are converted to its dtype once)."""
    W, b = net.get_params()
    layers = [(W[(j - 1, j)].astype(X.dtype), b[j].astype(X.dtype)) for j in range(1, net.n_layers + 1)]
    acts = [net.hidden_activation] * (net.n_layers - 1) + [net.output_activation]
    plain = {"linear": lambda z: z, "tanh": np.tanh, "relu": lambda z: np.maximum(z, 0.0),
             "logistic": lambda z: 1.0 / (1.0 + np.exp(-z)),
             "proben1": lambda z: z / (1.0 + np.abs(z))}

    def expression(X):
        a = X
        for (Wj, bj), act in zip(layers, acts):
            a = plain[act](a @ Wj + bj)
        return a

    bufs = [np.empty((X.shape[0], Wj.shape[1]), X.dtype) for Wj, _ in layers]
    tmp = [np.empty_like(z) for z in bufs]

    def in_place(X):
        a = X
        for (Wj, bj), act, z, t in zip(layers, acts, bufs, tmp):
            np.matmul(a, Wj, out=z)
            z += bj
            if act == "tanh":
                np.tanh(z, out=z)
            elif act == "relu":
                np.maximum(z, 0.0, out=z)
            elif act == "logistic":
                np.negative(z, out=z)
                np.exp(z, out=z)
                z += 1.0
                np.reciprocal(z, out=z)
            elif act == "proben1":
                np.abs(z, out=t)
                t += 1.0
                np.divide(z, t, out=z)
            a = z
        return a

    forms = {"expression": (expression, X), "in place": (in_place, X)}
    if X.shape[0] == 1:
        forms["1-D"] = (expression, X[0])
    return forms


def _onnx(net, dtype="float64"):
    try:
        import onnxruntime as ort
        from fastnet.export import to_onnx
    except ImportError:
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(to_onnx(net, dtype=dtype).SerializeToString(), opts,
                                   providers=["CPUExecutionProvider"])
    return lambda X: session.run(None, {"x": X})[0]


def _torch(net, dtype="float64"):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    tdt = {"float64": torch.float64, "float32": torch.float32}[dtype]
    modules = {"tanh": torch.nn.Tanh, "logistic": torch.nn.Sigmoid, "relu": torch.nn.ReLU,
               "proben1": torch.nn.Softsign, "linear": torch.nn.Identity}
    W, b = net.get_params()
    layers = []
    for j in range(1, net.n_layers + 1):
        lin = torch.nn.Linear(*W[(j - 1, j)].shape, dtype=tdt)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(W[(j - 1, j)].T.astype(dtype)))
            lin.bias.copy_(torch.from_numpy(b[j].astype(dtype)))
        act = net.output_activation if j == net.n_layers else net.hidden_activation
        layers += [lin, modules[act]()]
    model = torch.nn.Sequential(*layers).eval()

    def run(X):
        with torch.inference_mode():
            return model(torch.from_numpy(X)).numpy()
    return run


def _sklearn(net):
    if net.output_activation != "linear" or net.hidden_activation == "proben1":
        return None
    try:
        from sklearn.neural_network import MLPRegressor
    except ImportError:
        return None
    W, b = net.get_params()
    reg = MLPRegressor(hidden_layer_sizes=net.hidden,
                       activation={"logistic": "logistic", "tanh": "tanh", "relu": "relu",
                                   "linear": "identity"}[net.hidden_activation])
    reg.coefs_ = [W[(j - 1, j)].copy() for j in range(1, net.n_layers + 1)]
    reg.intercepts_ = [b[j].copy() for j in range(1, net.n_layers + 1)]
    reg.n_layers_, reg.n_outputs_, reg.out_activation_ = net.n_layers + 1, net.n_out, "identity"
    reg.n_features_in_ = net.n_in
    return reg.predict


def measure(net, rows, repeats, seconds, rng):
    """{peer: list of seconds per call, one per round}, the peers taking turns."""
    X = rng.normal(0.0, 1.0, (rows, net.n_in))
    expected = net.predict(X)
    out = np.empty_like(expected)
    calls = {"fastnet": (net.predict, X), "fastnet out=": (lambda X: net.predict(X, out=out), X)}
    for form, (fn, arg) in _numpy_forms(net, X).items():
        calls[f"numpy {form}"] = (fn, arg)
    for name, make in (("onnxruntime", _onnx), ("torch", _torch), ("sklearn", _sklearn)):
        fn = make(net)
        if fn is not None:
            calls[name] = (fn, X)
    for name, (fn, arg) in calls.items():     # every peer computes the same outputs
        got = np.asarray(fn(arg)).reshape(expected.shape)
        assert np.allclose(got, expected, rtol=1e-10, atol=1e-12), name
    times = _time_calls(calls, repeats, seconds)
    # NumPy at its best: per round, the fastest of its forms
    forms = [k for k in times if k.startswith("numpy ")]
    times["numpy"] = [min(times[k][i] for k in forms) for i in range(repeats)]
    best_form = min(forms, key=lambda k: min(times[k]))[len("numpy "):]
    return times, best_form


def _time_calls(calls, repeats, seconds):
    """{name: seconds per call, one per round}: ``timeit`` loops of about ``seconds``, in turns."""
    number = {}
    for name, (fn, arg) in calls.items():
        t = timeit.timeit(lambda fn=fn, arg=arg: fn(arg), number=3) / 3
        number[name] = max(1, int(seconds / max(t, 1e-9)))
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, (fn, arg) in calls.items():
            times[name].append(timeit.timeit(lambda fn=fn, arg=arg: fn(arg),
                                             number=number[name]) / number[name])
    return times


# ------------------------------------------------------------------------ float32

F32_PEERS = ("fastnet f32", "fastnet f32 out=", "onnxruntime f32", "numpy f32", "torch f32",
             "fastnet f64", "onnxruntime f64")
#: Issue 48's bar: (network, rows, peer, factor): fastnet f32 >= factor x the peer.
F32_BARS = [("32-32-4 tanh", 10_000, "onnxruntime f32", 1.5)]


def float32_net(net):
    """fastnet's float32 copy of ``net`` (its weights rounded once), or (None, why not)."""
    try:
        if hasattr(net, "astype"):
            return net.astype("float32"), None
        net32 = MLP(net.n_in, net.hidden, net.n_out, shortcut=net.shortcut, dtype="float32",
                    hidden_activation=net.hidden_activation, output_activation=net.output_activation)
        net32.set_weights(net.weights)
        return net32, None
    except Exception as exc:  # noqa: BLE001 - the reason is printed
        return None, f"fastnet float32 unavailable: {type(exc).__name__}: {exc}"


def measure_f32(net, net32, rows, repeats, seconds, rng):
    """The float32 peers (and fastnet/onnxruntime float64) on one network and row count."""
    X = rng.normal(0.0, 1.0, (rows, net.n_in))
    X32 = X.astype(np.float32)
    expected = net.predict(X)
    calls = {"fastnet f64": (net.predict, X)}
    if net32 is not None:
        out = np.empty(expected.shape, np.float32)
        calls["fastnet f32"] = (net32.predict, X32)
        calls["fastnet f32 out="] = (lambda X: net32.predict(X, out=out), X32)
    for form, (fn, arg) in _numpy_forms(net, X32).items():
        calls[f"numpy f32 {form}"] = (fn, arg)
    for name, make, dtype, arg in (("onnxruntime f32", _onnx, "float32", X32), ("torch f32", _torch, "float32", X32),
                                   ("onnxruntime f64", _onnx, "float64", X)):
        fn = make(net, dtype)
        if fn is not None:
            calls[name] = (fn, arg)
    for name, (fn, arg) in calls.items():     # the same outputs, to float32 accuracy
        got = np.asarray(fn(arg))
        assert got.dtype == (np.float64 if name.endswith("f64") else np.float32), (name, got.dtype)
        assert np.allclose(got.reshape(expected.shape), expected, rtol=1e-4, atol=1e-5), name
    times = _time_calls(calls, repeats, seconds)
    forms = [k for k in times if k.startswith("numpy f32 ")]
    times["numpy f32"] = [min(times[k][i] for k in forms) for i in range(repeats)]
    return times


def main_f32(args, rng):
    """``--dtype float32``: the float32 table and issue 48's bar."""
    import onnxruntime

    nets = [n for n in NETWORKS if (any(s in n[0] for s in args.networks) if args.networks else n[0] == "32-32-4 tanh")]
    rows_list = args.rows or [10_000]
    print(f"fastnet {__version__}; onnxruntime {onnxruntime.__version__}; "
          f"{platform.processor() or platform.machine()}; load {tuple(round(v, 2) for v in os.getloadavg())}; "
          f"one core, float32; best of {args.repeats} rounds, peers taking turns")
    print("seconds per call (minimum); below: each peer's time / fastnet f32's (f64's) time from minima [medians]")
    records, bars = [], []
    for label, n_in, hidden, n_out, hact, oact in nets:
        net = MLP(n_in, hidden, n_out, shortcut=False, hidden_activation=hact, output_activation=oact, seed=1)
        net32, why = float32_net(net)
        if why:
            print(why)
        print(f"\n{'network':<22}{'rows':>7}  " + "  ".join(f"{p:>16}" for p in F32_PEERS))
        for rows in rows_list:
            times = measure_f32(net, net32, rows, args.repeats, args.seconds, rng)
            print(f"{label:<22}{rows:>7}  " + "  ".join(
                f"{min(times[p]):16.3e}" if p in times else f"{'n/a':>16}" for p in F32_PEERS))
            for ref in ("fastnet f32", "fastnet f64"):
                ratios = {}
                if ref in times:
                    ratios = {p: (min(times[p]) / min(times[ref]), float(np.median(times[p]) / np.median(times[ref])))
                              for p in F32_PEERS if p in times}
                print(f"{'  peer / ' + ref:<29}" + "  ".join(
                    f"{ratios[p][0]:7.2f} [{ratios[p][1]:5.2f}]".rjust(16) if p in ratios else f"{'n/a':>16}"
                    for p in F32_PEERS))
            records.append({"network": label, "rows": rows, "dtype": "float32", "fastnet_f32": why or "ok",
                            "min_s": {p: min(v) for p, v in times.items()},
                            "median_s": {p: float(np.median(v)) for p, v in times.items()},
                            "rounds_s": times})
            for bnet, brows, peer, factor in F32_BARS:
                if (bnet, brows) == (label, rows):
                    bars.append(_f32_bar(label, rows, peer, factor, times))
    return records, bars


def _f32_bar(label, rows, peer, factor, times):
    what = f"issue 48: predict {rows:,} x {label}: fastnet f32 >= {factor:g}x {peer}"
    if "fastnet f32" not in times or peer not in times:
        status = "n/a" if "fastnet f32" not in times else "SKIP"
        print(f"{status} {what} ({'fastnet float32 unavailable' if status == 'n/a' else peer + ' not measured'})")
        return {"bar": what, "status": status}
    ratio = min(times[peer]) / min(times["fastnet f32"])
    med = float(np.median(times[peer]) / np.median(times["fastnet f32"]))
    status = "PASS" if ratio >= factor else "FAIL"
    print(f"{status} {what}: {ratio:.2f}x from minima [{med:.2f} medians]")
    return {"bar": what, "status": status, "ratio": ratio, "median_ratio": med}


def thread_scaling(rows_list, repeats):
    """Print the speed-up of two threads over one predicting with one network."""
    import threading

    net = MLP(32, (32,), 4, shortcut=False, hidden_activation="tanh", seed=1)
    print(f"load {tuple(round(v, 2) for v in os.getloadavg())}; cores {os.cpu_count()}; "
          "32-32-4 tanh, 2 x k predict calls: one thread vs two threads (k each)")
    for rows in rows_list:
        X = np.random.default_rng(0).normal(size=(rows, 32))
        k = max(4, int(0.2 / max(timeit.timeit(lambda X=X: net.predict(X), number=3) / 3, 1e-7)))

        def calls(n, X=X):
            for _ in range(n):
                net.predict(X)

        one, two = [], []
        for _ in range(repeats):
            t0 = timeit.default_timer()
            calls(2 * k)
            one.append(timeit.default_timer() - t0)
            threads = [threading.Thread(target=calls, args=(k,)) for _ in range(2)]
            t0 = timeit.default_timer()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            two.append(timeit.default_timer() - t0)
        print(f"{rows:>7} rows, k = {k}: speed-up {np.median(one) / np.median(two):.2f} "
              f"(medians of {repeats}; best {min(one) / min(two):.2f})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="float32: python benchmarks/inference.py --dtype float32 [--json PATH] "
                                 "(10,000 x 32-32-4 tanh: fastnet f32 against onnxruntime f32 and the others)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.05, help="time per timed loop")
    ap.add_argument("--rows", type=int, nargs="+", default=None,
                    help="rows per call (default 1 10 1000 10000 100000; with --dtype float32: 10000)")
    ap.add_argument("--networks", nargs="+", default=None,
                    help="labels (or parts of labels) of the networks to run (default all; with --dtype "
                    "float32: 32-32-4 tanh)")
    ap.add_argument("--dtype", default="float64", choices=("float64", "float32"),
                    help="float64 (the default table) or float32 (fastnet MLP(dtype='float32') against "
                    "onnxruntime, NumPy and PyTorch in float32; issue 48's bar)")
    ap.add_argument("--json", default=None, metavar="PATH",
                    help="write every time (per round), the dtype, versions and machine to this file")
    ap.add_argument("--threads", action="store_true",
                    help="measure two threads predicting with one network instead")
    args = ap.parse_args(argv)
    if args.threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
        thread_scaling(args.rows or [10_000, 100], args.repeats)
        return
    one_core_one_thread()
    rng = np.random.default_rng(0)
    if args.dtype == "float32":
        records, bars = main_f32(args, rng)
        write_json(args, records, bars)
        return
    args.rows = args.rows or [1, 10, 1000, 10_000, 100_000]
    records = []
    print(f"fastnet {__version__}; {platform.processor() or platform.machine()}; "
          f"load {tuple(round(v, 2) for v in os.getloadavg())}; one core, float64; "
          f"best of {args.repeats} rounds, peers taking turns")
    print("seconds per call (minimum); fastnet speed relative to each peer: peer time / "
          "fastnet time from minima [medians]")
    header = f"{'network':<22}{'rows':>7}  " + "  ".join(f"{p:>12}" for p in PEERS)
    for label, n_in, hidden, n_out, hact, oact in NETWORKS:
        if args.networks and not any(s in label for s in args.networks):
            continue
        net = MLP(n_in, hidden, n_out, shortcut=False, hidden_activation=hact,
                  output_activation=oact, seed=1)
        print("\n" + header)
        for rows in args.rows:
            times, best_form = measure(net, rows, args.repeats, args.seconds, rng)
            cells = [f"{min(times[p]):12.3e}" if p in times else f"{'n/a':>12}" for p in PEERS]
            print(f"{label:<22}{rows:>7}  " + "  ".join(cells))
            ratios = []
            for p in PEERS[2:]:
                if p not in times:
                    ratios.append(f"{'n/a':>12}")
                    continue
                best = min(times[p]) / min(times["fastnet"])
                med = np.median(times[p]) / np.median(times["fastnet"])
                ratios.append(f"{best:5.2f} [{med:4.2f}]".rjust(12))
            print(f"{'  fastnet x peer':<29}" + "  ".join(f"{'':>12}" for _ in PEERS[:2])
                  + "  " + "  ".join(ratios) + f"   (numpy: {best_form})")
            records.append({"network": label, "rows": rows, "dtype": "float64", "numpy_form": best_form,
                            "min_s": {p: min(v) for p, v in times.items()},
                            "median_s": {p: float(np.median(v)) for p, v in times.items()},
                            "rounds_s": times})
    write_json(args, records, [])


def write_json(args, records, bars):
    """--json: the figures with the dtype, the tools' versions and the machine."""
    if not args.json:
        return
    import json

    from _peers.machine import describe, git_commit

    versions = {"fastnet": __version__, "repo_commit": git_commit(os.path.dirname(os.path.abspath(__file__)))}
    for mod in ("onnxruntime", "onnx", "torch", "sklearn"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            pass
    with open(args.json, "w") as fh:
        json.dump({"machine": describe(versions), "dtype": args.dtype, "repeats": args.repeats,
                   "seconds": args.seconds, "protocol": "timeit rounds, peers taking turns, one core, one thread",
                   "records": records, "bars": bars}, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
