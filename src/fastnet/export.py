"""Take a trained network elsewhere: an ONNX model, or one self-contained C function.

:func:`to_onnx` builds an ``onnx.ModelProto`` that onnxruntime (or any ONNX
runtime) runs; :func:`to_c` writes C99 source with the weights as ``static const``
arrays and a function that computes one pattern's outputs, with no allocation
and no dependency beyond ``<math.h>``. Both cover every network :class:`~fastnet.MLP`
builds -- every activation, shortcut connections, softmax outputs, no hidden
layer -- and both equal :meth:`MLP.predict <fastnet.MLP.predict>` to about 1e-15
relative in float64 (the tests hold them to 1e-12), or to float32 rounding when
exported in float32, wherever no unit's weighted sum overflows (see the Notes of
:func:`to_c`: inputs of about 1e38 in float32 may give other outputs than ``predict``).

The ``onnx`` package is needed for :func:`to_onnx` only (``pip install onnx
onnxruntime``: onnxruntime runs the model); :func:`to_c` needs nothing.
"""
from __future__ import annotations

import os

import numpy as np

from fastnet._c_names import C_KEYWORDS, C_NAME_MAX, check_c_name
from fastnet._files import atomic_write
from fastnet._typing import PathLike
from fastnet._version import __version__

__all__ = ["to_onnx", "to_c", "ONNX_OPSET", "C_KEYWORDS", "C_NAME_MAX", "C_STACK_UNITS",
           "MAX_C_CONNECTIONS"]

#: The ONNX operator set the models use (Gemm, Concat, Tanh, Sigmoid, Relu, Abs,
#: Div, Softmax with its opset-13 axis meaning). Runtimes from onnxruntime 1.10
#: on run it.
ONNX_OPSET = 13
# The IR version written: the one of opset 13 (onnx 1.8), so that older runtimes load it.
_ONNX_IR_VERSION = 7

#: The largest network :func:`to_c` writes: 10^7 weights are about 250 MB of C source,
#: which GCC and Clang still compile (slowly); beyond it ONNX (weights in binary) serves.
MAX_C_CONNECTIONS = 10_000_000

#: The most units :func:`to_c`'s ``NAME`` keeps on the stack (32 KiB in double, 16 KiB in
#: float): a quarter of the smallest default thread stack of the common platforms (musl's
#: 128 KiB; glibc, macOS and Windows give 512 KiB to 8 MiB). Larger networks keep their
#: units in one static array, which makes ``NAME`` not thread-safe; ``NAME_r`` takes the
#: caller's storage at every size.
C_STACK_UNITS = 4096


def _check_net(net, function):
    from fastnet.network import MLP

    if not isinstance(net, MLP):
        raise TypeError(f"{function}: `net` must be a fastnet.MLP, got {type(net).__name__}.")


def _check_dtype(dtype, net):
    """The export's dtype: ``dtype``, or the network's if None."""
    if dtype is None:
        return net.dtype
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    # (compared by name: np.dtype("float64") == None is True)
    if dt is None or dt.name not in ("float64", "float32"):
        raise ValueError(f"`dtype` must be 'float64', 'float32' or None (the network's), "
                         f"got {dtype!r}.")
    return dt


