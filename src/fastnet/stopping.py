r"""Stopping criteria of Prechelt's Proben1 rules (Prechelt 1994, section 3.3), composable.

Training runs in *strips* of k epochs (epochs n+1..n+k with n divisible by k).
The validation error is measured, and every criterion evaluated, at strip ends
only. With E_tr(t) the training squared error percentage of epoch t (measured in
its forward pass, before its update), E_va(t) the validation error after epoch
t and E_opt(t) the lowest E_va measured up to t:

* generalization loss   GL(t) = 100 (E_va(t) / E_opt(t) - 1)
* training progress     P_k(t) = 1000 (sum_{t'=t-k+1}^{t} E_tr(t') / (k min_{t'} E_tr(t')) - 1)

Criteria: ``GL(alpha)`` stops when GL(t) > alpha; ``PQ(alpha)`` when
GL(t)/P_k(t) > alpha; ``UP(s)`` when E_va rose at the end of s successive
strips; ``ProgressBelow(x)`` when P_k(t) < x; ``MaxEpochs(n)``;
``ErrorBelow(x)``; ``Correct()`` (Hamey's success criterion). ``a | b``
stops when any holds, ``a & b`` when all hold at the same strip end, and
``EverHeld(c)`` holds once c has held at least once.

Degenerate cases (documented, tested):

* E_opt(t) = 0: GL(t) = 0 if E_va(t) = 0, else +inf.
* min E_tr over the strip = 0: P_k(t) = 0 if every E_tr of the strip is 0
  (no progress is possible), else +inf.
* P_k(t) = 0: GL/P_k = 0 if GL(t) = 0, else +inf.
* A criterion that needs a validation set (GL, PQ, UP, ErrorBelow on "val")
  raises ValueError at the start of training if none is given.

References
----------
Prechelt, L. (1994). Proben1 -- A set of neural network benchmark problems and
benchmarking rules. Technical Report 21/94, Universität Karlsruhe.
Prechelt, L. (1998). Early stopping -- but when? In Neural Networks: Tricks of the
Trade, LNCS 1524, 55-69.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from fastnet._typing import ArrayLike
from fastnet._validation import check_choice, check_float, check_int

__all__ = [
    "TrainingState",
    "StoppingCriterion",
    "GL",
    "PQ",
    "UP",
    "ProgressBelow",
    "MaxEpochs",
    "ErrorBelow",
    "Correct",
    "AnyOf",
    "AllOf",
    "EverHeld",
    "generalization_loss",
    "training_progress",
    "PROBEN1_MULTILAYER_READINGS",
    "proben1_multilayer",
]


def generalization_loss(e_va: float, e_opt: float) -> float:
    """GL = 100 (E_va / E_opt - 1); 0 when both are 0, +inf when only E_opt is 0.

    Examples
    --------
    >>> generalization_loss(1.1, 1.0)
    10.000000000000009
    """
    if e_opt == 0.0:
        return 0.0 if e_va == 0.0 else math.inf
    return 100.0 * (e_va / e_opt - 1.0)


def training_progress(strip_errors: ArrayLike) -> float:
    """P_k = 1000 (mean of the strip's E_tr / its minimum - 1).

    ``strip_errors`` are the k training errors of the last strip. If the minimum
    is 0 the result is 0 when all are 0, else +inf.

    Examples
    --------
    >>> training_progress([1.0, 1.0, 1.0, 1.0, 1.0])
    0.0
    """
    e = np.asarray(strip_errors, dtype=np.float64)
    if e.size == 0:
        raise ValueError("`strip_errors` is empty.")
    low = float(e.min())
    if low == 0.0:
        return 0.0 if float(e.max()) == 0.0 else math.inf
    return float(1000.0 * (e.sum() / (e.size * low) - 1.0))


_MIN = np.minimum.reduce


@dataclass(frozen=True)
class TrainingState:
    """What a criterion (or a callback) sees at a strip end.

    Attributes
    ----------
    epoch : int
        Epochs trained so far (the strip end t).
    strip : int
        Strip length k.
    train_errors : ndarray
        E_tr of epochs 1..t (squared error percentage).
    val_errors : ndarray or None
        E_va at the strip ends so far (``val_epochs``), or None without a validation set.
    val_epochs : ndarray or None
        The epochs at which ``val_errors`` were measured.
    test_errors : ndarray or None
        E_te at the strip ends, for plots only: no criterion reads it.
    best_epoch : int or None
        Epoch of the lowest E_va so far (the relevant epoch if training stopped now).
    is_correct : callable or None
        ``is_correct(r_c, analog)`` evaluates the current network on the training
        set with the threshold rule (costs a forward pass, counted as evaluation).
    """

    epoch: int
    strip: int
    train_errors: np.ndarray
    val_errors: np.ndarray = None
    val_epochs: np.ndarray = None
    test_errors: np.ndarray = None
    best_epoch: int = None
    is_correct: object = None

    @property
    def has_validation(self):
        return self.val_errors is not None and len(self.val_errors) > 0

    @property
    def val_error(self):
        """E_va(t), the latest validation error."""
        return float(self.val_errors[-1])

    @property
    def opt_val_error(self):
        """E_opt(t), the lowest validation error so far."""
        return float(_MIN(self.val_errors))   # (np.min without its Python wrapper)

    @property
    def gl(self):
        """GL(t) at this strip end (needs a validation set)."""
        return generalization_loss(self.val_error, self.opt_val_error)

    @property
    def progress(self):
        """P_k(t) over the strip that ends here."""
        return training_progress(self.train_errors[-self.strip:])


class StoppingCriterion:
    """Base class: ``update(state)`` is called at every strip end, in order.

    Subclasses implement ``_holds(state) -> bool`` (stateless) or override
    ``update`` (stateful) and ``reset``. ``fired`` names the criterion that
    caused the stop (for composites, the child that held).
    """

    needs_validation = False

    def reset(self):
        """Forget everything seen (called at the start of each training run)."""
        self.fired = None

    def update(self, state: TrainingState) -> bool:
        """Return True if training should stop at this strip end."""
        holds = bool(self._holds(state))
        self.fired = self.name if holds else None
        return holds

    def _holds(self, state):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def name(self):
        return type(self).__name__

    def __or__(self, other):
        return AnyOf(self, other)

    def __and__(self, other):
        return AllOf(self, other)

    def __repr__(self):
        return self.name

    def to_dict(self):
        """A JSON-able description (used in result files)."""
        return {"criterion": self.name}

    def __deepcopy__(self, memo):
        # Every training call works on a deep copy (criteria keep state). fastnet's
        # own criteria hold only numbers, strings and child criteria, so copying
        # the children is enough: ~2 instead of ~20 us per call, which short
        # many-trial studies (Hamey) pay once per trial. Other subclasses may hold
        # anything and get the generic deep copy of their attributes.
        new = copy.copy(self)
        memo[id(self)] = new
        if type(self).__module__ != __name__:
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
            return new
        for key, value in vars(self).items():
            if isinstance(value, StoppingCriterion):
                setattr(new, key, copy.deepcopy(value, memo))
            elif isinstance(value, tuple) and any(isinstance(c, StoppingCriterion) for c in value):
                setattr(new, key, tuple(copy.deepcopy(c, memo) for c in value))
        return new


def _need_val(state, criterion):
    # (the criterion's name is formatted only for the message: checked every strip)
    if state.val_errors is None or not len(state.val_errors):
        raise ValueError(f"stopping criterion {criterion.name} needs a validation set; pass "
                         "`X_val`, `Y_val`.")


class _ValidationQuantityAbove(StoppingCriterion):
    """Stop when a quantity of the validation curve exceeds ``alpha``."""

    needs_validation = True
    symbol = ""   # Proben1's name of the quantity: GL, PQ

    def __init__(self, alpha: float) -> None:
        self.alpha = check_float(alpha, "alpha", low=0.0)
        self.reset()

    def _holds(self, state):
        _need_val(state, self)
        return self._quantity(state) > self.alpha

    @property
    def name(self):
        return f"{self.symbol}{self.alpha:g}"


class GL(_ValidationQuantityAbove):
    """Stop when the generalization loss GL(t) exceeds ``alpha`` (Proben1's GL_alpha)."""

    symbol = "GL"

    def _quantity(self, state):
        return state.gl


class PQ(_ValidationQuantityAbove):
    """Stop when the quotient GL(t) / P_k(t) exceeds ``alpha`` (Proben1's PQ_alpha)."""

    symbol = "PQ"

    def _quantity(self, state):
        gl, p = state.gl, state.progress
        if p == 0.0:
            return 0.0 if gl == 0.0 else math.inf
        return gl / p


class UP(StoppingCriterion):
    """Stop when E_va rose at the end of ``s`` successive strips (Proben1's UP_s)."""

    needs_validation = True

    def __init__(self, s: int) -> None:
        self.s = check_int(s, "s", minimum=1)
        self.reset()

    def reset(self):
        super().reset()
        self._run = 0
        self._seen = 0

    def update(self, state: TrainingState) -> bool:
        _need_val(state, self)
        v = state.val_errors
        # Process each strip end once, even if update is called for several.
        while self._seen < len(v):
            i = self._seen
            rose = i > 0 and v[i] > v[i - 1]
            self._run = self._run + 1 if rose else 0
            self._seen += 1
        holds = self._run >= self.s
        self.fired = self.name if holds else None
        return holds

    @property
    def name(self):
        return f"UP{self.s}"


class ProgressBelow(StoppingCriterion):
    """Stop when training progress P_k(t) falls below ``threshold`` (Proben1: 0.1)."""

    def __init__(self, threshold: float) -> None:
        self.threshold = check_float(threshold, "threshold", low=0.0)
        self.reset()

    def _holds(self, state):
        return state.progress < self.threshold

    @property
    def name(self):
        return f"P<{self.threshold:g}"


class MaxEpochs(StoppingCriterion):
    """Stop at the first strip end with at least ``n`` epochs trained."""

    def __init__(self, n: int) -> None:
        self.n = check_int(n, "n", minimum=1)
        self.reset()

    def _holds(self, state):
        return state.epoch >= self.n

    @property
    def name(self):
        return "max_epochs"


class ErrorBelow(StoppingCriterion):
    """Stop when the training (``on="train"``) or validation error is below ``threshold``.

    The training error is E_tr of the last epoch (measured before its update).
    """

    def __init__(self, threshold: float, on: str = "train") -> None:
        self.threshold = check_float(threshold, "threshold", low=0.0)
        self.on = check_choice(on, "on", {"train", "val"})
        self.needs_validation = self.on == "val"
        self.reset()

    def _holds(self, state):
        if self.on == "val":
            _need_val(state, self)
            return state.val_error < self.threshold
        return float(state.train_errors[-1]) < self.threshold

    @property
    def name(self):
        return f"error_below({self.on}<{self.threshold:g})"


class Correct(StoppingCriterion):
    """Hamey's success criterion: every output of every training pattern is right.

    Uses :func:`fastnet.measures.threshold_correct` with ``r_c`` (binary
    targets) and ``analog`` (tolerance for other targets). Each check costs a
    forward pass over the training set (counted as evaluation traversals); use
    ``strip=1`` to find the exact epoch of success.

    When ``Correct`` is the whole ``stop`` rule of :func:`fastnet.train_rprop` and
    nothing else is measured per strip (no validation or test set, no callback),
    the kernel runs the check itself between epochs, with the same result bit for
    bit and about 10x less time per epoch on small nets (XOR 2-2-1, ``strip=1``:
    0.8 instead of 9 us per epoch): the setting of Hamey's many-trial studies.
    """

    def __init__(self, r_c: float = 0.4, analog: float | None = None) -> None:
        self.r_c = check_float(r_c, "r_c", low=0.0, high=0.5, low_open=True)
        self.analog = analog
        self.reset()

    def _holds(self, state):
        return bool(state.is_correct(self.r_c, self.analog))

    @property
    def name(self):
        return "correct"


class _Composite(StoppingCriterion):
    def __init__(self, *criteria: StoppingCriterion) -> None:
        if not criteria:
            raise ValueError(f"`{type(self).__name__}` needs at least one criterion, such as GL(5), got none.")
        for c in criteria:
            if not isinstance(c, StoppingCriterion):
                raise TypeError(f"`{type(self).__name__}` takes StoppingCriterion objects such as GL(5), "
                                f"got {c!r}.")
        self.criteria = tuple(criteria)
        self.reset()

    @property
    def needs_validation(self):
        return any(c.needs_validation for c in self.criteria)

    def reset(self):
        super().reset()
        for c in self.criteria:
            c.reset()

    def to_dict(self):
        return {"criterion": type(self).__name__, "of": [c.to_dict() for c in self.criteria]}


class AnyOf(_Composite):
    """Stop when any of the criteria holds; ``fired`` is the first that held."""

    def update(self, state: TrainingState) -> bool:
        # Every child sees every strip end (stateful ones must not miss one).
        results = [c.update(state) for c in self.criteria]
        self.fired = next((c.fired for c, r in zip(self.criteria, results) if r), None)
        return self.fired is not None

    @property
    def name(self):
        return "(" + " or ".join(c.name for c in self.criteria) + ")"


class AllOf(_Composite):
    """Stop when all criteria hold at the same strip end."""

    def update(self, state: TrainingState) -> bool:
        results = [c.update(state) for c in self.criteria]
        holds = all(results)
        self.fired = self.name if holds else None
        return holds

    @property
    def name(self):
        return "(" + " and ".join(c.name for c in self.criteria) + ")"


class EverHeld(StoppingCriterion):
    """Holds from the first strip end at which ``criterion`` held, on.

    Proben1's multilayer rule stops "once all three have held at least once (not
    necessarily together)": ``EverHeld(GL(5)) & EverHeld(UP(8)) & EverHeld(PQ(3))``.
    """

    def __init__(self, criterion: StoppingCriterion) -> None:
        if not isinstance(criterion, StoppingCriterion):
            raise TypeError(f"`criterion` must be a StoppingCriterion, got {criterion!r}.")
        self.criterion = criterion
        self.reset()

    @property
    def needs_validation(self):
        return self.criterion.needs_validation

    def reset(self):
        super().reset()
        self.criterion.reset()
        self._held = False

    def update(self, state: TrainingState) -> bool:
        if self.criterion.update(state):
            self._held = True
        self.fired = self.name if self._held else None
        return self._held

    @property
    def name(self):
        return f"ever {self.criterion.name}"

    def to_dict(self):
        return {"criterion": "EverHeld", "of": [self.criterion.to_dict()]}


#: The readings of Proben1's multilayer stopping rule that `proben1_multilayer` builds.
PROBEN1_MULTILAYER_READINGS = ("tables", "literal")


def proben1_multilayer(reading: str = "tables", max_epochs: int = 3000) -> StoppingCriterion:
    """Proben1's stopping rule for networks with hidden layers, in one of two readings.

    Parameters
    ----------
    reading : {"tables", "literal"}, default "tables"
        ``"tables"``: stop when GL2 holds, or P5(t) < 0.1, or after ``max_epochs``:
        the rule that reproduces Proben1's published multilayer results (Tables
        10-11: mean GL at the end 2.2-2.5 with deviations 0.3-0.6 on gene and
        diabetes, whose validation curves rise slowly, and total epochs of 17-30
        on card, heartc and horse; the ablation is in the project's ``docs/reproduction.md``).
        ``"literal"``: stop when P5(t) < 0.1, or after ``max_epochs``, or once
        GL5, UP8 and GL/P5 > 3 have each held at least once (not necessarily
        together) -- the report's rule for its architecture-finding runs, which
        also served its study of stopping criteria: it trains until the slowest
        criterion of each class studied (GL5, UP8, PQ3) has fired.
    max_epochs : int, default 3000
        Proben1's epoch limit.

    Returns
    -------
    StoppingCriterion

    Examples
    --------
    >>> proben1_multilayer().name
    '(GL2 or P<0.1 or max_epochs)'
    >>> proben1_multilayer("literal").name
    '(P<0.1 or max_epochs or (ever GL5 and ever UP8 and ever PQ3))'
    """
    reading = check_choice(reading, "reading", set(PROBEN1_MULTILAYER_READINGS))
    limit = MaxEpochs(max_epochs)
    if reading == "tables":
        return AnyOf(GL(2), ProgressBelow(0.1), limit)
    return AnyOf(ProgressBelow(0.1), limit,
                 AllOf(EverHeld(GL(5)), EverHeld(UP(8)), EverHeld(PQ(3))))


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
