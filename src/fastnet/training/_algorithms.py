"""Training algorithms as typed objects: each knows its parameters (checked at
construction), its per-trial state and which kernels run it.

An algorithm is what the strip loop trains with; the loop itself (strips,
validation, stopping, results) knows nothing of the rule. A backend asks the
algorithm for a trial's initial state (:meth:`Algorithm.start`) and to train
that trial for some epochs (:meth:`Algorithm.epochs`); rules with a vector-lanes
kernel also give the kernel's arguments (:meth:`RPROP.lanes_args`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from fastnet._kernels import _trials
from fastnet._validation import check_choice, check_float
from fastnet.training import _orders

__all__ = ["Algorithm", "KernelRule", "RPROP", "Backprop", "VARIANTS", "NO_CHECK",
           "counts_itself", "drives_itself", "checks_in_kernel"]

#: RPROP variant names (Igel & Hüsken 2000) and their kernel codes.
VARIANTS = {"rprop+": 0, "rprop-": 1, "irprop-": 2, "irprop+": 3}

#: The kernels' arguments for "no success check": (every, r_c, analog).
NO_CHECK = (0, 0.4, -1.0)


class Algorithm:
    """A training rule: its parameters, its per-trial state, and how an epoch runs.

    Subclass it to train with a rule of your own, written in NumPy: make the
    subclass a frozen dataclass whose fields are the rule's parameters, and give
    it :meth:`step` (and :meth:`init_state` if the rule keeps a state).
    :func:`fastnet.train` then computes, every epoch, the summed squared error
    E (no factor 1/2) and its gradient over the whole training set at the
    epoch's starting weights in fastnet's compiled kernels, calls :meth:`step`
    once, and gives the rule everything it gives its own: Proben1's strips and
    stopping criteria (Prechelt 1994), the relevant epoch's weights, Hamey's
    success check (Hamey 1992), exact traversal counts (one gradient per epoch:
    N·C forward, N·C backward, C update), CPU time, divergence errors and the
    set-up record (:meth:`record`, from the dataclass fields).

    Check the parameters in ``__post_init__`` and raise ValueError or TypeError
    naming them. ``train_error[t]`` is E at the weights epoch t starts from, as
    for every rule.

    Examples
    --------
    Gradient descent with momentum (Rumelhart et al. 1986) in a few lines:

    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> from fastnet import MLP, train
    >>> from fastnet.algorithms import Algorithm
    >>> @dataclass(frozen=True)
    ... class Momentum(Algorithm):
    ...     learning_rate: float = 0.1
    ...     momentum: float = 0.9
    ...
    ...     def init_state(self, weights):
    ...         return np.zeros_like(weights)            # the previous change
    ...
    ...     def step(self, weights, gradient, error, state):
    ...         change = -self.learning_rate * gradient + self.momentum * state
    ...         return weights + change, change
    >>> X = np.array([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
    >>> Y = np.array([[0.], [1.], [1.], [0.]])
    >>> r = train(MLP(2, (2,), 1, output_activation="logistic"), X, Y,
    ...           algorithm=Momentum(), max_epochs=50, init_scale=0.5, seed=0)
    >>> r.epochs, r.setup["algorithm"], r.setup["parameters"]
    (50, 'Momentum', {'learning_rate': 0.1, 'momentum': 0.9})

    The package's own rules run whole strips of epochs in compiled kernels
    instead (they override :meth:`start` and :meth:`epochs`).
    """

    #: The seed draws something for this rule besides the initial weights.
    draws = False
    #: Trials can train side by side in vector lanes (a `KernelRule`'s lanes kernel).
    lanes = False

    @property
    def objectives(self):
        """Whether the rule trains the run's objective (``loss``, ``weight_decay``:
        the workspace's ``objective``), not only the summed squared error: True
        for rules written as :meth:`step` (they get the objective's value and
        gradient); a rule with its own :meth:`epochs` says so itself."""
        return type(self).epochs is Algorithm.epochs

    def init_state(self, weights):
        """A user rule's state before its first epoch.

        Parameters
        ----------
        weights : ndarray of shape (n_connections,)
            The initial weights (a copy).

        Returns
        -------
        state : object
            Anything :meth:`step` takes and returns (default None).
        """
        return None

    def step(self, weights, gradient, error, state):
        """A user rule's epoch: the new weights from the epoch's starting point.

        Parameters
        ----------
        weights : ndarray of shape (n_connections,)
            The weights the epoch starts from (a copy, in the order of ``net.weights``).
        gradient : ndarray of shape (n_connections,)
            dE/dw over the whole training set at ``weights`` (a copy).
        error : float
            E, the summed squared error (no factor 1/2) at ``weights``, or the
            run's objective (``loss``, ``weight_decay`` of :func:`fastnet.train`).
        state : object
            What :meth:`init_state` or the previous :meth:`step` returned.

        Returns
        -------
        (new_weights, new_state)
            ``new_weights`` array-like of shape (n_connections,).
        """
        raise NotImplementedError(f"{type(self).__name__} must define step(self, weights, "
                                  "gradient, error, state) -> (new_weights, new_state).")

    def record(self):
        """(name, parameters) for the set-up record: the class name and the
        dataclass fields by default."""
        if not dataclasses.is_dataclass(self):
            raise TypeError(f"{type(self).__name__} must be a dataclass (its fields are the "
                            "rule's parameters) or define record().")
        return (type(self).__name__,
                {f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def updates_per_epoch(self, n_train, n_connections):
        """Weight-update traversals of one epoch (Prechelt 1994's counting)."""
        return n_connections

    def block_size(self, block_size):
        """Patterns per cache block of the single-network workspace (None: its default)."""
        return block_size

    def start(self, n_connections, rng, max_epochs):
        """One trial's initial state (``rng`` the trial's generator, or None if
        nothing is drawn)."""
        return _UserState()

    def epochs(self, ws, state, sse_out, check):
        """Train ``len(sse_out)`` epochs of one trial in the single-network
        workspace ``ws``; unscaled training SSE into ``sse_out``; returns the
        kernel status (k > 0: non-finite in epoch k; -k: the success check
        ``check`` = (every, r_c, analog) held after epoch k, or the rule stopped
        itself there, :meth:`stop_reason` saying why).

        This default runs :meth:`step` once per epoch on the error and gradient
        at the epoch's starting weights (computed in the kernels).
        """
        w, g = ws.w, ws.g
        if not state.started:
            state.user, state.started = self.init_state(w.copy()), True
        for j in range(sse_out.shape[0]):
            sse_out[j] = error = ws.gradient()
            if not np.isfinite(error):
                return j + 1
            w[:], state.user = _stepped(self.step(w.copy(), g.copy(), float(error),
                                                  state.user), self, w.shape)
        return 0

    def stop_reason(self, state):
        """Why the rule stopped itself (after an epoch status -k), or None.

        The loop ends the trial after that epoch; if it is a strip end, the loop
        measures it first (validation and test errors, best weights) as any
        strip end, at the weights the rule stopped with."""
        return getattr(state, "stop_reason", None)

    def traversals(self, state, n_train, n_connections):
        """(forward, backward, update, flops) the trial has run so far: a rule whose
        cost varies by epoch overrides it and counts its own (see `counts_itself`);
        the others cost one gradient an epoch, counted by the loop."""
        return tuple(state.counts)

    def drive(self, ws, state, next_strip):
        """Train one trial from a loop of the rule's own, in place of :meth:`epochs`
        (a rule that overrides it, such as SciPy's L-BFGS, runs its trials one
        after another; the strip loop's policy is the same).

        ``next_strip()`` gives the first strip's buffer of training SSE (shape
        (n,), unscaled, as ``sse_out`` of :meth:`epochs`); after training it, or
        part of it, ``next_strip(status)`` with the status :meth:`epochs` would
        return runs the loop's strip end (validation, criteria, callback,
        divergence: it raises what the loop raises) and gives the next strip's
        buffer, or None: the trial trains no more, and the rule returns. A rule
        that stopped itself (-k) or diverged (k) calls it once more, which
        returns None or raises.
        """
        raise NotImplementedError


def counts_itself(algorithm):
    """Whether ``algorithm`` counts its own traversals (it overrides `Algorithm.traversals`)."""
    return type(algorithm).traversals is not Algorithm.traversals


def drives_itself(algorithm):
    """Whether ``algorithm`` trains from a loop of its own (it overrides `Algorithm.drive`)."""
    return type(algorithm).drive is not Algorithm.drive


def checks_in_kernel(algorithm):
    """Whether the kernels run Hamey's success check between ``algorithm``'s epochs."""
    return isinstance(algorithm, KernelRule) and algorithm.kernel_check


class KernelRule(Algorithm):
    """A rule whose epochs run in compiled kernels: one Python class that holds and
    checks the parameters, makes a trial's state and hands the kernels their
    arguments; the rule itself is C (``fastnet/_kernels``).

    ``code`` names the rule to the kernels of both layouts: the single network's
    (``fastnet._engine.EPOCH_KERNELS[code]``, given :meth:`kernel_args`) and the
    vector lanes' (given :meth:`lanes_args`; a trial that leaves the lanes takes
    its state from :meth:`lanes_state`).
    """

    lanes = True
    #: An update per pattern (online): the lanes' online kernel trains it.
    per_pattern = False
    #: The kernels run Hamey's success check between epochs themselves.
    kernel_check = True
    #: The most a weight moves in one epoch in the lanes, or None: no bound
    #: (the lanes then watch the weights themselves; see ``_lanes.safe_weight``).
    max_change = None
    objectives = True       # (the kernels train the run's loss and weight decay)

    def kernel_params(self):
        """The rule's parameters as its kernels take them (a tuple of floats)."""
        raise NotImplementedError

    def kernel_args(self, ws, state, n):
        """The arguments of the single-network kernel for ``n`` epochs of the
        trial in ``state`` (see ``fastnet._engine.EPOCH_KERNELS``)."""
        raise NotImplementedError

    def lanes_args(self):
        """The rule's arguments of the vector-lanes kernels: (code, *kernel_params)."""
        return (self.code,) + self.kernel_params()

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs):
        """A trial's state in the single-network kernels from the lanes' three
        arrays (its previous change ``dw_prev`` goes to the workspace)."""
        raise NotImplementedError

    def epochs(self, ws, state, sse_out, check):
        return ws.epochs(self.code, self.kernel_args(ws, state, sse_out.shape[0]), sse_out,
                         NO_CHECK if check is None else check)


def _stepped(returned, algorithm, shape):
    """(new weights, new state) of what ``algorithm.step`` returned, checked."""
    name = type(algorithm).__name__
    if not (isinstance(returned, tuple) and len(returned) == 2):
        raise TypeError(f"{name}.step must return (new_weights, new_state), "
                        f"got {type(returned).__name__}.")
    new = np.asarray(returned[0])
    if new.dtype.kind == "c":                  # (NumPy's cast would drop the imaginary parts)
        raise TypeError(f"{name}.step must return real weights, got dtype {new.dtype}.")
    if new.shape != shape:
        raise ValueError(f"{name}.step must return weights of shape {shape}, got shape "
                         f"{new.shape}.")
    return new, returned[1]


class _UserState:
    """One trial of a user rule: its own state, made at the first epoch."""

    __slots__ = ("user", "started")

    def __init__(self):
        self.user, self.started = None, False


class _RpropState:
    """One trial's RPROP state besides the workspace's previous change ``dw_prev``."""

    __slots__ = ("g_prev", "step", "last_error")

    def __init__(self, g_prev, step, last_error):
        self.g_prev, self.step, self.last_error = g_prev, step, last_error


@dataclass(frozen=True)
class RPROP(KernelRule):
    """Epoch-batched RPROP (Riedmiller & Braun 1993; variants after Igel & Hüsken 2000).

    Parameters
    ----------
    variant : {"rprop+", "rprop-", "irprop-", "irprop+"}, default "rprop+"
    eta_plus, eta_minus : float, defaults 1.2 and 0.5
        Step growth and shrink factors, 0 < eta_minus < 1 < eta_plus.
    delta0 : float or (lo, hi), default 0.1
        Initial step; a range is drawn uniformly per weight from the run's seed.
    delta_min, delta_max : float, defaults 0.0 and 50.0
        Step bounds, 0 <= delta_min <= delta_max.

    Raises
    ------
    ValueError, TypeError
        For an unknown variant or a parameter out of its range (e.g.
        ``eta_minus`` not in (0, 1), ``delta0`` beyond ``delta_max``), naming it.
    """

    variant: str = "rprop+"
    eta_plus: float = 1.2
    eta_minus: float = 0.5
    delta0: float | tuple[float, float] = 0.1
    delta_min: float = 0.0
    delta_max: float = 50.0

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("variant", check_choice(self.variant, "variant", VARIANTS))
        put("eta_plus", check_float(self.eta_plus, "eta_plus", low=1.0, low_open=True))
        put("eta_minus", check_float(self.eta_minus, "eta_minus", low=0.0, high=1.0,
                                     low_open=True, high_open=True))
        delta_min = check_float(self.delta_min, "delta_min", low=0.0)
        delta_max = check_float(self.delta_max, "delta_max", low=0.0)
        if delta_min > delta_max:
            raise ValueError(f"`delta_min` must be <= `delta_max`, got {delta_min} > {delta_max}.")
        put("delta_min", delta_min)
        put("delta_max", delta_max)
        put("delta0", _check_delta0(self.delta0, delta_max))
        put("_args", (VARIANTS[self.variant], self.eta_plus, self.eta_minus, delta_min,
                      delta_max))                 # (not a field: the kernels' arguments)
        put("code", self._args[0])                # (the variant's kernel code, `VARIANTS`)

    @property
    def draws(self):
        return isinstance(self.delta0, tuple)

    @property
    def max_change(self):
        """The most a weight moves in one epoch (delta_max; backtracking undoes a
        change no larger)."""
        return self.delta_max

    def record(self):
        d0 = self.delta0
        return (f"RPROP ({self.variant}), epoch-batched",
                {"eta_plus": self.eta_plus, "eta_minus": self.eta_minus,
                 "delta0": list(d0) if isinstance(d0, tuple) else d0,
                 "delta_min": self.delta_min, "delta_max": self.delta_max})

    def kernel_params(self):
        """(eta_plus, eta_minus, delta_min, delta_max)."""
        return self._args[1:]

    def lanes_args(self):
        """The rule's arguments of the kernels: (variant code, eta_plus, eta_minus,
        delta_min, delta_max)."""
        return self._args

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs):
        """A trial's state in the single-network kernels from the lanes' arrays
        (its previous change ``dw_prev`` goes to the workspace)."""
        return self.state(g_prev, step, last_error)

    def initial_steps(self, rng, shape):
        """Initial steps Delta0 of the given shape, drawn from ``rng`` if ``delta0`` is a range."""
        if isinstance(self.delta0, tuple):
            return rng.uniform(self.delta0[0], self.delta0[1], size=shape)
        steps = np.empty(shape)          # (np.full is a Python-level wrapper of these two)
        steps.fill(self.delta0)
        return steps

    def start(self, n_connections, rng, max_epochs):
        # (the arrays are new: no copies as in `state`)
        return _RpropState(np.zeros(n_connections), self.initial_steps(rng, n_connections),
                           np.array([np.inf]))

    def state(self, g_prev, step, last_error):
        """A trial's state from its previous gradient, steps and last error (copied)."""
        return _RpropState(np.array(g_prev, dtype=float), np.array(step, dtype=float),
                           np.array([last_error], dtype=float))

    def kernel_args(self, ws, state, n):
        return state.g_prev, state.step, state.last_error, self._args


def _check_delta0(delta0, delta_max):
    if isinstance(delta0, (tuple, list, np.ndarray)):
        if len(delta0) != 2:
            raise ValueError(f"`delta0` must be a number or a range (lo, hi), got {delta0!r}.")
        lo = check_float(delta0[0], "delta0[0]", low=0.0, low_open=True)
        hi = check_float(delta0[1], "delta0[1]", low=0.0, low_open=True)
        if lo > hi:
            raise ValueError(f"`delta0` range must have lo <= hi, got {delta0!r}.")
        if hi > delta_max:
            raise ValueError(f"`delta0` must not exceed `delta_max`={delta_max}, got {delta0!r}.")
        return (lo, hi)
    d = check_float(delta0, "delta0", low=0.0, low_open=True)
    if d > delta_max:
        raise ValueError(f"`delta0` must not exceed `delta_max`={delta_max}, got {d}.")
    return d


class _BackpropState:
    """One trial's backpropagation state besides the workspace's previous change:
    its generator of the online orders, its epochs and horizon, and an order
    already drawn for its next epoch (``pending``; a trial the lanes stopped
    within an epoch, see `Backprop.lanes_state`), or None."""

    __slots__ = ("rng", "epoch", "max_epochs", "pending")

    def __init__(self, rng, max_epochs):
        self.rng, self.epoch, self.max_epochs, self.pending = rng, 0, max_epochs, None


@dataclass(frozen=True)
class Backprop(KernelRule):
    """Backpropagation with momentum, batch or online (Rumelhart et al. 1986).

    Parameters
    ----------
    mode : {"batch", "online"}, default "batch"
        One update per epoch, or one per pattern in a fresh random order
        every epoch (drawn from the run's seed).
    learning_rate : float > 0, default 0.01
        The rate on the gradient of the summed squared error *without* a factor
        1/2: a paper whose cost is (1/2) sum e^2 (Lawrence et al. 1997's
        "quadratic cost", after Haykin 1994) and rate eta trains as
        ``learning_rate = eta / 2`` here.
    momentum : float in [0, 1), default 0.0
    decay : bool or {"epoch", "update"}, default False
        Decay the rate linearly towards 0. True (or ``"epoch"``, stored as
        True): per epoch over ``max_epochs``, epoch t = 0, 1, ... at
        learning_rate * (1 - t / max_epochs). ``"update"`` (online only): per
        update over the U = max_epochs * N updates of the run, update u = 0, 1,
        ..., U - 1 at learning_rate * (U - 1 - u) / (U - 1), from the full rate
        at the first update to 0 at the last (Lawrence et al. 1997: "reduced
        linearly to zero over the training period").

    Raises
    ------
    ValueError, TypeError
        For an unknown mode, a rate that is not positive, a momentum outside
        [0, 1), a ``decay`` that is none of those, or ``decay="update"`` with
        batch training (one update per epoch: use True), naming it.
    """

    mode: str = "batch"
    learning_rate: float = 0.01
    momentum: float = 0.0
    decay: bool | str = False

    code = _trials.RULE_BACKPROP

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("mode", check_choice(self.mode, "mode", {"batch", "online"}))
        put("learning_rate", check_float(self.learning_rate, "learning_rate", low=0.0,
                                         low_open=True))
        put("momentum", check_float(self.momentum, "momentum", low=0.0, high=1.0,
                                    high_open=True))
        decay = self.decay
        if isinstance(decay, str):
            check_choice(decay, "decay", {"epoch", "update"})
            if decay == "update" and self.mode != "online":
                raise ValueError("`decay`='update' needs mode='online' (one update per pattern); "
                                 "batch training updates once per epoch: use decay=True, got "
                                 f"mode={self.mode!r}.")
            decay = True if decay == "epoch" else decay
        elif isinstance(decay, (bool, np.bool_)):
            decay = bool(decay)
        else:
            raise TypeError(f"`decay` must be True, False, 'epoch' or 'update', got {decay!r}.")
        put("decay", decay)

    @property
    def draws(self):
        return self.mode == "online"

    @property
    def lanes(self):
        """Batch and online training have vector-lanes kernels (constant or decaying
        rate); online, while the kernels draw NumPy's orders
        (``fastnet.training._orders``)."""
        return self.mode == "batch" or _orders.drawn_in_kernel()

    @property
    def per_pattern(self):
        """Online training: an update per pattern (the lanes' online kernel)."""
        return self.mode == "online"

    @property
    def kernel_check(self):
        """Batch training runs Hamey's success check in the kernels."""
        return self.mode == "batch"

    def kernel_params(self):
        """(learning_rate, momentum, decay): decay 0.0 (none), 1.0 (per epoch) or,
        online, 2.0 (per update)."""
        return (self.learning_rate, self.momentum,
                2.0 if self.decay == "update" else float(bool(self.decay)))

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs, rng=None,
                    pending=None):
        """A trial's state in the single-network kernels after ``epoch`` epochs
        in the lanes (its previous change ``dw_prev`` goes to the workspace);
        online, its generator ``rng`` and the order it drew for its next epoch
        (``pending``, or None: none drawn yet)."""
        state = _BackpropState(rng, max_epochs)
        state.epoch = epoch
        state.pending = None if pending is None else np.array(pending, dtype=np.intp)
        return state

    def record(self):
        return (f"backpropagation ({self.mode}) with momentum",
                {"learning_rate": self.learning_rate, "momentum": self.momentum,
                 "decay": self.decay})

    def updates_per_epoch(self, n_train, n_connections):
        return n_connections * (n_train if self.mode == "online" else 1)

    def block_size(self, block_size):
        return 1 if self.mode == "online" else block_size

    def start(self, n_connections, rng, max_epochs):
        return _BackpropState(rng, max_epochs)

    def kernel_args(self, ws, state, n):
        t = np.arange(state.epoch, state.epoch + n)
        per_update = self.decay == "update"
        if per_update:
            # Linear decay per update: update u of U = max_epochs * N at lr (U-1-u)/(U-1),
            # the last update at 0 (Lawrence et al. 1997).
            N = ws.A.shape[0]
            U = state.max_epochs * N
            u = (t[:, None] * N + np.arange(N)).ravel()
            rates = (self.learning_rate * ((U - 1 - u) / (U - 1)) if U > 1
                     else np.full(u.size, self.learning_rate))
        elif self.decay:
            # Linear decay to 0 at max_epochs: epoch t (0-based) uses lr (1 - t/T).
            rates = self.learning_rate * (1.0 - t / state.max_epochs)
        else:
            rates = np.full(n, self.learning_rate)
        if self.mode == "online":
            N = ws.A.shape[0]
            order = np.empty((n, N), dtype=np.intp)
            first = 0
            if state.pending is not None:       # (drawn in the lanes)
                order[0], state.pending, first = state.pending, None, 1
            for i in range(first, n):
                order[i] = state.rng.permutation(N)
        else:
            order = np.zeros((0, 0), dtype=np.intp)
        state.epoch += n
        return rates, self.momentum, order, per_update
