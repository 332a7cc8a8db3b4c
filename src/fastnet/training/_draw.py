"""How many trials of one topology draw their initial weights (and RPROP steps)
from one seed: :func:`draw_trials`."""
import math

import numpy as np

from fastnet._validation import as_generator, check_int
from fastnet.network import (DEFAULT_INIT_SCALE, DEFAULT_INIT_SCALE_LINEAR, check_init,
                             init_bounds)

__all__ = ["draw_trials"]


def draw_trials(net, n_trials, seed, init_scale=None, delta0=None, *, init="uniform"):
    """The initial weights (and RPROP steps) of ``train_rprop_many(net, ...,
    n_trials=K, seed=seed)``, drawn as it draws them.

    One generator ``rng = numpy.random.default_rng(seed)`` draws, in one call,
    all K x C weights ``rng.uniform(-init_scale, init_scale, (K, C))`` (trial i
    is row i), then, if ``delta0`` is a range (lo, hi), all initial steps
    ``rng.uniform(lo, hi, (K, C))``. ``init_scale`` None is the network's
    default range (0.5 with hidden layers, 0.01 without). Another ``init``
    draws ``rng.uniform(-b, b, (K, C))`` with b each connection's half-width
    under that rule (see :meth:`fastnet.MLP.init_weights`): row i of K = 1 is
    what ``MLP.init_weights(seed, init_scale, init=init)`` draws.

    Parameters
    ----------
    net : MLP
        The topology.
    n_trials : int
    seed : None, int, SeedSequence or Generator
    init_scale : float, optional
        The half-width (``init="uniform"``) or numerator of ±init_scale/F
        (``"fan_in"``, default 2.4); None with ``"glorot"`` and ``"he"``.
    delta0 : float or (lo, hi), optional
    init : {"uniform", "fan_in", "glorot", "he"}, default "uniform"

    Returns
    -------
    weights : ndarray of shape (K, C)
        float64 whatever ``net.dtype``: training a float32 network rounds them
        once, so one seed draws the same trials in both dtypes.
    steps : ndarray of shape (K, C) or None
        None unless ``delta0`` is a range (float64 too).

    Examples
    --------
    >>> from fastnet import MLP
    >>> from fastnet.training import draw_trials
    >>> W, _ = draw_trials(MLP(2, [2], 1), 100, seed=0)
    >>> W.shape
    (100, 11)
    >>> W, _ = draw_trials(MLP(2, [2], 1, shortcut=False), 100, seed=0, init="fan_in")
    >>> bool(abs(W).max() <= 2.4 / 2)
    True
    """
    K = check_int(n_trials, "n_trials", minimum=1)
    init, init_scale = check_init(init, init_scale)
    rng = as_generator(seed)
    if init != "uniform":
        bound = init_bounds(net, init, init_scale)
        W = np.empty((K, net.n_connections))
        rng.random(out=W)
        W *= 2.0 * bound                # rng.uniform(-b, b): low + (high - low) * u
        W -= bound
        W += 0.0                        # (-0.0 -> 0.0 where b = 0)
    else:
        if init_scale is None:
            init_scale = DEFAULT_INIT_SCALE if net.hidden else DEFAULT_INIT_SCALE_LINEAR
        W = _uniform(rng, -init_scale, init_scale, (K, net.n_connections))
    steps = None
    if isinstance(delta0, tuple):
        steps = _uniform(rng, delta0[0], delta0[1], (K, net.n_connections))
    return W, steps


def _uniform(rng, low, high, shape):
    """``rng.uniform(low, high, shape)`` bit for bit: it draws low + (high - low) * u
    with u from ``rng.random``; here u fills a new array, scaled in place (a third
    of uniform's time on XOR's 1000 x 9, which its argument handling takes)."""
    span = high - low
    if not math.isfinite(span):
        return rng.uniform(low, high, shape)        # (raises its OverflowError)
    out = np.empty(shape)
    rng.random(out=out)
    out *= span
    out += low
    return out
