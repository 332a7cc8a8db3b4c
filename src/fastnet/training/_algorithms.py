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

import numpy as np

from fastnet._engine import OnlineArgs, RuleArgs
from fastnet._kernels import _rules
from fastnet._validation import check_choice, check_float
from fastnet.training._registry import Param, rule
from fastnet.training import _orders
from fastnet.training._user_rules import UserState, user_epochs

__all__ = ["Algorithm", "KernelRule", "RPROP", "Backprop", "VARIANTS", "NO_CHECK",
           "counts_itself", "drives_itself", "checks_in_kernel", "has_step_many", "start_trial"]

#: RPROP variant names (Igel & Hüsken 2000) and their rules in the kernels' table.
VARIANT_RULES = {"rprop+": "rprop_plus", "rprop-": "rprop_minus", "irprop-": "irprop_minus",
                 "irprop+": "irprop_plus"}
#: RPROP variant names and their kernel codes.
VARIANTS = {v: _rules.RULES[k].code for v, k in VARIANT_RULES.items()}
#: An array a rule does not keep (the kernels do not touch it), and no mini-batch order.
_NONE = np.zeros(0)
#: That array in each of the networks' dtypes (the kernels take one dtype per call).
_NONES = {np.dtype(np.float64): _NONE, np.dtype(np.float32): np.zeros(0, np.float32)}
_FLOAT64 = np.dtype(np.float64)
_NO_ORDER = np.zeros((0, 0), dtype=np.intp)

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
            The weights the epoch starts from (a copy, in the order of ``net.weights``,
            of the network's dtype: the new weights returned are rounded to it).
        gradient : ndarray of shape (n_connections,)
            dE/dw over the whole training set at ``weights`` (a copy, of the
            network's dtype).
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

    def init_state_many(self, weights):
        """A rule's state over k trials before their first epoch (with :meth:`step_many`).

        Parameters
        ----------
        weights : ndarray of shape (k, n_connections)
            The trials' initial weights, one per row (a copy).

        Returns
        -------
        state : ndarray, tuple of ndarrays, or None
            Each array with the k trials on its first axis (default None).
        """
        return None

    def step_many(self, weights, gradient, error, state):
        """A rule's epoch for k trials in one call (see "Bring your own algorithm").

        :func:`fastnet.train_many`, studies and suites train a rule that defines it all
        trials at once, the gradients from the vector kernels; :meth:`step`, where also
        defined, trains one network, else this with k = 1.

        Parameters
        ----------
        weights, gradient : ndarray of shape (k, n_connections)
            Each trial's starting weights and dE/dw there (copies, the network's dtype).
        error : ndarray of shape (k,)
            Each trial's E, the summed squared error (no factor 1/2), float64.
        state : ndarray, tuple of ndarrays, or None
            These trials' rows of what :meth:`init_state_many` or the last call returned.

        Returns
        -------
        (new_weights, new_state)
            ``new_weights`` of shape (k, n_connections); ``new_state`` as ``state``.
        """
        raise NotImplementedError(f"{type(self).__name__} must define step(self, weights, "
                                  "gradient, error, state) or step_many(self, weights, "
                                  "gradient, error, state).")

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
        return UserState()

    def epochs(self, ws, state, sse_out, check):
        """Train ``len(sse_out)`` epochs of one trial in the single-network
        workspace ``ws``; unscaled training SSE into ``sse_out``; returns the
        kernel status (k > 0: non-finite in epoch k; -k: the success check
        ``check`` = (every, r_c, analog) held after epoch k, or the rule stopped
        itself there, :meth:`stop_reason` saying why).

        This default runs :meth:`step` once per epoch on the error and gradient
        at the epoch's starting weights (computed in the kernels).
        """
        return user_epochs(self, ws, state, sse_out, many=type(self).step is Algorithm.step
                           and has_step_many(self))

    def stop_reason(self, state):
        """Why the rule stopped itself (after an epoch status -k), or None. The loop ends
        the trial after that epoch, measuring it first if it is a strip end."""
        return getattr(state, "stop_reason", None)

    def traversals(self, state, n_train, n_connections):
        """(forward, backward, update, flops) the trial has run so far (a rule whose cost
        varies by epoch counts its own: `counts_itself`)."""
        return tuple(state.counts)

    def drive(self, ws, state, next_strip):
        """Train one trial from a loop of the rule's own, in place of :meth:`epochs` (such
        as SciPy's L-BFGS: its trials train one after another, under the same policy).
        ``next_strip()`` gives the first strip's buffer of training SSE (unscaled, as
        ``sse_out`` of :meth:`epochs`); ``next_strip(status)``, with the status
        :meth:`epochs` would return, runs the loop's strip end (validation, criteria,
        callback, divergence: it raises what the loop raises) and gives the next buffer,
        or None: the trial trains no more. A rule that stopped itself (-k) or diverged
        (k) calls it once more, which returns None or raises."""
        raise NotImplementedError


def counts_itself(algorithm):
    """Whether ``algorithm`` counts its own traversals (it overrides `Algorithm.traversals`)."""
    return type(algorithm).traversals is not Algorithm.traversals


def drives_itself(algorithm):
    """Whether ``algorithm`` trains from a loop of its own (it overrides `Algorithm.drive`)."""
    return type(algorithm).drive is not Algorithm.drive


def has_step_many(algorithm):
    """Whether ``algorithm`` defines `Algorithm.step_many` (a rule over many trials at once)."""
    return type(algorithm).step_many is not Algorithm.step_many


def checks_in_kernel(algorithm):
    """Whether the kernels run Hamey's success check between ``algorithm``'s epochs."""
    return isinstance(algorithm, KernelRule) and algorithm.kernel_check


class KernelRule(Algorithm):
    """A rule whose epochs run in compiled kernels: one Python class that holds and
    checks the parameters, makes a trial's state and hands the kernels their
    arguments; the rule itself is C (``fastnet/_kernels/_rules.h``).

    ``kernel`` names the rule in the kernels' table (``fastnet._kernels._rules.RULES``),
    which gives its code, its parameters (the fields of its record, read from the
    attributes of the same names: :meth:`kernel_values`) and the per-weight arrays
    it keeps. Both layouts train it from that: the single network's epoch loop
    (given :meth:`kernel_args`) and the vector lanes (given :meth:`lanes_args`; a
    trial that leaves the lanes takes its state from :meth:`lanes_state`).
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
    #: The rule's name in the kernels' table.
    kernel = None

    @property
    def code(self):
        """The rule's kernel code (its line in the kernels' table)."""
        return _rules.RULES[self.kernel].code

    def record(self):
        """(TITLE, the parameters by name) for the set-up record."""
        return (self.TITLE, {p.name: getattr(self, p.name) for p in self.PARAMS})

    def kernel_values(self):
        """The rule's parameters by the names of its record's fields."""
        return {f: getattr(self, f) for f in _rules.RULES[self.kernel].fields}

    def kernel_rule(self):
        """The rule's record for the kernels (``fastnet._kernels._rules.Rule``, by name)."""
        rule = self.__dict__.get("_kernel_rule")
        if rule is None:
            rule = _rules.Rule(self.kernel, **{k: float(v) for k, v in self.kernel_values().items()})
            self.__dict__["_kernel_rule"] = rule         # (made once: the object is frozen)
        return rule

    def lanes_args(self):
        """The rule's argument of the vector-lanes kernels: its record."""
        return self.kernel_rule()

    def initial_state_steps(self, rng, n_connections):
        """A trial's initial array ``step`` (zeros; RPROP: its initial steps Delta0)."""
        return np.zeros(n_connections)

    def start(self, n_connections, rng, max_epochs):
        kept = _rules.RULES[self.kernel].states
        return RuleState(np.zeros(n_connections) if "g_prev" in kept else _NONE,
                         self.initial_state_steps(rng, n_connections) if "step" in kept
                         else _NONE,
                         max_epochs, rng)

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs):
        """A trial's state in the single-network kernels after ``epoch`` epochs in
        the lanes, from the lanes' three arrays (those it keeps; its previous
        change ``dw_prev`` goes to the workspace)."""
        kept, none = _rules.RULES[self.kernel].states, _NONES[g_prev.dtype]
        state = RuleState(np.array(g_prev) if "g_prev" in kept else none,
                          np.array(step) if "step" in kept else none,
                          max_epochs, None)
        state.t[0], state.last_error[0] = epoch, last_error
        return state

    def kernel_args(self, ws, state, n):
        """The arguments of the single network's epoch loop for ``n`` epochs of the
        trial in ``state`` (``fastnet._engine.RuleArgs``)."""
        dw_prev = (ws.dw_prev if "dw_prev" in _rules.RULES[self.kernel].states
                   else _NONES[ws.dw_prev.dtype])
        return RuleArgs(self.kernel_rule(), state.g_prev, state.step, dw_prev, state.t,
                        max(1, state.max_epochs or 1), state.last_error, _NO_ORDER, 1)

    def epochs(self, ws, state, sse_out, check):
        return ws.epochs(self.kernel_args(ws, state, sse_out.shape[0]), sse_out,
                         NO_CHECK if check is None else check)


