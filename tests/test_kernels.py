"""Kernels against the plain-NumPy oracle (tests/_reference.py) and finite differences."""
import os
import platform
import subprocess
import sys
import sysconfig

import numpy as np
import pytest
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import MLP, _engine  # (_engine: the activation buffers, as the kernels take them)
from fastnet._kernels import _backward, _forward, _rprop, _simd, _trials
# (the flags this build was compiled with: no public face)
from fastnet._provenance import build_flags
from fastnet.measures import threshold_correct
from fastnet.network import ACTIVATIONS, HIDDEN_ACTIVATIONS
from fastnet.rprop import VARIANTS

KERNELS_DIR = os.path.join(os.path.dirname(os.path.abspath(_rprop.__file__)))

NETS = [
    (3, (), 2, True), (3, (), 2, False),
    (4, (5,), 3, True), (4, (5,), 3, False),
    (5, (4, 3), 2, True), (5, (4, 3), 2, False),
    (6, (5, 4, 3), 3, True), (6, (5, 4, 3), 3, False),
    (7, (9, 6), 5, True), (7, (9, 6), 5, False),   # layers wider than NARROW_LAYER: BLAS
    (3, (40,), 2, True), (3, (40,), 2, False),     # wider than GRAD_LOOP_UNITS: BLAS gradient
    # AVX-512 tiles (where the CPU has them): > FN512_KC = 128 inputs (packed in
    # chunks), > 32 units (several column panels), unit counts that leave tails.
    (130, (33,), 7, True), (20, (70, 9), 10, False), (17, (8,), 1, True),
]
# blas_min 0 sends every product to BLAS, a huge value none: both paths are tested.
PATHS = {"blas": 0, "loops": 10**12}


def make(n_in, hidden, n_out, shortcut, hidden_act="proben1", out_act="linear", seed=0):
    net = MLP(n_in, hidden, n_out, shortcut=shortcut, hidden_activation=hidden_act,
              output_activation=out_act)
    net.init_weights(seed, scale=0.8)
    rng = np.random.default_rng(seed + 100)
    X = rng.uniform(-1, 1, (23, n_in))
    T = rng.uniform(0, 1, (23, n_out))
    return net, X, T


def kernel_gradient(net, X, T, blas_min, block):
    A = _engine.activations(net, X)
    A[:, net.n_units:] = np.nan   # row padding: never read, never written
    n_nonin = net.n_units - net.n_in
    # (workspaces: whatever they hold is written before it is read)
    D = np.full((block, n_nonin), np.nan)
    Dl = np.full((block, n_nonin), np.nan)
    g = np.empty(net.n_connections)
    sse = _backward.gradient(A, T, net.layer_table, net.n_in, net.weights, g, D, Dl, blas_min)
    return g, sse


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("spec", NETS)
@pytest.mark.parametrize("act", ["proben1", "logistic", "tanh", "linear"])
def test_forward_matches_reference(spec, act, path):
    net, X, T = make(*spec, hidden_act=act, out_act=act)
    A = _engine.activations(net, X)
    _forward.forward(A, net.layer_table, net.n_in, net.weights, 5, PATHS[path])
    assert_allclose(A[:, net.n_units - net.n_out:net.n_units], ref.predict(net, X), rtol=1e-12, atol=1e-14)
    assert_allclose(net.predict(X), ref.predict(net, X), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden", [(1,), (2,), (7,), (8,), (13,), (33,), (70, 5)])
def test_products_match_reference_on_every_tile_shape(hidden, shortcut):
    # Row counts and widths around the AVX-512 tile sizes (6-row panels, 8-lane
    # vectors, 32-unit column panels, 128-input chunks, 4-row dot products) and
    # the AVX2 loops' (4 rows, 4 lanes, 16-input vector dots), both sides of each.
    for n_in in (1, 8, 9, 16, 40, 57, 63, 100, 130):
        for n_rows in (1, 5, 6, 13, 50):
            net = MLP(n_in, hidden, 3, shortcut=shortcut).init_weights(n_in + n_rows, scale=0.8)
            rng = np.random.default_rng(n_rows)
            X = rng.uniform(-1, 1, (n_rows, n_in))
            T = rng.uniform(0, 1, (n_rows, 3))
            for block in (4, 64):
                A = _engine.activations(net, X)
                A[:, net.n_units:] = np.nan   # row padding: never read, never written
                _forward.forward(A, net.layer_table, n_in, net.weights, block, 10**12)
                assert np.isnan(A[:, net.n_units:]).all()
                assert_allclose(A[:, net.n_units - 3:net.n_units], ref.predict(net, X), rtol=1e-12, atol=1e-14)
                g, sse = kernel_gradient(net, X, T, 10**12, block)
                g_ref, sse_ref = ref.gradient(net, X, T)
                assert_allclose(sse, sse_ref, rtol=1e-12)
                assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)


