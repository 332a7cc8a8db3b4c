"""scikit-learn estimators around :func:`fastnet.train` (RPROP unless ``solver`` says).

``RpropClassifier`` and ``RpropRegressor`` are ordinary scikit-learn estimators:
hyper-parameters in ``__init__``, ``fit(X, y, X_val=None, y_val=None)``
returning ``self``, ``predict``/``predict_proba``/``score``, learned attributes
with a trailing underscore. They work in :class:`~sklearn.pipeline.Pipeline`,
:class:`~sklearn.model_selection.GridSearchCV` and
:func:`~sklearn.model_selection.cross_validate`, and pickle (plain ``pickle``
or ``joblib``) with a versioned, checksummed state. scikit-learn (>= 1.6) is an
optional dependency: ``pip install "scikit-learn>=1.6"``.

Examples
--------
>>> import numpy as np
>>> from fastnet.sklearn import RpropClassifier
>>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]] * 5)
>>> y = np.array(["no", "yes", "yes", "no"] * 5)
>>> clf = RpropClassifier(hidden_layer_sizes=(4,), max_iter=300, random_state=0).fit(X, y)
>>> clf.classes_
array(['no', 'yes'], dtype='<U3')
>>> clf.predict([[0., 1.], [1., 1.]])
array(['yes', 'no'], dtype='<U3')
>>> float(clf.predict_proba([[0., 1.]]).sum())
1.0
"""
import numbers
import warnings

import numpy as np

try:
    import sklearn
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # scikit-learn missing, or older than 1.6 (no validate_data)
    raise ImportError(
        "fastnet.sklearn needs scikit-learn >= 1.6 (an optional dependency); install it "
        "with `pip install 'scikit-learn>=1.6'`"
        + (f" (found scikit-learn {sklearn.__version__})." if "sklearn" in dir() else ".")
    ) from exc

from fastnet._estimator_files import FILE_FORMAT_VERSION, PICKLE_FORMAT_VERSION, EstimatorPersistence
from fastnet.exceptions import NoConvergenceWarning
from fastnet._docstrings import fill
from fastnet._partial_fit import DEFAULT_INIT_SCALE, network_and_rule  # noqa: F401
from fastnet._partial_fit import FLOATS, SELF_RAISES, ClassifierPartialFit, RegressorPartialFit
from fastnet._partial_fit import seed_from as _seed_from
from fastnet._validation import check_choice, check_float, check_int
from fastnet.rprop import PRESETS, proben1_stopping, train_rprop
from fastnet.training import train
from fastnet.stopping import StoppingCriterion

__all__ = ["RpropClassifier", "RpropRegressor", "RpropConvergenceWarning",
           "outputs_to_proba", "PICKLE_FORMAT_VERSION", "FILE_FORMAT_VERSION"]

#: Values of ``stop`` that are names rather than criterion objects.
STOP_NAMES = ("auto", "linear", "multilayer", "multilayer-literal")


class RpropConvergenceWarning(NoConvergenceWarning, ConvergenceWarning):
    """``max_iter`` (epochs) was reached before the stopping criterion held.

    A subclass of both :class:`fastnet.NoConvergenceWarning` and scikit-learn's
    :class:`~sklearn.exceptions.ConvergenceWarning`, so a filter on either
    catches it (e.g. inside ``GridSearchCV``).
    """


def outputs_to_proba(outputs):
    """Map network outputs (trained towards one-hot 0/1 targets) to probabilities.

    Each row is clipped at 0 and divided by its sum. A row whose outputs are all
    <= 0 (possible with linear or x/(1+|x|) outputs) gets the softmax of its raw
    outputs instead. Either way every row sums to 1 and its largest entry is
    where the largest raw output is.

    Parameters
    ----------
    outputs : ndarray of shape (n_samples, n_classes)

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> outputs_to_proba(np.array([[0.9, 0.3, -0.2], [-1.0, -1.0, -1.0]]))
    array([[0.75      , 0.25      , 0.        ],
           [0.33333333, 0.33333333, 0.33333333]])
    """
    outputs = np.asarray(outputs)
    if outputs.dtype not in FLOATS:         # (float32 outputs give float32 probabilities)
        outputs = outputs.astype(np.float64)
    proba = np.clip(outputs, 0.0, None)
    total = proba.sum(axis=1)
    positive = total > 0.0
    proba[positive] /= total[positive, None]
    if not positive.all():
        z = outputs[~positive]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        proba[~positive] = e / e.sum(axis=1, keepdims=True)
    return proba


