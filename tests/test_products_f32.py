"""The register-tiled products over float32 (_tiles.h and _dots512.h instantiated for
float: fn256_gemm_f32, fn512_gemm_f32, through _simd.gemm with float32 arrays), against
NumPy in float64 on the same float32 operands.

Tolerance: each output element is one chain of k FMAs in float32 (or a fixed-order
tree of dot products), so it lies within gamma = (k + 2) u of the exact value, u = 2^-24,
relative to the sum of the absolute values of its terms (the classic worst-case bound of
a floating-point inner product, Higham 2002, section 3.1; + 2 for the added C and bias).
The expected error is about sqrt(k) u of that; the bound is what is asserted.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from fastnet._kernels import _forward, _simd

U32 = 2.0 ** -24

# Sizes on both sides of every tile bound of both instruction sets in float32 (8 or 16
# lanes, 4- or 6-row tiles of 24 or 64 columns, 2-row tiles of 40 or 128 columns for C
# of one or two rows, 128-input chunks of W^T), up to 70 rows and columns, k up to 300.
M = (1, 2, 3, 5, 7, 13, 64, 70)
N = (1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 25, 33, 40, 41, 63, 64, 65, 70)
K = (1, 2, 9, 16, 17, 127, 128, 129, 300)
OPS = [("N", "T"), ("N", "N"), ("T", "N")]


def _case(ta, tb, m, n, k, seed, pad=3):
    """float32 operands as views of NaN-padded arrays: reading or writing past a row shows."""
    rng = np.random.default_rng(seed)

    def padded(rows, cols):
        X = np.full((rows, cols + pad), np.nan, dtype=np.float32)
        X[:, :cols] = rng.uniform(-1, 1, (rows, cols))
        return X

    A = padded(k, m) if ta == "T" else padded(m, k)
    B = padded(n, k) if tb == "T" else padded(k, n)
    C = padded(m, n)
    return A, B, C, rng.uniform(-1, 1, n).astype(np.float32)


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


_DUMP = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_products_f32 import OPS, _case
from fastnet._kernels import _simd
out = {}
for ta, tb in OPS:
    for m in (5, 13):
        for n in (3, 9, 16, 17, 33, 65):
            for k in (9, 129):
                A, B, C, bias = _case(ta, tb, m, n, k, m + n + k, pad=0)
                done = _simd.gemm(ta, tb, A, B, C, 1.0, bias)
                out[f"{ta}{tb}-{m}-{n}-{k}"] = C if done else np.zeros(0, np.float32)
np.savez(sys.argv[2], **out)
"""


def test_simd_f32_tiles_of_both_instruction_sets_agree_to_the_bit(tmp_path):
    # One source, one order of summation in float32 too (the AVX-512 dot products for
    # forward products of < 16 units excepted).
    if _forward.simd_level() != "avx512":
        pytest.skip("needs a CPU and build with AVX-512 (and so AVX2)")
    here = os.path.dirname(os.path.abspath(__file__))
    runs = {}
    for level in ("avx2", "avx512"):
        env = dict(os.environ, FASTNET_SIMD="avx2") if level == "avx2" else {
            key: value for key, value in os.environ.items() if key != "FASTNET_SIMD"}
        subprocess.run([sys.executable, "-c", _DUMP, here, str(tmp_path / level)], env=env,
                       check=True)
        runs[level] = np.load(tmp_path / f"{level}.npz")
    compared = 0
    for key in runs["avx512"].files:
        a, b = runs["avx2"][key], runs["avx512"][key]
        if a.size and b.size and not (key.startswith("NT") and int(key.split("-")[2]) < 16):
            assert a.dtype == np.float32 and a.tobytes() == b.tobytes(), key
            compared += 1
    assert compared >= 40


@pytest.mark.slow  # this file again in a process per capped level (FASTNET_SIMD)
@pytest.mark.parametrize("level", ["avx2", "none"])
def test_capped_levels_run_these_tests(level):
    if os.environ.get("FASTNET_SIMD"):
        pytest.skip("this run already has a capped level")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not capped",
         os.path.abspath(__file__)],
        env=dict(os.environ, FASTNET_SIMD=level), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout
