"""Stopping criteria on scripted error sequences: exact stopping epoch and reason."""
import math

import numpy as np
import pytest

from fastnet import MLP, NoConvergenceWarning, train_rprop
from fastnet.rprop import proben1_stopping
from fastnet.stopping import (
    GL, PQ, UP, AllOf, AnyOf, Correct, ErrorBelow, EverHeld, MaxEpochs, ProgressBelow,
    TrainingState, generalization_loss, training_progress,
)


def first_stop(criterion, train, val=None, strip=5):
    """Feed strip ends in order; return (epoch, fired) of the first stop or (None, None)."""
    criterion.reset()
    train = np.asarray(train, dtype=float)
    for t in range(strip, len(train) + 1, strip):
        k = t // strip
        state = TrainingState(epoch=t, strip=strip, train_errors=train[:t],
                              val_errors=None if val is None else np.asarray(val[:k], float),
                              val_epochs=None if val is None else np.arange(1, k + 1) * strip)
        if criterion.update(state):
            return t, criterion.fired
    return None, None


FLAT = [10.0] * 100   # no training progress at all: P5 = 0


def test_gl_definition_and_degenerate_cases():
    assert generalization_loss(1.05, 1.0) == pytest.approx(5.0)
    assert generalization_loss(0.0, 0.0) == 0.0
    assert generalization_loss(0.1, 0.0) == math.inf


def test_progress_definition_and_degenerate_cases():
    # strip 5: (1+1+1+1+6)/ (5*1) = 2 -> 1000 * (2 - 1) = 1000
    assert training_progress([1, 1, 1, 1, 6]) == pytest.approx(1000.0)
    assert training_progress([0, 0, 0]) == 0.0
    assert training_progress([0, 1, 0]) == math.inf
    with pytest.raises(ValueError):
        training_progress([])


def test_gl5_stops_at_first_strip_end_above_5_percent():
    val = [1.0, 0.9, 0.92, 0.94, 0.946, 0.95]   # GL: 0, 0, 2.2, 4.4, 5.11, 5.6
    assert first_stop(GL(5), FLAT, val) == (25, "GL5")


def test_pq_uses_strip_progress():
    # training errors fall 2%/epoch in strip 1..3 then flat: P5 large, then 0.
    train = [100 * 0.98 ** t for t in range(15)] + [50.0] * 10
    val = [1.0, 1.01, 1.02, 1.0, 1.1]
    # strip ends 5,10,15: P5 ~ 40 (GL<=2 -> PQ<3 would need GL>120); at 20: P5 = 0, GL = 0 -> 0
    # at 25: GL = 10, P5 = 0 -> inf -> stop
    assert first_stop(PQ(3), train, val) == (25, "PQ3")


def test_up_counts_successive_rises():
    val = [1.0, 1.1, 0.9, 1.0, 1.1, 1.2, 1.3]
    assert first_stop(UP(2), FLAT, val) == (25, "UP2")
    assert first_stop(UP(3), FLAT, val) == (30, "UP3")
    assert first_stop(UP(5), FLAT, val) == (None, None)


def test_progress_below_and_max_epochs():
    train = [100.0 / (t + 1) for t in range(40)] + [1.0] * 10
    epoch, fired = first_stop(ProgressBelow(0.1), train)
    assert (epoch, fired) == (45, "P<0.1")
    assert first_stop(MaxEpochs(12), FLAT) == (15, "max_epochs")


def test_error_below_train_and_val():
    train = [5.0, 4.0, 3.0, 2.0, 1.0, 0.5, 0.4, 0.3, 0.2, 0.09]
    assert first_stop(ErrorBelow(0.1), train) == (10, "error_below(train<0.1)")
    assert first_stop(ErrorBelow(0.5, on="val"), FLAT, [1.0, 0.6, 0.4]) == (15, "error_below(val<0.5)")


def test_any_and_all_compose():
    val = [1.0, 1.1, 1.2, 1.3]    # GL = 10 from strip 2, UP2 from strip 3
    assert first_stop(GL(5) | UP(2), FLAT, val) == (10, "GL5")
    assert first_stop(AllOf(GL(5), UP(2)), FLAT, val)[0] == 15


def test_ever_held_multilayer_composition():
    # GL5 holds only at strip 2; UP2 only from strip 5 on (GL back below 5 by then).
    val = [1.0, 1.2, 0.8, 0.81, 0.82, 0.83]
    crit = AllOf(EverHeld(GL(5)), EverHeld(UP(2)))
    assert first_stop(AllOf(GL(5), UP(2)), FLAT, val) == (None, None)   # never together
    epoch, fired = first_stop(crit, FLAT, val)
    assert epoch == 25 and fired.startswith("(ever GL5 and ever UP2")


