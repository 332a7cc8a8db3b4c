"""The lanes' queue of trials (a stopped trial's lane takes the next at once) and Hamey's
check on each epoch's forward pass: against the strips that train the same trials, the
single-network kernels and a plain NumPy loop."""
import warnings

import numpy as np
import pytest

from fastnet import MLP, train, train_many
from fastnet.algorithms import RPROP
from fastnet.datasets import make_xor
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.stopping import Correct
from fastnet.training import _loop, draw_trials

import _reference as ref

X, Y = make_xor().train
NET = MLP(2, [2], 1, hidden_activation="tanh", output_activation="logistic", shortcut=False)
RULES = ["irprop-", "rprop+", "rprop-", "irprop+", "quickprop(epsilon=0.5)",
         "backprop(learning_rate=0.5, momentum=0.9)", "backprop(learning_rate=0.5, decay=True)",
         "adam(learning_rate=0.05)"]


def _study(monkeypatch=None, strips=False, **kw):
    """train_many as a timing study runs it: in the queue, or (``strips``) in the strips."""
    if strips:
        monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", 0)
    args = dict(stop=Correct(), strip=1, max_epochs=300)
    if "initial_weights" not in kw:
        args["init_scale"] = 1.0
    args.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        return train_many(NET, X, Y, **args)


@pytest.mark.parametrize("rule", RULES)
def test_queue_equals_the_strips_bit_for_bit(rule, monkeypatch):
    # an odd number of trials (the last lanes empty), about half of them failing at T
    q = _study(algorithm=rule, n_trials=37, seed=5)
    assert q[0].setup["batch"]["queued"]
    s = _study(monkeypatch, strips=True, algorithm=rule, n_trials=37, seed=5)
    assert not s[0].setup["batch"]["queued"]
    assert np.array_equal(q.epochs, s.epochs)
    assert q.stop_reason == s.stop_reason
    assert np.array_equal(q.weights, s.weights)
    assert np.array_equal(q.train_error, s.train_error, equal_nan=True)
    assert np.array_equal(q.final_train.squared_error_percentage,
                          s.final_train.squared_error_percentage)
    assert 0 < sum(r == "correct" for r in q.stop_reason) < 37      # both kinds of trial


@pytest.mark.parametrize("rule", ["irprop-", "rprop+", "backprop(learning_rate=0.5, momentum=0.9)"])
def test_queue_trials_equal_single_network_runs(rule):
    q = _study(algorithm=rule, n_trials=11, seed=2)
    s = _study(algorithm=rule, n_trials=11, seed=2, method="serial")
    assert not s[0].setup["batch"]["queued"]
    assert np.array_equal(q.epochs, s.epochs)
    assert q.stop_reason == s.stop_reason
    np.testing.assert_allclose(q.weights, s.weights, rtol=1e-12, atol=1e-14)


def test_trials_stopping_in_the_same_epoch_and_the_order_of_refills():
    # identical trials stop together; each result belongs to its own row
    W, _ = draw_trials(NET, 5, 9, 1.0)
    rows = np.repeat(W, [1, 4, 1, 3, 8], axis=0)            # 17 trials, groups of equals
    q = _study(algorithm="irprop-", initial_weights=rows)
    alone = [_study(algorithm="irprop-", initial_weights=w[None]) for w in W]
    expect = np.repeat([a.epochs[0] for a in alone], [1, 4, 1, 3, 8])
    assert np.array_equal(q.epochs, expect)
    for i, k in enumerate(np.repeat(np.arange(5), [1, 4, 1, 3, 8])):
        assert np.array_equal(q.weights[i], alone[k].weights[0])


def test_without_history_the_queue_takes_any_trials_times_epochs(monkeypatch):
    # K x T bounds the queue's per-epoch history; a study without one (history=False)
    # holds O(K) values and stays in the queue however many trials and epochs
    monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", 1)
    h = _study(algorithm="irprop-", n_trials=21, seed=4, history=False)
    q = _study(algorithm="irprop-", n_trials=21, seed=4)
    assert h[0].setup["batch"]["queued"] and not q[0].setup["batch"]["queued"]
    assert np.array_equal(h.epochs, q.epochs) and np.array_equal(h.weights, q.weights)
    assert np.array_equal(h.min_train_error, q.min_train_error)


