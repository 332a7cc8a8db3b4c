"""``fastnet.gradients.Objective``: the objective of one network and data set, prepared once.

An optimizer that asks for the gradient thousands of times (``scipy.optimize``,
a hand-written loop) pays for what :func:`fastnet.value_and_grad` does on every
call besides the arithmetic: checking and copying the data, allocating the
activations and workspaces, holding BLAS at one thread. An `Objective` does that
once, keeps its buffers and, per call, checks the weight vector (cheaply) and
calls the kernel.
"""
from __future__ import annotations

import math

import numpy as np

from typing import NamedTuple

from fastnet._blas import _NO_LIMIT, calls_blas, single_threaded_blas
from fastnet._engine import DEFAULT_BLAS_MIN, activations, block_rows
from fastnet._kernels import _backward, _jacobian
from fastnet._kernels._simd import simd_level
from fastnet._typing import ArrayLike
from fastnet._validation import check_pair, refuse_complex
from fastnet.network import MLP, kernel_layers
from fastnet.training._checks import LOSSES, check_objective

__all__ = ["Objective", "ValueAndGrad", "blocks", "needs_blas_limit", "SIMD_MIN_ROWS"]

_dot = np.dot
#: Rows of a block from which the register tiles take a product (``SIMD_MIN_ROWS`` of
#: ``_kernels/_types.pxd``; fewer rows run the loops, or BLAS for large products).
SIMD_MIN_ROWS = 8


class ValueAndGrad(NamedTuple):
    """The summed squared error (or another objective) and its gradient (a tuple:
    ``E, g = value_and_grad(...)``).

    Attributes
    ----------
    error : float
        E = sum over examples p and outputs k of (o_pk - t_pk)**2 (no factor 1/2),
        or the objective chosen by ``loss`` and ``weight_decay``.
    gradient : ndarray of shape (n_connections,)
        dE/dw in the order of ``net.weights``.
    """

    error: float
    gradient: np.ndarray


ValueAndGrad.__module__ = "fastnet.gradients"     # (its public home)
_new_pair = tuple.__new__        # (ValueAndGrad's own __new__ is a Python function)


