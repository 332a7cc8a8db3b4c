"""Error measures (SPEC §2) against hand-computed values."""
import numpy as np
import pytest

from fastnet import measures as m


def test_squared_error_percentage_by_hand():
    Y = [[0.5, 0.0], [1.0, 1.0]]
    T = [[1.0, 0.0], [1.0, 0.0]]
    # sum of squares = 0.25 + 1 = 1.25; 100 * 1 / (2 * 2) * 1.25 = 31.25
    assert m.squared_error_percentage(Y, T) == pytest.approx(31.25)
    # range -1..1 doubles it
    assert m.squared_error_percentage(Y, T, -1.0, 1.0) == pytest.approx(62.5)
    assert m.sum_squared_error(Y, T) == 1.25
    assert m.mean_squared_error(Y, T) == 1.25 / 4


def test_classification_error_winner_takes_all():
    Y = [[0.9, 0.1, 0.0], [0.2, 0.3, 0.1], [0.1, 0.1, 0.5], [0.4, 0.4, 0.0]]
    T = [[1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    # right, wrong, right, tie -> first maximum (class 0) -> wrong
    assert m.classification_error(Y, T) == 50.0
    with pytest.raises(ValueError, match="at least 2 outputs"):
        m.classification_error([[0.1]], [[1.0]])


def test_nmse():
    T = np.array([[0.0], [2.0]])
    assert m.nmse(T, T) == 0.0
    assert m.nmse(np.ones_like(T), T) == pytest.approx(1.0)   # predicting the mean
    with pytest.raises(ValueError, match="constant targets"):
        m.nmse([[1.0], [2.0]], [[1.0], [1.0]])


def test_threshold_correct_binary_and_analog():
    Y = np.array([[0.61, 0.39], [0.59, 0.41]])
    T = np.array([[1, 0], [1, 0]])
    c = m.threshold_correct(Y, T)
    assert c.tolist() == [[True, True], [False, False]]
    assert not c.all()
    Ya = np.array([[0.55, 0.95]])
    Ta = np.array([[0.5, 1.0]])
    assert m.threshold_correct(Ya, Ta, analog=0.1).tolist() == [[True, True]]
    assert m.threshold_correct(Ya, Ta, analog=0.01).tolist() == [[False, True]]
    with pytest.raises(ValueError, match="`analog`"):
        m.threshold_correct(Ya, Ta)
    with pytest.raises(ValueError, match="`r_c`"):
        m.threshold_correct(Y, T, r_c=0.6)


def test_one_hot_detection():
    assert m.is_one_hot([[1, 0], [0, 1]])
    assert not m.is_one_hot([[1, 1], [0, 1]])
    assert not m.is_one_hot([[0.5, 0.5]])
    assert not m.is_one_hot([[1.0]])


@pytest.mark.parametrize("func", [m.squared_error_percentage, m.mean_squared_error, m.nmse,
                                  m.sum_squared_error])
def test_input_validation(func):
    with pytest.raises(ValueError, match="shape"):
        func(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        func([[np.nan]], [[1.0]])
    with pytest.raises(ValueError, match="no patterns"):
        func(np.zeros((0, 2)), np.zeros((0, 2)))
    # NumPy's cast would only warn and drop the imaginary parts
    with pytest.raises(TypeError, match=r"^`Y_pred` must be real, got dtype complex128\.$"):
        func(np.full((2, 2), 0.5 + 1j), np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"^`Y` must be real, got dtype complex64\.$"):
        func(np.ones((2, 2)), [np.ones(2, np.complex64)] * 2)


def test_squared_error_percentage_range_check():
    with pytest.raises(ValueError, match="`o_max` - `o_min` must be positive and finite"):
        m.squared_error_percentage([[0.0]], [[0.0]], 1.0, 0.0)


# ---- NMSE in training results (Lawrence et al. 1997)
def _nmse_by_hand(P, T):
    P, T = np.asarray(P, float).ravel(), np.asarray(T, float).ravel()
    mean = sum(T) / len(T)
    return sum((t - p) ** 2 for p, t in zip(P, T)) / sum((t - mean) ** 2 for t in T)


def test_nmse_over_all_outputs_by_hand():
    from fastnet.measures import nmse
    P = [[0.5, 1.0], [2.0, 0.0], [1.0, 3.5]]
    T = [[0.0, 1.0], [2.5, 0.5], [1.0, 4.0]]
    # one mean over all six targets (not one per output)
    assert nmse(P, T) == pytest.approx(_nmse_by_hand(P, T), rel=1e-14)
    per_output = np.mean([nmse(np.array(P)[:, j], np.array(T)[:, j]) for j in range(2)])
    assert nmse(P, T) != pytest.approx(per_output)


@pytest.mark.parametrize("method", ["serial", "lanes"])
def test_final_nmse_equals_measures_nmse(method):
    from fastnet import MLP, train_many
    from fastnet.measures import nmse
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2] + 2.0])
    Xv, Yv = X[:20] + 0.1, Y[:20]
    Xt = rng.standard_normal((30, 3))
    Yt = np.column_stack([np.sin(Xt[:, 0]), Xt[:, 1] * Xt[:, 2] + 2.0])
    net = MLP(3, (4,), 2, hidden_activation="tanh")
    r = train_many(net, X, Y, Xv, Yv, X_test=Xt, Y_test=Yt, n_trials=3, seed=1,
                   max_epochs=20, method=method)
    for i in range(3):
        trained = net.copy().set_weights(r.weights[i])
        for split, (A, B) in (("final_train", (X, Y)), ("final_val", (Xv, Yv)),
                              ("final_test", (Xt, Yt))):
            want = _nmse_by_hand(trained.predict(A), B)
            assert getattr(r, split).nmse[i] == pytest.approx(want, rel=1e-10)
            assert getattr(r[i], split).nmse == pytest.approx(nmse(trained.predict(A), B),
                                                              rel=1e-10)


def test_final_nmse_single_run_and_constant_targets():
    from fastnet import MLP, train
    from fastnet.measures import nmse
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 2))
    Y = (X[:, :1] ** 2)
    net = MLP(2, (3,), 1, seed=0)
    r = train(net, X, Y, X_test=X[:10], Y_test=Y[:10], max_epochs=10)
    assert r.final_train.nmse == pytest.approx(nmse(net.predict(X), Y), rel=1e-10)
    assert r.final_test.nmse == pytest.approx(nmse(net.predict(X[:10]), Y[:10]), rel=1e-10)
    # constant targets: no variance, NMSE undefined -> None
    r = train(MLP(2, (3,), 1, seed=0), X, np.ones((40, 1)), max_epochs=3)
    assert r.final_train.nmse is None