class RuleState:
    """One trial's state of a kernel rule: the per-weight arrays it keeps (``g_prev``,
    ``step``; the previous change ``dw_prev`` is the workspace's), its updates so far
    ``t`` and horizon ``max_epochs`` (a decaying rate, Adam's bias corrections), the
    error of its last update ``last_error`` (irprop+), its generator ``rng`` (rules
    that draw) and an online order drawn already for its next epoch (``pending``; a
    trial the lanes stopped within an epoch, see `Backprop.lanes_state`), or None."""

    __slots__ = ("g_prev", "step", "t", "max_epochs", "last_error", "rng", "pending")

    def __init__(self, g_prev, step, max_epochs, rng):
        self.g_prev, self.step, self.max_epochs, self.rng = g_prev, step, max_epochs, rng
        self.t = np.zeros(1, np.intp)
        self.last_error = np.array([np.inf])
        self.pending = None

    def to_dtype(self, dtype):
        """This state with its per-weight arrays in ``dtype`` (a network's): the steps
        are drawn in float64 and rounded, so one seed draws the same in both dtypes."""
        if self.g_prev.dtype != dtype:
            self.g_prev = self.g_prev.astype(dtype) if self.g_prev.size else _NONES[dtype]
        if self.step.dtype != dtype:
            self.step = self.step.astype(dtype) if self.step.size else _NONES[dtype]
        return self


