"""What an interrupted run leaves in its networks, on every path.

The rule (docs/training.md, `train_many`, `train`): when an exception ends
training -- one the callback raises, KeyboardInterrupt (Ctrl-C), a divergence --
each network of the list form holds the weights of the last strip end the loop
took in for it (the weights it stopped with, if it had stopped; its initial
weights if no strip had ended), not the relevant epoch's; the exception
propagates unchanged. The array form has no networks to leave anything in.
"""
import signal
import threading
import warnings

import numpy as np
import pytest

import fastnet
from fastnet import MLP, train, train_many
from fastnet.exceptions import DivergenceError, NoConvergenceWarning
from fastnet.stopping import Correct

RNG = np.random.default_rng(0)
X = RNG.uniform(-1.0, 1.0, (12, 3))
Y = (X.sum(axis=1, keepdims=True) > 0.0).astype(float)
X_VAL = RNG.uniform(-1.0, 1.0, (6, 3))
Y_VAL = (X_VAL.sum(axis=1, keepdims=True) > 0.0).astype(float)

ONLINE = "backprop(mode='online', learning_rate=0.01)"
# (algorithm, method, trials): every path the strips take. K = 9 of method "mixed"
# leaves one trial alone in the lanes' second group of 8: it is handed off at once.
PATHS = [
    ("rprop+", "lanes", 3),
    ("rprop+", "serial", 3),
    ("rprop+", "mixed", 9),
    ("backprop(learning_rate=0.01)", "lanes", 3),
    (ONLINE, "lanes", 3),
    (ONLINE, "serial", 3),
    ("scg", "auto", 3),
    ("lm", "auto", 3),
    ("adam(batch_size=4)", "auto", 3),
    ("lbfgs", "auto", 3),
]
IDS = [f"{a.split('(')[0]}{'-online' if a == ONLINE else ''}-{m}" for a, m, _ in PATHS]


def _nets(K):
    return [MLP(3, (3,), 1) for _ in range(K)]


def _run(algorithm, method, K, max_epochs, callback=lambda i, epoch, state: None, **kw):
    """K fresh networks trained (seeds 0 .. K-1); the networks and the results."""
    nets = _nets(K)
    results = train_many(nets, X, Y, algorithm=algorithm, seeds=range(K), init_scale=0.5,
                         max_epochs=max_epochs, method=method, callback=callback, **kw)
    return nets, results


def _weights(nets):
    return np.array([n.weights for n in nets])


def _initial(K):
    return _weights([MLP(3, (3,), 1).init_weights(k, 0.5) for k in range(K)])


def _raise_at(exc, trial=1, epoch=10, stop=None):
    """A callback that raises ``exc`` at trial ``trial``'s strip end ``epoch``, and
    stops trial 0 at strip end ``stop`` (returns True)."""
    def callback(i, e, state):
        if i == 0 and e == stop:
            return True
        if i == trial and e == epoch:
            if exc == "SIGINT":
                signal.raise_signal(signal.SIGINT)
            raise exc
        return None
    return callback


def _expected(algorithm, method, K, epoch, trial=1, max_epochs=30):
    """The weights each network should hold when the callback raises at ``trial``'s
    strip end ``epoch``: those of that strip end, but for L-BFGS, whose trials train
    one after another, trials before ``trial`` finished and those after not begun."""
    at = _weights(_run(algorithm, method, K, epoch)[0])
    if algorithm != "lbfgs":
        return at
    done = _weights(_run(algorithm, method, K, max_epochs)[0])
    initial = _initial(K)
    return np.array([done[k] if k < trial else at[k] if k == trial else initial[k]
                     for k in range(K)])


def _interrupted(algorithm, method, K, callback, **kw):
    nets = _nets(K)
    with pytest.raises(BaseException) as info:
        train_many(nets, X, Y, algorithm=algorithm, seeds=range(K), init_scale=0.5,
                   max_epochs=30, method=method, callback=callback, **kw)
    return nets, info.value


@pytest.mark.parametrize("algorithm, method, K", PATHS, ids=IDS)
@pytest.mark.parametrize("exc", [RuntimeError("from the callback"), KeyboardInterrupt()],
                         ids=["callback-error", "KeyboardInterrupt"])
