"""Where a result came from: the machine, the build and the compiled kernels in use.

Every result file and every :class:`~fastnet.TrainResult` set-up records these,
so that a number can be traced to the code and hardware that produced it.
"""
import functools
import hashlib
import os
import platform
from pathlib import Path

__all__ = ["machine_description", "build_flags", "kernel_fingerprint"]


@functools.lru_cache(maxsize=1)
def machine_description():
    """CPU model, core count and platform, for result files."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.machine()}"


@functools.lru_cache(maxsize=1)
def _build_flags():
    from threadpoolctl import threadpool_info

    from fastnet._kernels._forward import simd_level

    try:
        from fastnet._build_info import BUILD_INFO
        flags = dict(BUILD_INFO)
    except ImportError:  # built without setup.py (e.g. the CMake mirror)
        flags = {"extra_compile_args": "unknown"}
    # Which products ran: results differ in the last bits between the AVX-512
    # tiles, the AVX2 tiles and the loops/BLAS, and BLAS speed depends on its kernels.
    flags["vector_kernels"] = simd_level()
    flags["blas"] = [f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')})"
                     for i in threadpool_info() if i.get("user_api") == "blas"]
    return flags


def build_flags():
    """Compiler flags and Cython directives of this build, the layer products in use
    (``"avx512"``, ``"avx2"`` or ``"default"``, see ``FASTNET_SIMD``) and the BLAS
    libraries loaded (a fresh dict)."""
    return dict(_build_flags())


@functools.lru_cache(maxsize=1)
def kernel_fingerprint():
    """SHA-256 (16 hex digits) of the compiled kernel files in use.

    Runs from different builds may differ in the last bits and in speed; a result
    file records this so that a resume on another build can say so.
    """
    import fastnet._kernels as kernels

    h = hashlib.sha256()
    folder = Path(kernels.__file__).parent
    for f in sorted(folder.iterdir()):
        if f.suffix in (".so", ".pyd"):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]
