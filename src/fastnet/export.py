"""Take a trained network elsewhere: an ONNX model, or one self-contained C function.

:func:`to_onnx` builds an ``onnx.ModelProto`` that onnxruntime (or any ONNX
runtime) runs; :func:`to_c` writes C99 source with the weights as ``static const``
arrays and a function that computes one pattern's outputs, with no allocation
and no dependency beyond ``<math.h>``. Both cover every network :class:`~fastnet.MLP`
builds -- every activation, shortcut connections, softmax outputs, no hidden
layer -- and both equal :meth:`MLP.predict <fastnet.MLP.predict>` to about 1e-15
relative in float64 (the tests hold them to 1e-12), or to float32 rounding when
exported in float32.

The ``onnx`` package is needed for :func:`to_onnx` only (``pip install onnx
onnxruntime``: onnxruntime runs the model); :func:`to_c` needs nothing.
"""
from __future__ import annotations

import os
import re

import numpy as np

from fastnet._files import atomic_write
from fastnet._typing import PathLike
from fastnet._version import __version__

__all__ = ["to_onnx", "to_c", "ONNX_OPSET", "C_KEYWORDS", "MAX_C_CONNECTIONS"]

#: The ONNX operator set the models use (Gemm, Concat, Tanh, Sigmoid, Relu, Abs,
#: Div, Softmax with its opset-13 axis meaning). Runtimes from onnxruntime 1.10
#: on run it.
ONNX_OPSET = 13
# The IR version written: the one of opset 13 (onnx 1.8), so that older runtimes load it.
_ONNX_IR_VERSION = 7

#: The largest network :func:`to_c` writes: 10^7 weights are about 250 MB of C source,
#: which GCC and Clang still compile (slowly); beyond it ONNX (weights in binary) serves.
MAX_C_CONNECTIONS = 10_000_000

#: Reserved words of C99 (and C11/C23 additions), refused as function names.
C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex "
    "_Generic _Imaginary _Noreturn _Static_assert _Thread_local bool true false nullptr "
    "alignas alignof static_assert thread_local typeof".split())
_C_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _check_net(net, function):
    from fastnet.network import MLP

    if not isinstance(net, MLP):
        raise TypeError(f"{function}: `net` must be a fastnet.MLP, got {type(net).__name__}.")


def _check_dtype(dtype):
    try:
        dt = None if dtype is None else np.dtype(dtype)   # (np.dtype(None) is float64)
    except TypeError:
        dt = None
    # (compared by name: np.dtype("float64") == None is True)
    if dt is None or dt.name not in ("float64", "float32"):
        raise ValueError(f"`dtype` must be 'float64' or 'float32', got {dtype!r}.")
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


def to_onnx(net, path: PathLike | None = None, *, dtype="float64", name="fastnet"):
    """The network as an ONNX model (and written to ``path`` if given).

    Parameters
    ----------
    net : MLP
        The network; its weights are copied into the model.
    path : str or path-like, optional
        Where to write the model (``.onnx``), atomically.
    dtype : {"float64", "float32"}, default "float64"
        Element type of the input, the weights and the output. float64
        reproduces ``net.predict``; float32 rounds the weights and computes in
        single precision (half the size, and what most runtimes accelerate).
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
        If ``dtype`` is not float64 or float32, ``name`` is empty, or ``path``
        is a directory.
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
    dt = _check_dtype(dtype)
    path = _check_path(path)
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string, got {type(name).__name__}.")
    if not name:
        raise ValueError("`name` must be a non-empty string, got ''.")
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
        if act == "tanh":
            nodes.append(helper.make_node("Tanh", [net_input], [out]))
        elif act == "logistic":
            nodes.append(helper.make_node("Sigmoid", [net_input], [out]))
        elif act == "relu":
            nodes.append(helper.make_node("Relu", [net_input], [out]))
        elif act == "softmax":
            nodes.append(helper.make_node("Softmax", [net_input], [out], axis=1))
        elif act == "proben1":
            if "one" not in {t.name for t in inits}:
                inits.append(numpy_helper.from_array(np.array(1.0, dtype=dt), "one"))
            nodes.append(helper.make_node("Abs", [net_input], [f"abs{j}"]))
            nodes.append(helper.make_node("Add", [f"abs{j}", "one"], [f"den{j}"]))
            nodes.append(helper.make_node("Div", [net_input, f"den{j}"], [out]))
        elif act != "linear":                                 # pragma: no cover
            raise ValueError(f"to_onnx: no ONNX form for the activation {act!r}.")
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
    "relu": "({z} > {zero} ? {z} : {zero})",
}


def _check_c_name(name):
    """Refuse a ``name`` that is not a C identifier usable as to_c's function name."""
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string (a C identifier), got {type(name).__name__}.")
    if not _C_NAME.match(name) or name in C_KEYWORDS:
        raise ValueError(f"`name` must be a C identifier of at most 63 characters (letters, "
                         f"digits, '_', not starting with a digit) and not a C keyword, got {name!r}.")