def test_history_false_keeps_the_lowest_error_alone():
    q = _study(algorithm="rprop+", n_trials=21, seed=4)
    h = _study(algorithm="rprop+", n_trials=21, seed=4, history=False)
    assert h[0].setup["batch"]["queued"] and h.train_error.shape == (21, 0)
    assert np.array_equal(h.epochs, q.epochs)
    assert np.array_equal(h.min_train_error, q.min_train_error)
    assert h[3].min_train_error == q[3].min_train_error
    # the strips drop their history the same way
    s = _study(algorithm="rprop+", n_trials=21, seed=4, history=False, method="serial")
    np.testing.assert_allclose(s.min_train_error, q.min_train_error, rtol=1e-12)
    with pytest.raises(TypeError, match="`history` must be True or False"):
        _study(algorithm="rprop+", n_trials=2, seed=4, history="no")


@pytest.mark.parametrize("mode", ["batch", "online"])
def test_divergence_in_some_lanes_raises_as_the_strips_do(mode, monkeypatch):
    # Trials that come near overflow (w_limit) leave the queue: the strips train them
    # (handing the runaway trials to the single-network kernels), and raise.
    net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="linear", shortcut=False)
    W, _ = draw_trials(net, 19, 1, 1.0)
    W[[3, 11]] *= 200.0
    kw = dict(algorithm=f"backprop(mode='{mode}', learning_rate=2.0, momentum=0.9)", initial_weights=W,
              stop=Correct(), strip=1, max_epochs=300, **({"seed": 3} if mode == "online" else {}))
    caught = []
    for limit in (_loop.QUEUE_MAX_HISTORY, 0):
        monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", limit)
        with pytest.raises(DivergenceError) as exc, warnings.catch_warnings():
            # (the single-network kernels' error scaling may warn of the overflow)
            warnings.simplefilter("ignore", RuntimeWarning)
            train_many(net, X, Y, **kw)
        caught.append((exc.value.trial, exc.value.epoch))
    assert caught[0] == caught[1]


def test_a_divergence_is_named_at_the_epoch_the_growth_check_fired(monkeypatch):
    # (issue 58, item 6) the queue keeps each trial's largest error, not the epoch it
    # first grew past its limit: it named epoch 50 where the strips and train() name 5
    net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="linear", shortcut=False)
    rule = "backprop(learning_rate=0.5, momentum=0.9)"
    kw = dict(algorithm=rule, n_trials=17, seed=335, init_scale=1.286245480850245,
              stop=Correct(), strip=1, max_epochs=50)
    caught = []
    for limit in (_loop.QUEUE_MAX_HISTORY, 0):
        monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", limit)
        with pytest.raises(DivergenceError) as exc:
            train_many(net, X, Y, **kw)
        caught.append((exc.value.trial, exc.value.epoch, str(exc.value)))
    assert caught[0] == caught[1]
    trial, epoch = caught[0][:2]
    W, _ = draw_trials(net, 17, 335, 1.286245480850245)
    alone = net.copy().set_weights(W[trial])
    with pytest.raises(DivergenceError) as exc:
        train(alone, X, Y, algorithm=rule, stop=Correct(), strip=1, max_epochs=50)
    assert exc.value.epoch == epoch < 50


def test_rprop_near_overflow_is_given_back_to_the_strips(monkeypatch):
    # An RPROP trial whose weights could come near overflow (1e50) stops in the queue at
    # the bound it watches and trains again from its start in the strips, which hand it
    # to the single-network kernels; the others keep the queue's results: the whole is
    # what the strips alone give, bit for bit
    W, _ = draw_trials(NET, 9, 1, 1.0)
    W[2] *= 1e50
    kw = dict(algorithm="irprop-", initial_weights=W, stop=Correct(), strip=1, max_epochs=300)
    q = _same_in_queue_and_strips(NET, kw, monkeypatch)
    assert q[0].setup["batch"]["handoffs"] == [1]


