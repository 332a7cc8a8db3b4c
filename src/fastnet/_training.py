"""The epoch loop shared by train_rprop and train_backprop.

Python decides (strips, stopping, bookkeeping); the kernels compute whole
strips of epochs per call.
"""
import copy
import math
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from fastnet._provenance import build_flags, machine_description
from fastnet._version import __version__
from fastnet._blas import single_threaded_blas
from fastnet._engine import DEFAULT_BLAS_MIN, Evaluator
from fastnet._validation import as_generator, check_int, check_pair
from fastnet.exceptions import DivergenceError, NoConvergenceWarning, TrainingInProgressError
from fastnet.measures import (_check_analog, _winner_takes_all_error, is_one_hot,
                              threshold_correct)
from fastnet.network import MLP
from fastnet.stopping import Correct, StoppingCriterion, TrainingState, generalization_loss

# Without strips (no validation, no criterion, no callback) the kernel still
# returns to Python every this many epochs, so Ctrl-C stays responsive.
MAX_EPOCHS_PER_CALL = 1000


@dataclass(frozen=True)
class Traversals:
    """Connection traversals of a training run, counted as in Proben1 (Prechelt 1994).

    With C connections (biases included) and N training patterns, an epoch costs
    N·C forward and N·C backward traversals and C weight-update traversals (N·C
    for online training, which updates after every pattern). Evaluating M
    patterns costs M·C forward traversals, counted in ``evaluation``. All counts
    are exact integers from the topology.

    Attributes
    ----------
    forward, backward, update, evaluation : int
    """

    forward: int
    backward: int
    update: int
    evaluation: int

    @property
    def training(self):
        """forward + backward + update."""
        return self.forward + self.backward + self.update

    @property
    def total(self):
        """All traversals, evaluation included."""
        return self.training + self.evaluation

    def to_dict(self):
        return {"forward": self.forward, "backward": self.backward, "update": self.update,
                "evaluation": self.evaluation, "total": self.total}


@dataclass(frozen=True)
class SetErrors:
    """Errors of one network on one data set.

    Attributes
    ----------
    squared_error_percentage : float
        Proben1's E (Prechelt 1994).
    classification_error : float or None
        Percent wrong by winner-takes-all, or None for approximation tasks.
    n_patterns : int
    """

    squared_error_percentage: float
    classification_error: float | None = None
    n_patterns: int = 0


