"""The stopping policy of K trials: Proben1's criteria at strip ends (Prechelt
1994), the callback, Hamey's success check (Hamey 1992) and the no-convergence
warning; the strip loop asks it when to return and whether a trial stops."""
import copy
import warnings
from functools import partial

import numpy as np

from fastnet.exceptions import NoConvergenceWarning
from fastnet.measures import _check_analog, hamey_correct, threshold_correct
from fastnet.stopping import Correct, ErrorBelow
from fastnet.training._algorithms import NO_CHECK, checks_in_kernel
from fastnet.training._divergence import diverged

__all__ = ["StopPolicy"]


class StopPolicy:
    """When K trials return to Python and why each stops.

    Parameters
    ----------
    K : int
    algorithm : Algorithm
    sets : Sets
    run : RunOptions
        ``run.stop`` (copied per trial), ``run.strip``, ``run.callback``
        (``callback(i, epoch, state)``).
    backend : Backend
        Where the trials train (its outputs for the success check; how often
        it returns when nothing else asks, ``backend.returns_every``).
    single : bool
        A single run (`train_rprop`): its messages name no trial.

    Attributes
    ----------
    in_strips : bool
        The loop returns at every strip end (a validation or test set, a
        criterion or a callback).
    kernel_check : bool
        Hamey's check (``Correct`` alone) runs in the kernels, every ``run.strip``
        epochs, as ``check`` = (every, r_c, analog); ``step``: epochs per call.
    reasons : list of str
        Each trial's stop reason ("max_epochs" until it stops otherwise).
    fired, called_off : ndarray of bool
        Trials stopped by their criterion, by the callback.
    checks : ndarray of intp
        Success checks run from Python, per trial (forward passes).
    """

    def __init__(self, K, algorithm, sets, run, backend, single, max_per_call):
        # (no reference back to the loop: a cycle would leave each run's buffers to
        # the cyclic garbage collector, whose passes then land in later epochs)
        self.run, self.sets, self.backend, self.single = run, sets, backend, single
        stop = run.stop
        measured = sets.X_val is not None or sets.X_test is not None
        # (the stop alone, nothing measured or called per strip: a kernel may decide)
        alone = not measured and run.callback is None
        # (a backend that checks success itself: the kernels' rules, a batch of a
        # step_many rule)
        self.kernel_check = type(stop) is Correct and alone and (
            checks_in_kernel(algorithm) or getattr(backend, "checks_success", False))
        self.K, self._criteria = K, None     # (each trial's copy of `stop`, made when asked)
        self.in_strips = measured or stop is not None or run.callback is not None
        self.check, self.step = None, run.strip if self.in_strips else max_per_call
        if self.kernel_check:
            self.check = self._kernel_check(stop)
            every = backend.returns_every
            self.step = run.strip * max(1, every // run.strip)
        # What the lanes' queue (`train_queued`) can stop trials by, itself: Hamey's check
        # ((every, r_c, analog); online training's too, which the strips check from
        # Python), or the training error of each epoch below a threshold (``ErrorBelow``
        # on the training error: (threshold, every)); None: neither.
        self.queue_stop = None
        queues = checks_in_kernel(algorithm) or getattr(algorithm, "per_pattern", False)
        if type(stop) is Correct and alone and queues:
            self.queue_stop = (self._kernel_check(stop), None)
        elif type(stop) is ErrorBelow and stop.on == "train" and alone and queues:
            self.queue_stop = (NO_CHECK, (stop.threshold, run.strip))
        self.reasons = ["max_epochs"] * K
        self.fired, self.called_off = np.zeros(K, bool), np.zeros(K, bool)
        self.checks = np.zeros(K, np.intp)
        self.epoch = 0                      # (the strip end being decided)
        self._masks, self._checkers = {}, {}

    def _kernel_check(self, stop):
        """Hamey's check ``stop`` in a kernel, every strip: (every, r_c, analog)."""
        analog = _check_analog((self.sets.Y == 0.0) | (self.sets.Y == 1.0), stop.analog)
        return (self.run.strip, stop.r_c, NO_CHECK[2] if analog is None else analog)

    def queued(self, epochs):
        """The trials trained in the lanes' queue, ``epochs`` each: where the strips
        would run Hamey's check from Python (online training), the queue ran it at
        the same strip ends, and they count as those checks (forward passes)."""
        if self.queue_stop[0][0] and not self.kernel_check:
            self.checks[:] = epochs // self.run.strip

    @property
    def criteria(self):
        """Each trial's own copy of ``run.stop`` (None without one), made on first use:
        the kernels' checks read none, and a timing study's trials need no copies."""
        if self._criteria is None:
            stop = self.run.stop
            self._criteria = [None] * self.K
            if stop is not None:
                for i in range(self.K):
                    self._criteria[i] = copy.deepcopy(stop)
                    self._criteria[i].reset()
        return self._criteria

    def succeeded(self, won):
        """The trials ``won`` stopped in the kernels: Hamey's check held, or their
        rule stopped itself (its own reason, e.g. "converged")."""
        self.fired[won] = True
        for i in won.tolist():
            self.reasons[i] = self.backend.stop_reason(i) or self.run.stop.name

    def strip_end(self, idx, epoch, state_of):
        """Test the criteria of the trials ``idx`` and call the callback at the
        strip end ``epoch`` (``state_of(i, epoch)``: trial i's `TrainingState`); the
        trials that stop there, as a list."""
        self.epoch = epoch
        at_end = epoch % self.run.strip == 0
        run, fired, ended = self.run, self.fired, []
        if run.stop is None and run.callback is None:
            return ended                    # (nobody to show the state to)
        for i in idx.tolist():
            state = state_of(i, epoch)
            crit = self.criteria[i]
            hit = crit is not None and at_end and crit.update(state)
            if hit:
                self.reasons[i] = crit.fired or crit.name
                fired[i] = True
            # The callback sees every strip end, the last one included.
            if run.callback is not None and run.callback(i, epoch, state) and not hit:
                self.reasons[i] = "callback"
                self.called_off[i] = True
                ended.append(i)
            elif hit:
                ended.append(i)
        return ended

    def checker(self, i):
        """Trial ``i``'s ``is_correct(r_c, analog)`` for its `TrainingState` (made once)."""
        checker = self._checkers.get(i)
        if checker is None:
            checker = self._checkers[i] = partial(self._is_correct, i)
        return checker

    def _is_correct(self, i, r_c, analog):
        # Hamey's success check on trial i's weights (a forward pass, counted as
        # evaluation); the arguments are checked, and the binary targets found, once.
        self.checks[i] += 1
        outputs = self.backend.train_outputs(i)
        if not np.isfinite(outputs).all():
            raise diverged(self.epoch, "the network's outputs", None if self.single else i)
        Y = self.sets.Y
        if (r_c, analog) not in self._masks:
            threshold_correct(outputs, Y, r_c=r_c, analog=analog)  # validates
            binary = (Y == 0.0) | (Y == 1.0)
            self._masks[(r_c, analog)] = (binary, _check_analog(binary, analog))
        binary, tolerance = self._masks[(r_c, analog)]
        return bool(hamey_correct(outputs, Y, r_c, tolerance, binary).all())

    def evaluation(self, epochs, C):
        """Evaluation traversals of each trial (Prechelt 1994) after ``epochs`` (K,),
        ``C`` connections: a forward pass over the validation and test sets at
        every strip end it trained through, and over the training set for every
        success check."""
        s, strip = self.sets, self.run.strip
        NC = s.X.shape[0] * C
        if self.kernel_check:
            return epochs // strip * NC
        per_strip = s.n_val + s.n_test if self.in_strips else 0
        if not per_strip:
            return self.checks * NC
        return epochs // strip * (per_strip * C) + self.checks * NC

    def warn(self, stacklevel):
        """The no-convergence warning, if trials reached max_epochs before ``run.stop``."""
        stop, K = self.run.stop, self.fired.size
        late = ~(self.fired | self.called_off) if stop is not None else None
        if late is None or not late.any():
            return
        if self.single:
            message = (f"training reached max_epochs={self.run.max_epochs} before the stopping "
                       f"criterion {stop.name} held.")
        else:
            message = (f"{int(np.count_nonzero(late))} of {K} trials reached "
                       f"max_epochs={self.run.max_epochs} before the stopping criterion "
                       f"{stop.name} held.")
        warnings.warn(message, NoConvergenceWarning, stacklevel=stacklevel)
