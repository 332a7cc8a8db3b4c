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
from typing import NamedTuple

import numpy as np
# (SciPy's BLAS wrappers: a dot product that checks no floating-point flags, so an
# overflowing w @ w warns nothing, and faster than np.dot on short vectors)
from scipy.linalg.blas import ddot as _ddot
from scipy.linalg.blas import sdot as _sdot

from fastnet._blas import _NO_LIMIT, calls_blas, single_threaded_blas
from fastnet._engine import DEFAULT_BLAS_MIN, activations, block_rows
from fastnet._kernels import _backward, _jacobian
from fastnet._kernels._simd import simd_level
from fastnet._typing import ArrayLike
from fastnet._validation import check_pair, refuse_complex
from fastnet.network import MLP, kernel_layers
from fastnet.training._checks import LOSSES, check_objective

__all__ = ["Objective", "ValueAndGrad", "blocks", "needs_blas_limit", "SIMD_MIN_ROWS"]

_may_share = np.may_share_memory
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
    non-numeric values (TypeError), with a NaN or infinite weight
    (FloatingPointError), or, for a float32 network, with a weight beyond
    float32's range (magnitude above about 3.4e38, which would round to
    infinity: ValueError); a real array of another dtype or layout is converted.
    ``out`` must be a C-contiguous, writeable array of the network's dtype and
    shape ``(n_weights,)`` (TypeError, ValueError otherwise). ``out`` may be
    ``w`` itself or share memory with it (``obj(w, out=w)``): the call then
    reads a copy of ``w`` and the result is the same as with a separate
    ``out`` (the kernels write the gradient while they still read the weights).

    No silent overflow: finite weights can still be too large for the
    arithmetic (products or squares beyond the largest number of the
    network's dtype: about 1.8e308 in float64, 3.4e38 in float32), which
    makes the value or some gradient (or Jacobian) entries NaN or infinite.
    A call that would return such a result raises FloatingPointError
    instead, saying how many entries overflowed; :func:`fastnet.value_and_grad`
    returns them as they are. Where the result is finite, it equals
    :func:`fastnet.value_and_grad`'s bit for bit.

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

    Threads: an `Objective` keeps its workspaces between calls, and calls that
    run at the same time in several threads never share one: a call takes a
    free workspace, or makes one when every workspace is in use (the data's
    inputs copied, about the memory of ``X`` plus the activations), and
    gives it back when it returns; so one `Objective` may serve a thread
    pool, each result being what a lone call gives, bit for bit. The kernels
    release the GIL, so such calls run in parallel.

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

    With SciPy (``jac=True``: the function returns the value and the gradient),
    its own BLAS calls held at one thread (L-BFGS-B's products on vectors this
    short only lose to thread start-ups; see the guide "Embedding fastnet in other
    tools"):

    >>> from scipy.optimize import minimize
    >>> from threadpoolctl import threadpool_limits
    >>> with threadpool_limits(1):
    ...     res = minimize(obj, net.weights, jac=True, method="L-BFGS-B",
    ...                    options={"maxiter": 200})
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
        self._sq = _sdot if self.dtype == np.float32 else _ddot
        self._big = float(np.finfo(self.dtype).max)
        # (a copy: the kernels write the activations beyond the inputs, and the
        # caller's Y may change)
        self._Y = np.array(Y, dtype=net.dtype, order="C")
        self._topology = net.copy()         # (the layout of the workspaces made later)
        block, smallest = blocks(net, self.n_patterns)
        self._delta_shape = (block, net.n_units - net.n_in)
        A = activations(net, X)
        self._inputs = A[:, :net.n_in]      # (no kernel writes these columns)
        # The workspaces no call holds. A call takes one and gives it back (list.pop
        # and list.append are atomic), so calls running at once in several threads
        # never share one; a call that finds none free makes one.
        self._free = [self._workspace(A)]
        self._limit = needs_blas_limit(net, self.n_patterns, smallest, DEFAULT_BLAS_MIN)

    def __repr__(self):
        return (f"Objective(n_weights={self.n_weights}, n_patterns={self.n_patterns}, "
                f"loss={self.loss!r}, weight_decay={self.weight_decay!r})")

    # ------------------------------------------------------------------ workspaces
    def _workspace(self, A):
        """[activations A, deltas D, Dl, the Jacobian's deltas V (made at its first
        call) or None]: what one call writes."""
        return [A, np.empty(self._delta_shape, self.dtype), np.empty(self._delta_shape, self.dtype),
                None]

    def _take(self):
        """A workspace no other call holds: a free one, else a new one (for a call
        made while every workspace is in use by calls of other threads)."""
        try:
            return self._free.pop()
        except IndexError:
            return self._workspace(activations(self._topology, self._inputs))

    # ------------------------------------------------------------------ checks
    def _weights(self, w):
        """``w`` as the kernels take it, or the named error; the fast path is a type,
        dtype, shape and flag test and one dot product (NaN or inf in w makes it
        non-finite; it is SciPy's BLAS dot, which raises no floating-point warning
        where a finite w's squares overflow)."""
        dtype = self.dtype
        if (type(w) is not np.ndarray or w.dtype is not dtype and w.dtype != dtype
                or w.shape != self._shape or not w.flags.c_contiguous):
            w = self._converted(w)
        if not math.isfinite(self._sq(w, w)) and not np.isfinite(w).all():
            # (a finite w whose squares overflow passes)
            bad = np.flatnonzero(~np.isfinite(w))
            raise FloatingPointError(
                f"`w` must be finite, got {bad.size} NaN or infinite weights (the first at "
                f"index {int(bad[0])}).")
        return w

    def _converted(self, w):
        refuse_complex(w, "w")
        try:
            w = np.asarray(w)
            kind = w.dtype.kind
        except (TypeError, ValueError) as exc:       # (ragged and the like)
            raise TypeError(f"`w` must be an array of real numbers, got {type(w).__name__} "
                            f"({exc}).") from None
        if kind not in "iuf":
            raise TypeError(f"`w` must be an array of real numbers, got {type(w).__name__} "
                            f"of dtype {w.dtype}.")
        if w.shape != self._shape:
            raise ValueError(f"`w` must have shape {self._shape} (the network's connections), "
                             f"got {w.shape}.")
        if kind == "f" and w.dtype.itemsize > self.dtype.itemsize:
            self._refuse_beyond_range(w)
        return np.ascontiguousarray(w, dtype=self.dtype)

    def _refuse_beyond_range(self, w):
        """Refuse finite weights of a wider float that would round to infinity in the
        network's dtype (NaN and inf are left to the finiteness check)."""
        with np.errstate(invalid="ignore"):
            beyond = np.isfinite(w) & (np.abs(w) > self._big)
        if beyond.any():
            where = np.flatnonzero(beyond)
            more = f" (and {where.size - 1} more)" if where.size > 1 else ""
            raise ValueError(
                f"`w` must lie within the {self.dtype} range of the network (magnitude at most "
                f"{self._big:g}; larger {w.dtype} weights overflow {self.dtype}), got "
                f"{w[where[0]]} at index {int(where[0])}{more}.")

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

    def _overflowed(self, what, value=0.0, array=None):
        """Raise FloatingPointError if ``value`` or ``array`` is not finite (a dot
        product tests the array; only a non-finite one is scanned)."""
        if math.isfinite(value) and (array is None or math.isfinite(self._sq(array, array))
                                     or np.isfinite(array).all()):
            return
        parts = [] if math.isfinite(value) else [f"the value is {value}"]
        if array is not None:
            n_bad = array.size - int(np.count_nonzero(np.isfinite(array)))
            if n_bad:
                parts.append(f"{n_bad} of the {array.size} {what} entries are NaN or infinite")
        raise FloatingPointError(
            f"`w` must keep the network's arithmetic within {self.dtype} (magnitudes up to "
            f"{self._big:g}), got weights that are finite but so large that the result "
            f"overflowed: {' and '.join(parts)}. Start from smaller weights or bound the "
            "optimizer's steps" + (", or use a float64 network." if self.dtype == np.float32
                                   else "."))

    # ------------------------------------------------------------------ calls
    def _gradient(self, w, g):
        if not self.n_patterns:
            return self._decay_only(w, g)
        ws = self._take()
        try:
            args = (ws[0], self._Y, self._layers, self._n_in, w, g, ws[1], ws[2],
                    DEFAULT_BLAS_MIN, self._code, self.weight_decay)
            if self._limit:
                with single_threaded_blas():
                    return _backward.gradient(*args)
            return _backward.gradient(*args)
        finally:
            self._free.append(ws)

    def _decay_only(self, w, g):
        # (no patterns: the objective is the decay term alone, as value_and_grad's)
        if g is not None:
            if self.weight_decay:
                np.multiply(w, 2.0 * self.weight_decay, out=g)
            else:
                g.fill(0.0)
        with np.errstate(over="ignore"):       # (an overflow is refused by the caller)
            return self.weight_decay * float(w @ w) if self.weight_decay else 0.0

    def __call__(self, w: ArrayLike, out: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """The objective at ``w`` and its gradient.

        Parameters
        ----------
        w : array-like of shape (n_weights,)
            Weights in the order of ``net.weights``.
        out : ndarray of shape (n_weights,), of the network's dtype, optional
            Where to write the gradient (C-contiguous, writeable); a new array if None.
            It may be ``w`` itself (the call then reads a copy of ``w``).

        Returns
        -------
        (value, gradient) : ValueAndGrad
            A tuple: the objective (float) and dE/dw (``out`` if given).

        Raises
        ------
        TypeError, ValueError
            For a ``w`` or ``out`` the class's Notes refuse.
        FloatingPointError
            If ``w`` holds NaN or infinite weights, or the value or the gradient
            overflowed (NaN or infinite: the class's Notes); ``out`` may then
            hold the partial result.
        """
        w = self._weights(w)
        if out is None:
            g = np.empty(self.n_weights, self.dtype)
        else:
            g = self._out(out, self._shape)
            if _may_share(w, g):
                w = w.copy()
        E = self._gradient(w, g)
        if not math.isfinite(self._sq(g, g) + E):
            self._overflowed("gradient", E, g)
        return _new_pair(ValueAndGrad, (E, g))

    def grad(self, w: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """The gradient dE/dw at ``w`` (into ``out`` if given), as :meth:`__call__`'s."""
        return self(w, out)[1]

    def value(self, w: ArrayLike) -> float:
        """The objective at ``w``: a forward pass (no gradient), the value :meth:`__call__`
        returns (FloatingPointError where it is not finite, as there)."""
        w = self._weights(w)
        if not self.n_patterns:
            E = self._decay_only(w, None)
        else:
            ws = self._take()
            try:
                args = (ws[0], self._Y, self._layers, self._n_in, w, ws[1], ws[2],
                        DEFAULT_BLAS_MIN, self._code, self.weight_decay)
                if self._limit:
                    with single_threaded_blas():
                        E = _backward.objective(*args)
                else:
                    E = _backward.objective(*args)
            finally:
                self._free.append(ws)
        if not math.isfinite(E):
            self._overflowed("value", E)
        return E

    def jacobian(self, w: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """The Jacobian of the outputs at ``w``, as :func:`fastnet.jacobian` of a network
        holding ``w``: shape (n_patterns * n_out, n_weights), rows example-major then
        output (into ``out`` if given; ``out`` may share memory with ``w``).
        FloatingPointError where an entry overflowed (NaN or infinite), as
        :meth:`__call__` raises it."""
        w = self._weights(w)
        shape = (self.n_patterns * self.n_out, self.n_weights)
        if out is None:
            J = np.empty(shape, self.dtype)
        else:
            J = self._out(out, shape)
            if _may_share(w, J):
                w = w.copy()
        if not self.n_patterns:
            return J
        ws = self._take()
        try:
            if ws[3] is None:
                ws[3] = np.empty((self._delta_shape[0] * self.n_out, self._delta_shape[1]),
                                 self.dtype)
            with single_threaded_blas() if self._limit else _NO_LIMIT:
                _jacobian.jacobian(ws[0], self._layers, self._n_in, w, J, ws[1], ws[3],
                                   DEFAULT_BLAS_MIN)
        finally:
            self._free.append(ws)
        flat = J.reshape(-1)
        if not math.isfinite(self._sq(flat, flat)):
            self._overflowed("Jacobian", 0.0, flat)
        return J
