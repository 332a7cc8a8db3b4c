"""Build the Cython kernels (metadata lives in pyproject.toml).

Environment switches
--------------------
FASTNET_DEBUG_KERNELS=1
    Compile with bounds and initialisation checks on (slow; for debugging).
FASTNET_CFLAGS
    Extra compiler flags appended to the portable defaults (for local experiments
    only; distributable builds keep the defaults: no -march=native, no -ffast-math).

Build time
----------
The extension modules are compiled in parallel, one per core (``build_ext``'s
``parallel``; ``-j N`` on the command line still wins), the longest first, and
without debugging information (``-g0``: Python's own flags add ``-g``, which
costs compile time and multiplies the wheel's size; FASTNET_DEBUG_KERNELS=1
keeps it). Cython's utility code is generated once, as the module
``fastnet._kernels._cyutility`` that the others import (Cython >= 3.1's shared
utility module), instead of into each module. Each module's worker translates
its ``.pyx`` first when the
``.c`` file is stale (one translation at a time: Cython's compiler keeps
global state), so Cython runs beside the compiler.
"""
import json
import os
import platform
import shlex
import threading

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("FASTNET_DEBUG_KERNELS", "0") != "0"
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "initializedcheck": DEBUG,
    "wraparound": False,
    "nonecheck": False,
    "cdivision": True,
    "embedsignature": True,
}
# Portable: -O3 without -march=native or -ffast-math (fast-math breaks isfinite
# and agreement with the NumPy reference). Functions at 64-byte and loops at
# 32-byte boundaries: the small per-row loops of _loops.h ran 16 % slower when an
# unrelated change moved them by 16 bytes (cancer1 4+2: 9.2 against 8.75 us per
# epoch, identical machine code at another address); aligned, they keep their speed.
# FASTNET_TINY_O2: the tiny-network kernels at -O2 within the -O3 build (_lanes.h says why).
CFLAGS = (["-O3", "-fno-math-errno", "-g0", "-falign-functions=64", "-falign-loops=32",
           "-DFASTNET_TINY_O2"]
          if not DEBUG else ["-O0", "-g"])
# The machine the modules are built for: the target's in a cross build (_PYTHON_HOST_PLATFORM,
# as .ci/aarch64 sets it), else this one's.
TARGET_MACHINE = os.environ.get("_PYTHON_HOST_PLATFORM", "").rpartition("-")[2] or platform.machine()
# No floating-point contraction where the CPU is not x86 (aarch64, ppc64le, s390x, ...): GCC
# there fuses a * b + c into one FMA wherever it finds one (-ffp-contract=fast), differently
# in the tiny and the generic lanes kernels, in the queue and the strips, in the loops and
# their fused helpers, which must agree bit for bit (on aarch64 under emulation, 47 kernel
# tests failed so). The x86-64 baseline has no FMA, and the v3/v4 kernels guard their
# products (_lanes.h): an aarch64 build computes what the x86-64 baseline does.
if TARGET_MACHINE.lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
    CFLAGS.append("-ffp-contract=off")
CFLAGS += shlex.split(os.environ.get("FASTNET_CFLAGS", ""))

# _simd holds the register-tiled products and the one choice among them (_simd.h)
# and finds SciPy's BLAS and LAPACK at import; the other modules call it through
# cimport. The modules and headers are listed once, in _kernels/kernels.txt, which
# CMakeLists.txt reads too.
def kernel_lists(path="src/fastnet/_kernels/kernels.txt"):
    """Return (modules, headers) of the kernel list file."""
    lists = {}
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                key, _, names = line.partition(":")
                lists[key.strip()] = names.split()
    return lists["modules"], lists["headers"]


KERNELS, HEADERS = kernel_lists()

KERNEL_DIR = "src/fastnet/_kernels"
# What a translated .c file was made with: reused only while this matches.
CYTHON_STAMP = os.path.join(KERNEL_DIR, ".cython-stamp.json")
# Cython's utility code (memoryviews, argument parsing, ...) lives once, in a module
# of its own that the kernel modules import, instead of in each of them: it was about
# 1 MB of each module's C and three quarters of a small module's compile time.
SHARED_UTILITY = "fastnet._kernels._cyutility"
SHARED_NAME = SHARED_UTILITY.rsplit(".", 1)[1]