class _RpropBase(EstimatorPersistence, BaseEstimator):
    """Shared hyper-parameters, fitting and pickling of the two estimators."""

    # Set by the subclasses (the output activation by loss).
    _default_output_activation = None
    _is_classifier = False
    # The defaults of the parameters added in 0.2.0, for estimators pickled before
    # (their state lacks them; __init__ always sets them on the instance).
    activation, loss, alpha, solver = None, "sse", 0.0, None

    def __init__(self, hidden_layer_sizes=(8,), *, shortcut=True, hidden_activation="proben1",
                 output_activation=None, activation=None, loss="sse", alpha=0.0, solver=None,
                 preset=None,
                 variant=None, eta_plus=None, eta_minus=None, delta0=None, delta_min=None,
                 delta_max=None, init_scale=None, stop="auto", max_iter=200, strip=5,
                 validation_fraction=None, random_state=None):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.shortcut = shortcut
        self.hidden_activation = hidden_activation
        self.output_activation = output_activation
        self.activation = activation
        self.loss = loss
        self.alpha = alpha
        self.solver = solver
        self.preset = preset
        self.variant = variant
        self.eta_plus = eta_plus
        self.eta_minus = eta_minus
        self.delta0 = delta0
        self.delta_min = delta_min
        self.delta_max = delta_max
        self.init_scale = init_scale
        self.stop = stop
        self.max_iter = max_iter
        self.strip = strip
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    # ----------------------------------------------------------------- checks
    def _check_stop(self, has_validation, hidden):
        stop = self.stop
        if isinstance(stop, StoppingCriterion) or stop is None:
            return stop
        if not isinstance(stop, str) or stop not in STOP_NAMES:
            raise ValueError(f"`stop` must be None, a fastnet.stopping criterion or one of "
                             f"{list(STOP_NAMES)}, got {stop!r}.")
        if stop == "auto":
            if not has_validation:
                return None
            if self.preset is not None:
                check_choice(self.preset, "preset", PRESETS)
                stop = PRESETS[self.preset]["stop"]      # the preset's own rule
            else:
                stop = "multilayer" if hidden else "linear"
        if not has_validation:
            raise ValueError(f"`stop`={self.stop!r} is Proben1's early-stopping rule and needs a "
                             "validation set: pass `X_val`, `y_val` to fit or set "
                             "`validation_fraction`.")
        return proben1_stopping(stop)

    def _split(self, X, Y, X_val, Y_val, seed):
        """Training and validation sets: the given ones, or a seeded random split."""
        fraction = self.validation_fraction
        if fraction is None:
            return X, Y, X_val, Y_val
        if X_val is not None:
            raise ValueError("give either `X_val`, `y_val` to fit or `validation_fraction`, "
                             f"not both (got validation_fraction={fraction!r}).")
        if (isinstance(fraction, (bool, np.bool_)) or not isinstance(fraction, numbers.Real)
                or not 0.0 < fraction < 1.0):
            raise ValueError(f"`validation_fraction` must be None or a number in (0, 1), "
                             f"got {fraction!r}.")
        n = X.shape[0]
        n_val = int(np.ceil(fraction * n))
        if n_val >= n:
            raise ValueError(f"`validation_fraction`={fraction} leaves no training data "
                             f"from {n} samples.")
        # A stream of its own: the split does not change the training draws.
        order = np.random.default_rng([seed, 1]).permutation(n)
        val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
        return X[train], Y[train], X[val], Y[val]

    def _check_val(self, X_val, y_val, **validate_kw):
        """The validation set checked like the training set (None, None if not given)."""
        if (X_val is None) != (y_val is None):
            raise ValueError("give both `X_val` and `y_val`, or neither.")
        if X_val is None:
            return None, None
        return validate_data(self, X_val, y_val, dtype=FLOATS, order="C", reset=False,
                             **validate_kw)

    def _fit(self, X, Y, X_val, Y_val):
        # scikit-learn's names in the messages (MLP and train_rprop use Proben1's)
        # (the network takes X's dtype, float32 or float64, as scikit-learn's MLP does;
        # the targets and the validation set follow it)
        dtype = X.dtype
        Y = Y.astype(dtype, copy=False)
        if X_val is not None:
            X_val, Y_val = X_val.astype(dtype, copy=False), Y_val.astype(dtype, copy=False)
        net, algorithm, given, loss = network_and_rule(self, X.shape[1], Y.shape[1], dtype)
        check_int(self.max_iter, "max_iter", minimum=1)
        seed = _seed_from(self.random_state)
        X, Y, X_val, Y_val = self._split(X, Y, X_val, Y_val, seed)
        stop = self._check_stop(X_val is not None, net.hidden)
        self._trainer = None                # (a later partial_fit continues this fit)
        run = dict(stop=stop, max_epochs=self.max_iter, strip=self.strip, seed=seed,
                   classification=self._is_classifier and Y.shape[1] >= 2, loss=loss,
                   weight_decay=check_float(self.alpha, "alpha", low=0.0), **given)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NoConvergenceWarning)
            if algorithm is None:
                result = train_rprop(net, X, Y, X_val, Y_val, preset=self.preset, **run)
            else:
                result = train(net, X, Y, X_val, Y_val, algorithm=algorithm, **run)
        for w in caught:  # re-emit, NoConvergenceWarning as a ConvergenceWarning too
            if issubclass(w.category, NoConvergenceWarning):
                # in the estimator's words: max_iter is train_rprop's max_epochs
                message = str(w.message).replace("max_epochs=", "max_iter=")
                warnings.warn(message, RpropConvergenceWarning, stacklevel=3)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.net_ = result.net
        self.train_result_ = result
        self.n_iter_ = result.epochs
        self.loss_curve_ = result.train_error
        self.validation_scores_ = result.val_error
        self.relevant_epoch_ = result.relevant_epoch
        self.stop_reason_ = result.stop_reason
        self.traversals_ = result.traversals
        self.cpu_time_ = result.cpu_time
        return self

    def _outputs(self, X):
        """The network's outputs for X, of the dtype scikit-learn's MLP gives: float32 for
        float32 X and a float32 network, else float64 (float64 X of a network fitted on
        float32 runs in float64 with its weights, as scikit-learn's float32 coefficients
        times float64 inputs do)."""
        check_is_fitted(self, "net_")
        X = validate_data(self, X, dtype=FLOATS, order="C", reset=False)
        net = self.net_
        if X.dtype == net.dtype:
            return net.predict(X)
        if X.dtype == np.float64:
            return net.astype(np.float64).predict(X)
        return net.predict(X.astype(net.dtype))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = False
        return tags


