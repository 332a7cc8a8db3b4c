"""Online training's presentation orders, drawn in the lanes' kernel.

Online backpropagation presents the patterns of each epoch in a fresh order,
``rng.permutation(N)`` of the trial's own generator (`Backprop.kernel_args`). In
the vector lanes each lane draws its orders in the kernel, from the C interface
of its generator's bit generator (``_kernels/_orders.h``), so that no Python call
runs per trial and epoch. The numbers are NumPy's only as long as NumPy's
``permutation`` stays the shuffle ``_orders.h`` repeats: `drawn_in_kernel`
compares the two once per process, and where they differ online training stays
out of the lanes (each trial then trains alone, drawing in Python, as before).
"""
import contextlib
import functools

import numpy as np

from fastnet._kernels import _trials

__all__ = ["drawn_in_kernel", "addresses", "held", "distinct"]

#: Sizes the comparison draws for (1, 2 and 3 patterns, an odd few, a power of
#: two and one past it, and a size whose last positions take several rejections).
_SIZES = (1, 2, 3, 7, 64, 65, 1000, 40_000)


@functools.cache
def drawn_in_kernel():
    """Whether the kernels' order draw gives ``Generator.permutation``'s numbers
    (checked once per process, for the default and the legacy bit generators)."""
    for make in (np.random.PCG64, np.random.MT19937, np.random.Philox):
        ours, numpys = np.random.Generator(make(12345)), np.random.Generator(make(12345))
        for n in _SIZES:
            out = np.empty((2, n), dtype=np.int64)
            try:
                _trials.draw_orders(ours, out)
            except (AttributeError, TypeError, ValueError):   # (no C interface)
                return False
            if not (np.array_equal(out[0], numpys.permutation(n))
                    and np.array_equal(out[1], numpys.permutation(n))):
                return False
        if ours.random() != numpys.random():          # (each left where NumPy leaves it)
            return False
    return True


def addresses(generators):
    """The bit generators' C interfaces (`_trials.bitgen_address`) of ``generators``, as
    an array of ``numpy.uintp``."""
    return np.array([_trials.bitgen_address(g) for g in generators], dtype=np.uintp)


def distinct(generators):
    """Whether no two of ``generators`` share a bit generator (trials that shared
    one would draw from it in another interleaving in the lanes than one after
    another)."""
    return len({id(g.bit_generator) for g in generators}) == len(generators)


@contextlib.contextmanager
def held(generators):
    """Hold the locks of ``generators``' bit generators (distinct: see `distinct`)
    while the kernel draws from them without the GIL, as NumPy's own methods
    draw under these locks."""
    with contextlib.ExitStack() as stack:
        for g in generators:
            stack.enter_context(g.bit_generator.lock)
        yield
