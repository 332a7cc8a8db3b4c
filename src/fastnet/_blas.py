"""Keep BLAS single-threaded while fastnet kernels run.

The kernels call scipy's BLAS (``scipy.linalg.cython_blas``) on many small
products. A multi-threaded OpenBLAS spends most of its time waking and spinning
threads on such shapes (measured: 10-14x more CPU time on the benchmark cases E
and G), and it would also make CPU-time measurements meaningless. fastnet runs
one training per thread instead (see ``threading`` in the README).

The limit is reference counted, so concurrent trainings in several Python threads
keep BLAS at one thread until the last of them finishes; then the previous
setting is restored.
"""
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_saved = []
_libraries = None


def _blas_libraries():
    # A controller lists the libraries loaded when it is made (here once, at first
    # use), so their selection is made once too.
    global _libraries
    if _libraries is None:
        from threadpoolctl import ThreadpoolController

        _libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    return _libraries


@contextmanager
def single_threaded_blas():
    """Context manager: every BLAS library loaded at first use runs one thread."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = [(lib, lib.num_threads) for lib in _blas_libraries()]
            for lib, n in _saved:
                if n != 1:
                    lib.set_num_threads(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for lib, n in _saved:
                    if n != 1:
                        lib.set_num_threads(n)
                _saved = []
