"""fastnet: fast small feed-forward networks, measured honestly.

>>> from fastnet import MLP, train_rprop
"""

from fastnet._version import __version__  # noqa: E402

from fastnet.exceptions import (  # noqa: E402
    DataFormatError, DataIntegrityWarning, DivergenceError, FileLockedError, NoConvergenceWarning,
    ResultFileError, TrainingInProgressError,
)
# Everything loads on first use (PEP 562), so that ``fastnet.datasets`` and
# ``fastnet.stats`` work without importing the compiled kernels, and the heavier
# dependencies (scipy.stats, matplotlib, pandas) load only when asked for.
_LAZY_ATTRIBUTES = {
    "MLP": "fastnet.network",
    "train": "fastnet.training",
    "train_rprop": "fastnet.training",
    "train_backprop": "fastnet.training",
    "train_rprop_many": "fastnet.training",
    "train_many": "fastnet.training",
    "Trainer": "fastnet.training",
    "TrainResult": "fastnet.training",
    "TrainResults": "fastnet.training",
    "Traversals": "fastnet.training",
    "SetErrors": "fastnet.training",
    "count_connections": "fastnet.traversal",
    "count_traversals": "fastnet.traversal",
    "value_and_grad": "fastnet.gradients",
    "jacobian": "fastnet.gradients",
}
_LAZY_MODULES = ("algorithms", "gradients", "measures", "stopping", "training", "datasets", "stats", "plots",
                 "experiment", "report", "reproduction", "sklearn", "demo", "study")


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
    import importlib

    if name in _LAZY_ATTRIBUTES:
        value = getattr(importlib.import_module(_LAZY_ATTRIBUTES[name]), name)
        globals()[name] = value   # later lookups skip this function
        return value
    if name in _LAZY_MODULES:
        return importlib.import_module(f"fastnet.{name}")
    raise AttributeError(f"module 'fastnet' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_ATTRIBUTES) | set(_LAZY_MODULES))


__all__ = [
    "MLP",
    "train",
    "train_rprop",
    "train_rprop_many",
    "train_many",
    "train_backprop",
    "Trainer",
    "TrainResult",
    "TrainResults",
    "Traversals",
    "SetErrors",
    "count_connections",
    "count_traversals",
    "value_and_grad",
    "jacobian",
    "get_include",
    "gradients",
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
    "TrainingInProgressError",
    "__version__",
]
