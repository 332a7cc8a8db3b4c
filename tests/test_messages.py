"""Error messages in the user's words: they name what the user wrote, not an
internal parameter (``stop="GL5"`` is about `stop`, not about a `kind`)."""
import numpy as np
import pytest

from fastnet import MLP, train_rprop, train_rprop_many
from fastnet.stopping import GL, AnyOf, MaxEpochs


def _xor():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], float)
    return X, np.array([[0], [1], [1], [0]], float)


@pytest.mark.parametrize("stop", ["GL5", "gl5", "tables"])
def test_stop_as_an_unknown_string_names_stop(stop):
    X, Y = _xor()
    net = MLP(2, (2,), 1, seed=0)
    match = (r"^`stop` must be None, a fastnet.stopping criterion such as GL\(5\) .*one of \['linear', "
             rf"'multilayer', 'multilayer-literal'\], got '{stop}'\.$")
    with pytest.raises(ValueError, match=match):
        train_rprop(net, X, Y, X, Y, stop=stop)
    with pytest.raises(ValueError, match=match):
        train_rprop_many([net], X, Y, X, Y, stop=stop)


@pytest.mark.filterwarnings("ignore::fastnet.NoConvergenceWarning")
def test_stop_names_that_exist_still_work():
    X, Y = _xor()
    r = train_rprop(MLP(2, (2,), 1, seed=0), X, Y, X, Y, stop="linear", max_epochs=10)
    assert r.epochs <= 10


def test_composites_name_themselves_and_what_they_take():
    with pytest.raises(ValueError, match=r"^`AnyOf` needs at least one criterion, such as GL\(5\), got none\.$"):
        AnyOf()
    with pytest.raises(TypeError, match=r"^`AnyOf` takes StoppingCriterion objects such as GL\(5\), got 'GL5'\.$"):
        AnyOf(GL(5), "GL5")
    assert AnyOf(GL(5), MaxEpochs(10)).name == "(GL5 or max_epochs)"


@pytest.mark.parametrize("which", ["X", "Y"])
def test_a_1d_array_gets_a_reshape_hint_naming_itself(which):
    from fastnet import train

    X, Y = _xor()
    args = {"X": X, "Y": Y}
    args[which] = args[which][:, 0]            # (1-D)
    net = MLP(2, (2,), 1, seed=0) if which == "Y" else MLP(1, (2,), 1, seed=0)
    match = rf"^`{which}` must be 2-D .*got shape \(4,\) \(use {which}\.reshape\(-1, 1\) for a single "
    for fit in (train, train_rprop):
        with pytest.raises(ValueError, match=match) as info:
            fit(net, args["X"], args["Y"], max_epochs=1)
        assert f"{'XY'.replace(which, '')}.reshape" not in str(info.value)
