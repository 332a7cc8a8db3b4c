"""The register-tiled products over float32 (_tiles.h and _dots512.h instantiated for
float: fn256_gemm_f32, fn512_gemm_f32, through _simd.gemm with float32 arrays), against
NumPy in float64 on the same float32 operands; and the loops of _loops.h over float32
(fn_loops_*_f32 through _types.pxd's fused helpers, in an extension compiled here).

Tolerance: each output element is one chain of k FMAs in float32 (or a fixed-order
tree of dot products), so it lies within gamma = (k + 2) u of the exact value, u = 2^-24,
relative to the sum of the absolute values of its terms (the classic worst-case bound of
a floating-point inner product, Higham 2002, section 3.1; + 2 for the added C and bias).
The expected error is about sqrt(k) u of that; the bound is what is asserted.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import fastnet
from fastnet._kernels import _forward, _simd
from test_kernels import GEMM_OPS, _gemm_case

U32 = 2.0 ** -24

# Sizes on both sides of every tile bound of both instruction sets in float32 (8 or 16
# lanes, 4- or 6-row tiles of 24 or 64 columns, 2-row tiles of 40 or 128 columns for C
# of one or two rows, 128-input chunks of W^T), up to 70 rows and columns, k up to 300.
M = (1, 2, 3, 5, 7, 13, 64, 70)
N = (1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 25, 33, 40, 41, 63, 64, 65, 70)
K = (1, 2, 9, 16, 17, 127, 128, 129, 300)
OPS = GEMM_OPS


def _case(ta, tb, m, n, k, seed, pad=3):
    """float32 operands as views of NaN-padded arrays (test_kernels' cases in float32)."""
    return _gemm_case(ta, tb, m, n, k, seed, pad, dtype=np.float32)


def _lanes():
    return {"avx512": 16, "avx2": 8}.get(_forward.simd_level(), 0)


def _broadcast_narrow(n, k):
    """AVX-512: a forward product of fewer than 16 units goes to the broadcast tiles when
    k multiply-adds per row are fewer than the dot products' operations (_simd.h)."""
    return 8 * k < 8 * n * (-(-k // 16)) + 21 * (-(-n // 2)) + 8 * n


def _tiles_take(ta, tb, n, beta, k):
    """Whether the float32 tiles of this process's level compute the product."""
    level = _forward.simd_level()
    if level == "default":
        return False
    if (ta, tb) == ("N", "T"):
        return n >= 8 if level == "avx2" else (n >= 16 or beta == 0.0 or _broadcast_narrow(n, k))
    return True


def _check(C, opA, opB, C0, beta, bias, k, what):
    """C within (k + 2) u of the exact op(A) op(B) + beta C0 + bias, relative to |terms|."""
    a, b = opA.astype(np.float64), opB.astype(np.float64)
    c0 = beta * C0.astype(np.float64)
    bb = np.zeros(C.shape[1]) if bias is None else bias.astype(np.float64)
    exact = a @ b + c0 + bb
    scale = np.abs(a) @ np.abs(b) + np.abs(c0) + np.abs(bb)
    err = np.abs(C.astype(np.float64) - exact)
    assert (err <= (k + 2) * U32 * scale).all(), (what, float(np.max(err / scale)))


@pytest.mark.parametrize("ta,tb", OPS)
def test_simd_gemm_f32_matches_reference(ta, tb):
    for m in M:
        for n in N:
            for k in K:
                for beta, with_bias in ((0.0, False), (1.0, False), (0.0, True), (1.0, True)):
                    A, B, C, bias = _case(ta, tb, m, n, k, m * 10007 + n * 101 + k)
                    Av, Bv, Cv = A[:, :A.shape[1] - 3], B[:, :B.shape[1] - 3], C[:, :n]
                    opA = Av.T if ta == "T" else Av
                    opB = Bv.T if tb == "T" else Bv
                    C0 = C.copy()
                    b = bias if with_bias else None
                    done = _simd.gemm(ta, tb, Av, Bv, Cv, beta, b)
                    what = (ta, tb, m, n, k, beta, with_bias)
                    assert done == _tiles_take(ta, tb, n, beta, k), what
                    assert np.isnan(C[:, n:]).all(), what
                    assert C.dtype == np.float32
                    if done:
                        _check(Cv, opA, opB, C0[:, :n], beta, b, k, what)
                    else:
                        assert np.array_equal(C, C0, equal_nan=True), what   # declined: untouched


def test_simd_gemm_f32_scale_is_the_product_times_scale_bit_for_bit():
    # As in float64: the back-propagation's f'(net) multiplied in as the tiles store.
    rng = np.random.default_rng(5)
    for m in (1, 2, 5, 13):
        for n in (1, 7, 8, 9, 16, 17, 33, 65):
            for k in (1, 4, 17, 33):
                for beta in (0.0, 1.0):
                    A, B, C, _ = _case("N", "N", m, n, k, m * 7 + n * 131 + k)
                    Av, Bv = A[:, :k], B[:, :n]
                    S = np.full((m, n + 5), np.nan, dtype=np.float32)
                    S[:, :n] = rng.uniform(-2, 2, (m, n))
                    C_plain = C.copy()
                    done = _simd.gemm("N", "N", Av, Bv, C[:, :n], beta, None, S[:, :n])
                    assert done == _tiles_take("N", "N", n, beta, k)
                    assert np.isnan(C[:, n:]).all()
                    if not done:
                        continue
                    assert _simd.gemm("N", "N", Av, Bv, C_plain[:, :n], beta)
                    assert np.array_equal(C[:, :n], C_plain[:, :n] * S[:, :n]), (m, n, k, beta)


def test_simd_gemm_takes_one_dtype_per_call():
    A32, B32, C32 = (np.zeros(s, np.float32) for s in ((4, 3), (3, 5), (4, 5)))
    with pytest.raises(TypeError):
        _simd.gemm("N", "N", A32, B32.astype(np.float64), C32)
    with pytest.raises(TypeError):
        _simd.gemm("N", "N", A32, B32, C32.astype(np.float64))
    with pytest.raises(ValueError, match="shapes do not fit"):
        _simd.gemm("N", "T", A32, B32, C32)
    with pytest.raises(ValueError, match="rows must be contiguous"):
        _simd.gemm("N", "N", A32, np.zeros((3, 10), np.float32)[:, ::2], C32)


@pytest.mark.slow  # this file again in a process per capped level (FASTNET_SIMD)
@pytest.mark.parametrize("level", ["avx2", "none"])
def test_capped_levels_run_these_tests(level):
    if os.environ.get("FASTNET_SIMD"):
        pytest.skip("this run already has a capped level")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not capped and not loops",
         os.path.abspath(__file__)],
        env=dict(os.environ, FASTNET_SIMD=level), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout


# The loops of _loops.h over float32, through the fused helpers of _types.pxd: a small
# extension cimports them (as a kernel module does) and exposes each over either dtype.
_LOOPS_PYX = """
# cython: language_level=3, boundscheck=False, wraparound=False
from fastnet._kernels._types cimport (
    real_t, fn_loops_forward, fn_loops_gradient, fn_loops_backprop, fn_loops_proben1,
    fn_loops_activate_at, fn_loops_softmax, fn_loops_deltas_bias, fn_loops_output_deltas,
    fn_loops_load_rows, fn_loops_all_finite)

def forward(real_t[:, ::1] A, real_t[:, ::1] W, real_t[:, ::1] Z):
    fn_loops_forward(A.shape[0], W.shape[0], W.shape[1], &A[0, 0], A.shape[1], &W[0, 0],
                     &Z[0, 0], Z.shape[1])

def gradient(real_t[:, ::1] D, real_t[:, ::1] A, real_t[:, ::1] G):
    fn_loops_gradient(D.shape[0], D.shape[1], A.shape[1], &D[0, 0], D.shape[1], &A[0, 0],
                      A.shape[1], &G[0, 0])

def backprop(real_t[:, ::1] D, real_t[:, ::1] W, real_t[:, ::1] dA):
    fn_loops_backprop(D.shape[0], D.shape[1], W.shape[1], &D[0, 0], D.shape[1], &W[0, 0],
                      W.shape[1], &dA[0, 0], dA.shape[1])

def activate(int level, int code, real_t[:, ::1] Z, real_t[::1] b, real_t[:, ::1] D):
    return fn_loops_activate_at(level, code, Z.shape[0], Z.shape[1], &Z[0, 0], Z.shape[1],
                                &b[0], &D[0, 0], D.shape[1])

def proben1(real_t[:, ::1] Z, real_t[::1] b, real_t[:, ::1] D):
    fn_loops_proben1(Z.shape[0], Z.shape[1], &Z[0, 0], Z.shape[1], &b[0], &D[0, 0], D.shape[1])

def softmax(real_t[:, ::1] Z, real_t[::1] b, real_t[:, ::1] D):
    fn_loops_softmax(Z.shape[0], Z.shape[1], &Z[0, 0], Z.shape[1], &b[0], &D[0, 0], D.shape[1])

def deltas_bias(real_t[:, ::1] Dl, real_t[:, ::1] D, real_t[::1] gb):
    fn_loops_deltas_bias(Dl.shape[0], Dl.shape[1], &Dl[0, 0], Dl.shape[1], &D[0, 0], &gb[0])

def output_deltas(real_t[:, ::1] Y, real_t[:, ::1] T, real_t[:, ::1] D, real_t[:, ::1] Dl):
    return fn_loops_output_deltas(Y.shape[0], Y.shape[1], &Y[0, 0], Y.shape[1], &T[0, 0],
                                  T.shape[1], &D[0, 0], &Dl[0, 0], Dl.shape[1])

def load_rows(real_t[:, ::1] X, real_t[:, ::1] A):
    return fn_loops_load_rows(X.shape[0], X.shape[1], &X[0, 0], &A[0, 0], A.shape[1])

def all_finite(real_t[::1] X):
    return fn_loops_all_finite(X.shape[0], &X[0])
"""

_LOOPS_SETUP = """
from Cython.Build import cythonize
from setuptools import Extension, setup
import fastnet
setup(ext_modules=cythonize([Extension("loops_f32", ["loops_f32.pyx"],
                                       include_dirs=[fastnet.get_include()])]))
"""

# Each loop in float32 against float64 on the same float32 values. Tolerances, in
# u = 2^-24 and relative to the sum of the terms' magnitudes where there is a sum:
# products k + 1 (k terms, worst case); proben1 3 (a division and a sum); tanh,
# logistic 2 ulp of the value (their tested bound) and f' within 8 u absolute (from y);
# softmax size + 4 (exp's ulp, the sum, the division), its log that absolutely times
# 1 + |log y|; the output deltas 2 (y - t) f' exact, their squared error the double sum
# of the float32 differences (no float32 drift: within 1e-12 over 10^5 rows).
_LOOPS_CHECK = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import loops_f32 as lp
u = 2.0 ** -24
rng = np.random.default_rng(3)
f32 = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)

def within(got, exact, bound, what):
    err = np.abs(got.astype(np.float64) - exact)
    assert (err <= bound).all(), (what, float(np.max(err - bound)))

for nb, n_out, n_src in [(1, 1, 1), (3, 2, 5), (4, 3, 15), (7, 3, 17), (9, 5, 40), (16, 8, 33),
                         (5, 1, 100), (13, 6, 64)]:
    A, W, D = f32(nb, n_src), f32(n_out, n_src), f32(nb, n_out)
    A64, W64, D64 = A.astype(float), W.astype(float), D.astype(float)
    Z = np.zeros((nb, n_out), np.float32)
    lp.forward(A, W, Z)
    within(Z, A64 @ W64.T, (n_src + 1) * u * (abs(A64) @ abs(W64.T)), ("forward", nb, n_out, n_src))
    G = f32(n_out, n_src)
    G0 = G.astype(float)
    lp.gradient(D, A, G)
    within(G, G0 + D64.T @ A64, (nb + 1) * u * (abs(G0) + abs(D64.T) @ abs(A64)), "gradient")
    dA = f32(nb, n_src)
    dA0 = dA.astype(float)
    lp.backprop(D, W, dA)
    within(dA, dA0 + D64 @ W64, (n_out + 1) * u * (abs(dA0) + abs(D64) @ abs(W64)), "backprop")

for rows, size in [(1, 1), (5, 2), (6, 7), (3, 16), (4, 33)]:
    Z0, b = 4 * f32(rows, size), f32(size)
    x = Z0.astype(float) + b.astype(float)
    x32 = (Z0 + b).astype(float)                   # the net input as float32 adds it
    for code, f, df in [(2, lambda v: 1 / (1 + np.exp(-v)), lambda y: y * (1 - y)),
                        (3, np.tanh, lambda y: 1 - y * y)]:
        for level in (0, 1, 2):
            Z, Dv = Z0.copy(), np.zeros_like(Z0)
            if lp.activate(level, code, Z, b, Dv):
                ref = f(x32)
                within(Z, ref, 2 * np.spacing(np.abs(ref).astype(np.float32)).astype(float),
                       ("activation", code, level))
                within(Dv, df(ref), 8 * u, ("derivative", code, level))
    Z, Dv = Z0.copy(), np.zeros_like(Z0)
    lp.proben1(Z, b, Dv)
    within(Z, x32 / (1 + abs(x32)), 3 * u * abs(x32 / (1 + abs(x32))), "proben1")
    within(Dv, 1 / (1 + abs(x32)) ** 2, 4 * u / (1 + abs(x32)) ** 2, "proben1 f'")
    Z, Dv = Z0.copy(), np.zeros_like(Z0)
    lp.softmax(Z, b, Dv)
    e = np.exp(x32 - x32.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    within(Z, sm, (size + 4) * u * sm, "softmax")
    within(Dv, np.log(sm), (size + 4) * u * (1 + abs(np.log(sm))), "log softmax")

Y, T, Dd = f32(100000, 3), f32(100000, 3), f32(100000, 3)
Dl = np.zeros_like(Y)
sse = lp.output_deltas(Y, T, Dd, Dl)
e = Y - T                                           # float32, as the kernel
assert type(sse) is float
assert abs(sse - np.sum(e.astype(float) ** 2)) <= 1e-12 * sse, "squared error in double"
assert np.array_equal(Dl, np.float32(2) * e * Dd), "output deltas"
for nb in (1, 3, 4, 9):
    Dl, Dd, gb = f32(nb, 5), f32(nb, 5), f32(5)
    gb0, prod = gb.astype(float), Dl * Dd
    lp.deltas_bias(Dl, Dd, gb)
    assert np.array_equal(Dl, prod), "deltas times f'"
    within(gb, gb0 + prod.astype(float).sum(0), (nb + 1) * u * (abs(gb0) + abs(prod).sum(0)),
           "bias gradient")

X, A = f32(4, 3), np.zeros((4, 5), np.float32)
assert lp.load_rows(X, A) == 1 and np.array_equal(A[:, :3], X)
X[2, 1] = np.inf
assert lp.load_rows(X, A) == 0
X[2, 1] = np.nan
assert lp.all_finite(X.ravel()) == 0
X[2, 1] = np.finfo(np.float32).max
assert lp.all_finite(X.ravel()) == 1
print("checked")
"""


@pytest.mark.slow  # compiles an extension (about 15 s), then checks at each CPU level
def test_loops_f32_match_float64_through_the_fused_helpers(tmp_path):
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None or shutil.which("cython") is None and not _has_cython():
        pytest.skip("no C compiler or Cython to build a test extension")
    (tmp_path / "loops_f32.pyx").write_text(_LOOPS_PYX)
    (tmp_path / "setup.py").write_text(_LOOPS_SETUP)
    package_parent = str(Path(fastnet.__file__).resolve().parent.parent)
    path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, CFLAGS="-O1")
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for level in (None, "avx2", "none"):
        run_env = {key: value for key, value in env.items() if key != "FASTNET_SIMD"}
        if level:
            run_env["FASTNET_SIMD"] = level
        proc = subprocess.run([sys.executable, "-c", _LOOPS_CHECK, str(tmp_path)], env=run_env,
                              capture_output=True, text=True)
        assert proc.returncode == 0 and "checked" in proc.stdout, (level, proc.stderr[-3000:])


def _has_cython():
    try:
        import Cython  # noqa: F401
    except ImportError:
        return False
    return True
