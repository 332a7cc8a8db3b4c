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
