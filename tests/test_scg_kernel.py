"""The SCG lanes kernel (``fastnet._kernels._scg.scg_queue``, ``_kernels/_scg_lanes.h``)
against SCG's iteration written out in plain NumPy on the lanes' errors and
gradients, trial by trial and bit for bit: a queue of more trials than lanes (odd
K), trials that stop in the same epoch, lanes that diverge beside lanes that
train on; and its memory-safety gate."""
import warnings

import numpy as np
import pytest

from fastnet import MLP, train, train_many
from fastnet._kernels import _scg, _trials
from fastnet.datasets import make_xor
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.stopping import Correct
from fastnet.training import _scg_many, draw_trials
from fastnet.training._lanes import LANES, aligned

X, Y = make_xor().train
NET = MLP(2, [2], 1, hidden_activation="tanh", output_activation="logistic", shortcut=False)
SIGMA, LAMBDA1, R_C = 1e-4, 1e-6, 0.4
ANALOG = -1.0        # (the tolerance of targets other than 0 and 1; < 0: never right)


def _lane0(net, w):
    """One trial's weights in lane 0 of one group (the others zero)."""
    b = aligned((1, w.size, LANES))
    b[0, :, 0] = w
    return b


def _error_gradient(net, w):
    """E and g of one trial from the lanes' kernel (trials_gradient, lane 0)."""
    g, E = aligned((1, w.size, LANES)), np.empty(LANES)
    _trials.trials_gradient(net.layer_table, net.n_in, X, Y, _lane0(net, w), g,
                            aligned((_trials.work_size(net.n_units),)), E)
    return float(E[0]), g[0, :, 0].copy()


def _right(net, w):
    """Hamey's check of one trial's outputs (trials_outputs, lane 0; r_c = 0.4)."""
    out = aligned((1, X.shape[0], Y.shape[1], LANES))
    _trials.trials_outputs(net.layer_table, net.n_in, X, _lane0(net, w),
                           aligned((_trials.work_size(net.n_units),)), out)
    y = out[0, :, :, 0]
    right = np.where(Y == 1.0, y > 1.0 - R_C, y < R_C)
    return bool(np.all(np.where((Y == 0.0) | (Y == 1.0), right, np.abs(y - Y) <= ANALOG)))


def _dot(a, b):
    """a·b summed in order from the first product (as NumPy sums a (C, S) array's rows)."""
    s = a[0] * b[0]
    for c in range(1, a.size):
        s = s + a[c] * b[c]
    return s


def _reference(net, w0, T, below=None):
    with np.errstate(all="ignore"):        # (λ may overflow: a stop)
        out = _iterations(net, w0, T, below)
    return out if below is None else out[:2] + (0,) + out[3:]     # (no checks run)


