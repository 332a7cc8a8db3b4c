"""Network files and pickled states: every part checked before it is allocated.

The checks behind :meth:`fastnet.MLP.load` and ``MLP.__setstate__``, and the
limits they enforce (re-exported by :mod:`fastnet.network`).
"""
import json

import numpy as np

from fastnet._files import NotNpzError, NpzMember, read_npz
from fastnet._validation import check_choice, shown_int

#: Version of the ``.npz`` file format written by :meth:`MLP.save`.
FORMAT_VERSION = 1

#: Most connections (biases included) a network may have: 10**8 weights take
#: 800 MB, and training needs several such vectors. Constructors and network
#: files refuse larger networks before allocating anything of their size.
MAX_CONNECTIONS = 10**8

#: Largest weight magnitude accepted by :meth:`MLP.set_weights`,
#: :meth:`MLP.set_params` and network files. With ``abs(w) <= 1e150``, inputs
#: ``abs(x) <= 1e150`` and at most MAX_CONNECTIONS terms, every weighted sum stays
#: below 1e308 < 1.8e308 (float64's largest), so the outputs of a network whose
#: hidden units are bounded (proben1, logistic, tanh) are finite. Linear hidden
#: layers multiply these ranges and carry no such guarantee.
MAX_WEIGHT = 1e150

# Largest configuration (JSON text) a network file may hold.
_MAX_CONFIG_BYTES = 1 << 16


class _NotNetworkFile(Exception):
    pass


def _read_network_file(fh, path, activations):
    """(config, weights) of an open network file, each checked before it is allocated."""
    members = {"format_version": NpzMember("iu", 1, ndim=0, what="the format version"),
               "config": NpzMember("U", 1, ndim=0, itemsize=_MAX_CONFIG_BYTES,
                                     what="the configuration")}
    try:
        head, names = read_npz(fh, members)
    except NotNpzError as exc:
        raise _NotNetworkFile(str(exc)) from None
    if names != {"format_version", "config", "weights"}:
        raise _NotNetworkFile(f"keys {sorted(names)}")
    version = int(head["format_version"])
    if version != FORMAT_VERSION:
        raise ValueError(f"{path}: network file format version {version}, "
                         f"this fastnet reads version {FORMAT_VERSION}.")
    try:
        config = json.loads(str(head["config"]))
    except (ValueError, RecursionError) as exc:  # not JSON, too deep, int too long
        raise ValueError(f"{path}: the network configuration is not valid JSON "
                         f"({type(exc).__name__}: {exc}).") from None
    config = _check_config(config, path, activations)
    want = (_n_connections(config),)

    def check(headers):
        shape, dtype = headers["weights"]
        if shape != want or dtype != config["dtype"]:
            raise ValueError(f"{path}: the weights must be {config['dtype']} of shape {want} "
                             f"for this configuration, got {dtype} of shape {shape}.")

    weights = read_npz(fh, {"weights": NpzMember("f", want[0], ndim=1)}, check=check)[0]
    return config, _check_weights(weights["weights"], config, path)


_CONFIG_TYPES = {"n_in": int, "hidden": list, "n_out": int, "shortcut": bool,
                 "hidden_activation": str, "output_activation": str}
#: The value types a network file or pickled state may record (key ``dtype``, which
#: files written before float32 lack: they hold float64 networks).
DTYPES = ("float64", "float32")


