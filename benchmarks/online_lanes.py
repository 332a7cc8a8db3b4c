"""Online backpropagation and the lanes: trials side by side against one after another. One core.

Online (per-pattern) backpropagation, as Lawrence, Back, Tsoi & Giles (1997) train
their MLPs (an update after every pattern, the rate falling linearly per update),
trains its trials side by side in the vector lanes (``_trials.trials_online``: each
lane its own trial's order, drawn in the kernel, an update per pattern), or one
after another in the single-network kernels (``method="serial"``). This script
measures, in one process and alternately (A B C D A B C D ...; each call timed with
``time.process_time`` and the garbage collector off, after one untimed warm-up
round), per study

* **serial online**: ``train_many(..., Backprop("online", 0.05, 0, "update"),
  method="serial")`` (one trial after another, each epoch's patterns one at a
  time in one kernel call, each epoch's order drawn in Python): CPU time per
  trial and pattern update;
* **lanes online**: the same with ``method="lanes"``: CPU time per trial and
  update, and its speed-up over serial online (the measured answer);

and the parts the decision to build the lanes kernel was estimated from (before
it existed; docs/performance.md keeps both):

* **lanes batch**: the same net, data and trials with ``Backprop("batch", ...)`` and
  ``method="lanes"``: CPU time per trial and pattern of the lanes' forward, backward
  and gradient arithmetic (one rule step per epoch, amortised over the patterns);
* **lanes 1-pattern epochs**: the lanes on a one-pattern training set, so every
  epoch is exactly one online update (forward, backward and gradient of one row,
  then one rule step): CPU time per trial and update, an upper bound on an online
  lanes kernel (it also pays the per-epoch bookkeeping of the batch kernel);
* **lanes rule step**: ``fastnet._kernels._trials.lanes_rule_step`` (backprop rule)
  on blocks of 64 and 1,024 weights x 8 lanes (both in L2; the slope between them
  is the CPU time per weight and trial, the call's own cost cancelling) and on the
  study's own n_w (a bare Python-to-kernel call: the least any per-pattern Python
  call would cost);
* **order draw**: ``numpy.random.Generator.permutation(N)`` per pattern, the
  presentation order every trial draws each epoch from its own stream (today in
  Python; an online-lanes kernel keeping each trial's own order pays it too),

and derives, each including the order draw,

* the optimistic online-lanes cost per trial-update: lanes batch + rule step x n_w
  (the rule step per weight and trial times the study's weights);
* the conservative one: lanes 1-pattern epochs;
* the Python-call alternative: one bare kernel call per pattern shared by 8 trials
  (call / 8) plus the lanes batch arithmetic;

each as a speed-up over serial online. With ``--reproduce R``, it then times
``fastnet.reproduction.reproduce_lawrence(R)`` (``fastnet reproduce lawrence --runs
R``) with ``method="serial"`` and ``"auto"`` (the lanes) alternately, CPU and wall
time, medians of ``--reproduce-repeats``. The studies: the Lawrence MLP (window-5,
5 tanh hidden units, linear output, no shortcuts, 1,000 standardised Mackey-Glass
training patterns), the Lawrence 5-5-1 teacher task (K = 5, 1,000 patterns), XOR
2-2-1 and a 10-5-10 encoder (tanh hidden, logistic outputs), all with initial
weights uniform in +-2.4/F (fan-in). Medians over the repeats; the ratios come
from one run, so share the machine's load (printed).

    PYTHONPATH=src FASTNET_DATA=... nice python benchmarks/online_lanes.py \\
        [--repeats 5] [--json out.json] [--reproduce 20 --reproduce-repeats 3]
"""
from __future__ import annotations

import os

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
from fastnet import MLP  # noqa: E402
from fastnet._kernels import _trials  # noqa: E402
from fastnet.datasets import make_mackey_glass, make_teacher  # noqa: E402
from fastnet.training import Backprop, train_many  # noqa: E402

