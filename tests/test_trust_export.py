"""The exporters' names, storage and weight range, and a fuzz of both exporters.

Every C file is compiled with the system's compiler under ``-std=c99 -Wall -Wextra
-pedantic -Werror`` (and in GNU mode with ``-D_GNU_SOURCE``, where <math.h> declares
the most) and run against ``net.predict``; exports of many names share one
compilation where their identifiers do not meet.
"""
import ctypes
import itertools
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from _extras import needs
from fastnet import MLP
from fastnet.export import C_NAME_MAX, C_STACK_UNITS, to_c, to_onnx

C99 = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]
GNU = ["-std=gnu17", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror"]
HIDDEN_ACTIVATIONS = ("linear", "proben1", "logistic", "tanh", "relu")
OUTPUT_ACTIVATIONS = ("linear", "proben1", "logistic", "tanh", "relu", "softmax")


def _cc():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:                                    # pragma: no cover
        pytest.fail("no C compiler (cc) on PATH: the C export cannot be checked")
    return cc


def _build(source, tmp_path, stem, flags, shared=True):
    """Compile ``source`` (a shared library, or a program); fail showing the compiler's words."""
    c_file = tmp_path / f"{stem}.c"
    out = tmp_path / (f"{stem}.so" if shared else stem)
    c_file.write_text(source)
    extra = ["-shared", "-fPIC"] if shared else []
    done = subprocess.run([_cc(), *flags, "-O1", *extra, str(c_file), "-o", str(out), "-lm"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"{stem}.c does not compile with {' '.join(flags)}:\n{done.stderr[:3000]}")
    return ctypes.CDLL(str(out)) if shared else out


def _call(lib, name, X, n_out, dtype, how):
    """Outputs of NAME_batch, NAME (row by row) or NAME_r (row by row, caller's work)."""
    X = np.ascontiguousarray(X, dtype=dtype)
    Y = np.full((X.shape[0], n_out), np.nan, dtype=dtype)
    ptr = ctypes.c_void_p
    if how == "batch":
        fn = getattr(lib, f"{name}_batch")
        fn.restype = None
        fn(X.ctypes.data_as(ptr), Y.ctypes.data_as(ptr), ctypes.c_size_t(X.shape[0]))
        return Y
    fn = getattr(lib, name if how == "one" else f"{name}_r")
    fn.restype = None
    work = np.full(4096 * 4, np.nan, dtype=dtype)
    for row in range(X.shape[0]):
        x, y = X[row:row + 1], Y[row:row + 1]
        if how == "one":
            fn(x.ctypes.data_as(ptr), y.ctypes.data_as(ptr))
        else:
            fn(x.ctypes.data_as(ptr), y.ctypes.data_as(ptr), work.ctypes.data_as(ptr))
    return Y


def _file_scope(name, net):
    """The identifiers with file scope that to_c(net, name=name) defines."""
    upper = name.upper()
    ids = {name, f"{name}_r", f"{name}_batch", f"{name}_units",
           f"{upper}_N_INPUTS", f"{upper}_N_OUTPUTS", f"{upper}_N_UNITS"}
    return ids | {f"{name}_{a}{j}" for a in "Wb" for j in range(1, net.n_layers + 1)}


def _groups(exports):
    """Split (name, net) pairs into groups whose file-scope identifiers do not meet."""
    groups = []
    for name, net in exports:
        ids = _file_scope(name, net)
        for group in groups:
            if not ids & group[0]:
                group[0].update(ids)
                group[1].append((name, net))
                break
        else:
            groups.append([set(ids), [(name, net)]])
    return [members for _, members in groups]


def _small_net(seed, n_in=3, n_out=2):
    rng = np.random.default_rng(seed)
    hidden = ((), (3,), (2, 2))[seed % 3]
    return MLP(n_in, hidden, n_out, shortcut=bool(seed % 2),
               hidden_activation=HIDDEN_ACTIVATIONS[seed % len(HIDDEN_ACTIVATIONS)],
               output_activation=OUTPUT_ACTIVATIONS[seed % 6], init_scale=1.5,
               seed=int(rng.integers(1000)))


def _compile_and_compare(exports, tmp_path, dtype, flags, stem):
    """Compile every (name, net) export (grouped), and hold all three entry points to predict."""
    rtol = 1e-12 if dtype == "float64" else 2e-5
    for g, group in enumerate(_groups(exports)):
        source = "\n".join(to_c(net, name=name, dtype=dtype) for name, net in group)
        lib = _build(source, tmp_path, f"{stem}{g}", flags)
        for name, net in group:
            X = np.random.default_rng(len(name)).normal(0.0, 2.0, (5, net.n_in))
            if dtype == "float32":
                X = X.astype(np.float32).astype(np.float64)
            expected = net.predict(X)
            for how in ("batch", "one", "r"):
                got = _call(lib, name, X, net.n_out, dtype, how)
                np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol,
                                           err_msg=f"{name!r} {how} {dtype}")


# ------------------------------------------------------------------ names
# Each was accepted and wrote C that did not compile (or, for "net\n", was accepted at all).
ISSUE_NAMES = ["x", "y", "r", "exp", "tanh", "fabs", "sqrt", "nan", "fma", "isnan", "signbit",
               "NAN", "INFINITY", "HUGE_VAL", "size_t", "ptrdiff_t", "_Pragma", "net\n"]
# Names that clash with nothing: each must compile and equal predict, whatever the
# generated code calls its own parameters, locals, arrays and macros.
EDGE_NAMES = ["x", "y", "r", "u", "i", "k", "z", "p", "n", "work", "top", "sum", "units",
              "n_patterns", "W1", "b1", "X", "Y", "net_r", "net", "a_batch", "a", "x_u", "x_x",
              "fastnet_predict_x", "y2", "j2", "jv", "tanh_net", "Exp", "EXP", "TANH", "inf",
              "INF", "infinity", "nan_", "isnan_", "restrict_", "size", "size_t_", "f", "d", "l",
              "F", "e", "E", "pi", "PI", "M", "FP", "HUGE", "M_", "a__b", "float32", "main_",
              "real", "q" * C_NAME_MAX]
REFUSED_NAMES = {
    "exp": "<math.h>", "tanh": "<math.h>", "fabs": "<math.h>", "sqrt": "<math.h>",
    "nan": "<math.h>", "fma": "<math.h>", "isnan": "<math.h>", "signbit": "<math.h>",
    "NAN": "<math.h>", "INFINITY": "<math.h>", "HUGE_VAL": "<math.h>", "y0": "<math.h>",
    "j1": "<math.h>", "expf": "<math.h>", "tanhf": "<math.h>", "logl": "<math.h>",
    "M_PI": "<math.h>", "lgamma_r": "<math.h>", "expf32x": "<math.h>", "fadd": "<math.h>",
    "exp10": "<math.h>", "float_t": "<math.h>", "math_errhandling": "<math.h>",
    "size_t": "<stddef.h>", "ptrdiff_t": "<stddef.h>", "NULL": "<stddef.h>",
    "offsetof": "<stddef.h>", "max_align_t": "<stddef.h>",
    "int": "C keyword", "double": "C keyword", "restrict": "C keyword", "bool": "C keyword",
    "typeof": "C keyword", "constexpr": "C keyword", "asm": "C keyword",
    "_Bool": "C keyword", "_Pragma": "begins with '_'", "_net": "begins with '_'",
    "__net": "begins with '_'", "__func__": "begins with '_'", "main": "entry point",
    "linux": "predefine", "unix": "predefine",
    "net\n": "must be a C identifier", "net\r\n": "must be a C identifier",
    "n\u00e9t": "must be a C identifier", "net\x00": "must be a C identifier",
    "q" * (C_NAME_MAX + 1): "must be a C identifier", "": "must be a C identifier",
    "9net": "must be a C identifier", "net-1": "must be a C identifier",
}


@pytest.mark.parametrize("name", sorted(REFUSED_NAMES), ids=repr)
def test_c_export_refuses_a_reserved_name_saying_why(name):
    with pytest.raises(ValueError, match=r"^`name` .*" + re.escape(REFUSED_NAMES[name])) as info:
        to_c(MLP(2, (2,), 1, seed=0), name=name)
    assert repr(name) in str(info.value)


def test_each_name_of_the_issue_is_refused_or_compiles(tmp_path):
    net = MLP(3, (2,), 2, hidden_activation="tanh", seed=4)
    accepted = []
    for name in ISSUE_NAMES:
        try:
            to_c(net, name=name)
        except ValueError as exc:
            assert str(exc).startswith("`name`") and repr(name) in str(exc)
        else:
            accepted.append(name)
    assert accepted == ["x", "y", "r"]
    _compile_and_compare([(name, net) for name in accepted], tmp_path, "float64", C99, "issue")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_edge_names_compile_and_equal_predict(dtype, tmp_path):
    exports = [(name, _small_net(i)) for i, name in enumerate(EDGE_NAMES)]
    _compile_and_compare(exports, tmp_path, dtype, C99, "edge")


def test_every_accepted_identifier_the_headers_mention_compiles(tmp_path):
    # Everything the preprocessor shows of <math.h> and <stddef.h> with every GNU
    # extension on (function names, macros, parameter names, words of file names):
    # to_c refuses it, or its export compiles in both modes.
    (tmp_path / "h.c").write_text("#include <math.h>\n#include <stddef.h>\n")
    text = subprocess.run([_cc(), *GNU, "-E", "-dD", str(tmp_path / "h.c")],
                          capture_output=True, text=True, check=True).stdout
    names = sorted(set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", text)))
    net = MLP(2, (2,), 1, hidden_activation="tanh", seed=0)
    accepted = []
    for name in names:
        try:
            to_c(net, name=name)
        except ValueError:
            continue
        accepted.append(name)
    assert "exp" in names and "exp" not in accepted and "size_t" not in accepted
    assert len(accepted) >= 10
    exports = [(name, net) for name in accepted]
    _compile_and_compare(exports, tmp_path, "float64", GNU, "gnu")
    _compile_and_compare(exports, tmp_path, "float64", C99, "c99")


def test_float32_export_refuses_a_weight_beyond_float32(tmp_path):
    net = MLP(2, (3,), 1, shortcut=False, seed=0)      # layer 1: W 3x2 at 0..5, b at 6..8
    fmax, w0 = float(np.finfo(np.float32).max), net.weights.copy()
    for index, value, where in [(4, 1e39, r"layer 1, the weight from unit 0 to unit 4"),
                                (7, -1e39, r"layer 1, the bias of unit 3"),
                                (10, 1e150, r"layer 2, the weight from unit 3 to unit 5")]:
        w = w0.copy()
        w[index] = value
        net.set_weights(w)
        message = (rf"`dtype` float32 cannot hold weight {index} of `net` \({where}\): "
                   rf"{re.escape(repr(value))} is beyond float32's largest value")
        with pytest.raises(ValueError, match="to_c: " + message):
            to_c(net, dtype="float32")
        with pytest.raises(ValueError, match="to_onnx: " + message):
            to_onnx(net, dtype="float32")
        assert "inf" not in to_c(net)                 # float64 holds it
    w[:] = fmax                                       # the largest float32 still fits
    net.set_weights(w)
    assert "inf" not in to_c(net, dtype="float32").split("*/", 1)[1]


@pytest.mark.parametrize("dtype, big", [("float32", 3e38), ("float64", 1e308)])
def test_c_export_never_turns_an_overflowed_relu_net_input_into_a_finite_output(dtype, big, tmp_path):
    # 2-1-1 relu: the hidden net input is 2 * big + 2 * (-big), inf - inf = NaN where each
    # product rounds to inf first (no FMA), and +inf where an FMA keeps the second
    # product exact (predict's kernels). Either way the output is not finite, as
    # predict's is (it warns); the C file's relu turned NaN into 0 and gave the output
    # bias, 0.25, a finite output that no other path gives. Rows whose sums stay
    # finite still equal predict (the docstring's Notes: only overflow differs).
    net = MLP(2, (1,), 1, shortcut=False, hidden_activation="relu", seed=0, dtype=dtype)
    net.set_weights(np.array([2.0, 2.0, 0.0, 0.5, 0.25]))
    X = np.array([[big, -big], [big, big], [1.0, 2.0]])
    with pytest.warns(RuntimeWarning, match="overflowed to inf or NaN"):
        expected = net.predict(X)
    lib = _build(to_c(net, name="relu_net"), tmp_path, f"relu_{dtype}", C99)
    for how in ("batch", "one", "r"):
        got = _call(lib, "relu_net", X, 1, dtype, how)
        assert not np.isfinite(got[:2]).any(), (how, got)
        assert np.array_equal(np.isfinite(got), np.isfinite(expected))
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)
    assert "relu_net_z < 0.0" in to_c(net, name="relu_net", dtype="float64")


def test_export_docstrings_say_where_they_differ_from_predict():
    assert "Overflow: where inputs (or weights) are so large" in to_c.__doc__
    assert "the model may give other outputs than ``predict``" in to_onnx.__doc__
    page = (Path(__file__).resolve().parents[1] / "docs" / "embedding.md").read_text(encoding="utf-8")
    assert "Where sums overflow, the exports differ from `predict`." in page


def test_onnx_name_must_be_utf8():
    with pytest.raises(ValueError, match="`name` must be text that UTF-8 can encode"):
        to_onnx(MLP(2, (), 1, seed=0), name="net\ud800")


# ------------------------------------------------------------------ storage
def test_c_storage_is_the_stack_up_to_c_stack_units_then_static():
    assert C_STACK_UNITS == 4096
    at = to_c(MLP(1, (C_STACK_UNITS - 2,), 1, shortcut=False, seed=0), name="at")
    above = to_c(MLP(1, (C_STACK_UNITS - 1,), 1, shortcut=False, seed=0), name="above")
    assert "on the stack: thread-safe and re-entrant" in at
    assert "static double at_units" not in at and "double at_u[AT_N_UNITS];" in at
    assert "#define AT_N_UNITS 4096" in at
    assert "static double above_units[ABOVE_N_UNITS];" in above
    assert "NOT thread-safe" in above and "above_r" in above.split("*/")[0]
    assert "static float" in to_c(MLP(1, (C_STACK_UNITS,), 1, seed=0), dtype="float32")


def test_a_large_network_runs_with_a_small_stack(tmp_path):
    # 1-40000-1: 40,002 units are 320 kB, more than a 256 kB stack. Before, the units
    # lived on the stack and the program died of SIGSEGV.
    net = MLP(1, (40_000,), 1, shortcut=False, hidden_activation="tanh", seed=0)
    rng = np.random.default_rng(0)     # weights with short literals: a quick compile
    net.set_weights(rng.choice([0.5, -0.25, 0.125, -1.5, 2.0, 0.75, -0.0625], net.weights.size))
    main = """
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    double x[3] = {0.3, -1.2, 2.5}, y[3], *work = malloc(sizeof(double) * BIG_N_UNITS);
    int k;
    if (work == NULL)
        return 2;
    big_batch(x, y, 2);
    big(x + 2, y + 2);
    for (k = 0; k < 3; k++)
        printf("%.17g\\n", y[k]);
    big_r(x + 1, y, work);
    printf("%.17g\\n", y[0]);
    free(work);
    return 0;
}
"""
    prog = _build(to_c(net, name="big") + main, tmp_path, "big", C99, shared=False)
    done = subprocess.run(["bash", "-c", f"ulimit -s 256 && exec '{prog}'"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr)
    got = np.array([float(v) for v in done.stdout.split()])
    expected = net.predict(np.array([[0.3], [-1.2], [2.5], [-1.2]]))[:, 0]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# ------------------------------------------------------------------ fuzz
SPECIAL_WEIGHTS = (1e39, -1e39, 5e-324, -5e-324, 1e-310, 1e-40, -1e-46, np.nan, np.inf, -np.inf,
                   1e150, -1e150, -0.0, 0.0, 3e38, -1e151)
RESERVED_POOL = sorted(REFUSED_NAMES) + ["while", "_Alignas", "sinf", "M_E", "FP_NAN", "wchar_t",
                                         "acosh", "nexttoward", "thread_local", "__STDC__"]
ALPHA = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
ALNUM = ALPHA + list("0123456789")


def _random_name(rng):
    """A name of one of seven kinds: valid-looking, reserved, '_'-led, with a non-ASCII
    character, with a trailing newline or space, very long, or malformed."""
    valid = str(rng.choice(ALPHA)) + "".join(rng.choice(ALNUM, size=int(rng.integers(0, 12))))
    kind = int(rng.integers(9))          # 0, 7, 8: valid-looking
    if kind == 1:
        return str(rng.choice(RESERVED_POOL)) + str(rng.choice(["", "", "f", "l", "_"]))
    if kind == 2:
        return "_" + valid
    if kind == 3:
        at = int(rng.integers(len(valid) + 1))
        return valid[:at] + str(rng.choice(["\u00e9", "\u03a9", "\u540d", "\u0660", "\u200b",
                                            "\U0001f600", "\ufb01", "\ud800"])) + valid[at:]
    if kind == 4:
        return valid + str(rng.choice(["\n", "\r\n", " ", "\t", "\x00"]))
    if kind == 5:
        return str(rng.choice(ALPHA)) * int(rng.integers(C_NAME_MAX - 2, 300))
    if kind == 6:
        return str(rng.choice(["1", "-", "", "."])) + valid + str(rng.choice(["-x", ".", "", "$"]))
    return valid


def _fuzz_names(n, seed):
    rng = np.random.default_rng(seed)
    return list(dict.fromkeys(_random_name(rng) for _ in range(n)))


def test_fuzz_c_names_are_refused_with_the_reason_or_compile(tmp_path):
    names = _fuzz_names(200, 46)
    accepted = []
    for i, name in enumerate(names):
        net = _small_net(i)
        try:
            to_c(net, name=name)
        except ValueError as exc:
            assert str(exc).startswith("`name`") and repr(name) in str(exc), (name, exc)
            continue
        accepted.append((name, net))
    assert 50 <= len(accepted) <= len(names) - 80, len(accepted)    # both kinds drawn often
    _compile_and_compare(accepted, tmp_path, "float64", C99, "fuzz64")
    _compile_and_compare(accepted, tmp_path, "float32", GNU, "fuzz32")


def test_fuzz_onnx_names_are_refused_or_stored():
    onnx = needs("onnx")
    net = MLP(3, (2,), 2, seed=0)
    for name in _fuzz_names(60, 47) + ["", "net\ud800", "\x00", " "]:
        try:
            model = to_onnx(net, name=name)
        except ValueError as exc:
            assert str(exc).startswith("`name`") and repr(name) in str(exc), (name, exc)
            assert name == "" or "\ud800" in name
            continue
        assert onnx.load_from_string(model.SerializeToString()).graph.name == name


def _reference_and_bound(net, X, eps, act_rel, act_abs, limit):
    """predict's outputs in NumPy, a bound on how far a correct export computing at unit
    roundoff ``eps`` may be from them (sums of |terms| carried through each activation's
    largest slope on the interval), and which rows come within ``limit`` of overflowing."""
    from fastnet.network import ACTIVATIONS

    names = {code: name for name, code in ACTIVATIONS.items()}
    u = np.zeros((X.shape[0], net.n_units))
    e = np.zeros_like(u)
    u[:, :net.n_in] = X
    near_overflow = np.zeros(X.shape[0], dtype=bool)
    w = net.weights
    for start, size, lo, hi, w_off, b_off, code in net.layer_table.tolist():
        W, b = w[w_off:b_off].reshape(size, hi - lo), w[b_off:b_off + size]
        with np.errstate(all="ignore"):
            z = u[:, lo:hi] @ W.T + b
            mag = np.abs(u[:, lo:hi]) @ np.abs(W).T + np.abs(b)
            ez = (hi - lo + 2) * eps * mag + e[:, lo:hi] @ np.abs(W).T
            d = np.maximum(np.abs(z) - ez, 0.0)          # the |z| nearest 0 in z +- ez
            act = names[code]
            if act == "softmax":
                y = np.exp(z - z.max(axis=1, keepdims=True))
                y /= y.sum(axis=1, keepdims=True)
                slope, ez = 2.0, np.broadcast_to(ez.max(axis=1, keepdims=True), ez.shape)
            elif act == "tanh":
                y, slope = np.tanh(z), 1.0 - np.tanh(d) ** 2
            elif act == "logistic":
                y, slope = 0.5 + 0.5 * np.tanh(z / 2), 0.25 * (1.0 - np.tanh(d / 2) ** 2)
            elif act == "proben1":
                y, slope = z / (1.0 + np.abs(z)), 1.0 / (1.0 + d) ** 2
            elif act == "relu":
                y, slope = np.maximum(z, 0.0), 1.0
            else:
                y, slope = z, 1.0
        near_overflow |= ~(mag < limit).all(axis=1)
        u[:, start:start + size] = y
        e[:, start:start + size] = slope * ez + act_rel * np.abs(y) + act_abs
    return u[:, -net.n_out:], e[:, -net.n_out:], near_overflow


def _assert_export_equals(got, net, X, dtype, onnx):
    """Hold an export's outputs to predict: 1e-12 relative in float64, 1e-6 in float32,
    or (under cancellation) 4x the rounding bound; rows where float32 (float64) sums
    come near overflowing are left out: float arithmetic, not the export, decides them."""
    single = dtype == "float32"
    eps = float(np.finfo(dtype).eps) / 2
    ref, bound, skip = _reference_and_bound(
        net, X, eps, act_rel=8 * eps, act_abs=4e-6 if single and onnx else 0.0,
        limit=1e37 if single else 1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # predict warns where sums overflow
        expected = net.predict(X)
    check = np.isfinite(expected) & np.isfinite(bound) & ~skip[:, None]
    rtol, atol = (1e-6, 1e-37) if single else (1e-12, 1e-300)
    np.testing.assert_allclose(ref[check], expected[check], rtol=1e-9, atol=1e-300)
    err = np.abs(got.astype(np.float64) - expected)
    bad = check & ~(err <= 4 * bound + rtol * np.abs(expected) + atol)
    assert not bad.any(), (repr(net), dtype, got[bad], expected[bad], bound[bad])
    return int(check.sum())


def _fuzz_networks(n, seed):
    """(net, weights) pairs: random small networks, each with up to four special weights."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n):
        hidden = tuple(int(h) for h in rng.integers(1, 5, size=int(rng.integers(0, 3))))
        n_out = int(rng.integers(1, 4))
        output = str(rng.choice(OUTPUT_ACTIVATIONS[:-1] if n_out == 1 else OUTPUT_ACTIVATIONS))
        net = MLP(int(rng.integers(1, 5)), hidden, n_out,
                  shortcut=bool(rng.integers(2)),
                  hidden_activation=str(rng.choice(HIDDEN_ACTIVATIONS)),
                  output_activation=output, init_scale=float(rng.choice([0.5, 2.0])), seed=int(rng.integers(10**6)))
        w = net.weights.copy()
        at = rng.choice(w.size, size=min(int(rng.integers(0, 5)), w.size), replace=False)
        w[at] = rng.choice(SPECIAL_WEIGHTS, size=at.size)
        cases.append((net, w))
    return cases


def _fuzz_exports(export, n, seed):
    """Yield (net, dtype, result) for each network the export accepted; assert every
    refusal is a ValueError naming the argument."""
    fmax = float(np.finfo(np.float32).max)
    counts = {"set_weights refused": 0, "float32 refused": 0}
    for net, w in _fuzz_networks(n, seed):
        try:
            net.set_weights(w)
        except ValueError as exc:                       # NaN, inf, beyond MAX_WEIGHT
            assert str(exc).startswith("`w` must be finite"), exc
            counts["set_weights refused"] += 1
            continue
        for dtype in ("float64", "float32"):
            try:
                result = export(net, dtype)
            except ValueError as exc:
                assert dtype == "float32" and np.abs(net.weights).max() > fmax, exc
                assert "`dtype` float32 cannot hold weight" in str(exc) and "`net`" in str(exc)
                counts["float32 refused"] += 1
                continue
            assert dtype == "float64" or np.abs(net.weights).max() <= fmax
            yield net, dtype, result
    assert min(counts.values()) >= 3, counts          # both refusals were drawn


def _fuzz_inputs(net, dtype, i):
    X = np.random.default_rng(i).normal(0.0, 1.5, (4, net.n_in))
    return X.astype(np.float32).astype(np.float64) if dtype == "float32" else X


def test_fuzz_c_weights_are_refused_or_exported_exactly(tmp_path):
    number = itertools.count()
    cases = list(_fuzz_exports(lambda net, dtype: (
        f"fz{next(number)}", to_c(net, name=f"fz{next(number) - 1}", dtype=dtype)), 60, 48))
    for dtype in ("float64", "float32"):
        mine = [(net, name, source) for net, dt, (name, source) in cases if dt == dtype]
        lib = _build("\n".join(source for *_, source in mine), tmp_path, f"w_{dtype}", C99)
        compared = 0
        for i, (net, name, _) in enumerate(mine):
            X = _fuzz_inputs(net, dtype, i)
            got = _call(lib, name, X, net.n_out, dtype, "batch")
            compared += _assert_export_equals(got, net, X, dtype, onnx=False)
        assert compared >= 100


def test_fuzz_onnx_weights_are_refused_or_exported_exactly():
    needs("onnx")
    from test_serving import _onnx_run

    compared = 0
    for i, (net, dtype, model) in enumerate(_fuzz_exports(
            lambda net, dtype: to_onnx(net, dtype=dtype), 60, 48)):
        X = _fuzz_inputs(net, dtype, i)
        got = _onnx_run(model, X.astype(dtype))
        compared += _assert_export_equals(got, net, X, dtype, onnx=True)
    assert compared >= 200