def _iterations(net, w0, T, below):
    """SCG (steps 1-7 of fastnet.algorithms.SCG) for one trial in plain NumPy and
    Python floats, with the study's stops (Hamey's check, or with ``below`` the
    error at an iteration's start below it): (reason, epochs, checks, weights,
    [probes, errors, gradients], first E, lowest E, E at each iteration's start)."""
    inf, C = float("inf"), w0.size
    w = w0.copy()
    E, g = _error_gradient(net, w)
    r = -g
    p, right0 = r.copy(), _right(net, w)
    lam, lam_bar, delta, success = LAMBDA1, 0.0, 0.0, True
    counts, hist, first = [0, 0, 1], [], E
    if not np.isfinite(E):
        return "diverged_initial", 1, 0, w, counts, first, E, hist
    if not r.any():
        return "converged", 1, 0, w, counts, first, E, [E]
    for t in range(T):
        hist.append(E)
        stop = _stopper(t, w, counts, first, hist)
        p2 = _dot(p, p)
        if not 0.0 < p2 < inf:
            return stop("converged" if p2 == 0.0 else "abnormal", t)
        if success:                                             # (1)
            sigma_k = SIGMA / np.sqrt(p2)
            _, g_probe = _error_gradient(net, w + sigma_k * p)
            counts[0] += 1
            delta = _dot(p, (g_probe + r) / sigma_k)            # (g(w) = -r)
        delta = delta + (lam - lam_bar) * p2                    # (2)
        if delta <= 0.0:                                        # (3)
            lam_bar = 2.0 * (lam - delta / p2)
            delta = -delta + lam * p2
            lam = lam_bar
        mu = _dot(p, r)                                         # (4)
        if not (0.0 < delta < inf and abs(mu) < inf):
            return stop("abnormal", t)
        if mu == 0.0:
            return stop("converged", t)
        alpha = mu / delta
        if not abs(alpha) < inf:
            return stop("abnormal", t)
        trial = w + alpha * p
        E_new, g_new = _error_gradient(net, trial)              # (5)
        counts[1] += 1
        if not E_new < inf:
            return stop("diverged", t)
        mu2 = mu * mu
        if not 0.0 < mu2 < inf:
            return stop("abnormal" if mu2 == inf else "converged", t)
        Delta = 2.0 * delta * (E - E_new) / mu2
        taken = Delta >= 0.0
        if taken:                                               # (6)
            E, r_new = E_new, -g_new
            counts[2] += 1
            restart = (t + 1) % C == 0
            p = r_new if restart else r_new + ((_dot(r_new, r_new) - _dot(r_new, r)) / mu) * p
            w, r, lam_bar, success = trial, r_new, 0.0, True
            stop = _stopper(t, w, counts, first, hist)
            if Delta >= 0.75:
                lam = lam / 4.0
        else:
            lam_bar, success = lam, False
        if Delta < 0.25:                                        # (7)
            lam = lam + delta * (1.0 - Delta) / p2
        if not abs(lam) < inf or (taken and not r.any()):
            return stop("converged", t)
        if below is not None:
            if hist[-1] < below:
                return stop("error_below", None)
        elif _right(net, w) if taken else t == 0 and right0:
            return stop("correct", t + 1)
    return "max_epochs", T, T, w, counts, first, min(hist), hist


def _stopper(t, w, counts, first, hist):
    """The outcome of a trial that stops in iteration t at weights w."""
    return lambda reason, checks: (reason, t + 1, checks, w, counts, first, min(hist), hist)


def _kernel(net, W, T, w_limit=1e300, history=True, below=None):
    """scg_queue on the trials W: a dict of its outputs (reasons by name)."""
    K, C = W.shape
    out = dict(w=np.empty((K, C)), epochs=np.empty(K, np.int64), checks=np.empty(K, np.int64),
               reason=np.empty(K, np.int64), counts=np.empty((3, K), np.int64),
               first=np.empty(K), low=np.empty(K),
               history=np.full((K, T), np.nan) if history else None)
    status = _scg.scg_queue(
        net.layer_table, net.n_in, X, Y, np.ascontiguousarray(W), out["w"], out["epochs"],
        out["checks"], out["reason"], out["counts"], out["first"], out["low"], out["history"],
        aligned((_scg.state_size(C),)), aligned((_scg.work_size(net.n_units),)), SIGMA, LAMBDA1,
        w_limit, R_C, ANALOG, T, 1.0, below is None, -1.0 if below is None else below)
    out["status"] = status
    if status == _scg.DONE:
        out["reason"] = [_scg.REASONS[int(c)] for c in out["reason"]]
    return out


def _assert_as_reference(net, W, T, out, trials, below=None):
    for i in trials:
        reason, epochs, checks, w, counts, first, low, hist = _reference(net, W[i], T, below)
        assert (out["reason"][i], out["epochs"][i], out["checks"][i]) == (reason, epochs, checks), i
        np.testing.assert_array_equal(out["w"][i], w)
        assert out["counts"][:, i].tolist() == counts
        assert (out["first"][i], out["low"][i]) == (first, low)
        np.testing.assert_array_equal(out["history"][i, :len(hist)], hist)


@pytest.mark.parametrize("T", [1, 2, 3, 60])
def test_a_few_lanes_step_by_step_as_the_numpy_iteration(T):
    # Five trials (fewer than a group's lanes): after 1, 2, 3 iterations and to
    # their ends, each lane's weights, counts, errors and stop bit for bit those of
    # SCG's NumPy arithmetic on the same errors and gradients.
    W, _ = draw_trials(NET, 5, 21, 1.0)
    out = _kernel(NET, W, T)
    assert out["status"] == _scg.DONE
    _assert_as_reference(NET, W, T, out, range(5))


