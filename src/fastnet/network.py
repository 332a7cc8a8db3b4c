"""Feed-forward networks: topology, one flat weight vector, Proben1 notation."""
from __future__ import annotations

import operator

import numpy as np

from collections.abc import Sequence

from fastnet import _engine
from fastnet._typing import ArrayLike, PathLike, Seed
from fastnet._in_training import refuse_writes
from fastnet._netfile import (  # noqa: F401 (the limits are part of this module's API)
    FORMAT_VERSION, MAX_CONNECTIONS, MAX_WEIGHT, _check_weight_range, as_network_weights)
from fastnet._network_init import (  # noqa: F401 (this module's API; trainers take them here)
    DEFAULT_FAN_IN_SCALE, DEFAULT_INIT_SCALE, DEFAULT_INIT_SCALE_LINEAR, INIT_SCHEMES,
    MAX_INIT_SCALE, check_init)
from fastnet import _network_init, _network_io, _network_layout
from fastnet._network_layout import ACTIVATIONS, HIDDEN_ACTIVATIONS
from fastnet._validation import as_generator, check_pair, refuse_complex

__all__ = ["MLP", "ACTIVATIONS", "HIDDEN_ACTIVATIONS", "INIT_SCHEMES", "FORMAT_VERSION",
           "MAX_CONNECTIONS", "MAX_WEIGHT"]