def _c_header(net, name, real):
    """The exported file's opening comment, includes and size macros, as lines."""
    upper = name.upper()
    return [
        f"/* {name}: exported by fastnet {__version__} from",
        f" * {net!r}",
        f" * in {real}. Self-contained C99: link with -lm.",
        " *",
        f" *   void {name}(const {real} *x, {real} *y);",
        f" *       one pattern: x[{upper}_N_INPUTS] in, y[{upper}_N_OUTPUTS] out;",
        f" *   void {name}_batch(const {real} *x, {real} *y, size_t n_patterns);",
        " *       row-major x[n_patterns][N_INPUTS] in, y[n_patterns][N_OUTPUTS] out.",
        " *",
        " * Both allocate nothing (the units live on the stack), are thread-safe, and",
        " * x and y must not overlap.",
        " */",
        "#include <math.h>",
        "#include <stddef.h>",
        "",
        f"#define {upper}_N_INPUTS {net.n_in}",
        f"#define {upper}_N_OUTPUTS {net.n_out}",
        "",
    ]


def _c_weight_arrays(layers, name, real, single):
    """Each layer's weights and biases as ``static const`` arrays, as lines."""
    lines = []
    for j, (start, size, lo, hi, W, b, act) in enumerate(layers, start=1):
        lines.append(f"/* layer {j}: units {start}..{start + size - 1} ({act}) from units "
                     f"{lo}..{hi - 1}; row-major W[unit * {hi - lo} + source] */")
        lines.append(f"static const {real} {name}_W{j}[{size * (hi - lo)}] = "
                     + _c_array(W, single) + ";")
        lines.append(f"static const {real} {name}_b{j}[{size}] = " + _c_array(b, single) + ";")
        lines.append("")
    return lines


def _c_forward_body(net, layers, name, real, fns):
    """The opening of the one-pattern function and its layer-by-layer forward pass
    (through the last layer's activations), as lines; to_c closes it."""
    lines = [
        f"void {name}(const {real} *x, {real} *y)",
        "{",
        f"    {real} u[{net.n_units}];   /* inputs, then every layer's units */",
        "    int i, k;",
        f"    for (i = 0; i < {net.n_in}; i++)",
        "        u[i] = x[i];",
    ]
    for j, (start, size, lo, hi, _, _, act) in enumerate(layers, start=1):
        z = "z"
        lines += [
            f"    /* layer {j} */",
            f"    for (k = 0; k < {size}; k++) {{",
            f"        {real} z = {name}_b{j}[k];",
            f"        for (i = 0; i < {hi - lo}; i++)",
            f"            z += {name}_W{j}[k * {hi - lo} + i] * u[{lo} + i];",
        ]
        if act == "softmax":
            lines.append(f"        u[{start} + k] = z;")
        else:
            lines.append(f"        u[{start} + k] = " + _C_ACTIVATION[act].format(z=z, **fns) + ";")
        lines.append("    }")
        if act == "softmax":
            lines += [
                "    {   /* softmax: exp(z_k - max z) / sum of them */",
                f"        {real} top = u[{start}], sum = {fns['zero']};",
                f"        for (k = 1; k < {size}; k++)",
                f"            if (u[{start} + k] > top)",
                f"                top = u[{start} + k];",
                f"        for (k = 0; k < {size}; k++) {{",
                f"            u[{start} + k] = {fns['exp']}(u[{start} + k] - top);",
                f"            sum += u[{start} + k];",
                "        }",
                f"        for (k = 0; k < {size}; k++)",
                f"            u[{start} + k] /= sum;",
                "    }",
            ]
    return lines


