"""The epoch kernels' status, decoded here and nowhere else in Python.

Every epoch kernel (the single-network rules, the lanes, a rule's own Python
epochs) trains ``n`` epochs of a trial and returns one integer:

* ``0`` -- all ``n`` epochs trained;
* ``k > 0`` -- the training error of the call's epoch ``k`` was not finite: the
  trial diverged there (its errors after ``k`` are unspecified);
* ``-k`` -- the trial stopped after the call's epoch ``k``: Hamey's success
  check held there, or the rule stopped itself (`Algorithm.stop_reason` says why);
* ``BEYOND + k`` (lanes, rules without a bound on their changes) -- the trial
  stopped after ``k`` epochs, its weights beyond the lanes' safe range; it goes
  on in the single-network kernels (``fastnet.training._backends``).

The C side names BEYOND ``FN_STATUS_BEYOND`` (``_kernels/_lanes.h``).
"""
import numpy as np

from fastnet._kernels._trials import BEYOND

__all__ = ["BEYOND", "first_diverged", "stopped", "stopped_after", "epochs_run", "diverged_in",
           "stopped_in",
           "epochs_trained", "epochs_written", "beyond", "after", "shifted"]


def first_diverged(status):
    """Index of the first trial whose status (an array) says it diverged, or None."""
    bad = status > 0
    if not np.any(bad):
        return None
    return int(np.flatnonzero(bad)[0])


def stopped(status):
    """Which trials stopped early, successfully (a mask of the status array)."""
    return status < 0


def stopped_after(status):
    """The call's epochs a trial trained before it stopped (status -k: k)."""
    return -status


def epochs_trained(status, n):
    """The call's epochs each trial trained (an array of statuses, none beyond):
    k for -k, else all ``n`` (a diverged trial's count does not matter: it raises)."""
    return np.where(status < 0, -status, n)


def epochs_written(s, n):
    """The meaningful training errors of one trial's call of ``n`` epochs with
    status ``s`` (an int): k for -k, else all ``n``."""
    return -s if s < 0 else n


def beyond(status):
    """Indices of the trials that stopped beyond the lanes' safe range."""
    return np.flatnonzero(status >= BEYOND)


def after(s):
    """The epochs a BEYOND + k status says the trial trained in the lanes: k."""
    return s - BEYOND


def shifted(s, done):
    """The status, for the whole call, of a part that started ``done`` epochs
    into it and returned ``s`` (0 stays 0)."""
    if s > 0:
        return s + done
    if s < 0:
        return s - done
    return 0


def epochs_run(s, n):
    """The epochs one trial's call of ``n`` epochs ran (an int status): k for k
    (the diverged epoch included) or -k, else all ``n``."""
    return abs(s) if s else n


def diverged_in(s):
    """1 if one trial's status says its call diverged, else 0."""
    return int(s > 0)


def stopped_in(s):
    """Whether one trial's status says it stopped early (the check held, or the rule stopped)."""
    return s < 0