_X_RETURNS = """
Parameters
----------
X : array-like of shape (n_samples, n_features)

Returns
-------
"""

_FIT_DOC = """Train a new network on (X, y); stop early on (X_val, y_val) if given.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : {y}
        X_val, y_val : array-like, optional
            {val}
""" + SELF_RAISES + """
        Warns
        -----
        RpropConvergenceWarning
            If a stopping criterion was asked for and ``max_iter`` came first.
        """


_PARAMS_DOC = """
    Parameters
    ----------
    hidden_layer_sizes : sequence of int, default=(8,)
        Units per hidden layer (``hidden`` of :class:`fastnet.MLP`); ``()`` is a
        network without hidden layers.
    shortcut : bool, default=True
        Every layer feeds every later layer (Proben1); False: adjacent layers only.
    hidden_activation : {{"proben1", "logistic", "tanh", "relu", "linear"}}, default="proben1"
        ``"proben1"`` is ``x / (1 + |x|)``.
    output_activation : {{"proben1", "logistic", "tanh", "relu", "linear", "softmax"}} or None
        None means ``"{out}"`` (``"{out_ce}"`` with cross-entropy).
    activation : {{"identity", "logistic", "tanh", "relu"}} or None, default=None
        scikit-learn's name for the hidden activation (as in ``MLPClassifier``;
        ``"identity"`` is ``"linear"``); None: ``hidden_activation`` decides.
        Give one of the two.
    loss : {{"sse", "cross_entropy"}}, default="sse"
        The training objective: the summed squared error (Proben1), or the
        cross-entropy (softmax outputs: -sum t log o; logistic outputs: binary,
        per output), which needs softmax or logistic outputs. scikit-learn's
        names ``"squared_error"`` and ``"log_loss"`` are accepted too.
        ``validation_scores_`` and early stopping stay Proben1's squared error
        percentage whatever the loss.
    alpha : float >= 0, default=0.0
        L2 penalty: the objective gets ``alpha * sum(w**2)`` over every weight
        and bias (``weight_decay`` of :func:`fastnet.train_rprop`). scikit-learn's
        ``MLPClassifier`` writes its penalty ``alpha / (2 n_samples) * sum(W**2)``
        on a mean loss and without the biases, so its default 1e-4 on the
        cross-entropy is about ``alpha=5e-5`` here (fastnet sums the loss over
        the samples); fastnet's default is no penalty, as in Proben1.
    solver : None, str or fastnet.algorithms.Algorithm, default=None
        The training algorithm. None: RPROP with the parameters below. Else a
        name of :mod:`fastnet.algorithms` with optional parameters (``"scg"``,
        ``"lm"``, ``"adam(learning_rate=0.01)"``, ``"irprop+(eta_plus=1.1)"``) or an
        algorithm object; scikit-learn's ``"lbfgs"``, ``"adam"`` and ``"sgd"`` are
        L-BFGS-B, Adam and (full-batch) backpropagation with momentum. The
        preset's initial weights and stopping rule apply to every solver.
    preset : {{"proben1-linear", "proben1-multilayer", "proben1-multilayer-literal"}} or None, default=None
        Proben1's RPROP set-up (:data:`fastnet.rprop.PRESETS`; the multilayer
        preset is the reading that reproduces the report's tables, the literal
        one keeps the report's words): supplies every RPROP parameter below that is
        None, the initial weight range and (with ``stop="auto"`` and a
        validation set) the stopping rule. Its 3000-epoch limit is *not* used:
        ``max_iter`` always applies.
    variant : {{"rprop+", "rprop-", "irprop-", "irprop+"}} or None, default=None
        None: the preset's, else ``"rprop+"``.
    eta_plus, eta_minus, delta0, delta_min, delta_max : float or None
        RPROP parameters (``delta0`` may be a range ``(lo, hi)`` drawn per
        weight); None: the preset's value, else :func:`fastnet.train_rprop`'s
        default (1.2, 0.5, 0.1, 0.0, 50.0).
    init_scale : float or None, default=None
        Initial weights are uniform in [-init_scale, init_scale]; None: the
        preset's value, else 0.5.
    stop : "auto", "linear", "multilayer", "multilayer-literal", StoppingCriterion or None, default="auto"
        When to stop before ``max_iter``. ``"auto"``: with a validation set,
        the preset's rule, or without a preset Proben1's rule for the network
        (``"multilayer"`` with hidden layers, else ``"linear"``); without a
        validation set, train ``max_iter`` epochs. The named rules
        (:func:`fastnet.rprop.proben1_stopping`) need a validation set:
        ``"linear"`` (GL5 or P5 < 0.1), ``"multilayer"`` (GL2 or P5 < 0.1:
        the reading that reproduces Proben1's published multilayer results)
        and ``"multilayer-literal"`` (P5 < 0.1, or once GL5, UP8 and PQ3 have
        each held at least once: the report's words). None trains exactly
        ``max_iter`` epochs. With a validation set the fitted network always
        holds the weights of the epoch with the lowest validation error.
    max_iter : int, default=200
        Hard limit on the epochs. If a criterion was asked for and did not hold
        by then, fit warns :class:`RpropConvergenceWarning`.
    strip : int, default=5
        Strip length: validation and criteria are evaluated every ``strip`` epochs.
    validation_fraction : float in (0, 1) or None, default=None
        Hold out ``ceil(validation_fraction * n_samples)`` random training
        samples as the validation set for early stopping (ignored if None). The
        split is drawn from ``numpy.random.default_rng([seed, 1])``, a stream
        separate from the training draws, so it is deterministic for an int
        ``random_state``. Cannot be combined with ``X_val``/``y_val`` in fit.
    random_state : int, RandomState, Generator or None, default=None
        An int is passed to :func:`fastnet.train_rprop` as ``seed`` (initial
        weights, per-weight ``delta0`` draws) and seeds the validation split; a
        RandomState or Generator is asked for such an int; None draws a fresh one.
"""

