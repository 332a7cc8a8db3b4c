"""Each tool in its own process, taking turns (the protocol of ``peers.py``).

A jitted XLA call leaves XLA's thread pool spinning for a while after it returns: timed in
the same process, the next tool's call is charged that CPU time too (process CPU time counts
every thread) and shares the core with it. So every (peer, precision) of a case gets one
persistent worker process, pinned to the same core as the others and holding every pool to
one thread. The worker builds its peer, checks the SSE at init and runs the warm-up
(JAX compiles there); then the parent asks the workers in turn (A B C ..., A B C ...) for
one timed run each, so a slower stretch of a shared machine falls on all of them alike.
Only one worker computes at a time: the others are stopped (SIGSTOP) while one is timed, and
each turn makes one untimed call before its timed one (a worker left idle on these VMs
comes back up to 1.8x slower on its first call, its memory reclaimed while idle).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import traceback

from . import levels
from .harness import SSE_EARLY_EPOCHS, WARMUP_EPOCHS, PeerUnavailable, _timed, summarise


def peer_class(name):
    """The Peer class of a peer's name (imported on demand: each peer imports its tool)."""
    if name == "fastnet":
        from .fastnet_peer import FastnetPeer
        return FastnetPeer
    if name == "numpy":
        from .numpy_peer import NumpyPeer
        return NumpyPeer
    if name == "fann":
        from .fann import FannPeer
        return FannPeer
    if name == "torch":
        from .torch_peer import TorchPeer
        return TorchPeer
    if name == "jax":
        from .jax_peer import JaxPeer
        return JaxPeer
    if name == "ffnet":
        from .ffnet_peer import FfnetPeer
        return FfnetPeer
    raise ValueError(name)


def one_core_one_thread():
    """Pin this process to the lowest core it may use; hold every loaded pool to one thread."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass


def _serve(conn, key, activation, name, dtype, epochs, level=None):
    """A worker: build the peer, warm it up, then answer the parent's requests until "stop".
    ``level``: fastnet's CPU level, which the parent set in this process's environment
    (``levels.environment``); checked here and recorded with the results."""
    from . import cases as cases_mod

    peer = None
    try:
        case = cases_mod.load_case(key, activation)
        peer = peer_class(name)(case, dtype)
        ran = levels.verify(level) if level is not None else {}
        one_core_one_thread()            # after the peer loaded its libraries
        peer.reset()
        sse_init = peer.sse()
        peer.run(WARMUP_EPOCHS)
    except PeerUnavailable as exc:
        conn.send(("unavailable", str(exc)))
        return
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which goes on
        conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        return
    conn.send(("ready", sse_init))
    while True:
        msg = conn.recv()
        if msg == "run":
            # (an untimed call first: a worker idle while the others ran comes back with
            # its memory reclaimed by the VM, up to 1.8x slower on its next call)
            peer.reset()
            peer.run(min(epochs, WARMUP_EPOCHS))
            peer.reset()
            c, w = _timed(peer, epochs)
            conn.send((c, w, peer.sse()))
        elif msg == "early":
            peer.reset()
            peer.run(SSE_EARLY_EPOCHS)
            conn.send(peer.sse())
        elif msg == "extra":
            conn.send({**getattr(peer, "extra", {}), **ran})
        else:
            peer.close()
            return


def _pause(procs, sig):
    """Send ``sig`` (SIGSTOP, SIGCONT) to the worker processes ``procs`` (POSIX; elsewhere
    nothing)."""
    if not hasattr(signal, "SIGSTOP"):
        return
    for p in procs:
        if p.pid is not None and p.is_alive():
            os.kill(p.pid, sig)


def label(col):
    """A column's label: "numpy f64", "fastnet f32", with its level "fastnet f64 @avx2"."""
    name, dtype, *level = col
    return f"{name} {'f64' if dtype == 'float64' else 'f32'}" + levels.suffix(level[0] if level else None)


def measure_in_turns(key, activation, columns, epochs, repeats, log, verbose=False):
    """Time ``columns`` on one case, each in its own process, in turns: (peer name, dtype)
    pairs, or (peer name, dtype, level) with fastnet's CPU level (``levels.LEVELS``) in its
    worker's environment, None for a peer.

    Returns ``(results, skipped)``: one ``summarise`` record per column that ran (in the
    order of ``columns``; a fastnet column with a level records ``levels.verify``'s fields)
    and ``{column label: reason}`` for those that did not.
    """
    ctx = mp.get_context("spawn")
    workers, skipped = {}, {}
    for col in columns:
        name, dtype, *level = col
        level = level[0] if level else None
        here, there = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(there, key, activation, name, dtype, epochs, level), daemon=True)
        with levels.environment(level):   # spawn hands this environment to the worker
            proc.start()
        there.close()
        workers[col] = (proc, here)
    ready = {}
    for col, (proc, conn) in list(workers.items()):
        what = label(col)
        try:
            answer = conn.recv()
        except EOFError:
            answer = ("error", f"worker died (exit code {proc.exitcode})", "")
        if answer[0] == "ready":
            ready[col] = answer[1]
            continue
        skipped[what] = answer[1] if answer[0] == "unavailable" else f"ERROR {answer[1]}"
        log(f"   {what}: {'skipped: ' if answer[0] == 'unavailable' else 'ERROR '}{answer[1]}")
        if verbose and answer[0] == "error":
            log(answer[2])
        proc.join()
        del workers[col]
    cpu = {c: [] for c in workers}
    wall = {c: [] for c in workers}
    sse = {c: [] for c in workers}
    for _ in range(repeats):
        for col, (_proc, conn) in workers.items():      # taking turns
            others = [p for c2, (p, _) in workers.items() if c2 != col]
            _pause(others, signal.SIGSTOP)              # (nothing else runs while one is timed)
            try:
                conn.send("run")
                c, w, s = conn.recv()
            finally:
                _pause(others, signal.SIGCONT)
            cpu[col].append(c / epochs)
            wall[col].append(w / epochs)
            sse[col].append(s)
    results = []
    for col, (proc, conn) in workers.items():
        conn.send("early")
        early = conn.recv()
        conn.send("extra")
        extra = conn.recv()
        conn.send("stop")
        proc.join()
        results.append(summarise(col[0], col[1], cpu[col], wall[col], ready[col], sse[col], early, extra))
    return results, skipped
