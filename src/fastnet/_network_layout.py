"""A network's topology: its checks, the kernels' layer table that lays it out in one flat
weight vector, weights per connected layer pair, and Proben1's notation for it
(``fastnet.network`` re-exports the public names)."""
import re

import numpy as np

from fastnet._netfile import MAX_CONNECTIONS, _n_connections, as_network_weights
from fastnet._validation import check_choice, check_int, refuse_complex, shown_int

#: Activation names and the kernel codes they map to (see _kernels/_types.pxd).
#: ``"proben1"`` is Proben1's sigmoid ``f(x) = x / (1 + |x|)``, ``f'(x) = 1 / (1 + |x|)**2``;
#: ``"relu"`` is ``max(x, 0)`` with ``f'(0) = 0``; ``"softmax"`` (outputs only)
#: ``exp(x_k) / sum_i exp(x_i)`` over the output layer.
ACTIVATIONS = {"linear": 0, "proben1": 1, "logistic": 2, "tanh": 3, "relu": 4, "softmax": 5}
#: The activations of hidden units (softmax couples a layer's units: outputs only).
HIDDEN_ACTIVATIONS = {k: v for k, v in ACTIVATIONS.items() if k != "softmax"}

_PROBEN1_SPEC = re.compile(r"^\s*(\d+)\s*\+\s*(\d+)\s*([ls])\s*$")


def check_topology(n_in, hidden, n_out, shortcut, hidden_activation, output_activation, dtype):
    """``(n_in, hidden, n_out, shortcut, dtype)`` checked and normalised (``hidden`` a tuple
    of ints, ``shortcut`` a bool, ``dtype`` a numpy dtype); the activations checked."""
    n_in = check_int(n_in, "n_in", minimum=1)
    n_out = check_int(n_out, "n_out", minimum=1)
    if isinstance(hidden, (int, np.integer)) and not isinstance(hidden, bool):
        hidden = (hidden,)
    try:
        hidden = tuple(hidden)
    except TypeError:
        raise TypeError(f"`hidden` must be a sequence of ints, got {hidden!r}.") from None
    hidden = tuple(check_int(h, "hidden", minimum=1) for h in hidden)
    n_conn = _n_connections({"n_in": n_in, "hidden": hidden, "n_out": n_out,
                             "shortcut": bool(shortcut)})
    if n_conn > MAX_CONNECTIONS:
        raise ValueError(f"`n_in`, `hidden` and `n_out` must give at most MAX_CONNECTIONS = "
                         f"{MAX_CONNECTIONS} connections, got {shown_int(n_conn)}.")
    if not isinstance(shortcut, (bool, np.bool_)):
        raise TypeError(f"`shortcut` must be True or False, got {shortcut!r}.")
    check_choice(hidden_activation, "hidden_activation", HIDDEN_ACTIVATIONS)
    check_choice(output_activation, "output_activation", ACTIVATIONS)
    if output_activation == "softmax" and n_out < 2:
        raise ValueError("`output_activation`='softmax' needs n_out >= 2 outputs (one per "
                         f"class; a single softmax output is always 1), got n_out={n_out}. "
                         "Use 'logistic' for one binary output.")
    return n_in, hidden, n_out, bool(shortcut), check_dtype(dtype)


#: The value types a network computes in (``MLP(..., dtype=...)``).
DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
#: Their names (``numpy.dtype.name`` builds its string anew at every call, 1.5 us).
DTYPE_NAMES = {np.dtype(np.float64): "float64", np.dtype(np.float32): "float32"}


def check_dtype(dtype, name="dtype"):
    """``dtype`` as a numpy dtype, float64 or float32 (a name such as ``"float32"``, a
    numpy type such as ``np.float32`` or a dtype); else a ValueError naming ``name``."""
    if isinstance(dtype, np.dtype) and dtype in DTYPES:    # (the usual case, no conversion)
        return dtype
    try:
        found = np.dtype(dtype) if dtype is not None else None
    except (TypeError, ValueError):
        found = None
    if found is None or found not in DTYPES:
        raise ValueError(f"`{name}` must be float64 or float32 (\"float64\", np.float64, "
                         f"\"float32\" or np.float32), got {dtype!r}.")
    return found


def layer_table(sizes, shortcut, hidden_activation, output_activation):
    """``(layers, starts, n_connections)``: the kernels' layer table (intp, one row
    per weight layer: first unit, unit count, source range [lo, hi), offsets of W_j and
    of the biases, activation code), each layer's first unit, and the weight count."""
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    rows = []
    offset = 0
    for j in range(1, len(sizes)):
        lo = 0 if shortcut else starts[j - 1]
        hi = starts[j]
        size = sizes[j]
        act = output_activation if j == len(sizes) - 1 else hidden_activation
        w_off = offset
        b_off = w_off + size * (hi - lo)
        offset = b_off + size
        rows.append((starts[j], size, lo, hi, w_off, b_off, ACTIVATIONS[act]))
    return np.ascontiguousarray(rows, dtype=np.intp), starts, int(offset)


