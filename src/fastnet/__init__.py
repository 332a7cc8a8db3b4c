"""fastnet: fast small feed-forward networks, measured honestly.

>>> from fastnet import MLP, train_rprop
"""

from fastnet._version import __version__  # noqa: E402

from fastnet.exceptions import (  # noqa: E402
    DataFormatError, DataIntegrityWarning, DivergenceError, FileLockedError, NoConvergenceWarning,
    ResultFileError,
)
from fastnet.network import MLP  # noqa: E402
from fastnet.rprop import train_rprop  # noqa: E402
from fastnet.backprop import train_backprop  # noqa: E402
from fastnet._many import train_rprop_many  # noqa: E402
from fastnet._training import TrainResult, Traversals, SetErrors  # noqa: E402
from fastnet.traversal import count_connections, count_traversals  # noqa: E402
from fastnet import measures, stopping  # noqa: E402

# Subpackages that pull in heavier dependencies load on first use
# (``fastnet.stats`` imports scipy.stats; ``fastnet.plots`` matplotlib).
_LAZY = ("datasets", "stats", "plots", "experiment", "report", "reproduction", "sklearn",
         "demo")


def get_include():
    """Directory of the C headers that fastnet's kernel declarations name.

    Pass it in ``include_dirs`` when compiling a Cython extension that cimports
    ``fastnet._kernels`` (the ``.pxd`` files themselves are found on ``sys.path``,
    as Cython finds those of any installed package), like ``numpy.get_include()``.

    Returns
    -------
    path : str
        The folder holding ``_loops.h`` (which ``_types.pxd`` declares from) and the
        kernels' ``.pxd`` files.

    Examples
    --------
    >>> import os, fastnet
    >>> os.path.isfile(os.path.join(fastnet.get_include(), "_loops.h"))
    True
    """
    import os

    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels")


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"fastnet.{name}")
    raise AttributeError(f"module 'fastnet' has no attribute {name!r}")


__all__ = [
    "MLP",
    "train_rprop",
    "train_rprop_many",
    "train_backprop",
    "TrainResult",
    "Traversals",
    "SetErrors",
    "count_connections",
    "count_traversals",
    "get_include",
    "measures",
    "stopping",
    "datasets",
    "stats",
    "DataFormatError",
    "DataIntegrityWarning",
    "DivergenceError",
    "FileLockedError",
    "ResultFileError",
    "NoConvergenceWarning",
    "__version__",
]