def test_each_network_holds_its_last_strip_end(algorithm, method, K, exc):
    nets, raised = _interrupted(algorithm, method, K, _raise_at(exc))
    assert raised is exc                                # (propagated unchanged)
    np.testing.assert_array_equal(_weights(nets), _expected(algorithm, method, K, 10))


@pytest.mark.parametrize("algorithm", ["rprop+", "scg"])
def test_an_interrupt_between_two_kernel_calls_of_a_strip(monkeypatch, algorithm):
    """Ctrl-C after trial 0 trained its part of the second strip in the single-network
    kernels, before trial 1 did: every network holds the first strip end (trial 0's
    half-taken strip is not kept)."""
    from fastnet.training._serial import Serial

    run, calls = Serial.run, []

    def interrupted(self, trials, n, check, history, epoch):
        calls.append(epoch)
        if len(calls) == 2:
            run(self, trials[:1], n, check, history, epoch)
            raise KeyboardInterrupt
        return run(self, trials, n, check, history, epoch)

    monkeypatch.setattr(Serial, "run", interrupted)
    nets, raised = _interrupted(algorithm, "serial", 3, lambda i, e, state: None)
    monkeypatch.undo()
    assert isinstance(raised, KeyboardInterrupt) and calls == [0, 5]
    np.testing.assert_array_equal(_weights(nets), _expected(algorithm, "serial", 3, 5))


@pytest.mark.parametrize("n", [3, 8, 17])
def test_an_interrupt_inside_scipys_loop(monkeypatch, n):
    """Ctrl-C at SciPy's n-th evaluation of L-BFGS (a line search's point, maybe):
    trial 0 holds the last strip end its callback saw, trial 1 its initial weights."""
    from fastnet.training import _lbfgs

    fun, calls, seen = _lbfgs._Minimising.fun, [], [0]

    def interrupted(self, x):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return fun(self, x)

    def callback(i, epoch, state):
        seen.append(epoch)

    monkeypatch.setattr(_lbfgs._Minimising, "fun", interrupted)
    nets, raised = _interrupted("lbfgs", "auto", 2, callback)
    monkeypatch.undo()
    assert isinstance(raised, KeyboardInterrupt)
    got = _weights(nets)
    want = _initial(1)[0] if seen[-1] == 0 else _weights(_run("lbfgs", "auto", 1, seen[-1])[0])[0]
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], _initial(2)[1])


def test_the_paths_are_the_ones_named():
    """The mixed batch handed a trial off before the strip end; the others did not."""
    _, mixed = _run("rprop+", "mixed", 9, 10)
    assert mixed[0].setup["batch"]["handoffs"] == [1]
    _, lanes = _run("rprop+", "lanes", 3, 10)
    assert lanes[0].setup["batch"]["method"] == "lanes"


def _main_thread_default_sigint():
    return (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)


@pytest.mark.skipif(not _main_thread_default_sigint(), reason="needs Python's own SIGINT handler")
@pytest.mark.parametrize("algorithm, method, K", [PATHS[0], PATHS[1], PATHS[2], PATHS[-1]],
                         ids=[IDS[0], IDS[1], IDS[2], IDS[-1]])
def test_a_real_sigint_is_not_swallowed(algorithm, method, K):
    """A SIGINT delivered at a strip end raises KeyboardInterrupt out of train_many
    (no path catches it) and leaves the same weights as a raised one."""
    nets, raised = _interrupted(algorithm, method, K, _raise_at("SIGINT"))
    assert isinstance(raised, KeyboardInterrupt)
    np.testing.assert_array_equal(_weights(nets), _expected(algorithm, method, K, 10))


@pytest.mark.parametrize("algorithm, method, K", [PATHS[0], PATHS[1], PATHS[2], PATHS[6]],
                         ids=[IDS[0], IDS[1], IDS[2], IDS[6]])
def test_a_stopped_trial_keeps_the_weights_it_stopped_with(algorithm, method, K):
    """Trial 0 stops at epoch 5 (its callback says so); trial 1's raises at 10."""
    nets, _ = _interrupted(algorithm, method, K, _raise_at(KeyboardInterrupt(), stop=5))
    got = _weights(nets)
    np.testing.assert_array_equal(got[0], _weights(_run(algorithm, method, K, 5)[0])[0])
    np.testing.assert_array_equal(got[1:], _expected(algorithm, method, K, 10)[1:])


