"""fastnet.algorithms: names, the spec parser, and fastnet.train over the algorithm objects."""
import numpy as np
import pytest

from fastnet import MLP, train, train_backprop, train_rprop
from fastnet.algorithms import ALGORITHMS, RPROP, Backprop, from_spec, spec_of
from fastnet.datasets import make_xor


def _xor_net():
    return MLP(2, (2,), 1, output_activation="logistic")


@pytest.mark.parametrize("spec, expected", [
    ("rprop+", RPROP()),
    ("irprop+", RPROP(variant="irprop+")),
    ("IRPROP-", RPROP(variant="irprop-")),
    ("rprop-(eta_plus=1.1, delta0=(0.05, 0.2))", RPROP(variant="rprop-", eta_plus=1.1,
                                                       delta0=(0.05, 0.2))),
    ("backprop(learning_rate=0.5, momentum=0.9, mode='online')",
     Backprop(mode="online", learning_rate=0.5, momentum=0.9)),
])
def test_from_spec_reads_names_and_literal_parameters(spec, expected):
    assert from_spec(spec) == expected
    assert from_spec(spec_of(expected)) == expected


def test_from_spec_returns_an_algorithm_unchanged():
    a = Backprop(learning_rate=0.2)
    assert from_spec(a) is a


@pytest.mark.parametrize("spec, match", [
    ("quickprop2", r"`algorithm` must name one of .*got 'quickprop2'"),
    ("rprop+(1.1)", r"name=value pairs"),
    ("rprop+(eta_plus=__import__('os'))", r"name=value pairs"),
    ("backprop(lr=0.1)", r"backprop has no such parameter"),
    ("backprop(momentum=1.5)", r"`momentum` must be"),
])
def test_from_spec_names_what_is_wrong(spec, match):
    with pytest.raises(ValueError, match=match):
        from_spec(spec)


def test_from_spec_refuses_other_types():
    with pytest.raises(TypeError, match=r"`algorithm` must be an Algorithm or a name"):
        from_spec(3)


def test_every_registered_name_makes_an_algorithm():
    for name in ALGORITHMS:
        assert from_spec(name) == from_spec(spec_of(from_spec(name)))


def test_train_with_rprop_equals_train_rprop_bit_for_bit():
    X, Y = make_xor().train
    a = train(_xor_net(), X, Y, algorithm=RPROP(variant="irprop+", delta0=(0.05, 0.2)),
              max_epochs=60, init_scale=0.5, seed=3)
    b = train_rprop(_xor_net(), X, Y, variant="irprop+", delta0=(0.05, 0.2), max_epochs=60,
                    init_scale=0.5, seed=3)
    np.testing.assert_array_equal(a.net.weights, b.net.weights)
    np.testing.assert_array_equal(a.train_error, b.train_error)
    assert a.traversals == b.traversals


def test_train_with_backprop_equals_train_backprop_bit_for_bit():
    X, Y = make_xor().train
    rule = dict(mode="online", learning_rate=0.5, momentum=0.9)
    a = train(_xor_net(), X, Y, algorithm=Backprop(**rule), max_epochs=40, init_scale=0.5, seed=2)
    b = train_backprop(_xor_net(), X, Y, **rule, max_epochs=40, init_scale=0.5, seed=2)
    np.testing.assert_array_equal(a.net.weights, b.net.weights)


def test_train_takes_proben1_rule_names_and_refuses_others():
    X, Y = make_xor().train
    r = train(_xor_net(), X, Y, X, Y, stop="multilayer", max_epochs=3000, init_scale=0.5, seed=0)
    assert r.stop_reason in {"GL2", "P5"}
    with pytest.raises(ValueError, match=r"`stop` must be None, a fastnet.stopping criterion.*'GL5'"):
        train(_xor_net(), X, Y, X, Y, stop="GL5")
