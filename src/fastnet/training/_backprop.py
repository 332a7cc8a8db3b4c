"""Plain backpropagation with momentum, batch or online (Rumelhart et al. 1986; Lawrence et al. 1997): the baseline."""
from __future__ import annotations

from collections.abc import Callable

from fastnet._typing import ArrayLike, Seed
from fastnet.network import MLP
from fastnet.stopping import StoppingCriterion, TrainingState
from fastnet.training._algorithms import Backprop
from fastnet.training._results import TrainResult
from fastnet.training._train import train

__all__ = ["train_backprop"]


def train_backprop(net: MLP, X: ArrayLike, Y: ArrayLike, X_val: ArrayLike | None = None,
                   Y_val: ArrayLike | None = None, *, X_test: ArrayLike | None = None,
                   Y_test: ArrayLike | None = None, mode: str = "batch",
                   learning_rate: float = 0.01, momentum: float = 0.0,
                   decay: bool | str = False,
                   max_epochs: int = 100, stop: StoppingCriterion | None = None,
                   strip: int = 5, init_scale: float | None = None, seed: Seed = None,
                   target_range: tuple[float, float] = (0.0, 1.0),
                   classification: bool | str = "auto",
                   callback: Callable[[int, TrainingState], bool | None] | None = None,
                   block_size: int | None = None, blas_min: int | None = None,
                   loss: str = "sse", weight_decay: float = 0.0) -> TrainResult:
    r"""Train ``net`` in place with backpropagation and momentum.

    Each update is dw = -lr * g + momentum * dw_prev, w <- w + dw, with g the
    gradient of the summed squared error (no factor 1/2) over the whole
    training set (``mode="batch"``, one update per epoch) or of one pattern
    (``mode="online"``, patterns in a fresh random order every epoch).

    Because g is the gradient of sum e^2, twice that of the (1/2) sum e^2 many
    papers minimise, a paper's rate eta on the halved cost is
    ``learning_rate = eta / 2`` here: Lawrence et al.'s (1997) 0.1 on Haykin's
    quadratic cost is ``learning_rate=0.05``.

    Parameters
    ----------
    net, X, Y, X_val, Y_val, X_test, Y_test
        As in :func:`fastnet.train_rprop`.
    mode : {"batch", "online"}, default "batch"
    learning_rate : float > 0, default 0.01
        The rate on the gradient of sum e^2 (see above for a paper's rate on
        (1/2) sum e^2).
    momentum : float in [0, 1), default 0.0
    decay : bool or {"epoch", "update"}, default False
        Decay the learning rate linearly towards 0 (Lawrence et al. 1997).
        True or ``"epoch"``: per epoch over ``max_epochs``, epoch t = 0, 1, ...
        at learning_rate * (1 - t / max_epochs) (the last epoch at
        learning_rate / max_epochs). ``"update"`` (online only): per update
        over the U = max_epochs * N updates, update u = 0, ..., U - 1 at
        learning_rate * (U - 1 - u) / (U - 1), exactly 0 at the last, as the
        paper's "reduced linearly to zero over the training period".
    max_epochs, stop, strip, init_scale, seed, target_range, classification,
    callback, block_size, blas_min
        As in :func:`fastnet.train_rprop`. ``seed`` also drives the online
        presentation order.
    loss, weight_decay
        The objective, as in :func:`fastnet.train_rprop`. Online, each pattern's
        step follows the gradient of its loss plus weight_decay / N * sum w^2 (the
        N patterns' terms add up to the batch objective).

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
        If ``net`` is being trained (see :func:`fastnet.train_rprop`).

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
    return train(net, X, Y, X_val, Y_val, algorithm=Backprop(mode, learning_rate, momentum, decay),
                 X_test=X_test, Y_test=Y_test, max_epochs=max_epochs, stop=stop, strip=strip,
                 init_scale=init_scale, seed=seed, target_range=target_range,
                 classification=classification, callback=callback, block_size=block_size,
                 blas_min=blas_min, loss=loss, weight_decay=weight_decay)
