"""Plain backpropagation with momentum, batch or online (Rumelhart et al. 1986; Lawrence et al. 1997): the baseline.

The public home of :func:`train_backprop`; the training itself lives in
:mod:`fastnet.training`.
"""
from fastnet.training._backprop import train_backprop

__all__ = ["train_backprop"]


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
