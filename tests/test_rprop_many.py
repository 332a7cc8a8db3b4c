"""train_rprop_many, the list form: every trial gets what train_rprop gives it
alone, whatever the method (where the trials train: lanes, serial, mixed)."""
import warnings

import _reference as ref

import numpy as np
import pytest
from _training_cases import (
    TINY_ACTIVATIONS, tiny_pairs,
    METHODS, VARIANTS, alone, assert_divergence_names_the_trial, assert_same_run, batch, data,
    early_stopping_study, nets_for, proben1_preset_study, stopping_at, xor_success_study,
)
from numpy.testing import assert_allclose

from fastnet import MLP, DivergenceError, NoConvergenceWarning, train_rprop, train_rprop_many
from fastnet._kernels import _trials
from fastnet.stopping import GL
# (the method choice, the lanes' fill and aligned buffers: no public face)
from fastnet.training import _backends as backends
from fastnet.training import _many as many
from fastnet.training._lanes import aligned


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("hidden", [(), (3,), (4, 2), (3, 4, 2)])
@pytest.mark.parametrize("shortcut", [True, False])
def test_each_method_equals_train_rprop_for_60_epochs(method, variant, hidden, shortcut):
    X, T = data()
    K = 11                                     # not a multiple of the lanes
    nets = nets_for(K, hidden, shortcut)
    seeds = list(range(100, 100 + K))
    kw = dict(variant=variant, max_epochs=60, init_scale=0.5, delta0=(0.05, 0.2))
    refs = alone(nets, seeds, X, T, **kw)
    got = train_rprop_many(nets, X, T, seeds=seeds, method=method, **kw)
    assert len(got) == K
    for g, r, net in zip(got, refs, nets):
        assert g.net is net
        assert_same_run(g, r)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("hidden, shortcut", [((), True), ((3,), True), ((4, 2), False),
                                              ((3, 4, 2), True)])