def blocks(net, n):
    """(rows per block, rows of the smallest block) of the kernels on ``n`` patterns:
    block_rows(net), cut into equal blocks (at least 1 row)."""
    n_blocks = max(1, -(-n // block_rows(net)))
    block = max(1, -(-n // n_blocks))
    return block, max(1, n - (n_blocks - 1) * block)


def needs_blas_limit(net, n, smallest, blas_min):
    """Whether the single-network kernels may call BLAS for ``net`` on ``n`` patterns
    whose smallest block has ``smallest`` rows: where the CPU has the register tiles
    they take every product of a block of >= SIMD_MIN_ROWS rows (``_kernels/_types.pxd``),
    BLAS none; elsewhere products of m*n*k >= ``blas_min`` go to BLAS (`calls_blas`)."""
    if simd_level() != "default" and smallest >= SIMD_MIN_ROWS:
        return False
    return calls_blas(net, n, blas_min)


class Objective:
    """The objective of ``net``'s topology on ``(X, Y)`` as a function of the weights,
    prepared once for many calls.

    ``obj(w)`` returns ``(value, gradient)``, the form ``scipy.optimize.minimize(obj,
    w0, jac=True)`` takes, as :func:`fastnet.value_and_grad` of a network holding
    ``w`` returns it, bit for bit. The data are checked and copied into the
    kernels' layout once, here; the workspaces are kept; a call checks ``w`` and
    runs the kernel.

    Parameters
    ----------
    net : MLP
        The topology (layers, activations, shortcuts); its weights are not read:
        every call gives its own.
    X : array-like of shape (n_patterns, n_in)
        Inputs, copied (later changes to ``X`` are not seen).
    Y : array-like of shape (n_patterns, n_out)
        Targets, copied.
    loss : {"sse", "cross_entropy"}, default "sse"
        The objective, as in :func:`fastnet.value_and_grad`.
    weight_decay : float >= 0, default 0.0
        L2 weight decay lambda (adds ``lambda * sum(w**2)``).

    Attributes
    ----------
    n_weights : int
        Length of ``w`` (``net.n_connections``).
    n_patterns : int
    loss : str
    weight_decay : float

    Raises
    ------
    TypeError
        If `net` is not an MLP, or `X`/`Y` do not hold real numbers.
    ValueError
        As :func:`fastnet.value_and_grad` for `X`, `Y`, `loss` and `weight_decay`.

    See Also
    --------
    fastnet.value_and_grad : the same value and gradient for one call.
    fastnet.jacobian : the Jacobian of the outputs.

    Notes
    -----
    A call refuses a ``w`` of another length (ValueError), of complex or
    non-numeric values (TypeError), or with a NaN or infinite weight
    (FloatingPointError); a real array of another dtype or layout is converted.
    ``out`` must be a C-contiguous, writeable array of the network's dtype and
    shape ``(n_weights,)`` (TypeError, ValueError otherwise).

    dtype: the objective computes in the network's dtype (``net.dtype``). For
    a float32 network the data are held in float32, each call's ``w`` is
    rounded to float32 (a float64 ``w``, as ``scipy.optimize`` passes, is
    converted: a copy per call), the gradient and Jacobian are float32 arrays
    and the value is a float summed in float64 -- the value and gradient of
    the float32 network that holds ``w`` rounded.

    BLAS threads: where the CPU has fastnet's register tiles (AVX2 or AVX-512) and
    every block has at least 8 patterns, the kernels call no BLAS and a call
    touches no process-wide setting. Elsewhere, if a layer's product is large
    enough for BLAS (``m*n*k >= 4096``), each call holds BLAS at one thread while
    it runs, as :func:`fastnet.value_and_grad` does (a few microseconds; the
    products themselves take longer there).

    An `Objective` keeps its buffers between calls: use one from one thread at a
    time (a thread pool gives each worker its own ``Objective``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastnet import MLP, value_and_grad
    >>> from fastnet.gradients import Objective
    >>> net = MLP(2, (2,), 1, shortcut=False, seed=0)
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> obj = Objective(net, X, Y)
    >>> E, g = obj(net.weights)
    >>> (E, list(g)) == (value_and_grad(net, X, Y).error, list(value_and_grad(net, X, Y).gradient))
    True

    With SciPy (``jac=True``: the function returns the value and the gradient):

    >>> from scipy.optimize import minimize
    >>> res = minimize(obj, net.weights, jac=True, method="L-BFGS-B",
    ...                options={"maxiter": 200})
    >>> bool(obj.value(res.x) < E)
    True
    """

    def __init__(self, net: MLP, X: ArrayLike, Y: ArrayLike, *, loss: str = "sse",
                 weight_decay: float = 0.0) -> None:
        if not isinstance(net, MLP):
            raise TypeError(f"`net` must be a fastnet.MLP, got {type(net).__name__}.")
        X, Y = check_pair(X, Y, "X", "Y", net.n_in, net.n_out, allow_empty=True, dtype=net.dtype)
        self.loss, self.weight_decay = check_objective(net, Y, loss, weight_decay)
        self.dtype = net.dtype
        self._code = LOSSES[self.loss]
        self.n_weights, self.n_patterns = net.n_connections, X.shape[0]
        self.n_out = net.n_out
        self._shape = (net.n_connections,)
        self._layers, self._n_in = kernel_layers(net), net.n_in
        # (a copy: the kernels write the activations beyond the inputs, and the
        # caller's Y may change)
        self._Y = np.array(Y, dtype=net.dtype, order="C")
        self._A = activations(net, X)
        block, smallest = blocks(net, self.n_patterns)
        n_nonin = net.n_units - net.n_in
        self._D, self._Dl = np.empty((block, n_nonin), net.dtype), np.empty((block, n_nonin), net.dtype)
        self._V = None                      # the Jacobian's deltas, made at its first call
        self._limit = needs_blas_limit(net, self.n_patterns, smallest, DEFAULT_BLAS_MIN)

    def __repr__(self):
        return (f"Objective(n_weights={self.n_weights}, n_patterns={self.n_patterns}, "
                f"loss={self.loss!r}, weight_decay={self.weight_decay!r})")

    # ------------------------------------------------------------------ checks
    def _weights(self, w):
        """``w`` as the kernels take it, or the named error; the fast path is a type,
        dtype, shape and flag test and one dot product (NaN or inf in w makes it
        non-finite)."""
        dtype = self.dtype
        if (type(w) is not np.ndarray or w.dtype is not dtype and w.dtype != dtype
                or w.shape != self._shape or not w.flags.c_contiguous):
            w = self._converted(w)
        if not math.isfinite(_dot(w, w)) and not np.isfinite(w).all():
            # (a finite w whose squares overflow passes)
            raise FloatingPointError(
                f"`w` must be finite, got {int(np.count_nonzero(~np.isfinite(w)))} NaN or "
                f"infinite weights (the first at index {int(np.flatnonzero(~np.isfinite(w))[0])}).")
        return w

    def _converted(self, w):
        refuse_complex(w, "w")
        try:
            kind = np.asarray(w).dtype.kind
        except (TypeError, ValueError) as exc:       # (ragged and the like)
            raise TypeError(f"`w` must be an array of real numbers, got {type(w).__name__} "
                            f"({exc}).") from None
        if kind not in "iuf":
            raise TypeError(f"`w` must be an array of real numbers, got {type(w).__name__} "
                            f"of dtype {np.asarray(w).dtype}.")
        with np.errstate(over="ignore"):    # (beyond float32's range: inf, refused as such)
            w = np.ascontiguousarray(w, dtype=self.dtype)
        if w.shape != self._shape:
            raise ValueError(f"`w` must have shape {self._shape} (the network's connections), "
                             f"got {w.shape}.")
        return w

    def _out(self, out, shape, name="out"):
        if type(out) is not np.ndarray:
            raise TypeError(f"`{name}` must be a numpy.ndarray of shape {shape} and dtype "
                            f"{self.dtype}, got {type(out).__name__}.")
        if out.dtype != self.dtype:
            raise TypeError(f"`{name}` must have dtype {self.dtype}, got {out.dtype} (the "
                            f"network's dtype).")
        if out.shape != shape:
            raise ValueError(f"`{name}` must have shape {shape}, got {out.shape}.")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"`{name}` must be C-contiguous and writeable (np.empty(shape) is).")
        return out

    # ------------------------------------------------------------------ calls
    def _gradient(self, w, g):
        if not self.n_patterns:
            return self._decay_only(w, g)
        if self._limit:
            with single_threaded_blas():
                return _backward.gradient(self._A, self._Y, self._layers, self._n_in, w, g,
                                          self._D, self._Dl, DEFAULT_BLAS_MIN, self._code,
                                          self.weight_decay)
        return _backward.gradient(self._A, self._Y, self._layers, self._n_in, w, g, self._D,
                                  self._Dl, DEFAULT_BLAS_MIN, self._code, self.weight_decay)

    def _decay_only(self, w, g):
        # (no patterns: the objective is the decay term alone, as value_and_grad's)
        if g is not None:
            if self.weight_decay:
                np.multiply(w, 2.0 * self.weight_decay, out=g)
            else:
                g.fill(0.0)
        return self.weight_decay * float(w @ w)

    def __call__(self, w: ArrayLike, out: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """The objective at ``w`` and its gradient.

        Parameters
        ----------
        w : array-like of shape (n_weights,)
            Weights in the order of ``net.weights``.
        out : ndarray of shape (n_weights,), of the network's dtype, optional
            Where to write the gradient (C-contiguous, writeable); a new array if None.

        Returns
        -------
        (value, gradient) : ValueAndGrad
            A tuple: the objective (float) and dE/dw (``out`` if given).

        Raises
        ------
        TypeError, ValueError, FloatingPointError
            For a ``w`` or ``out`` the class's Notes refuse.
        """
        w = self._weights(w)
        g = np.empty(self.n_weights, self.dtype) if out is None else self._out(out, self._shape)
        return _new_pair(ValueAndGrad, (self._gradient(w, g), g))

    def grad(self, w: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """The gradient dE/dw at ``w`` (into ``out`` if given), as :meth:`__call__`'s."""
        return self(w, out)[1]

    def value(self, w: ArrayLike) -> float:
        """The objective at ``w``: a forward pass (no gradient), the value :meth:`__call__`
        returns."""
        w = self._weights(w)
        if not self.n_patterns:
            return self._decay_only(w, None)
        args = (self._A, self._Y, self._layers, self._n_in, w, self._D, self._Dl,
                DEFAULT_BLAS_MIN, self._code, self.weight_decay)
        if self._limit:
            with single_threaded_blas():
                return _backward.objective(*args)
        return _backward.objective(*args)

    def jacobian(self, w: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """The Jacobian of the outputs at ``w``, as :func:`fastnet.jacobian` of a network
        holding ``w``: shape (n_patterns * n_out, n_weights), rows example-major then
        output (into ``out`` if given)."""
        w = self._weights(w)
        shape = (self.n_patterns * self.n_out, self.n_weights)
        J = np.empty(shape, self.dtype) if out is None else self._out(out, shape)
        if not self.n_patterns:
            return J
        if self._V is None:
            self._V = np.empty((self._D.shape[0] * self.n_out, self._D.shape[1]), self.dtype)
        with single_threaded_blas() if self._limit else _NO_LIMIT:
            _jacobian.jacobian(self._A, self._layers, self._n_in, w, J, self._D, self._V,
                               DEFAULT_BLAS_MIN)
        return J