@pytest.mark.parametrize("method", ["lanes", "serial"])
def test_best_weights_are_not_restored(method):
    """With a validation set the networks still hold the strip end's weights (no
    relevant epoch is restored: no results are assembled)."""
    nets, _ = _interrupted("rprop+", method, 3, _raise_at(KeyboardInterrupt(), epoch=20),
                           X_val=X_VAL, Y_val=Y_VAL)
    np.testing.assert_array_equal(_weights(nets), _expected("rprop+", method, 3, 20))


@pytest.mark.parametrize("method", ["lanes", "serial"])
def test_a_divergence_leaves_finite_weights(method):
    """A trial whose weights run away raises DivergenceError; the networks hold
    the last strip end taken in before it, finite (here: the initial weights)."""
    nets = _nets(3)
    with pytest.raises(DivergenceError):
        train_many(nets, X, Y, algorithm="backprop(learning_rate=1e150)", seeds=range(3),
                   init_scale=0.5, max_epochs=30, method=method, callback=lambda *a: None)
    got = _weights(nets)
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, _initial(3))


def test_the_lanes_queue_leaves_its_start_or_its_end(monkeypatch):
    """The lanes' queue trains every trial in one kernel call (no strip ends): an
    interrupt during it leaves the initial weights, one after it the final ones."""
    from fastnet.training import _lanes, _many_trials

    kw = dict(algorithm="rprop+", seeds=range(3), init_scale=0.5, max_epochs=30,
              method="lanes", history=False, stop=Correct(0.4))
    done = _nets(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        assert train_many(done, X, Y, **kw)[0].setup["batch"]["queued"]

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    for target, name, want in ((_lanes.LanesBackend, "queue", _initial(3)),
                               (_many_trials, "drop_history", _weights(done))):
        with monkeypatch.context() as m:
            m.setattr(target, name, interrupt)
            nets = _nets(3)
            with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
                warnings.simplefilter("ignore", NoConvergenceWarning)
                train_many(nets, X, Y, **kw)
        np.testing.assert_array_equal(_weights(nets), want)


def test_the_array_form_changes_nothing_and_raises():
    """The array form has no networks of its trials: the topology's are untouched
    and the exception propagates."""
    net = MLP(3, (3,), 1).init_weights(7, 0.5)
    before = net.weights.copy()
    for method in ("lanes", "serial"):
        with pytest.raises(KeyboardInterrupt):
            train_many(net, X, Y, n_trials=3, seed=0, max_epochs=30, method=method,
                       callback=_raise_at(KeyboardInterrupt()))
        np.testing.assert_array_equal(net.weights, before)


def test_the_networks_train_again_after_an_interrupt():
    nets, _ = _interrupted("rprop+", "lanes", 3, _raise_at(KeyboardInterrupt()))
    results = train_many(nets, X, Y, seeds=[None] * 3, max_epochs=5)
    assert results.epochs.tolist() == [5, 5, 5]


@pytest.mark.parametrize("algorithm", ["rprop+", "lbfgs", "adam(batch_size=4)", ONLINE])
@pytest.mark.parametrize("val", [False, True], ids=["no-val", "val"])
def test_train_follows_the_same_rule(algorithm, val):
    """fastnet.train leaves its network as train_many leaves each of its own."""
    sets = dict(X_val=X_VAL, Y_val=Y_VAL) if val else {}

    def callback(epoch, state):
        if epoch == 10:
            raise KeyboardInterrupt

    net = MLP(3, (3,), 1)
    with pytest.raises(KeyboardInterrupt):
        train(net, X, Y, algorithm=algorithm, seed=0, init_scale=0.5, max_epochs=30,
              callback=callback, **sets)
    ref = MLP(3, (3,), 1)
    train(ref, X, Y, algorithm=algorithm, seed=0, init_scale=0.5, max_epochs=10,
          callback=lambda epoch, state: None)
    np.testing.assert_array_equal(net.weights, ref.weights)


def test_train_left_by_a_divergence_is_finite():
    net = MLP(3, (3,), 1)
    with pytest.raises(DivergenceError):
        fastnet.train(net, X, Y, algorithm="backprop(learning_rate=1e150)", seed=0,
                      init_scale=0.5, max_epochs=30)
    np.testing.assert_array_equal(net.weights, _initial(1)[0])
