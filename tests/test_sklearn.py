"""fastnet.sklearn: scikit-learn's estimator checks, model selection, label encoding."""
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from _extras import needs
from numpy.testing import assert_allclose, assert_array_equal

needs("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_validate  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from fastnet import MLP, NoConvergenceWarning, train_rprop  # noqa: E402
from fastnet.sklearn import (  # noqa: E402
    RpropClassifier,
    RpropConvergenceWarning,
    RpropRegressor,
    outputs_to_proba,
)


# ------------------------------------------------------------ estimator checks
def _expected_failed_checks(estimator):
    """Checks known to fail, with the reason. None today: every check passes.

    (``check_array_api_input`` is *skipped* by scikit-learn itself unless
    SCIPY_ARRAY_API is set; fastnet computes with NumPy float64 only.)
    """
    return {}


def _listed(mark):
    """``parametrize_with_checks``'s mark with its checks in a list: scikit-learn 1.7 (the
    newest for Python 3.10) gives them as a generator, which pytest 9 refuses (a warning,
    an error here); 1.8 gives a list already."""
    names, values, *rest = mark.mark.args
    return pytest.mark.parametrize(names, list(values), *rest, **mark.mark.kwargs)


@_listed(parametrize_with_checks([RpropClassifier(), RpropRegressor(),
                                  RpropClassifier(loss="log_loss", activation="relu",
                                                  alpha=1e-4)],
                                 expected_failed_checks=_expected_failed_checks))
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _string_labels(y):
    return np.array(["setosa", "versicolor", "virginica"])[y]


# ------------------------------------------------------------- label encoding
def test_string_labels_one_output_per_class(iris):
    X, y = iris
    labels = _string_labels(y)
    clf = RpropClassifier(random_state=0).fit(X, labels)
    assert_array_equal(clf.classes_, ["setosa", "versicolor", "virginica"])
    assert clf.net_.n_out == 3
    pred = clf.predict(X)
    assert pred.dtype == clf.classes_.dtype
    assert np.mean(pred == labels) > 0.95
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_array_equal(clf.classes_[proba.argmax(axis=1)], pred)


def test_binary_problem_uses_two_outputs(iris):
    X, y = iris
    keep = y < 2
    labels = np.where(y[keep] == 0, "no", "yes").astype(object)
    clf = RpropClassifier(random_state=1).fit(X[keep], labels)
    assert clf.net_.n_out == 2
    assert clf.predict_proba(X[keep]).shape == (keep.sum(), 2)
    assert clf.score(X[keep], labels) == 1.0


def test_targets_are_one_hot_like_proben1(iris):
    # The estimator trains exactly what train_rprop trains on one-hot 0/1 targets.
    X, y = iris
    clf = RpropClassifier(hidden_layer_sizes=(5,), stop=None, max_iter=40, random_state=3).fit(X, y)
    net = MLP(4, (5,), 3, output_activation="logistic")
    ref = train_rprop(net, X, np.eye(3)[y], max_epochs=40, init_scale=0.5, seed=3)
    assert_array_equal(clf.net_.weights, ref.net.weights)
    assert_array_equal(clf.loss_curve_, ref.train_error)
    assert clf.n_iter_ == 40 and clf.relevant_epoch_ == 40
    assert clf.traversals_ == ref.traversals


def test_predict_proba_rows_sum_to_one_when_all_outputs_nonpositive(iris):
    X, y = iris
    clf = RpropClassifier(output_activation="linear", max_iter=20, random_state=0).fit(X, y)
    # Push every output below 0: set the output biases to -100.
    W, b = clf.net_.get_params()
    b[clf.net_.n_layers] = np.full(3, -100.0)
    clf.net_.set_params(W, b)
    outputs = clf.net_.predict(X)
    assert (outputs <= 0).all()
    proba = clf.predict_proba(X)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (proba >= 0).all()
    assert_array_equal(proba.argmax(axis=1), outputs.argmax(axis=1))
    assert_array_equal(clf.predict(X), clf.classes_[outputs.argmax(axis=1)])


def test_outputs_to_proba_rules():
    outputs = np.array([[0.9, 0.3, -0.2],     # clip at 0, normalise: 0.9/1.2, 0.3/1.2, 0
                        [-1.0, -2.0, -3.0],   # all <= 0: softmax
                        [0.0, 0.0, 0.0],      # all zero: softmax = uniform
                        [2.0, 2.0, 0.0]])     # sums above 1 are normalised too
    proba = outputs_to_proba(outputs)
    e = np.exp([0.0, -1.0, -2.0])
    assert_allclose(proba, [[0.75, 0.25, 0.0], e / e.sum(), [1 / 3] * 3, [0.5, 0.5, 0.0]],
                    rtol=1e-15, atol=1e-15)
    assert_allclose(outputs_to_proba(np.array([[-5.0], [0.3]])), [[1.0], [1.0]])


def test_one_class_is_predicted():
    X = np.random.default_rng(0).uniform(size=(10, 3))
    clf = RpropClassifier(max_iter=10, random_state=0).fit(X, ["only"] * 10)
    assert_array_equal(clf.predict(X), ["only"] * 10)
    assert_array_equal(clf.predict_proba(X), np.ones((10, 1)))


# -------------------------------------------------------- model selection use
def test_pipeline_and_grid_search():
    X, y = load_iris(return_X_y=True)
    labels = _string_labels(y)
    pipe = make_pipeline(StandardScaler(), RpropClassifier(max_iter=100, random_state=0))
    grid = GridSearchCV(pipe, {"rpropclassifier__hidden_layer_sizes": [(2,), (6,)],
                               "rpropclassifier__variant": ["rprop+", "irprop-"]}, cv=3)
    grid.fit(X, labels)
    assert set(grid.best_params_) == {"rpropclassifier__hidden_layer_sizes",
                                      "rpropclassifier__variant"}
    assert grid.best_score_ > 0.9
    assert grid.score(X, labels) > 0.9
    assert grid.predict(X[:5]).dtype.kind == "U"
    # refit network matches the chosen parameters
    best = grid.best_estimator_[-1]
    assert best.net_.hidden == best.hidden_layer_sizes


def test_cross_validate_classifier_and_regressor():
    X, y = load_iris(return_X_y=True)
    res = cross_validate(make_pipeline(StandardScaler(), RpropClassifier(random_state=0)),
                         X, y, cv=3, scoring=["accuracy", "neg_log_loss"])
    assert res["test_accuracy"].min() > 0.85
    assert np.isfinite(res["test_neg_log_loss"]).all()
    rng = np.random.default_rng(0)
    Xr = rng.uniform(-1, 1, size=(120, 2))
    yr = np.sin(2 * Xr[:, 0]) * Xr[:, 1]
    res = cross_validate(RpropRegressor(hidden_layer_sizes=(8,), max_iter=300, random_state=0), Xr, yr,
                         cv=3)
    assert res["test_score"].min() > 0.8


@pytest.mark.slow  # 5.1 s on a loaded two-core machine (--durations)
def test_cross_validate_in_worker_processes_equals_sequential():
    # n_jobs=2 sends the estimators to joblib's worker processes (pickled there
    # and back); the fitted networks equal those of a sequential run bit for bit.
    X, y = load_iris(return_X_y=True)
    model = make_pipeline(StandardScaler(), RpropClassifier(random_state=0))
    par = cross_validate(model, X, y, cv=4, n_jobs=2, return_estimator=True)
    seq = cross_validate(model, X, y, cv=4, return_estimator=True)
    for a, b in zip(par["estimator"], seq["estimator"]):
        assert_array_equal(a[-1].net_.weights, b[-1].net_.weights)
    assert_array_equal(par["test_score"], seq["test_score"])


def test_clone_keeps_parameters():
    from fastnet.stopping import GL
    clf = RpropClassifier(hidden_layer_sizes=(3, 2), stop=GL(2), delta0=(0.05, 0.2), random_state=7)
    params = clone(clf).get_params()
    assert params["hidden_layer_sizes"] == (3, 2) and params["delta0"] == (0.05, 0.2)
    assert params["stop"].name == "GL2"


# ------------------------------------------------------------ early stopping
def test_early_stopping_on_explicit_validation_set(iris):
    X, y = iris
    rng = np.random.default_rng(0)
    order = rng.permutation(150)
    tr, va = order[:100], order[100:]
    clf = RpropClassifier(hidden_layer_sizes=(8,), max_iter=3000, random_state=0)
    clf.fit(X[tr], y[tr], X[va], y[va])
    assert clf.stop_reason_ != "max_epochs"          # Proben1's multilayer rule fired
    assert clf.n_iter_ < 3000
    assert clf.validation_scores_.shape == (clf.n_iter_ // 5,)
    best = 5 * (int(np.argmin(clf.validation_scores_)) + 1)
    assert clf.relevant_epoch_ == best
    assert clf.train_result_.setup["n_val"] == 50


def test_validation_fraction_split_is_deterministic(iris):
    X, y = iris
    a = RpropClassifier(validation_fraction=0.2, stop=None, max_iter=50, random_state=4)
    b = clone(a)
    a.fit(X, y)
    b.fit(X, y)
    assert a.train_result_.setup["n_val"] == math.ceil(0.2 * 150)
    assert a.train_result_.setup["n_train"] == 150 - 30
    assert_array_equal(a.validation_scores_, b.validation_scores_)
    assert_array_equal(a.net_.weights, b.net_.weights)
    c = clone(a).set_params(random_state=5).fit(X, y)
    assert not np.array_equal(a.validation_scores_, c.validation_scores_)


def test_convergence_warning_is_both_kinds(iris):
    X, y = iris
    clf = RpropClassifier(validation_fraction=0.3, max_iter=10, random_state=0)
    with pytest.warns(RpropConvergenceWarning, match="max_iter=10"):
        clf.fit(X, y)
    assert issubclass(RpropConvergenceWarning, ConvergenceWarning)
    assert issubclass(RpropConvergenceWarning, NoConvergenceWarning)
    assert clf.stop_reason_ == "max_epochs"
    # Without a validation set "auto" means no criterion: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RpropClassifier(max_iter=10, random_state=0).fit(X, y)


def test_preset_supplies_parameters_and_explicit_ones_win(iris):
    X, y = iris
    clf = RpropClassifier(preset="proben1-multilayer", max_iter=10, random_state=0).fit(X, y)
    params = clf.train_result_.setup["parameters"]
    assert params["eta_plus"] == 1.2 and params["delta0"] == [0.05, 0.2]
    assert "[-0.2, 0.2]" in clf.train_result_.setup["initialisation"]
    clf = RpropClassifier(preset="proben1-linear", hidden_layer_sizes=(), eta_plus=1.3, max_iter=10,
                          random_state=0).fit(X, y)
    assert clf.train_result_.setup["parameters"]["eta_plus"] == 1.3
    assert "[-0.01, 0.01]" in clf.train_result_.setup["initialisation"]


# ---------------------------------------------------------------- regressor
def test_regressor_shapes_and_validation():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(80, 3))
    Y = np.column_stack([X.sum(axis=1), X[:, 0] * X[:, 1]])
    reg = RpropRegressor(max_iter=300, random_state=0).fit(X, Y[:, 0])
    assert reg.n_outputs_ == 1 and reg.predict(X).shape == (80,)
    assert reg.score(X, Y[:, 0]) > 0.95
    reg2 = RpropRegressor(stop=None, max_iter=300, random_state=0)
    reg2.fit(X[:60], Y[:60], X[60:], Y[60:])
    assert reg2.n_outputs_ == 2 and reg2.predict(X).shape == (80, 2)
    assert reg2.validation_scores_ is not None
    with pytest.raises(ValueError, match="`y_val` has 1 target columns but `y` has 2"):
        RpropRegressor(max_iter=5).fit(X[:60], Y[:60], X[60:], Y[60:, :1])


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize("params, fit_kw, exc, match", [
    (dict(validation_fraction=0.2), "val", ValueError, "`validation_fraction`.*not both"),
    (dict(validation_fraction=1.0), None, ValueError, r"`validation_fraction` must be None or"),
    (dict(validation_fraction="a"), None, ValueError, r"`validation_fraction` must be None or"),
    (dict(stop="soon"), None, ValueError, r"`stop` must be None, a fastnet.stopping"),
    (dict(stop="linear"), None, ValueError, r"`stop`='linear' .* needs a validation set"),
    (dict(random_state=-1), None, ValueError, r"`random_state` must be non-negative"),
    (dict(random_state="x"), None, TypeError, r"`random_state` must be None, an int"),
    (dict(hidden_layer_sizes="x"), None, TypeError, r"`hidden_layer_sizes` must be a sequence"),
    (dict(hidden_layer_sizes=(3, 0)), None, ValueError, r"`hidden_layer_sizes` must be >= 1"),
    (dict(eta_minus=1.5), None, ValueError, r"`eta_minus` must be in \(0.0, 1.0\)"),
    (dict(variant="adam"), None, ValueError, r"`variant` must be one of"),
    (dict(preset="fast"), None, ValueError, r"`preset` must be one of"),
    (dict(max_iter=0), None, ValueError, r"`max_iter` must be >= 1"),
    (dict(output_activation="softplus"), None, ValueError, r"`output_activation` must be one of"),
    (dict(), "xval_only", ValueError, r"give both `X_val` and `y_val`"),
    (dict(), "bad_label", ValueError, r"`y_val` has labels \['x'\] that are not in `y`"),
])
def test_fit_errors_name_the_argument(params, fit_kw, exc, match):
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.array(["a", "b"] * 10)
    kw = {"val": dict(X_val=X, y_val=y), "xval_only": dict(X_val=X),
          "bad_label": dict(X_val=X[:2], y_val=np.array(["a", "x"])), None: {}}[fit_kw]
    with pytest.raises(exc, match=match):
        RpropClassifier(**{"max_iter": 5, **params}).fit(X, y, **kw)


def test_import_error_names_the_extra():
    code = ("import sys; sys.modules['sklearn'] = None\n"
            "try:\n    import fastnet.sklearn\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "pip install 'scikit-learn>=1.6'" in out


def test_auto_stop_follows_the_presets_own_rule(iris):
    X, y = iris
    for preset, rule in (("proben1-multilayer", "(GL2 or P<0.1 or max_epochs)"),
                         ("proben1-multilayer-literal",
                          "(P<0.1 or max_epochs or (ever GL5 and ever UP8 and ever PQ3))")):
        clf = RpropClassifier(preset=preset, stop="auto", validation_fraction=0.25,
                              max_iter=20, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        assert clf.train_result_.setup["stopping"] == rule
    with pytest.raises(ValueError, match="`preset` must be one of"):
        RpropClassifier(preset="proben2", stop="auto", validation_fraction=0.25).fit(X, y)


# ---------------------------------------------- objectives: scikit-learn's names
def test_loss_alpha_and_activation_train_what_train_rprop_trains(iris):
    X, y = iris
    clf = RpropClassifier(hidden_layer_sizes=(5,), activation="relu", loss="log_loss",
                          alpha=1e-3, stop=None, max_iter=40, random_state=3).fit(X, y)
    net = MLP(4, (5,), 3, hidden_activation="relu", output_activation="softmax")
    ref = train_rprop(net, X, np.eye(3)[y], max_epochs=40, init_scale=0.5, seed=3,
                      loss="cross_entropy", weight_decay=1e-3)
    assert_array_equal(clf.net_.weights, ref.net.weights)
    assert_array_equal(clf.loss_curve_, ref.train_error)
    assert clf.net_.output_activation == "softmax" and clf.net_.hidden_activation == "relu"
    proba = clf.predict_proba(X)
    assert_allclose(proba, clf.net_.predict(X), rtol=1e-14)       # softmax outputs as they are
    assert clf.score(X, y) > 0.9
    same = RpropClassifier(hidden_layer_sizes=(5,), hidden_activation="relu",
                           loss="cross_entropy", alpha=1e-3, stop=None, max_iter=40,
                           random_state=3).fit(X, y)
    assert_array_equal(same.net_.weights, clf.net_.weights)


def test_regressor_activation_names_and_cross_entropy_outputs():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 2))
    y = (X[:, 0] > 0).astype(float)
    reg = RpropRegressor(hidden_layer_sizes=(3,), activation="identity", loss="cross_entropy",
                         max_iter=30, random_state=0).fit(X, y)
    assert reg.net_.hidden_activation == "linear" and reg.net_.output_activation == "logistic"
    assert clone(reg).get_params()["alpha"] == 0.0


@pytest.mark.parametrize("params, exc, match", [
    (dict(loss="hinge"), ValueError,
     r"`loss` must be one of \['cross_entropy', 'log_loss', 'squared_error', 'sse'\], "
     r"got 'hinge'"),
    (dict(alpha=-1.0), ValueError, r"`alpha` must be in \[0.0, inf\), got -1.0"),
    (dict(activation="softplus"), ValueError,
     r"`activation` must be one of \['identity', 'logistic', 'relu', 'tanh'\], got 'softplus'"),
    (dict(activation="relu", hidden_activation="tanh"), ValueError,
     r"give `activation` \(scikit-learn's name\) or `hidden_activation` \(fastnet's\), "
     r"not both, got activation='relu' and hidden_activation='tanh'"),
    (dict(loss="cross_entropy", output_activation="linear"), ValueError,
     r"`loss`='cross_entropy' needs outputs that are probabilities"),
])
def test_objective_parameters_are_named(params, exc, match):
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.array(["a", "b"] * 10)
    with pytest.raises(exc, match=match):
        RpropClassifier(max_iter=2, **params).fit(X, y)


def test_an_estimator_pickled_before_the_objective_parameters_refits(iris):
    import pickle
    X, y = iris
    clf = RpropClassifier(hidden_layer_sizes=(3,), stop=None, max_iter=5, random_state=0).fit(X, y)
    state = clf.__getstate__()
    for name in ("activation", "loss", "alpha"):       # as saved by fastnet 0.1
        del state[name]
    old = RpropClassifier.__new__(RpropClassifier)
    old.__setstate__(state)
    assert {k: old.get_params()[k] for k in ("activation", "loss", "alpha")} == \
        {"activation": None, "loss": "sse", "alpha": 0.0}
    assert_array_equal(clone(old).fit(X, y).net_.weights, clf.net_.weights)
    assert_array_equal(pickle.loads(pickle.dumps(old)).predict(X), clf.predict(X))


# ---------------------------------------------- solver: any fastnet algorithm
@pytest.mark.parametrize("solver, algorithm", [
    ("lbfgs", "lbfgs"), ("adam", "adam"), ("adam(learning_rate=0.01)", "adam(learning_rate=0.01)"),
    ("SGD(learning_rate=0.0005)", "backprop(learning_rate=0.0005)"),
    ("sgd(learning_rate=0.001, momentum=0.9)", "backprop(learning_rate=0.001, momentum=0.9)"),
    ("scg", "scg"), ("irprop+", "irprop+"), ("quickprop(epsilon=0.001)", "quickprop(epsilon=0.001)"),
])
def test_solver_trains_what_fastnet_train_trains(iris, solver, algorithm):
    from fastnet import train
    from fastnet.algorithms import from_spec

    X, y = iris
    clf = RpropClassifier(hidden_layer_sizes=(4,), solver=solver, stop=None, max_iter=30,
                          random_state=2).fit(X, y)
    ref = train(MLP(4, (4,), 3, output_activation="logistic"), X, np.eye(3)[y],
                algorithm=from_spec(algorithm), max_epochs=30,
                init_scale=0.5, seed=2, classification=True)
    assert_array_equal(clf.net_.weights, ref.net.weights)
    assert clf.train_result_.setup["algorithm"] == ref.setup["algorithm"]
    assert clone(clf).get_params()["solver"] == solver


@pytest.mark.parametrize("params, match", [
    (dict(solver="newton"), r"`solver` must name one of"),
    (dict(solver="scg", eta_plus=1.1), r"RPROP parameters \['eta_plus'\] apply with solver=None"),
    (dict(solver="adam(beta1=1.5)"), r"`beta1`"),
])
def test_solver_errors_name_it(iris, params, match):
    X, y = iris
    with pytest.raises(ValueError, match=match):
        RpropClassifier(hidden_layer_sizes=(3,), max_iter=5, **params).fit(X, y)


@pytest.mark.parametrize("solver", ["adam", "quickprop(epsilon=0.001)"])
def test_scikit_learns_default_pair_adam_and_log_loss_trains_the_cross_entropy(iris, solver):
    # MLPClassifier's defaults: solver="adam" on the log-loss; here with softmax outputs
    # and a penalty, the run of fastnet.train on that objective.
    from fastnet import train
    from fastnet.algorithms import from_spec

    X, y = iris
    clf = RpropClassifier(hidden_layer_sizes=(4,), solver=solver, loss="log_loss", alpha=1e-3,
                          output_activation="softmax", stop=None, max_iter=30,
                          random_state=2).fit(X, y)
    ref = train(MLP(4, (4,), 3, output_activation="softmax"), X, np.eye(3)[y],
                algorithm=from_spec(solver), max_epochs=30, init_scale=0.5, seed=2,
                classification=True, loss="cross_entropy", weight_decay=1e-3)
    assert_array_equal(clf.net_.weights, ref.net.weights)
    assert clf.train_result_.setup["loss"] == "cross_entropy"