def start_trial(algorithm, n_connections, rng, max_epochs, dtype):
    """``algorithm.start(n_connections, rng, max_epochs)``: one trial's initial state,
    a kernel rule's per-weight arrays in ``dtype`` (the network's)."""
    state = algorithm.start(n_connections, rng, max_epochs)
    if dtype != _FLOAT64 and isinstance(state, RuleState):     # (rules start in float64)
        state.to_dtype(dtype)
    return state


@rule(*VARIANTS, name_param="variant", kernel="rprop_plus", params=(
    Param("variant", "rprop+", kind=None),
    Param("eta_plus", 1.2, low=1.0, low_open=True),
    Param("eta_minus", 0.5, low=0.0, high=1.0, low_open=True, high_open=True),
    Param("delta0", 0.1, kind=None),
    Param("delta_min", 0.0, low=0.0),
    Param("delta_max", 50.0, low=0.0)))
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

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("variant", check_choice(self.variant, "variant", VARIANTS))
        if self.delta_min > self.delta_max:
            raise ValueError(f"`delta_min` must be <= `delta_max`, got {self.delta_min} > "
                             f"{self.delta_max}.")
        put("delta0", _check_delta0(self.delta0, self.delta_max))
        put("kernel", VARIANT_RULES[self.variant])   # (not a field: the variant's rule)

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

    def initial_steps(self, rng, shape):
        """Initial steps Delta0 of the given shape, drawn from ``rng`` if ``delta0`` is a range."""
        if isinstance(self.delta0, tuple):
            return rng.uniform(self.delta0[0], self.delta0[1], size=shape)
        steps = np.empty(shape)          # (np.full is a Python-level wrapper of these two)
        steps.fill(self.delta0)
        return steps

    def initial_state_steps(self, rng, n_connections):
        return self.initial_steps(rng, n_connections)

    def state(self, g_prev, step, last_error):
        """A trial's state from its previous gradient, steps and last error (copied)."""
        g_prev = np.asarray(g_prev)
        state = RuleState(np.array(g_prev), np.array(step, dtype=g_prev.dtype), None, None)
        state.last_error[0] = last_error
        return state


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


@rule("backprop", kernel="backprop", params=(
    Param("mode", "batch", kind=None),
    Param("learning_rate", 0.01, low=0.0, low_open=True),
    Param("momentum", 0.0, low=0.0, high=1.0, high_open=True),
    Param("decay", False, kind=None)))
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

    def __post_init__(self):
        put = object.__setattr__.__get__(self)
        put("mode", check_choice(self.mode, "mode", {"batch", "online"}))
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

    def kernel_values(self):
        """(learning_rate, momentum, decay): decay 0.0 (none), 1.0 (per epoch) or,
        online, 2.0 (per update)."""
        return {"learning_rate": self.learning_rate, "momentum": self.momentum,
                "decay": 2.0 if self.decay == "update" else float(bool(self.decay))}

    def lanes_state(self, g_prev, dw_prev, step, last_error, epoch, max_epochs, rng=None,
                    pending=None):
        """A trial's state in the single-network kernels after ``epoch`` epochs
        in the lanes (its previous change ``dw_prev`` goes to the workspace);
        online, its generator ``rng`` and the order it drew for its next epoch
        (``pending``, or None: none drawn yet)."""
        none = _NONES[np.asarray(dw_prev).dtype]
        state = RuleState(none, none, max_epochs, rng)
        state.t[0] = epoch
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

    def kernel_args(self, ws, state, n):
        if self.mode == "batch":
            return super().kernel_args(ws, state, n)
        t = np.arange(state.t[0], state.t[0] + n)
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
        N = ws.A.shape[0]
        order = np.empty((n, N), dtype=np.intp)
        first = 0
        if state.pending is not None:           # (drawn in the lanes)
            order[0], state.pending, first = state.pending, None, 1
        for i in range(first, n):
            order[i] = state.rng.permutation(N)
        state.t[0] += n
        return OnlineArgs(rates, self.momentum, order, per_update)
