"""fastnet: fast small feed-forward networks, measured honestly.

>>> from fastnet import MLP, train_rprop
"""

__version__ = "0.1.0"

from fastnet.exceptions import DataFormatError, NoConvergenceWarning  # noqa: E402
from fastnet.network import MLP  # noqa: E402
from fastnet.rprop import train_rprop  # noqa: E402
from fastnet.backprop import train_backprop  # noqa: E402
from fastnet._training import TrainResult, Traversals, SetErrors  # noqa: E402
from fastnet.traversal import count_connections, count_traversals  # noqa: E402
from fastnet import measures, stopping  # noqa: E402

# Subpackages that pull in heavier dependencies load on first use
# (``fastnet.stats`` imports scipy.stats; ``fastnet.plots`` matplotlib).
_LAZY = ("datasets", "stats", "plots", "experiment", "report", "sklearn")


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"fastnet.{name}")
    raise AttributeError(f"module 'fastnet' has no attribute {name!r}")


__all__ = [
    "MLP",
    "train_rprop",
    "train_backprop",
    "TrainResult",
    "Traversals",
    "SetErrors",
    "count_connections",
    "count_traversals",
    "measures",
    "stopping",
    "datasets",
    "stats",
    "DataFormatError",
    "NoConvergenceWarning",
    "__version__",
]
