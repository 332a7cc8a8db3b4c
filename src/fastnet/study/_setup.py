"""What a study trains: the task, the network, the algorithms (with parameter grids), the
success criterion, the trials and the epoch limit."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastnet._grids import MAX_GRID_CELLS, expand_grid, grid_size
from fastnet._validation import check_choice, check_count, check_float, check_int

__all__ = ["Study", "expand_grid", "grid_size", "MAX_TRIALS", "MAX_LIMIT", "MAX_GRID_CELLS",
           "MAX_TRIAL_EPOCHS", "ACTIVATIONS"]

#: Most trials per algorithm (`Study.trials`).
MAX_TRIALS = 10_000_000
#: Largest epoch limit T (`Study.limit`).
MAX_LIMIT = 10_000_000
#: Activations a study's network may take.
ACTIVATIONS = ("tanh", "logistic", "proben1", "linear")

_SPEC = re.compile(r"^\s*([A-Za-z][\w+\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_ERROR = re.compile(r"^\s*error\s*<\s*([0-9.eE+\-]+)\s*$")
_RC = re.compile(r"^\s*r_?c\s*=\s*([0-9.eE+\-]+)\s*$")


#: The most trial-epochs of one algorithm, trials K x epoch limit T (10^10): a bound on
#: the work asked for, checked before anything is trained. (Memory does not grow with it:
#: the trials train in chunks of at most `fastnet.study.CHUNK_TRIAL_EPOCHS` trial-epochs,
#: and a study keeps a few numbers per trial.)
MAX_TRIAL_EPOCHS = 10_000_000_000


def parse_network(text, n_in, n_out):
    """Hidden layer sizes from ``"2-2-1"`` (all layers, three or more) or ``"2"``,
    ``"8-4"`` (hidden layers only, one or two)."""
    try:
        sizes = [int(s) for s in str(text).replace("+", "-").split("-") if s.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ValueError(f"`network` must be layer sizes such as '2-2-1' (inputs, hidden, "
                         f"outputs) or hidden sizes such as '4' or '8-4', got {text!r}.")
    if len(sizes) >= 3:
        if sizes[0] != n_in or sizes[-1] != n_out:
            raise ValueError(f"`network` {text!r} does not fit the task's {n_in} inputs and "
                             f"{n_out} outputs.")
        return tuple(sizes[1:-1])
    return tuple(sizes)


def load_task(task, root=None):
    """(name, X, Y, hidden, sha256) of a study's task: ``"xor"``, ``"encoder N-M-N"``,
    ``"parity N"``, a Proben1 dataset or ``.dt`` file (its training examples), the task's
    default hidden layers, and the SHA-256 of the data file's contents (None for the
    generated tasks), as :func:`fastnet.datasets.read_proben1` computes it."""
    from fastnet.datasets import load_proben1, make_encoder, make_xor

    text = " ".join(str(task).lower().split())
    if text == "xor":
        ds = make_xor()
        return "xor", ds.train.X, ds.train.Y, (2,), None
    m = re.fullmatch(r"encoder[ -]?(\d+)-(\d+)(?:-(\d+))?", text)
    if m:
        from fastnet.datasets import MAX_ENCODER
        from fastnet.network import MAX_CONNECTIONS

        n = _size(m.group(1), task, "an encoder's N (inputs, outputs, patterns)", 2, MAX_ENCODER)
        h = _size(m.group(2), task, "an encoder's hidden units", 1, MAX_CONNECTIONS)
        if m.group(3) is not None and m.group(3).lstrip("0") != m.group(1).lstrip("0"):
            raise ValueError(f"`task` {task!r}: an encoder has as many outputs as inputs "
                             f"('encoder {n}-{h}-{n}').")
        ds = make_encoder(n, h)
        return ds.name, ds.train.X, ds.train.Y, (h,), None
    m = re.fullmatch(r"parity[ -]?(\d+)", text)
    if m:
        n = _size(m.group(1), task, "parity's bits", 1, 16)
        X = ((np.arange(2 ** n)[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(float)
        Y = (X.sum(axis=1, keepdims=True) % 2).astype(float)
        return f"parity-{n}", X, Y, (n,), None
    if text.endswith(".dt"):
        from fastnet.datasets import read_proben1

        f = read_proben1(str(task).strip())            # a Proben1 file: its training examples
        n = f.header.training_examples
        return Path(str(task).strip()).stem, f.X[:n], f.Y[:n], (4,), f.sha256
    if re.fullmatch(r"[a-z]+[0-9][a-z]?", text):
        ds = load_proben1(text, root)
        return ds.name, ds.train.X, ds.train.Y, (4,), ds.sha256
    raise ValueError(f"`task` must be 'xor', 'encoder N-M-N' (e.g. 'encoder 10-5-10'), "
                     f"'parity N', a Proben1 dataset such as 'cancer1' or a .dt file, got "
                     f"{task!r}.")


def _size(digits, task, what, low, high):
    """The integer ``digits`` of ``task``, from ``low`` to ``high`` (refused before any
    data of that size is made; a huge number is described, not converted)."""
    value = int(digits) if len(digits) <= len(str(high)) else None
    if value is None or not low <= value <= high:
        shown = digits if len(digits) <= 20 else f"a number of {len(digits)} digits"
        raise ValueError(f"`task` {str(task)[:60]!r}: {what} must be from {low} to {high}, "
                         f"got {shown}.")
    return value


def parse_success(text):
    """(canonical text, stopping criterion) of a success criterion: ``"40-20-40"``
    (Fahlman's threshold rule, r_c = 0.4), ``"rc=R"`` or ``"error<E"`` (training
    squared error percentage below E)."""
    from fastnet.stopping import Correct, ErrorBelow

    s = str(text).strip().lower()
    if s in ("40-20-40", "correct"):
        return "40-20-40", Correct(0.4)
    m = _RC.match(s)
    if m:
        r = check_float(float(m.group(1)), "success r_c", low=0.0, high=0.5, low_open=True)
        return f"rc={r:g}", Correct(r)
    m = _ERROR.match(s)
    if m:
        e = check_float(float(m.group(1)), "success error threshold", low=0.0, low_open=True)
        return f"error<{e:g}", ErrorBelow(e)
    raise ValueError(f"`success` must be '40-20-40', 'rc=R' (0 < R <= 0.5) or 'error<E' "
                     f"(a training squared error percentage), got {text!r}.")


#: What `Study.cost` may be.
COSTS = ("auto", "traversals", "cpu")


@dataclass(frozen=True)
class Study:
    """A timing study's set-up (Hamey 1992): one task and network, several algorithms,
    ``trials`` trials each from the same initial weights, success within ``limit`` epochs.

    Attributes
    ----------
    task : str
        ``"xor"``, ``"encoder 10-5-10"``, ``"parity N"``, a Proben1 dataset
        (``"cancer1"``) or a Proben1 ``.dt`` file (trained and judged on its training
        set).
    algorithms : tuple of str
        Algorithm texts (:func:`fastnet.algorithms.from_spec`), lists of values
        being parameter grids (:func:`expand_grid`); kept in their written-back
        form (:func:`fastnet.algorithms.spec_of`), one per grid cell.
    network : str or None
        Layer sizes ``"2-2-1"`` or hidden sizes ``"4"``; None: the task's own
        (XOR 2-2-1, encoder N-M-N, parity N-N-1, Proben1 n-4-m).
    trials : int
        Trials K per algorithm, all algorithms starting from the same K initial
        weights (drawn from ``seed``).
    limit : int
        Epoch limit T; a trial not successful before T is a failure.
    success : str
        ``"40-20-40"``, ``"rc=R"`` or ``"error<E"`` (:func:`parse_success`).
    seed : int
    init_scale : float
        Initial weights uniform in [-init_scale, init_scale].
    hidden_activation, output_activation : str
    shortcut : bool
    cost : {"auto", "traversals", "cpu"}
        The unit the verdicts compare times to success in (:func:`fastnet.study.cost_unit`):
        ``"auto"`` epochs where every epoch costs the same, else connection traversals,
        else (an algorithm working outside the traversals, such as Levenberg-Marquardt)
        CPU time; ``"traversals"`` or ``"cpu"`` (CPU time) whatever the epochs cost.
        Not part of the set-up's identity: trials trained for one unit serve another.
    dtype : {"float64", "float32"}
        The network's value type (``MLP(..., dtype=...)``), kept as its name;
        default ``"float64"``. Part of the set-up: chunks of trials trained in
        one dtype are refused by a study in the other (the identity of a float64
        study is what it was before float32 existed, so older chunks resume).
    """

    task: str
    algorithms: tuple = ("rprop+",)
    network: str | None = None
    trials: int = 100
    limit: int = 1000
    success: str = "40-20-40"
    seed: int = 0
    init_scale: float = 1.0
    hidden_activation: str = "tanh"
    output_activation: str = "logistic"
    shortcut: bool = False
    cost: str = "auto"
    dtype: str = "float64"

    def __post_init__(self):
        from fastnet.algorithms import spec_of

        put = object.__setattr__.__get__(self)
        # the sizes first, all counted before anything is made
        put("trials", check_count(self.trials, "trials", MAX_TRIALS))
        put("limit", check_count(self.limit, "limit", MAX_LIMIT))
        if self.trials * self.limit > MAX_TRIAL_EPOCHS:
            raise ValueError(f"`trials` x `limit` must be at most {MAX_TRIAL_EPOCHS:,} "
                             f"(MAX_TRIAL_EPOCHS: the trial-epochs of one algorithm), got "
                             f"{self.trials} x {self.limit} = {self.trials * self.limit:,}.")
        given = [self.algorithms] if isinstance(self.algorithms, str) else list(self.algorithms)
        if not given:
            raise ValueError("`algorithms` must name at least one algorithm, got none.")
        n_cells = 0
        for text in given:
            n_cells += grid_size(text)
            if n_cells > MAX_GRID_CELLS:
                raise ValueError(f"`algorithms` must name at most {MAX_GRID_CELLS} algorithms "
                                 f"(MAX_GRID_CELLS), grid cells included, got {len(given)} "
                                 f"texts of more (counted before any cell is made).")
        specs = {}                                  # spec -> its group (the first text)
        for g, text in enumerate(given):
            for algorithm in expand_grid(text):
                specs.setdefault(spec_of(algorithm), g)
        put("algorithms", tuple(specs))
        put("_groups", tuple(specs.values()))
        put("success", parse_success(self.success)[0])
        put("seed", check_int(self.seed, "seed", minimum=0))
        put("init_scale", check_float(self.init_scale, "init_scale", low=0.0, low_open=True,
                                      high=10.0))
        check_choice(self.hidden_activation, "hidden_activation", ACTIVATIONS)
        check_choice(self.output_activation, "output_activation", ACTIVATIONS)
        if not isinstance(self.shortcut, (bool, np.bool_)):
            raise TypeError(f"`shortcut` must be True or False, got {self.shortcut!r}.")
        put("shortcut", bool(self.shortcut))
        check_choice(self.cost, "cost", COSTS)
        from fastnet._network_layout import check_dtype

        put("dtype", check_dtype(self.dtype).name)

    @property
    def groups(self):
        """For each algorithm, the index of the text (grid) it came from."""
        return self._groups

    def criterion(self):
        """The stopping criterion of success."""
        return parse_success(self.success)[1]

    def identity(self, data_sha256):
        """Everything but the algorithms that makes trials comparable (a dict).

        Parameters
        ----------
        data_sha256 : str or None
            SHA-256 of the task's data file contents (the fifth value of
            ``load_task``; None for the generated tasks): trials trained on other
            data are never taken for these. The task is kept exactly as given (a
            ``.dt`` file's name is case sensitive).
        """
        from fastnet._version import __version__

        return {"task": str(self.task), "data_sha256": data_sha256, "network": self.network,
                "trials": self.trials, "limit": self.limit, "success": self.success,
                "seed": self.seed, "init_scale": self.init_scale,
                "hidden_activation": self.hidden_activation,
                "output_activation": self.output_activation, "shortcut": self.shortcut,
                "fastnet": __version__,
                **({} if self.dtype == "float64" else {"dtype": self.dtype})}

    def cell_hash(self, spec, data_sha256):
        """SHA-256 (16 hex digits) of the identity (with the data's SHA-256, see
        `identity`) and one algorithm: a finished algorithm's file is reused only under
        the same hash. For a rule of a rules file (:func:`fastnet.algorithms.load_rules`)
        the file's SHA-256 joins it, so that trials of an edited file are trained again."""
        from fastnet.training._rules_files import rules_key

        text = json.dumps({**self.identity(data_sha256), "algorithm": spec, **rules_key(spec)},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]
