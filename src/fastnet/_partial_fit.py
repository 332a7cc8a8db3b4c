"""The estimators' network, rule and seed (shared by ``fit`` and ``partial_fit``), and
``partial_fit`` on a :class:`fastnet.Trainer`.

``partial_fit(X, y)`` trains one more epoch, as scikit-learn's ``MLPClassifier``
does: the first call builds the network and the trainer as ``fit`` would (same
seed, initial weights and rule), later calls continue with the rule's state
kept, on the same data or on a new batch. k calls on one data set train as
``fit`` with ``max_iter=k`` and no stopping criterion, bit for bit.
"""
import numbers

import numpy as np

from fastnet._sklearn_names import resolve_activation, resolve_loss, resolve_solver
from fastnet._validation import check_choice, check_float, check_int
from fastnet.network import MLP
from fastnet.rprop import PRESETS
from fastnet.training._plans import resolve_rprop
from fastnet.training._trainer import Trainer

__all__ = ["seed_from", "network_and_rule", "PartialFit"]

# The parameters a preset may set; None in the estimator means "not given".
PRESET_PARAMS = ("variant", "eta_plus", "eta_minus", "delta0", "delta_min", "delta_max",
                 "init_scale")
# Initial weight half-width when neither ``init_scale`` nor a preset gives one
# (Proben1's multilayer value; the library's train_rprop keeps the net's weights).
DEFAULT_INIT_SCALE = 0.5
_UNSET = object()


def seed_from(random_state):
    """An int seed for train_rprop from a scikit-learn style ``random_state``."""
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
    if (isinstance(random_state, numbers.Integral)
            and not isinstance(random_state, (bool, np.bool_))):
        if random_state < 0:
            raise ValueError(f"`random_state` must be non-negative, got {random_state}.")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int64).max))
    raise TypeError("`random_state` must be None, an int, a numpy RandomState or Generator, "
                    f"got {random_state!r}.")


#: The dtypes the estimators keep (scikit-learn's MLP keeps float32 input as float32).
FLOATS = (np.float64, np.float32)


def network_and_rule(est, n_in, n_out, dtype=np.float64):
    """The estimator ``est``'s new network (of ``dtype``, the training data's) and its
    training: (net, algorithm or None for RPROP from ``given``, given: the RPROP
    parameters set, init_scale included, loss), in scikit-learn's names for the
    messages."""
    hidden = est.hidden_layer_sizes
    if isinstance(hidden, numbers.Integral) and not isinstance(hidden, bool):
        hidden = (hidden,)
    if not isinstance(hidden, (tuple, list, np.ndarray)):
        raise TypeError("`hidden_layer_sizes` must be a sequence of ints, got "
                        f"{type(hidden).__name__} {hidden!r}.")
    hidden = tuple(check_int(h, "hidden_layer_sizes", minimum=1) for h in hidden)
    loss = resolve_loss(est.loss)
    output_activation = est.output_activation
    if output_activation is None:
        output_activation = est._default_output_activation[loss]
        if output_activation == "softmax" and n_out == 1:
            output_activation = "logistic"   # (one class: one output, not softmax)
    net = MLP(n_in, hidden, n_out, shortcut=est.shortcut,
              hidden_activation=resolve_activation(est.activation, est.hidden_activation),
              output_activation=output_activation, dtype=dtype)
    given = {name: getattr(est, name) for name in PRESET_PARAMS
             if getattr(est, name) is not None}
    algorithm = resolve_solver(est.solver, [n for n in given if n != "init_scale"])
    if "init_scale" not in given and (est.preset is None or algorithm is not None):
        given["init_scale"] = (DEFAULT_INIT_SCALE if est.preset is None else
                               PRESETS[check_choice(est.preset, "preset", PRESETS)]["init_scale"])
    return net, algorithm, given, loss


def in_dtype(est, X, Y, first):
    """(X, Y) in the dtype the estimator trains in: the first call's X's (float32 stays
    float32), then its network's."""
    dtype = X.dtype if first else est.net_.dtype
    return X.astype(dtype, copy=False), np.asarray(Y).astype(dtype, copy=False)