def _cpu_flags():
    if platform.machine() not in ("x86_64", "AMD64") or not os.path.exists("/proc/cpuinfo"):
        return set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def _simd_in(env_value):
    env = dict(os.environ)
    env.pop("FASTNET_SIMD", None)
    if env_value is not None:
        env["FASTNET_SIMD"] = env_value
    code = "from fastnet._kernels import _forward; print(_forward.simd_level())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_simd_level_follows_the_cpu_and_the_environment():
    # CI runs on AVX-512 machines: the AVX-512 kernels must then be the ones the
    # tests above check, and FASTNET_SIMD must cap the level (the choice is made at
    # import, so each setting is tried in a fresh process).
    flags = _cpu_flags()
    cpu = ("avx512" if {"avx512f", "avx512dq", "avx2", "fma"} <= flags
           else "avx2" if {"avx2", "fma"} <= flags else "default")
    order = ["default", "avx2", "avx512"]
    native = order[min(order.index(cpu), order.index(_forward.simd_compiled()))]
    cc = sysconfig.get_config_var("CC") or ""
    if (platform.machine() == "x86_64" and "gcc" in cc
            and "FASTNET_NO_SIMD_TILES" not in str(build_flags()["extra_compile_args"])):
        assert _forward.simd_compiled() == "avx512"   # GCC on x86-64 (CI) builds the tiles
    assert _simd_in(None) == native
    assert _simd_in("none") == "default"
    assert _simd_in("avx2") == ("avx2" if native in ("avx512", "avx2") else "default")
    assert _forward.simd_level() == {None: native, "avx2": _simd_in("avx2"),
                                     "none": "default"}[os.environ.get("FASTNET_SIMD")]


# The oracle tests again in processes with the CPU level capped (FASTNET_SIMD): what
# CPUs without AVX-512 run. Each case is a pytest run of its own; the selected ones
# all start when the first of them is reached and run beside each other and beside
# this process (which waits on them), so that the two cores are busy.
_CAPPED_RUNS = {
    # the AVX2 tiles and the loops + BLAS: the kernels' and training's oracle tests
    "reference": (("test_kernels.py", "test_rprop.py", "test_backprop.py"),
                  "reference or success_check"),
    # the lanes and trials kernels, compiled per CPU level too (one dispatcher,
    # _cpu.h; the tiny kernels at x86-64-v4 and x86-64-v3, none in x86's baseline,
    # where their tests skip). (Quickprop's parting test is judged over the trials
    # but left to the CPU's own level.)
    "lanes": (("test_rprop_many.py", "test_lanes_rules.py", "test_online_lanes.py"),
              "not quickprop_trials_part"),
}
_capped_started = {}


def _capped_cases(session):
    """(group, level) of every capped run selected in this session."""
    cases = []
    for item in session.items:
        if item.originalname == "test_capped_level_runs_the_oracle_tests":
            cases.append((item.callspec.params["group"], item.callspec.params["level"]))
    return cases


def _start_capped(group, level):
    files, select = _CAPPED_RUNS[group]
    here = os.path.dirname(os.path.abspath(__file__))
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", select,
         *(os.path.join(here, f) for f in files)],
        env=dict(os.environ, FASTNET_SIMD=level), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def _capped_run(request, group, level):
    """The finished pytest process of (group, level), every selected one started at once."""
    if "launched" not in _capped_started:
        _capped_started["launched"] = True
        for case in _capped_cases(request.session):
            _capped_started[case] = _start_capped(*case)
    proc = _capped_started.pop((group, level), None) or _start_capped(group, level)
    out, err = proc.communicate()
    return proc.returncode, out, err