@dataclass(frozen=True)
class TrainResult:
    """Outcome of one training run (fields as in Proben1's tables).

    Attributes
    ----------
    net : MLP
        The trained network (the object passed in, trained in place). With a
        validation set it holds the weights of the relevant epoch.
    epochs : int
        Total epochs trained.
    stop_reason : str
        The criterion that fired (e.g. ``"GL5"``, ``"P<0.1"``), ``"max_epochs"``
        or ``"callback"``.
    train_error : ndarray of shape (epochs,)
        E_tr(t): squared error percentage of the training set in epoch t,
        measured in that epoch's forward pass, i.e. *before* its update.
    val_error, val_epochs : ndarray or None
        E_va at the strip ends ``val_epochs`` (after those epochs' updates); None
        without a validation set.
    test_error : ndarray or None
        E_te at the strip ends, for plots only (never used by a criterion); None
        without a test set.
    relevant_epoch : int
        Epoch of the lowest validation error (Proben1's word); the last epoch when
        there is no validation set.
    min_train_error : float
        Minimum E_tr over all epochs.
    min_val_error : float or None
        Minimum E_va; None without a validation set.
    gl_end : float or None
        GL at the last strip end; None without a validation set.
    final_train : SetErrors
        Errors of the returned network (the relevant epoch's weights) on the
        training set, computed after the clock stopped and not counted in
        ``traversals``.
    final_val, final_test : SetErrors or None
        The same on the validation and test sets; None without them.
    traversals : Traversals
    cpu_time : float
        Process CPU seconds of the training loop (validation included).
    wall_time : float
        Wall-clock seconds of the same loop.
    setup : dict
        The complete set-up (algorithm, parameters, stopping rule, network, data
        sizes, version, machine) for result files.
    """

    net: MLP
    epochs: int
    stop_reason: str
    train_error: np.ndarray
    val_error: np.ndarray | None
    val_epochs: np.ndarray | None
    test_error: np.ndarray | None
    relevant_epoch: int
    min_train_error: float
    min_val_error: float | None
    gl_end: float | None
    final_train: SetErrors
    final_val: SetErrors | None
    final_test: SetErrors | None
    traversals: Traversals
    cpu_time: float
    wall_time: float
    setup: dict = field(repr=False)

    def __repr__(self):
        # The histories are arrays of thousands of values: the repr names their
        # lengths and gives the numbers one reads first.
        def errors(s):
            if s is None:
                return "None"
            c = "" if s.classification_error is None else f" ({s.classification_error:.4g} % wrong)"
            return f"{s.squared_error_percentage:.4g}{c}"

        # E_tr, E_va, E_te: Proben1's squared error percentages of the final network.
        return (f"TrainResult(epochs={self.epochs}, stop_reason={self.stop_reason!r}, "
                f"relevant_epoch={self.relevant_epoch}, E_tr={errors(self.final_train)}, "
                f"E_va={errors(self.final_val)}, E_te={errors(self.final_test)}, "
                f"cpu_time={self.cpu_time:.3g} s, traversals={self.traversals.total}, "
                f"history: {self.train_error.size} training errors"
                + ("" if self.val_error is None else f", {self.val_error.size} validation errors")
                + f"; net={self.net!r})")

    def traversals_per_cpu_second(self):
        """Total traversals divided by CPU seconds (inf if the time is 0)."""
        return self.traversals.total / self.cpu_time if self.cpu_time > 0 else float("inf")

    def describe_setup(self):
        """The set-up in Proben1 words (the checklist of Prechelt 1994), one item per line."""
        s = self.setup
        net = s["network"]
        lines = [
            f"network: {net['repr']}",
            f"  nodes: {net['layer_sizes']}, connections: {net['n_connections']} (biases included), "
            f"hidden activation {net['hidden_activation']}, output activation {net['output_activation']}",
            f"initialisation: {s['initialisation']}",
            f"algorithm: {s['algorithm']} " + ", ".join(f"{k}={v}" for k, v in s["parameters"].items()),
            f"stopping: {s['stopping']}, strip length {s['strip']}, max_epochs {s['max_epochs']}; "
            "the reported network is the one with the lowest validation error"
            if s["n_val"] else f"stopping: {s['stopping']}, max_epochs {s['max_epochs']}",
            f"error function: summed squared error (no 1/2); reported as squared error percentage "
            f"with o_min={s['target_range'][0]}, o_max={s['target_range'][1]}",
            f"data: {s['n_train']} training, {s['n_val']} validation, {s['n_test']} test patterns",
            f"seed: {s['seed']}",
            f"software: fastnet {s['version']}; machine: {s['machine']}",
            "build: " + " ".join(map(str, s["build"].get("extra_compile_args", []))) + "; "
            f"cache block {s['block_size']} patterns",
        ]
        return "\n".join(lines)


def check_target_range(target_range):
    """(o_min, o_max) as floats with a finite, positive width o_max - o_min."""
    try:
        o_min, o_max = (float(v) for v in target_range)
    except OverflowError:  # an int beyond float's range
        raise ValueError("`target_range` must be finite with 0 < o_max - o_min < inf, got an "
                         "integer beyond float range.") from None
    except (TypeError, ValueError):
        raise TypeError(f"`target_range` must be a pair of numbers (o_min, o_max), got "
                        f"{target_range!r}.") from None
    width = o_max - o_min
    if not (np.isfinite(o_min) and np.isfinite(o_max) and np.isfinite(width) and width > 0):
        raise ValueError(f"`target_range` must be finite with 0 < o_max - o_min < inf, got "
                         f"{target_range!r}, whose width o_max - o_min is {width}.")
    return o_min, o_max


def check_start(net, seed, drawn):
    """Refuse a run that would silently ignore ``seed`` or start from all zeros.

    ``drawn`` says whether the trainer draws anything from ``seed`` (initial
    weights with ``init_scale``, RPROP's per-weight initial steps, online
    backpropagation's presentation order).
    """
    if seed is not None and not drawn:
        as_generator(seed)   # a malformed seed is named as such first
        raise ValueError(
            "`seed` would have no effect: the network's own weights are used (no "
            "`init_scale`) and nothing else is drawn. Pass `init_scale` to re-initialise "
            "the weights from `seed`, or give the seed when building the network "
            "(MLP(..., seed=...)) and drop it here.")
    if net.hidden and not net.weights.any():
        raise ValueError(
            "`net` has all weights zero: its hidden units cannot break symmetry and it would "
            "not learn. Pass `init_scale` (with a `seed`), or call net.init_weights(seed).")