def to_c(net, path: PathLike | None = None, *, name: str = "fastnet_predict",
         dtype="float64") -> str:
    """The network as one self-contained C99 source file (and written to ``path``).

    Parameters
    ----------
    net : MLP
        The network; its weights become ``static const`` arrays in the source.
    path : str or path-like, optional
        Where to write the source (``.c``), atomically.
    name : str, default "fastnet_predict"
        Name of the function (a C identifier, not a keyword); the batch function
        is ``<name>_batch`` and the arrays and size macros take the same prefix.
    dtype : {"float64", "float32"}, default "float64"
        ``double`` or ``float`` throughout (weights, arithmetic, the
        ``<math.h>`` functions used: ``exp``/``expf``, ``tanh``/``tanhf``,
        ``fabs``/``fabsf``).

    Returns
    -------
    source : str
        C99 defining::

            void NAME(const double *x, double *y);   /* one pattern: x[n_in] -> y[n_out] */
            void NAME_batch(const double *x, double *y, size_t n_patterns);
                                                     /* row-major x[n][n_in] -> y[n][n_out] */

        and the macros ``NAME_N_INPUTS`` and ``NAME_N_OUTPUTS`` (upper case).
        The functions allocate nothing (one array of the network's units on
        the stack), are thread-safe and re-entrant, and need only ``<math.h>``
        and ``<stddef.h>``; compile with e.g. ``cc -O2 -c net.c`` (and link
        ``-lm``).

    Raises
    ------
    TypeError
        If ``net`` is not an :class:`~fastnet.MLP`, or ``name`` not a string.
    ValueError
        If ``name`` is not a C identifier of at most 63 characters or is a
        reserved word, ``dtype`` is not float64 or float32, ``path`` is a
        directory, or the network has more than ``MAX_C_CONNECTIONS`` weights.
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

    Examples
    --------
    >>> from fastnet import MLP
    >>> from fastnet.export import to_c
    >>> source = to_c(MLP(2, (2,), 1, hidden_activation="tanh", seed=0), name="xor_net")
    >>> print(next(line for line in source.splitlines() if line.startswith("void xor_net(")))
    void xor_net(const double *x, double *y)
    """
    _check_net(net, "to_c")
    dt = _check_dtype(dtype)
    path = _check_path(path)
    if net.n_connections > MAX_C_CONNECTIONS:
        raise ValueError(f"to_c: the network has {net.n_connections:,} connections, more than "
                         f"MAX_C_CONNECTIONS ({MAX_C_CONNECTIONS:,}): its C source would take "
                         "gigabytes and compilers fail on arrays that large; export it with "
                         "to_onnx instead.")
    _check_c_name(name)
    single = dt == np.float32
    real = "float" if single else "double"
    fns = {"exp": "expf" if single else "exp", "tanh": "tanhf" if single else "tanh",
           "fabs": "fabsf" if single else "fabs", "one": "1.0f" if single else "1.0",
           "zero": "0.0f" if single else "0.0"}
    lines = _c_header(net, name, real)
    layers = list(_layers(net))
    lines += _c_weight_arrays(layers, name, real, single)
    lines += _c_forward_body(net, layers, name, real, fns)
    out0 = net.n_units - net.n_out
    lines += [
        f"    for (k = 0; k < {net.n_out}; k++)",
        f"        y[k] = u[{out0} + k];",
        "}",
        "",
        f"void {name}_batch(const {real} *x, {real} *y, size_t n_patterns)",
        "{",
        "    size_t r;",
        "    for (r = 0; r < n_patterns; r++)",
        f"        {name}(x + r * {net.n_in}, y + r * {net.n_out});",
        "}",
        "",
    ]
    source = "\n".join(lines)
    if path is not None:
        atomic_write(path, lambda f: f.write(source.encode("utf-8")))
    return source