class MLP:
    """A feed-forward network of fully connected layers with bias units.

    Parameters
    ----------
    n_in : int
        Number of inputs.
    hidden : sequence of int, default=()
        Units per hidden layer; ``()`` is a linear network (inputs to outputs).
    n_out : int, default=1
        Number of outputs.
    shortcut : bool, default=True
        If True every layer feeds every later layer (Proben1's "all feed-forward
        connections including shortcut connections"); if False adjacent layers only.
    hidden_activation : {"proben1", "logistic", "tanh", "relu", "linear"}, default "proben1"
        Activation of the hidden units. ``"proben1"`` is ``f(x) = x / (1 + |x|)``;
        ``"relu"`` is ``max(x, 0)``, whose derivative is taken as 0 at ``x = 0``
        (as in PyTorch and scikit-learn).
    output_activation : {"linear", "proben1", "logistic", "tanh", "relu", "softmax"}, default "linear"
        Activation of the output units; ``"softmax"`` gives
        ``exp(x_k) / sum_i exp(x_i)`` over the outputs (class probabilities, for
        ``loss="cross_entropy"``; at least two outputs).
    init_scale : float, optional
        The weights (biases too) are drawn uniformly from [-init_scale,
        init_scale] when the network is built. Default: Proben1's ranges
        (Prechelt 1994), 0.5 with hidden layers and 0.01 for a linear network.
        With ``init="fan_in"`` it is the numerator of each unit's range
        ±init_scale/F (default 2.4); ``init="glorot"`` and ``"he"`` take none.
    init : {"uniform", "fan_in", "glorot", "he"}, default "uniform"
        How the weights are drawn (see :meth:`init_weights`). The default is
        Proben1's one range for every weight. The rule is not part of the
        network: it is not saved with it (:meth:`save` stores the topology and
        the weights, which is all a network needs to be restored exactly).
    seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Source of those weights. One integer reproduces them bit for bit; None
        draws fresh entropy, as scikit-learn's ``random_state=None`` does.
    dtype : {"float64", "float32"} or numpy.float64, numpy.float32, default float64
        The value type of the weights, of training (every algorithm), of
        :meth:`predict` and of the gradients (docs: "float32"). Other data is
        converted once: float64 to a float32 network rounded silently, float32
        to a float64 network widened with a UserWarning (shown once per line
        of the calling code). Weights are drawn in float64 and rounded.

    Attributes
    ----------
    dtype : numpy.dtype
        ``numpy.dtype("float64")`` or ``numpy.dtype("float32")``.
    layer_sizes : tuple of int
        ``(n_in, *hidden, n_out)``.
    n_connections : int
        Number of connections C, biases included.
    weights : ndarray of shape (n_connections,)
        The flat weight vector, of the network's dtype (read-only view; use
        :meth:`set_weights`).

    Notes
    -----
    Layers are numbered 0 (inputs) to L (outputs). Layer j > 0 reads a contiguous
    range of the units before it and owns a row-major block W_j of shape
    (n_j, fan_in_j) in the flat vector, followed by its n_j biases; layers follow
    each other in order. The sources of W_j's columns are the units of layers
    0..j-1 in order (shortcut) or of layer j-1 alone. :meth:`get_params` gives the
    same weights per connected layer pair, independent of this layout.

    Examples
    --------
    >>> from fastnet import MLP
    >>> net = MLP.from_proben1("4+2 l", 9, 2)     # Proben1's cancer pivot
    >>> net.n_connections
    100
    >>> MLP(2, (3,), 4, shortcut=False).n_connections   # (2+1)*3 + (3+1)*4
    25
    >>> MLP(2, (3,), 1, dtype="float32").weights.dtype
    dtype('float32')
    """

    def __init__(self, n_in: int, hidden: Sequence[int] = (), n_out: int = 1, *,
                 shortcut: bool = True, hidden_activation: str = "proben1",
                 output_activation: str = "linear", init_scale: float | None = None,
                 seed: Seed = None, dtype: str | type = np.float64, init: str = "uniform") -> None:
        self._setup(n_in, hidden, n_out, shortcut, hidden_activation, output_activation, dtype)
        init, init_scale = check_init(init, init_scale)
        if init_scale is None and init == "uniform":
            init_scale = DEFAULT_INIT_SCALE if self.hidden else DEFAULT_INIT_SCALE_LINEAR
        self._draw_weights(seed, init_scale, init=init)

    def _setup(self, n_in, hidden, n_out, shortcut, hidden_activation, output_activation,
               dtype=np.float64):
        """Check the topology and lay it out; the weights are left at zero."""
        n_in, hidden, n_out, shortcut, dtype = _network_layout.check_topology(
            n_in, hidden, n_out, shortcut, hidden_activation, output_activation, dtype)
        self.n_in = n_in
        self.hidden = hidden
        self.n_out = n_out
        self.shortcut = shortcut
        self.hidden_activation = hidden_activation
        self.output_activation = output_activation
        self.dtype = dtype
        self._build_layout()
        self._w = np.zeros(self.n_connections, dtype)

    # ----------------------------------------------------------------- layout
    def _build_layout(self):
        self._layers, starts, self.n_connections = _network_layout.layer_table(
            self.layer_sizes, self.shortcut, self.hidden_activation, self.output_activation)
        # (its read-only view, made once: the engine reads it for every workspace)
        self._layer_view = self._layers.view()
        self._layer_view.flags.writeable = False
        self._starts = starts
        self.n_units = int(starts[-1])
        # How predict lays out and cuts a batch (fixed by the topology; kept for its fast path).
        self._stride = _engine.row_stride(self)
        self._block = _engine.block_rows(self)

    @property
    def layer_table(self):
        """The kernels' layer table: intp array (n_layers, 7), read-only.

        Row j-1 describes layer j: first unit column, unit count, source column
        range [lo, hi), offsets of W_j and of the biases in the flat weight vector,
        activation code (see ``fastnet/_kernels/_types.pxd`` and docs/cython.md).
        """
        return self._layer_view

    @property
    def layer_sizes(self):
        return (self.n_in, *self.hidden, self.n_out)

    @property
    def n_layers(self):
        """Number of weight layers L (hidden layers + 1)."""
        return len(self.hidden) + 1

    # ------------------------------------------------------------ Proben1 words
    @classmethod
    def from_proben1(cls, spec: str, n_in: int, n_out: int, *, shortcut: bool = True,
                     init_scale: float | None = None, seed: Seed = None, dtype: str | type = np.float64,
                     init: str = "uniform") -> MLP:
        """Build a network from Proben1 notation such as ``"4+2 l"`` or ``"16+0 s"``.

        Parameters
        ----------
        spec : str
            ``"h1+h2 k"`` with hidden layer sizes h1, h2 (0 = absent) and output
            kind k: ``l`` linear outputs, ``s`` sigmoid outputs (Proben1's
            x/(1+|x|)). ``"0+0 l"`` or ``"linear"`` is a linear network.
        n_in, n_out : int
        shortcut : bool, default=True
            Proben1's networks have all shortcut connections; False gives the
            "no-shortcut" variant with the same hidden sizes.
        init_scale, seed, dtype, init
            As for :class:`MLP`: how the weights are drawn (by default from
            Proben1's ranges) and from which seed.

        Returns
        -------
        MLP

        Raises
        ------
        ValueError
            If ``spec`` is not in Proben1 notation, or names a second hidden layer
            without a first.
        """
        hidden, out = _network_layout.parse_proben1(spec)
        return cls(n_in, hidden, n_out, shortcut=shortcut, hidden_activation="proben1",
                   output_activation=out, init_scale=init_scale, seed=seed, dtype=dtype, init=init)

    @property
    def proben1_spec(self):
        """This network in Proben1 notation (``"4+2 l"``), or None if it has none.

        Proben1 notation covers at most two hidden layers of x/(1+|x|) units and
        linear or x/(1+|x|) outputs.
        """
        return _network_layout.proben1_notation(self.hidden, self.hidden_activation,
                                                self.output_activation)

    def __repr__(self):
        hidden = "+".join(map(str, self.hidden)) if self.hidden else "no"
        conn = "all shortcut connections" if self.shortcut else "adjacent layers only"
        spec = self.proben1_spec
        spec = f" '{spec}'" if spec else ""
        kind = "" if self.dtype == np.float64 else f", {self.dtype}"
        return (f"MLP({self.n_in} inputs, {hidden} hidden ({self.hidden_activation}), "
                f"{self.n_out} {self.output_activation} outputs, {conn}; "
                f"{self.n_connections} connections{spec}{kind})")

    # ---------------------------------------------------------------- weights
    @property
    def weights(self):
        view = self._w.view()
        view.flags.writeable = False
        return view

    def set_weights(self, w: ArrayLike) -> MLP:
        """Replace the flat weight vector (copied).

        Parameters
        ----------
        w : array-like of shape (n_connections,)
            Finite weights with ``|w| <= MAX_WEIGHT`` (1e150), the bound under
            which the weighted sums cannot overflow (see ``MAX_WEIGHT``); a
            float32 network takes them rounded to float32, within float32's
            range (3.4e38).

        Returns
        -------
        self : MLP

        Raises
        ------
        ValueError
            If ``w`` has another shape, or a weight is NaN, infinite or above
            ``MAX_WEIGHT`` in magnitude (or beyond float32's range for a
            float32 network).
        TypeError
            If ``w`` cannot be converted to float64 numbers or is complex.
        TrainingInProgressError
            If the network is being trained (by another thread, or from a training
            callback): the trainer holds the weights and would not take these.
        """
        refuse_writes(self, "set_weights")
        refuse_complex(w, "w")
        try:
            w = np.asarray(w, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"`w` must be an array of numbers, got {type(w).__name__} "
                            f"({exc}).") from None
        if w.shape != (self.n_connections,):
            raise ValueError(f"`w` must have shape ({self.n_connections},), got {w.shape}.")
        self._w[:] = as_network_weights(w, self.dtype, "`w`")
        return self

    def init_weights(self, seed: Seed = None, scale: float | None = None, *,
                     init: str = "uniform") -> MLP:
        """Draw every weight (biases too) by the rule ``init``.

        Parameters
        ----------
        seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
            One integer reproduces the weights bit for bit.
        scale : float, optional
            ``init="uniform"``: the half-width r of the one interval [-r, r]
            (default 0.5; Proben1 uses 0.5 for multilayer and 0.01 for linear
            networks). ``init="fan_in"``: the numerator s of each unit's
            ±s/F (default 2.4). 0 <= scale <= MAX_INIT_SCALE (1e100). Must be
            None for ``"glorot"`` and ``"he"``, whose ranges are fixed.
        init : {"uniform", "fan_in", "glorot", "he"}, default "uniform"
            The rule; with F the fan-in of a unit (its incoming weights, the
            bias not counted) and n the number of units of its layer:

            * ``"uniform"``: every weight and bias in [-scale, scale]
              (Prechelt 1994).
            * ``"fan_in"``: each unit's incoming weights and its bias in
              ±scale/F (Haykin 1994, as Lawrence et al. 1997 use it with
              scale 2.4).
            * ``"glorot"``: weights and biases of a layer in ±sqrt(f/(F + n)),
              f = 2 if the hidden units are logistic, else 6 -- Glorot &
              Bengio (2010) as scikit-learn's ``MLPRegressor``/``MLPClassifier``
              draw them (``_init_coef``: biases from the same range, and the
              factor set by the hidden activation for every layer, outputs
              included; a network without hidden layers goes by its output
              activation).
            * ``"he"``: weights in ±sqrt(6/F) and biases 0 -- He et al.
              (2015) as PyTorch's ``torch.nn.init.kaiming_uniform_`` draws
              them with its defaults (mode "fan_in", gain sqrt(2):
              bound = gain * sqrt(3/F)); He et al. set the biases to 0.

        Returns
        -------
        self : MLP
            This network, its weights redrawn.

        Raises
        ------
        ValueError
            If ``init`` is not one of those, ``scale`` is negative, not finite
            or above ``MAX_INIT_SCALE``, or ``scale`` is given with
            ``"glorot"`` or ``"he"``.
        TrainingInProgressError
            If the network is being trained (by another thread, or from a training
            callback).

        Notes
        -----
        F does not count the bias because the bias is not an input of the unit
        the way the others are: Haykin's rule (and Glorot's and He's) keeps the
        variance of the weighted sum of F inputs of unit variance near a
        fixed value, and the bias's constant input adds the same whatever F is.
        With shortcut connections a unit's sources are all the units of the
        layers before it, so F counts them all: an output of
        ``MLP(5, (7,), 2)`` has F = 5 + 7 = 12 with shortcuts and 7 without.
        All units of a layer share F. Every rule but ``"uniform"`` draws
        ``rng.uniform(-b, b)`` with b the (n_connections,) array of each
        weight's half-width (one call, in :attr:`weights` order), which is
        what :func:`fastnet.training.draw_trials` draws for each trial.

        Examples
        --------
        >>> import numpy as np
        >>> from fastnet import MLP
        >>> net = MLP(5, (7,), 2, shortcut=False, init="fan_in", init_scale=2.4, seed=0)
        >>> W, b = net.get_params()
        >>> bool(np.abs(W[(0, 1)]).max() <= 2.4 / 5), bool(np.abs(W[(1, 2)]).max() <= 2.4 / 7)
        (True, True)
        """
        refuse_writes(self, "init_weights")
        return self._draw_weights(seed, scale, init=init)

    def _draw_weights(self, seed, scale, *, init="uniform"):
        """`init_weights` for fastnet's trainers, which hold the network."""
        init, scale = check_init(init, scale, "scale")
        bound = None if init == "uniform" else self._init_bounds(init, scale)
        _network_init.draw(self._w, as_generator(seed), scale, bound)
        return self

    def _init_bounds(self, init, scale=None):
        """Half-width of each weight's initial range under ``init`` (not
        "uniform"), shape (n_connections,), in :attr:`weights` order."""
        logistic = (self.hidden_activation if self.hidden else self.output_activation) == "logistic"
        return _network_init.init_bounds(self._layers, self.n_connections, init, scale, logistic)

    def connected_pairs(self) -> list[tuple[int, int]]:
        """The connected layer pairs (i, j), i < j, in weight order."""
        L = self.n_layers
        if self.shortcut:
            return [(i, j) for j in range(1, L + 1) for i in range(j)]
        return [(j - 1, j) for j in range(1, L + 1)]

    def get_params(self):
        """Weights per connected layer pair.

        Returns
        -------
        W : dict
            ``W[(i, j)]`` of shape (n_i, n_j): weight from unit a of layer i to
            unit c of layer j is ``W[(i, j)][a, c]``. Layers are numbered 0
            (inputs) to L (outputs).
        b : dict
            ``b[j]`` of shape (n_j,), the biases of layer j = 1..L.
        """
        return _network_layout.params_by_pair(self._w, self._layers, self._starts,
                                              self.layer_sizes, self.connected_pairs())

    def set_params(self, W, b):
        """Set the weights from the dicts returned by :meth:`get_params`.

        Every connected pair and every layer's biases must be present with the
        right shape and real, finite values (at most ``MAX_WEIGHT`` in
        magnitude); extra or missing keys are errors.

        Raises
        ------
        TrainingInProgressError
            If the network is being trained (by another thread, or from a training
            callback).
        """
        refuse_writes(self, "set_params")
        self._w[:] = _network_layout.weights_from_params(
            self._w, W, b, self._layers, self._starts, self.layer_sizes, self.connected_pairs())
        return self

    # -------------------------------------------------------------- evaluate
    def predict(self, X: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """Outputs of the network for the patterns X.

        Parameters
        ----------
        X : array-like of shape (n_patterns, n_in)
            Finite inputs, one pattern per row (a single pattern is
            ``x.reshape(1, -1)``). A C-contiguous array of the network's dtype
            is used as it is; anything else is converted to it (a copy:
            float64 inputs of a float32 network are rounded to float32).
        out : ndarray of shape (n_patterns, n_out), optional
            C-contiguous, writeable array of the network's dtype to write the
            outputs into (it must not share memory with X); by default a new
            array.

        Returns
        -------
        Y : ndarray of shape (n_patterns, n_out)
            Of the network's dtype (float32 in, float32 out for a float32
            network); ``out`` if given.

        Raises
        ------
        ValueError
            If X has another number of columns, is not 2-D, or holds NaN or
            infinite values; if ``out`` has the wrong shape or layout.
        TypeError
            If X does not hold numbers, or ``out`` is not an ndarray of the
            network's dtype.

        Warns
        -----
        RuntimeWarning
            If finite inputs overflow: a net input or output beyond the
            network's range (float64: inputs near 1e308, or huge weights;
            float32: beyond 3.4e38) gives outputs
            of inf or NaN, which are returned as computed, as NumPy does with
            its overflow warning (``warnings.simplefilter("error",
            RuntimeWarning)`` makes it an error). The message counts them.

        Notes
        -----
        The network runs in C with the GIL released: threads predicting with
        one network (or several) run in parallel, one core each. Batches of up
        to 4,096 values of activations (rows x units, e.g. 100 patterns of a
        30-unit network) are propagated in a buffer on the C stack, larger
        ones in blocks of a few hundred patterns: predict allocates only the
        returned array, and nothing with ``out``. BLAS is not called where the
        CPU has fastnet's AVX2 or AVX-512 products, so the process's BLAS
        threads are left alone; on other CPUs large batches run their large
        products in BLAS held at one thread meanwhile.

        Predicting with a network while another thread trains it is allowed
        and memory-safe, but sees the weights of some epoch in progress,
        possibly partly updated; from a training callback, between epochs,
        it sees that epoch's weights.

        The same call gives the same bits on one machine. Rows predicted in
        another batch agree to rounding (about 1e-15 relative), not bit for
        bit: blocks of 8 or more patterns take the vector products, fewer the
        loops, which add in another order.

        Examples
        --------
        >>> import numpy as np
        >>> from fastnet import MLP
        >>> net = MLP(3, (4,), 2, hidden_activation="tanh", seed=0)
        >>> X = np.zeros((5, 3))
        >>> net.predict(X).shape
        (5, 2)
        >>> out = np.empty((5, 2))
        >>> net.predict(X, out=out) is out
        True
        """
        return _engine.predict(self, X, out, self._w, self._layers, self._stride, self._block)

    def sum_squared_error(self, X: ArrayLike, Y: ArrayLike) -> float:
        """Summed squared error sum_p sum_i (o_pi - t_pi)**2 (no factor 1/2)."""
        X, Y = check_pair(X, Y, "X", "Y", self.n_in, self.n_out, allow_empty=True, dtype=self.dtype)
        return _engine.sum_squared_error(self, X, Y, self._w)

    # ------------------------------------------------------------- copy / io
    def copy(self) -> MLP:
        """An independent copy (same topology, weights and dtype)."""
        new = MLP.__new__(MLP)
        new.__dict__.update(self.__dict__)
        new._w = self._w.copy()
        return new

    def astype(self, dtype: str | type) -> MLP:
        """A copy in the value type ``dtype`` ("float64", "float32" or the numpy types):
        the same topology, the weights rounded to nearest (float64 to float32) or
        widened exactly. The same dtype still copies, as ``numpy.ndarray.astype`` does.

        Raises
        ------
        ValueError
            If ``dtype`` is not float64 or float32, or a weight lies beyond float32's
            range (3.4e38) for a float32 copy.

        Examples
        --------
        >>> net32 = MLP(2, (2,), 1, seed=0).astype("float32")
        >>> net32.dtype, net32.astype("float64").dtype
        (dtype('float32'), dtype('float64'))
        """
        dtype = _network_layout.check_dtype(dtype)
        if dtype == self.dtype:
            return self.copy()
        config = dict(self._config(), dtype=dtype)
        weights = as_network_weights(self._w.astype(np.float64), dtype, "the weights")
        return MLP._build(config, weights)

    def __getstate__(self):
        config = self._config()
        return {"format_version": FORMAT_VERSION, "config": config, "weights": self._w.copy(),
                "sha256": _network_io.checksum(config, self._w)}

    def __setstate__(self, state):
        if "_w" in self.__dict__:                       # (restoring into a live network)
            refuse_writes(self, "__setstate__")
        config, weights = _network_io.restored_state(state, FORMAT_VERSION, ACTIVATIONS)
        self.__dict__.update(MLP._build(config, weights).__dict__)

    @classmethod
    def _build(cls, config, weights):
        """A network of a checked ``config`` holding ``weights`` (no random draw)."""
        net = cls.__new__(cls)
        net._setup(**config)
        net._w[:] = weights
        return net

    def _config(self):
        return {"n_in": self.n_in, "hidden": list(self.hidden), "n_out": self.n_out,
                "shortcut": self.shortcut, "hidden_activation": self.hidden_activation,
                "output_activation": self.output_activation,
                "dtype": _network_layout.DTYPE_NAMES[self.dtype]}

    def save(self, path: PathLike) -> None:
        """Save to an ``.npz`` file that :meth:`load` restores exactly.

        The file holds ``format_version`` (int), ``config`` (JSON text of the
        constructor arguments, the dtype among them: ``"float64"`` or
        ``"float32"``) and ``weights`` (the flat vector, of that dtype). It is
        written to a temporary file and renamed, so it is never half-written.
        Files written before float32 networks existed have no ``dtype``: they
        load as float64 networks.
        """
        _network_io.save(path, FORMAT_VERSION, self._config(), self._w)

    @classmethod
    def load(cls, path: PathLike) -> MLP:
        """Load a network written by :meth:`save`.

        Everything is checked before it is allocated: the zip entries' declared
        sizes and compression, every array's header (dtype and shape) before its
        data, the integer format version, the configuration (at most 64 KiB of
        JSON; keys, types, at most ``MAX_CONNECTIONS`` connections) and that
        the weights' shape is the one the configuration implies. Reading a
        crafted file allocates at most about the size of a valid network's file.
        The network has the dtype the file records (float64 if it records none).

        Raises
        ------
        ValueError
            If the path is not a regular file (a FIFO is refused at once, not waited
            on), or the file is not a fastnet network file, is truncated or corrupt,
            has another format version, an unknown, ill-typed or too large
            configuration, or weights that do not fit it.
        """
        return _network_io.read_network(path, cls._build, ACTIVATIONS)

    def __eq__(self, other):
        if not isinstance(other, MLP):
            return NotImplemented
        return self._config() == other._config() and np.array_equal(self._w, other._w)

    __hash__ = None


# ------------------------------------------------------------ internal interface
# How fastnet's own modules reach a network's buffers (the public forms are the
# read-only MLP.weights and MLP.layer_table); nothing else reads an MLP's private
# attributes from outside this module. (C-level getters and the methods themselves:
# a study hands thousands of networks through these, a Python function costs 60 ns.)

#: ``weight_buffer(net)``: ``net``'s own weight vector, writable: trainers update
#: it in place (a run trains the network it is given).
weight_buffer = operator.attrgetter("_w")
#: ``kernel_layers(net)``: ``net``'s layer table as the kernels take it, the object
#: itself, shared by ``net.copy()`` (one topology; read-only by convention).
kernel_layers = operator.attrgetter("_layers")
#: ``draw_weights(net, rng, scale, init="uniform")``: draw ``net``'s initial weights
#: as :meth:`MLP.init_weights` does, from ``rng`` (or a seed), in place; returns ``net``.
draw_weights = MLP._draw_weights
#: ``init_bounds(net, init, scale=None)``: half-width of each weight's initial range
#: under ``init`` (not "uniform"), shape (n_connections,), in :attr:`MLP.weights` order.
init_bounds = MLP._init_bounds


def outputs_at(net, X, w):
    """Outputs of ``net``'s topology with the weights ``w`` (not its own) for ``X``."""
    return _engine.predict(net, X, None, w, net._layers, net._stride, net._block, warn=False)


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
