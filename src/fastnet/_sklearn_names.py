"""scikit-learn's names for fastnet's activations and objectives, resolved for the estimators.

An ``MLPClassifier`` user looks for ``activation``, ``alpha`` and a loss; the
estimators of :mod:`fastnet.sklearn` take them beside fastnet's own names
(``hidden_activation``, ``weight_decay`` through ``alpha``, ``loss``), and this
module turns them into the arguments of :class:`fastnet.MLP` and
:func:`fastnet.train_rprop`.
"""
from fastnet._validation import check_choice

__all__ = ["SKLEARN_ACTIVATIONS", "LOSS_NAMES", "resolve_activation", "resolve_loss"]

#: scikit-learn's hidden activation names (``MLPClassifier(activation=...)``)
#: and fastnet's activations of the same functions.
SKLEARN_ACTIVATIONS = {"identity": "linear", "logistic": "logistic", "tanh": "tanh",
                       "relu": "relu"}

#: The estimators' loss names: fastnet's and scikit-learn's (``SGDClassifier``'s
#: ``"log_loss"``, ``"squared_error"``) for the same objectives.
LOSS_NAMES = {"sse": "sse", "squared_error": "sse", "cross_entropy": "cross_entropy",
              "log_loss": "cross_entropy"}


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
