"""Keep BLAS single-threaded while fastnet kernels run.

The kernels call scipy's BLAS (``scipy.linalg.cython_blas``) on many small
products. A multi-threaded OpenBLAS spends most of its time waking and spinning
threads on such shapes (measured: 10-14x more CPU time on the benchmark cases E
and G), and it would also make CPU-time measurements meaningless. fastnet runs
one training per thread instead (see ``threading`` in the README).

The limit is reference counted, so concurrent trainings in several Python threads
keep BLAS at one thread until the last of them finishes; then the previous
setting is restored exactly, whichever thread finishes last.

The setting is the library's own (``openblas_set_num_threads`` for OpenBLAS), not
threadpoolctl's ``set_num_threads``: threadpoolctl lets only one "controlling"
Python thread change OpenBLAS and silently ignores the others, so a training
started by another thread ran with BLAS at its former thread count (LM's weights
then differed from a run alone by 2.6e-7 after 60 epochs on cancer1) and a
restore from another thread was dropped (BLAS left at one thread). OpenBLAS built
with pthreads has one process-wide thread count (``openblas_set_num_threads_local``
sets it too), so while any fastnet training runs, every BLAS call of the process
runs on one thread.
"""
import threading
from contextlib import contextmanager, nullcontext

_lock = threading.Lock()
_depth = 0
_saved = []
_libraries = None


def _blas_libraries():
    # A controller lists the libraries loaded when it is made (here once, at first
    # use), so their selection is made once too.
    global _libraries
    if not _libraries:            # (none loaded yet: look again next time)
        from threadpoolctl import ThreadpoolController

        _libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    return _libraries


def _set_num_threads(lib, n):
    """Set ``lib``'s thread count from any thread (see the module's docstring)."""
    if lib.internal_api == "openblas" and getattr(lib, "threading_layer", None) != "openmp":
        setter = _openblas_symbol(lib, "openblas_set_num_threads")
        if setter is not None:
            setter(n)
            return
    lib.set_num_threads(n)


def _openblas_symbol(lib, name):
    """OpenBLAS's function ``name`` in ``lib``, whose builds rename their symbols (SciPy's
    wheels: ``scipy_openblas_set_num_threads``, ``..._set_num_threads64_``); None if
    absent."""
    for prefix in dict.fromkeys((getattr(lib, "_symbol_prefix", ""), "", "scipy_")):
        for suffix in dict.fromkeys((getattr(lib, "_symbol_suffix", ""), "", "64_")):
            try:
                return getattr(lib.dynlib, f"{prefix}{name}{suffix}")
            except AttributeError:
                continue
    return None


@contextmanager
def single_threaded_blas():
    """Context manager: every BLAS library loaded at first use runs one thread."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = [(lib, lib.num_threads) for lib in _blas_libraries()]
            for lib, n in _saved:
                if n != 1:
                    _set_num_threads(lib, 1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for lib, n in _saved:
                    if n != 1:
                        _set_num_threads(lib, n)
                _saved = []


def calls_blas(net, n_rows, blas_min):
    """Whether the training kernels may call BLAS for ``net`` on sets of at most
    ``n_rows`` patterns: only products of m*n*k >= ``blas_min`` go to BLAS, and
    every product of a layer has m*n*k = rows x units x source units."""
    if n_rows * net.n_connections < blas_min:     # (no layer has more weights than that)
        return False
    widest = max(size * (hi - lo) for _, size, lo, hi, _, _, _ in net.layer_table.tolist())
    return n_rows * widest >= blas_min


def kernels_blas(net, n_rows, blas_min):
    """`single_threaded_blas` around kernels that may call BLAS (see `calls_blas`);
    a context that does nothing where they make no BLAS call at all."""
    return single_threaded_blas() if calls_blas(net, n_rows, blas_min) else _NO_LIMIT


# (a null context can be entered any number of times, nested or from several threads)
_NO_LIMIT = nullcontext()
