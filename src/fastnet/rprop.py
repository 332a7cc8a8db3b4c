"""Epoch-batched RPROP training (Riedmiller & Braun 1993) and Proben1's set-ups (Prechelt 1994).

The public home of :func:`train_rprop`, the RPROP variants and Proben1's
presets; the training itself lives in :mod:`fastnet.training`.
"""
from fastnet.training._algorithms import VARIANTS
from fastnet.training._plans import PRESETS, proben1_stopping
from fastnet.training._rprop import train_rprop

__all__ = ["train_rprop", "VARIANTS", "PRESETS", "proben1_stopping"]


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
