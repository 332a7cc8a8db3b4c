"""How a network's initial weights are drawn: the schemes, their default ranges, and each
weight's half-width under a scheme (``fastnet.network`` re-exports the public names)."""
import numpy as np

from fastnet._validation import check_choice, check_float

#: Half-widths of the initial weight range when none is given: Proben1's
#: (Prechelt 1994) for multilayer and for linear networks.
DEFAULT_INIT_SCALE = 0.5
DEFAULT_INIT_SCALE_LINEAR = 0.01

#: Largest half-width of initial weights accepted. Inputs of the Proben1 kind
#: lie in about [-1, 1]; a weighted sum of a thousand inputs with weights of
#: 1e100 is still far from overflowing float64 (1.8e308) when squared in the
#: error (1e206), while init_scale=1e200 gave NaN outputs. Networks that need
#: larger weights than this are not trainable in float64 anyway.
MAX_INIT_SCALE = 1e100

#: The rules that draw initial weights (``init=`` of :class:`MLP`,
#: :meth:`MLP.init_weights` and :func:`fastnet.train_many`); see
#: :meth:`MLP.init_weights`.
INIT_SCHEMES = ("uniform", "fan_in", "glorot", "he")

#: ``init_scale`` of ``init="fan_in"`` when none is given: the 2.4 of Haykin
#: (1994) that Lawrence et al. (1997) use, each unit's weights in +-2.4/F.
DEFAULT_FAN_IN_SCALE = 2.4


def check_init(init, init_scale, scale_name="init_scale"):
    """``(init, init_scale)`` checked: ``init`` one of INIT_SCHEMES and the scale
    a half-width (uniform), a numerator (fan_in) or None (glorot, he; refused)."""
    check_choice(init, "init", INIT_SCHEMES)
    if init in ("glorot", "he"):
        if init_scale is not None:
            raise ValueError(
                f"`{scale_name}` must be None with init={init!r}, which sets each layer's range "
                f"from its fan-in{' and fan-out' if init == 'glorot' else ''} alone "
                f"({'Glorot & Bengio 2010' if init == 'glorot' else 'He et al. 2015'}), got "
                f"{scale_name}={init_scale!r}. Use "
                "init='fan_in' for ranges init_scale/F, or init='uniform'.")
        return init, None
    if init_scale is not None:
        init_scale = check_float(init_scale, scale_name, low=0.0, high=MAX_INIT_SCALE) + 0.0
    return init, init_scale


def draw(w, rng, scale, bound):
    """Draw the weights ``w`` in place from ``rng``: uniform in [-scale, scale] (default
    0.5) if ``bound`` is None, else each in [-bound_i, bound_i]; drawn in float64 and
    rounded to ``w``'s dtype (one seed: the same weights in both dtypes, rounded)."""
    if bound is None:
        scale = 0.5 if scale is None else scale
        drawn = rng.uniform(-scale, scale, size=w.shape[0])
    else:
        drawn = rng.uniform(-bound, bound)
        drawn += 0.0                                  # (-0.0 -> 0.0 where b = 0)
    if w.dtype != np.float64 and not (np.abs(drawn) <= np.finfo(w.dtype).max).all():
        raise ValueError(f"`scale` must keep the initial weights within the {w.dtype} range of "
                         f"the network ({float(np.finfo(w.dtype).max):g}), got {scale!r}.")
    w[:] = drawn


def init_bounds(layers, n_connections, init, scale, logistic):
    """Half-width of each weight's initial range under ``init`` (not "uniform"), shape
    (n_connections,), for the kernels' layer table ``layers``; ``logistic``: the
    activation that sets Glorot's factor (the hidden one, else the outputs') is logistic."""
    bound = np.empty(n_connections)
    for _start, size, lo, hi, w_off, b_off, _ in layers:
        fan_in = int(hi - lo)
        if init == "fan_in":
            w = b = (DEFAULT_FAN_IN_SCALE if scale is None else scale) / fan_in
        elif init == "glorot":
            w = b = np.sqrt((2.0 if logistic else 6.0) / (fan_in + int(size)))
        else:                                       # he
            w, b = np.sqrt(6.0 / fan_in), 0.0
        bound[w_off:b_off] = w
        bound[b_off:b_off + size] = b
    return bound
