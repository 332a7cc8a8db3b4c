"""SCG's trials all at once in a success study (``fastnet.training._scg_many``): each
trial against its run alone (`fastnet.train`), where the batched path applies and
where it does not, its fall-backs and its bookkeeping (counts, histories, checks)."""
import warnings

import numpy as np
import pytest

from fastnet import MLP, train, train_many
from fastnet.datasets import make_xor
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.stopping import Correct, ErrorBelow
from fastnet.training import _scg_many, draw_trials

X, Y = make_xor().train
NET = MLP(2, [2], 1, hidden_activation="tanh", output_activation="logistic", shortcut=False)


@pytest.fixture
def batched(monkeypatch):
    """How many times the batched path trained a batch (and fell back)."""
    calls = {"trained": 0, "unsafe": 0}
    train0 = _scg_many._train

    def counted(run, history):
        try:
            out = train0(run, history)
        except _scg_many._Unsafe:
            calls["unsafe"] += 1
            raise
        calls["trained"] += 1
        return out
    monkeypatch.setattr(_scg_many, "_train", counted)
    return calls


def _many(W, T, stop=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        return train_many(NET, X, Y, algorithm="scg", initial_weights=W,
                          stop=Correct() if stop is None else stop, strip=1, max_epochs=T, **kw)


def _alone(w, T, net=NET, stop=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        return train(net.copy().set_weights(w), X, Y, algorithm="scg",
                     stop=Correct() if stop is None else stop, strip=1, max_epochs=T, **kw)


def test_each_trial_as_its_run_alone_to_rounding(batched):
    # 203 trials (a group of lanes part full; groups packed as trials stop). The lanes'
    # sums differ from the single-network kernels' in the last bits, and SCG's probe
    # (a difference of two gradients over sigma_k ~ 1e-4 / |p|) magnifies that: a
    # trial's weights part by ~1e-13 after one epoch, ~1e-10 after eight. Measured on
    # these trials (T = 300): 200 of 203 equal epochs, 201 equal stop reasons; where
    # the epochs are equal and the check stopped the trial (136), equal counts, weights
    # apart by 1.1e-8 (median; 90 %: 1.4e-4), training errors by 1.8e-9 relative
    # (90 %: 1.6e-5). Trials at a local minimum to T wander further apart (their steps
    # there are decided by rounding).
    K, T = 203, 300
    W, _ = draw_trials(NET, K, 7, 1.0)
    r = _many(W, T)
    assert batched == {"trained": 1, "unsafe": 0}
    same_epochs, same_reasons, diffs, errors = 0, 0, [], []
    for i in range(K):
        s = _alone(W[i], T)
        same_reasons += s.stop_reason == r.stop_reason[i]
        if s.epochs != r.epochs[i]:
            continue
        same_epochs += 1
        if s.stop_reason == "correct":
            assert s.traversals == r[i].traversals
            diffs.append(np.abs(s.net.weights - r.weights[i]).max())
            n = s.epochs
            errors.append(np.max(np.abs(r[i].train_error[:n] / s.train_error[:n] - 1.0)))
    assert same_epochs >= 0.95 * K and same_reasons >= 0.95 * K
    assert len(diffs) >= 0.5 * K
    assert np.median(diffs) < 1e-6 and np.quantile(diffs, 0.9) < 1e-3
    assert np.median(errors) < 1e-7 and np.quantile(errors, 0.9) < 1e-3


def test_first_epochs_agree_to_rounding(batched):
    # Before rounding has grown (a few epochs), every trial agrees closely.
    K = 50
    W, _ = draw_trials(NET, K, 3, 1.0)
    r = _many(W, 3)
    for i in range(K):
        s = _alone(W[i], 3)
        assert (s.epochs, s.stop_reason, s.traversals) == (r.epochs[i], r.stop_reason[i],
                                                           r[i].traversals)
        np.testing.assert_allclose(r.weights[i], s.net.weights, rtol=0, atol=1e-8)
        assert r[i].final_train.squared_error_percentage == pytest.approx(
            s.final_train.squared_error_percentage, rel=1e-9)


def test_history_or_none_the_same_trials():
    W, _ = draw_trials(NET, 40, 5, 1.0)
    a, b = _many(W, 200), _many(W, 200, history=False)
    assert np.array_equal(a.epochs, b.epochs)
    assert np.array_equal(a.weights, b.weights)
    for i in range(40):
        n = a.epochs[i]
        assert b[i].min_train_error == pytest.approx(np.min(a[i].train_error[:n]), rel=1e-15)
        # E never rises under SCG (a step is taken only if it lowers E)
        assert np.all(np.diff(a[i].train_error[:n]) <= 0)


def test_list_of_networks_receives_the_weights(batched):
    W, _ = draw_trials(NET, 9, 2, 1.0)
    nets = [NET.copy().set_weights(w) for w in W]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        r = train_many(nets, X, Y, algorithm="scg", stop=Correct(), strip=1, max_epochs=100)
    assert batched["trained"] == 1
    for i, net in enumerate(nets):
        np.testing.assert_array_equal(net.weights, r.weights[i])


@pytest.mark.parametrize("kw", [dict(strip=2), dict(callback=lambda i, e, s: False),
                                dict(weight_decay=1e-3)])
def test_not_batched_where_the_study_asks_more(batched, kw):
    # (strips of more than one epoch, a callback, another objective: one at a time)
    W, _ = draw_trials(NET, 5, 1, 1.0)
    args = dict(stop=Correct(), strip=1, max_epochs=50, initial_weights=W)
    args.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        r = train_many(NET, X, Y, algorithm="scg", **args)
    assert batched["trained"] == 0
    assert r.epochs.shape == (5,)


def test_weights_beyond_the_safe_range_train_one_at_a_time(batched, monkeypatch):
    # Where a trial's weights could leave the range in which the lanes' fused
    # products agree with the single-network kernels, the batch trains one at a time
    # (bit for bit as each trial alone).
    monkeypatch.setattr(_scg_many, "safe_weight", lambda *a: 1.5)
    W, _ = draw_trials(NET, 6, 4, 1.0)
    r = _many(W, 200)
    assert batched == {"trained": 0, "unsafe": 1}
    for i in range(6):
        s = _alone(W[i], 200)
        assert s.epochs == r.epochs[i]
        np.testing.assert_array_equal(s.net.weights, r.weights[i])


def test_divergence_raises_as_alone(batched):
    # Linear outputs on data of huge magnitude: the error overflows in the first epoch.
    # (Within the lanes' safe range no value can overflow: such a batch trains one
    # trial at a time, and raises as each trial alone does.)
    net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="linear", shortcut=False)
    Xb, Yb = X * 1e160, Y * 1e160
    W, _ = draw_trials(net, 3, 0, 1.0)
    with pytest.raises(DivergenceError) as alone:
        train(net.copy().set_weights(W[0]), Xb, Yb, algorithm="scg", stop=Correct(analog=0.1),
              strip=1, max_epochs=10)
    with pytest.raises(DivergenceError) as many:
        train_many(net, Xb, Yb, algorithm="scg", initial_weights=W, stop=Correct(analog=0.1),
                   strip=1, max_epochs=10)
    assert many.value.epoch == alone.value.epoch
    assert batched == {"trained": 0, "unsafe": 1}


class _LanesWorkspace:
    """A single-network workspace whose error and gradient come from the lanes'
    kernel (the trial alone in lane 0), for SCG's own iteration."""

    def __init__(self, net, w):
        from fastnet._kernels import _trials
        from fastnet.training._lanes import LANES, aligned
        self.net, self.w, self.g, self.A = net, w.copy(), np.zeros(w.size), np.zeros((X.shape[0], 1))
        self._k, self._lanes, self._aligned = _trials, LANES, aligned
        self._work = aligned((_trials.work_size(net.n_units),))

    def _block(self, w):
        b = self._aligned((1, w.size, self._lanes))
        b[0, :, 0] = w
        return b

    def gradient(self, w=None, g=None):
        w = self.w if w is None else w
        blocks, E = self._aligned((1, w.size, self._lanes)), np.empty(self._lanes)
        self._k.trials_gradient(self.net.layer_table, self.net.n_in, X, Y, self._block(w), blocks,
                                self._work, E)
        (self.g if g is None else g)[:] = blocks[0, :, 0]
        return float(E[0])

    def sse(self, w):
        return self.gradient(w, np.empty(w.size))

    def correct(self):
        out = self._aligned((1, X.shape[0], Y.shape[1], self._lanes))
        self._k.trials_outputs(self.net.layer_table, self.net.n_in, X, self._block(self.w),
                               self._work, out)
        return bool(np.all(np.where(Y == 1.0, out[0, :, :, 0] > 0.6, out[0, :, :, 0] < 0.4)))


@pytest.mark.parametrize("stop", [Correct(), ErrorBelow(1.0)])
def test_bit_for_bit_the_iteration_alone_on_the_lanes_gradients(batched, stop):
    # SCG's own iteration (the class's begin and strip, one trial), its errors and
    # gradients from the lanes' kernel: the batched path gives the same weights,
    # epochs and counts bit for bit. (Every difference from a run alone is then the
    # kernels' rounding; on wider networks also the order of the sums in p·p and the
    # other dot products, which BLAS splits into partial sums from 16 terms on.)
    # ErrorBelow tests the training error of each epoch (before its update), in
    # squared error percentages (25 E on XOR).
    from fastnet.training._batch_rules import SCG, _Counts
    K, T = 40, 300
    W, _ = draw_trials(NET, K, 9, 1.0)
    r = _many(W, T, stop=stop)
    assert batched["trained"] == 1
    scg = SCG()
    for i in range(K):
        ws = _LanesWorkspace(NET, W[i])
        st = scg.start(NET.n_connections, None, T)
        st.count = _Counts(ws)
        scg.begin(ws, st)
        epochs, reason = T, "max_epochs"
        for epoch in range(T):
            sse = np.empty(1)
            status = scg.strip(ws, st, sse)
            if status < 0:
                epochs, reason = epoch + 1, st.stop_reason
                break
            if ws.correct() if type(stop) is Correct else sse[0] * 25.0 < stop.threshold:
                epochs, reason = epoch + 1, stop.name
                break
        t = r[i].traversals
        assert (epochs, reason) == (r.epochs[i], r.stop_reason[i])
        assert st.count.counts[:3] == [t.forward, t.backward, t.update]
        np.testing.assert_array_equal(ws.w, r.weights[i])


def test_error_below_as_each_trial_alone(batched):
    # ErrorBelow on the training error instead of Hamey's check: the same stops and
    # epochs as each trial alone, and where it stopped them the same traversals (to
    # rounding: see the first test; trials at a local minimum until T count the
    # steps that rounding decides), no success checks (no evaluation traversals), and
    # no NoConvergenceWarning for the trials it stopped.
    K, T, stop = 61, 300, ErrorBelow(0.5)
    W, _ = draw_trials(NET, K, 17, 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoConvergenceWarning)
        r = train_many(NET, X, Y, algorithm="scg", initial_weights=W, stop=stop, strip=1,
                       max_epochs=T)
    assert batched == {"trained": 1, "unsafe": 0}
    late = int(np.count_nonzero(np.asarray(r.stop_reason) == "max_epochs"))
    assert [str(w.message).split(" of ")[0] for w in caught] == ([str(late)] if late else [])
    same = 0
    for i in range(K):
        s = _alone(W[i], T, stop=stop)
        assert r[i].traversals.evaluation == 0
        if (s.epochs, s.stop_reason) == (r.epochs[i], r.stop_reason[i]):
            same += 1
            if s.stop_reason == stop.name:
                assert s.traversals == r[i].traversals
    assert "error_below(train<0.5)" in r.stop_reason
    assert same >= 0.95 * K


def test_final_errors_and_classification_as_alone(batched):
    # One-hot targets (the 8-3-8 encoder): the final training error and the
    # classification error, computed in the lanes, as each trial alone has them.
    from fastnet.datasets import make_encoder
    enc = make_encoder(8, 3)
    Xe, Ye = enc.train if hasattr(enc, "train") else enc
    net = MLP(8, [3], 8, hidden_activation="tanh", output_activation="logistic", shortcut=False)
    W, _ = draw_trials(net, 12, 11, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        r = train_many(net, Xe, Ye, algorithm="scg", initial_weights=W, stop=Correct(), strip=1,
                       max_epochs=20)
        assert batched["trained"] == 1
        for i in range(12):
            s = train(net.copy().set_weights(W[i]), Xe, Ye, algorithm="scg", stop=Correct(),
                      strip=1, max_epochs=20)
            assert (s.epochs, s.stop_reason) == (r.epochs[i], r.stop_reason[i])
            a, b = r[i].final_train, s.final_train
            assert a.classification_error == b.classification_error is not None
            assert a.squared_error_percentage == pytest.approx(b.squared_error_percentage,
                                                               rel=1e-6)