class PartialFit:
    """``_partial_fit`` of the estimators: one epoch on a kept :class:`fastnet.Trainer`."""

    def _partial_fit(self, X, Y):
        trainer = getattr(self, "_trainer", None)
        if trainer is None or trainer.net is not getattr(self, "net_", None):
            trainer = self._trainer = self._new_trainer(X, Y)
        else:
            # (the same data again, compared by value with the trainer's own copy, keeps
            # its buffers; new data, a mini-batch, replace them: the rule's state is kept)
            sets = trainer._sets
            if not (X.shape == sets.X.shape and Y.shape == sets.Y.shape
                    and np.array_equal(X, sets.X) and np.array_equal(Y, sets.Y)):
                trainer.set_data(X, Y)
        run = trainer.run(1)
        self.net_ = trainer.net
        self.n_iter_ = getattr(self, "n_iter_", 0) + run.epochs
        self.loss_curve_ = trainer.train_error
        self.validation_scores_ = None
        self.relevant_epoch_ = self.n_iter_
        self.stop_reason_ = "partial_fit"
        return self

    def _new_trainer(self, X, Y):
        """The trainer of the first ``partial_fit`` (a new network, as ``fit`` makes it),
        or of one after ``fit`` or unpickling (the fitted network, continued)."""
        seed = seed_from(self.random_state)
        net, algorithm, given, loss = network_and_rule(self, X.shape[1], Y.shape[1], X.dtype)
        init_scale = given.get("init_scale")
        if algorithm is None:               # (RPROP as train_rprop resolves it for fit)
            plan = resolve_rprop(self.preset, given, _UNSET)
            algorithm, init_scale = plan.algorithm, plan.init_scale
        decay = check_float(self.alpha, "alpha", low=0.0)
        fitted = getattr(self, "net_", None)
        if fitted is not None:              # (continue the fitted network from its weights)
            self.n_iter_ = getattr(self, "n_iter_", 0)
            return Trainer(fitted, X, Y, algorithm=algorithm, loss=loss, weight_decay=decay,
                           seed=seed if algorithm.draws else None)
        self.n_iter_ = 0
        return Trainer(net, X, Y, algorithm=algorithm, init_scale=init_scale, seed=seed,
                       loss=loss, weight_decay=decay)

    def __getstate__(self):
        # (the trainer's buffers are not pickled: a later partial_fit continues from
        # the fitted network's weights with a new trainer)
        state = super().__getstate__()
        state.pop("_trainer", None)
        state.pop("_trained_on", None)
        return state


#: The Returns and Raises of the estimators' ``fit`` and ``partial_fit`` docstrings
#: (``str.format`` fields ``cls``, the estimator, and ``raises``, more reasons or "").
SELF_RAISES = """
        Returns
        -------
        self : {cls}

        Raises
        ------
        ValueError
            For invalid data or hyper-parameters (the message names the argument){raises}.
"""

_PARTIAL_DOC = """One more epoch of training on (X, y), continuing the last ``fit`` or
        ``partial_fit`` (scikit-learn's incremental learning).

        The first call (on an estimator not fitted yet) builds the network and its
        training as ``fit`` does, with the same ``random_state``; every call trains
        one epoch on the data it is given, the rule's state (RPROP's steps, the
        previous change) carried over, on a :class:`fastnet.Trainer`. k calls on the
        same data train as ``fit`` with ``max_iter=k`` and no stopping criterion,
        bit for bit. ``stop``, ``max_iter``, ``strip`` and ``validation_fraction`` do
        not apply: the caller decides when to stop. Levenberg-Marquardt and SCG
        (``solver="lm"``, ``"scg"``) train on one data set: a new batch is refused.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : {y}{classes}
""" + SELF_RAISES + "        "


class ClassifierPartialFit(PartialFit):
    """The classifier's ``partial_fit``."""

    def partial_fit(self, X, y, classes=None):
        from sklearn.utils.multiclass import check_classification_targets
        from sklearn.utils.validation import validate_data

        first = getattr(self, "net_", None) is None
        X, y = validate_data(self, X, y, dtype=FLOATS, order="C", reset=first)
        check_classification_targets(y)
        if classes is not None:
            classes = np.unique(np.asarray(classes))
            if not first and not np.array_equal(classes, self.classes_):
                raise ValueError(f"`classes` must be the classes of the first call "
                                 f"{self.classes_.tolist()}, got {classes.tolist()}.")
            self.classes_ = classes
        elif first:
            raise ValueError("`classes` must be given at the first call of partial_fit (every "
                             "label of all the calls, e.g. np.unique(y_all)), got None.")
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"`y` has labels {unknown.tolist()} that are not in `classes` "
                             f"{self.classes_.tolist()}.")
        Y = np.eye(len(self.classes_))[np.searchsorted(self.classes_, y)]
        return self._partial_fit(*in_dtype(self, X, Y, first))


class RegressorPartialFit(PartialFit):
    """The regressor's ``partial_fit``."""

    def partial_fit(self, X, y):
        from sklearn.utils.validation import validate_data

        first = getattr(self, "net_", None) is None
        X, y = validate_data(self, X, y, dtype=FLOATS, order="C", multi_output=True,
                             y_numeric=True, reset=first)
        Y = y.reshape(len(y), -1)
        X, Y = in_dtype(self, X, Y, first)
        if first:
            self.n_outputs_, self._y_1d = Y.shape[1], y.ndim == 1
        elif Y.shape[1] != self.n_outputs_:
            raise ValueError(f"`y` has {Y.shape[1]} target columns but the estimator was "
                             f"fitted with {self.n_outputs_}.")
        return self._partial_fit(X, Y)


ClassifierPartialFit.partial_fit.__doc__ = _PARTIAL_DOC.format(
    y="array-like of shape (n_samples,)\n            Class labels, each among ``classes``.",
    classes="\n        classes : array-like of shape (n_classes,), optional\n"
            "            Every class label of all the calls; required at the first call\n"
            "            (``np.unique(y_all)``), optional later (then it must be the same).",
    cls="RpropClassifier",
    raises=", ``classes`` missing at the first call, or a label not among them")
RegressorPartialFit.partial_fit.__doc__ = _PARTIAL_DOC.format(
    y="array-like of shape (n_samples,) or (n_samples, n_outputs)", classes="",
    cls="RpropRegressor", raises="")
