"""Algorithm texts with parameter grids (``"backprop(learning_rate=[0.1, 0.5])"``): the
algorithms a grid names and how many, counted before any is made. Read by the experiments
(:class:`fastnet.experiment.Experiment`) and the timing studies (:class:`fastnet.study.Study`),
so it stands below both."""
from __future__ import annotations

import itertools
import math

__all__ = ["expand_grid", "grid_size", "MAX_GRID_CELLS"]

#: The most cells one algorithm grid of a study may have, and the most algorithms of
#: a study, all grids together (checked before any is made).
MAX_GRID_CELLS = 10_000


def expand_grid(spec):
    """The algorithms a text with parameter grids names, one per cell.

    A parameter whose value is a list is a grid axis:
    ``"backprop(learning_rate=[0.1, 0.5], momentum=[0, 0.9])"`` names four
    algorithms (the product, in the order of the lists). Tuples stay values
    (``delta0=(0.05, 0.2)``).

    Parameters
    ----------
    spec : str or Algorithm

    Returns
    -------
    list of Algorithm

    Raises
    ------
    ValueError
        As :func:`fastnet.algorithms.from_spec`, for an empty list, and for a grid of more
        than ``MAX_GRID_CELLS`` cells (counted before any cell is made).
    """
    from fastnet.algorithms import from_spec

    name, params, axes = _grid(spec)
    if not axes:
        return [from_spec(spec)]
    cells = []
    for values in itertools.product(*axes.values()):
        kw = {**params, **dict(zip(axes, values))}
        cells.append(from_spec(f"{name}({', '.join(f'{k}={v!r}' for k, v in kw.items())})"))
    return cells


def _grid(spec):
    """(name, parameters, grid axes) of an algorithm text, its grid checked and counted
    (``name`` None for an Algorithm object or a non-string, which have no grid)."""
    from fastnet.algorithms import Algorithm, parse_spec

    if isinstance(spec, Algorithm) or not isinstance(spec, str):
        return None, None, {}
    name, params = parse_spec(spec)        # (refuses what from_spec refuses, before expanding)
    axes = {k: v for k, v in params.items() if isinstance(v, list)}
    for k, v in axes.items():
        if not v:
            raise ValueError(f"`algorithm` {spec!r}: the grid of {k} is empty; give at least "
                             "one value, such as [0.1, 0.5].")
    n_cells = math.prod(len(v) for v in axes.values())
    if n_cells > MAX_GRID_CELLS:
        raise ValueError(f"`algorithm` {spec!r} is a grid of {n_cells} cells; at most "
                         f"{MAX_GRID_CELLS} (MAX_GRID_CELLS) are trained from one text.")
    return name, params, axes


def grid_size(spec):
    """How many algorithms `expand_grid` makes of ``spec``, counted without making them.

    Parameters
    ----------
    spec : str or Algorithm

    Returns
    -------
    int
        The product of the grid's list lengths (1 without lists), at most
        ``MAX_GRID_CELLS``; duplicates are counted as written.

    Raises
    ------
    ValueError
        As `expand_grid`.
    """
    return math.prod(len(v) for v in _grid(spec)[2].values())
