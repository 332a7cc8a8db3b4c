"""Online backpropagation with the trials side by side in the vector lanes: each
lane presents its own examples in its own order (drawn in the kernel from the
trial's own generator, NumPy's numbers) and updates after each, so that a trial
in the lanes is its one-at-a-time run to rounding."""
import warnings

import numpy as np
import pytest
from _training_cases import assert_same_run, batch
from numpy.testing import assert_allclose

import _reference as ref
from fastnet import MLP, DivergenceError, NoConvergenceWarning, train_many
from fastnet._kernels import _trials
from fastnet._kernels._rules import Rule
from fastnet.algorithms import Backprop
from fastnet.stopping import GL
from fastnet.training import _orders, draw_trials


def data(n=40, n_in=3, n_out=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in))
    return X, np.tanh(X @ rng.uniform(-1, 1, (n_in, n_out)))


NETS = {
    "tanh-linear": dict(hidden_activation="tanh", output_activation="linear", shortcut=False),
    "tanh-logistic-shortcut": dict(hidden_activation="tanh", output_activation="logistic",
                                   shortcut=True),
    "two-hidden": dict(hidden_activation="tanh", output_activation="linear", shortcut=True),
}


def both(net, X, Y, algorithm, **kw):
    """The same trials in the lanes and one after another."""
    lanes = train_many(net, X, Y, algorithm=algorithm, method="lanes", **kw)
    serial = train_many(net, X, Y, algorithm=algorithm, method="serial", **kw)
    return lanes, serial


def test_online_backprop_has_lanes():
    assert _orders.drawn_in_kernel()
    assert Backprop(mode="online").lanes and Backprop(mode="online").per_pattern
    assert not Backprop().per_pattern and not Backprop(mode="online").kernel_check


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("decay", [False, True, "update"])
@pytest.mark.parametrize("name", list(NETS))
def test_each_lane_trial_is_its_serial_run(name, decay, momentum):
    X, Y = data()
    hidden = (4, 3) if name == "two-hidden" else (4,)
    net = MLP(3, hidden, 2, **NETS[name])
    K = 11                                      # (a full group of lanes and a partial one)
    lanes, serial = both(net, X, Y, Backprop("online", 0.01, momentum, decay), n_trials=K,
                         seed=3, max_epochs=25, init="fan_in", init_scale=2.4)
    assert batch(lanes)["method"] == "lanes" and batch(serial)["method"] == "serial"
    assert_allclose(lanes.weights, serial.weights, rtol=1e-10, atol=1e-14)
    assert_allclose(lanes.train_error, serial.train_error, rtol=1e-10)
    assert_allclose(lanes.final_train.squared_error_percentage,
                    serial.final_train.squared_error_percentage, rtol=1e-10)
    for i in (0, K - 1):
        assert_same_run(lanes[i], serial[i])


def test_one_epoch_against_numpy():
    # Trial i's order is the first permutation of its spawned generator; the plain
    # NumPy oracle presents the examples in that order, an update after each.
    X, Y = data(12)
    net = MLP(3, (4,), 2, hidden_activation="tanh", output_activation="logistic",
              shortcut=True)
    K, seed, lr, momentum = 3, 5, 0.05, 0.5
    got = train_many(net, X, Y, algorithm=Backprop("online", lr, momentum), n_trials=K,
                     seed=seed, max_epochs=1, method="lanes")
    W, _ = draw_trials(net, K, seed)
    children = np.random.SeedSequence(seed).spawn(K)
    for i in range(K):
        order = np.random.default_rng(children[i]).permutation(12)
        err, w = ref.train_backprop(net.copy().set_weights(W[i]), X, Y, 1, lr, momentum,
                                    online=True, orders=[order])
        assert_allclose(got.weights[i], w, rtol=1e-12, atol=1e-14)
        assert_allclose(got.train_error[i], err * 100.0 / Y.size, rtol=1e-12)