_ATTRIBUTES_DOC = """
    net_ : fastnet.MLP
        The trained network (``net_.predict(X)`` gives the raw outputs). Its
        dtype is the training data's, as scikit-learn's ``MLPClassifier`` and
        ``MLPRegressor`` keep it: float32 X gives a float32 network (trained
        in float32), anything else float64. Predictions follow scikit-learn's
        too: float32 for float32 X and a float32 network, float64 otherwise
        (float64 X of a float32 network runs in float64 with its weights);
        ``partial_fit`` keeps the dtype of the first call.
    train_result_ : fastnet.TrainResult
        Everything :func:`fastnet.train_rprop` returned (errors, set-up, ...).
    n_iter_ : int
        Epochs trained.
    loss_curve_ : ndarray of shape (``n_iter_``,)
        Training squared error percentage of each epoch, measured before that
        epoch's update: 100 / (n_samples * n_outputs) * sum of squared errors,
        i.e. 100 times the mean squared error per output. With another objective
        (``loss``, ``alpha``) that objective, scaled the same way.
    validation_scores_ : ndarray or None
        Validation squared error percentage (lower is better, unlike
        scikit-learn's MLP) at every strip end; None without a validation set.
    relevant_epoch_ : int
        Epoch whose weights ``net_`` holds: the lowest validation error, or the
        last epoch without a validation set.
    stop_reason_ : str
        ``"max_epochs"`` or the criterion that stopped training (e.g. ``"GL5"``).
    traversals_ : fastnet.Traversals
        Exact connection-traversal counts of the training run.
    cpu_time_ : float
        Process CPU seconds of the training loop.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X had string column names (a DataFrame).
"""


