"""The CPU levels fastnet runs at in a benchmark (``--levels default,avx2,none``).

fastnet's kernels run at one of three levels on x86-64: AVX-512 (x86-64-v4), AVX2
(x86-64-v3) or portable. The CPU decides; ``FASTNET_SIMD=avx2`` or ``FASTNET_SIMD=none``
in a process's environment caps it, decided once per process (src/fastnet/_kernels/_cpu.h).
So a benchmark that compares levels runs one fastnet worker per level, each started with
its own ``FASTNET_SIMD``; the peers keep theirs. The levels:

* ``default``: ``FASTNET_SIMD`` unset, the CPU's best (what a user gets);
* ``avx512``: the same environment, asking for AVX-512: the heading says so where the CPU
  lacks it;
* ``avx2``: ``FASTNET_SIMD=avx2``;
* ``none``: ``FASTNET_SIMD=none``, the portable kernels.

A level the CPU lacks runs at the best it has, and the heading says so. Each worker checks
that its level took effect (``verify``): the level its kernels run, as
``fastnet._kernels._simd.simd_level`` reports it, is recorded with every row.

Used by ``peers.py``, ``many_trials.py`` and ``study_peers.py``: ``add_argument`` and
``parse`` for the option, ``environment`` around the start of a fastnet worker, ``verify`` in the
worker, ``heading`` above each level's table.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys

from .machine import cpu_model

LEVELS = ("default", "avx512", "avx2", "none")
VAR = "FASTNET_SIMD"
#: The value of FASTNET_SIMD that each level sets (None: unset).
ENV = {"default": None, "avx512": None, "avx2": "avx2", "none": "none"}
#: The kernels that can run, lowest first, by the names simd_level() uses ("default" there
#: is the portable loops and BLAS: called "none" here, as FASTNET_SIMD calls it).
KERNELS = ("none", "avx2", "avx512")
NAME = {"none": "portable", "avx2": "AVX2", "avx512": "AVX-512"}
#: "ran ..." in a heading.
RAN = {"none": "ran portable", "avx2": "ran at AVX2", "avx512": "ran at AVX-512"}
#: The level each asks for (default: the best there is).
ASKS = {"default": "avx512", "avx512": "avx512", "avx2": "avx2", "none": "none"}
#: What libgcc's x86-64-v4 and x86-64-v3 checks need of /proc/cpuinfo's flags (those of them
#: it shows); the kernels take their level from those checks.
FLAGS = {"avx512": ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
         "avx2": ("avx2", "fma", "bmi1", "bmi2")}


@functools.lru_cache(maxsize=1)
def cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none, or not x86)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_best():
    """The highest level this CPU has: "avx512", "avx2" or "none"."""
    flags = cpu_flags()
    for kernels in ("avx512", "avx2"):
        if all(f in flags for f in FLAGS[kernels]):
            return kernels
    return "none"


def cpu_has():
    """What the CPU supports, in words: "AVX-512 and AVX2", "AVX2 only" or "neither ..."."""
    machine = platform.machine()
    x86 = machine.lower() in ("x86_64", "amd64")
    return {"avx512": "AVX-512 and AVX2", "avx2": "AVX2 only",
            "none": "neither AVX-512 nor AVX2" + ("" if x86 else f" (an {machine} CPU)")}[cpu_best()]


def expected(level):
    """The kernels a level runs on this CPU: what it asks for, or the best the CPU has."""
    return min(ASKS[level], cpu_best(), key=KERNELS.index)


def default_text():
    """``--levels``'s default: ``default``, or the level FASTNET_SIMD sets in this environment
    (so that ``FASTNET_SIMD=avx2 python benchmarks/peers.py`` runs as before)."""
    value = os.environ.get(VAR)
    return value if value in ("avx2", "none") else "default"


def add_argument(parser):
    parser.add_argument(
        "--levels", default=default_text(), type=parse,
        help="comma list of the CPU levels fastnet runs at, one table each: default (FASTNET_SIMD "
        "unset: the CPU's best), avx512, avx2 (FASTNET_SIMD=avx2), none (FASTNET_SIMD=none: "
        f"portable). One fastnet worker per level, every other tool once. Default: {default_text()} "
        f"(this CPU has {cpu_has()})")


def parse(text):
    """The levels of ``--levels`` ("default,avx2,none"), in order, each once."""
    import argparse

    items = [t.strip().lower() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in LEVELS]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"unknown level {', '.join(bad) or '(none given)'}; "
                                         f"valid: {', '.join(LEVELS)}")
    return list(dict.fromkeys(items))


def suffix(level):
    """What a worker's label gets for its level: " @avx2" (nothing for a peer's, level None)."""
    return f" @{level}" if level else ""


def own(by_label, level):
    """The entries of ``{label: ...}`` (every level's workers and the peers') that belong to
    ``level``'s table, with the level taken off the label: "fastnet f64 @avx2" -> "fastnet f64"."""
    mine = suffix(level)
    return {k.removesuffix(mine): v for k, v in by_label.items() if " @" not in k or k.endswith(mine)}


