"""fastnet.value_and_grad and fastnet.jacobian: finite differences, the NumPy oracle, J^T e."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

import _reference as ref
import fastnet
from fastnet import MLP, jacobian, value_and_grad
# The engine's activations, the Jacobian kernel and LM's normal equations: no public face.
from fastnet import _engine
from fastnet._kernels import _jacobian
from fastnet.gradients import _NormalEquations

ACTS = ["proben1", "logistic", "tanh", "linear"]
# 0, 1 and 2 hidden layers, with and without shortcuts
SMALL = [(3, (), 2), (4, (5,), 3), (5, (4, 3), 2)]
# Wider nets: the back-propagation products of the virtual rows go to the tiles / BLAS.
WIDE = [(7, (9, 6), 5), (20, (70, 9), 10), (130, (33,), 7), (17, (8,), 1)]
PATHS = {"blas": 0, "loops": 10**12}
H = 1e-6


def make(n_in, hidden, n_out, shortcut, hidden_act="proben1", out_act="linear", seed=0,
         n=23):
    net = MLP(n_in, hidden, n_out, shortcut=shortcut, hidden_activation=hidden_act,
              output_activation=out_act)
    net.init_weights(seed, scale=0.8)
    rng = np.random.default_rng(seed + 100)
    return net, rng.uniform(-1, 1, (n, n_in)), rng.uniform(0, 1, (n, n_out))


def central_differences(net, f):
    """(f(w + h e_c) - f(w - h e_c)) / 2h for every weight c, stacked as the last axis."""
    w0 = net.weights.copy()
    cols = []
    for c in range(w0.size):
        up, down = w0.copy(), w0.copy()
        up[c] += H
        down[c] -= H
        f_up = f(net.set_weights(up))
        f_down = f(net.set_weights(down))
        cols.append((f_up - f_down) / (2 * H))
    net.set_weights(w0)
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("out_act", ACTS)
@pytest.mark.parametrize("hidden_act", ACTS)
def test_value_and_grad_matches_finite_differences(spec, shortcut, hidden_act, out_act):
    net, X, T = make(*spec, shortcut, hidden_act, out_act)
    E, g = value_and_grad(net, X, T)
    fd = central_differences(net, lambda n: np.float64(n.sum_squared_error(X, T)))
    assert_allclose(g, fd, rtol=1e-6, atol=1e-7)   # E carries ~1e-15 E rounding
    assert E == pytest.approx(ref.sse(net, X, T), rel=1e-13)


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("spec", SMALL)
@pytest.mark.parametrize("out_act", ACTS)
@pytest.mark.parametrize("hidden_act", ACTS)
def test_jacobian_matches_finite_differences(spec, shortcut, hidden_act, out_act):
    net, X, _ = make(*spec, shortcut, hidden_act, out_act, n=9)
    J = jacobian(net, X)
    fd = central_differences(net, lambda n: n.predict(X).ravel())
    assert J.shape == (9 * net.n_out, net.n_connections)
    assert_allclose(J, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("spec", SMALL + WIDE)
@pytest.mark.parametrize("act", ACTS)
def test_jacobian_matches_reference_and_gradient(spec, shortcut, act):
    net, X, T = make(*spec, shortcut, act, act)
    w0 = net.weights.copy()
    J = jacobian(net, X)
    assert_allclose(J, ref.jacobian(net, X), rtol=1e-12, atol=1e-14)
    # The gradient of the SSE is 2 J^T (O - T), O - T example-major as J's rows.
    E, g = value_and_grad(net, X, T)
    g_ref, E_ref = ref.gradient(net, X, T)
    assert_allclose(g, g_ref, rtol=1e-12, atol=1e-13)
    assert_allclose(g, 2 * J.T @ (net.predict(X) - T).ravel(), rtol=1e-10, atol=1e-12)
    assert E == pytest.approx(E_ref, rel=1e-13)
    assert np.array_equal(net.weights, w0)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("block", [1, 4, 9, 23])
@pytest.mark.parametrize("spec", [(5, (4, 3), 2, True), (7, (9, 6), 5, False),
                                  (20, (70, 9), 10, True)])
def test_jacobian_kernel_blocks_and_paths(spec, block, path):
    net, X, _ = make(*spec, hidden_act="tanh", out_act="logistic")
    n_nonin = net.n_units - net.n_in
    A = _engine.activations(net, X)
    A[:, net.n_units:] = np.nan   # row padding: never read
    J = np.full((X.shape[0] * net.n_out, net.n_connections), np.nan)
    D = np.empty((block, n_nonin))
    V = np.empty((block * net.n_out, n_nonin))
    _jacobian.jacobian(A, net.layer_table, net.n_in, net.weights, J, D, V, PATHS[path])
    assert_allclose(J, ref.jacobian(net, X), rtol=1e-12, atol=1e-14)
    assert_allclose(A[:, net.n_units - net.n_out:net.n_units], ref.predict(net, X),
                    rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("factored", [True, False])
@pytest.mark.parametrize("block", [None, 1, 5, 23, 100])
@pytest.mark.parametrize("spec", [(3, (), 2, False), (5, (4, 3), 2, True),
                                  (7, (9, 6), 5, False), (8, (12, 9), 4, True),
                                  (4, (3,), 1, True)])
def test_normal_equations_are_JTJ_and_JTe(spec, block, factored):
    net, X, T = make(*spec, hidden_act="tanh")
    ne = _NormalEquations(net, X, T, block, factored)
    H, r, sse = ne.compute()
    J = ref.jacobian(net, X)
    e = (ref.predict(net, X) - T).ravel()
    assert_allclose(np.triu(H), np.triu(J.T @ J), rtol=1e-11, atol=1e-13)
    assert_allclose(r, J.T @ e, rtol=1e-11, atol=1e-13)
    assert sse == pytest.approx(ref.sse(net, X, T), rel=1e-13)
    # A second call at new weights recomputes from scratch (no accumulation).
    net.set_weights(net.weights * 0.5)
    H2, _, _ = ne.compute()
    J2 = ref.jacobian(net, X)
    assert_allclose(np.triu(H2), np.triu(J2.T @ J2), rtol=1e-11, atol=1e-13)


def test_worked_example_one_hidden_unit():
    # o = v * f(u x + c) + d, f(z) = z / (1 + |z|); w = (u, c, v, d) in net.weights order.
    net = MLP(1, (1,), 1, shortcut=False).set_weights([0.5, 0.25, 2.0, -1.0])
    # x = 1: z = 0.75, f = 0.75 / 1.75 = 3/7, f' = 1 / 1.75**2 = 16/49
    # do/du = v f' x = 32/49, do/dc = v f' = 32/49, do/dv = f = 3/7, do/dd = 1
    assert_allclose(jacobian(net, [[1.0]]), [[32 / 49, 32 / 49, 3 / 7, 1.0]], rtol=1e-15)
    # o = 2 * 3/7 - 1 = -1/7; with t = 0: E = 1/49, g = 2 (o - t) J = -2/7 J
    E, g = value_and_grad(net, [[1.0]], [[0.0]])
    assert E == pytest.approx(1 / 49, rel=1e-15)
    assert_allclose(g, np.multiply(-2 / 7, [32 / 49, 32 / 49, 3 / 7, 1.0]), rtol=1e-14)


def test_root_exports_and_tuple_result():
    assert fastnet.value_and_grad is value_and_grad and fastnet.jacobian is jacobian
    net, X, T = make(4, (5,), 3, True)
    result = value_and_grad(net, X, T)
    E, g = result
    assert (result.error, result.gradient) == (E, g)
    assert isinstance(E, float) and g.dtype == np.float64 and g.flags.c_contiguous


def test_inputs_are_coerced():
    net, X, T = make(4, (5,), 3, True)
    E, g = value_and_grad(net, np.asfortranarray(X), T.tolist())
    E2, g2 = value_and_grad(net, X, T)
    assert E == E2 and np.array_equal(g, g2)
    assert np.array_equal(jacobian(net, np.asfortranarray(X)), jacobian(net, X))
    Xi = np.arange(8).reshape(2, 4)
    assert np.array_equal(jacobian(net, Xi), jacobian(net, Xi.astype(float)))


def test_empty_set():
    net, _, _ = make(4, (5,), 3, True)
    E, g = value_and_grad(net, np.zeros((0, 4)), np.zeros((0, 3)))
    assert E == 0.0 and np.array_equal(g, np.zeros(net.n_connections))
    assert jacobian(net, np.zeros((0, 4))).shape == (0, net.n_connections)


def test_bad_arguments_are_named():
    net, X, T = make(4, (5,), 3, True)
    with pytest.raises(TypeError, match="`net` must be a fastnet.MLP, got list"):
        value_and_grad([1], X, T)
    with pytest.raises(TypeError, match="`net` must be a fastnet.MLP, got str"):
        jacobian("net", X)
    with pytest.raises(ValueError, match="`X` has 3 inputs but the network has 4"):
        value_and_grad(net, X[:, :3], T)
    with pytest.raises(ValueError, match="`Y` has 2 outputs but the network has 3"):
        value_and_grad(net, X, T[:, :2])
    with pytest.raises(ValueError, match="`X` has 23 patterns but `Y` has 22"):
        value_and_grad(net, X, T[:22])
    with pytest.raises(ValueError, match="`X` has 5 inputs but the network has 4"):
        jacobian(net, np.zeros((2, 5)))
    with pytest.raises(ValueError, match="`X` must be 2-D"):
        jacobian(net, np.zeros(4))
    with pytest.raises(ValueError, match="`X` must be finite"):
        jacobian(net, np.full((1, 4), np.nan))
    net._w[0] = np.inf
    with pytest.raises(FloatingPointError, match="`net` has non-finite weights"):
        value_and_grad(net, X, T)
    with pytest.raises(FloatingPointError, match="`net` has non-finite weights"):
        jacobian(net, X)


def test_kernel_refuses_mismatched_buffers():
    net, X, T = make(4, (5,), 3, True)
    A = _engine.activations(net, X)
    n_nonin = net.n_units - net.n_in
    D, V = np.empty((4, n_nonin)), np.empty((12, n_nonin))
    J = np.empty((X.shape[0] * 3, net.n_connections))
    with pytest.raises(ValueError, match="delta workspace must be"):
        _jacobian.jacobian(A, net.layer_table, net.n_in, net.weights, J, D, V[:11], 0)
    with pytest.raises(ValueError, match="Jacobian buffer must have"):
        _jacobian.jacobian(A, net.layer_table, net.n_in, net.weights, J[:-1], D, V, 0)
    with pytest.raises(ValueError, match="Jacobian buffer must have"):
        _jacobian.jacobian(A, net.layer_table, net.n_in, net.weights, J[:, :-1].copy(), D,
                           V, 0)


def test_lm_epoch_kernel_refuses_mismatched_workspaces():
    net, X, T = make(4, (5,), 3, True)
    ne = _NormalEquations(net, X, T)
    C = net.n_connections
    w, mu, sse = net.weights.copy(), np.array([1e-3]), np.empty(3)
    counts = np.empty(3, np.intp)
    good = (ne.A, ne.Y, net.layer_table, net.n_in, w, np.empty(C), ne.H, ne.r, ne.D, ne.V,
            ne.Jb, ne.e, ne.R, ne.factored, ne.L, ne.dw, mu, 0.1, 10.0, 1e10, False, sse,
            counts, counts.copy(), 8, 0)
    assert _jacobian.lm_epochs(*good) == 0 and np.isfinite(sse).all()
    for k, bad in [(5, np.empty(C - 1)), (14, np.empty((C, C - 1))), (16, np.empty(2)),
                   (22, np.empty(2, np.intp)), (24, 0)]:
        args = list(good)
        args[k] = bad
        with pytest.raises(ValueError, match="Levenberg-Marquardt workspaces do not match"):
            _jacobian.lm_epochs(*args)
    args = list(good)
    args[9] = np.empty((3, 2))              # V: the normal equations' own gate
    with pytest.raises(ValueError):
        _jacobian.lm_epochs(*args)


@pytest.mark.parametrize("marquardt", [False, True])
def test_normal_equations_solve_and_trial_error(marquardt):
    # The step of Levenberg-Marquardt (Hagan & Menhaj 1994): -(J^T J + mu D)^-1 J^T e.
    net, X, T = make(5, (4, 3), 2, True)
    ne = _NormalEquations(net, X, T)
    H, r, _ = ne.compute()
    J = ref.jacobian(net, X)
    e = (ref.predict(net, X) - T).ravel()
    D = np.diag(np.diag(J.T @ J)) if marquardt else np.eye(net.n_connections)
    want = -np.linalg.solve(J.T @ J + 0.01 * D, J.T @ e)
    assert_allclose(ne.solve(0.01, marquardt), want, rtol=1e-8, atol=1e-10)
    w0 = net.weights.copy()
    trial = w0 + ne.dw
    assert ne.sse(trial) == pytest.approx(ref.sse(net.copy().set_weights(trial), X, T),
                                          rel=1e-13)
    assert np.array_equal(net.weights, w0)
    assert ne.solve(-1e6) is None   # not positive definite: no step