@pytest.mark.parametrize("rule", ["irprop-", "quickprop(epsilon=0.5)",
                                  "backprop(learning_rate=0.5, momentum=0.9)",
                                  "adam(learning_rate=0.1)"])
@pytest.mark.parametrize("history", [True, False])
def test_trials_that_reach_the_bound_leave_the_queue_alone(rule, history, monkeypatch):
    # With the lanes' bound of overflow lowered (safe_weight: 4 in place of about 1e98),
    # some trials reach it in the queue and train again in the strips, the rest stay:
    # every column as in the strips alone
    from fastnet.training import _lanes
    from fastnet.training import _many_trials as many_trials

    monkeypatch.setattr(_lanes, "safe_weight", lambda *args, **kwargs: 4.0)
    W, _ = draw_trials(NET, 40, 3, 1.0)
    kw = dict(algorithm=rule, initial_weights=W, stop=Correct(), strip=1, max_epochs=300,
              history=history)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        q = train_many(NET, X, Y, **kw)
        monkeypatch.setattr(many_trials, "train_queued", lambda loop, history=True: None)
        s = train_many(NET, X, Y, **kw)
    assert q[0].setup["batch"]["queued"] and not s[0].setup["batch"]["queued"]
    given_back = sum(q[0].setup["batch"]["handoffs"])
    assert 0 < given_back < 40
    # the strips hand off the same trials at the same epochs (RPROP too: both watch the
    # weights themselves, not the reach of 50 an epoch)
    assert sum(s[0].setup["batch"]["handoffs"]) == given_back
    assert np.array_equal(q.min_train_error, s.min_train_error, equal_nan=True)
    if history:
        _same_results(q, s)
    else:
        assert np.array_equal(q.epochs, s.epochs) and np.array_equal(q.weights, s.weights)


def _numpy_study(net, W, T, step0=0.1):
    """Hamey's success epoch of each trial of iRPROP- by a plain NumPy loop: the network is
    correct (40-20-40) after its epoch t's update, t >= 1; T if never."""
    epochs = []
    for w in W:
        n = net.copy().set_weights(w)
        opt = ref.Rprop("irprop-", np.full(net.n_connections, step0))
        t = 0
        while t < T:
            g, e = ref.gradient(n, X, Y)
            n.set_weights(opt.update(n.weights.copy(), g, e))
            t += 1
            y = ref.predict(n, X)
            if np.all(np.where(Y == 1.0, y > 0.6, y < 0.4)):
                break
        epochs.append(t)
    return np.array(epochs)