def _put(value):
    """FASTNET_SIMD=value in this process's environment (None: unset)."""
    os.environ.pop(VAR, None)
    if value is not None:
        os.environ[VAR] = value


@contextlib.contextmanager
def environment(level):
    """This process's environment with FASTNET_SIMD as ``level`` sets it, for the worker
    started inside (``multiprocessing``'s spawn, like ``subprocess``, hands the environment
    on at the start); restored after. ``level`` None (a peer's worker) leaves it as it is."""
    if level is None:
        yield
        return
    before = os.environ.get(VAR)
    _put(ENV[level])
    try:
        yield
    finally:
        _put(before)


def set_here(level):
    """Run fastnet at ``level`` in this process (``--inline``): only before fastnet is imported."""
    if "fastnet._kernels._simd" in sys.modules and os.environ.get(VAR) != ENV[level]:
        raise RuntimeError(f"fastnet was imported before its level ({level}) was set")
    _put(ENV[level])


def running():
    """(the kernels this process runs, the highest this build has), by simd_level()'s names
    mapped to "avx512", "avx2", "none"."""
    from fastnet._kernels._simd import simd_compiled, simd_level  # noqa: PLC0415

    def name(k):
        return k if k in KERNELS else "none"
    return name(simd_level()), name(simd_compiled())


def verify(level):
    """In a fastnet worker, after fastnet is imported: check that ``level`` took effect and
    return the record kept with every row of that worker. Raises RuntimeError where the
    kernels run another level than the environment asks for (fastnet imported before
    FASTNET_SIMD was set, or a kernel that ignores it)."""
    ran, build = running()
    want = min(expected(level), build, key=KERNELS.index)
    env = os.environ.get(VAR)
    if env != ENV[level] or ran != want:
        raise RuntimeError(f"level {level}: FASTNET_SIMD={env}, expected {NAME[want]} kernels, "
                           f"fastnet runs {NAME[ran]}")
    return {"level": level, "fastnet_simd_env": env, "fastnet_kernels_ran": ran,
            "fastnet_kernels_built": build, "cpu_best": cpu_best()}


def heading(level, ran=None, build=None):
    """The heading of a level's table: the CPU, the level, what the CPU supports and the
    kernels that ran (``ran``: from ``verify``'s record; None: fastnet did not run)."""
    env = f"{VAR}={ENV[level]}" if ENV[level] else f"{VAR} unset" + (", the CPU's best" if level == "default" else "")
    head = f"{cpu_model()} — fastnet level {level} ({env})"
    if ran is None:
        return f"{head}: this CPU has {cpu_has()}; fastnet not measured"
    asked, best = ASKS[level], cpu_best()
    if level == "default":
        what = f"this CPU has {cpu_has()}, {RAN[ran]}"
    elif KERNELS.index(asked) > KERNELS.index(best):
        what = f"{NAME[asked]} requested: this CPU has {cpu_has()}, {RAN[ran]}"
    else:
        what = f"{RAN[ran]} (this CPU has {cpu_has()})"
    if ran != expected(level):
        what += f"; this build's kernels go up to {NAME[build] if build else '?'}"
    return f"{head}: {what}"


def table_heading(rows, level):
    """``heading`` for the rows of one level's table (``verify``'s record in their fields; every
    worker of a level runs the same kernels, as ``verify`` checks)."""
    mine = next((r for r in rows if r.get("fastnet_kernels_ran")), {})
    return heading(level, mine.get("fastnet_kernels_ran"), mine.get("fastnet_kernels_built"))