def test_orders_are_numpys_permutations():
    for make in (np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox,
                 np.random.SFC64):
        ours, numpys = np.random.Generator(make(7)), np.random.Generator(make(7))
        for n in (1, 2, 5, 33, 1000):
            out = np.empty((3, n), dtype=np.int64)
            _trials.draw_orders(ours, out)
            for row in out:
                assert np.array_equal(row, numpys.permutation(n))
        assert ours.integers(1 << 62) == numpys.integers(1 << 62)   # (left where NumPy leaves it)


def test_same_seed_same_bits():
    X, Y = data()
    net = MLP(3, (4,), 2, hidden_activation="tanh", output_activation="linear")
    kw = dict(algorithm=Backprop("online", 0.02, 0.9, "update"), n_trials=9, seed=8,
              max_epochs=20, method="lanes")
    a, b = train_many(net, X, Y, **kw), train_many(net, X, Y, **kw)
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(a.train_error, b.train_error, equal_nan=True)


def test_divergence_is_flagged_as_in_serial():
    X, Y = data()
    net = MLP(3, (4,), 2, hidden_activation="tanh", output_activation="linear")
    errors = []
    for method in ("lanes", "serial"):
        with pytest.raises(DivergenceError) as info:
            train_many(net, X, Y * 50, algorithm=Backprop("online", 0.5, 0.9), n_trials=5,
                       seed=0, max_epochs=200, method=method)
        errors.append((info.value.trial, info.value.epoch))
    assert errors[0] == errors[1]


def test_trials_beyond_the_safe_range_go_on_alone():
    # A test set reaching 1e148 leaves the lanes a safe weight range of about 2.7
    # (fastnet.training._lanes.safe_weight): trials whose weights reach it within an
    # epoch go back to where the epoch started and train on one at a time, that
    # epoch's order (drawn in the lanes) first; each is still its serial run.
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (30, 1))
    Y = 5.0 * X
    Xt, Yt = np.array([[1e148]]), np.array([[0.0]])
    net = MLP(1, (), 1, output_activation="linear")
    kw = dict(n_trials=10, seed=2, max_epochs=60, X_test=Xt, Y_test=Yt, init_scale=0.5)
    lanes, serial = both(net, X, Y, Backprop("online", 0.02, 0.5), **kw)
    assert sum(batch(lanes)["handoffs"]) == 10          # every trial left the lanes
    assert_allclose(lanes.weights, serial.weights, rtol=1e-10)
    assert_allclose(lanes.train_error, serial.train_error, rtol=1e-10)