def check_common(net, X, Y, X_val, Y_val, X_test, Y_test, max_epochs, strip, stop,
                 target_range, callback, block_size, blas_min):
    """Validate the arguments every trainer shares; return them coerced."""
    if not isinstance(net, MLP):
        raise TypeError(f"`net` must be a fastnet.MLP, got {type(net).__name__}.")
    X, Y = check_pair(X, Y, "X", "Y", net.n_in, net.n_out)
    if (X_val is None) != (Y_val is None):
        raise ValueError("give both `X_val` and `Y_val`, or neither.")
    if (X_test is None) != (Y_test is None):
        raise ValueError("give both `X_test` and `Y_test`, or neither.")
    if X_val is not None:
        X_val, Y_val = check_pair(X_val, Y_val, "X_val", "Y_val", net.n_in, net.n_out)
    if X_test is not None:
        X_test, Y_test = check_pair(X_test, Y_test, "X_test", "Y_test", net.n_in, net.n_out)
    max_epochs = check_int(max_epochs, "max_epochs", minimum=1)
    strip = check_int(strip, "strip", minimum=1)
    if stop is not None and not isinstance(stop, StoppingCriterion):
        raise TypeError(f"`stop` must be a fastnet.stopping criterion or None, got {stop!r}.")
    if stop is not None and stop.needs_validation and X_val is None:
        raise ValueError(f"stopping criterion {stop.name} needs a validation set; pass `X_val`, `Y_val`.")
    o_min, o_max = check_target_range(target_range)
    if callback is not None and not callable(callback):
        raise TypeError(f"`callback` must be callable or None, got {callback!r}.")
    if block_size is not None:
        block_size = check_int(block_size, "block_size", minimum=1)
    # (the kernels take a C ssize_t: any larger value would only mean "never BLAS")
    blas_min = (DEFAULT_BLAS_MIN if blas_min is None
                else check_int(blas_min, "blas_min", minimum=0, maximum=sys.maxsize))
    return (X, Y, X_val, Y_val, X_test, Y_test, max_epochs, strip, (o_min, o_max), block_size,
            blas_min)


# The trainings under way: their training_of -> (thread identity, ids of its networks).
_IN_TRAINING = {}
_IN_TRAINING_GUARD = threading.Lock()


class training_of:                                       # noqa: N801 (used as a function)
    """``with training_of(nets, name):`` holds ``nets`` (a list of MLP, the argument
    ``name``) as being trained by this thread until the block ends, and refuses a
    network that another thread is training (TrainingInProgressError). The same
    thread may nest (the serial method of train_rprop_many calls train_rprop). A
    check per call, in C-level set operations for the thousands of networks of a
    timing study (a class, not a generator: a few microseconds per call)."""

    __slots__ = ("nets", "name")

    def __init__(self, nets, name):
        self.nets, self.name = nets, name

    def __enter__(self):
        me, ids = threading.get_ident(), frozenset(map(id, self.nets))
        with _IN_TRAINING_GUARD:
            for owner, held in _IN_TRAINING.values():
                if owner != me and not ids.isdisjoint(held):
                    i = next(i for i, net in enumerate(self.nets) if id(net) in held)
                    which = f"`{self.name}[{i}]`" if self.name == "nets" else f"`{self.name}`"
                    raise TrainingInProgressError(
                        f"{which} is being trained by another thread; one network takes one "
                        "trainer at a time. Train a copy (net.copy()) or wait for that "
                        "training to return.")
            _IN_TRAINING[self] = (me, ids)

    def __exit__(self, *exc):
        with _IN_TRAINING_GUARD:
            del _IN_TRAINING[self]


# Per thread: a list while late runs are collected instead of warned about (below).
_LATE = threading.local()


@contextmanager
def late_runs():
    """Within the block, runs of this thread that reach max_epochs before their
    criterion append True to the yielded list instead of warning (for one
    summary warning per batch; thread-safe, unlike warnings.catch_warnings)."""
    outer = getattr(_LATE, "runs", None)
    _LATE.runs = []
    try:
        yield _LATE.runs
    finally:
        _LATE.runs = outer


def run_training(net, stepper, ws, **kwargs):
    """Train with ``stepper`` in strips; track validation, stop, restore the best weights.

    ``stepper.run(sse_out)`` trains len(sse_out) epochs and returns a kernel status;
    ``stepper.updates_per_epoch`` is the update traversal count of one epoch.
    BLAS is held at one thread meanwhile (see fastnet._blas).
    """
    with single_threaded_blas():
        return _run_training(net, stepper, ws, **kwargs)