def test_the_check_on_the_forward_pass_stops_where_a_numpy_loop_does():
    net = MLP(2, [2], 1, hidden_activation="proben1", output_activation="proben1",
              shortcut=False)
    W, _ = draw_trials(net, 12, 7, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        q = train_many(net, X, Y, algorithm="irprop-", initial_weights=W, stop=Correct(),
                       strip=1, max_epochs=200, history=False)
    assert q[0].setup["batch"]["queued"]
    expect = _numpy_study(net, W, 200)
    assert np.array_equal(q.epochs, expect)
    assert np.array_equal(np.array(q.stop_reason) == "correct", expect < 200)


@pytest.mark.parametrize("shortcut", [False, True])
def test_trials_gradient_equals_the_numpy_reference(shortcut):
    from fastnet._kernels import _trials
    from fastnet.training._lanes import aligned, from_lanes, to_lanes, LANES

    rng = np.random.default_rng(3)
    net = MLP(5, [4, 3], 2, hidden_activation="tanh", output_activation="logistic",
              shortcut=shortcut)
    Xr, Yr = rng.random((300, 5)), rng.random((300, 2))       # (more than one block)
    W, _ = draw_trials(net, 11, 1, 1.0)
    G, C = -(-11 // LANES), net.n_connections
    g, sse = aligned((G, C, LANES)), np.empty(G * LANES)
    g.fill(np.nan)
    _trials.trials_gradient(net.layer_table, net.n_in, Xr, Yr, to_lanes(W, G, C), g,
                            aligned((_trials.work_size(net.n_units),)), sse)
    for i in range(11):
        expect, e = ref.gradient(net.copy().set_weights(W[i]), Xr, Yr)
        np.testing.assert_allclose(from_lanes(g)[i], expect, rtol=1e-12, atol=1e-13)
        assert sse[i] == pytest.approx(e, rel=1e-12)
    with pytest.raises(ValueError, match="gradient must match"):
        _trials.trials_gradient(net.layer_table, net.n_in, Xr, Yr, to_lanes(W, G, C),
                                aligned((G, C - 1, LANES)), aligned((_trials.work_size(net.n_units),)), sse)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("analog", [None, 0.1])
def test_trials_gradient_checks_the_outputs_of_its_forward_pass(dtype, analog):
    # (for step_many rules) ok_out's bits are Hamey's check of the weights given, as
    # hamey_correct finds it from the outputs, trial by trial
    from fastnet._kernels import _trials
    from fastnet.measures import hamey_correct
    from fastnet.network import outputs_at
    from fastnet.training._lanes import aligned, lanes_per_group, to_lanes

    rng = np.random.default_rng(5)
    net = MLP(2, [3], 2, hidden_activation="tanh", output_activation="logistic", dtype=dtype)
    Xr = rng.random((40, 2)).astype(dtype)
    K, L, C = 37, lanes_per_group(dtype), net.n_connections
    W = (rng.normal(size=(K, C)) * 6).astype(dtype)
    W[1:K:3] = W[0]                                     # (a third of the trials as trial 0)
    W[2:K:9] = W[0] + 0.01                              # (a few near it)
    y0 = outputs_at(net, Xr, W[0])
    Yr = (y0 > 0.5).astype(dtype)                       # (the targets trial 0 gets right,
    Yr[np.abs(y0 - 0.5) < 0.15] = 1.0 - Yr[np.abs(y0 - 0.5) < 0.15]   # but where unsure)
    if analog is not None:
        Yr[::7, 0] = np.round(y0[::7, 0], 2)            # (some targets neither 0 nor 1)
    G = -(-K // L)
    ok = np.full(G, -1, np.int64)
    _trials.trials_gradient(net.layer_table, net.n_in, Xr, Yr, to_lanes(W, G, C),
                            aligned((G, C, L), dtype=dtype),
                            aligned((_trials.work_size(net.n_units, dtype=dtype),), dtype=dtype),
                            np.empty(G * L), ok, 0.4, -1.0 if analog is None else analog)
    bits = ((ok[:, None] >> np.arange(L)) & 1).reshape(-1)[:K].astype(bool)
    binary = (Yr == 0) | (Yr == 1)
    expect = np.array([hamey_correct(outputs_at(net, Xr, W[k]).astype(float), Yr.astype(float),
                                     0.4, analog, binary).all() for k in range(K)])
    assert np.array_equal(bits, expect) and 0 < expect.sum() < K


def _same_in_queue_and_strips(net, kw, monkeypatch, data=(X, Y), queued=True):
    """train_many(net, *data, **kw) in the queue (or, not ``queued``, where the queue
    leaves it) and in the strips: the same results bit for bit; the queue's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        q = train_many(net, *data, **kw)
        monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", 0)
        s = train_many(net, *data, **kw)
    assert q[0].setup["batch"]["queued"] is queued and not s[0].setup["batch"]["queued"]
    _same_results(q, s)
    return q


def _same_results(q, s):
    assert np.array_equal(q.epochs, s.epochs) and q.stop_reason == s.stop_reason
    assert np.array_equal(q.weights, s.weights)
    assert np.array_equal(q.train_error, s.train_error, equal_nan=True)
    assert np.array_equal(q.final_train.squared_error_percentage,
                          s.final_train.squared_error_percentage)
    assert [r.traversals.evaluation for r in q] == [r.traversals.evaluation for r in s]


@pytest.mark.parametrize("acts, shortcut", [(("tanh", "logistic"), True), (("logistic", "logistic"), False),
                                            (("logistic", "logistic"), True), (("proben1", "linear"), True)])
@pytest.mark.parametrize("rule", ["irprop-", "rprop+", "irprop+"])
def test_tiny_queue_equals_the_strips_bit_for_bit(acts, shortcut, rule, monkeypatch):
    # the tiny networks' own queue kernel (their pairs), else the generic one
    net = MLP(2, [2], 1, hidden_activation=acts[0], output_activation=acts[1], shortcut=shortcut)
    W, _ = draw_trials(net, 45, 8, 1.0)
    kw = dict(algorithm=rule, initial_weights=W, stop=Correct(), strip=1, max_epochs=400)
    _same_in_queue_and_strips(net, kw, monkeypatch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("acts", [("tanh", "logistic"), ("relu", "logistic")])
def test_large_rprop_steps_hand_off_the_same_trials_in_queue_and_strips(acts, dtype, monkeypatch):
    # (issue 58, item 1) steps of up to 1e6 bring float32 weights near overflow within
    # the run: the strips used to hand such trials to the single-network kernels at once,
    # by the reach of their steps, the queue only once their weights got there, and the
    # two parted in weights, errors and epochs; both now hand off the same trials at the
    # same epoch
    net = MLP(2, [2], 1, hidden_activation=acts[0], output_activation=acts[1], shortcut=True,
              dtype=dtype)
    from fastnet.training._lanes import safe_weight

    W, _ = draw_trials(net, 24, 468, 0.3970068838218896)
    bound = safe_weight(net.n_units, 2, 4, 1.0, dtype)
    W[:3] *= 1.5 * bound / np.abs(W[:3]).max(axis=1, keepdims=True)   # three start beyond it
    kw = dict(algorithm="rprop+(delta0=10.0, delta_max=1e6, eta_plus=3.0)", initial_weights=W,
              stop=Correct(), strip=1, max_epochs=50)
    q = _same_in_queue_and_strips(net, kw, monkeypatch)
    assert sum(q[0].setup["batch"]["handoffs"]) == 3    # those three alone left the lanes
    assert np.abs(q.weights[3:]).max() < bound          # (the steps' reach alone: no hand-off)


@pytest.mark.parametrize("strip", [1, 5])
@pytest.mark.parametrize("rule", ["irprop-", "rprop+", "quickprop(epsilon=0.5)", "adam(learning_rate=0.05)"])
def test_error_below_in_the_queue_equals_the_strips(rule, strip, monkeypatch):
    # ErrorBelow on the training error stops trials in the queue (tiny kernel: XOR, every
    # epoch; general kernel: the others, or every 5th epoch) as the strips stop them
    from fastnet.stopping import ErrorBelow

    W, _ = draw_trials(NET, 41, 6, 1.0)
    kw = dict(algorithm=rule, initial_weights=W, stop=ErrorBelow(3.0), strip=strip, max_epochs=400)
    q = _same_in_queue_and_strips(NET, kw, monkeypatch)
    assert 0 < sum(r.startswith("error_below") for r in q.stop_reason) < 41


def test_trials_queue_refuses_unsafe_buffers():
    # the memory-safety gate before the nogil queue (shared with trials_train)
    from fastnet._kernels import _trials
    from fastnet.training._lanes import LANES, aligned

    W, _ = draw_trials(NET, 5, 1, 1.0)
    C = NET.n_connections
    K = W.shape[0]

    def call(**change):
        args = dict(state=[aligned((1, C, LANES)) for _ in range(5)], last=np.empty(LANES),
                    work=aligned((_trials.work_size(NET.n_units, 4, 2),)), w0=W, out=np.empty((K, C)),
                    ints=[np.empty(K, np.int64) for _ in range(3)], floats=[np.empty(K) for _ in range(3)],
                    r_c=0.4, history=None)
        args.update(change)
        return _trials.trials_queue(NET.layer_table, 2, X, Y, *args["state"], args["last"], args["work"],
                                    RPROP("rprop+").kernel_rule(), args["w0"], None, args["out"], *args["ints"],
                                    *args["floats"], args["history"], check_every=1, r_c=args["r_c"],
                                    t_max=50)

    assert call() > 0                                   # (a valid call trains)
    bad = {"state": [aligned((1, C, LANES)) for _ in range(4)] + [aligned((1, C - 1, LANES))],
           "last": np.empty(LANES - 1), "work": aligned((3,)), "w0": np.ascontiguousarray(W[:, :-1]),
           "out": np.empty((K - 1, C)), "ints": [np.empty(K, np.int64), np.empty(K, np.int64),
                                                 np.empty(K - 1, np.int64)],
           "r_c": 0.7, "history": np.empty((K, 10))}
    for name, value in bad.items():
        with pytest.raises(ValueError, match="kernel"):
            call(**{name: value})


ONLINE = ["backprop(mode='online', learning_rate=0.3)",
          "backprop(mode='online', learning_rate=0.1, momentum=0.9)",
          "backprop(mode='online', learning_rate=0.5, decay=True)",
          "backprop(mode='online', learning_rate=0.5, momentum=0.5, decay='update')"]


@pytest.mark.parametrize("strip", [1, 5])
@pytest.mark.parametrize("rule", ONLINE)
def test_online_queue_equals_the_strips_bit_for_bit(rule, strip, monkeypatch):
    # online backpropagation in the queue: each lane draws its trial's orders from the
    # trial's own generator, Hamey's check on a pass of its own after the epoch
    W, _ = draw_trials(NET, 37, 6, 1.0)
    kw = dict(algorithm=rule, initial_weights=W, seed=4, stop=Correct(), strip=strip, max_epochs=300)
    q = _same_in_queue_and_strips(NET, kw, monkeypatch)
    assert 0 < sum(r == "correct" for r in q.stop_reason) < 37          # both kinds of trial


@pytest.mark.parametrize("strip", [1, 5])
def test_online_error_below_in_the_queue_equals_the_strips(strip, monkeypatch):
    from fastnet.stopping import ErrorBelow

    W, _ = draw_trials(NET, 29, 2, 1.0)
    kw = dict(algorithm="backprop(mode='online', learning_rate=0.4, momentum=0.5)", initial_weights=W,
              seed=1, stop=ErrorBelow(3.0), strip=strip, max_epochs=300)
    q = _same_in_queue_and_strips(NET, kw, monkeypatch)
    assert 0 < sum(r.startswith("error_below") for r in q.stop_reason) < 29


def _online_list_form(monkeypatch, strips, W, seeds, **kw):
    """train_many's list form, online, (``strips``) in the strips: its results and
    each trial's generator afterwards."""
    if strips:
        monkeypatch.setattr(_loop, "QUEUE_MAX_HISTORY", 0)
    nets = [NET.copy().set_weights(w) for w in W]
    gens = [np.random.default_rng(k) for k in seeds]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        r = train_many(nets, X, Y, seeds=gens, stop=Correct(), strip=1, max_epochs=200, **kw)
    return r, [g.bit_generator.state for g in gens]


def test_online_queue_draws_each_generator_as_the_strips_do_and_equal_trials_stop_together(
        monkeypatch):
    # 13 trials: groups of identical ones (the same weights, generators of the same seed)
    # stop in the same epoch; each generator is left where the strips leave it
    W, _ = draw_trials(NET, 4, 3, 1.0)
    reps = [2, 5, 1, 5]
    rows, seeds = np.repeat(W, reps, axis=0), np.repeat([11, 12, 13, 14], reps)
    kw = dict(algorithm="backprop(mode='online', learning_rate=0.3, momentum=0.5)")
    q, q_gens = _online_list_form(monkeypatch, False, rows, seeds, **kw)
    s, s_gens = _online_list_form(monkeypatch, True, rows, seeds, **kw)
    assert q[0].setup["batch"]["queued"] and not s[0].setup["batch"]["queued"]
    _same_results(q, s)
    assert q_gens == s_gens
    assert len(set(q.epochs.tolist())) > 1
    for i, k in enumerate(np.repeat(np.arange(4), reps)):
        first = sum(reps[:k])
        assert q.epochs[i] == q.epochs[first] and np.array_equal(q.weights[i], q.weights[first])


def test_online_trials_near_overflow_leave_the_queue_with_their_generators_unmoved(monkeypatch):
    # a trial beyond the lanes' safe range (w_limit) sends the whole batch to the strips,
    # each generator back where it started: the strips' results bit for bit
    W, _ = draw_trials(NET, 19, 1, 1.0)
    W[5] *= 1e100
    kw = dict(algorithm="backprop(mode='online', learning_rate=0.3)", initial_weights=W, seed=2,
              stop=Correct(), strip=1, max_epochs=200)
    q = _same_in_queue_and_strips(NET, kw, monkeypatch, queued=False)
    assert 0 < sum(r == "correct" for r in q.stop_reason)


@pytest.mark.parametrize("stop", ["correct", "error_below"])
def test_online_queue_of_a_larger_network_equals_the_strips(stop, monkeypatch):
    # two hidden layers with shortcuts, 40 examples (the check's pass in two blocks),
    # per-update decay: every trial stops in the queue where it stops in the strips
    from fastnet.stopping import ErrorBelow

    rng = np.random.default_rng(1)
    Xd = rng.uniform(-1, 1, (40, 3))
    Yd = (Xd @ rng.uniform(-1, 1, (3, 2)) > 0).astype(float)
    net = MLP(3, (4, 3), 2, hidden_activation="tanh", output_activation="logistic", shortcut=True)
    kw = dict(algorithm="backprop(mode='online', learning_rate=0.1, momentum=0.5, decay='update')",
              n_trials=13, seed=3, stop=Correct() if stop == "correct" else ErrorBelow(0.5),
              strip=1, max_epochs=80, init_scale=1.0)
    q = _same_in_queue_and_strips(net, kw, monkeypatch, data=(Xd, Yd))
    assert 0 < sum(r != "max_epochs" for r in q.stop_reason) < 13


def test_queue_stops_a_trial_whose_first_epoch_error_is_not_finite():
    # status 1 (a non-finite error in the first epoch) is a status, not "trains on":
    # such a trial stops un-updated after 0 epochs (it trained a second epoch, status 2)
    from fastnet._kernels import _trials
    from fastnet.algorithms import Backprop
    from fastnet.training._lanes import LANES, aligned

    net = MLP(2, [2], 1, hidden_activation="tanh", output_activation="linear", shortcut=False)
    W, _ = draw_trials(net, 3, 1, 1.0)
    W[1] *= 1e200                                        # (its outputs overflow)
    K, C = W.shape
    out = dict(w_out=np.empty((K, C)), epochs=np.empty(K, np.int64), status=np.empty(K, np.int64),
               top_epoch=np.empty(K, np.int64), first=np.empty(K), top=np.empty(K), low=np.empty(K))
    _trials.trials_queue(net.layer_table, 2, X, Y, *[aligned((1, C, LANES)) for _ in range(5)],
                         np.empty(LANES), aligned((_trials.work_size(net.n_units, 4, 2),)),
                         Backprop(learning_rate=0.1).kernel_rule(), W, None, *out.values(), None,
                         special=False, t_max=5)
    assert out["status"].tolist() == [0, 1, 0] and out["epochs"].tolist() == [5, 0, 5]
    assert np.array_equal(out["w_out"][1], W[1])