LANES = _trials.LANES
RATE = 0.05           # Lawrence et al.'s 0.1 on (1/2) sum e^2
LAWRENCE_NET = dict(hidden_activation="tanh", output_activation="linear", shortcut=False)
STUDY_NET = dict(hidden_activation="tanh", output_activation="logistic", shortcut=False)
# name, data, hidden, trials, epochs of serial online, of lanes online, of lanes
# batch, of lanes 1-pattern epochs, network (each call some 30-80 ms)
STUDIES = [
    ("Lawrence MLP, Mackey-Glass 5-5-1", "mackey", (5,), 16, 10, 60, 80, 40000, LAWRENCE_NET),
    ("Lawrence teacher K=5, 5-5-1", "teacher", (5,), 16, 10, 60, 80, 40000, LAWRENCE_NET),
    ("XOR 2-2-1 tanh/logistic", "xor", (2,), 64, 500, 4000, 10000, 20000, STUDY_NET),
    ("encoder 10-5-10 tanh/logistic", "encoder10", (5,), 64, 200, 1000, 2000, 5000, STUDY_NET),
]


def load(data):
    if data == "mackey":
        d = make_mackey_glass(n_train=1000, n_test=0, seed=0, standardize=True)
        return d.train.X, d.train.Y
    if data == "teacher":
        d = make_teacher(5, n_train=1000, n_test=0, seed=0, standardize=True)
        return d.train.X, d.train.Y
    if data == "xor":
        X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
        return X, np.array([[0.], [1.], [1.], [0.]])
    return np.eye(10), np.eye(10)


def timed(fn):
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0
    finally:
        gc.enable()


