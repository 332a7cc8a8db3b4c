"""The gradient and the Jacobian of a network, for researchers who write their own rules.

Both run on fastnet's compiled kernels over the whole data set at once (no Python
per example): :func:`value_and_grad` is the backward pass every trainer uses,
:func:`jacobian` runs one backward pass per output for each example, a block of
examples at a time; :class:`Objective` prepares both for many calls at the same
data (an optimizer's loop). The error is Proben1's summed squared error (Prechelt 1994)
with no factor 1/2 (or, on request, the cross-entropy and an L2 weight decay), and
gradients are in the order of ``net.weights``, so a rule written in NumPy updates
``net.weights`` directly (see the guide "Gradients and
Jacobians for your own rules").
"""
from __future__ import annotations

import numpy as np

from fastnet._blas import _NO_LIMIT, single_threaded_blas
from fastnet._engine import DEFAULT_BLAS_MIN, activations
from fastnet._engine import NormalEquations as _NormalEquations  # noqa: F401 (its old home)
from fastnet._kernels import _backward, _jacobian
from fastnet._objective import Objective, ValueAndGrad, blocks, needs_blas_limit
from fastnet._typing import ArrayLike
from fastnet._validation import check_matrix, check_pair
from fastnet.network import MLP, kernel_layers
from fastnet.training._checks import LOSSES, check_objective

__all__ = ["ValueAndGrad", "value_and_grad", "jacobian", "Objective"]


def _check_arguments(net, X, Y=None):
    """Return X (and Y) coerced to C-contiguous arrays of the network's dtype, or raise
    naming the argument."""
    if not isinstance(net, MLP):
        raise TypeError(f"`net` must be a fastnet.MLP, got {type(net).__name__}.")
    if not np.isfinite(net.weights).all():
        raise FloatingPointError(
            "`net` has non-finite weights; re-initialise them with net.init_weights(seed).")
    if Y is None:
        return check_matrix(X, "X", n_cols=net.n_in, what="inputs", allow_empty=True,
                            dtype=net.dtype)
    return check_pair(X, Y, "X", "Y", net.n_in, net.n_out, allow_empty=True, dtype=net.dtype)


def _blocked(net, n):
    """(examples per block, the context that holds BLAS at one thread if the kernels
    may call it: see `fastnet._objective.needs_blas_limit`)."""
    block, smallest = blocks(net, n)
    limit = needs_blas_limit(net, n, smallest, DEFAULT_BLAS_MIN)
    return block, single_threaded_blas() if limit else _NO_LIMIT


def value_and_grad(net: MLP, X: ArrayLike, Y: ArrayLike, *, loss: str = "sse",
                   weight_decay: float = 0.0) -> ValueAndGrad:
    """Summed squared error of ``net`` on ``(X, Y)`` and its gradient with respect to the weights.

    Parameters
    ----------
    net : MLP
        The network; its weights are read, never changed.
    X : array-like of shape (n_patterns, n_in)
        Inputs (an empty set gives error 0 and a zero gradient).
    Y : array-like of shape (n_patterns, n_out)
        Targets.
    loss : {"sse", "cross_entropy"}, default "sse"
        The objective: the summed squared error, or the cross-entropy
        (-sum t log o with softmax outputs; -sum [t log o + (1 - t) log(1 - o)]
        with logistic outputs), as :func:`fastnet.train_rprop` trains it.
    weight_decay : float >= 0, default 0.0
        L2 weight decay lambda: ``lambda * sum(w**2)`` (every weight and bias) is
        added to E and ``2 * lambda * w`` to g.

    Returns
    -------
    result : ValueAndGrad
        ``(error, gradient)``: E = sum_p sum_k (o_pk - t_pk)**2 (or the objective)
        and g = dE/dw, a new array of the network's dtype in the order of
        ``net.weights`` (one full-batch backward pass). A float32 network
        computes the pass in float32 (X and Y converted to float32) and sums E
        in float64.

    Raises
    ------
    TypeError
        If `net` is not an MLP, or `X`/`Y` do not hold real numbers.
    ValueError
        If `X`/`Y` are not 2-D, do not match the network's inputs/outputs or each
        other's pattern count, or are not finite; for an unknown `loss`, a
        negative `weight_decay`, or cross-entropy without softmax or logistic
        outputs or with targets outside [0, 1].
    FloatingPointError
        If the network's weights are not finite.

    See Also
    --------
    jacobian : the derivative of every output, one row per example and output.

    Notes
    -----
    With outputs o_pk, targets t_pk and output deltas 2 (o_pk - t_pk) f'(net_pk),
    back-propagation (Rumelhart et al. 1986) gives g = dE/dw exactly; for the
    summed squared error it equals ``2 * jacobian(net, X).T @ (O - Y).ravel()``. E and g are what RPROP and
    backprop use per epoch (Riedmiller & Braun 1993 write E with a 1/2; fastnet,
    like Prechelt 1994, does not, so g is twice theirs). With cross-entropy the
    output deltas are o - t (logistic outputs; softmax outputs: o sum(t) - t,
    which is o - t for one-hot targets). A probability that rounds to 0 enters
    the logarithm as the smallest normal double, so E stays finite.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, value_and_grad
    >>> net = MLP(2, (2,), 1, shortcut=False, seed=0)
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> E, g = value_and_grad(net, X, Y)
    >>> g.shape, bool(np.isclose(E, net.sum_squared_error(X, Y)))
    ((9,), True)

    One step of plain gradient descent, written by hand:

    >>> _ = net.set_weights(net.weights - 0.1 * g)
    >>> bool(net.sum_squared_error(X, Y) < E)
    True
    """
    X, Y = _check_arguments(net, X, Y)
    loss, weight_decay = check_objective(net, Y, loss, weight_decay)
    n = X.shape[0]
    g = np.zeros(net.n_connections, net.dtype)
    if n == 0:
        w = net.weights
        if weight_decay:
            g = 2.0 * weight_decay * w
        return ValueAndGrad(weight_decay * float(w @ w), g)
    A = activations(net, X)
    block, blas = _blocked(net, n)
    n_nonin = net.n_units - net.n_in
    D, Dl = np.empty((block, n_nonin), net.dtype), np.empty((block, n_nonin), net.dtype)
    with blas:
        error = _backward.gradient(A, Y, kernel_layers(net), net.n_in, net.weights, g, D, Dl,
                                   DEFAULT_BLAS_MIN, LOSSES[loss], weight_decay)
    return ValueAndGrad(float(error), g)


