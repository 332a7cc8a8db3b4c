"""The distributions of a search space, kept here under their old path: they live in
:mod:`fastnet._distributions`, low enough for :func:`fastnet.algorithms.parse_spec` to
read them without importing the suite."""
from fastnet._distributions import (  # noqa: F401
    DISTRIBUTIONS, MAX_INT_BOUND, Choice, IntLogUniform, IntUniform, LogUniform, Uniform,
    make_distribution,
)

__all__ = ["Uniform", "LogUniform", "IntUniform", "IntLogUniform", "Choice", "DISTRIBUTIONS",
           "make_distribution"]
