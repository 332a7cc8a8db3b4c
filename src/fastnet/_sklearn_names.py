"""scikit-learn's names for fastnet's activations and objectives, resolved for the estimators.

An ``MLPClassifier`` user looks for ``activation``, ``alpha`` and a loss; the
estimators of :mod:`fastnet.sklearn` take them beside fastnet's own names
(``hidden_activation``, ``weight_decay`` through ``alpha``, ``loss``), and this
module turns them into the arguments of :class:`fastnet.MLP` and
:func:`fastnet.train_rprop`.
"""
from fastnet._validation import check_choice

__all__ = ["SKLEARN_ACTIVATIONS", "LOSS_NAMES", "SOLVER_NAMES", "resolve_activation",
           "resolve_loss", "resolve_solver"]

#: scikit-learn's hidden activation names (``MLPClassifier(activation=...)``)
#: and fastnet's activations of the same functions.
SKLEARN_ACTIVATIONS = {"identity": "linear", "logistic": "logistic", "tanh": "tanh",
                       "relu": "relu"}

#: The estimators' loss names: fastnet's and scikit-learn's (``SGDClassifier``'s
#: ``"log_loss"``, ``"squared_error"``) for the same objectives.
LOSS_NAMES = {"sse": "sse", "squared_error": "sse", "cross_entropy": "cross_entropy",
              "log_loss": "cross_entropy"}


#: scikit-learn's ``solver`` names and fastnet's algorithms of the same kind
#: (``"sgd"``: gradient descent with momentum, here on the whole training set).
SOLVER_NAMES = {"lbfgs": "lbfgs", "adam": "adam", "sgd": "backprop"}


def resolve_activation(activation, hidden_activation):
    """The hidden activation of the network: scikit-learn's ``activation`` if
    given (None: ``hidden_activation``, fastnet's name), checked."""
    if activation is None:
        return hidden_activation
    check_choice(activation, "activation", SKLEARN_ACTIVATIONS)
    mapped = SKLEARN_ACTIVATIONS[activation]
    if hidden_activation not in ("proben1", mapped):
        raise ValueError(f"give `activation` (scikit-learn's name) or `hidden_activation` "
                         f"(fastnet's), not both, got activation={activation!r} and "
                         f"hidden_activation={hidden_activation!r}.")
    return mapped


def resolve_loss(loss):
    """fastnet's name of the objective ``loss`` (either name), checked."""
    return LOSS_NAMES[check_choice(loss, "loss", LOSS_NAMES)]


def resolve_solver(solver, rprop_given):
    """The training algorithm ``solver`` names (None: RPROP from the estimator's RPROP
    parameters); ``rprop_given``: the RPROP parameters the user set, which only
    ``solver=None`` takes."""
    if solver is None:
        return None
    from fastnet.algorithms import from_spec

    if isinstance(solver, str):
        head, paren, rest = solver.strip().partition("(")
        solver = SOLVER_NAMES.get(head.strip().lower(), head) + paren + rest
    try:
        algorithm = from_spec(solver)
    except (TypeError, ValueError) as exc:
        raise type(exc)(str(exc).replace("`algorithm`", "`solver`")) from None
    if rprop_given:
        raise ValueError(f"the RPROP parameters {sorted(rprop_given)} apply with solver=None "
                         f"only; give the algorithm's parameters in `solver`, e.g. "
                         f"'irprop+(eta_plus=1.1)', got solver={solver!r}.")
    return algorithm