def test_lanes_kernel_matches_the_numpy_oracle(variant, hidden, shortcut):
    # The lanes kernel directly against tests/_reference.py: every trial's epoch
    # errors and final weights after 60 epochs, per-weight initial steps.
    X, T = data()
    K, epochs = 11, 60
    nets = [MLP(4, hidden, 2, shortcut=shortcut, seed=s) for s in range(K)]
    steps = np.random.default_rng(5).uniform(0.05, 0.2, (K, nets[0].n_connections))
    L, C = _trials.LANES, nets[0].n_connections
    G = -(-K // L)
    flat = np.zeros((G * L, C))
    flat[:K] = [n.weights for n in nets]
    to_lanes = lambda a: np.ascontiguousarray(a.reshape(G, L, C).transpose(0, 2, 1))  # noqa: E731
    w = to_lanes(flat.copy())
    flat[:K] = steps
    step = to_lanes(flat)
    zeros = lambda: np.zeros_like(w)  # noqa: E731
    status = np.zeros(G * L, np.int64)
    status[K:] = 1
    sse = np.zeros((G * L, epochs))
    code = {"rprop+": 0, "rprop-": 1, "irprop-": 2, "irprop+": 3}[variant]
    top = _trials.trials_rprop(nets[0].layer_table, 4, X, T, w, zeros(), zeros(), zeros(), step,
                               np.full(G * L, np.inf), status,
                               np.zeros(_trials.work_size(nets[0].n_units)), code, 1.2, 0.5,
                               0.0, 50.0, sse)
    assert not status[:K].any()
    assert top == sse.max()             # the largest error written (the growth check's)
    for i, net in enumerate(nets):
        err_ref, w_ref = ref.train_rprop(net, X, T, variant, epochs, steps[i], eta_plus=1.2,
                                         eta_minus=0.5, step_min=0.0, step_max=50.0)
        assert_allclose(sse[i], err_ref, rtol=1e-10)
        assert_allclose(w[i // L, :, i % L], w_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("K", [1, 7, 8, 9, 17])
@pytest.mark.parametrize("activations", [("proben1", "linear"), ("tanh", "logistic"),
                                         ("logistic", "proben1")])
def test_trial_counts_and_activations(K, activations):
    X, T = data(n=37)                          # rows not a multiple of the blocks
    nets = nets_for(K, (5,), hidden_activation=activations[0], output_activation=activations[1])
    seeds = list(range(K))
    kw = dict(max_epochs=60, init_scale=0.5)
    for g, r in zip(train_rprop_many(nets, X, T, seeds=seeds, method="lanes", **kw),
                    alone(nets, seeds, X, T, **kw)):
        assert_same_run(g, r)


@pytest.mark.parametrize("method", METHODS)
def test_early_stopping_per_trial_with_validation_and_test_sets(method):
    K = 16
    got = early_stopping_study(K, method)
    # the trials stopped at different epochs, each by its own criterion
    assert len({r.epochs for r in got}) > 1
    assert all(r.stop_reason in ("GL2", "UP2", "P<0.1") for r in got)
    if method == "mixed":          # some trials went on alone as the others stopped
        assert batch(got)["handoffs"] and sum(batch(got)["handoffs"]) < K


@pytest.mark.parametrize("variant", VARIANTS)
def test_early_stopping_of_each_variant_with_hand_offs(variant):
    got = early_stopping_study(16, "mixed", variant=variant)
    assert len({r.epochs for r in got}) > 1 and batch(got)["handoffs"]


@pytest.mark.parametrize("method", METHODS)
def test_proben1_preset_matches(method):
    got = proben1_preset_study(method)
    assert method != "mixed" or batch(got)["handoffs"]


@pytest.mark.parametrize("method", METHODS)
def test_success_check_in_the_kernel_matches(method):
    stops, got = xor_success_study(20, 25, method)
    assert "correct" in stops and "max_epochs" in stops   # successes and failures both


@pytest.mark.parametrize("K", [3, 32])
def test_success_check_with_hand_offs(K):
    # (3 trials go on alone from the start; of 32, in four full groups, two are
    # handed off after epoch 20, the first return from the kernel, and two after 40)
    stops, got = xor_success_study(K, 45, "mixed")
    assert "correct" in stops
    assert "max_epochs" in stops or K < 32           # successes and failures both
    assert batch(got)["handoffs"] == ([K] if K < 32 else [2, 2])


def test_stopped_trials_leave_the_others_unchanged():
    # the same trial gives the same result whether or not its lane-mates stop early
    X, T = data(50, seed=6)
    Xv, Tv = data(25, seed=7)
    kw = dict(max_epochs=200, init_scale=0.5, stop=GL(1), strip=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        many = train_rprop_many(nets_for(9, (4,)), X, T, Xv, Tv, seeds=range(9),
                                method="lanes", **kw)
        one = train_rprop_many(nets_for(1, (4,)), X, T, Xv, Tv, seeds=[8], method="lanes", **kw)
    assert len({r.epochs for r in many}) > 1
    assert_same_run(many[8], one[0], rtol=0)
    assert np.array_equal(many[8].net.weights, one[0].net.weights)


def test_serial_method_is_train_rprop():
    X, T = data()
    nets = nets_for(3, (9,))
    kw = dict(max_epochs=30, init_scale=0.5)
    got = train_rprop_many(nets, X, T, seeds=[1, 2, 3], method="serial", **kw)
    for g, r in zip(got, alone(nets, [1, 2, 3], X, T, **kw)):
        assert_same_run(g, r, rtol=0)


def test_auto_method_by_the_work_of_an_epoch():
    # (documented in train_rprop_many, not exported)
    from fastnet.training._many import LANES_MAX_WORK

    X, T = data()                                    # 40 examples
    narrow = train_rprop_many(nets_for(2, (4, 2)), X, T, seeds=[0, 1], init_scale=0.5,
                              max_epochs=5)          # 40 x 42 connections
    n_hidden = LANES_MAX_WORK // (40 * 7) + 1        # 40 x (7 n_hidden + 2) > LANES_MAX_WORK
    wide = train_rprop_many(nets_for(2, (n_hidden,)), X, T, seeds=[0, 1], init_scale=0.5,
                            max_epochs=5)
    assert narrow[0].setup["batch"]["method"] == "lanes"
    assert wide[0].setup["batch"]["method"] == "serial"


def test_cpu_time_apportioned_by_epochs():
    X, T = data(50, seed=6)
    Xv, Tv = data(25, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        rs = train_rprop_many(nets_for(9, (4,)), X, T, Xv, Tv, seeds=range(9), method="lanes",
                              max_epochs=200, init_scale=0.5, stop=GL(1))
    batch = rs[0].setup["batch"]
    assert batch["n_trials"] == 9 and batch["cpu_time"] > 0
    assert sum(r.cpu_time for r in rs) == pytest.approx(batch["cpu_time"])
    total = sum(r.epochs for r in rs)
    for r in rs:
        assert r.cpu_time == pytest.approx(batch["cpu_time"] * r.epochs / total)


@pytest.mark.parametrize("method", METHODS)
def test_callback_sees_each_trial(method):
    X, T = data()
    seen = []

    def cb(i, epoch, state):
        seen.append((i, epoch))
        return i == 1 and epoch >= 10     # stop trial 1 after epoch 10

    rs = train_rprop_many(nets_for(3, (3,)), X, T, seeds=[0, 1, 2], max_epochs=20, strip=5,
                          init_scale=0.5, callback=cb, method=method)
    assert [r.epochs for r in rs] == [20, 10, 20]
    assert rs[1].stop_reason == "callback"
    assert sorted(seen) == sorted([(0, e) for e in (5, 10, 15, 20)] + [(1, 5), (1, 10)]
                                  + [(2, e) for e in (5, 10, 15, 20)])


@pytest.mark.parametrize("method", METHODS)
def test_divergence_names_the_trial(method):
    # (with "mixed" the 3 trials fill too little of their lanes: they go on alone
    # from the start, and diverge there)
    assert_divergence_names_the_trial(method)


def test_bad_input():
    X, T = data()
    with pytest.raises(ValueError, match="at least one network"):
        train_rprop_many([], X, T)
    with pytest.raises(TypeError, match="give `n_trials`"):
        train_rprop_many(MLP(4, (3,), 2), X, T)
    with pytest.raises(TypeError, match=r"`nets\[1\]` must be a fastnet.MLP, got str"):
        train_rprop_many([MLP(4, (3,), 2), "net"], X, T)
    with pytest.raises(ValueError, match=r"`nets\[2\]` differs from `nets\[0\]` in layer_sizes"):
        train_rprop_many([MLP(4, (3,), 2), MLP(4, (3,), 2), MLP(4, (5,), 2)], X, T)
    with pytest.raises(ValueError, match=r"`nets\[1\]` differs .* in shortcut"):
        train_rprop_many([MLP(4, (3,), 2), MLP(4, (3,), 2, shortcut=False)], X, T)
    with pytest.raises(ValueError, match=r"in hidden_activation"):
        train_rprop_many([MLP(4, (3,), 2), MLP(4, (3,), 2, hidden_activation="tanh")], X, T)
    net = MLP(4, (3,), 2)
    with pytest.raises(ValueError, match="same network object twice"):
        train_rprop_many([net, net], X, T)
    with pytest.raises(ValueError, match=r"`seeds` must hold one seed per network \(2\), got 3"):
        train_rprop_many(nets_for(2, (3,)), X, T, seeds=[1, 2, 3])
    with pytest.raises(TypeError, match="`seeds` must be a sequence"):
        train_rprop_many(nets_for(2, (3,)), X, T, seeds=5)
    with pytest.raises(ValueError, match="`method`"):
        train_rprop_many(nets_for(2, (3,)), X, T, method="gpu")
    with pytest.raises(ValueError, match="`eta_minus`"):
        train_rprop_many(nets_for(2, (3,)), X, T, eta_minus=1.5)
    with pytest.raises(ValueError, match="`X` has 3 inputs but the network has 4"):
        train_rprop_many(nets_for(2, (3,)), X[:, :3], T)


def test_kernel_refuses_buffers_that_do_not_fit():
    net = MLP(2, (2,), 1)
    X = np.zeros((4, 2))
    T = np.zeros((4, 1))
    w = np.zeros((1, net.n_connections, _trials.LANES))
    work = np.zeros(_trials.work_size(net.n_units))
    with pytest.raises(ValueError, match="work buffer too small"):
        _trials.trials_sse(net.layer_table, 2, X, T, w, work[:10], np.zeros(_trials.LANES))
    with pytest.raises(ValueError, match="weight vectors have length"):
        _trials.trials_sse(net.layer_table, 2, X, T, w[:, :3], work, np.zeros(_trials.LANES))
    with pytest.raises(ValueError, match="targets do not match"):
        _trials.trials_sse(net.layer_table, 2, X, T[:3], w, work, np.zeros(_trials.LANES))
    with pytest.raises(ValueError, match="one value per lane"):
        _trials.trials_sse(net.layer_table, 2, X, T, w, work, np.zeros(3))


@pytest.mark.parametrize("sources", [(2, 4), (3, 5)], ids=["ends-early", "starts-late"])
def test_kernel_refuses_a_layer_that_does_not_read_the_whole_layer_before_it(sources):
    # The lanes' backward pass completes a layer's dE/dnet in the tiles of the layer
    # after it, so that layer must read all of it, last (every MLP's layers do); a
    # table the single-network kernels would take otherwise is refused at the gate.
    lo, hi = sources
    fan = hi - lo
    layers = np.array([[2, 3, 0, 2, 0, 6, 1],
                       [5, 2, lo, hi, 9, 9 + 2 * fan, 1],
                       [7, 1, 5, 7, 11 + 2 * fan, 13 + 2 * fan, 0]], dtype=np.intp)
    n_w = 14 + 2 * fan
    X, T = np.zeros((4, 2)), np.zeros((4, 1))
    w = np.zeros((1, n_w, _trials.LANES))
    work = np.zeros(_trials.work_size(8, 4, 2))
    with pytest.raises(ValueError, match="each layer must read the whole layer before it"):
        _trials.trials_sse(layers, 2, X, T, w, work, np.zeros(_trials.LANES))
    z = np.zeros_like(w)
    with pytest.raises(ValueError, match="each layer must read the whole layer before it"):
        _trials.trials_rprop(layers, 2, X, T, w, z, z.copy(), z.copy(), z + 0.1,
                             np.full(_trials.LANES, np.inf), np.zeros(_trials.LANES, np.int64),
                             work, 2, 1.2, 0.5, 0.0, 50.0, np.zeros((_trials.LANES, 3)))
    # (the same table with layer 2 reading all of layer 1 runs)
    ok = layers.copy()
    ok[1] = [5, 2, 2, 5, 9, 15, 1]
    ok[2] = [7, 1, 5, 7, 17, 19, 0]
    _trials.trials_sse(ok, 2, X, T, np.zeros((1, 20, _trials.LANES)), work,
                       np.zeros(_trials.LANES))


def test_finished_trials_leave_the_lanes():
    # 20 trials in 3 groups; as they stop, the rest are packed into fewer groups,
    # and every trial still gets what train_rprop gives it alone.
    X, T = data(50, seed=6)
    Xv, Tv = data(25, seed=7)
    nets = nets_for(20, (4,))
    seeds = list(range(20))
    kw = dict(max_epochs=300, init_scale=0.5, stop=GL(1), strip=5)
    refs = alone(nets, seeds, X, T, Xv, Tv, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_rprop_many(nets, X, T, Xv, Tv, seeds=seeds, method="lanes", **kw)
    for g, r in zip(got, refs):
        assert_same_run(g, r)
    packs = batch(got)["repacks"]
    assert packs and packs[0][0] == 3
    assert all(left <= 8 * (groups - 1) for groups, left in packs)


# ----------------------------------------------------------------- tiny networks
# One-hidden-layer shapes listed in _tiny.h (XOR 2-2-1, with and without
# shortcuts) run in kernels of their own, compiled with the sizes as constants.

def _xor():
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    return X, np.array([[0.], [1.], [1.], [0.]])


def _lanes_state(nets, steps):
    L, C = _trials.LANES, nets[0].n_connections
    K = len(nets)
    G = -(-K // L)

    def to_lanes(rows):
        flat = np.zeros((G * L, C))
        flat[:K] = rows
        return np.ascontiguousarray(flat.reshape(G, L, C).transpose(0, 2, 1))

    return G, to_lanes([n.weights for n in nets]), to_lanes(steps)


def has_tiny_kernels():
    net = MLP(2, (2,), 1)
    return _trials.tiny_kernel(net.layer_table, 2, 1)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("hidden,output", TINY_ACTIVATIONS)
@pytest.mark.parametrize("check", [0, 3])
@pytest.mark.parametrize("epochs", [91, 96])
def test_tiny_kernel_equals_the_generic_kernel_bit_for_bit(variant, shortcut, hidden, output,
                                                           check, epochs):
    # 21 trials (3 groups: an odd group out, a partly filled one), two lanes frozen
    # from the start, 7 examples, the success check on or off; the tiny kernel
    # writes its errors 16 epochs at a time, 8 by 8: 91 = 5 x 16 + 8 + 3 epochs,
    # and 96 in rows of whole cache lines (streamed past the cache). Every array
    # the kernel writes is the generic kernel's, bit for bit.
    net = MLP(2, (2,), 1, shortcut=shortcut, hidden_activation=hidden, output_activation=output)
    if (hidden, output) not in tiny_pairs():
        assert not _trials.tiny_kernel(net.layer_table, 2, 1)
        pytest.skip(f"{hidden}/{output} has no tiny kernel at this CPU level")
    assert _trials.tiny_kernel(net.layer_table, 2, 1)
    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, (7, 2))
    T = (rng.uniform(size=(7, 1)) > 0.5).astype(float)
    K = 21
    nets = [MLP(2, (2,), 1, shortcut=shortcut, hidden_activation=hidden,
                output_activation=output, seed=s) for s in range(K)]
    steps = rng.uniform(0.05, 0.2, (K, nets[0].n_connections))
    steps[0, :3] = 1e-7                      # steps out of [delta_min, delta_max]
    steps[1, 2:4] = 60.0
    G, w0, step0 = _lanes_state(nets, steps)
    status0 = np.zeros(G * _trials.LANES, np.int64)
    status0[K:] = 1
    status0[[3, 12]] = 1
    code = {"rprop+": 0, "rprop-": 1, "irprop-": 2, "irprop+": 3}[variant]
    runs = []
    for special in (False, True):
        w, step, status = w0.copy(), step0.copy(), status0.copy()
        g, g_prev, dw_prev = (np.zeros_like(w) for _ in range(3))
        last = np.full(G * _trials.LANES, np.inf)
        sse = aligned((G * _trials.LANES, epochs))
        work = np.zeros(_trials.work_size(nets[0].n_units, 7, 2))
        top = _trials.trials_rprop(nets[0].layer_table, 2, X, T, w, g, g_prev, dw_prev, step,
                                   last, status, work, code, 1.2, 0.5, 1e-6, 50.0, sse, check,
                                   0.4, -1.0, special=special)
        assert top == sse.max()         # (every error is >= 0; the unwritten ones 0)
        runs.append((w, g_prev, dw_prev, step, last, status, sse))
    (w, gp, dw, st, last, status, sse), tiny = runs
    assert np.array_equal(status, tiny[5])
    for a, b in zip((w, gp, st), (tiny[0], tiny[1], tiny[3])):
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    if variant != "irprop-":                 # irprop- keeps no previous change
        assert np.array_equal(dw.view(np.int64), tiny[2].view(np.int64))
    trained = status == 0
    assert np.array_equal(last[trained], tiny[4][trained])
    for i in range(G * _trials.LANES):      # the epochs each lane trained
        n = 0 if status0[i] else (epochs if status[i] == 0 else abs(status[i]))
        assert np.array_equal(sse[i, :n], tiny[6][i, :n])
    if check:
        assert (status < 0).any()            # some trials passed the check


def test_which_shapes_have_tiny_kernels():
    def tiny(*args, **kw):
        net = MLP(*args, **kw)
        return _trials.tiny_kernel(net.layer_table, net.n_in, net.n_out)

    if not tiny_pairs():
        assert not tiny(2, (2,), 1) and not tiny(2, (2,), 1, shortcut=False)
        pytest.skip("no tiny-network kernel at this CPU level (x86-64's baseline)")
    assert tiny(2, (2,), 1) and tiny(2, (2,), 1, shortcut=False)
    assert tiny(2, (2,), 1, output_activation="proben1") == (_trials.lanes_level() == 2)
    assert not tiny(2, (3,), 1) and not tiny(3, (2,), 1) and not tiny(2, (2,), 2)
    assert not tiny(2, (2, 2), 1) and not tiny(2, (), 1)
    for hidden, output in TINY_ACTIVATIONS:
        assert tiny(2, (2,), 1, hidden_activation=hidden, output_activation=output) == (
            (hidden, output) in tiny_pairs())
    # the other pairs train in the generic kernel (the same arithmetic, bit for bit)
    for hidden, output in [("linear", "logistic"), ("logistic", "tanh"), ("tanh", "linear"),
                           ("relu", "relu")]:
        assert not tiny(2, (2,), 1, hidden_activation=hidden, output_activation=output)
    assert not tiny(2, (2,), 2, output_activation="softmax")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shortcut", [True, False])
def test_tiny_shapes_equal_train_rprop(variant, shortcut):
    X, T = data(12, n_in=2, n_out=1, seed=3)   # (XOR's errors go to ~0: no relative check)
    K = 19
    nets = nets_for(K, (2,), shortcut, n_in=2, n_out=1)
    seeds = list(range(K))
    kw = dict(variant=variant, max_epochs=120, init_scale=0.8, delta0=(0.05, 0.2))
    refs = alone(nets, seeds, X, T, **kw)
    for g, r in zip(train_rprop_many(nets, X, T, seeds=seeds, method="lanes", **kw), refs):
        assert_same_run(g, r)


def test_tiny_shape_with_a_step_below_delta_min_equals_train_rprop():
    # A delta0 below delta_min is legal (the rule clamps a step only on the side
    # it moves to) and must give train_rprop's result.
    X, T = _xor()
    nets = nets_for(9, (2,), n_in=2, n_out=1)
    kw = dict(max_epochs=60, init_scale=0.8, delta0=0.01, delta_min=0.02)
    for g, r in zip(train_rprop_many(nets, X, T, seeds=range(9), method="lanes", **kw),
                    alone(nets, range(9), X, T, **kw)):
        assert_same_run(g, r)


def test_tiny_shape_divergence_names_the_trial():
    X, T = _xor()
    with pytest.raises(DivergenceError, match=r"of trial 0 became non-finite in "
                                              r"epoch 1"):
        train_rprop_many(nets_for(3, (2,), n_in=2, n_out=1), X * 1e200, T, seeds=[0, 1, 2],
                         init_scale=0.5, max_epochs=5, method="lanes")


@pytest.mark.parametrize("with_val", [False, True])
def test_results_built_in_bulk_are_ordinary_train_results(with_val):
    # The results are built by filling __dict__ (not through the dataclass
    # __init__): they must be indistinguishable from constructed ones.
    import dataclasses
    import pickle

    from fastnet import SetErrors, TrainResult

    X, T = data(30, seed=8)
    Xv, Tv = data(15, seed=9)
    extra = dict(X_val=Xv, Y_val=Tv, stop=GL(1)) if with_val else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        rs = train_rprop_many(nets_for(10, (3,)), X, T, seeds=range(10), init_scale=0.5,
                              max_epochs=40, method="lanes", **extra)
    names = [f.name for f in dataclasses.fields(TrainResult)]
    for r in rs:
        assert type(r) is TrainResult and list(vars(r)) == names
        assert list(vars(r.final_train)) == [f.name for f in dataclasses.fields(SetErrors)]
        rebuilt = TrainResult(**{n: getattr(r, n) for n in names})
        assert repr(rebuilt) == repr(r)
        assert dataclasses.replace(r, cpu_time=1.0).cpu_time == 1.0
        with pytest.raises(dataclasses.FrozenInstanceError):
            r.epochs = 3
        back = pickle.loads(pickle.dumps(r))
        assert back.epochs == r.epochs and np.array_equal(back.train_error, r.train_error)
        assert back.final_train == r.final_train
        assert r.setup["seed"] == rs.index(r)


@pytest.mark.parametrize("method", ["lanes", "serial"])
def test_train_results_is_a_sequence_with_columns(method):
    import pickle

    from fastnet import TrainResult, TrainResults

    X, T = data(30, seed=8)
    Xv, Tv = data(15, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        rs = train_rprop_many(nets_for(11, (3,)), X, T, Xv, Tv, seeds=range(11),
                              init_scale=0.5, stop=GL(1), max_epochs=60, method=method)
    assert type(rs) is TrainResults and len(rs) == 11
    # each object is built once and kept; negative indices and slices as for lists
    assert rs[3] is rs[3] and rs[-1] is rs[10] and rs[-11] is rs[0]
    assert rs[2:9:3] == [rs[2], rs[5], rs[8]]
    with pytest.raises(IndexError):
        rs[11]
    with pytest.raises(IndexError):
        rs[-12]
    assert rs[np.int64(3)] is rs[3]
    with pytest.raises(TypeError, match="`index` must be an integer or a slice, got str"):
        rs["3"]
    with pytest.raises(TypeError, match="`index` must be an integer or a slice, got bool"):
        rs[True]
    with pytest.raises(TypeError, match=r"`results\[1\]` must be a fastnet.TrainResult, got int"):
        TrainResults([rs[0], 3])
    with pytest.raises(TypeError, match="`results` must be a sequence of fastnet.TrainResult"):
        TrainResults(5)
    items = list(rs)
    assert all(type(r) is TrainResult for r in items) and items[4] is rs[4]
    # the columns are the fields of the results, read-only
    assert rs.epochs.tolist() == [r.epochs for r in items]
    assert rs.relevant_epoch.tolist() == [r.relevant_epoch for r in items]
    assert rs.stop_reason == tuple(r.stop_reason for r in items)
    assert rs.cpu_time.tolist() == [r.cpu_time for r in items]
    assert rs.wall_time.tolist() == [r.wall_time for r in items]
    assert len(set(rs.epochs.tolist())) > 1           # trials stopped at different epochs
    with pytest.raises(ValueError, match="read-only"):
        rs.epochs[0] = 1
    # pickles as its list of results, and gets the same columns back from them
    back = pickle.loads(pickle.dumps(rs))
    assert type(back) is TrainResults and back.epochs.tolist() == rs.epochs.tolist()
    for name in ("weights", "train_error", "val_error", "val_epochs", "min_train_error"):
        np.testing.assert_array_equal(getattr(back, name), getattr(rs, name))
    np.testing.assert_array_equal(back.final_val.squared_error_percentage,
                                  rs.final_val.squared_error_percentage)
    assert [r.stop_reason for r in back] == list(rs.stop_reason)
    assert repr(rs).startswith("TrainResults(11 trials, epochs ")


def test_train_results_built_late_equal_train_rprop():
    # An object built long after the call (other results read first, the batch's
    # arrays untouched) is still trial i's own run.
    X, T = data(30, seed=3)
    Xv, Tv = data(15, seed=4)
    kw = dict(init_scale=0.5, stop=GL(2), max_epochs=50, strip=5)
    nets = nets_for(9, (4,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        rs = train_rprop_many(nets, X, T, Xv, Tv, seeds=range(9), method="lanes", **kw)
    refs = alone(nets_for(9, (4,)), range(9), X, T, Xv, Tv, **kw)
    for i in reversed(range(9)):
        assert_same_run(rs[i], refs[i])


# ------------------------------------------------- method "mixed": the hand-off
# Lanes, then the last trials one at a time in the single-network kernels.

@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("hidden", [(), (3,), (4, 2), (3, 4, 2)])
@pytest.mark.parametrize("shortcut", [True, False])
def test_mixed_equals_train_rprop_with_a_handoff_mid_run(variant, hidden, shortcut):
    X, T = data()
    K = 16
    nets = nets_for(K, hidden, shortcut)
    seeds = list(range(200, 200 + K))
    # trials stop one after another: with 13 left the second group holds 5 (< 3/4 of
    # 8), which go on alone; the first stays full until 5 are left in it too
    epochs = [5 * (k + 1) for k in range(K)]
    cb, cbs = stopping_at(epochs)
    kw = dict(variant=variant, max_epochs=100, init_scale=0.5, delta0=(0.05, 0.2), strip=5)
    copies = [net.copy() for net in nets]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        refs = [train_rprop(c, X, T, seed=s, callback=f, **kw)
                for c, s, f in zip(copies, seeds, cbs)]
    got = train_rprop_many(nets, X, T, seeds=seeds, method="mixed", callback=cb, **kw)
    assert batch(got)["handoffs"] == [5, 5]
    assert [r.epochs for r in got] == epochs
    for g, r, net in zip(got, refs, nets):
        assert g.net is net
        assert_same_run(g, r)
    assert got[0].setup["batch"]["method"] == "mixed"


@pytest.mark.parametrize("K", [1, 5, 8, 9, 12, 17])
def test_mixed_trial_counts(K):
    X, T = data(n=37)
    nets = nets_for(K, (5,))
    seeds = list(range(K))
    kw = dict(max_epochs=40, init_scale=0.5)
    got = train_rprop_many(nets, X, T, seeds=seeds, method="mixed", **kw)
    for g, r in zip(got, alone(nets, seeds, X, T, **kw)):
        assert_same_run(g, r)
    # fixed epochs: a hand-off at the start only where the last group of lanes
    # the K trials need is filled less than 3/4
    L = _trials.LANES
    last = K - L * (-(-K // L) - 1)
    assert batch(got)["handoffs"] == ([last] if last < 0.75 * L else [])


def _is_correct_answers(K, method, max_epochs):
    """Trials of XOR trained together (with `method`) and alone, each with a callback
    that asks whether the trial is correct (the general loop's check, on that trial's
    own weights): the results of both and the answers of both, sorted."""
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    T = np.array([[0.], [1.], [1.], [0.]])
    nets = nets_for(K, (2,), n_in=2, n_out=1)
    answers_many, answers_alone = [], []

    def cb(i, epoch, state):
        answers_many.append((i, epoch, state.is_correct(0.4, None)))

    kw = dict(max_epochs=max_epochs, init_scale=1.0, strip=3)
    got = train_rprop_many(nets, X, T, seeds=range(K), method=method, callback=cb, **kw)
    refs = [train_rprop(net.copy(), X, T, seed=i, callback=lambda e, s, i=i: answers_alone.append(
        (i, e, s.is_correct(0.4, None))), **kw) for i, net in enumerate(nets)]
    return got, refs, sorted(answers_many), sorted(answers_alone)


def test_callback_and_is_correct_after_the_handoff():
    got, refs, many, alone = _is_correct_answers(4, "mixed", 30)
    for g, r in zip(got, refs):
        assert_same_run(g, r)
    assert many == alone
    assert batch(got)["handoffs"] == [4]


@pytest.mark.parametrize("method", ["lanes", "mixed"])
def test_callback_and_is_correct_in_the_lanes(method):
    # a trial that trains in the lanes is checked by a forward pass with its lane's
    # weights (fastnet._engine.predict's w): the answers it gets alone
    _, _, many, alone = _is_correct_answers(16, method, 60)
    assert many == alone
    assert any(a for *_, a in alone) and not all(a for *_, a in alone)


def test_bad_input_is_refused_by_the_mixed_method():
    X, T = data()
    with pytest.raises(ValueError, match="`X` has 3 inputs but the network has 4"):
        train_rprop_many(nets_for(2, (3,)), X[:, :3], T, method="mixed")
    with pytest.raises(ValueError, match="`eta_minus`"):
        train_rprop_many(nets_for(2, (3,)), X, T, eta_minus=1.5, method="mixed")
    with pytest.raises(ValueError, match="needs a validation set"):
        train_rprop_many(nets_for(2, (3,)), X, T, stop=GL(2), method="mixed")
    with pytest.raises(ValueError, match="`method`"):
        train_rprop_many(nets_for(2, (3,)), X, T, method="shared")


def test_auto_method_by_shape_and_trial_count():
    from fastnet.training import _many_trials

    auto = _many_trials._auto_method
    L = _trials.LANES
    assert auto(40, 42, 2) == "lanes"                                   # narrow: lanes
    assert auto(3600, 398, 2 * L) == "mixed"                            # thyroid2 8+4
    assert auto(342, many.LANES_MAX_CONNECTIONS, 2 * L) == "mixed"
    assert auto(342, many.LANES_MAX_CONNECTIONS + 1, 2 * L) == "serial"    # too wide
    assert auto(3600, 398, 2) == "serial"                 # 2 trials fill 1/4 of their lanes
    assert auto(3600, 398, 5) == "serial"                 # 5 fill 5/8
    assert auto(3600, 398, 6) == "mixed"                  # 6 fill 3/4
    assert auto(3600, 398, L + 1) == "mixed"              # a full group and one alone
    # through train_rprop_many: 200 examples x 553 connections > LANES_MAX_WORK
    X, T = data(200, n_in=20)
    rs = train_rprop_many(nets_for(16, (25,), n_in=20), X, T, seeds=range(16), init_scale=0.5,
                          max_epochs=3)
    assert rs[0].setup["batch"]["method"] == "mixed"
    rs = train_rprop_many(nets_for(2, (25,), n_in=20), X, T, seeds=range(2), init_scale=0.5,
                          max_epochs=3)
    assert rs[0].setup["batch"]["method"] == "serial"


def test_lanes_fill():
    L = _trials.LANES
    assert backends.lanes_fill(0, L) == 0.0
    assert backends.lanes_fill(L, L) == 1.0
    assert backends.lanes_fill(L + 1, L) == (L + 1) / (2 * L)
    assert backends.lanes_fill(3, L) == 3 / L


def test_networks_hold_the_returned_weights_and_train_again():
    # after a hand-off the networks' own vectors held the training state: the returned
    # networks must hold the relevant epoch's weights and be usable as before
    X, T = data(60, seed=1)
    Xv, Tv = data(30, seed=2)
    nets = nets_for(5, (4,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_rprop_many(nets, X, T, Xv, Tv, seeds=range(5), method="mixed",
                               max_epochs=60, init_scale=0.5, stop=GL(1))
    for r in got:
        assert isinstance(r.net, MLP)
        e = 100.0 / Tv.size * float(((r.net.predict(Xv) - Tv) ** 2).sum())
        assert e == pytest.approx(r.final_val.squared_error_percentage, rel=1e-12)
    assert batch(got)["handoffs"] == [5]


@pytest.mark.parametrize("block_size, blas_min", [(7, 0), (None, 10**9)])
def test_block_size_and_blas_min_steer_the_handed_off_trials(block_size, blas_min):
    X, T = data(50, seed=8)
    nets = nets_for(3, (6, 3))
    kw = dict(max_epochs=30, init_scale=0.5, block_size=block_size, blas_min=blas_min)
    got = train_rprop_many(nets, X, T, seeds=[4, 5, 6], method="mixed", **kw)
    for g, r in zip(got, alone(nets, [4, 5, 6], X, T, **kw)):
        assert_same_run(g, r, rtol=0)
        assert np.array_equal(g.train_error, r.train_error)     # the same kernel, bit for bit
    assert batch(got)["handoffs"] == [3]
