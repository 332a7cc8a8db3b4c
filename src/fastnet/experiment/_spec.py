"""The specification of an experiment: problems x networks x runs, options, seed, rule."""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from fastnet._validation import check_count
from fastnet.experiment._protocol import (
    _LINEAR_PRESET, DEFAULT_ALGORITHM, MULTILAYER_RULES, TRAIN_OPTIONS, _normalise_network,
    check_max_epochs, expand_problems, normalise_algorithm,
)
from fastnet.experiment._resultfile import FORMAT_VERSION


#: Most runs per problem and network (`Experiment.runs`): 10,000, far beyond
#: Proben1's 60 and the hundreds of trials of Hamey (1992); every run's identity
#: and record are held in memory.
MAX_RUNS = 10_000
#: Most runs of a whole grid (problems x networks x runs), 100,000: records of
#: a few kB each, all held in memory and in the result file.
MAX_GRID_RUNS = 100_000


@dataclass(frozen=True)
class Experiment:
    """Problems x networks x algorithms x runs with Proben1's set-ups and one master seed.

    Attributes
    ----------
    problems : tuple of str
        Proben1 dataset names; problem names (``"cancer"``) expand to the three
        permutations and ``"all"`` to the 45 datasets (see `expand_problems`).
    networks : tuple of str
        ``"linear"``, ``"pivot"``, ``"noshortcut"`` or Proben1 specs (``"8+4 s"``).
    runs : int
        Runs per problem and network (Proben1 recommends 10, 30, 60, ...), from
        1 to `MAX_RUNS`; the grid holds at most `MAX_GRID_RUNS` runs.
    seed : int
        Master seed; each run's seed comes from `run_seed`.
    algorithms : tuple of str
        The algorithms with their parameters (:func:`fastnet.algorithms.from_spec`
        texts or objects), kept in their canonical form
        (:func:`fastnet.algorithms.spec_of`); default ``("rprop+",)``, Proben1's
        RPROP presets. An RPROP's parameters that differ from RPROP's defaults
        override the preset (and ``options``); any other algorithm trains under the
        preset's initial weights, strips, epoch limit and stopping rule
        (`algorithm_arguments`). A list of values is a parameter grid, one
        algorithm per cell (``"backprop(learning_rate=[0.1, 0.5])"``; see
        :func:`fastnet.study.expand_grid`). Like problems and networks, not part of
        the set-up's identity: more algorithms extend a file.
    options : mapping
        Overrides of the preset's `train_rprop` arguments (keys of
        `TRAIN_OPTIONS`, e.g. ``{"max_epochs": 300}`` or ``{"variant": "irprop+"}``).
        Part of the set-up: a result file holds runs of one set-up only.
    keep_predictions : bool
        Store each run's per-example test predictions (winner-takes-all class
        indices) for Lacoste's tests.
    root : str or None
        Data directory of the Proben1 files (default: ``$FASTNET_DATA``, then the
        user cache). Not part of the set-up; the data files' SHA-256 are.
    rule : {"tables", "literal"}
        Which reading of Proben1's multilayer set-up trains networks with hidden
        layers (`MULTILAYER_RULES`): ``"tables"`` (default) reproduces the report's
        published results, ``"literal"`` follows its wording. Part of the set-up.
    dtype : {"float64", "float32"}
        The networks' value type (``MLP(..., dtype=...)``), kept as its name;
        default ``"float64"``. Part of the set-up: a file of float64 runs is not
        resumed in float32, nor the other way round (the identity of a float64
        experiment is what it was before float32 existed, so older files resume).
    """

    problems: tuple
    networks: tuple = ("pivot",)
    runs: int = 10
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    keep_predictions: bool = False
    root: str | None = None
    rule: str = "tables"
    algorithms: tuple = (DEFAULT_ALGORITHM,)
    dtype: str = "float64"

    def __post_init__(self):
        from fastnet._validation import check_int

        object.__setattr__(self, "problems", expand_problems(self.problems))
        nets = [self.networks] if isinstance(self.networks, str) else list(self.networks)
        if not nets:
            raise ValueError("`networks` must name at least one network, got none.")
        canon = []
        for n in nets:
            c = _normalise_network(n)
            if c not in canon:
                canon.append(c)
        object.__setattr__(self, "networks", tuple(canon))
        algos = [self.algorithms] if isinstance(self.algorithms, str) else list(self.algorithms)
        if not algos:
            raise ValueError("`algorithms` must name at least one algorithm, got none.")
        from fastnet._grids import expand_grid, grid_size

        object.__setattr__(self, "runs", check_count(self.runs, "runs", MAX_RUNS))
        # The grid's size, counted before any algorithm cell is made (cells as written,
        # duplicates included); the largest factor is the argument blamed.
        sizes = {"problems": len(self.problems), "networks": len(self.networks),
                 "algorithms": sum(map(grid_size, algos)), "runs": self.runs}
        if math.prod(sizes.values()) > MAX_GRID_RUNS:
            _refuse_grid(sizes)
        object.__setattr__(self, "algorithms", tuple(dict.fromkeys(
            normalise_algorithm(cell) for a in algos for cell in expand_grid(a))))
        object.__setattr__(self, "seed", check_int(self.seed, "seed", minimum=0))
        if not isinstance(self.options, Mapping):
            raise TypeError(f"`options` must be a mapping, got {type(self.options).__name__}.")
        unknown = sorted(set(self.options) - set(TRAIN_OPTIONS))
        if unknown:
            raise ValueError(f"`options` has unknown keys {unknown}; valid keys are "
                             f"{', '.join(TRAIN_OPTIONS)}.")
        opts = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(self.options.items())
                if v is not None}
        if "max_epochs" in opts:
            opts["max_epochs"] = check_max_epochs(opts["max_epochs"])
        try:
            json.dumps(opts)
        except TypeError:
            raise TypeError(f"`options` values must be JSON numbers, strings or lists, "
                            f"got {self.options!r}.") from None
        object.__setattr__(self, "options", opts)
        if not isinstance(self.keep_predictions, (bool, np.bool_)):
            raise TypeError(f"`keep_predictions` must be a bool, got {self.keep_predictions!r}.")
        object.__setattr__(self, "keep_predictions", bool(self.keep_predictions))
        if self.root is not None:
            object.__setattr__(self, "root", os.fspath(self.root))
        from fastnet._validation import check_choice

        check_choice(self.rule, "rule", MULTILAYER_RULES)
        from fastnet._network_layout import check_dtype

        object.__setattr__(self, "dtype", check_dtype(self.dtype).name)

    __hash__ = None  # options is a dict

    def run_keys(self):
        """``(problem, network, run, algorithm)`` of every run, in a fixed order."""
        return [(p, n, r, a) for p in self.problems for n in self.networks
                for a in self.algorithms for r in range(self.runs)]

    def identity(self):
        """What makes runs of this experiment comparable: stored in, and checked against, headers.

        Returns
        -------
        dict
            Algorithm, preset choice rule, option overrides, master seed, whether
            predictions are kept, fastnet version and record format version, and
            the dtype if it is not float64. The
            grid (problems, networks, runs) is *not* part of it: a rerun with more
            problems, networks or runs extends the file.
        """
        from fastnet._version import __version__
        from fastnet.rprop import PRESETS

        multilayer = MULTILAYER_RULES[self.rule]
        return {"algorithm": "train_rprop",
                "presets": {"linear networks": _LINEAR_PRESET,
                            "multilayer networks": multilayer},
                "preset_parameters": {p: {k: (list(v) if isinstance(v, tuple) else v)
                                          for k, v in PRESETS[p].items()}
                                      for p in (_LINEAR_PRESET, multilayer)},
                "multilayer_rule": self.rule,
                "options": dict(self.options), "seed": self.seed,
                "keep_predictions": self.keep_predictions,
                "fastnet": __version__, "format_version": FORMAT_VERSION,
                **({} if self.dtype == "float64" else {"dtype": self.dtype})}

    def setup_hash(self):
        """SHA-256 (hex, 16 digits) of `identity`; every record carries it."""
        return _hash(self.identity())


def _refuse_grid(sizes):
    """The ValueError of a grid beyond MAX_GRID_RUNS, blaming its largest factor."""
    blamed = max(reversed(list(sizes)), key=sizes.get)    # (ties: the later argument)
    n = math.prod(sizes.values())
    raise ValueError(
        f"`{blamed}` must keep the grid within {MAX_GRID_RUNS} runs (MAX_GRID_RUNS), got "
        f"{sizes['problems']} problems x {sizes['networks']} networks x "
        f"{sizes['algorithms']} algorithms (grid cells, counted before any is made) x "
        f"{sizes['runs']} runs = {n}.")


def _hash(obj):
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