@pytest.mark.slow  # 10-13 s each alone on a loaded two-core machine, started together
@pytest.mark.parametrize("level", ["avx2", "none"])
@pytest.mark.parametrize("group", list(_CAPPED_RUNS))
def test_capped_level_runs_the_oracle_tests(request, group, level):
    if os.environ.get("FASTNET_SIMD"):
        pytest.skip("this run already has a capped level")
    code, out, err = _capped_run(request, group, level)
    assert code == 0, out[-3000:] + err[-3000:]
    assert " passed" in out


# The row-major GEMM of the register tiles (_tiles.h), straight: sizes on both
# sides of every tile bound of both instruction sets (4/8 lanes, 4/6-row tiles
# of 12/32 columns, 2-row tiles of 20/64 columns for C of one or two rows,
# 128-column chunks of W^T).
GEMM_M = (1, 2, 3, 5, 8, 13, 50)
GEMM_N = (1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 20, 21, 31, 32, 33, 40, 63, 64, 65, 70)
GEMM_K = (1, 3, 8, 9, 20, 127, 128, 129, 200)
GEMM_OPS = [("N", "T"), ("N", "N"), ("T", "N")]


def _gemm_case(ta, tb, m, n, k, seed, pad=3, dtype=np.float64):
    """Operands (of ``dtype``) as views of NaN-padded arrays: reading or writing past a
    row shows."""
    rng = np.random.default_rng(seed)

    def padded(rows, cols):
        X = np.full((rows, cols + pad), np.nan, dtype=dtype)
        X[:, :cols] = rng.uniform(-1, 1, (rows, cols))
        return X

    A = padded(k, m) if ta == "T" else padded(m, k)
    B = padded(n, k) if tb == "T" else padded(k, n)
    C = padded(m, n)
    return A, B, C, rng.uniform(-1, 1, n).astype(dtype)