def test_proben1_multilayer_rule():
    # training keeps progressing (P5 large), so only the at-least-once rule can stop.
    train = [100 * 0.9 ** t for t in range(60)]
    val = [1.0, 1.1, 1.0, 0.9, 0.95, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06]
    rule = proben1_stopping("multilayer-literal")
    # GL5 first at strip 2 and UP8 at strip 12 (rises at strips 5..12), but PQ3 never:
    # the training error falls 10 % per epoch, so P5 ~ 260 and GL/P5 < 0.05. The rule
    # needs all three to have held at least once, so it never fires here...
    assert first_stop(rule, train, val) == (None, None)
    # ... and fires at the strip end where the last of the three first held once
    # training slows to 0.05 % per epoch from epoch 51 on (P5 ~ 1, above P<0.1's
    # threshold; GL ~ 17 -> PQ3 from strip 11), i.e. when UP8 first holds (strip 12).
    slow = train[:50] + [train[49] * 0.9995 ** t for t in range(1, 11)]
    assert first_stop(rule, slow, val) == (60, "(ever GL5 and ever UP8 and ever PQ3)")
    assert first_stop(rule, slow[:55], val) == (None, None)
    lin = proben1_stopping("linear")
    assert first_stop(lin, train, val) == (10, "GL5")


def test_criteria_needing_validation_refuse_to_run_without():
    X = np.zeros((4, 2))
    T = np.zeros((4, 1))
    for crit in (GL(5), PQ(2), UP(3), ErrorBelow(1, on="val"), AnyOf(MaxEpochs(5), GL(1))):
        with pytest.raises(ValueError, match="needs a validation set"):
            train_rprop(MLP(2, (), 1), X, T, stop=crit)
    with pytest.raises(ValueError, match="needs a validation set"):
        GL(5).update(TrainingState(epoch=5, strip=5, train_errors=np.ones(5)))


def test_bad_criterion_arguments():
    with pytest.raises(ValueError, match="`alpha`.*got -1"):
        GL(-1)
    with pytest.raises(ValueError, match="`s`.*got 0"):
        UP(0)
    with pytest.raises(TypeError, match=r"`AnyOf` takes StoppingCriterion objects such as GL\(5\), got 'UP3'"):
        AnyOf(GL(5), "UP3")
    with pytest.raises(ValueError, match="at least one"):
        AnyOf()
    with pytest.raises(TypeError, match="`criterion` must be a StoppingCriterion, got 5"):
        EverHeld(5)
    with pytest.raises(ValueError, match="`on`"):
        ErrorBelow(1, on="test")


def test_training_stops_at_strip_end_and_restores_best_weights():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 3))
    T = (X[:, :1] * X[:, 1:2] > 0).astype(float)
    Xv = rng.uniform(-1, 1, (40, 3))
    Tv = (Xv[:, :1] * Xv[:, 1:2] > 0).astype(float)
    net = MLP(3, (16,), 1)
    seen = []
    r = train_rprop(net, X, T, Xv, Tv, stop=GL(1) | MaxEpochs(2000), init_scale=0.5, seed=0,
                    max_epochs=3000, callback=lambda e, s: seen.append(e))
    assert r.epochs % 5 == 0 and r.stop_reason in ("GL1", "max_epochs")
    assert seen == list(range(5, r.epochs + 1, 5))
    assert r.relevant_epoch == r.val_epochs[np.argmin(r.val_error)]
    # the returned network is the one of the relevant epoch: re-evaluate it
    e_va = 100.0 / Tv.size * np.sum((net.predict(Xv) - Tv) ** 2)
    assert e_va == pytest.approx(r.min_val_error, rel=1e-12)
    assert r.final_val.squared_error_percentage == pytest.approx(r.min_val_error, rel=1e-12)
    assert r.gl_end == pytest.approx(100 * (r.val_error[-1] / r.min_val_error - 1))
    if r.stop_reason == "GL1":
        assert r.gl_end > 1


def test_callback_can_stop_training():
    X = np.zeros((4, 2))
    T = np.ones((4, 1))
    r = train_rprop(MLP(2, (), 1), X, T, max_epochs=100, callback=lambda e, s: e >= 15)
    assert r.epochs == 15 and r.stop_reason == "callback"


