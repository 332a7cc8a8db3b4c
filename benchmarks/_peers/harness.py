"""The timing protocol of the peer comparison, shared by every peer.

Per peer and case: one warm-up (5 epochs), then ``repeats`` runs, each restarting from the
fixed initial weights with fresh optimiser state. Only ``peer.run(epochs)`` is timed, with
``time.process_time`` (the main figure: fastnet reports CPU time) and ``time.perf_counter``.
Reported: the median over the repeats of (loop time / epochs).
"""

from __future__ import annotations

import gc
import statistics
import time

WARMUP_EPOCHS = 5
SSE_EARLY_EPOCHS = 20  # the second SSE check point (SSE after 20 epochs)


class PeerUnavailable(Exception):
    """A peer that cannot run here (not installed, refuses the dtype, ...)."""


class Peer:
    """Interface of a peer (one implementation, one precision, one case)."""

    name = "?"      # "numpy", "fann", "torch", "fastnet"
    dtype = "float64"

    def reset(self):
        """Load the fixed initial weights and fresh optimiser state."""
        raise NotImplementedError

    def run(self, epochs):
        """The timed loop: ``epochs`` full-batch iRPROP- epochs."""
        raise NotImplementedError

    def sse(self):
        """Training-set SSE of the current weights (peer's own forward pass, summed in float64)."""
        raise NotImplementedError

    def close(self):
        pass

    @property
    def column(self):
        return f"{self.name} {'f64' if self.dtype == 'float64' else 'f32'}"


def _timed(peer, epochs):
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # as timeit does: no collector pauses inside the measured loop
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        peer.run(epochs)
        c1, w1 = time.process_time(), time.perf_counter()
    finally:
        if gc_was_enabled:
            gc.enable()
    return c1 - c0, w1 - w0


def measure(peer, epochs, repeats):
    """Run the protocol on one peer in this process; return a dict of plain numbers (JSON-ready)."""
    peer.reset()
    sse_init = peer.sse()
    peer.run(WARMUP_EPOCHS)
    cpu, wall, sse_final = [], [], []
    for _ in range(repeats):
        peer.reset()
        c, w = _timed(peer, epochs)
        cpu.append(c / epochs)
        wall.append(w / epochs)
        sse_final.append(peer.sse())
    peer.reset()
    peer.run(SSE_EARLY_EPOCHS)
    sse_early = peer.sse()
    return summarise(peer.name, peer.dtype, cpu, wall, sse_init, sse_final, sse_early,
                     getattr(peer, "extra", {}))


def summarise(name, dtype, cpu, wall, sse_init, sse_final, sse_early, extra):
    """The result record of one peer: per-repeat CPU and wall seconds per epoch, medians, SSEs."""
    return {
        "peer": name,
        "dtype": dtype,
        "cpu_s_per_epoch": statistics.median(cpu),
        "wall_s_per_epoch": statistics.median(wall),
        "cpu_s_per_epoch_repeats": cpu,
        "wall_s_per_epoch_repeats": wall,
        "spread_cpu": (max(cpu) - min(cpu)) / statistics.median(cpu) if min(cpu) > 0 else None,
        "sse_init": sse_init,
        "sse_early": sse_early,
        "sse_early_epochs": SSE_EARLY_EPOCHS,
        "sse_final": sse_final[-1],
        "sse_final_repeats": sse_final,
        **extra,
    }