def translation_setup():
    """The Cython version and directives the .c files must have been made with."""
    import Cython

    return {"cython": Cython.__version__, "directives": DIRECTIVES, "shared": SHARED_UTILITY}


def up_to_date(name):
    """Whether kernel `name`'s .c file is newer than its .pyx and every header.

    cythonize also compares against Cython's own .pxd files (libc/string.pxd, ...),
    which pip's isolated build environment installs afresh for every build: the
    second ``pip install`` of a tree would translate and compile everything again
    although nothing of the project changed. Its own sources decide here, with the
    Cython version and directives of the last translation (CYTHON_STAMP).
    """
    c_file = os.path.join(KERNEL_DIR, f"{name}.c")
    own = [os.path.join(KERNEL_DIR, f)
           for f in ([] if name == SHARED_NAME else [f"{name}.pyx"] + HEADERS)]
    try:
        with open(CYTHON_STAMP) as f:
            if json.load(f) != translation_setup():
                return False
        return os.path.getmtime(c_file) >= max((os.path.getmtime(f) for f in own), default=0)
    except (OSError, ValueError):
        return False


def kernel_extension(name, source):
    return Extension(
        f"fastnet._kernels.{name}",
        [source],
        include_dirs=[KERNEL_DIR],
        depends=[os.path.join(KERNEL_DIR, h) for h in HEADERS],
        extra_compile_args=CFLAGS,
    )


def kernel_extensions():
    """The extension modules, each from its .c file (translated when the build
    reaches it, if stale: `TranslatingBuildExt`)."""
    names = KERNELS[:1] + [SHARED_NAME] + KERNELS[1:]     # (longest compile first)
    return [kernel_extension(name, os.path.join(KERNEL_DIR, f"{name}.c")) for name in names]


# Cython's compiler keeps global state and build_ext's workers are threads: one
# translation at a time (the other worker meanwhile waits on its compiler process).
TRANSLATION_LOCK = threading.Lock()


def write_build_info(path="src/fastnet/_build_info.py"):
    """Record the flags of this build so that result files can report them."""
    import sysconfig

    info = {
        "extra_compile_args": CFLAGS,
        "directives": DIRECTIVES,
        "debug_kernels": DEBUG,
        "cc": sysconfig.get_config_var("CC"),
        "python_cflags": sysconfig.get_config_var("CFLAGS"),
        "machine": TARGET_MACHINE,
    }
    text = (
        '"""Build flags recorded by setup.py at build time (generated; do not edit)."""\n'
        f"BUILD_INFO = {info!r}\n"
    )
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


class TranslatingBuildExt(build_ext):
    """``build_ext`` that compiles the extension modules in parallel by default,
    each worker translating its module's stale .pyx first.

    Translating inside the worker, not before the build, overlaps Cython with
    the compiler: the longest module (_trials) starts compiling after its own
    translation instead of after all eight (8-9 s of a fresh install on two
    cores). Which modules are stale is decided once, before any is translated.
    """

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:          # no -j given: one job per core
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        self._stale = {name for name in KERNELS + [SHARED_NAME] if not up_to_date(name)}
        super().build_extensions()
        if self._stale:
            with open(CYTHON_STAMP, "w") as f:
                json.dump(translation_setup(), f)

    def build_extension(self, ext):
        name = ext.name.rsplit(".", 1)[1]
        if name in self._stale:
            # (the shared module is generated from its .c name: cythonize's own rule)
            source = ext.sources[0] if name == SHARED_NAME else os.path.join(KERNEL_DIR,
                                                                             f"{name}.pyx")
            with TRANSLATION_LOCK:
                cythonize([kernel_extension(name, source)], compiler_directives=DIRECTIVES,
                          include_path=["src"], force=True, quiet=True,
                          shared_utility_qualified_name=SHARED_UTILITY)
        super().build_extension(ext)


write_build_info()

setup(
    ext_modules=kernel_extensions(),
    cmdclass={"build_ext": TranslatingBuildExt},
)