def _check_config(config, where, activations):
    """The constructor arguments of a saved network, checked key by key and typed."""
    if not isinstance(config, dict):
        raise ValueError(f"{where}: the network configuration must be a mapping, got "
                         f"{type(config).__name__}.")
    unknown = set(config) - set(_CONFIG_TYPES) - {"dtype"}
    missing = set(_CONFIG_TYPES) - set(config)
    if unknown or missing:
        raise ValueError(f"{where}: the network configuration has unknown keys {sorted(unknown)} "
                         f"and lacks {sorted(missing)}; it needs exactly {sorted(_CONFIG_TYPES)} "
                         f"(and optionally 'dtype').")
    dtype = config.get("dtype", "float64")
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"{where}: the configuration's `dtype` must be one of {list(DTYPES)}, "
                         f"got {dtype!r}.")
    for key, kind in _CONFIG_TYPES.items():
        value = config[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is list:
            ok = ok and all(isinstance(h, int) and not isinstance(h, bool) for h in value)
        if not ok:
            raise ValueError(f"{where}: the configuration's `{key}` must be {kind.__name__}"
                             f"{' of int' if kind is list else ''}, got {value!r}.")
    if config["n_in"] < 1 or config["n_out"] < 1 or any(h < 1 for h in config["hidden"]):
        raise ValueError(f"{where}: layer sizes must be >= 1, got n_in={config['n_in']}, "
                         f"hidden={config['hidden']}, n_out={config['n_out']}.")
    for key in ("hidden_activation", "output_activation"):
        check_choice(config[key], key, activations)
    n_conn = _n_connections(config)
    if n_conn > MAX_CONNECTIONS:
        raise ValueError(f"{where}: the configuration gives {shown_int(n_conn)} connections, "
                         f"more than MAX_CONNECTIONS = {MAX_CONNECTIONS}.")
    return dict(config, hidden=tuple(config["hidden"]), dtype=dtype)


def _n_connections(config):
    """Connections (biases included) of a checked configuration, without allocating."""
    sizes = (config["n_in"], *config["hidden"], config["n_out"])
    total, before = 0, sizes[0]
    for j in range(1, len(sizes)):
        fan = before if config["shortcut"] else sizes[j - 1]
        total += sizes[j] * (fan + 1)
        before += sizes[j]
    return total


def within_max_weight(w):
    """Whether every weight of ``w`` (any shape) is finite with magnitude at
    most ``MAX_WEIGHT``: the weights a network takes.

    One dot product decides in the usual case (timing studies set thousands of
    networks; training checks its weights at the end of every run): w.w <=
    MAX_WEIGHT**2 bounds every |w_i|, NaN fails it, and numpy.vdot warns of no
    overflow; otherwise the exact check.
    """
    if w.dtype != np.float64:            # (float32: every finite weight is within MAX_WEIGHT)
        return bool(np.isfinite(np.vdot(w, w))) or bool(np.isfinite(w).all())
    if np.vdot(w, w) <= MAX_WEIGHT * MAX_WEIGHT:
        return True
    return bool(w.max() <= MAX_WEIGHT and w.min() >= -MAX_WEIGHT)


def _check_weight_range(w, name):
    """Refuse NaN, infinite and larger than ``MAX_WEIGHT`` weights of a 1-D ``w``."""
    if not within_max_weight(w):
        bad = np.flatnonzero(~(np.abs(w.astype(np.float64)) <= MAX_WEIGHT))[0]
        raise ValueError(f"{name} must be finite with magnitude at most MAX_WEIGHT = "
                         f"{MAX_WEIGHT:g}, got {w[bad]!r} at index {bad}.")


def as_network_weights(w, dtype, name):
    """Checked float64 weights ``w`` (finite, within MAX_WEIGHT) in a network's ``dtype``:
    float32 ones must also lie within float32's range (3.4e38), where they round to
    finite numbers."""
    _check_weight_range(w, name)
    if dtype == w.dtype:
        return w
    big = float(np.finfo(dtype).max)
    if not (np.abs(w) <= big).all():
        bad = np.flatnonzero(~(np.abs(w) <= big))[0]
        raise ValueError(f"{name} must lie within the {dtype} range of the network (magnitude at "
                         f"most {big:g}), got {w[bad]!r} at index {bad}.")
    return w.astype(dtype)


def _check_weights(weights, config, where):
    """A checked configuration's ``weights``: of its dtype and size, finite, within MAX_WEIGHT."""
    weights = np.asarray(weights)
    want, dtype = _n_connections(config), config.get("dtype", "float64")
    if weights.dtype != dtype or weights.shape != (want,):
        raise ValueError(f"{where}: the weights must be {dtype} of shape ({want},) for this "
                         f"configuration, got {weights.dtype} of shape {weights.shape}.")
    if not np.isfinite(weights).all():
        raise ValueError(f"{where}: the weights are not all finite.")
    _check_weight_range(weights, f"{where}: the weights")
    return weights


