"""What a suite trains: problems x algorithms (search spaces) x budget x runs x studies."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

import numpy as np

from fastnet._validation import check_count, check_float, check_int

__all__ = ["Suite", "MAX_SUITE_RUNS", "MAX_BUDGET", "MAX_STUDIES", "generated_task",
           "GENERATED_SUCCESS"]

#: The most trained runs of a suite, counted before anything is trained: configurations
#: (per algorithm the budget x studies, one for a text without distributions) x runs x
#: problems. A cell trains its runs in batches (``fastnet.suite._run.CELL_BATCH``) and
#: keeps only their compact records (about 1 kB of JSON a run on cancer1, its validation
#: curve and test predictions' wrongness), which the analysis reads: at 100,000 runs about
#: 100 MB of cell files (20,000 cancer1 runs in one cell peaked at 185 MB of memory).
MAX_SUITE_RUNS = 100_000
#: The most configurations per study (``budget``).
MAX_BUDGET = 10_000
#: The most studies.
MAX_STUDIES = 100
#: The success criterion of the generated tasks (Fahlman's 40-20-40 threshold rule,
#: ``fastnet.stopping.Correct(0.4)``), as ``fastnet study`` uses by default.
GENERATED_SUCCESS = "40-20-40"

_ENCODER = re.compile(r"encoder[ -]?(\d{1,3})-(\d{1,3})(?:-(\d{1,3}))?")
_PARITY = re.compile(r"parity[ -]?(\d{1,2})")


def generated_task(name):
    """The generated task a problem name means, or None for any other name.

    Parameters
    ----------
    name : str
        ``"xor"``, ``"encoder8-3-8"`` (also ``"encoder 8-3-8"``, ``"encoder-8-3-8"``)
        or ``"parityN"`` (N from 1 to 10).

    Returns
    -------
    tuple or None
        (canonical name, X, Y, hidden layer sizes) of the task's training set: the
        tasks of ``fastnet study``, judged by success (`GENERATED_SUCCESS`) on it.

    Raises
    ------
    ValueError
        For an encoder or parity task of a size out of range.
    """
    from fastnet.datasets import make_encoder, make_xor

    text = "".join(str(name).lower().split())
    if text == "xor":
        ds = make_xor()
        return "xor", ds.train.X, ds.train.Y, (2,)
    m = _ENCODER.fullmatch(text)
    if m:
        n, h = int(m.group(1)), int(m.group(2))
        if m.group(3) is not None and int(m.group(3)) != n:
            raise ValueError(f"`problems`: an encoder has as many outputs as inputs "
                             f"('encoder{n}-{h}-{n}'), got {name!r}.")
        if not (2 <= n <= 64 and 1 <= h <= 64):
            raise ValueError(f"`problems`: an encoder N-M-N needs N from 2 to 64 and M from 1 "
                             f"to 64, got {name!r}.")
        ds = make_encoder(n, h)
        return f"encoder{n}-{h}-{n}", ds.train.X, ds.train.Y, (h,)
    m = _PARITY.fullmatch(text)
    if m:
        n = int(m.group(1))
        if not 1 <= n <= 10:
            raise ValueError(f"`problems`: parity N needs N from 1 to 10, got {name!r}.")
        X = ((np.arange(2 ** n)[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(float)
        return f"parity{n}", X, (X.sum(axis=1, keepdims=True) % 2), (n,)
    return None


@dataclass(frozen=True)
class Suite:
    """A comparison of algorithms across problems with their tuning counted.

    Each algorithm text is a search space (:func:`fastnet.suite.search_space`); each of
    ``studies`` studies draws its own ``budget`` configurations from it (one for a text
    without distributions), each trained ``runs`` times on every problem.

    Attributes
    ----------
    problems : tuple of str
        Proben1 data sets (``"cancer1"``; ``"cancer"`` means its three permutations),
        trained on the ``network`` with Proben1's set-up and selected by validation, and
        generated tasks (``"xor"``, ``"encoder8-3-8"``, ``"parity3"``), trained on
        their whole pattern set to success (`GENERATED_SUCCESS`) within ``limit`` epochs.
    algorithms : tuple of str
        Algorithm texts with search spaces, such as
        ``"adam(learning_rate=loguniform(1e-4, 1e-1))"``.
    budget : int
        Configurations K per study, 1 to `MAX_BUDGET`.
    runs : int
        Runs R of each configuration (seeds from the master seed).
    studies : int
        Studies S, 1 to `MAX_STUDIES`.
    seed : int
        Master seed: configurations and every run's seed derive from it.
    network : str
        The Proben1 problems' network (``"pivot"``, ``"linear"``, ``"noshortcut"`` or
        a Proben1 spec such as ``"8+4 s"``).
    max_epochs : int or None
        Epoch cap of the Proben1 runs (a multiple of 5, at most Proben1's 3000).
    limit : int
        Epoch limit T of the generated tasks.
    target : float, dict or None
        Validation squared error percentage a Proben1 run must reach to count as on
        target: one for every problem, or ``{problem: target}`` for every Proben1
        problem, or ``"frozen"``: the frozen targets shipped in the package
        (:func:`fastnet.suite.frozen_targets`), which never move with the compared
        algorithms (kept as that dict). None: per problem, the median over the suite's
        algorithms of their selected configurations' median best validation errors
        (it moves with the set of algorithms).
    rope : float
        Half-width of the region of practical equivalence of the Bayesian signed-rank
        test on the selected errors, in percentage points.
    root : str or None
        Directory of the Proben1 files (default ``$FASTNET_DATA``, then the cache).
    networks : dict or None
        {Proben1 problem: network} where a problem trains another network than
        ``network`` (mushroom has no pivot architecture: ``{"mushroom1": "linear"}``).
    dtype : {"float64", "float32"}
        The networks' value type (``MLP(..., dtype=...)``), kept as its name; default
        ``"float64"``. Part of every cell's identity where it is not float64: cells
        trained in one dtype are never taken for the other's (a float64 cell's identity
        is what it was before float32 existed, so older cells and the baseline
        database resume).
    """

    problems: tuple
    algorithms: tuple
    budget: int = 16
    runs: int = 10
    studies: int = 3
    seed: int = 0
    network: str = "pivot"
    max_epochs: int | None = None
    limit: int = 1000
    target: float | dict | None = None
    rope: float = 1.0
    root: str | None = None
    networks: dict | None = None
    dtype: str = "float64"

    def __post_init__(self):
        import os

        from fastnet.experiment import check_max_epochs, expand_problems
        from fastnet.experiment._protocol import _normalise_network
        from fastnet.suite._space import search_space
        from fastnet.suite._targets import resolve_target

        put = object.__setattr__.__get__(self)
        given = [self.problems] if isinstance(self.problems, str) else list(self.problems)
        if not given:
            raise ValueError("`problems` must name at least one problem, got none.")
        names = []
        for p in given:
            if not isinstance(p, str):
                raise TypeError(f"`problems` must hold strings, got {p!r}.")
            task = generated_task(p)
            try:
                found = (task[0],) if task else expand_problems(p)
            except ValueError as exc:
                raise ValueError(f"`problems`: {p!r} is neither a generated task (xor, "
                                 f"encoderN-M-N such as encoder8-3-8, parityN) nor a Proben1 "
                                 f"data set ({exc})") from None
            for n in found:
                if n not in names:
                    names.append(n)
        put("problems", tuple(names))
        algos = [self.algorithms] if isinstance(self.algorithms, str) else list(self.algorithms)
        if not algos:
            raise ValueError("`algorithms` must name at least one algorithm, got none.")
        spaces = [search_space(a) for a in algos]
        for a, space in zip(algos, spaces):
            if space.is_fixed:             # (a space's ends are tried by search_space)
                try:
                    space.configuration({})
                except (ValueError, TypeError) as exc:
                    raise type(exc)(str(exc) if repr(a) in str(exc)
                                    else f"`algorithms` {a!r}: {exc}") from None
        put("algorithms", tuple(" ".join(a.split()) for a in algos))
        if len(set(self.algorithms)) != len(self.algorithms):
            raise ValueError(f"`algorithms` must be distinct, got {list(self.algorithms)}.")
        put("_spaces", tuple(spaces))
        put("budget", check_count(self.budget, "budget", MAX_BUDGET))
        put("runs", check_count(self.runs, "runs", MAX_SUITE_RUNS))
        put("studies", check_count(self.studies, "studies", MAX_STUDIES))
        put("seed", check_int(self.seed, "seed", minimum=0))
        put("network", _normalise_network(self.network))
        if self.max_epochs is not None:
            put("max_epochs", check_max_epochs(self.max_epochs))
        put("limit", check_count(self.limit, "limit", 1_000_000))
        put("target", resolve_target(self.target, self.problems, self.is_generated))
        put("rope", check_float(self.rope, "rope", low=0.0))
        if self.root is not None:
            put("root", os.fspath(self.root))
        put("networks", self._check_networks(self.networks))
        from fastnet._network_layout import check_dtype

        put("dtype", check_dtype(self.dtype).name)
        n = self.n_runs
        if n > MAX_SUITE_RUNS:
            configs = sum(1 if s.is_fixed else self.budget * self.studies for s in spaces)
            raise ValueError(
                f"`budget` x `studies` x `runs` x `problems` must keep a suite within "
                f"{MAX_SUITE_RUNS:,} trained runs (MAX_SUITE_RUNS), got {configs} "
                f"configurations ({len(spaces)} algorithms, {self.budget} x {self.studies} "
                f"each with a search space) x {self.runs} runs x {len(self.problems)} "
                f"problems = {n:,}.")

    __hash__ = None

    def _check_networks(self, networks):
        from fastnet.experiment._protocol import _normalise_network

        if networks is None:
            return None
        if not isinstance(networks, dict):
            raise TypeError(f"`networks` must be a dict {{problem: network}} or None, got "
                            f"{type(networks).__name__}.")
        out = {}
        for p, n in networks.items():
            if p not in self.problems or self.is_generated(p):
                raise ValueError(f"`networks` must name Proben1 problems of the suite "
                                 f"({', '.join(self.problems)}), got {p!r}.")
            out[p] = _normalise_network(n)
        return {p: n for p, n in out.items() if n != self.network} or None

    def network_of(self, problem):
        """The network a Proben1 problem trains (``networks`` or ``network``).

        Parameters
        ----------
        problem : str
        """
        return (self.networks or {}).get(problem, self.network)

    @property
    def spaces(self):
        """The `SearchSpace` of each algorithm."""
        return self._spaces

    @property
    def n_runs(self):
        """Runs to train at most (before configurations that two studies share are
        counted once): the number `MAX_SUITE_RUNS` caps."""
        configs = sum(1 if s.is_fixed else self.budget * self.studies for s in self.spaces)
        return configs * self.runs * len(self.problems)

    def is_generated(self, problem):
        """Whether a problem is a generated task (judged by success, no validation set).

        Parameters
        ----------
        problem : str
        """
        return generated_task(problem) is not None

    def configurations(self):
        """{algorithm: [configurations of study 0, of study 1, ...]}: canonical texts."""
        return {a: [s.draw(self.budget, self.seed, k) for k in range(self.studies)]
                for a, s in zip(self.algorithms, self.spaces)}

    def identity(self, problem, data_sha256):
        """What makes a cell's runs the same: everything but the algorithms, budget and
        studies (a configuration drawn twice trains once).

        Parameters
        ----------
        problem : str
        data_sha256 : str or None
            SHA-256 of the Proben1 file's contents (None for a generated task): runs on
            other data are never taken for these.

        Returns
        -------
        dict
        """
        from fastnet._version import __version__

        base = {"fastnet": __version__, "seed": self.seed, "runs": self.runs,
                "problem": problem, "data_sha256": data_sha256,
                **({} if self.dtype == "float64" else {"dtype": self.dtype})}
        if self.is_generated(problem):
            return {**base, "success": GENERATED_SUCCESS, "limit": self.limit,
                    "init_scale": 1.0, "hidden_activation": "tanh",
                    "output_activation": "logistic"}
        return {**base, "network": self.network_of(problem), "max_epochs": self.max_epochs,
                "rule": "tables"}

    def cell_hash(self, problem, data_sha256, configuration):
        """SHA-256 (16 hex digits) of a cell: the identity and the configuration (and, for
        a rule of a rules file, :func:`fastnet.algorithms.load_rules`, the file's SHA-256:
        cells of an edited file are trained again).

        Parameters
        ----------
        problem : str
        data_sha256 : str or None
        configuration : str
            A canonical algorithm text.
        """
        from fastnet.training._rules_files import rules_key

        text = json.dumps({**self.identity(problem, data_sha256),
                           "algorithm": configuration, **rules_key(configuration)},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self):
        """The set-up as JSON values."""
        return {"problems": list(self.problems), "algorithms": list(self.algorithms),
                "budget": self.budget, "runs": self.runs, "studies": self.studies,
                "seed": self.seed, "network": self.network, "max_epochs": self.max_epochs,
                "limit": self.limit, "target": self.target, "rope": self.rope,
                "networks": self.networks, "dtype": self.dtype,
                "generated_success": GENERATED_SUCCESS,
                "configurations_drawn_by": "scrambled Halton points (scipy.stats.qmc.Halton) "
                "seeded by SeedSequence(seed, spawn_key=(sha(name), sha(text), study))",
                "run_seeds": "SeedSequence(seed, spawn_key=(sha(problem), sha(network), run, "
                "sha(configuration))), as fastnet.experiment.run_seed"}
