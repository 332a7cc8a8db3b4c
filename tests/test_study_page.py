"""The study page (`fastnet study`): verdicts in a unit comparable across algorithms,
Lawrence et al.'s pictures of the times to success, and no inf or nan where a number
belongs."""
import json
import re
import warnings

import numpy as np
import pytest
from scipy import stats

from fastnet import MLP, NoConvergenceWarning, train_many
from fastnet.algorithms import from_spec
from fastnet.datasets import make_xor
from fastnet.study import Study, cost_unit, run_study, summary_markdown
from fastnet.study import _run as study_run
from fastnet.study import _write as study_write
from fastnet.study import _data as study_data
from _extras import needs

#: inf, nan (any case), Infinity: what a page must never show for a number.
NOT_A_NUMBER = re.compile(r"\b(?:[+-]?inf(?:inity)?|nan)\b", re.IGNORECASE)


def shown_text(page):
    """The page's text without its pictures' base64 (which may spell anything)."""
    return re.sub(r'src="data:image/png;base64,[^"]*"', 'src=""', page)


def synthetic(specs_and_data, limit, group=None):
    """A StudyResult from given trials: {spec: (epochs, success, cpu, diverged,
    traversals, flops)}, as `run_study` assembles it."""
    study = Study("xor", tuple(specs_and_data), trials=len(next(iter(specs_and_data.values()))[0]),
                  limit=limit)
    cells = [study_run._analyse(study, spec, 0 if group else k, data)
             for k, (spec, data) in enumerate(specs_and_data.items())]
    cells = study_run._mark_best(cells)
    unit, why = cost_unit(cells)
    return study_run.StudyResult(study, "xor", (2, 2, 1), tuple(cells),
                                 study_run._logrank_tests(cells, limit, unit=unit),
                                 cost_unit=unit, cost_reason=why)


def trials(epochs, limit, per_epoch, cpu_per_epoch=1e-6, flops=0):
    epochs = np.asarray(epochs, dtype=np.intp)
    K = epochs.size
    return (epochs, epochs < limit, cpu_per_epoch * epochs, np.zeros(K, bool),
            (per_epoch * epochs).astype(float), np.full(K, float(flops)))


# --------------------------------------------------------------------------- units

def test_verdict_is_not_in_epochs_where_epochs_cost_differently():
    # SCG (here) takes half RPROP's epochs, but each of its epochs costs 20 times
    # RPROP's traversals: in epochs SCG would win; in the work done RPROP does, and the
    # verdict must say so.
    rng = np.random.default_rng(0)
    T = 500
    a = rng.integers(8, 16, 40)
    b = rng.integers(16, 32, 40)
    result = synthetic({"scg": trials(a, T, 2000), "rprop+": trials(b, T, 100)}, T)
    assert result.cost_unit == "traversals" and "2,000" in result.cost_reason
    (t,) = result.logrank
    assert t.unit == "traversals" and t.better == "rprop+"
    # the test is scipy's log-rank on the traversals to success
    ref = stats.logrank(a * 2000.0, b * 100.0)
    assert (t.statistic, t.pvalue) == pytest.approx((ref.statistic, ref.pvalue))
    assert t.median_ratio == pytest.approx(np.median(a * 2000.0) / np.median(b * 100.0))
    text = summary_markdown(result)
    assert "rprop+ succeeds in fewer traversals" in text
    assert "in fewer epochs" not in text and "Which is faster in traversals" in text


def test_failures_are_censored_at_the_cost_of_the_limit():
    T = 100
    a = np.array([5, 9, 12, 100, 100, 7, 100, 30])            # three failures, at T
    result = synthetic({"rprop+": trials(a, T, 50), "quickprop": trials(a + 3, T, 40)}, T)
    x = result.algorithms[0]
    assert np.array_equal(x.costs("traversals"), np.where(a < T, a, T) * 50.0)
    # a diverged trial (stopped at epoch 4, no count) counts as T epochs at the
    # algorithm's mean cost per epoch
    epochs, success, cpu, diverged, traversals, flops = (v.copy() for v in trials(a, T, 50))
    epochs[1], success[1], diverged[1], traversals[1] = 4, False, True, np.nan
    cell = study_run._analyse(result.study, "rprop+", 0,
                              (epochs, success, cpu, diverged, traversals, flops))
    assert cell.costs("traversals")[1] == T * 50.0 and cell.cost_per_epoch("traversals") == 50


def test_epochs_where_every_epoch_costs_the_same_and_cpu_where_work_is_uncounted():
    T = 300
    same = synthetic({"rprop+": trials([10, 20, 30, 40], T, 81),
                     "quickprop": trials([15, 25, 35, 300], T, 81)},
                     T)
    assert same.cost_unit == "epochs" and "81" in same.cost_reason
    assert all(t.unit == "epochs" for t in same.logrank)
    outside = synthetic({"rprop+": trials([10, 20, 30, 40], T, 81),
                         "lm": trials([3, 4, 5, 6], T, 150, cpu_per_epoch=1e-4, flops=1500)}, T)
    assert outside.cost_unit == "CPU time" and "lm" in outside.cost_reason
    (t,) = outside.logrank
    assert t.unit == "CPU time" and "CPU time" in study_write._verdict(t, 0.05)
    assert t.better in (None, "rprop+")


