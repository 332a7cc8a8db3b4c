#!/usr/bin/env python
"""Every hidden activation against the peers, per epoch, measured in alternation.

The peers of benchmarks/peers.py (fastnet, NumPy, JAX jit, PyTorch; FANN where it has
the units) train the same network from the same initial weights with full-batch iRPROP-
and the same hidden units (x/(1+|x|) "proben1", tanh, logistic, relu; linear outputs),
float64, one core. Unlike peers.py, which times each peer's repeats one after the other,
the peers here take turns: round r runs every peer once (A B C D, A B C D, ...), so a
slower or faster stretch of a shared machine falls on all of them alike. Reported: the
median over the rounds of CPU time per epoch, and fastnet's ratio to the fastest other
peer (best peer time / fastnet time: > 1 means fastnet is faster), as the ratio of the
medians and [paired] as the median of each round's ratio (the two timed next to each
other: steadier when the machine's speed drifts).

    pip install ".[bench]"                        # jax, torch
    python benchmarks/activations.py              # cases S and A, every activation
    python benchmarks/activations.py --cases A,B,C,D,E,F,G,S --activation tanh --rounds 5

Case S is synthetic 4096 x 32-32-4 (one hidden layer of 32) without shortcuts; A-G are peers.py's cases (A:
cancer1 4+2 with shortcuts).
"""
from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _peers import cases as cases_mod  # noqa: E402
from _peers import machine  # noqa: E402
from _peers.harness import WARMUP_EPOCHS, PeerUnavailable, _timed  # noqa: E402
from overhead import one_core_one_thread  # noqa: E402
from peers import peer_class  # noqa: E402

PEERS = ("fastnet", "numpy", "jax", "torch", "fann")


def run_case(key, activation, names, epochs, rounds, log):
    case = cases_mod.load_case(key, activation)
    peers, skipped = [], {}
    for name in names:
        try:
            peer = peer_class(name)(case, "float64")
            peer.reset()
            peer.run(WARMUP_EPOCHS)         # JAX compiles here
            peers.append(peer)
        except PeerUnavailable as exc:
            skipped[name] = str(exc)
    times = {p.name: [] for p in peers}
    sse = {}
    for _ in range(rounds):
        for peer in peers:
            peer.reset()
            cpu, _wall = _timed(peer, epochs)
            times[peer.name].append(cpu / epochs)
            sse[peer.name] = peer.sse()
    for peer in peers:
        peer.close()
    med = {n: statistics.median(t) for n, t in times.items()}
    others = {n: t for n, t in med.items() if n != "fastnet"}
    best = min(others, key=others.get) if others else None
    ratio = others[best] / med["fastnet"] if best and "fastnet" in med else None
    # the same ratio round by round (the two timed next to each other), then its
    # median: steadier than the ratio of medians when the machine's speed drifts
    paired = (statistics.median(b / f for b, f in zip(times[best], times["fastnet"]))
              if ratio else None)
    row = {"case": key, "activation": activation, "label": case.spec.label,
           "ms_per_epoch": {n: 1e3 * t for n, t in med.items()},
           "rounds_ms": {n: [1e3 * v for v in t] for n, t in times.items()},
           "sse_final": sse, "best_peer": best, "fastnet_vs_best": ratio,
           "fastnet_vs_best_paired": paired, "skipped": skipped}
    cells = "  ".join(f"{n} {1e3 * t:8.4f}" for n, t in med.items())
    log(f"{case.spec.label:<28} {cells}   fastnet x best ({best}) "
        + (f"{ratio:.2f} [paired {paired:.2f}]" if ratio else "-"))
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="S,A")
    p.add_argument("--activation", default=",".join(cases_mod.HIDDEN_ACTIVATIONS))
    p.add_argument("--peers", default=",".join(PEERS))
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--json", default=None, metavar="PATH")
    args = p.parse_args(argv)
    keys = [k.strip().upper() for k in args.cases.split(",") if k.strip()]
    acts = [a.strip() for a in args.activation.split(",") if a.strip()]
    names = [n.strip() for n in args.peers.split(",") if n.strip()]
    for k in keys:
        if k not in cases_mod.CASES:
            raise SystemExit(f"`--cases`: unknown {k}; valid: {', '.join(cases_mod.CASES)}")
    for a in acts:
        if a not in cases_mod.HIDDEN_ACTIVATIONS:
            raise SystemExit(f"`--activation`: unknown {a}; valid: "
                             + ", ".join(cases_mod.HIDDEN_ACTIVATIONS))
    one_core_one_thread()
    desc = machine.describe({})
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"machine: {desc['cpu_model']}; load {load}; {args.rounds} alternating rounds of "
          f"{args.epochs} epochs; median CPU ms per epoch, float64, one core")
    rows = [run_case(k, a, names, args.epochs, args.rounds, print) for k in keys for a in acts]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": desc, "load_before": load, "epochs": args.epochs,
                       "rounds": args.rounds, "rows": rows}, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
