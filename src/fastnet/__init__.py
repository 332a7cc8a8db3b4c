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
    "DataFormatError",
    "NoConvergenceWarning",
    "__version__",
]