def _check_path(path):
    """None, or a path to a file (not a directory) whose folder exists."""
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"`path` must be a str or path-like (or None), got {type(path).__name__}.")
    if os.path.isdir(path):
        raise ValueError(f"`path` must name a file, got the directory {os.fspath(path)!r}.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"`path`: no such directory {folder!r} (for {os.fspath(path)!r}).")
    return path


def _check_fits(net, dt, function):
    """Refuse a float32 export of a weight beyond float32's range, naming it."""
    if dt != np.float32:
        return
    w = net.weights
    with np.errstate(over="ignore"):
        too_large = np.flatnonzero(np.isinf(w.astype(np.float32)))
    if too_large.size == 0:
        return
    index = int(too_large[0])
    where = ""
    for j, (start, size, lo, hi, w_off, b_off, _) in enumerate(net.layer_table.tolist(), start=1):
        if w_off <= index < b_off:
            unit, source = divmod(index - w_off, hi - lo)
            where = f"layer {j}, the weight from unit {lo + source} to unit {start + unit}"
        elif b_off <= index < b_off + size:
            where = f"layer {j}, the bias of unit {start + index - b_off}"
    more = f" (and {too_large.size - 1} more)" if too_large.size > 1 else ""
    raise ValueError(f"{function}: `dtype` float32 cannot hold weight {index} of `net` ({where}): "
                     f"{float(w[index])!r}{more} is beyond float32's largest value "
                     f"{float(np.finfo(np.float32).max)!r}; export in float64.")


def _layers(net):
    """Per weight layer: (start, size, lo, hi, W (size x (hi - lo)), b, activation name)."""
    from fastnet.network import ACTIVATIONS

    names = {code: name for name, code in ACTIVATIONS.items()}
    w = net.weights
    for start, size, lo, hi, w_off, b_off, code in net.layer_table.tolist():
        W = w[w_off:b_off].reshape(size, hi - lo)
        yield start, size, lo, hi, W, w[b_off:b_off + size], names[code]


def _unit_blocks(net):
    """The first unit of each layer (inputs, hidden layers, outputs) and the end."""
    starts = [0]
    for start, *_ in net.layer_table.tolist():
        starts.append(start)
    starts.append(net.n_units)
    return starts


def _check_onnx_name(name):
    """The graph's name: non-empty text that UTF-8 (protobuf's string) can encode."""
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string, got {type(name).__name__}.")
    if not name:
        raise ValueError("`name` must be a non-empty string, got ''.")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"`name` must be text that UTF-8 can encode (ONNX stores it so), "
                         f"got {name!r}.") from None


def _onnx_activation(act, j, net_input, out, inits, dt):
    """The nodes applying layer j's activation (adding the constant 1 to ``inits``
    for Proben1's units)."""
    from onnx import helper, numpy_helper

    if act == "tanh":
        return [helper.make_node("Tanh", [net_input], [out])]
    if act == "logistic":
        return [helper.make_node("Sigmoid", [net_input], [out])]
    if act == "relu":
        return [helper.make_node("Relu", [net_input], [out])]
    if act == "softmax":
        return [helper.make_node("Softmax", [net_input], [out], axis=1)]
    if act == "proben1":
        if "one" not in {t.name for t in inits}:
            inits.append(numpy_helper.from_array(np.array(1.0, dtype=dt), "one"))
        return [helper.make_node("Abs", [net_input], [f"abs{j}"]),
                helper.make_node("Add", [f"abs{j}", "one"], [f"den{j}"]),
                helper.make_node("Div", [net_input, f"den{j}"], [out])]
    if act != "linear":                                       # pragma: no cover
        raise ValueError(f"to_onnx: no ONNX form for the activation {act!r}.")
    return []