def test_no_convergence_warning_when_limit_hits_first():
    X = np.zeros((4, 2))
    T = np.ones((4, 1))
    with pytest.warns(NoConvergenceWarning, match="before the stopping criterion"):
        r = train_rprop(MLP(2, (), 1), X, T, max_epochs=10, stop=ErrorBelow(-0.0 + 1e-300))
    assert r.epochs == 10 and r.stop_reason == "max_epochs"


def test_correct_criterion_records_epoch_of_success():
    X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    T = np.array([[0.], [1.], [1.], [1.]])   # OR: linearly separable
    net = MLP(2, (), 1, output_activation="logistic")
    r = train_rprop(net, X, T, stop=Correct(0.4), strip=1, max_epochs=500, init_scale=0.1, seed=0)
    assert r.stop_reason == "correct"
    from fastnet.measures import threshold_correct
    assert threshold_correct(net.predict(X), T).all()
    # one training-set evaluation per epoch is counted
    assert r.traversals.evaluation == r.epochs * 4 * net.n_connections


def test_correct_criterion_with_analog_targets():
    X = np.array([[0.0], [1.0]])
    T = np.array([[0.3], [0.7]])   # analog targets: need a tolerance
    with pytest.raises(ValueError, match="`analog`"):
        train_rprop(MLP(1, (), 1), X, T, stop=Correct(0.4), strip=1, max_epochs=10)
    from fastnet.measures import threshold_correct
    net = MLP(1, (), 1).init_weights(0, 0.01)
    start = net.copy()
    # the initial weights (|w| <= 0.01) give outputs near 0: not correct yet
    assert not threshold_correct(start.predict(X), T, analog=0.05).all()
    r = train_rprop(net, X, T, stop=Correct(0.4, analog=0.05), strip=1, max_epochs=500)
    assert r.stop_reason == "correct"
    assert threshold_correct(net.predict(X), T, analog=0.05).all()
    # r.epochs is the first epoch after which the net is correct: one epoch fewer
    # (same start, no random draws) is not.
    before = start.copy()
    train_rprop(before, X, T, max_epochs=r.epochs - 1)
    assert not threshold_correct(before.predict(X), T, analog=0.05).all()


def test_deep_copies_share_no_state():
    # Training works on a deep copy of `stop`; fastnet's criteria copy their children,
    # other subclasses get a generic deep copy of everything they hold.
    import copy

    from fastnet.stopping import GL, UP, Correct, EverHeld, MaxEpochs

    rule = EverHeld(GL(5) & UP(2)) | (Correct(0.3) | MaxEpochs(7))
    twin = copy.deepcopy(rule)
    assert repr(twin) == repr(rule) and twin.to_dict() == rule.to_dict()
    originals = [rule.criteria[0], rule.criteria[0].criterion, *rule.criteria[0].criterion.criteria]
    copies = [twin.criteria[0], twin.criteria[0].criterion, *twin.criteria[0].criterion.criteria]
    assert all(a is not b and type(a) is type(b) for a, b in zip(originals, copies))
    up, up_copy = rule.criteria[0].criterion.criteria[1], twin.criteria[0].criterion.criteria[1]
    up_copy._run = 5
    assert up._run == 0

    class Remembers(MaxEpochs):
        def __init__(self, n):
            super().__init__(n)
            self.seen = []

    mine = Remembers(3)
    other = copy.deepcopy(mine)
    other.seen.append(1)
    assert mine.seen == [] and other.n == 3


def test_proben1_multilayer_readings():
    from fastnet.stopping import proben1_multilayer

    # "tables": GL2 stops at the first strip end with GL > 2 ...
    val = [1.0, 0.9, 0.91, 0.92, 0.95]          # GL: 0, 0, 1.1, 2.2, 5.6
    train = [10.0 - 0.1 * t for t in range(40)]  # steady progress: P5 > 0.1
    assert first_stop(proben1_multilayer(), train, val) == (20, "GL2")
    # ... where the literal reading goes on (UP8 and PQ3 have not held yet)
    assert first_stop(proben1_multilayer("literal"), train, val) == (None, None)
    # both stop when training progress vanishes, and at the epoch limit
    assert first_stop(proben1_multilayer(), FLAT, [1.0] * 20) == (5, "P<0.1")
    assert first_stop(proben1_multilayer("literal", max_epochs=10), train, [1.0] * 8)[0] == 10
    with pytest.raises(ValueError, match="reading"):
        proben1_multilayer("any")