def layer_slices(w, layers, j):
    """Views (W_j, b_j, lo) of layer j >= 1 into the flat vector ``w``."""
    start, size, lo, hi, w_off, b_off, _ = layers[j - 1]
    return w[w_off:b_off].reshape(size, hi - lo), w[b_off:b_off + size], lo


def params_by_pair(w, layers, starts, sizes, pairs):
    """``(W, b)`` of :meth:`MLP.get_params`: copies of ``w``'s blocks per connected
    layer pair and per layer's biases."""
    W, b = {}, {}
    for (i, j) in pairs:
        Wj, _, lo = layer_slices(w, layers, j)
        c0 = starts[i] - lo
        W[(i, j)] = Wj[:, c0:c0 + sizes[i]].T.copy()
    for j in range(1, len(sizes)):
        b[j] = layer_slices(w, layers, j)[1].copy()
    return W, b


def weights_from_params(w, W, b, layers, starts, sizes, pairs):
    """A copy of the flat vector ``w`` holding the checked weights of :meth:`MLP.set_params`."""
    if not isinstance(W, dict) or not isinstance(b, dict):
        raise TypeError("`W` and `b` must be dicts as returned by get_params().")
    n_layers = len(sizes) - 1
    if set(W) != set(pairs):
        raise ValueError(f"`W` must have exactly the keys {pairs}, got {sorted(W)}.")
    if set(b) != set(range(1, n_layers + 1)):
        raise ValueError(f"`b` must have exactly the keys {list(range(1, n_layers + 1))}, "
                         f"got {sorted(b)}.")
    new = w.astype(np.float64)          # (a copy; rounded to the network's dtype once checked)
    for (i, j) in pairs:
        refuse_complex(W[(i, j)], f"W[{(i, j)}]")
        Wij = np.asarray(W[(i, j)], dtype=np.float64)       # (checked before it is rounded)
        shape = (sizes[i], sizes[j])
        if Wij.shape != shape:
            raise ValueError(f"`W[{(i, j)}]` must have shape {shape}, got {Wij.shape}.")
        start, size, lo, hi, w_off, b_off, _ = layers[j - 1]
        Wj = new[w_off:b_off].reshape(size, hi - lo)
        c0 = starts[i] - lo
        Wj[:, c0:c0 + shape[0]] = Wij.T
    for j in range(1, n_layers + 1):
        refuse_complex(b[j], f"b[{j}]")
        bj = np.asarray(b[j], dtype=np.float64)
        if bj.shape != (sizes[j],):
            raise ValueError(f"`b[{j}]` must have shape ({sizes[j]},), got {bj.shape}.")
        b_off = layers[j - 1, 5]
        new[b_off:b_off + bj.size] = bj
    return as_network_weights(new, w.dtype, "`W` and `b`")


def parse_proben1(spec):
    """``(hidden, output_activation)`` of Proben1 notation ``spec`` ("4+2 l", "linear")."""
    if not isinstance(spec, str):
        raise TypeError(f"`spec` must be a string like '4+2 l', got {spec!r}.")
    if spec.strip().lower() == "linear":
        return (), "linear"
    m = _PROBEN1_SPEC.match(spec)
    if not m:
        raise ValueError(
            f"`spec` must be Proben1 notation 'h1+h2 k' (k = l or s), e.g. '4+2 l' or "
            f"'16+0 s', got {spec!r}.")
    if max(len(m.group(1)), len(m.group(2))) > len(str(MAX_CONNECTIONS)):
        raise ValueError(f"`spec` must have hidden layer sizes below MAX_CONNECTIONS = "
                         f"{MAX_CONNECTIONS}, got sizes of {len(m.group(1))} and "
                         f"{len(m.group(2))} digits.")
    h1, h2, kind = int(m.group(1)), int(m.group(2)), m.group(3)
    if h1 == 0 and h2 > 0:
        raise ValueError(f"`spec` {spec!r} has a second hidden layer but no first.")
    return tuple(h for h in (h1, h2) if h > 0), "linear" if kind == "l" else "proben1"


def proben1_notation(hidden, hidden_activation, output_activation):
    """The topology in Proben1 notation ("4+2 l"), or None if it has none."""
    if len(hidden) > 2:
        return None
    if hidden and hidden_activation != "proben1":
        return None
    kind = {"linear": "l", "proben1": "s"}.get(output_activation)
    if kind is None:
        return None
    h = list(hidden) + [0] * (2 - len(hidden))
    return f"{h[0]}+{h[1]} {kind}"