def to_onnx(net, path: PathLike | None = None, *, dtype=None, name="fastnet"):
    """The network as an ONNX model (and written to ``path`` if given).

    Parameters
    ----------
    net : MLP
        The network; its weights are copied into the model.
    path : str or path-like, optional
        Where to write the model (``.onnx``), atomically.
    dtype : {"float64", "float32"} or None, default None
        Element type of the input, the weights and the output; None: the
        network's (``net.dtype``), so that the model computes as
        ``net.predict`` does. float32 rounds a float64 network's weights and
        computes in single precision (half the size, and what most runtimes
        accelerate); a weight beyond float32's range (about 3.4e38) is then
        an error. ``dtype="float64"`` exports a float32 network in double
        precision, its weights widened exactly: a deliberate choice (the
        model then computes more precisely than the network it came from).
    name : str, default "fastnet"
        The graph's name.

    Returns
    -------
    model : onnx.ModelProto
        One input ``"x"`` of shape ``("n", n_in)`` and one output ``"y"`` of
        shape ``("n", n_out)``; checked by ``onnx.checker``.

    Raises
    ------
    ImportError
        If the ``onnx`` package is not installed (``pip install onnx onnxruntime``).
    TypeError
        If ``net`` is not an :class:`~fastnet.MLP`, or ``name`` not a string.
    ValueError
        If ``dtype`` is not float64 or float32 (or is float32 and a weight
        does not fit it: the message names the weight), ``name`` is empty or
        not encodable as UTF-8, or ``path`` is a directory.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Notes
    -----
    Operator set 13. Layer j is ``Gemm(sources, W_j, b_j, transB=1)`` on the
    units it reads (the ``Concat`` of the layers before it when the network has
    shortcut connections), then its activation: ``Tanh``, ``Sigmoid``
    (logistic), ``Relu``, ``Softmax(axis=1)``, nothing for linear units, and
    Proben1's ``x / (1 + |x|)`` as ``Div(x, Add(Abs(x), 1))`` (ONNX's
    ``Softsign`` is the same function, but runtimes implement it for float32
    only). Runtimes evaluate tanh, exp and the products with their own
    routines, so outputs agree with ``predict`` to rounding, not bit for bit.

    Where a weighted sum overflows (inputs or weights so large that a unit's
    net input passes the dtype's largest number, e.g. inputs of 1e38 in
    float32), the model may give other outputs than ``predict``, finite ones
    included, and says nothing: see the Notes of :func:`to_c`.

    Examples
    --------
    >>> from fastnet import MLP
    >>> from fastnet.export import to_onnx
    >>> model = to_onnx(MLP(4, (3,), 2, output_activation="softmax", seed=0))  # doctest: +SKIP
    >>> import onnxruntime as ort                                              # doctest: +SKIP
    >>> sess = ort.InferenceSession(model.SerializeToString())                 # doctest: +SKIP
    >>> sess.run(None, {"x": X})[0]             # equals net.predict(X)       # doctest: +SKIP
    """
    _check_net(net, "to_onnx")
    dt = _check_dtype(dtype, net)
    path = _check_path(path)
    _check_onnx_name(name)
    _check_fits(net, dt, "to_onnx")
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as exc:
        raise ImportError("fastnet.export.to_onnx needs the onnx package: "
                          "pip install onnx onnxruntime") from exc
    elem = TensorProto.DOUBLE if dt == np.float64 else TensorProto.FLOAT
    nodes, inits = [], []
    starts = _unit_blocks(net)
    block_names = ["x"]            # the ONNX value holding each layer's units
    for j, (_, _, lo, hi, W, b, act) in enumerate(_layers(net), start=1):
        first, last = starts.index(lo), starts.index(hi)     # the layers it reads: [first, last)
        sources = block_names[first:last]
        if len(sources) > 1:
            src = f"units_{first}_{last}"
            nodes.append(helper.make_node("Concat", sources, [src], axis=1))
        else:
            src = sources[0]
        inits.append(numpy_helper.from_array(W.astype(dt), f"W{j}"))
        inits.append(numpy_helper.from_array(b.astype(dt), f"b{j}"))
        out = "y" if j == net.n_layers else f"a{j}"
        net_input = out if act == "linear" else f"z{j}"
        nodes.append(helper.make_node("Gemm", [src, f"W{j}", f"b{j}"], [net_input], transB=1))
        nodes += _onnx_activation(act, j, net_input, out, inits, dt)
        block_names.append(out)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", elem, ["n", net.n_in])],
        [helper.make_tensor_value_info("y", elem, ["n", net.n_out])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)],
                              producer_name="fastnet", producer_version=__version__,
                              ir_version=_ONNX_IR_VERSION,
                              doc_string=f"{net!r}, exported in {dt.name}")
    onnx.checker.check_model(model)
    if path is not None:
        data = model.SerializeToString()
        atomic_write(path, lambda f: f.write(data))
    return model


def _c_number(value, single):
    """A C literal that reads back as exactly ``value``: the shortest decimal
    that round-trips (as a float with the ``f`` suffix for float32)."""
    return str(np.float32(value)) + "f" if single else repr(float(value))