class RpropClassifier(ClassifierPartialFit, ClassifierMixin, _RpropBase):
    __doc__ = ("""Feed-forward network classifier trained by epoch-batched RPROP.

    Labels of any type are encoded one output per class with one-hot 0/1
    targets, as in Proben1 (a binary problem also gets two outputs), and the
    network is trained on the summed squared error (or, with
    ``loss="cross_entropy"``, on the cross-entropy of softmax outputs) with
    :func:`fastnet.train_rprop`.
""" + _PARAMS_DOC.format(out="logistic", out_ce="softmax") + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels; output k of the network belongs to ``classes_[k]``.
""" + _ATTRIBUTES_DOC + """
    See Also
    --------
    RpropRegressor
    fastnet.train_rprop : the training function underneath.

    Notes
    -----
    ``predict_proba`` maps the outputs o of a sample to probabilities by
    p_k = max(o_k, 0) / sum_j max(o_j, 0); if every o_k <= 0 it uses the softmax
    p_k = exp(o_k) / sum_j exp(o_j) instead (see :func:`outputs_to_proba`).
    Rows sum to 1, and ``predict`` returns the class of the largest p_k, which is
    the class of the largest output (Proben1's winner-takes-all). Least squares
    on one-hot targets estimates the class posteriors, so with logistic outputs
    (in (0, 1), the default) the normalised outputs are a reasonable estimate;
    they are not calibrated.

    Inputs are used as given: scale them (e.g. ``StandardScaler`` in a
    ``Pipeline``) as Proben1 scales its data to about [0, 1].

    References
    ----------
    Riedmiller, M. & Braun, H. (1993). A direct adaptive method for faster
    backpropagation learning: the RPROP algorithm. Proc. IEEE ICNN, 586-591.
    Prechelt, L. (1994). Proben1. Technical Report 21/94, Universität Karlsruhe.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_iris(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), RpropClassifier(random_state=0))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """)

    _default_output_activation = {"sse": "logistic", "cross_entropy": "softmax"}
    _is_classifier = True

    def fit(self, X, y, X_val=None, y_val=None):
        X, y = validate_data(self, X, y, dtype=FLOATS, order="C")
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        Y = np.eye(len(self.classes_))[codes]
        Y_val = None
        X_val, y_val = self._check_val(X_val, y_val)
        if X_val is not None:
            unknown = np.setdiff1d(y_val, self.classes_)
            if unknown.size:
                raise ValueError(f"`y_val` has labels {unknown.tolist()} that are not in `y` "
                                 f"(classes {self.classes_.tolist()}).")
            Y_val = np.eye(len(self.classes_))[np.searchsorted(self.classes_, y_val)]
        return self._fit(X, Y, X_val, Y_val)

    @fill(x_returns=_X_RETURNS)
    def predict_proba(self, X):
        """Class probabilities: the outputs clipped at 0 and normalised (see Notes).

        {{x_returns}}
        proba : ndarray of shape (n_samples, n_classes)
            Column k belongs to ``classes_[k]``; every row sums to 1.
        """
        return outputs_to_proba(self._outputs(X))

    @fill(x_returns=_X_RETURNS)
    def predict(self, X):
        """The class of the largest output for each sample (winner-takes-all).

        {{x_returns}}
        y : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = False
        return tags


class RpropRegressor(RegressorPartialFit, RegressorMixin, _RpropBase):
    __doc__ = ("""Feed-forward network regressor trained by epoch-batched RPROP.

    One output per target column; the network is trained on the summed squared
    error with :func:`fastnet.train_rprop`. Targets are used as given: scale
    them (e.g. :class:`~sklearn.compose.TransformedTargetRegressor`) if they
    are far from unit size, as RPROP's step bounds are absolute.
""" + _PARAMS_DOC.format(out="linear", out_ce="logistic") + """
    Attributes
    ----------
    n_outputs_ : int
        Number of target columns.
""" + _ATTRIBUTES_DOC + """
    See Also
    --------
    RpropClassifier
    fastnet.train_rprop : the training function underneath.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(-1, 1, 50)[:, None]
    >>> reg = RpropRegressor(hidden_layer_sizes=(6,), max_iter=500, random_state=0)
    >>> reg.fit(X, X[:, 0] ** 2).score(X, X[:, 0] ** 2) > 0.95
    True
    """)

    _default_output_activation = {"sse": "linear", "cross_entropy": "logistic"}
    _is_classifier = False

    def fit(self, X, y, X_val=None, y_val=None):
        X, y = validate_data(self, X, y, dtype=FLOATS, order="C", multi_output=True,
                             y_numeric=True)
        Y = y.reshape(len(y), -1)
        self.n_outputs_ = Y.shape[1]
        self._y_1d = y.ndim == 1
        Y_val = None
        X_val, y_val = self._check_val(X_val, y_val, multi_output=True, y_numeric=True)
        if X_val is not None:
            Y_val = y_val.reshape(len(y_val), -1)
            if Y_val.shape[1] != self.n_outputs_:
                raise ValueError(f"`y_val` has {Y_val.shape[1]} target columns but `y` has "
                                 f"{self.n_outputs_}.")
        return self._fit(X, Y, X_val, Y_val)

    @fill(x_returns=_X_RETURNS)
    def predict(self, X):
        """Network outputs.

        {{x_returns}}
        y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            1-D if ``y`` was 1-D in fit.
        """
        outputs = self._outputs(X)
        return outputs[:, 0] if self._y_1d else outputs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


RpropClassifier.fit.__doc__ = _FIT_DOC.format(
    y="array-like of shape (n_samples,)\n            Class labels of any type.",
    val="Validation set for early stopping; its labels must be among those of y.",
    cls="RpropClassifier", raises="")
RpropRegressor.fit.__doc__ = _FIT_DOC.format(
    y="array-like of shape (n_samples,) or (n_samples, n_outputs)",
    val="Validation set for early stopping, shaped like X and y.", cls="RpropRegressor",
    raises="")


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