def jacobian(net: MLP, X: ArrayLike) -> np.ndarray:
    """Jacobian of the network's outputs with respect to its weights.

    Parameters
    ----------
    net : MLP
        The network; its weights are read, never changed.
    X : array-like of shape (n_patterns, n_in)
        Inputs.

    Returns
    -------
    J : ndarray of shape (n_patterns * n_out, n_connections)
        ``J[p * n_out + k, c]`` = d o_pk / d w_c: rows example-major, then output;
        columns in the order of ``net.weights``. ``J.reshape(n_patterns, n_out, -1)``
        gives one (n_out, n_connections) matrix per example.

    Raises
    ------
    TypeError
        If `net` is not an MLP, or `X` does not hold real numbers.
    ValueError
        If `X` is not 2-D, does not have ``net.n_in`` columns, or is not finite.
    FloatingPointError
        If the network's weights are not finite.

    See Also
    --------
    value_and_grad : the gradient of the summed squared error (= 2 J^T (O - Y)).

    Notes
    -----
    Row (p, k) is one backward pass from output k of example p: output delta
    f'(net_pk) at output k and 0 at the others (softmax outputs: o_pk ([i = k] -
    o_pi) at every output i), back-propagated as for the gradient. A weight from
    unit s into unit u gets delta_u * a_s, a bias delta_u.
    The kernel runs the n_out passes of a block of examples together (one matrix
    product per layer). This is the Jacobian of Levenberg-Marquardt training
    (Hagan & Menhaj 1994): its normal equations are ``J.T @ J`` and
    ``J.T @ (O - Y).ravel()``. J takes 8 * n_patterns * n_out * n_connections bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, jacobian
    >>> net = MLP(2, (), 1, seed=0)              # one linear unit: o = w1 x1 + w2 x2 + b
    >>> jacobian(net, [[3., 5.], [7., 11.]])
    array([[ 3.,  5.,  1.],
           [ 7., 11.,  1.]])
    >>> net = MLP.from_proben1("4+2 l", 9, 2)
    >>> jacobian(net, np.zeros((350, 9))).shape
    (700, 100)
    """
    X = _check_arguments(net, X)
    n, n_out = X.shape[0], net.n_out
    J = np.empty((n * n_out, net.n_connections), net.dtype)
    if n == 0:
        return J
    A = activations(net, X)
    block, blas = _blocked(net, n)
    n_nonin = net.n_units - net.n_in
    D, V = np.empty((block, n_nonin), net.dtype), np.empty((block * n_out, n_nonin), net.dtype)
    with blas:
        _jacobian.jacobian(A, kernel_layers(net), net.n_in, net.weights, J, D, V,
                           DEFAULT_BLAS_MIN)
    return J


def __dir__():
    return list(__all__)

