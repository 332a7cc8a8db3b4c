"""Machine description and the single-core matmul peak measured in the same run."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit(path):
    """Short commit of the work tree at `path`, with "+dirty" if it has changes; None without git."""
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def blas_info():
    """threadpoolctl's view of the BLAS/OpenMP pools (empty list if not installed)."""
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415
    except ImportError:
        return []
    keep = ("user_api", "internal_api", "version", "num_threads", "architecture", "threading_layer", "filepath")
    return [{k: d.get(k) for k in keep} for d in threadpool_info()]


def describe(extra=None):
    d = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "env": {k: os.environ.get(k) for k in THREAD_VARS + ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")},
        "blas": blas_info(),
    }
    try:
        load = os.getloadavg()
        d["loadavg_at_start"] = [round(x, 2) for x in load]
    except OSError:
        pass
    d.update(extra or {})
    return d


def matmul_peak(dtype, n=2048, repeats=5):
    """Best-of-`repeats` FLOP/s of an n x n numpy matmul (2 n^3 FLOP), CPU time and wall.

    Returns ``{"flops_cpu": ..., "flops_wall": ...}``; single-threaded when the BLAS pool
    is limited to one thread (as ``peers.py`` does before importing numpy).
    """
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    c = np.empty((n, n), dtype)
    np.matmul(a, b, out=c)  # warm-up
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        np.matmul(a, b, out=c)
        c1, w1 = time.process_time(), time.perf_counter()
        best_cpu, best_wall = min(best_cpu, c1 - c0), min(best_wall, w1 - w0)
    flop = 2.0 * n ** 3
    return {"n": n, "repeats": repeats, "flops_cpu": flop / best_cpu, "flops_wall": flop / best_wall}