def contestants(name, data, hidden, K, E, EO, EB, E1, kw):
    X, Y = load(data)
    N = X.shape[0]
    net = MLP(X.shape[1], hidden, Y.shape[1], **kw)
    common = dict(n_trials=K, seed=1, init="fan_in", init_scale=2.4)
    online = Backprop("online", RATE, 0.0, "update")
    batch = Backprop("batch", RATE / N, 0.0)
    n_w = net.n_connections
    big, small = 1024, 64                # both in L2 (5 blocks of n x 8 doubles)
    blk = [np.zeros((big, LANES)) for _ in range(5)]
    sml = [np.zeros((small, LANES)) for _ in range(5)]
    own = [np.zeros((n_w, LANES)) for _ in range(5)]
    rose = np.zeros(LANES, dtype=np.int64)
    rule = Backprop("batch", 1e-3, 0.0).kernel_rule()
    calls = 20000
    rng = np.random.default_rng(0)
    draws = max(1, 200000 // N)

    def serial():
        train_many(net, X, Y, algorithm=online, max_epochs=E, strip=E, method="serial",
                   **common)

    def lanes_online():
        train_many(net, X, Y, algorithm=online, max_epochs=EO, strip=EO, method="lanes",
                   **common)

    def lanes():
        train_many(net, X, Y, algorithm=batch, max_epochs=EB, strip=EB, method="lanes",
                   **common)

    def lanes1():
        train_many(net, X[:1], Y[:1], algorithm=Backprop("batch", RATE, 0.0),
                   max_epochs=E1, strip=E1, method="lanes", **common)

    def orders():
        for _ in range(draws):
            rng.permutation(N)

    def step_big():
        for _ in range(calls):
            _trials.lanes_rule_step(rule, *blk, rose)

    def step_small():
        for _ in range(calls):
            _trials.lanes_rule_step(rule, *sml, rose)

    def step_own():
        for _ in range(calls):
            _trials.lanes_rule_step(rule, *own, rose)

    # (contestant, divisor giving seconds per unit)
    return n_w, N, {
        "serial_online": (serial, K * E * N),
        "lanes_online": (lanes_online, K * EO * N),
        "lanes_batch": (lanes, K * EB * N),
        "order_draw": (orders, draws * N),
        "lanes_1pattern": (lanes1, K * E1),
        "rule_step_1024": (step_big, calls),
        "rule_step_64": (step_small, calls),
        "kernel_call_own_nw": (step_own, calls),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--reproduce", type=int, default=0, metavar="R",
                    help="also time reproduce_lawrence(R), serial against the lanes")
    ap.add_argument("--reproduce-repeats", type=int, default=3)
    args = ap.parse_args()
    load1 = os.getloadavg()
    print(f"fastnet {fastnet.__version__}, {platform.processor() or platform.machine()}, "
          f"lanes {LANES}, load {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    out = []
    for name, data, hidden, K, E, EO, EB, E1, kw in STUDIES:
        n_w, N, cs = contestants(name, data, hidden, K, E, EO, EB, E1, kw)
        for fn, _ in cs.values():        # warm-up
            fn()
        times = {k: [] for k in cs}
        for _ in range(args.repeats):
            for k, (fn, div) in cs.items():
                times[k].append(timed(fn) / div)
        m = {k: statistics.median(v) for k, v in times.items()}
        s, lb, l1 = m["serial_online"], m["lanes_batch"], m["lanes_1pattern"]
        # The rule step per weight and trial: the slope between 64 and 1,024 weights
        # (the call's own cost cancels).
        m["rule_step_per_weight_trial"] = ((m["rule_step_1024"] - m["rule_step_64"])
                                           / ((1024 - 64) * LANES))
        rule_nw = m["rule_step_per_weight_trial"] * n_w
        # Each trial keeps its own presentation order (drawn from its own stream,
        # as today): one permutation per trial and epoch stays in Python.
        order = m["order_draw"]
        optimistic = lb + rule_nw + order
        l1 = l1 + order
        python_call = lb + m["kernel_call_own_nw"] / LANES + order
        row = {"study": name, "n_weights": n_w, "n_patterns": N, "trials": K,
               "ns": {k: v * 1e9 for k, v in m.items()},
               "ns_online_lanes_optimistic": optimistic * 1e9,
               "ns_python_call_per_pattern": python_call * 1e9,
               "speedup_optimistic": s / optimistic, "speedup_conservative": s / l1,
               "speedup_python_call": s / python_call,
               "speedup_lanes_online": s / m["lanes_online"]}
        out.append(row)
        print(f"\n{name}: n_w {n_w}, {N} patterns, {K} trials")
        print(f"  serial online            {s * 1e9:8.1f} ns per trial-update")
        print(f"  lanes online (measured)  {m['lanes_online'] * 1e9:8.1f} ns per trial-update "
              f"(x{s / m['lanes_online']:.2f})")
        print(f"  lanes batch              {lb * 1e9:8.1f} ns per trial-pattern")
        print(f"  lanes 1-pattern epochs   {m['lanes_1pattern'] * 1e9:8.1f} ns per trial-update")
        print(f"  lanes rule step          {m['rule_step_per_weight_trial'] * 1e9:8.3f} ns per "
              f"weight-trial ({rule_nw * 1e9:.1f} ns for n_w)")
        print(f"  order draw (Python)      {order * 1e9:8.1f} ns per trial-update")
        print(f"  bare kernel call (n_w)   {m['kernel_call_own_nw'] * 1e9:8.1f} ns per call")
        print(f"  online lanes, estimate   {optimistic * 1e9:8.1f} ns (x{s / optimistic:.1f}) "
              f"optimistic, {l1 * 1e9:.1f} ns (x{s / l1:.1f}) conservative")
        print(f"  a Python call per pattern{python_call * 1e9:8.1f} ns (x{s / python_call:.2f})")
    reproduction = reproduce(args.reproduce, args.reproduce_repeats) if args.reproduce else None
    load2 = os.getloadavg()
    print(f"\nload after: {load2[0]:.2f} {load2[1]:.2f} {load2[2]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.processor() or platform.machine(), "lanes": LANES,
                       "load_before": load1, "load_after": load2, "repeats": args.repeats,
                       "studies": out, "reproduce_lawrence": reproduction}, f, indent=1)


def reproduce(runs, repeats):
    """CPU and wall seconds of reproduce_lawrence(runs), serial and in the lanes
    (alternately; medians), and the lanes' speed-up."""
    from fastnet.reproduction import reproduce_lawrence

    times = {m: {"cpu": [], "wall": []} for m in ("serial", "auto")}
    for _ in range(repeats):
        for m in times:
            c0, w0 = time.process_time(), time.perf_counter()
            reproduce_lawrence(runs, method=m)
            times[m]["cpu"].append(time.process_time() - c0)
            times[m]["wall"].append(time.perf_counter() - w0)
    med = {m: {k: statistics.median(v) for k, v in t.items()} for m, t in times.items()}
    print(f"\nreproduce_lawrence({runs}), medians of {repeats} alternating runs:")
    for m, label in (("serial", "serial"), ("auto", "lanes ")):
        print(f"  {label}  CPU {med[m]['cpu']:7.1f} s  wall {med[m]['wall']:7.1f} s")
    print(f"  speed-up  CPU x{med['serial']['cpu'] / med['auto']['cpu']:.2f}  "
          f"wall x{med['serial']['wall'] / med['auto']['wall']:.2f}")
    return {"runs": runs, "repeats": repeats, "times": times, "medians": med}


if __name__ == "__main__":
    main()
