"""The Jacobian kernels in float32: the rows of the network's type, the normal equations in
double from them, and Levenberg-Marquardt epochs with float32 weights.

Tolerances: float32 rows against the float64 rows at the same (float32) weights, 1e-4 of
the largest entry (rounding of the activations and deltas through the layers); J^T J and
J^T e, accumulated in double from those rows, within the same relative bound.
"""
import numpy as np
import pytest
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import _engine
from fastnet._kernels import _jacobian
from test_kernels_f32 import make, rows32

F32 = np.float32


def workspaces(net, n, block, dtype, factored):
    nn, n_out, C = net.n_units - net.n_in, net.n_out, net.n_connections
    return dict(D=np.empty((block, nn), dtype), V=np.empty((block * n_out, nn), dtype),
                Jb=np.empty((0 if factored else block * n_out, C)),
                R=np.empty(block * (C + nn * (nn + 1) + 1) if factored else 0),
                e=np.empty(block * n_out), H=np.zeros((C, C)), g=np.zeros(C))


def rel_max(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.mark.parametrize("out_act", ["linear", "logistic", "softmax"])
@pytest.mark.parametrize("spec", [(4, (5,), 3, True), (6, (5, 4), 2, False), (3, (40,), 2, True)])
def test_jacobian_f32_rows_match_float64(spec, out_act):
    net, X, _ = make(*spec, hidden_act="tanh", out_act=out_act)
    ws = workspaces(net, len(X), 8, F32, True)
    J = np.full((len(X) * net.n_out, net.n_connections), np.nan, F32)
    assert _jacobian.jacobian(rows32(net, X), net.layer_table, net.n_in, net.weights.astype(F32),
                              J, ws["D"], ws["V"], 4096) == 0
    ws64 = workspaces(net, len(X), 8, np.float64, True)
    J64 = np.empty(J.shape)
    _jacobian.jacobian(_engine.activations(net, X), net.layer_table, net.n_in, net.weights, J64,
                       ws64["D"], ws64["V"], 4096)
    assert rel_max(J, J64) <= 1e-4
    if out_act != "softmax":     # (the reference has no softmax Jacobian)
        assert rel_max(J, ref.jacobian(net, X)) <= 1e-4


@pytest.mark.parametrize("factored", [True, False])
@pytest.mark.parametrize("spec", [(4, (5,), 3, True), (6, (5, 4), 2, False)])
def test_normal_equations_f32_accumulate_in_double(spec, factored):
    net, X, T = make(*spec, hidden_act="tanh", out_act="logistic", n=50)
    out = {}
    for dtype in (F32, np.float64):
        ws = workspaces(net, len(X), 8, dtype, factored)
        A = rows32(net, X) if dtype == F32 else _engine.activations(net, X)
        sse = _jacobian.normal_equations(A, T.astype(dtype), net.layer_table, net.n_in,
                                         net.weights.astype(dtype), ws["H"], ws["g"], ws["D"],
                                         ws["V"], ws["Jb"], ws["e"], ws["R"], factored, 4096)
        out[np.dtype(dtype).name] = (np.triu(ws["H"]), ws["g"].copy(), sse)
    (H32, g32, s32), (H64, g64, s64) = out["float32"], out["float64"]
    assert rel_max(H32, H64) <= 1e-4 and rel_max(g32, g64) <= 1e-4
    assert s32 == pytest.approx(s64, rel=1e-5)
    # float32 rows give the double sums of their own products: J^T J of the float32 J
    ws = workspaces(net, len(X), 8, F32, factored)
    J = np.empty((len(X) * net.n_out, net.n_connections), F32)
    _jacobian.jacobian(rows32(net, X), net.layer_table, net.n_in, net.weights.astype(F32), J,
                       ws["D"], ws["V"], 4096)
    Jd = J.astype(float)
    assert_allclose(H32, np.triu(Jd.T @ Jd), rtol=1e-6, atol=1e-9 * np.abs(H64).max())


def run_lm(net, X, T, dtype, n_epochs=8):
    ws = workspaces(net, len(X), 16, dtype, True)
    C = net.n_connections
    A = rows32(net, X) if dtype == F32 else _engine.activations(net, X)
    w = net.weights.astype(dtype)
    sse = np.zeros(n_epochs)
    solves, tries = np.zeros(n_epochs, np.intp), np.zeros(n_epochs, np.intp)
    status = _jacobian.lm_epochs(A, T.astype(dtype), net.layer_table, net.n_in, w,
                                 np.empty(C, dtype), ws["H"], ws["g"], ws["D"], ws["V"],
                                 ws["Jb"], ws["e"], ws["R"], True, np.empty((C, C)), np.empty(C),
                                 np.array([0.01]), 0.1, 10.0, 1e10, False, sse, solves, tries,
                                 16, 4096)
    return w, sse, status


def test_lm_epochs_f32_descend_like_float64_and_reproduce():
    net, X, T = make(3, (4,), 2, True, hidden_act="tanh", out_act="linear", n=40)
    w32, sse32, st32 = run_lm(net, X, T, F32)
    w64, sse64, st64 = run_lm(net, X, T, np.float64)
    assert st32 == st64 == 0 and w32.dtype == F32
    assert np.all(np.diff(sse32) < 0)
    assert_allclose(sse32[:4], sse64[:4], rtol=1e-3)
    w32b, sse32b, _ = run_lm(net, X, T, F32)
    assert w32b.tobytes() == w32.tobytes() and sse32b.tobytes() == sse32.tobytes()


def test_jacobian_kernels_refuse_mixed_dtypes():
    net, X, T = make(3, (4,), 2, True)
    ws = workspaces(net, len(X), 8, F32, True)
    J = np.empty((len(X) * net.n_out, net.n_connections))
    with pytest.raises(TypeError, match="`J` must be float32"):
        _jacobian.jacobian(rows32(net, X), net.layer_table, net.n_in, net.weights.astype(F32), J,
                           ws["D"], ws["V"], 4096)
    with pytest.raises(TypeError, match="`w` must be float32"):
        _jacobian.normal_equations(rows32(net, X), T.astype(F32), net.layer_table, net.n_in,
                                   net.weights, ws["H"], ws["g"], ws["D"], ws["V"], ws["Jb"],
                                   ws["e"], ws["R"], True, 4096)

