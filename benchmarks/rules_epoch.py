#!/usr/bin/env python
"""Cost of one epoch of Quickprop and Adam against RPROP in fastnet, and against FANN's Quickprop.

Quickprop (Fahlman 1988) and full-batch Adam (Kingma & Ba 2015) do what RPROP does per
epoch -- one forward and one backward pass over the training set, then one update of
every weight -- so their epochs should cost about as much: the bar is at most 1.15 times
RPROP's per epoch. Cases A (cancer1 4+2, shortcuts), C (thyroid1 16+8, shortcuts) and G
(synthetic 128-64-32-10) of benchmarks/peers.py, from its fixed initial weights.

fastnet's rules run through ``fastnet.train`` (no validation set: one kernel call of
all the epochs); the time is the loop's process CPU time (``TrainResult.cpu_time``).
FANN 2.2's ``FANN_TRAIN_QUICKPROP`` runs through its C API (``fann_train_epoch``, as
peers.py runs its RPROP) with FANN's default settings, and fastnet's Quickprop with what
they are on paper in fastnet's terms: FANN's slope is that of half the summed squared
error and its epsilon is ``learning_rate / N``, so learning rate 0.7 and decay -1e-4
are ``epsilon = 0.35 / N``, ``decay = 2e-4``, ``threshold = 0.001`` (FANN also clips
the weights to +-1500 and keeps epsilon in single precision). Their errors are not
compared: FANN's gradient on these networks is not fastnet's (its plain batch
backpropagation already ends the first epoch of case A at another error); the
work per epoch is the same.

Every rule runs alternately (RPROP, Quickprop, Adam, FANN, RPROP, ...), each run from the
same initial weights; medians over the repeats; the load average is printed, the machine
may be shared.

    python benchmarks/rules_epoch.py                      # cases A, C, G; 7 repeats
    python benchmarks/rules_epoch.py --cases A --repeats 3 --seconds 0.1
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import ctypes  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peers import cases as cases_mod  # noqa: E402
from _peers.fastnet_peer import import_fastnet  # noqa: E402
from _peers.harness import PeerUnavailable  # noqa: E402

#: RPROP as peers.py runs it (iRPROP-, FANN's defaults).
RPROP_ARGS = dict(variant="irprop-", **cases_mod.RPROP)
#: FANN's Quickprop defaults: learning rate (divided by N inside FANN), decay, mu, and
#: the previous-step threshold fixed in its code.
FANN_LEARNING_RATE, FANN_DECAY, FANN_MU, FANN_THRESHOLD = 0.7, -1e-4, 1.75, 0.001
FANN_TRAIN_QUICKPROP = 3        # enum fann_train_enum
#: Bar: a Quickprop or Adam epoch costs at most this many RPROP epochs.
BAR = 1.15


def quickprop_as_fann(fn, n):
    """fastnet's Quickprop with FANN's default settings (see the module docstring)."""
    return fn.algorithms.Quickprop(epsilon=FANN_LEARNING_RATE / (2 * n), mu=FANN_MU,
                                   decay=-2 * FANN_DECAY, threshold=FANN_THRESHOLD)


class FastnetRule:
    def __init__(self, fn, case, name, algorithm):
        self.fn, self.case, self.name, self.algorithm = fn, case, name, algorithm
        self.net = fn.MLP(case.sizes[0], tuple(case.spec.hidden), case.sizes[-1],
                          shortcut=case.shortcut, hidden_activation="proben1",
                          output_activation="linear")

    def run(self, epochs):
        """(CPU seconds of the epochs, SSE after them)."""
        self.net.set_params(*self.case.init_copy())
        r = self.fn.train(self.net, self.case.X, self.case.T, algorithm=self.algorithm,
                          max_epochs=epochs)
        d = self.net.predict(self.case.X) - self.case.T
        return r.cpu_time, float((d * d).sum())


class FannQuickprop:
    name = "FANN quickprop"

    def __init__(self, case):
        from _peers.fann import FannPeer, _load

        lib = _load("float64")[0]
        for fname, args in (("fann_set_learning_rate", [ctypes.c_void_p, ctypes.c_float]),
                            ("fann_set_quickprop_decay", [ctypes.c_void_p, ctypes.c_float]),
                            ("fann_set_quickprop_mu", [ctypes.c_void_p, ctypes.c_float])):
            getattr(lib, fname).argtypes, getattr(lib, fname).restype = args, None
        self.peer = FannPeer(case, "float64")
        ann = self.peer.template
        lib.fann_set_training_algorithm(ann, FANN_TRAIN_QUICKPROP)
        lib.fann_set_learning_rate(ann, FANN_LEARNING_RATE)
        lib.fann_set_quickprop_decay(ann, FANN_DECAY)
        lib.fann_set_quickprop_mu(ann, FANN_MU)

    def run(self, epochs):
        self.peer.reset()
        t0 = time.process_time()
        self.peer.run(epochs)
        return time.process_time() - t0, self.peer.sse()



def rules_of(fn, case, with_fann):
    n = case.n_patterns
    rules = [FastnetRule(fn, case, "RPROP", fn.algorithms.RPROP(**RPROP_ARGS)),
             FastnetRule(fn, case, "Quickprop", quickprop_as_fann(fn, n)),
             FastnetRule(fn, case, "Adam", fn.algorithms.Adam())]
    if with_fann:
        try:
            rules.append(FannQuickprop(case))
        except PeerUnavailable as exc:
            print(f"   (FANN unavailable: {exc})")
    return rules


def run_case(fn, key, repeats, seconds, with_fann):
    case = cases_mod.load_case(key)
    rules = rules_of(fn, case, with_fann)
    t, _ = rules[0].run(20)
    epochs = max(20, int(seconds / max(t / 20, 1e-7)))
    print(f"\n== {case.spec.label}: N={case.n_patterns} C={case.n_connections}; "
          f"{epochs} epochs per run, {repeats} repeats, load {os.getloadavg()[0]:.2f}")
    times = {r.name: [] for r in rules}
    last = {}
    for _ in range(repeats):
        for r in rules:
            cpu, sse = r.run(epochs)
            times[r.name].append(cpu / epochs)
            last[r.name] = sse
    med = {name: statistics.median(v) for name, v in times.items()}
    base = med["RPROP"]
    for name, m in med.items():
        spread = f"{min(times[name]) * 1e6:.1f}-{max(times[name]) * 1e6:.1f}"
        print(f"   {name:15s} {m * 1e6:9.2f} us/epoch (range {spread})  "
              f"x RPROP {m / base:5.3f}   SSE after the last run {last[name]:.6g}")
    ratios = {"Quickprop": med["Quickprop"] / base, "Adam": med["Adam"] / base}
    if "FANN quickprop" in med:
        ratios["FANN/fastnet quickprop"] = med["FANN quickprop"] / med["Quickprop"]
    return ratios


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="A,C,G")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3, help="CPU seconds per run (about)")
    ap.add_argument("--no-fann", action="store_true")
    args = ap.parse_args(argv)
    fn = import_fastnet()
    import fastnet.algorithms  # noqa: F401  (fn.algorithms)

    print(f"fastnet {fn.__version__}; load average {os.getloadavg()}")
    summary = {}
    for key in args.cases.split(","):
        summary[key] = run_case(fn, key.strip(), args.repeats, args.seconds, not args.no_fann)
    print("\nSummary (medians):")
    for key, ratios in summary.items():
        bars = [f"{name} {v:.3f}x RPROP ({'ok' if v <= BAR else 'OVER'} <= {BAR})"
                for name, v in ratios.items() if name in ("Quickprop", "Adam")]
        fann = ratios.get("FANN/fastnet quickprop")
        extra = f"; FANN quickprop / fastnet quickprop {fann:.2f}x" if fann else ""
        print(f"   case {key}: {', '.join(bars)}{extra}")


if __name__ == "__main__":
    main()