def test_a_queue_of_an_odd_number_of_trials():
    # 37 trials through 8 lanes: each lane takes trial after trial, in any order,
    # and each trial is its NumPy iteration alone (some succeed, some stay at a
    # local minimum until T).
    K, T = 37, 150
    W, _ = draw_trials(NET, K, 5, 1.0)
    out = _kernel(NET, W, T)
    assert set(out["reason"]) >= {"correct", "max_epochs"}
    _assert_as_reference(NET, W, T, out, range(K))


def test_trials_that_stop_in_the_same_epoch():
    # The same three trials four times over (12 trials, one and a half groups): the
    # copies stop in the same epoch in several lanes at once, and those lanes take
    # the next trials together; every copy ends as its original.
    W0, _ = draw_trials(NET, 3, 8, 1.0)
    W = np.repeat(W0, 4, axis=0)
    T = 200
    out = _kernel(NET, W, T)
    for i in range(12):
        for key in ("w", "epochs", "checks", "first", "low"):
            np.testing.assert_array_equal(out[key][i], out[key][i - i % 4])
        assert out["reason"][i] == out["reason"][i - i % 4]
    _assert_as_reference(NET, W, T, out, range(0, 12, 4))


@pytest.mark.parametrize("below", [0.02, 1e-4])
def test_error_below_instead_of_the_check(below):
    # ErrorBelow on the training error (here the raw sum: sse_scale 1): a trial stops
    # after the iteration whose starting error is below the threshold; no check runs.
    K, T = 21, 300
    W, _ = draw_trials(NET, K, 13, 1.0)
    out = _kernel(NET, W, T, below=below)
    assert "error_below" in out["reason"] and not out["checks"].any()
    _assert_as_reference(NET, W, T, out, range(K), below)


@pytest.mark.parametrize("below", [None, 2.0])
def test_a_wider_network_in_two_blocks(monkeypatch, below):
    # 81 weights (dot products of more than 16 terms, in order), two hidden layers
    # with shortcuts, 40 examples (two blocks of the passes), analog targets (Hamey's
    # check with a tolerance), or ErrorBelow: each trial as its NumPy iteration.
    rng = np.random.default_rng(4)
    net = MLP(4, (5, 3), 2, shortcut=True, hidden_activation="logistic",
              output_activation="linear")
    monkeypatch.setitem(globals(), "X", rng.uniform(-1.0, 1.0, (40, 4)))
    monkeypatch.setitem(globals(), "Y", np.round(rng.uniform(0.0, 1.0, (40, 2)), 1))
    monkeypatch.setitem(globals(), "ANALOG", 0.45)
    K, T = 11, 200
    W, _ = draw_trials(net, K, 6, 1.0)
    out = _kernel(net, W, T, below=below)
    assert out["reason"].count("correct" if below is None else "error_below") >= 3
    _assert_as_reference(net, W, T, out, range(K), below)


def _linear_net():
    return MLP(2, [2], 1, hidden_activation="linear", output_activation="linear", shortcut=False)


def _with_overflowing_trials(net, K, bad):
    """K trials, those of ``bad`` with every weight 1e150 (MAX_WEIGHT): outputs of
    about 1e300, whose squares overflow."""
    W, _ = draw_trials(net, K, 3, 1.0)
    W[bad] = 1e150
    return W


def test_lanes_that_diverge_beside_lanes_that_train():
    # (Within the lanes' safe range no error overflows; here the kernel is given no
    # limit.) The trials whose first error overflows stop at once, their lanes take
    # the next trials, and the trials beside them train as alone (on this linear
    # net some reach the least-squares minimum, where λ overflows: "converged").
    net = _linear_net()
    K, bad, T = 11, [1, 2, 9], 1000
    W = _with_overflowing_trials(net, K, bad)
    out = _kernel(net, W, T, w_limit=float("inf"))
    assert [i for i in range(K) if out["reason"][i] == "diverged_initial"] == bad
    assert all(out["epochs"][i] == 1 for i in bad)
    assert "converged" in out["reason"]
    _assert_as_reference(net, W, T, out, [i for i in range(K) if i not in bad])


