"""What the training tests share: small data, networks, the runs of train_rprop
alone that a batch must equal, and studies written once and run by every method
of train_rprop_many (the backends: lanes, serial, mixed)."""
import platform
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from fastnet import MLP, DivergenceError, NoConvergenceWarning, train_rprop, train_rprop_many
from fastnet.stopping import GL, UP, AnyOf, Correct, ProgressBelow

VARIANTS = ["rprop+", "rprop-", "irprop-", "irprop+"]
#: The methods of train_rprop_many (where its trials train), "auto" aside.
METHODS = ["lanes", "serial", "mixed"]


def batch(results):
    """The batch record of train_rprop_many's results: its method, hand-offs
    (trials moved from the lanes to the single-network kernels, per hand-off) and
    repacks ((groups before, trials kept) per packing of the lanes)."""
    return results[0].setup["batch"]


def outputs_at_one_half(net):
    """``net`` with every weight and bias into its (logistic) output layer set to
    0: each output is 0.5 for any input, so targets of 0.5 make the error and the
    gradient exactly 0 (a minimum the full-batch rules must stop at)."""
    W, b = net.get_params()
    L = net.n_layers
    for (i, j) in W:
        if j == L:
            W[(i, j)][:] = 0.0
    b[L][:] = 0.0
    return net.set_params(W, b)


def data(n=40, n_in=4, n_out=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in))
    T = (rng.uniform(size=(n, n_out)) > 0.5).astype(float)
    return X, T


def nets_for(K, hidden, shortcut=True, n_in=4, n_out=2, **kw):
    return [MLP(n_in, hidden, n_out, shortcut=shortcut, **kw) for _ in range(K)]


def alone(nets, seeds, *args, **kw):
    """What train_rprop gives each network on its own (on copies)."""
    copies = [net.copy() for net in nets]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        return [train_rprop(c, *args, seed=s, **kw) for c, s in zip(copies, seeds)]


def assert_same_run(got, ref, rtol=1e-10):
    assert got.epochs == ref.epochs
    assert got.stop_reason == ref.stop_reason
    assert got.relevant_epoch == ref.relevant_epoch
    assert got.traversals == ref.traversals
    assert_allclose(got.net.weights, ref.net.weights, rtol=rtol, atol=1e-13)
    assert_allclose(got.train_error, ref.train_error, rtol=rtol)
    for a, b in ((got.val_error, ref.val_error), (got.test_error, ref.test_error)):
        assert (a is None) == (b is None)
        if a is not None:
            assert_allclose(a, b, rtol=rtol)
    if ref.val_epochs is not None:
        assert np.array_equal(got.val_epochs, ref.val_epochs)
    for a, b in ((got.final_train, ref.final_train), (got.final_val, ref.final_val),
                 (got.final_test, ref.final_test)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.squared_error_percentage == pytest.approx(b.squared_error_percentage, rel=rtol)
            assert a.classification_error == b.classification_error


def early_stopping_study(K, method, **options):
    """K trials of a 4-4-2-2 net stopped by GL2, UP2 or P<0.1 with validation and
    test sets, each checked against train_rprop alone; returns the results."""
    X, T = data(60, seed=1)
    Xv, Tv = data(30, seed=2)
    Xt, Tt = data(30, seed=3)
    nets = nets_for(K, (4, 2))
    seeds = list(range(K))
    stop = AnyOf(GL(2), UP(2), ProgressBelow(0.1))
    kw = dict(max_epochs=400, init_scale=0.5, stop=stop, strip=5, X_test=Xt, Y_test=Tt,
              **options)
    refs = alone(nets, seeds, X, T, Xv, Tv, **kw)
    got = train_rprop_many(nets, X, T, Xv, Tv, seeds=seeds, method=method, **kw)
    for g, r in zip(got, refs):
        assert_same_run(g, r)
    return got


def proben1_preset_study(method):
    """12 trials of a 9-4-2-2 net under Proben1's multilayer preset, each checked
    against train_rprop alone; returns the results."""
    X, T = data(80, n_in=9, seed=4)
    Xv, Tv = data(40, n_in=9, seed=5)
    nets = nets_for(12, (4, 2), n_in=9)
    seeds = list(range(12))
    refs = alone(nets, seeds, X, T, Xv, Tv, preset="proben1-multilayer")
    got = train_rprop_many(nets, X, T, Xv, Tv, seeds=seeds, preset="proben1-multilayer",
                           method=method)
    for g, r in zip(got, refs):
        assert_same_run(g, r)
    return got


def xor_success_study(K, max_epochs, method):
    """K XOR trials stopped by Correct() (the kernel's success check), each
    checked against train_rprop alone; returns the stop reasons and the results."""
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    T = np.array([[0.], [1.], [1.], [0.]])
    nets = nets_for(K, (2,), n_in=2, n_out=1)
    seeds = list(range(K))
    kw = dict(max_epochs=max_epochs, init_scale=1.0, stop=Correct(), strip=1)
    refs = alone(nets, seeds, X, T, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        got = train_rprop_many(nets, X, T, seeds=seeds, method=method, **kw)
    for g, r in zip(got, refs):
        assert_same_run(g, r)
    return [r.stop_reason for r in got], got


def assert_divergence_names_the_trial(method):
    """Inputs of 1e200 overflow in epoch 1: the error names trial 0 and the epoch."""
    X, T = data()
    X = X * 1e200
    with pytest.raises(DivergenceError, match=r"of trial 0 became non-finite in "
                                              r"epoch 1") as info:
        train_rprop_many(nets_for(3, (3,)), X, T, seeds=[0, 1, 2], init_scale=0.5,
                         max_epochs=5, method=method)
    assert info.value.trial == 0 and info.value.epoch == 1


def stopping_at(epochs):
    """A callback for train_rprop_many that stops trial i after epochs[i], and the
    matching callbacks for train_rprop alone."""
    many = lambda i, epoch, state: epoch >= epochs[i]                        # noqa: E731
    alone_cbs = [lambda epoch, state, e=e: epoch >= e for e in epochs]
    return many, alone_cbs


# The pairs with tiny kernels (each compiled with its activations): Proben1's, the
# study's default tanh/logistic, Hamey's logistic/logistic and relu hidden units at
# x86-64-v4; the first three of them at x86-64-v3 and on CPUs without levels
# (aarch64); none in x86-64's baseline (SSE2), which trains in the generic kernel.
TINY_ACTIVATIONS = [("proben1", "linear"), ("tanh", "logistic"), ("logistic", "logistic"),
                    ("proben1", "proben1"), ("relu", "linear"), ("relu", "logistic")]
TINY_NARROW = TINY_ACTIVATIONS[:3]


def _lanes_level():
    from fastnet._kernels import _trials
    return _trials.lanes_level()


def tiny_pairs():
    """The pairs with tiny kernels at the level this process runs at."""
    level = _lanes_level()
    if level == 2:
        return TINY_ACTIVATIONS
    if level == 1 or platform.machine().lower() not in ("x86_64", "amd64"):
        return TINY_NARROW
    return []
