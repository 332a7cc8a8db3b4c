"""Exceptions and warnings raised by fastnet."""

__all__ = ["DataFormatError", "DataIntegrityWarning", "DivergenceError", "FileLockedError",
           "NoConvergenceWarning", "ResultFileError", "TrainingInProgressError"]


class DataFormatError(ValueError):
    """A data file does not follow its format.

    The message starts with ``path:line:`` so that editors and terminals can jump
    to the offending line.

    Attributes
    ----------
    path : str
        The file that was being read.
    line : int or None
        1-based line number of the offending line, or ``None`` for whole-file
        problems (for example, too few lines).
    """

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")


class ResultFileError(ValueError):
    """A result file is malformed, belongs to another experiment, or is being
    written by another process.

    The message names the file (and the line, where there is one) and says what to do.
    """


class FileLockedError(ResultFileError):
    """Another process holds the writer's lock of a result file.

    Two writers of one file would mix their records, so the second is refused
    (the message names the holder's pid where it is known). The lock is an OS
    lock that dies with its process: after a crash or ``kill -9`` the next
    writer takes it at once.
    """


class DivergenceError(FloatingPointError):
    """Training diverged: errors, weights or outputs became non-finite, the
    training error grew beyond 1e6 times max(E_tr(1), 1 %) (the run-away of
    unbounded outputs, which a stopping criterion would otherwise take for a
    normal stop), or a weight ended beyond ``MAX_WEIGHT`` (1e150, the largest
    a network takes).

    Raised instead of returning a result with NaN, infinite or run-away errors. Lower the
    learning rate (backpropagation), ``delta_max`` or ``init_scale`` (RPROP), or
    scale the data.

    Attributes
    ----------
    epoch : int
        The epoch after which the non-finite values were found (at a strip end
        or at the end of training; the kernels also stop at the first epoch
        whose training error is not finite), whose training error grew too
        much, or at whose end a weight was beyond ``MAX_WEIGHT``.
    trial : int or None
        Index of the diverged trial in :func:`fastnet.train_rprop_many` or
        :func:`fastnet.train_many` (its row of ``initial_weights`` or of the
        drawn weights, or its place in the list of networks), None for one
        network.
    """

    def __init__(self, message, epoch, trial=None):
        super().__init__(message)
        self.epoch = epoch
        self.trial = trial


class TrainingInProgressError(RuntimeError):
    """A network is already being trained (by another thread, or it is the network of
    the training whose callback is running).

    Two trainers of one network would write its weights in turn and return
    results that disagree with the network, so the second is refused at its
    start, and so is writing the weights of a network in training
    (``set_weights``, ``set_params``, ``init_weights``): the trainer would continue
    from them, ignore or overwrite them, and its result would not say so. Train a
    copy (``net.copy()``) instead, or wait for the training to return. Predicting
    with a network while it trains is allowed: the Notes of
    :func:`fastnet.train_rprop` say what it sees.
    """


class DataIntegrityWarning(UserWarning):
    """A known Proben1 file's contents differ from the published archive.

    The file still loads (it may be a deliberate variant), but results from it are
    not comparable with Prechelt's (1994); result files record whether every
    data file matched its published SHA-256.
    """


class NoConvergenceWarning(UserWarning):
    """Training reached ``max_epochs`` before the requested stopping criterion held."""