def _c_array(values, single, indent="    ", per_line=4):
    items = [_c_number(v, single) for v in np.asarray(values).ravel()]
    lines = [indent + ", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "{\n" + ",\n".join(lines) + "\n}"


_C_ACTIVATION = {
    "linear": "{z}",
    "proben1": "{z} / ({one} + {fabs}({z}))",
    "logistic": "{one} / ({one} + {exp}(-{z}))",
    "tanh": "{tanh}({z})",
    # (z < 0 ? 0 : z passes a NaN net input on, as predict and ONNX's Relu do; z > 0 ? z : 0
    # turned it into 0, a finite output where predict reports an overflow)
    "relu": "({z} < {zero} ? {zero} : {z})",
}


def _c_identifiers(name, single):
    """Every identifier the exported file uses: its own carry ``name`` as a prefix
    (locals too), so that no valid user name meets one of them."""
    p = name + "_"
    return {"fn": name, "r": p + "r", "batch": p + "batch", "units": p + "units",
            "N": name.upper(), "x": p + "x", "y": p + "y", "u": p + "u", "i": p + "i",
            "k": p + "k", "z": p + "z", "p": p + "p", "n": p + "n", "top": p + "top",
            "sum": p + "sum", "real": "float" if single else "double",
            "exp": "expf" if single else "exp", "tanh": "tanhf" if single else "tanh",
            "fabs": "fabsf" if single else "fabs", "one": "1.0f" if single else "1.0",
            "zero": "0.0f" if single else "0.0"}


def _c_storage_static(net):
    """Whether ``NAME`` keeps the units in static storage (more than C_STACK_UNITS)."""
    return net.n_units > C_STACK_UNITS


def _c_header(net, ids):
    """The exported file's opening comment, includes and size macros, as lines."""
    name, real, N = ids["fn"], ids["real"], ids["N"]
    size = net.n_units * (4 if real == "float" else 8)
    if _c_storage_static(net):
        storage = [
            f" * The network has {net.n_units} units ({size:,} bytes), more than fastnet's",
            f" * C_STACK_UNITS ({C_STACK_UNITS}): {name} and {name}_batch keep them in one static",
            f" * array ({ids['units']}), not on the stack, so they are NOT thread-safe or",
            " * re-entrant: call them from one thread at a time, or give each thread",
            f" * its own work array through {name}_r.",
        ]
    else:
        storage = [
            f" * {name} and {name}_batch keep the network's {net.n_units} units ({size:,} bytes)",
            " * on the stack: thread-safe and re-entrant.",
        ]
    return [
        f"/* {name}: exported by fastnet {__version__} from",
        f" * {net!r}",
        f" * in {real}. Self-contained C99: link with -lm.",
        " *",
        f" *   void {name}(const {real} *x, {real} *y);",
        f" *       one pattern: x[{N}_N_INPUTS] in, y[{N}_N_OUTPUTS] out;",
        f" *   void {name}_batch(const {real} *x, {real} *y, size_t n_patterns);",
        " *       row-major x[n_patterns][N_INPUTS] in, y[n_patterns][N_OUTPUTS] out;",
        f" *   void {name}_r(const {real} *x, {real} *y, {real} *work);",
        f" *       as {name}, with the caller's work[{N}_N_UNITS] for the units.",
        " *",
        " * None allocates.",
        *storage,
        f" * {name}_r uses only the caller's work array: thread-safe when each thread",
        " * passes its own. x, y and work must not overlap.",
        " */",
        "#include <math.h>",
        "#include <stddef.h>",
        "",
        f"#define {N}_N_INPUTS {net.n_in}",
        f"#define {N}_N_OUTPUTS {net.n_out}",
        f"#define {N}_N_UNITS {net.n_units}",
        "",
    ]


def _c_weight_arrays(layers, ids, single):
    """Each layer's weights and biases as ``static const`` arrays, as lines."""
    lines, name, real = [], ids["fn"], ids["real"]
    for j, (start, size, lo, hi, W, b, act) in enumerate(layers, start=1):
        lines.append(f"/* layer {j}: units {start}..{start + size - 1} ({act}) from units "
                     f"{lo}..{hi - 1}; row-major W[unit * {hi - lo} + source] */")
        lines.append(f"static const {real} {name}_W{j}[{size * (hi - lo)}] = "
                     + _c_array(W, single) + ";")
        lines.append(f"static const {real} {name}_b{j}[{size}] = " + _c_array(b, single) + ";")
        lines.append("")
    return lines


def _c_softmax(start, size, ids):
    """The lines normalising units start..start+size-1 (net inputs) into softmax outputs."""
    u, k = ids["u"], ids["k"]
    return [
        "    {   /* softmax: exp(z_k - max z) / sum of them */",
        f"        {ids['real']} {ids['top']} = {u}[{start}], {ids['sum']} = {ids['zero']};",
        f"        for ({k} = 1; {k} < {size}; {k}++)",
        f"            if ({u}[{start} + {k}] > {ids['top']})",
        f"                {ids['top']} = {u}[{start} + {k}];",
        f"        for ({k} = 0; {k} < {size}; {k}++) {{",
        f"            {u}[{start} + {k}] = {ids['exp']}({u}[{start} + {k}] - {ids['top']});",
        f"            {ids['sum']} += {u}[{start} + {k}];",
        "        }",
        f"        for ({k} = 0; {k} < {size}; {k}++)",
        f"            {u}[{start} + {k}] /= {ids['sum']};",
        "    }",
    ]


def _c_forward(net, layers, ids):
    """``NAME_r``: the forward pass of one pattern through the caller's work array."""
    name, real, u, i, k, z = ids["fn"], ids["real"], ids["u"], ids["i"], ids["k"], ids["z"]
    lines = [
        f"void {ids['r']}(const {real} *{ids['x']}, {real} *{ids['y']}, {real} *{u})",
        "{",
        f"    int {i}, {k};   /* {u}: the inputs, then every layer's units */",
        f"    for ({i} = 0; {i} < {net.n_in}; {i}++)",
        f"        {u}[{i}] = {ids['x']}[{i}];",
    ]
    for j, (start, size, lo, hi, _, _, act) in enumerate(layers, start=1):
        lines += [
            f"    /* layer {j} */",
            f"    for ({k} = 0; {k} < {size}; {k}++) {{",
            f"        {real} {z} = {name}_b{j}[{k}];",
            f"        for ({i} = 0; {i} < {hi - lo}; {i}++)",
            f"            {z} += {name}_W{j}[{k} * {hi - lo} + {i}] * {u}[{lo} + {i}];",
        ]
        value = z if act == "softmax" else _C_ACTIVATION[act].format(**ids)
        lines += [f"        {u}[{start} + {k}] = {value};", "    }"]
        if act == "softmax":
            lines += _c_softmax(start, size, ids)
    out0 = net.n_units - net.n_out
    lines += [
        f"    for ({k} = 0; {k} < {net.n_out}; {k}++)",
        f"        {ids['y']}[{k}] = {u}[{out0} + {k}];",
        "}",
        "",
    ]
    return lines


def _c_entry_points(net, ids):
    """``NAME`` (stack or static storage) and ``NAME_batch``, as lines."""
    name, real, N, x, y = ids["fn"], ids["real"], ids["N"], ids["x"], ids["y"]
    if _c_storage_static(net):
        lines = [f"static {real} {ids['units']}[{N}_N_UNITS];   /* more than {C_STACK_UNITS} "
                 "units: not on the stack */", "",
                 f"void {name}(const {real} *{x}, {real} *{y})", "{",
                 f"    {ids['r']}({x}, {y}, {ids['units']});", "}", ""]
    else:
        lines = [f"void {name}(const {real} *{x}, {real} *{y})", "{",
                 f"    {real} {ids['u']}[{N}_N_UNITS];",
                 f"    {ids['r']}({x}, {y}, {ids['u']});", "}", ""]
    p = ids["p"]
    return lines + [
        f"void {ids['batch']}(const {real} *{x}, {real} *{y}, size_t {ids['n']})",
        "{",
        f"    size_t {p};",
        f"    for ({p} = 0; {p} < {ids['n']}; {p}++)",
        f"        {name}({x} + {p} * {net.n_in}, {y} + {p} * {net.n_out});",
        "}",
        "",
    ]


def to_c(net, path: PathLike | None = None, *, name: str = "fastnet_predict",
         dtype=None) -> str:
    """The network as one self-contained C99 source file (and written to ``path``).

    Parameters
    ----------
    net : MLP
        The network; its weights become ``static const`` arrays in the source.
    path : str or path-like, optional
        Where to write the source (``.c``), atomically.
    name : str, default "fastnet_predict"
        Name of the function: an ASCII C identifier of at most ``C_NAME_MAX``
        (53) characters. Everything else the file declares -- the other
        functions, the arrays, the size macros (upper case), even the local
        variables -- takes ``name`` as a prefix, so it meets none of them.
        Refused, with the reason: C keywords (C99 to C23), names beginning with
        ``_`` (reserved to the implementation), identifiers of ``<math.h>`` and
        ``<stddef.h>`` (``exp``, ``y0``, ``isnan``, ``NAN``, ``size_t``, their
        ``f``/``l`` forms, ...) and ``unix``/``linux``, which GCC predefines.
    dtype : {"float64", "float32"} or None, default None
        ``double`` or ``float`` throughout (weights, arithmetic, the
        ``<math.h>`` functions used: ``exp``/``expf``, ``tanh``/``tanhf``,
        ``fabs``/``fabsf``); None: the network's dtype (``float`` for a
        float32 network). A float32 export of a float64 network's weight
        beyond float32's range (about 3.4e38) is an error; weights below its
        smallest subnormal round to zero. ``dtype="float64"`` exports a float32
        network in ``double``, its weights widened exactly (a deliberate
        choice).

    Returns
    -------
    source : str
        C99 defining::

            void NAME(const double *x, double *y);   /* one pattern: x[n_in] -> y[n_out] */
            void NAME_batch(const double *x, double *y, size_t n_patterns);
                                                     /* row-major x[n][n_in] -> y[n][n_out] */
            void NAME_r(const double *x, double *y, double *work);
                                                     /* NAME with work[NAME_N_UNITS] */

        and the macros ``NAME_N_INPUTS``, ``NAME_N_OUTPUTS`` and
        ``NAME_N_UNITS`` (upper case). None allocates, and they need only
        ``<math.h>`` and ``<stddef.h>``; compile with e.g. ``cc -O2 -c net.c``
        (and link ``-lm``). Storage of the units: ``NAME`` and ``NAME_batch``
        keep them on the stack (thread-safe, re-entrant) up to
        ``C_STACK_UNITS`` (4096) units, and in one static array beyond (so
        that a large network cannot overflow a thread's stack; then they are
        not thread-safe); ``NAME_r`` uses the caller's ``work`` at any size,
        for threads or for a buffer the caller places. The file's opening
        comment says which.

    Raises
    ------
    TypeError
        If ``net`` is not an :class:`~fastnet.MLP`, or ``name`` not a string.
    ValueError
        If ``name`` is not a C identifier of at most ``C_NAME_MAX`` characters
        or is refused (above), ``dtype`` is not float64 or float32 or is
        float32 and a weight does not fit it (the message names the weight),
        ``path`` is a directory, or the network has more than
        ``MAX_C_CONNECTIONS`` weights.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Notes
    -----
    Each unit's weighted sum is accumulated in the order of its sources,
    starting from the bias, so results agree with ``net.predict`` to rounding
    (about 1e-15 relative in double; the tests hold them to 1e-12) but not bit
    for bit: fastnet's kernels sum in vector lanes and evaluate exp and tanh
    with their own polynomials. Softmax outputs subtract the largest net input
    before ``exp``, as ``predict`` does, so they never overflow. The weights are
    written in the shortest decimal form that reads back exactly.

    Overflow: where inputs (or weights) are so large that a unit's weighted sum
    passes the dtype's largest number (about 3.4e38 in float32, 1.8e308 in
    float64; inputs of 1e38 in float32 are enough), its value depends on how
    the sum is taken, and the three ways differ: fastnet's kernels fuse each
    multiply and add (FMA) and sum in vector lanes, onnxruntime's ``Gemm``
    has its own order, and this C file multiplies and adds one term at a time
    in the order of the sources (unless the compiler contracts them into FMA).
    The same pattern can so give +inf in one and NaN (inf - inf) in another,
    and a saturating unit then turns +inf into a finite output (tanh: 1,
    logistic: 1 or 0, softmax: 0 or 1) where NaN stays NaN: the exports may
    return NaN where ``predict`` returns a finite number, or the reverse, or
    two different finite numbers. ``predict`` warns (``RuntimeWarning``) when
    its outputs come out inf or NaN; the exports do not check. A relu unit
    passes a NaN net input on, as ``predict`` and ONNX's ``Relu`` do (it
    never turns it into 0). Matching ``predict`` there would mean copying its
    order of operations for every CPU; keep the inputs in the range the network
    was trained on (scaled data), far from the dtype's limits.

    Examples
    --------
    >>> from fastnet import MLP
    >>> from fastnet.export import to_c
    >>> source = to_c(MLP(2, (2,), 1, hidden_activation="tanh", seed=0), name="xor_net")
    >>> print(next(line for line in source.splitlines() if line.startswith("void xor_net(")))
    void xor_net(const double *xor_net_x, double *xor_net_y)
    """
    _check_net(net, "to_c")
    dt = _check_dtype(dtype, net)
    path = _check_path(path)
    if net.n_connections > MAX_C_CONNECTIONS:
        raise ValueError(f"to_c: the network has {net.n_connections:,} connections, more than "
                         f"MAX_C_CONNECTIONS ({MAX_C_CONNECTIONS:,}): its C source would take "
                         "gigabytes and compilers fail on arrays that large; export it with "
                         "to_onnx instead.")
    check_c_name(name)
    single = dt == np.float32
    _check_fits(net, dt, "to_c")
    ids = _c_identifiers(name, single)
    layers = list(_layers(net))
    lines = (_c_header(net, ids) + _c_weight_arrays(layers, ids, single)
             + _c_forward(net, layers, ids) + _c_entry_points(net, ids))
    source = "\n".join(lines)
    if path is not None:
        atomic_write(path, lambda f: f.write(source.encode("utf-8")))
    return source
