"""Exact connection-traversal counts (Prechelt 1994, section 3.3)."""
from __future__ import annotations

from collections.abc import Sequence

from fastnet._validation import check_choice, check_int

__all__ = ["count_connections", "count_traversals"]


def count_connections(layer_sizes: Sequence[int], *, shortcut: bool = False) -> int:
    """Connections C of a fully connected feed-forward net, biases included.

    Parameters
    ----------
    layer_sizes : sequence of int
        Units per layer, inputs first, bias excluded, e.g. ``(8, 4, 2)``.
    shortcut : bool, default=False
        Every layer feeds every later layer.

    Examples
    --------
    >>> count_connections((2, 3, 4))            # (2+1)*3 + (3+1)*4
    25
    >>> count_connections((9, 4, 2, 2), shortcut=True)   # Proben1 cancer "4+2"
    100
    """
    sizes = [check_int(s, "layer_sizes", minimum=1) for s in layer_sizes]
    if len(sizes) < 2:
        raise ValueError(f"`layer_sizes` needs at least inputs and outputs, got {layer_sizes!r}.")
    total = 0
    for j in range(1, len(sizes)):
        fan_in = sum(sizes[:j]) if shortcut else sizes[j - 1]
        total += sizes[j] * (fan_in + 1)
    return total


def count_traversals(layer_sizes: Sequence[int], n_patterns: int, *, phase: str = "epoch",
                     shortcut: bool = False) -> int:
    """Count connection traversals of a fully connected MLP with bias units.

    Parameters
    ----------
    layer_sizes : sequence of int
        Units per layer, input first, bias excluded, e.g. ``(8, 4, 2)``.
    n_patterns : int
    phase : {"forward", "backward", "update", "epoch"}, default="epoch"
        forward and backward cost N·C each, the batch weight update C, and an
        epoch 2·N·C + C.
    shortcut : bool, default=False

    Examples
    --------
    >>> count_traversals((2, 3, 4), 1, phase="forward")   # (2+1)*3 + (3+1)*4
    25
    >>> count_traversals((2, 3, 4), 10)                    # 2*10*25 + 25
    525
    """
    C = count_connections(layer_sizes, shortcut=shortcut)
    n = check_int(n_patterns, "n_patterns", minimum=0)
    phase = check_choice(phase, "phase", {"forward", "backward", "update", "epoch"})
    return {"forward": n * C, "backward": n * C, "update": C, "epoch": 2 * n * C + C}[phase]


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
