"""One network, one run: the K = 1 case of the strip loop, shared by
:func:`train_rprop` and :func:`train_backprop`."""
import dataclasses

import numpy as np

from fastnet._blas import kernels_blas, single_threaded_blas
from fastnet._validation import as_generator
from fastnet.network import draw_weights, weight_buffer
from fastnet.training._algorithms import RPROP, Backprop, start_trial
from fastnet.training._checks import training_of
from fastnet.training._loop import StripLoop
from fastnet.training._record import setup_record
from fastnet.training._results import trial_result
from fastnet.training._serial import Serial

__all__ = ["train_single", "initialisation", "blas_held"]


def initialisation(init_scale, how="from the seed", init="uniform"):
    """The set-up record's words for the initial weights (``init_scale`` None
    with ``init="uniform"``: the network's weights as given)."""
    if init == "fan_in":
        s = 2.4 if init_scale is None else init_scale
        return (f"fan_in: each unit's weights and bias uniform in [-{s}/F, {s}/F], F its "
                f"fan-in (bias not counted), {how}")
    if init == "glorot":
        return (f"glorot: each layer's weights and biases uniform in [-b, b], b = sqrt(f/(F + n)), "
                f"f = 2 for logistic hidden units else 6 (scikit-learn's rule), {how}")
    if init == "he":
        return (f"he: weights uniform in [-sqrt(6/F), sqrt(6/F)], biases 0 (PyTorch's "
                f"kaiming_uniform_), {how}")
    if init_scale is None:
        return "weights of the network as given"
    return f"uniform in [-{init_scale}, {init_scale}] {how}"


def blas_held(net, algorithm, sets, run):
    """The context that holds BLAS at one thread while ``algorithm`` trains ``net``
    in the single-network kernels (see fastnet._blas): none where RPROP's or
    backpropagation's kernels make no BLAS call (every product below
    ``run.blas_min``); other rules may call BLAS or LAPACK themselves."""
    if type(algorithm) in (RPROP, Backprop):
        return kernels_blas(net, max(sets.X.shape[0], sets.n_val, sets.n_test), run.blas_min)
    return single_threaded_blas()


def train_single(net, algorithm, sets, run, *, seed, init_scale, extra=None):
    """Train ``net`` in place with ``algorithm``, everything checked at the door
    (``_checks.check_one_run``): draw its start from ``seed`` (weights with
    ``init_scale``, then the algorithm's own draws), run the strip loop, return its
    `TrainResult`. ``run.callback`` is ``callback(epoch, state)``."""
    with training_of([net], "net"):
        return _train(net, algorithm, sets, run, seed, init_scale, extra)


def _train(net, algorithm, sets, run, seed, init_scale, extra):
    drawn = init_scale is not None or algorithm.draws
    rng = as_generator(seed) if drawn else None
    if init_scale is not None:
        draw_weights(net, rng, init_scale)
    state = start_trial(algorithm, net.n_connections, rng, run.max_epochs, net.dtype)
    serial = Serial(net, algorithm, sets, run)
    serial.add(0, weight_buffer(net), state)
    if run.callback is not None:
        callback = run.callback
        run = dataclasses.replace(run, callback=lambda i, epoch, s: callback(epoch, s))
    setup = setup_record(net, algorithm, run, sets, seed=seed,
                         initialisation=initialisation(init_scale),
                         block_size=serial.block_size, extra=extra)
    loop = StripLoop(serial, 1, net, algorithm, sets, run, rows=1, single=True, keep=True)

    def store(rows):
        weight_buffer(net)[:] = rows[0]

    try:
        with blas_held(net, algorithm, sets, run):  # (once for the run: the loop's own nest cheaply)
            cpu, wall = loop.train()
            columns = loop.columns((np.array([cpu]), np.array([wall])), stacklevel=6, store=store)
        return trial_result(columns, 0, net, setup)
    except BaseException:
        # the weights of the last strip end the loop took in (as train_many leaves them)
        store(loop.safe)
        raise