def diverged(epoch, what="the training error", trial=None):
    """The DivergenceError of a run that produced non-finite ``what`` by ``epoch``."""
    who = "" if trial is None else f" of trial {trial} (nets[{trial}])"
    return DivergenceError(
        f"{what}{who} became non-finite in epoch {epoch}: training diverged. Lower the "
        "learning rate (backpropagation), delta_max or init_scale (RPROP), or scale the data.",
        epoch, trial)


#: Divergence by growth: a run whose training error E_tr(t) exceeds
#: DIVERGENCE_GROWTH * max(E_tr(1), DIVERGENCE_FLOOR) raises DivergenceError, as
#: one whose errors become non-finite does. Outputs that stay within the target
#: range keep E below 100 % (400 % for tanh outputs), so only unbounded
#: (linear) outputs running away reach it: batch backpropagation on cancer1
#: with learning rate 0.01 and momentum 0.9 grows from 58 % to 1e24 % and
#: would otherwise stop at a normal-looking GL2. The floor (in percent) keeps a
#: start that is already nearly perfect from tripping on a small rise.
DIVERGENCE_GROWTH = 1e6
DIVERGENCE_FLOOR = 1.0


def growth_limit(first_error):
    """The training error beyond which a run that started at ``first_error`` (a
    number or an array by trial) diverged."""
    if np.ndim(first_error):
        return DIVERGENCE_GROWTH * np.maximum(first_error, DIVERGENCE_FLOOR)
    return DIVERGENCE_GROWTH * max(float(first_error), DIVERGENCE_FLOOR)


def grew(epoch, first, error, trial=None):
    """The DivergenceError of a run whose training error grew from ``first`` to
    ``error`` by ``epoch`` (see DIVERGENCE_GROWTH)."""
    who = "" if trial is None else f" of trial {trial} (nets[{trial}])"
    return DivergenceError(
        f"the training error{who} grew from {first:.4g} % in epoch 1 to {error:.4g} % in "
        f"epoch {epoch}, more than {DIVERGENCE_GROWTH:g} times max(E_tr(1), "
        f"{DIVERGENCE_FLOOR:g} %): training diverged. Lower the learning rate "
        "(backpropagation), delta_max or init_scale (RPROP), or scale the data.",
        epoch, trial)


def check_growth(errors, first_epoch, limit, first, trial=None):
    """Raise `grew` if an error of ``errors`` (epochs first_epoch, first_epoch + 1,
    ...) exceeds ``limit`` (one vectorised pass per call of the kernel)."""
    if errors.size and errors.max() > limit:
        j = int(np.argmax(errors > limit))
        raise grew(first_epoch + j, first, float(errors[j]), trial)


def check_growth_rows(rows, done, limits, first_epoch, firsts, trials):
    """`check_growth` for many trials: row k of ``rows`` holds trial ``trials[k]``'s
    errors from epoch ``first_epoch`` (or ``first_epoch[k]``) on, its first
    ``done[k]`` meaningful; ``limits`` and ``firsts`` by trial.
    The first trial (in row order) that grew too much is named."""
    over = (rows > limits[trials, None]) & (np.arange(rows.shape[1]) < done[:, None])
    if over.any():
        k, j = divmod(int(np.argmax(over)), rows.shape[1])
        i = int(trials[k])
        e0 = int(first_epoch[k]) if np.ndim(first_epoch) else first_epoch
        raise grew(e0 + j, float(firsts[i]), float(rows[k, j]), i)


def _room(history, needed, limit):
    """``history`` with room for ``needed`` epochs (doubled, at most ``limit``)."""
    if needed <= history.shape[0]:
        return history
    grown = np.empty(min(limit, max(needed, 2 * history.shape[0])))
    grown[:history.shape[0]] = history
    return grown