def test_divergence_in_some_lanes_raises_as_the_first_trial_alone(monkeypatch):
    # The batch raises the DivergenceError of the earliest epoch's lowest trial, as
    # that trial alone does.
    monkeypatch.setattr(_scg_many, "safe_weight", lambda *a: 1e305)
    net = _linear_net()
    W = _with_overflowing_trials(net, 10, [4, 7])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        with pytest.raises(DivergenceError) as many:
            train_many(net, X, Y, algorithm="scg", initial_weights=W, stop=Correct(), strip=1,
                       max_epochs=30)
        with pytest.raises(DivergenceError) as alone:
            train(net.copy().set_weights(W[4]), X, Y, algorithm="scg", stop=Correct(), strip=1,
                  max_epochs=30)
    assert (many.value.epoch, many.value.trial) == (alone.value.epoch, 4)


def test_a_trial_point_beyond_the_limit_ends_the_run():
    W, _ = draw_trials(NET, 9, 2, 1.0)
    assert _kernel(NET, W, 100, w_limit=1.2)["status"] == _scg.UNSAFE


def _arguments(net=NET, K=3, T=5):
    C = net.n_connections
    return dict(layers=net.layer_table, n_in=net.n_in, X=X, T=Y, w0=np.zeros((K, C)),
                w_out=np.zeros((K, C)), epochs=np.zeros(K, np.int64),
                checks=np.zeros(K, np.int64), reason=np.zeros(K, np.int64),
                counts=np.zeros((3, K), np.int64), first=np.zeros(K), low=np.zeros(K),
                history=np.zeros((K, T)), state=np.zeros(_scg.state_size(C)),
                work=np.zeros(_scg.work_size(net.n_units)), sigma=SIGMA, lambda1=LAMBDA1,
                w_limit=10.0, r_c=R_C, analog=-1.0, t_max=T)


@pytest.mark.parametrize("change, match", [
    (dict(w_out=np.zeros((3, 8))), "w_out"),
    (dict(w_out=np.zeros((2, 9))), "w_out"),
    (dict(epochs=np.zeros(2, np.int64)), "per-trial"),
    (dict(low=np.zeros(4)), "per-trial"),
    (dict(counts=np.zeros((2, 3), np.int64)), "per-trial"),
    (dict(history=np.zeros((3, 4))), "history"),
    (dict(history=np.zeros((2, 5))), "history"),
    (dict(state=np.zeros(10)), "too small"),
    (dict(work=np.zeros(10)), "too small"),
    (dict(X=np.zeros((4, 3))), "inputs"),
    (dict(T=np.zeros((3, 1))), "targets"),
    (dict(w0=np.zeros((3, 8)), w_out=np.zeros((3, 8))), "weight vectors"),
    (dict(r_c=0.6), "r_c"),
    (dict(t_max=0), "t_max"),
    (dict(sigma=0.0), "sigma"),
])
def test_the_gate_refuses_unsafe_buffers(change, match):
    args = _arguments()
    args.update(change)
    with pytest.raises(ValueError, match=match):
        _scg.scg_queue(*args.values())


def test_the_gate_refuses_wrong_types_and_layouts():
    for name in ("w0", "w_out", "counts", "state", "work"):
        args = _arguments()
        args[name] = None
        with pytest.raises(TypeError):
            _scg.scg_queue(*args.values())
    args = _arguments()
    args["epochs"] = np.zeros(3, np.int32)
    with pytest.raises(ValueError, match="dtype|type"):
        _scg.scg_queue(*args.values())
    args = _arguments()
    args["w0"] = np.zeros((9, 3)).T
    with pytest.raises(ValueError, match="contiguous"):
        _scg.scg_queue(*args.values())
    args = _arguments(MLP(2, [3], 2, output_activation="softmax", shortcut=False))
    args["T"] = np.zeros((4, 2))
    with pytest.raises(ValueError, match="softmax"):
        _scg.scg_queue(*args.values())