def _broadcast_narrow(n, k):
    """AVX-512: a forward product of fewer than 8 units goes to the broadcast tiles when
    k multiply-adds per row are fewer than the dot products' operations (_simd.h)."""
    return 8 * k < 8 * n * (-(-k // 8)) + 21 * (-(-n // 2)) + 8 * n


def _gemm_tiles_take(ta, tb, n, beta, k):
    """Whether the tiles of this process's level compute the product (else it is declined)."""
    level = _forward.simd_level()
    if level == "default":
        return False
    if (ta, tb) == ("N", "T"):
        return n >= 4 if level == "avx2" else (n >= 8 or beta == 0.0 or _broadcast_narrow(n, k))
    return True


@pytest.mark.parametrize("ta,tb", GEMM_OPS)
def test_simd_gemm_matches_reference(ta, tb):
    for m in GEMM_M:
        for n in GEMM_N:
            for k in GEMM_K:
                for beta, with_bias in ((0.0, False), (1.0, False), (0.0, True), (1.0, True)):
                    A, B, C, bias = _gemm_case(ta, tb, m, n, k, m * 10007 + n * 101 + k)
                    Av, Bv, Cv = A[:, :A.shape[1] - 3], B[:, :B.shape[1] - 3], C[:, :n]
                    opA = Av.T if ta == "T" else Av
                    opB = Bv.T if tb == "T" else Bv
                    want = opA @ opB + beta * Cv + (bias if with_bias else 0.0)
                    C0 = C.copy()
                    done = _simd.gemm(ta, tb, Av, Bv, Cv, beta, bias if with_bias else None)
                    assert done == _gemm_tiles_take(ta, tb, n, beta, k), (ta, tb, m, n, k)
                    assert np.isnan(C[:, n:]).all()
                    if done:
                        assert_allclose(Cv, want, rtol=1e-12, atol=1e-12, err_msg=str((ta, tb, m, n, k)))
                    else:
                        assert_allclose(C, C0, rtol=0, atol=0)   # declined: untouched


def test_simd_gemm_scale_is_the_product_times_scale_bit_for_bit():
    # The back-propagation multiplies dE/da by f'(net) as the tiles store it: the same
    # double as the product stored and multiplied in a pass of its own, every tile
    # shape and masked tail; other operand pairs decline a scale, C untouched.
    rng = np.random.default_rng(5)
    for m in GEMM_M:
        for n in GEMM_N:
            for k in (1, 4, 9, 33):
                for beta in (0.0, 1.0):
                    A, B, C, _ = _gemm_case("N", "N", m, n, k, m * 7 + n * 131 + k)
                    Av, Bv = A[:, :k], B[:, :n]
                    S = np.full((m, n + 5), np.nan)
                    S[:, :n] = rng.uniform(-2, 2, (m, n))
                    C_plain = C.copy()
                    done = _simd.gemm("N", "N", Av, Bv, C[:, :n], beta, None, S[:, :n])
                    assert done == _gemm_tiles_take("N", "N", n, beta, k)
                    assert np.isnan(C[:, n:]).all()
                    if not done:
                        assert_allclose(C, C_plain, rtol=0, atol=0)
                        continue
                    assert _simd.gemm("N", "N", Av, Bv, C_plain[:, :n], beta)
                    want = C_plain[:, :n] * S[:, :n]
                    assert np.array_equal(C[:, :n], want), (m, n, k, beta)
    for ta, tb in (("T", "N"), ("N", "T")):
        A, B, C, _ = _gemm_case(ta, tb, 9, 12, 5, 1)
        Av, Bv, Cv = A[:, :A.shape[1] - 3], B[:, :B.shape[1] - 3], C[:, :12]
        C0 = C.copy()
        assert not _simd.gemm(ta, tb, Av, Bv, Cv, 0.0, None, np.ones((9, 12)))
        assert_allclose(C, C0, rtol=0, atol=0)
    with pytest.raises(ValueError, match="scale must have C's shape"):
        _simd.gemm("N", "N", np.zeros((4, 3)), np.zeros((3, 5)), np.zeros((4, 5)), 0.0, None,
                   np.zeros((4, 4)))


def test_simd_gemm_refuses_mismatched_operands():
    A, B, C = np.zeros((4, 3)), np.zeros((3, 5)), np.zeros((4, 5))
    with pytest.raises(ValueError, match="shapes do not fit"):
        _simd.gemm("N", "T", A, B, C)
    with pytest.raises(ValueError, match="bias"):
        _simd.gemm("N", "N", A, B, C, 0.0, np.zeros(4))
    with pytest.raises(ValueError, match="'N' or 'T'"):
        _simd.gemm("X", "N", A, B, C)
    with pytest.raises(ValueError, match="rows must be contiguous"):
        _simd.gemm("N", "N", A, np.zeros((3, 10))[:, ::2], C)


_GEMM_DUMP = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_kernels import GEMM_OPS, _gemm_case
from fastnet._kernels import _simd
dtype = np.dtype(sys.argv[3])
out = {}
for ta, tb in GEMM_OPS:
    for m in (5, 13):
        for n in (3, 8, 9, 13, 16, 17, 33, 65):
            for k in (9, 129):
                A, B, C, bias = _gemm_case(ta, tb, m, n, k, m + n + k, pad=0, dtype=dtype)
                done = _simd.gemm(ta, tb, A, B, C, 1.0, bias)
                out[f"{ta}{tb}-{m}-{n}-{k}"] = C if done else np.zeros(0, dtype)
np.savez(sys.argv[2], **out)
"""


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_simd_tiles_of_both_instruction_sets_agree_to_the_bit(tmp_path, dtype):
    # One source, one order of summation: every output element is one chain of
    # FMAs in index order whatever the tile shape, so the AVX2 and AVX-512 tiles
    # give the same bits, in either value type (the AVX-512 dot products for
    # forward products of fewer units than a vector holds excepted: 8 doubles, 16 floats).
    if _forward.simd_level() != "avx512":
        pytest.skip("needs a CPU and build with AVX-512 (and so AVX2)")
    here = os.path.dirname(os.path.abspath(__file__))
    narrow = 64 // np.dtype(dtype).itemsize
    runs = {}
    for level in ("avx2", "avx512"):
        env = dict(os.environ, FASTNET_SIMD="avx2") if level == "avx2" else {
            key: value for key, value in os.environ.items() if key != "FASTNET_SIMD"}
        subprocess.run([sys.executable, "-c", _GEMM_DUMP, here, str(tmp_path / level), dtype],
                       env=env, check=True)
        runs[level] = np.load(tmp_path / f"{level}.npz")
    compared = 0
    for key in runs["avx512"].files:
        a, b = runs["avx2"][key], runs["avx512"][key]
        if a.size and b.size and not (key.startswith("NT") and int(key.split("-")[2]) < narrow):
            assert a.dtype == dtype and a.tobytes() == b.tobytes(), key
            compared += 1
    assert compared >= 40


def test_the_simd_level_is_decided_in_one_module():
    # _simd holds the CPU check and the level; the other modules ask it.
    assert _forward.simd_level is _simd.simd_level
    assert _forward.simd_compiled is _simd.simd_compiled


@pytest.mark.parametrize("block", [1, 7, 64])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("spec", NETS)
def test_gradient_matches_reference(spec, path, block):
    net, X, T = make(*spec)
    g, sse = kernel_gradient(net, X, T, PATHS[path], block)
    g_ref, sse_ref = ref.gradient(net, X, T)
    assert_allclose(sse, sse_ref, rtol=1e-12)
    assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)


def _table(n_in, layers):
    """A kernel layer table from (size, lo, hi, activation) per layer."""
    rows, start, off = [], n_in, 0
    for size, lo, hi, act in layers:
        rows.append((start, size, lo, hi, off, off + size * (hi - lo), ACTIVATIONS[act]))
        start += size
        off += size * (hi - lo) + size
    return np.array(rows, dtype=np.intp), start, off


def _table_gradient_reference(table, n_in, w, X, T):
    """SSE and its gradient for any layer table, plainly in NumPy."""
    f = {"linear": (lambda z: z, lambda z: np.ones_like(z)),
         "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2),
         "proben1": (lambda z: z / (1 + np.abs(z)), lambda z: 1 / (1 + np.abs(z)) ** 2)}
    names = {v: k for k, v in ACTIVATIONS.items()}
    n_units = int(table[-1, 0] + table[-1, 1])
    A = np.zeros((X.shape[0], n_units))
    A[:, :n_in] = X
    Z = {}
    for start, size, lo, hi, w_off, b_off, act in table:
        Wj = w[w_off:b_off].reshape(size, hi - lo)
        Z[start] = A[:, lo:hi] @ Wj.T + w[b_off:b_off + size]
        A[:, start:start + size] = f[names[act]][0](Z[start])
    start, size = table[-1, 0], table[-1, 1]
    E = A[:, start:start + size] - T
    dA = np.zeros_like(A)
    dA[:, start:start + size] = 2 * E
    g = np.zeros_like(w)
    for start, size, lo, hi, w_off, b_off, act in table[::-1]:
        delta = dA[:, start:start + size] * f[names[act]][1](Z[start])
        g[w_off:b_off] = (delta.T @ A[:, lo:hi]).ravel()
        g[b_off:b_off + size] = delta.sum(axis=0)
        dA[:, lo:hi] += delta @ w[w_off:b_off].reshape(size, hi - lo)
    return float((E ** 2).sum()), g


# Layer tables no MLP makes (the kernels take any consistent table): a layer reading a
# part of the layer before it, a hidden layer read by no later layer, a gap between a
# layer's sources and itself. Their dE/da columns are written by several layers, by
# none, or in pieces (the back-propagation stores, adds and multiplies by f'(net) by
# column ranges).
ODD_TABLES = {
    "partial": [(6, 0, 4, "tanh"), (3, 4, 8, "tanh"), (2, 6, 13, "linear")],
    "unread": [(5, 0, 4, "tanh"), (9, 0, 4, "proben1"), (2, 9, 18, "linear")],
    "gap": [(4, 0, 4, "tanh"), (10, 0, 6, "tanh"), (3, 0, 18, "linear")],
    "shortcut": [(12, 0, 4, "tanh"), (9, 0, 16, "proben1"), (2, 4, 25, "linear")],
}


@pytest.mark.parametrize("block", [1, 7, 8, 64])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", ODD_TABLES)
def test_gradient_of_any_layer_table_matches_reference(name, path, block):
    table, n_units, n_w = _table(4, ODD_TABLES[name])
    rng = np.random.default_rng(len(name))
    w = rng.uniform(-0.8, 0.8, n_w)
    X = rng.uniform(-1, 1, (37, 4))
    T = rng.uniform(0, 1, (37, table[-1, 1]))
    A = np.full((37, n_units + 2), np.nan)
    A[:, :4] = X
    D = np.full((block, n_units - 4), np.nan)
    Dl = np.full((block, n_units - 4), np.nan)
    g = np.full(n_w, np.nan)
    sse = _backward.gradient(A, T, table, 4, w, g, D, Dl, PATHS[path])
    sse_ref, g_ref = _table_gradient_reference(table, 4, w, X, T)
    assert_allclose(sse, sse_ref, rtol=1e-12)
    assert_allclose(g, g_ref, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("out_act", list(ACTIVATIONS))
@pytest.mark.parametrize("hidden_act", list(HIDDEN_ACTIVATIONS))
@pytest.mark.parametrize("shortcut", [True, False])
def test_gradient_finite_differences(hidden_act, out_act, shortcut):
    net, X, T = make(3, (3, 2), 2, shortcut, hidden_act, out_act, seed=3)
    g, _ = kernel_gradient(net, X, T, 64, 8)
    w0 = net.weights.copy()
    h = 1e-6
    fd = np.empty_like(w0)
    for i in range(w0.size):
        wp, wm = w0.copy(), w0.copy()
        wp[i] += h
        wm[i] -= h
        fd[i] = (net.copy().set_weights(wp).sum_squared_error(X, T)
                 - net.copy().set_weights(wm).sum_squared_error(X, T)) / (2 * h)
    assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_worked_example_2_2_1():
    # 2-2-1, no shortcuts, proben1 hidden, linear output, one pattern x=(1, 0), t=1.
    net = MLP(2, (2,), 1, shortcut=False)
    W = {(0, 1): np.array([[0.5, -1.0], [0.25, 0.0]]), (1, 2): np.array([[1.0], [2.0]])}
    b = {1: np.array([0.0, 0.0]), 2: np.array([0.5])}
    net.set_params(W, b)
    # hidden nets: z1 = 0.5, z2 = -1 -> h1 = 0.5/1.5 = 1/3, h2 = -1/2
    # output: y = 0.5 + 1/3 + 2 * (-1/2) = -1/6 ; error e = y - t = -7/6 ; SSE = 49/36
    X, T = np.array([[1.0, 0.0]]), np.array([[1.0]])
    assert_allclose(net.predict(X), [[-1.0 / 6.0]], rtol=1e-15)
    g, sse = kernel_gradient(net, X, T, 10**12, 1)
    assert_allclose(sse, 49.0 / 36.0, rtol=1e-15)
    # delta_out = 2 e = -7/3 ; dE/dv = delta_out * h ; dE/dc = delta_out
    # delta_h1 = -7/3 * 1 * f'(0.5) = -7/3 * 1/(1.5)^2 = -28/27
    # delta_h2 = -7/3 * 2 * f'(-1)  = -14/3 * 1/4 = -7/6
    gW, gb = net.copy().set_weights(g).get_params()
    assert_allclose(gW[(1, 2)].ravel(), [-7 / 3 * 1 / 3, -7 / 3 * -1 / 2], rtol=1e-14)
    assert_allclose(gb[2], [-7 / 3], rtol=1e-14)
    assert_allclose(gW[(0, 1)], [[-28 / 27, -7 / 6], [0.0, 0.0]], rtol=1e-14)
    assert_allclose(gb[1], [-28 / 27, -7 / 6], rtol=1e-14)


@pytest.mark.parametrize("variant,code", [("rprop+", 0), ("rprop-", 1), ("irprop-", 2), ("irprop+", 3)])
@pytest.mark.parametrize("error_rose", [False, True])
def test_rprop_step_matches_reference(variant, code, error_rose):
    rng = np.random.default_rng(7)
    n = 200
    w = rng.normal(size=n)
    g = rng.normal(size=n)
    g[::7] = 0.0
    opt = ref.Rprop(variant, rng.uniform(0.01, 1, n), 1.2, 0.5, 1e-3, 0.9)
    opt.g_prev = rng.normal(size=n)
    opt.g_prev[::5] = 0.0
    opt.dw_prev = rng.normal(size=n) * 0.1
    opt.last_error = 1.0
    state = [opt.g_prev.copy(), opt.dw_prev.copy(), opt.step.copy()]
    prod = opt.g_prev * g
    assert (prod > 0).any() and (prod < 0).any() and (prod == 0).any()  # all three branches
    w_k = w.copy()
    _rprop.rprop_step(code, w_k, g.copy(), *state, 1.2, 0.5, 1e-3, 0.9, error_rose)
    w_r = opt.update(w.copy(), g, 2.0 if error_rose else 0.5)
    assert_allclose(w_k, w_r, rtol=0, atol=0)
    assert_allclose(state[0], opt.g_prev, rtol=0, atol=0)
    if variant != "irprop-":             # irprop- never reads its last change (nor writes it)
        assert_allclose(state[1], opt.dw_prev, rtol=0, atol=0)
    assert_allclose(state[2], opt.step, rtol=0, atol=0)


def _bits(a):
    return np.ascontiguousarray(a).view(np.int64)


@pytest.mark.parametrize("variant,code", [("rprop+", 0), ("rprop-", 1), ("irprop-", 2), ("irprop+", 3)])
def test_lane_rule_equals_the_scalar_rule_bit_for_bit(variant, code):
    # The rule is written once (_rules.h); _rule.h is its instance for one weight,
    # _lanes.h for LANES trials of one weight (the sign by bits). Every
    # branch, zero and NaN gradients, -0.0, steps at both bounds and beyond, and
    # irprop+'s error_rose per lane: the same bits.
    L, n = _trials.LANES, 300
    rng = np.random.default_rng(3)
    w = rng.normal(size=(n, L))
    w[::11] = -0.0
    g = rng.normal(size=(n, L))
    g[::7] = 0.0
    g[3::7] = -0.0
    g[5::13] = np.nan
    g_prev = rng.normal(size=(n, L))
    g_prev[::5] = 0.0
    dw_prev = rng.normal(size=(n, L)) * 0.1
    step = rng.uniform(0.01, 1, (n, L))
    step[::9] = 1e-3                     # at step_min
    step[1::9] = 0.9                     # at step_max
    step[2::9] = 1e-5                    # below step_min, above step_max
    step[4::9] = 2.0
    rose = (np.arange(L) % 3 == 0).astype(np.int64)
    lanes = [a.copy() for a in (w, g_prev, dw_prev, step)]
    _trials.rule_step(code, lanes[0], g, lanes[1], lanes[2], lanes[3], 1.2, 0.5, 1e-3, 0.9,
                      rose)
    for k in range(L):
        one = [np.ascontiguousarray(a[:, k]) for a in (w, g_prev, dw_prev, step)]
        _rprop.rprop_step(code, one[0], g[:, k].copy(), *one[1:], 1.2, 0.5, 1e-3, 0.9,
                          bool(rose[k]))
        names = ("w", "g_prev", "dw_prev", "step")
        for name, a, b in zip(names, lanes, one):
            if name == "dw_prev" and variant == "irprop-":
                continue                 # irprop- never reads it; the lanes leave it
            assert np.array_equal(_bits(a[:, k]), _bits(b)), (name, k)


def test_lane_check_equals_threshold_correct():
    # Hamey's check, lane form (_rules.h in _lanes.h) against fastnet.measures: outputs
    # on both sides of every threshold, binary and analog targets; a lane with a
    # NaN output is never right.
    L = _trials.LANES
    rng = np.random.default_rng(5)
    T = np.array([[0.0, 1.0, 0.3], [1.0, 0.0, 0.7]])
    for r_c, analog in [(0.4, None), (0.4, 0.1), (0.2, 0.05), (0.5, 0.45)]:
        Tc = np.ascontiguousarray(T[:, :2]) if analog is None else T   # (None: binary only)
        for _ in range(20):
            Y = Tc[:, :, None] + rng.choice([-0.7, -0.45, -0.1, 0.0, 0.1, 0.45], Tc.shape + (L,))
            got = _trials.check_lanes(Y, Tc, r_c, -1.0 if analog is None else analog)
            want = [bool(threshold_correct(Y[:, :, k], Tc, r_c, analog).all()) for k in range(L)]
            assert got == want
    # analog < 0 (no tolerance): a target other than 0 and 1 is never met
    assert _trials.check_lanes(np.repeat(T[:, :, None], L, axis=2), T, 0.4, -1.0) == [False] * L
    Y = np.broadcast_to(T[:, :, None], T.shape + (L,)).copy()
    Y[1, 2, 3] = np.nan
    assert _trials.check_lanes(Y, T, 0.4, 0.1) == [k != 3 for k in range(L)]
    with pytest.raises(ValueError, match="outputs must be"):
        _trials.check_lanes(Y[:1], T, 0.4, 0.1)


def test_kernel_constants_are_written_once():
    # _constants.h holds the layer-table columns and activation codes, the rules'
    # table (_rules.h) the rules' codes; the .pxd files declare them from there
    # (cdef extern), the lanes' headers include them; nobody keeps a copy.
    import re
    with open(os.path.join(KERNELS_DIR, "_constants.h")) as f:
        values = {m[0]: int(m[1]) for m in re.findall(r"\b(FN_[A-Z_0-9]+) = (\d+)", f.read())}
    acts = {k[len("FN_ACT_"):].lower(): v for k, v in values.items() if k.startswith("FN_ACT_")}
    assert acts == ACTIVATIONS
    from fastnet._kernels._rules import NAMES, RULES
    from fastnet.training._algorithms import VARIANT_RULES
    assert {v: NAMES[VARIANTS[v]] for v in VARIANTS} == VARIANT_RULES
    assert [RULES[name].code for name in NAMES] == list(range(len(NAMES)))
    assert values["FN_L_NCOLS"] == MLP(3, (2,), 1).layer_table.shape[1]
    for name in sorted(os.listdir(KERNELS_DIR)):
        if name.endswith((".h", ".pxd", ".pyx")) and name != "_constants.h":
            with open(os.path.join(KERNELS_DIR, name)) as f:
                text = f.read()
            # (the rules' codes are their table's, in _rules.h alone)
            names = "START|PROBEN1" if name == "_rules.h" else "START|PROBEN1|RPROP_PLUS"
            assert not re.search(r"enum\s*\{[^}]*(" + names + ")", text), name
            assert not re.search(r"^\s*(L_START|ACT_PROBEN1|RPROP_PLUS)\s*=", text, re.M), name


def test_kernels_refuse_mismatched_buffers_before_running():
    # The kernels run with boundscheck off; their Python entry points check shapes.
    net = MLP(3, (4,), 2).init_weights(0)
    X, T = np.zeros((10, 3)), np.zeros((10, 2))
    A = _engine.activations(net, X)
    g = np.zeros(net.n_connections)
    good = np.zeros((10, 6))
    with pytest.raises(ValueError, match="workspaces need 6 columns"):
        _backward.gradient(A, T, net.layer_table, 3, net.weights, g, np.zeros((10, 5)), good, 0)
    with pytest.raises(ValueError, match="targets"):
        _backward.gradient(A, T[:5], net.layer_table, 3, net.weights, g, good, good, 0)
    with pytest.raises(ValueError, match="weight vectors"):
        _forward.forward(A, net.layer_table, 3, net.weights[:-1].copy(), 4, 0)
    with pytest.raises(ValueError, match="activation rows"):
        _forward.forward(A[:, :net.n_units - 1].copy(), net.layer_table, 3, net.weights, 4, 0)
    bad_layers = net.layer_table.copy()
    bad_layers[0, 3] = 99
    with pytest.raises(ValueError, match="layer table"):
        _forward.forward(A, bad_layers, 3, net.weights, 4, 0)
    with pytest.raises(ValueError, match="differ in length"):
        _rprop.rprop_step(0, np.zeros(3), np.zeros(2), np.zeros(3), np.zeros(3), np.zeros(3),
                          1.2, 0.5, 0.0, 50.0, False)
