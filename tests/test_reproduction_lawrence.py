"""fastnet reproduce lawrence: Lawrence et al.'s (1997) Tables 3 and 4 beside ours."""
import json

import numpy as np
import pytest

import fastnet._lawrence as lawrence  # (LAWRENCE_UPDATES is patched where it is read)
from fastnet import cli
from fastnet.reproduction import (LAWRENCE_STATISTICS, LAWRENCE_TABLE3_MLP, LAWRENCE_TABLE4,
                                  reproduce_lawrence)
from fastnet.stats import describe


@pytest.fixture
def short(monkeypatch):
    # two epochs of 1,000 updates instead of 200: the structure, not the levels
    monkeypatch.setattr(lawrence, "LAWRENCE_UPDATES", 2000)


def test_published_figures_as_printed():
    assert LAWRENCE_TABLE3_MLP["test"]["median"] == 0.00190
    assert LAWRENCE_TABLE3_MLP["train"]["ks_p"] == 0.76
    assert LAWRENCE_TABLE4[("test", 15)]["q3"] == 0.0914
    assert LAWRENCE_TABLE4[("train", 1)]["min"] == 0.000471
    for table in (LAWRENCE_TABLE3_MLP["train"], LAWRENCE_TABLE4[("test", 5)]):
        assert tuple(table) == LAWRENCE_STATISTICS
        # the printed IQR is Q3 - Q1 (to the printed digits)
        assert table["iqr"] == pytest.approx(table["q3"] - table["q1"], rel=0.1, abs=2e-5)


def test_small_reproduction_rows(short):
    rep = reproduce_lawrence(3, teachers=(0, 1), seed=0)
    rows = rep.rows()
    assert len(rows) == 2 * 10 + 2 * 4 * 10
    t3 = [r for r in rows if r["table"] == 3]
    t4 = [r for r in rows if r["table"] == 4]
    assert {r["set"] for r in t3} == {"train", "test"} and all(r["K"] is None for r in t3)
    for r in t4:
        v = r["teachers"]
        assert len(v) == 2 and r["low"] == min(v) and r["high"] == max(v)
        assert r["ours"] == pytest.approx(sum(v) / 2)           # median of two
        assert r["paper_place"] == sum(x < r["paper"] for x in v)
        assert r["paper"] == LAWRENCE_TABLE4[(r["set"], r["K"])][r["statistic"]]
    text = rep.to_text()
    assert "Table 3" in text and "Table 4" in text and "K=15" in text
    assert json.loads(rep.to_json())["rows"] == json.loads(json.dumps(rows))


def test_table3_statistics_are_those_of_the_trials_nmse(short):
    # Table 3's statistics are describe() of the NMSE that train_many reports per trial,
    # and those equal measures.nmse of each trained network's predictions
    from fastnet import MLP
    from fastnet.datasets import make_mackey_glass
    from fastnet.measures import nmse

    rep = reproduce_lawrence(4, tables=(3,), seed=1)
    data = make_mackey_glass(n_train=1000, n_test=1000, seed=0, standardize=True)
    seed3 = np.random.SeedSequence(1).spawn(2)[0]
    from fastnet import train_many
    from fastnet.training import Backprop
    net = MLP(6, (5,), 1, shortcut=False, hidden_activation="tanh")
    r = train_many(net, *data.train, X_test=data.test.X, Y_test=data.test.Y,
                   algorithm=Backprop("online", 0.05, 0.0, "update"), n_trials=4, seed=seed3,
                   max_epochs=2, strip=2, init="fan_in", init_scale=2.4, method="serial")
    ours = [nmse(net.copy().set_weights(w).predict(data.test.X), data.test.Y)
            for w in r.weights]
    d = describe(np.array(ours), lilliefors=False)
    assert rep.table3["test"]["median"] == pytest.approx(d.median, rel=1e-10)
    assert rep.table3["test"]["ks_d"] == pytest.approx(d.ks_statistic, rel=1e-10)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`runs`"):
        reproduce_lawrence(2)
    with pytest.raises(ValueError, match="`tables` must hold 3 and/or 4"):
        reproduce_lawrence(3, tables=(5,))
    with pytest.raises(ValueError, match="`teachers` must hold at least one"):
        reproduce_lawrence(3, teachers=(), tables=(4,))
    with pytest.raises(ValueError, match="`method` must be one of"):
        reproduce_lawrence(3, method="parallel")


def test_cli_writes_json(short, tmp_path, capsys):
    out = tmp_path / "L.json"
    assert cli.main(["reproduce", "lawrence", "--runs", "3", "--teachers", "1", "--tables", "3",
                     "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["runs"] == 3 and len(data["rows"]) == 20
    assert set(data["rows"][0]) >= {"table", "model", "K", "set", "statistic", "paper", "ours"}
    assert "Table 3" in capsys.readouterr().out
    assert cli.main(["reproduce", "lawrence", "--runs", "2"]) == 2