def test_mixed_hands_off_with_each_trials_generator():
    # Trials that early stopping leaves too few in their group of lanes go on one at
    # a time with their generators where the lanes left them.
    X, Y = data(60, seed=1)
    Xv, Yv = data(30, seed=2)
    net = MLP(3, (4,), 2, hidden_activation="tanh", output_activation="logistic")
    kw = dict(n_trials=12, seed=4, max_epochs=120, stop=GL(1), strip=5)
    algorithm = Backprop("online", 0.05, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        mixed = train_many(net, X, Y, Xv, Yv, algorithm=algorithm, method="mixed", **kw)
        serial = train_many(net, X, Y, Xv, Yv, algorithm=algorithm, method="serial", **kw)
    assert batch(mixed)["handoffs"]
    for i in range(12):
        assert_same_run(mixed[i], serial[i])


@pytest.mark.parametrize("queued", [True, False])
def test_success_check_and_repacking_as_in_serial(queued, monkeypatch):
    # Hamey's check at every epoch end (in the lanes' queue, or in Python between the
    # strips): trials stop at the same epochs; the strips pack the others into fewer
    # groups as they go.
    from fastnet.datasets import make_xor
    from fastnet.stopping import Correct
    from fastnet.training import _loop

    if not queued:
        monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", 0)
    X, Y = make_xor().train
    net = MLP(2, (2,), 1, output_activation="logistic")
    kw = dict(algorithm=Backprop("online", 0.5, 0.9), n_trials=21, seed=2, max_epochs=300,
              stop=Correct(), strip=1, init_scale=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        lanes, serial = both(net, X, Y, kw.pop("algorithm"), **kw)
    assert batch(lanes)["queued"] is queued
    assert bool(batch(lanes)["repacks"]) is not queued
    assert np.array_equal(lanes.epochs, serial.epochs)
    assert lanes.stop_reason == serial.stop_reason
    assert_allclose(lanes.weights, serial.weights, rtol=1e-10, atol=1e-13)


def test_shared_generator_trains_one_at_a_time():
    # The list form with one Generator for every network: the trials draw from it in
    # turn, which the lanes would interleave otherwise.
    X, Y = data()
    rng = np.random.default_rng(0)
    nets = [MLP(3, (4,), 2).init_weights(k) for k in range(3)]
    got = train_many(nets, X, Y, algorithm=Backprop("online", 0.05), seeds=[rng] * 3,
                     max_epochs=3, method="lanes")
    assert batch(got)["method"] == "serial"


# ------------------------------------------------------------ the kernel itself


def _kernel_case(K=3, n=6, rate=0.05, decay=0.0, status=None):
    """Arguments of _trials.trials_online for K trials of a 2-3-1 net (one group)."""
    net = MLP(2, (3,), 1, hidden_activation="tanh", output_activation="linear",
              shortcut=False)
    rng = np.random.default_rng(0)
    X, T = rng.uniform(-1, 1, (n, 2)), rng.uniform(-1, 1, (n, 1))
    L, C = _trials.LANES, net.n_connections
    w = np.zeros((1, C, L))
    w[0, :, :K] = rng.uniform(-0.5, 0.5, (C, K))
    st = np.ones(L, np.int64)
    st[:K] = 0 if status is None else status
    gens = [np.random.default_rng(k) for k in range(K)]
    bitgens = np.zeros(L, np.uintp)
    bitgens[:K] = _orders.addresses(gens)
    work = np.zeros(max(_trials.online_work_size(net.n_units, C), _trials.work_size(net.n_units)))
    return dict(layers=net.layer_table, n_in=2, X=X, T=T, w=w, dw_prev=np.zeros_like(w),
                status=st, work=work, rule=Rule("backprop", learning_rate=rate, momentum=0.0, decay=decay),
                sse_out=np.zeros((L, 4)), orders=np.zeros((L, n), np.int64),
                bitgens=bitgens), gens


def _call(args, **kw):
    a = args
    return _trials.trials_online(a["layers"], a["n_in"], a["X"], a["T"], a["w"], a["dw_prev"],
                                 a["status"], a["work"], a["rule"], a["sse_out"], a["orders"],
                                 a["bitgens"], t_max=4, **kw)


def test_kernel_status_and_frozen_lanes():
    # A rate that makes the errors overflow: the diverged lanes get the epoch (their
    # updates made, as the single-network kernel leaves them); frozen and padding
    # lanes keep their weights; each lane's last order is its generator's.
    args, gens = _kernel_case(rate=1e120, status=[0, 0, 5])
    before = args["w"].copy()
    _call(args)
    st = args["status"]
    assert st[0] > 0 and st[1] > 0 and st[2] == 5 and (st[3:] == 1).all()
    assert np.array_equal(args["w"][0, :, 2:], before[0, :, 2:])
    copy = np.random.default_rng(0)
    orders = [copy.permutation(6) for _ in range(st[0])]
    assert np.array_equal(args["orders"][0], orders[-1])


def test_kernel_w_limit_stops_before_the_epoch():
    args, _ = _kernel_case()
    args["w"][0, 0, 1] = 10.0
    before = args["w"].copy()
    _call(args, w_limit=5.0)
    assert args["status"][1] == _trials.BEYOND + 0 and args["status"][0] == 0
    assert np.array_equal(args["w"][0, :, 1], before[0, :, 1])


@pytest.mark.parametrize("change,match", [
    (dict(rule=Rule("adam", learning_rate=0.1, beta1=0.9, beta2=0.99, epsilon=1e-8)),
     "online training needs"),
    (dict(rule=Rule("backprop", learning_rate=0.1, momentum=0.0, decay=3.0)),
     "online training needs"),
    (dict(orders=np.zeros((8, 5), np.int64)), "orders must be"),
    (dict(bitgens=np.zeros(8, np.uintp)), "a training lane has no generator"),
    (dict(work=np.zeros(10)), "work buffer too small"),
    (dict(dw_prev=np.zeros((1, 3, 8))), "does not match the weights"),
])
def test_kernel_refuses_bad_arguments(change, match):
    args, _ = _kernel_case()
    args.update(change)
    with pytest.raises(ValueError, match=match):
        _call(args)


def _queue_call(args, gens, K, T=4, **kw):
    """_trials.trials_queue's online form on _kernel_case's K trials (each from its lane's
    weights, its own generator ``gens[i]``): its per-trial columns by name."""
    a, L = args, _trials.LANES
    C, n = a["w"].shape[1], a["X"].shape[0]
    cols = dict(w_out=np.empty((K, C)), epochs=np.empty(K, np.int64), status=np.empty(K, np.int64),
                top_epoch=np.empty(K, np.int64), first=np.empty(K), top=np.empty(K), low=np.empty(K),
                history=np.full((K, T), np.nan))
    online = dict(orders=np.zeros((L, n), np.int64), bitgens=_orders.addresses(gens))
    online.update(kw.pop("online", {}))
    _trials.trials_queue(a["layers"], a["n_in"], a["X"], a["T"], *[np.zeros((1, C, L)) for _ in range(5)],
                         np.empty(L), kw.pop("work", a["work"]), kw.pop("rule", a["rule"]),
                         np.ascontiguousarray(a["w"][0, :, :K].T), None, *cols.values(), t_max=T,
                         **online, **kw)
    return cols


def _both_kernels(K=3, **case):
    """The same K trials (and generators) in the queue and in trials_online (4 epochs):
    the queue's columns, its generators, trials_online's arguments and generators."""
    args, gens = _kernel_case(K=K, **case)
    q = _queue_call(args, gens, K)
    strips, strip_gens = _kernel_case(K=K, **case)
    _call(strips)
    assert [g.bit_generator.state for g in gens] == [g.bit_generator.state for g in strip_gens]
    return q, strips


@pytest.mark.parametrize("decay", [0.0, 1.0, 2.0])
def test_kernel_queue_trains_as_the_strip_kernel(decay):
    # no stop but T: each trial's weights, errors and generator as trials_online leaves them
    q, strips = _both_kernels(decay=decay)
    assert np.array_equal(q["w_out"], strips["w"][0, :, :3].T)
    assert np.array_equal(q["history"], strips["sse_out"][:3])
    assert (q["epochs"] == 4).all() and (q["status"] == 0).all()


def test_kernel_queue_stops_a_trial_whose_error_is_not_finite():
    # without w_limit, a runaway rate: each trial stops at the epoch whose error is not
    # finite (status and epochs k), as trials_online's lane status says
    q, strips = _both_kernels(rate=1e120)
    assert (q["status"] > 0).all() and np.array_equal(q["status"], strips["status"][:3])
    assert np.array_equal(q["epochs"], q["status"])


@pytest.mark.parametrize("change,match", [
    (dict(rule=Rule("adam", learning_rate=0.1, beta1=0.9, beta2=0.99, epsilon=1e-8)),
     "online training needs"),
    (dict(online=dict(orders=np.zeros((8, 5), np.int64))), "orders must be"),
    (dict(online=dict(orders=None)), "generators and orders"),
    (dict(online=dict(bitgens=np.zeros(2, np.uintp))), "generators and orders"),
    (dict(online=dict(bitgens=np.zeros(3, np.uintp))), "a trial has no generator"),
    (dict(work=np.zeros(10)), "work buffer too small"),
])
def test_kernel_queue_refuses_bad_online_arguments(change, match):
    args, gens = _kernel_case(K=3)
    with pytest.raises(ValueError, match=match):
        _queue_call(args, gens, 3, **change)
