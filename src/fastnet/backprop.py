"""Plain backpropagation with momentum, batch or online (Rumelhart et al. 1986; Lawrence et al. 1997): the baseline."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fastnet._engine import Workspace
from fastnet._training import (
    TrainResult,
    base_setup,
    check_common,
    check_start,
    resolve_classification,
    run_training,
    training_of,
)
from fastnet._validation import as_generator, check_choice, check_float
from fastnet._typing import ArrayLike, Seed
from fastnet.network import MAX_INIT_SCALE, MLP
from fastnet.stopping import StoppingCriterion, TrainingState

__all__ = ["train_backprop"]


class _BackpropStepper:
    def __init__(self, ws, mode, learning_rate, momentum, decay, max_epochs, rng):
        C = ws.net.n_connections
        self.ws = ws
        self.online = mode == "online"
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.decay = decay
        self.max_epochs = max_epochs
        self.rng = rng
        self.epoch = 0
        self.updates_per_epoch = C * (ws.A.shape[0] if self.online else 1)
        self._no_order = np.zeros((0, 0), dtype=np.intp)

    def run(self, sse_out):
        n = sse_out.shape[0]
        t = np.arange(self.epoch, self.epoch + n)
        if self.decay:
            # Linear decay to 0 at max_epochs: epoch t (0-based) uses lr (1 - t/T).
            rates = self.learning_rate * (1.0 - t / self.max_epochs)
        else:
            rates = np.full(n, self.learning_rate)
        if self.online:
            N = self.ws.A.shape[0]
            order = np.empty((n, N), dtype=np.intp)
            for i in range(n):
                order[i] = self.rng.permutation(N)
        else:
            order = self._no_order
        self.epoch += n
        ws = self.ws
        return ws.backprop_epochs(rates, self.momentum, order, sse_out)


def train_backprop(net: MLP, X: ArrayLike, Y: ArrayLike, X_val: ArrayLike | None = None,
                   Y_val: ArrayLike | None = None, *, X_test: ArrayLike | None = None,
                   Y_test: ArrayLike | None = None, mode: str = "batch",
                   learning_rate: float = 0.01, momentum: float = 0.0, decay: bool = False,
                   max_epochs: int = 100, stop: StoppingCriterion | None = None,
                   strip: int = 5, init_scale: float | None = None, seed: Seed = None,
                   target_range: tuple[float, float] = (0.0, 1.0),
                   classification: bool | str = "auto",
                   callback: Callable[[int, TrainingState], bool | None] | None = None,
                   block_size: int | None = None, blas_min: int | None = None) -> TrainResult:
    r"""Train ``net`` in place with backpropagation and momentum.

    Each update is dw = -lr * g + momentum * dw_prev, w <- w + dw, with g the
    gradient of the summed squared error (no factor 1/2) over the whole
    training set (``mode="batch"``, one update per epoch) or of one pattern
    (``mode="online"``, patterns in a fresh random order every epoch).

    Parameters
    ----------
    net, X, Y, X_val, Y_val, X_test, Y_test
        As in :func:`fastnet.train_rprop`.
    mode : {"batch", "online"}, default "batch"
    learning_rate : float > 0, default 0.01
    momentum : float in [0, 1), default 0.0
    decay : bool, default False
        Decay the learning rate linearly to 0 over ``max_epochs`` (Lawrence et
        al.): epoch t = 0, 1, ... uses learning_rate * (1 - t / max_epochs).
    max_epochs, stop, strip, init_scale, seed, target_range, classification,
    callback, block_size, blas_min
        As in :func:`fastnet.train_rprop`. ``seed`` also drives the online
        presentation order.

    Returns
    -------
    TrainResult
        For online training ``train_error[t]`` sums each pattern's error taken
        before its own update, and ``traversals.update`` counts N·C per epoch.

    Raises
    ------
    ValueError, TypeError
        For bad shapes, non-finite data or invalid hyper-parameters.
    DivergenceError
        If the training diverges: the training error, the weights, the outputs
        or a validation/test error become non-finite, or the training error
        grows beyond 1e6 times max(E_tr(1), 1 %), as in :func:`fastnet.train_rprop`
        (a FloatingPointError naming the epoch). No result with NaN errors is
        ever returned.
    TrainingInProgressError
        If another thread is training ``net`` (see :func:`fastnet.train_rprop`).

    See Also
    --------
    train_rprop

    References
    ----------
    Rumelhart, D. E., Hinton, G. E. & Williams, R. J. (1986). Learning
    representations by back-propagating errors. Nature 323, 533-536.
    Lawrence, S., Back, A. D., Tsoi, A. C. & Giles, C. L. (1997). On the
    distribution of performance from multiple neural network trials. IEEE TNN 8(6).

    Examples
    --------
    >>> from fastnet import MLP, train_backprop
    >>> from fastnet.datasets import make_xor
    >>> X, Y = make_xor().train                 # the four XOR patterns
    >>> net = MLP(2, (2,), 1, shortcut=False, output_activation="logistic")
    >>> r = train_backprop(net, X, Y, mode="online", learning_rate=0.5, momentum=0.9,
    ...                    max_epochs=50, init_scale=0.5, seed=0)
    >>> r.traversals.update == 50 * 4 * net.n_connections
    True
    """
    mode = check_choice(mode, "mode", {"batch", "online"})
    learning_rate = check_float(learning_rate, "learning_rate", low=0.0, low_open=True)
    momentum = check_float(momentum, "momentum", low=0.0, high=1.0, high_open=True)
    if not isinstance(decay, (bool, np.bool_)):
        raise TypeError(f"`decay` must be True or False, got {decay!r}.")
    if init_scale is not None:
        init_scale = check_float(init_scale, "init_scale", low=0.0, high=MAX_INIT_SCALE)
    (X, Y, X_val, Y_val, X_test, Y_test, max_epochs, strip, target_range, block_size,
     blas_min) = check_common(net, X, Y, X_val, Y_val, X_test, Y_test, max_epochs, strip, stop,
                              target_range, callback, block_size, blas_min)
    classification = resolve_classification(classification, Y)
    # The seed draws the initial weights (with init_scale) and online training's
    # presentation order; batch training without init_scale draws nothing.
    with training_of([net], "net"):
        drawn = init_scale is not None or mode == "online"
        rng = as_generator(seed) if drawn else None
        if init_scale is not None:
            net.init_weights(rng, scale=init_scale)
        check_start(net, seed, drawn)
        ws = Workspace(net, X, Y, 1 if mode == "online" else block_size, blas_min)
        stepper = _BackpropStepper(ws, mode, learning_rate, momentum, bool(decay), max_epochs, rng)
        setup = base_setup(
            net, algorithm=f"backpropagation ({mode}) with momentum",
            parameters={"learning_rate": learning_rate, "momentum": momentum, "decay": bool(decay)},
            stop=stop, strip=strip, max_epochs=max_epochs, target_range=target_range, seed=seed,
            n_train=X.shape[0], n_val=0 if X_val is None else X_val.shape[0],
            n_test=0 if X_test is None else X_test.shape[0],
            initialisation=(f"uniform in [-{init_scale}, {init_scale}] from the seed"
                            if init_scale is not None else "weights of the network as given"),
            block_size=ws.D.shape[0])
        return run_training(net, stepper, ws, X_val=X_val, Y_val=Y_val, X_test=X_test,
                            Y_test=Y_test, max_epochs=max_epochs, strip=strip, stop=stop,
                            target_range=target_range, callback=callback,
                            classification=classification, setup=setup)


def __dir__():
    # dir() shows the public API only, not the imports (as in SciPy's modules)
    return sorted(__all__)