def test_a_real_study_counts_the_traversals_train_many_counts():
    # rprop+ and scg on XOR: SCG's epochs cost more traversals (and vary), so the
    # verdicts count traversals; each trial's count is train_many's.
    study = Study("xor", ("rprop+", "scg"), trials=12, limit=150)
    result = run_study(study)
    assert result.cost_unit == "traversals"
    X, Y = make_xor().train
    net = MLP(2, [2], 1, shortcut=False, hidden_activation="tanh", output_activation="logistic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)
        r = train_many(net, X, Y, n_trials=12, seed=0, init_scale=1.0, algorithm=from_spec("scg"),
                       stop=study.criterion(), strip=1, max_epochs=150)
    scg = result.algorithms[1]
    assert np.array_equal(scg.traversals, [r[i].traversals.training for i in range(12)])
    assert all(t.unit == "traversals" for t in result.logrank)


# --------------------------------------------------------------------------- the page

def heavy_tailed(seed, n=200, T=1000, k=0.5, a=0.05):
    """Times to success of Hamey's model with tail exponent k <= 1: no finite mean."""
    u = np.random.default_rng(seed).random(n)
    return np.minimum(np.ceil(((1 - u) ** (-1 / k) - 1) / a), T).astype(np.intp)


def grid_with_an_infinite_corrected_mean():
    T = 1000
    data = {"backprop(learning_rate=0.5)": trials(heavy_tailed(0), T, 81),
            "backprop(learning_rate=2.0)": trials(np.full(200, T), T, 81),     # no success
            "backprop(learning_rate=4.0)": trials(np.r_[[5, 6], np.full(198, T)], T, 81)}
    result = synthetic(data, T, group=True)
    assert np.isinf(result.algorithms[0].hamey.corrected_mean)
    assert np.isnan(result.algorithms[1].hamey.optimal_limit)
    return result


def test_no_inf_or_nan_on_the_page_of_a_grid_with_an_infinite_corrected_mean():
    result = grid_with_an_infinite_corrected_mean()
    text = summary_markdown(result)
    assert not NOT_A_NUMBER.search(text), NOT_A_NUMBER.search(text)
    rows = {r[0].rstrip(" *"): r for r in study_write.summary_rows(result)}
    assert rows["backprop(learning_rate=0.5)"][8] == study_write.NO_MEAN
    assert rows["backprop(learning_rate=2.0)"][3] == study_write.NO_SUCCESS
    assert study_write.NO_MEAN in text and "does not exist" in text
    page = study_write.study_html(result, pictures=False)
    assert not NOT_A_NUMBER.search(shown_text(page))
    data = json.loads(json.dumps(study_data._json(result), allow_nan=False))
    assert data["algorithms"][0]["hamey"]["corrected_mean"] is None


def test_the_page_pictures_the_distributions_of_the_times_to_success(monkeypatch):
    needs("matplotlib")
    from fastnet import plots

    T = 500
    rng = np.random.default_rng(1)
    result = synthetic({"scg": trials(rng.integers(8, 16, 30), T, 2000),
                        "rprop+": trials(rng.integers(16, 32, 30), T, 100),
                        "backprop": trials(np.r_[[40, 50], np.full(28, T)], T, 100)}, T)
    page = study_write.study_html(result)
    assert 'alt="distributions of the times to success (extended box-whiskers)"' in page
    assert "Not drawn" in page and "backprop (2 successes)" in page
    assert not NOT_A_NUMBER.search(shown_text(page))
    # what is drawn: two panels (epochs; traversals, the verdicts' unit), each with an
    # extended box-whiskers plot of 8 segments per drawn algorithm
    drawn = {}
    monkeypatch.setattr(plots, "to_png", lambda axes, dpi: drawn.setdefault("axes", axes))
    study_write._distributions(result, plots)
    epochs, traversals = drawn["axes"]
    for ax, unit in ((epochs, "epochs"), (traversals, "traversals")):
        assert ax.get_title() == f"{unit} to success"
        boxes = [p for p in ax.patches if p.get_gid() == "segment"]
        assert len(boxes) == 2 * 6                     # 6 boxes + 2 whiskers per algorithm
        assert [t.get_text() for t in ax.get_xticklabels()] == ["scg", "rprop+"]
    top = max(p.get_y() + p.get_height() for p in traversals.patches)
    assert top <= np.max(result.algorithms[0].costs("traversals"))


def test_the_unit_can_be_chosen(capsys):
    study = Study("xor", ("rprop+", "lm"), trials=8, limit=60, cost="traversals")
    result = run_study(study)
    assert result.cost_unit == "traversals" and "lm (" in result.cost_reason
    assert all(t.unit == "traversals" for t in result.logrank)
    auto = run_study(Study("xor", ("rprop+", "lm"), trials=8, limit=60))
    assert auto.cost_unit == "CPU time"
    # the unit is no part of the set-up: the same trials serve every unit
    assert study.identity(None) == Study("xor", ("rprop+", "lm"), trials=8,
                                         limit=60).identity(None)
    with pytest.raises(ValueError, match="`cost`"):
        Study("xor", cost="epochs")
    from fastnet import cli

    assert cli.main(["study", "xor", "-a", "rprop+", "scg", "-k", "6", "-T", "40", "--cost",
                     "cpu", "-q"]) == 0
    assert "Which is faster in CPU time" in capsys.readouterr().out


def test_a_whole_algorithms_trials_file_of_before_chunks_is_trained_again(tmp_path):
    study = Study("xor", ("rprop+",), trials=6, limit=50)
    old = tmp_path / "trials" / f"{study.cell_hash('rprop+', None)}.json"
    old.parent.mkdir()
    old.write_text(json.dumps({"epochs": [1] * 6}))         # (as studies wrote them before)
    lines = []
    again = run_study(study, tmp_path, progress=lines.append, pictures=False)
    assert any("training" in line for line in lines)
    assert np.isfinite(again.algorithms[0].traversals).all()
    assert len(list((tmp_path / "trials").glob("*/*.npz"))) == 1


def test_p_values_that_underflow_are_bounds_not_zeros():
    t = study_run.LogRank("rprop+", "scg", 49.3, 0.0, "rprop+", pvalue_holm=0.0,
                          unit="traversals")
    assert study_write._p(0.0) == "< 1e-300" and study_write._p(0.0032) == "0.0032"
    assert study_write._verdict(t, 0.05) == "rprop+ succeeds in fewer traversals (Holm p < 1e-300)"


# ------------------------------------------------------------ curves that cross

def _crossing_study(k=400, seed=0):
    """A (named rprop+): 40 % of its trials succeed within 10 epochs, the rest never; B
    (irprop-): 90 % succeed, between 30 and 80 epochs. The curves cross near 52 epochs."""
    g = np.random.default_rng(seed)
    a = np.where(g.random(k) < 0.4, g.integers(3, 10, k), 200)
    b = np.where(g.random(k) < 0.9, g.integers(30, 80, k), 200)
    return synthetic({"rprop+": trials(a, 200, 81), "irprop-": trials(b, 200, 81)},
                     200)


def test_curves_that_cross_are_named_with_who_leads_on_each_side():
    # (issue 58, item 7) the median ratio and the log-rank test answer different questions
    # when the success curves cross; the verdict says so, first on the page
    result = _crossing_study()
    (t,) = result.logrank
    assert 45 <= t.curves_cross <= 58 and t.ahead_before == "rprop+"   # (equal near 52)
    assert t.median_ratio > 1                              # B's median is the shorter
    verdict = study_write._verdict(t, 0.05)
    assert verdict.startswith("no single winner: the success curves cross near ")
    assert "rprop+ has more successes before, irprop- after" in verdict
    assert "median time to success: irprop-" in verdict
    summary = summary_markdown(result)
    assert summary.index("## Verdicts") < summary.index("## Hamey's measures")
    assert f"- rprop+ vs irprop-: {verdict}" in summary
    page = study_write.study_html(result, pictures=False)
    assert page.index('id="verdicts"') < page.index('id="hamey"')
    assert json.loads(study_data._json_text(result))["logrank"][0]["curves_cross"] == t.curves_cross


def test_curves_that_do_not_cross_keep_the_plain_verdict():
    g = np.random.default_rng(1)
    k = 400
    fast = g.integers(3, 40, k)
    slow = np.where(g.random(k) < 0.7, g.integers(20, 150, k), 200)
    result = synthetic({"rprop+": trials(fast, 200, 81), "irprop-": trials(slow, 200, 81)}, 200)
    (t,) = result.logrank
    assert np.isnan(t.curves_cross) and t.ahead_before is None
    assert study_write._verdict(t, 0.05).startswith("rprop+ succeeds in fewer epochs (Holm p")


@pytest.mark.parametrize("k", [30, 300, 3000])
def test_equal_distributions_are_not_called_crossing(k):
    # the same distribution drawn twice: a margin of three standard errors at every success
    # time keeps sampling noise from being called a crossing (here in 50 draws of each size)
    g = np.random.default_rng(k)
    crossed = 0
    for _ in range(50):
        a, b = (np.where(g.random(k) < 0.6, g.geometric(0.05, k), 10 ** 6) for _ in range(2))
        cross, _ = study_run.success_curves_cross(a.astype(float), a < 10 ** 6,
                                                  b.astype(float), b < 10 ** 6)
        crossed += np.isfinite(cross)
    assert crossed <= 2
