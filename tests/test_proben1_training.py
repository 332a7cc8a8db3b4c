"""Training by the Proben1 rules on real Proben1 data (needs ../shared/proben1)."""
import numpy as np
import pytest

from fastnet import MLP, train_rprop
from fastnet.datasets import load_proben1
from fastnet.measures import classification_error, squared_error_percentage
from fastnet.rprop import proben1_stopping
from fastnet.stopping import TrainingState


def test_cancer1_linear_preset_is_self_consistent(proben1_root):
    data = load_proben1("cancer1", root=proben1_root)
    net = MLP(data.n_in, (), data.n_out)
    r = train_rprop(net, *data.train, *data.val, X_test=data.test.X, Y_test=data.test.Y,
                    preset="proben1-linear", seed=0)
    # stop reason is one of the rule's three parts, at a strip end
    assert r.stop_reason in ("GL5", "P<0.1", "max_epochs")
    assert r.epochs % 5 == 0 and r.epochs <= 3000
    assert r.relevant_epoch in set(r.val_epochs) and r.relevant_epoch <= r.epochs
    # reported errors are those of the relevant epoch's network
    assert r.min_val_error == pytest.approx(r.val_error[list(r.val_epochs).index(r.relevant_epoch)])
    Xv, Tv = data.val
    assert squared_error_percentage(net.predict(Xv), Tv) == pytest.approx(r.min_val_error, rel=1e-12)
    Xt, Tt = data.test
    assert r.final_test.squared_error_percentage == pytest.approx(
        squared_error_percentage(net.predict(Xt), Tt), rel=1e-12)
    assert r.final_test.classification_error == classification_error(net.predict(Xt), Tt)
    # the test error at the relevant strip is what gets reported
    k = list(r.val_epochs).index(r.relevant_epoch)
    assert r.test_error[k] == pytest.approx(r.final_test.squared_error_percentage, rel=1e-12)
    # GL at the end follows from the validation history; GL5 fired only if GL > 5
    assert r.gl_end == pytest.approx(100 * (r.val_error[-1] / r.min_val_error - 1))
    if r.stop_reason == "GL5":
        assert r.gl_end > 5
    # a linear net on cancer classifies most test examples right (Proben1: a few percent wrong)
    assert r.final_test.classification_error < 10
    # the full set-up is described in Proben1 words
    text = r.describe_setup()
    for word in ("rprop+", "eta_plus=1.2", "delta0=[0.005, 0.02]", "uniform in [-0.01, 0.01]",
                 "strip length 5", "350 training, 175 validation, 174 test"):
        assert word in text


def test_multilayer_preset_on_pivot_network(proben1_root):
    data = load_proben1("cancer1", root=proben1_root)
    net = MLP.from_proben1(data.architecture.spec, data.n_in, data.n_out)
    assert net.n_connections == data.architecture.connections == 100
    r = train_rprop(net, *data.train, *data.val, preset="proben1-multilayer", seed=3)
    assert r.setup["parameters"]["eta_plus"] == 1.2
    # The stop is the rule's first firing: replaying the recorded histories strip by
    # strip through a fresh copy of the rule fires exactly at r.epochs, with that reason.
    rule = proben1_stopping("multilayer")
    rule.reset()
    fired_at = None
    for k, t in enumerate(r.val_epochs, start=1):
        state = TrainingState(epoch=int(t), strip=5, train_errors=r.train_error[:t],
                              val_errors=r.val_error[:k], val_epochs=r.val_epochs[:k])
        if rule.update(state):
            fired_at = (int(t), rule.fired)
            break
    assert fired_at == (r.epochs, r.stop_reason)
    assert r.traversals.evaluation == len(r.val_epochs) * 175 * net.n_connections
    assert np.all(np.diff(r.val_epochs) == 5)