def _run_training(net, stepper, ws, *, X_val, Y_val, X_test, Y_test, max_epochs, strip, stop,
                  target_range, callback, classification, setup):
    N, C = ws.A.shape[0], net.n_connections
    scale = 100.0 * (target_range[1] - target_range[0]) / (N * net.n_out)
    val = Evaluator(net, X_val, Y_val, ws.blas_min) if X_val is not None else None
    test = Evaluator(net, X_test, Y_test, ws.blas_min) if X_test is not None else None
    val_scale = 100.0 * (target_range[1] - target_range[0]) / (val.n * net.n_out) if val else 0.0
    test_scale = 100.0 * (target_range[1] - target_range[0]) / (test.n * net.n_out) if test else 0.0
    criterion = copy.deepcopy(stop) if stop is not None else None
    if criterion is not None:
        criterion.reset()
    in_strips = (val is not None or test is not None or criterion is not None
                 or callback is not None)
    step = strip if in_strips else MAX_EPOCHS_PER_CALL

    # The history grows as epochs run (doubling), never preallocated by max_epochs.
    train_err = np.empty(min(max_epochs, 1024))
    val_err, val_epochs, test_err = [], [], []
    best_w, best_val, best_epoch = None, np.inf, None
    evaluation = 0
    epoch = 0
    stop_reason = "max_epochs"
    fired_criterion = False

    correct_masks = {}

    def is_correct(r_c, analog):
        # Hamey's success check, run every strip (often every epoch): the target
        # masks are built (and the arguments checked) once per run.
        nonlocal evaluation
        evaluation += N * C
        outputs = ws.forward()
        if not np.isfinite(outputs).all():
            raise diverged(epoch, "the network's outputs")
        if (r_c, analog) not in correct_masks:
            threshold_correct(outputs, ws.Y, r_c=r_c, analog=analog)  # validates
            one, zero = ws.Y == 1.0, ws.Y == 0.0
            other = ~(one | zero)
            correct_masks[(r_c, analog)] = (one, zero, other if other.any() else None)
        one, zero, other = correct_masks[(r_c, analog)]
        if not (np.all(outputs[one] > 1.0 - r_c) and np.all(outputs[zero] < r_c)):
            return False
        return other is None or bool(np.all(np.abs(outputs[other] - ws.Y[other]) <= analog))

    # Hamey-style runs (stop=Correct() alone, nothing else measured per strip) let
    # the kernel run the success check itself: the same check on the same weights
    # (a forward pass over the training set in blocks of ws.check_block rows,
    # the threshold rule of threshold_correct) without a return to Python per strip
    # (XOR 2-2-1 with strip=1: 9.1 -> 0.84 us per epoch). Results are bit for bit those
    # of the general loop below.
    kernel_check = (type(criterion) is Correct and val is None and test is None
                    and callback is None and getattr(stepper, "supports_success_check", False))
    if kernel_check:
        analog = _check_analog((ws.Y == 0.0) | (ws.Y == 1.0), criterion.analog)
        check = (strip, criterion.r_c, analog)
        step = strip * max(1, MAX_EPOCHS_PER_CALL // strip)

    cpu0, wall0 = time.process_time(), time.perf_counter()
    while kernel_check and epoch < max_epochs:
        n = min(step, max_epochs - epoch)
        train_err = _room(train_err, epoch + n, max_epochs)
        sse = train_err[epoch:epoch + n]
        status = stepper.run(sse, check)
        if status > 0:
            raise diverged(epoch + status)
        done = -status if status < 0 else n
        sse[:done] *= scale
        if epoch == 0:
            limit = growth_limit(sse[0])
        check_growth(sse[:done], epoch + 1, limit, train_err[0])
        evaluation += (done // strip) * N * C
        epoch += done
        if status < 0:
            stop_reason = criterion.name
            fired_criterion = True
            break
    while not kernel_check and epoch < max_epochs:
        n = min(step - epoch % step, max_epochs - epoch)
        train_err = _room(train_err, epoch + n, max_epochs)
        sse = train_err[epoch:epoch + n]
        status = stepper.run(sse)
        if status:
            raise diverged(epoch + status)
        sse *= scale
        if epoch == 0:
            limit = growth_limit(sse[0])
        check_growth(sse, epoch + 1, limit, train_err[0])
        epoch += n
        if not in_strips:
            continue
        at_strip_end = epoch % strip == 0
        if val is not None and at_strip_end:
            e_va = val.sse() * val_scale
            if not math.isfinite(e_va):
                raise diverged(epoch, "the validation error")
            evaluation += val.n * C
            val_err.append(e_va)
            val_epochs.append(epoch)
            if e_va < best_val:
                best_val, best_epoch, best_w = e_va, epoch, ws.w.copy()
        if test is not None and at_strip_end:
            test_err.append(test.sse() * test_scale)
            if not math.isfinite(test_err[-1]):
                raise diverged(epoch, "the test error")
            evaluation += test.n * C
        state = TrainingState(
            epoch=epoch, strip=strip, train_errors=train_err[:epoch],
            val_errors=np.asarray(val_err) if val is not None else None,
            val_epochs=np.asarray(val_epochs) if val is not None else None,
            test_errors=np.asarray(test_err) if test is not None else None,
            best_epoch=best_epoch, is_correct=is_correct)
        if criterion is not None and at_strip_end and criterion.update(state):
            stop_reason = criterion.fired or criterion.name
            fired_criterion = True
        # The callback sees every strip end, the last one included.
        if callback is not None and callback(epoch, state) and not fired_criterion:
            stop_reason = "callback"
            break
        if fired_criterion:
            break
    cpu_time = time.process_time() - cpu0
    wall_time = time.perf_counter() - wall0
    if not np.isfinite(ws.w).all():
        raise diverged(epoch, "the weights")

    if criterion is not None and not fired_criterion and stop_reason == "max_epochs":
        if getattr(_LATE, "runs", None) is not None:   # (collected for one summary)
            _LATE.runs.append(True)
        else:
            warnings.warn(f"training reached max_epochs={max_epochs} before the stopping "
                          f"criterion {criterion.name} held.", NoConvergenceWarning, stacklevel=3)
    train_err = train_err[:epoch]
    if best_w is not None:
        ws.w[:] = best_w
        relevant = best_epoch
    else:
        relevant = epoch

    def final(evaluator):
        # The evaluator's buffer already holds the set: one forward pass in place
        # gives the outputs and the SSE (no re-validation or copy of the data).
        if evaluator is None:
            return None
        Y = evaluator.Y
        e = 100.0 * (target_range[1] - target_range[0]) / Y.size * evaluator.sse()
        if not math.isfinite(e):
            # finite weights can still overflow in the forward pass (inf - inf)
            raise diverged(epoch, "the error of the trained network")
        if e > limit and evaluator.A is ws.A:   # the training set: the last update ran away
            raise grew(relevant + 1, train_err[0], e)
        cls = _winner_takes_all_error(evaluator.outputs(), Y) if classification else None
        return SetErrors(e, cls, Y.shape[0])

    gl_end = generalization_loss(val_err[-1], min(val_err)) if val_err else None
    n_updates = stepper.updates_per_epoch
    return TrainResult(
        net=net, epochs=epoch, stop_reason=stop_reason, train_error=train_err,
        val_error=np.asarray(val_err) if val is not None else None,
        val_epochs=np.asarray(val_epochs, dtype=np.intp) if val is not None else None,
        test_error=np.asarray(test_err) if test is not None else None,
        relevant_epoch=int(relevant),
        min_train_error=float(train_err.min()),
        min_val_error=float(min(val_err)) if val_err else None,
        gl_end=gl_end,
        final_train=final(ws.evaluator()),
        final_val=final(val),
        final_test=final(test),
        traversals=Traversals(forward=epoch * N * C, backward=epoch * N * C,
                              update=epoch * n_updates, evaluation=evaluation),
        cpu_time=cpu_time, wall_time=wall_time, setup=setup)


def resolve_classification(classification, Y):
    """``classification`` (True, False or "auto": targets one-hot) as a bool."""
    if isinstance(classification, str):
        if classification != "auto":
            raise ValueError(f"`classification` must be True, False or 'auto', got "
                             f"{classification!r}.")
        return is_one_hot(Y)
    if not isinstance(classification, (bool, np.bool_)):
        raise TypeError(f"`classification` must be True, False or 'auto', got "
                        f"{type(classification).__name__} {classification!r}.")
    return bool(classification)


def base_setup(net, *, algorithm, parameters, stop, strip, max_epochs, target_range, seed,
               n_train, n_val, n_test, initialisation, block_size):
    """The set-up record every trainer shares (Proben1 checklist, Prechelt 1994)."""
    return {
        "algorithm": algorithm,
        "parameters": parameters,
        "network": {"repr": repr(net), "layer_sizes": list(net.layer_sizes),
                    "shortcut": net.shortcut, "n_connections": net.n_connections,
                    "hidden_activation": net.hidden_activation,
                    "output_activation": net.output_activation,
                    "proben1": net.proben1_spec},
        "initialisation": initialisation,
        "stopping": stop.name if stop is not None else "none",
        "stopping_rule": stop.to_dict() if stop is not None else None,
        "strip": strip,
        "max_epochs": max_epochs,
        "error_function": "summed squared error, squared error percentage",
        "target_range": list(target_range),
        "seed": seed if isinstance(seed, (int, type(None))) else repr(seed),
        "n_train": n_train, "n_val": n_val, "n_test": n_test,
        "block_size": block_size,
        "version": __version__,
        "machine": machine_description(),
        "build": build_flags(),
    }
