"""Type aliases of the public API (for annotations only)."""
from __future__ import annotations

import os
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "Seed", "PathLike"]

#: What ``seed`` accepts everywhere: one integer reproduces a run bit for bit.
Seed = Union[None, int, np.random.SeedSequence, np.random.Generator]
#: A file name.
PathLike = Union[str, os.PathLike]
