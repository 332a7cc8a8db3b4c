"""Experiments: problems x networks x runs under one master seed (Prechelt 1994's rules).

An *experiment* trains every network on every problem a number of times with
Proben1's RPROP set-up (Prechelt 1994). Each run's seed is derived from the master
seed and the run's identity (problem, network, run index) alone, so results do
not depend on the order, the number of processes or the machine pool that runs
them. Runs execute sequentially, in local processes (joblib) or on a Dask
cluster, through one code path (`joblib.Parallel` with the ``loky`` or
``dask`` backend).

Results are JSON lines: a header record with the complete set-up (the Proben1
checklist, fastnet version, machine and build flags), then one record per run,
appended, flushed and fsync'ed as soon as the run finishes. Running the same
experiment on the same file resumes it: finished runs are kept, missing ones run.
A crash can leave at most one incomplete last line; it is detected and cut off
(with a `ResultFileWarning`), never silently dropping a complete record. Files
are only ever replaced atomically (temporary file + ``os.replace``).

Network names
-------------
``"linear"``      no hidden layer (preset ``proben1-linear``)
``"pivot"``       Proben1's pivot architecture of the permutation (Prechelt 1994, Table 7)
``"noshortcut"``  the pivot's hidden sizes without shortcut connections
``"8+4 s"``       any Proben1 spec, with shortcut connections

Networks with hidden layers use preset ``proben1-multilayer``.

Examples
--------
>>> exp = Experiment(problems=("cancer1",), networks=("linear",), runs=2, seed=0)
>>> [t[:3] for t in exp.run_keys()]
[('cancer1', 'linear', 0), ('cancer1', 'linear', 1)]
>>> run_experiment(exp, "cancer1-linear.jsonl")          # doctest: +SKIP
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import platform
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from fastnet._files import atomic_write, exclusive_lock
from fastnet.exceptions import FileLockedError, ResultFileError

__all__ = [
    "Experiment",
    "ExperimentProgress",
    "ExperimentResult",
    "FORMAT",
    "FORMAT_VERSION",
    "NETWORK_KINDS",
    "FileLockedError",
    "ResultFile",
    "ResultFileError",
    "ResultFileWarning",
    "TIMING_FIELDS",
    "TRAIN_OPTIONS",
    "build_network",
    "check_max_epochs",
    "kernel_fingerprint",
    "training_arguments",
    "expand_problems",
    "read_results",
    "run_experiment",
    "run_seed",
    "strip_timing",
]

#: Value of the ``format`` field of every result file header.
FORMAT = "fastnet-results"
#: Version of the record layout; a file of another version is refused.
FORMAT_VERSION = 1
#: Named networks (besides Proben1 specs such as ``"8+4 s"``).
NETWORK_KINDS = ("linear", "pivot", "noshortcut")
#: Record fields that measure time, and where it was measured (a Dask worker may be
#: another machine), and so differ between otherwise identical runs.
TIMING_FIELDS = ("cpu_time", "wall_time", "host", "machine", "batch")
#: train_rprop arguments an experiment may override (all JSON numbers or strings).
TRAIN_OPTIONS = ("variant", "eta_plus", "eta_minus", "delta0", "delta_min", "delta_max",
                 "max_epochs", "init_scale")
#: Seconds to wait for a Dask scheduler to answer.
SCHEDULER_TIMEOUT = 10.0

_LINEAR_PRESET = "proben1-linear"
#: Readings of Proben1's multilayer set-up (`Experiment.rule`) and their presets:
#: "tables" reproduces the report's published results, "literal" follows its words
#: (see fastnet.stopping.proben1_multilayer and docs/reproduction.md).
MULTILAYER_RULES = {"tables": "proben1-multilayer", "literal": "proben1-multilayer-literal"}


class ResultFileWarning(UserWarning):
    """A result file was repaired (an incomplete last line was cut off) or is unusual."""


# --------------------------------------------------------------------------- names

def expand_problems(problems):
    """Turn problem names into Proben1 dataset names.

    Parameters
    ----------
    problems : str or sequence of str
        Dataset names (``"cancer1"``, ``"glass1d"``) or problem names
        (``"cancer"``, meaning permutations 1, 2 and 3), or ``"all"`` (the 45
        datasets).

    Returns
    -------
    tuple of str
        Dataset names in their preferred form, without duplicates, in the order given.

    Raises
    ------
    ValueError
        If a name is neither a problem nor a dataset (the message lists the problems).

    Examples
    --------
    >>> expand_problems(["cancer", "glass1d", "cancer1"])
    ('cancer1', 'cancer2', 'cancer3', 'glass1d')
    """
    from fastnet.datasets import PROBEN1_PROBLEMS, parse_proben1_name

    if isinstance(problems, str):
        problems = [problems]
    out = []
    for name in problems:
        if not isinstance(name, str):
            raise TypeError(f"`problems` must hold strings, got {name!r}.")
        key = name.strip().lower()
        if key == "all":
            names = [f"{p}{k}" for p in PROBEN1_PROBLEMS for k in (1, 2, 3)]
        elif key in PROBEN1_PROBLEMS:
            names = [f"{key}{k}" for k in (1, 2, 3)]
        else:
            problem, perm, part = parse_proben1_name(key)
            names = [f"{problem}{perm}" + ("" if part == "a" else part)]
        out.extend(n for n in names if n not in out)
    if not out:
        raise ValueError("`problems` must name at least one Proben1 problem, got none.")
    return tuple(out)


def _normalise_network(name):
    """Canonical network name: a kind of NETWORK_KINDS or a Proben1 spec."""
    from fastnet.network import MLP

    if not isinstance(name, str):
        raise TypeError(f"`networks` must hold strings, got {name!r}.")
    key = " ".join(name.strip().lower().split())
    if key in NETWORK_KINDS:
        return key
    try:
        spec = MLP.from_proben1(key, 1, 1).proben1_spec
    except ValueError:
        raise ValueError(
            f"`networks`: {name!r} is neither one of {', '.join(NETWORK_KINDS)} nor a Proben1 "
            "spec such as '8+4 l' or '16+0 s'.") from None
    return "linear" if spec == "0+0 l" else spec


def build_network(network, dataset, rule="tables"):
    """The network and RPROP preset of a run.

    Parameters
    ----------
    network : str
        ``"linear"``, ``"pivot"``, ``"noshortcut"`` or a Proben1 spec (``"8+4 s"``).
    dataset : fastnet.datasets.Dataset
        The Proben1 dataset (its pivot architecture and sizes are used).
    rule : {"tables", "literal"}, default "tables"
        Reading of the multilayer set-up (`MULTILAYER_RULES`).

    Returns
    -------
    net : MLP
        Fresh network (weights are drawn by training from the run's seed).
    preset : str
        ``"proben1-linear"`` for networks without hidden layers, else the
        multilayer preset of ``rule``.

    Raises
    ------
    ValueError
        If ``network`` is unknown, or ``"pivot"``/``"noshortcut"`` is asked for a
        problem without a pivot architecture (mushroom).
    """
    from fastnet.network import MLP

    name = _normalise_network(network)
    if name == "linear":
        net = MLP.from_proben1("linear", dataset.n_in, dataset.n_out)
    elif name in ("pivot", "noshortcut"):
        arch = dataset.architecture
        if arch is None:
            raise ValueError(
                f"`networks`: {name!r} is undefined for {dataset.name}: Proben1 Table 7 gives no "
                "pivot architecture for this problem; use 'linear' or a spec such as '16+8 l'.")
        net = MLP.from_proben1(arch.spec, dataset.n_in, dataset.n_out,
                               shortcut=(name == "pivot"))
    else:
        net = MLP.from_proben1(name, dataset.n_in, dataset.n_out)
    return net, (_LINEAR_PRESET if not net.hidden else MULTILAYER_RULES[rule])


#: Proben1's epoch limit; a smaller cap may be set with ``options={"max_epochs": n}``.
PROBEN1_MAX_EPOCHS = 3000
#: Proben1's strip length: criteria, and so an epoch cap, act at strip ends only.
PROBEN1_STRIP = 5


def check_max_epochs(n):
    """Check an epoch cap: a multiple of the strip length 5, at most Proben1's 3000."""
    from fastnet._validation import check_int

    n = check_int(n, "max_epochs", minimum=PROBEN1_STRIP)
    if n % PROBEN1_STRIP or n > PROBEN1_MAX_EPOCHS:
        raise ValueError(f"`max_epochs` must be a multiple of the strip length {PROBEN1_STRIP} "
                         f"and at most Proben1's {PROBEN1_MAX_EPOCHS}, got {n}.")
    return n


def training_arguments(preset, options):
    """``train_rprop`` keyword arguments of a run: the preset, the overrides, the stopping rule.

    Parameters
    ----------
    preset : str
        A key of `fastnet.rprop.PRESETS`.
    options : mapping
        Overrides (keys of `TRAIN_OPTIONS`).

    Returns
    -------
    dict
        ``preset``, the overrides, and with a ``max_epochs`` cap the stopping rule
        ``proben1_stopping(kind) | MaxEpochs(cap)``: the cap is then a stopping
        criterion that fires at a strip end (stop reason ``"max_epochs"``), as
        Proben1's own 3000-epoch limit does, not a cut that leaves the rule unmet.
    """
    from fastnet.rprop import PRESETS, proben1_stopping
    from fastnet.stopping import MaxEpochs

    kw = dict(options)
    kw["preset"] = preset
    if "max_epochs" in kw:
        kw["max_epochs"] = check_max_epochs(kw["max_epochs"])
        kw["stop"] = proben1_stopping(PRESETS[preset]["stop"]) | MaxEpochs(kw["max_epochs"])
    return kw


def _name_key(text):
    """A stable 64-bit integer from a name (for seed derivation)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def run_seed(master, problem, network, run):
    """The seed of one run, derived from the master seed and the run's identity only.

    Parameters
    ----------
    master : int
        Master seed of the experiment.
    problem, network : str
        Dataset name and network name as used by the experiment.
    run : int
        Run index, 0-based.

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(master, spawn_key=(key(problem), key(network), run))`` with
        ``key`` the first 8 bytes of the SHA-256 of the name. It does not depend on
        which other runs exist or in which order they run.

    Examples
    --------
    >>> s = run_seed(0, "cancer1", "linear", 3)
    >>> s.entropy, s.spawn_key[2]
    (0, 3)
    """
    return np.random.SeedSequence(int(master), spawn_key=(_name_key(problem),
                                                          _name_key(network), int(run)))


# --------------------------------------------------------------------------- experiment

@dataclass(frozen=True)
class Experiment:
    """Problems x networks x runs with Proben1's RPROP set-ups and one master seed.

    Attributes
    ----------
    problems : tuple of str
        Proben1 dataset names; problem names (``"cancer"``) expand to the three
        permutations and ``"all"`` to the 45 datasets (see `expand_problems`).
    networks : tuple of str
        ``"linear"``, ``"pivot"``, ``"noshortcut"`` or Proben1 specs (``"8+4 s"``).
    runs : int
        Runs per problem and network (Proben1 recommends 10, 30, 60, ...).
    seed : int
        Master seed; each run's seed comes from `run_seed`.
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
    """

    problems: tuple
    networks: tuple = ("pivot",)
    runs: int = 10
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    keep_predictions: bool = False
    root: str | None = None
    rule: str = "tables"

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
        object.__setattr__(self, "runs", check_int(self.runs, "runs", minimum=1))
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

    __hash__ = None  # options is a dict

    def run_keys(self):
        """``(problem, network, run)`` of every run, in a fixed order."""
        return [(p, n, r) for p in self.problems for n in self.networks for r in range(self.runs)]

    def identity(self):
        """What makes runs of this experiment comparable: stored in, and checked against, headers.

        Returns
        -------
        dict
            Algorithm, preset choice rule, option overrides, master seed, whether
            predictions are kept, fastnet version and record format version. The
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
                "fastnet": __version__, "format_version": FORMAT_VERSION}

    def setup_hash(self):
        """SHA-256 (hex, 16 digits) of `identity`; every record carries it."""
        return _hash(self.identity())


def _hash(obj):
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def _load(problem, root):
    from fastnet.datasets import load_proben1

    return load_proben1(problem, root)


def _checklist(experiment, datasets):
    """The Proben1 checklist (Prechelt 1994) of every (problem, network) cell."""
    from fastnet.rprop import PRESETS, proben1_stopping

    cells = {}
    for problem in experiment.problems:
        ds = datasets[problem]
        for network in experiment.networks:
            net, preset = build_network(network, ds, experiment.rule)
            params = dict(PRESETS[preset])
            params.update(experiment.options)
            init = params.pop("init_scale")
            stop = training_arguments(preset, experiment.options).get(
                "stop", proben1_stopping(params.pop("stop")))
            params.pop("stop", None)
            max_epochs = params.pop("max_epochs")
            strip = params.pop("strip")
            cells[f"{problem}/{network}"] = {
                "problem": problem, "partitioning": ds.partitioning,
                "data": {"n_train": ds.n_train, "n_valid": ds.n_valid, "n_test": ds.n_test,
                         "kind": ds.kind},
                "network": {"name": network, "spec": net.proben1_spec, "repr": repr(net),
                            "layer_sizes": list(net.layer_sizes), "shortcut": net.shortcut,
                            "n_connections": net.n_connections,
                            "hidden_activation": net.hidden_activation,
                            "output_activation": net.output_activation},
                "initialisation": f"uniform in [-{init}, {init}] from the run's seed",
                "algorithm": f"RPROP ({params['variant']}), epoch-batched",
                "preset": preset, "parameters": params,
                "stopping": stop.name, "stopping_rule": stop.to_dict(), "strip": strip,
                "max_epochs": max_epochs,
                "reported_network": "the one with the lowest validation error (early stopping)",
                "error_function": "summed squared error (no 1/2); reported as squared error "
                                  "percentage with o_min=0, o_max=1; classification by "
                                  "winner-takes-all",
            }
    return cells


@functools.lru_cache(maxsize=1)
def kernel_fingerprint():
    """SHA-256 (16 hex digits) of the compiled kernel files in use.

    Runs from different builds may differ in the last bits and in speed; a result
    file records this so that a resume on another build can say so.
    """
    import fastnet._kernels as kernels

    h = hashlib.sha256()
    folder = Path(kernels.__file__).parent
    for f in sorted(folder.iterdir()):
        if f.suffix in (".so", ".pyd"):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _header(experiment, datasets):
    from fastnet._training import build_flags, machine_description

    return {
        "type": "header", "format": FORMAT, "format_version": FORMAT_VERSION,
        "setup_hash": experiment.setup_hash(), "identity": experiment.identity(),
        "grid": {"problems": list(experiment.problems), "networks": list(experiment.networks),
                 "runs": experiment.runs},
        "runs_rule": ("every run of a (problem, network) cell is an independent training from "
                      "its own seed, SeedSequence(master, spawn_key=(sha(problem), sha(network), "
                      "run)); no run is excluded or restarted; reports may exclude exactly the "
                      "worst half by validation error (Prechelt 1994)"),
        "checklist": _checklist(experiment, datasets),
        "data": {p: {"file": datasets[p].path.name, "sha256": datasets[p].sha256,
                     "matches_published": datasets[p].matches_published}
                 for p in experiment.problems},
        "version": experiment.identity()["fastnet"],
        "machine": machine_description(),
        "build": build_flags(),
        "kernels_sha256": kernel_fingerprint(),
        "python": platform.python_version(), "numpy": np.__version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# --------------------------------------------------------------------------- one run

@dataclass(frozen=True)
class _Task:
    problem: str
    network: str
    runs: tuple
    master: int
    options: dict
    keep_predictions: bool
    root: str | None
    setup_hash: str
    rule: str = "tables"
    one_per_call: bool = False


def _run_task(task):
    """Train the runs of one task (one cell's runs) and return their records (in a worker).

    The runs train in one `train_rprop_many` call (whatever their number, so
    that a record does not depend on how the runs were batched or resumed), or
    with ``one_per_call`` in one `train_rprop` call each.
    """
    from fastnet import train_rprop, train_rprop_many

    ds = _load(task.problem, task.root)
    nets, preset = [], None
    for _ in task.runs:
        net, preset = build_network(task.network, ds, task.rule)
        nets.append(net)
    seeds = [run_seed(task.master, task.problem, task.network, r) for r in task.runs]
    # No warnings.catch_warnings() here: it is not thread-safe (Dask runs tasks in
    # threads). An epoch cap is part of the stopping rule instead (training_arguments).
    kw = dict(X_test=ds.test[0], Y_test=ds.test[1], **training_arguments(preset, task.options))
    if task.one_per_call:
        results = [train_rprop(net, *ds.train, *ds.valid, seed=seed, **kw)
                   for net, seed in zip(nets, seeds)]
        batch = {"runs": 1, "method": "train_rprop"}
    else:
        results = train_rprop_many(nets, *ds.train, *ds.valid, seeds=seeds, **kw)
        batch = {"runs": len(nets), "method": results[0].setup["batch"]["method"]}
    return [_record(task, run, seed, net, preset, r, batch, ds)
            for run, seed, net, r in zip(task.runs, seeds, nets, results)]


def _record(task, run, seed, net, preset, r, batch, ds):
    from fastnet._training import machine_description

    def errors(s):
        return {"squared_error_percentage": s.squared_error_percentage,
                "classification_error": s.classification_error}

    record = {
        "type": "run", "setup_hash": task.setup_hash,
        "problem": task.problem, "network": task.network, "run": run,
        "seed": {"entropy": task.master, "spawn_key": [int(k) for k in seed.spawn_key]},
        "architecture": net.proben1_spec, "shortcut": net.shortcut,
        "n_connections": net.n_connections, "preset": preset,
        "train": errors(r.final_train), "val": errors(r.final_val), "test": errors(r.final_test),
        "epochs": r.epochs, "relevant_epoch": r.relevant_epoch, "stop_reason": r.stop_reason,
        "gl_end": r.gl_end, "min_train_error": r.min_train_error,
        "min_val_error": r.min_val_error,
        "traversals": r.traversals.to_dict(),
        "cpu_time": r.cpu_time, "wall_time": r.wall_time,
        "host": platform.node(), "machine": machine_description(), "batch": batch,
    }
    if task.keep_predictions:
        X_test, T_test = ds.test
        pred = np.argmax(net.predict(X_test), axis=1)
        record["test_predictions"] = [int(c) for c in pred]
        if ds.kind == "classification":
            record["test_wrong"] = "".join(
                "1" if w else "0" for w in pred != np.argmax(T_test, axis=1))
    return record


def strip_timing(record):
    """A copy of ``record`` without the fields of `TIMING_FIELDS` (for comparisons)."""
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}


# --------------------------------------------------------------------------- files

@dataclass(frozen=True)
class ResultFile:
    """A result file as read by `read_results`.

    Attributes
    ----------
    path : pathlib.Path
    header : dict
        The header record (set-up, version, machine, build flags).
    records : tuple of dict
        Run records in file order; duplicates of a run (which only a concurrent
        writer could cause) are dropped after the first, with a warning.
    partial_bytes : int
        Length of an incomplete last line (a crash mid-write), 0 if none. It is not
        part of ``records``.
    """

    path: Path
    header: dict
    records: tuple
    partial_bytes: int = 0

    def keys(self):
        """Set of ``(problem, network, run)`` present."""
        return {(r["problem"], r["network"], r["run"]) for r in self.records}

    def cells(self):
        """``{(problem, network): [records sorted by run]}`` in header-grid order."""
        out = {}
        for r in sorted(self.records, key=lambda r: r["run"]):
            out.setdefault((r["problem"], r["network"]), []).append(r)
        grid = self.header.get("grid", {})
        pos_p = {p: i for i, p in enumerate(grid.get("problems", []))}
        pos_n = {n: i for i, n in enumerate(grid.get("networks", []))}
        return dict(sorted(out.items(), key=lambda kv: (pos_p.get(kv[0][0], 1 << 30), kv[0][0],
                                                          pos_n.get(kv[0][1], 1 << 30), kv[0][1])))


_RUN_FIELDS = ("problem", "network", "run", "train", "val", "test", "epochs", "relevant_epoch",
               "stop_reason", "gl_end", "traversals", "cpu_time")


def _parse_lines(path, data):
    """Split file bytes into (header, records, good_length, partial_bytes)."""
    if not data:
        raise ResultFileError(f"{path}: the file is empty; it is not a fastnet result file "
                              "(delete it, or give another file).")
    lines = data.split(b"\n")
    tail = lines.pop()  # bytes after the last newline: b"" unless the last line is partial
    partial = len(tail)
    if partial and not lines:
        raise ResultFileError(f"{path}: no complete header line; it is not a fastnet result file "
                              "(or one killed before its header was written: delete it).")
    header, records, seen = None, [], set()
    for i, raw in enumerate(lines, start=1):
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            what = "the header" if i == 1 else "a record"
            raise ResultFileError(
                f"{path}:{i}: {what} is not valid JSON ({exc}); fastnet never writes such a "
                "line, so the file was changed by something else. Fix or remove the line.") from None
        if i == 1:
            if not isinstance(obj, dict) or obj.get("format") != FORMAT or obj.get("type") != "header":
                raise ResultFileError(f"{path}:1: not a fastnet result file (the first line must "
                                      f"be a header with \"format\": \"{FORMAT}\").")
            if obj.get("format_version") != FORMAT_VERSION:
                raise ResultFileError(
                    f"{path}:1: result format version {obj.get('format_version')!r}; this fastnet "
                    f"reads version {FORMAT_VERSION}.")
            header = obj
            continue
        if not isinstance(obj, dict) or obj.get("type") != "run":
            raise ResultFileError(f"{path}:{i}: expected a run record (\"type\": \"run\"), "
                                  f"got {raw[:60]!r}.")
        missing = [k for k in _RUN_FIELDS if k not in obj]
        if missing:
            raise ResultFileError(f"{path}:{i}: run record lacks the fields {missing}.")
        if obj.get("setup_hash") != header.get("setup_hash"):
            raise ResultFileError(f"{path}:{i}: run record of set-up {obj.get('setup_hash')!r} in "
                                  f"a file of set-up {header.get('setup_hash')!r}.")
        key = (obj["problem"], obj["network"], obj["run"])
        if key in seen:
            warnings.warn(f"{path}:{i}: second record of run {key}; keeping the first.",
                          ResultFileWarning, stacklevel=3)
            continue
        seen.add(key)
        records.append(obj)
    return header, records, len(data) - partial, partial


def read_results(path):
    """Read a result file written by `run_experiment`.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    ResultFile

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ResultFileError
        If the file is empty, has no valid header, a complete line is not valid JSON
        or not a run record of this file's set-up.

    Warns
    -----
    ResultFileWarning
        If the last line is incomplete (a crash while writing). It is ignored here;
        the next `run_experiment` on the file cuts it off and reruns that run.
    """
    path = Path(os.fspath(path))
    data = path.read_bytes()
    header, records, _, partial = _parse_lines(path, data)
    if partial:
        warnings.warn(f"{path}: the last line is incomplete ({partial} bytes; a run was "
                      "interrupted while being written) and is ignored; rerunning the "
                      "experiment on this file repairs it.", ResultFileWarning, stacklevel=2)
    return ResultFile(path=path, header=header, records=tuple(records), partial_bytes=partial)


def _line(obj):
    return (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")


def _check_identity(path, header, experiment, datasets):
    old, new = header.get("identity", {}), experiment.identity()
    diff = [f"{k}: file has {old.get(k)!r}, this experiment {new.get(k)!r}"
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    if diff:
        raise ResultFileError(
            f"{path}: the file holds runs of a different set-up ({'; '.join(diff)}). Rerun with "
            "the file's settings to resume it, or write to another file.")
    for p, info in header.get("data", {}).items():
        if p in datasets and info.get("sha256") != datasets[p].sha256:
            raise ResultFileError(
                f"{path}: the data file of {p} ({datasets[p].path}) differs from the one the "
                f"file's runs used (SHA-256 {info.get('sha256')}); use the same data or another "
                "result file.")


def _prepare_file(path, experiment, datasets):
    """Create, repair, check or extend the file; return the records already there."""
    header = _header(experiment, datasets)
    if not path.exists() or path.stat().st_size == 0:
        atomic_write(path, [_line(header)])
        return []
    data = path.read_bytes()
    old, records, good, partial = _parse_lines(path, data)
    _check_identity(path, old, experiment, datasets)
    grid = old.get("grid", {})
    new_grid = {
        "problems": list(grid.get("problems", [])) + [p for p in experiment.problems
                                                      if p not in grid.get("problems", [])],
        "networks": list(grid.get("networks", [])) + [n for n in experiment.networks
                                                      if n not in grid.get("networks", [])],
        "runs": max(int(grid.get("runs", 0)), experiment.runs),
    }
    if partial:
        warnings.warn(f"{path}: cut off an incomplete last line ({partial} bytes, a run that was "
                      "being written when the process died); that run is rerun.",
                      ResultFileWarning, stacklevel=3)
    if new_grid != grid:
        merged = dict(old)
        merged["grid"] = new_grid
        merged["checklist"] = {**old.get("checklist", {}), **header["checklist"]}
        merged["data"] = {**old.get("data", {}), **header["data"]}
        if old.get("machine") != header["machine"]:
            merged.setdefault("other_machines", [])
            if header["machine"] not in merged["other_machines"]:
                merged["other_machines"].append(header["machine"])
        first_nl = data.index(b"\n") + 1
        atomic_write(path, [_line(merged), data[first_nl:good]])
    elif partial:
        atomic_write(path, [data[:good]])
    if old.get("kernels_sha256") != header["kernels_sha256"]:
        warnings.warn(f"{path}: the compiled kernels differ from the build that wrote the file's "
                      "runs; new runs may differ in the last bits and in speed.",
                      ResultFileWarning, stacklevel=3)
    if old.get("machine") != header["machine"]:
        warnings.warn(f"{path}: resumed on another machine ({header['machine']}) than the file's "
                      f"({old.get('machine')}); its CPU times now mix machines.",
                      ResultFileWarning, stacklevel=3)
    return records


# --------------------------------------------------------------------------- running

@dataclass(frozen=True)
class ExperimentProgress:
    """What a progress callback of `run_experiment` receives after every finished run.

    Attributes
    ----------
    done : int
        Runs finished in this call.
    todo : int
        Runs this call had to do (missing from the file at the start).
    n_resumed : int
        Runs that were already in the file.
    elapsed : float
        Wall seconds since the runs started.
    record : dict
        The record just written.
    median_test_error : float
        Median test squared error percentage over all records so far.
    """

    done: int
    todo: int
    n_resumed: int
    elapsed: float
    record: dict
    median_test_error: float

    @property
    def eta(self):
        """Estimated wall seconds left (from the mean time per run so far)."""
        return self.elapsed / self.done * (self.todo - self.done) if self.done else math.inf


@dataclass(frozen=True)
class ExperimentResult:
    """Outcome of `run_experiment`.

    Attributes
    ----------
    path : pathlib.Path
    experiment : Experiment
    records : tuple of dict
        All run records of the experiment's grid (resumed and new), sorted by
        (problem, network, run).
    n_new, n_resumed : int
        Runs computed now, and runs found in the file.
    backend : str
        ``"sequential"``, ``"loky"`` (local processes) or ``"dask"``.
    wall_time : float
        Wall seconds of this call's runs.
    """

    path: Path
    experiment: Experiment
    records: tuple
    n_new: int
    n_resumed: int
    backend: str
    wall_time: float


def _client(scheduler):
    try:
        from dask.distributed import Client
    except ImportError:
        raise ImportError("running on a Dask cluster needs dask.distributed: "
                          "pip install 'fastnet[dask]'") from None
    if isinstance(scheduler, str):
        try:
            return Client(scheduler, timeout=SCHEDULER_TIMEOUT, set_as_default=False), True
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"`scheduler`: could not reach a Dask scheduler at {scheduler!r} "
                                  f"within {SCHEDULER_TIMEOUT:g} s ({exc}).") from None
    if type(scheduler).__name__ != "Client":
        raise TypeError(f"`scheduler` must be an address such as 'tcp://host:8786' or a "
                        f"dask.distributed.Client, got {scheduler!r}.")
    return scheduler, False


#: Runs of one (problem, network) cell trained together by default (`run_experiment`).
BATCH_SIZE = 16


def run_experiment(experiment, path, *, jobs=1, scheduler=None, progress=None,
                   batch_size=BATCH_SIZE):
    """Run the missing runs of ``experiment``, appending their records to ``path``.

    Parameters
    ----------
    experiment : Experiment
    path : str or os.PathLike
        Result file (JSON lines). Created with a header if absent; if it exists it
        must hold runs of the same set-up (`Experiment.identity`), and only runs
        missing from it are trained. A larger grid (more problems, networks or
        runs) extends the file.
    jobs : int, default=1
        Local worker processes (joblib ``loky``); 1 runs in this process, -1 uses
        every core. Ignored with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Run on a Dask cluster: a scheduler address (``"tcp://host:8786"``) or a
        client. The workers need fastnet and the data under ``experiment.root``
        (or their ``$FASTNET_DATA``).
    progress : callable, optional
        ``progress(ExperimentProgress)`` after each record is written.
    batch_size : int, default `BATCH_SIZE` (16)
        Runs of one (problem, network) cell trained in one call of
        `fastnet.train_rprop_many` (narrow networks side by side in vector lanes):
        each record is what one `train_rprop` call gives (to rounding), and a
        killed experiment loses at most the batches in flight. Records do not
        depend on the batch size or on interruptions. 1 trains one run per
        `train_rprop` call instead, for comparison (its records differ from the
        batched ones in the last bits where the lanes ran). Each record says how
        it was trained (``"batch"``, one of `TIMING_FIELDS`).

    Returns
    -------
    ExperimentResult

    Raises
    ------
    FileNotFoundError
        If a Proben1 file is missing (the message says how to fetch the data),
        or the result file's directory does not exist.
    FileLockedError
        If another process is writing the file (a `ResultFileError`; the lock
        dies with its process, so after a crash the next writer resumes).
    ResultFileError
        If the file is malformed or belongs to another set-up.
    ConnectionError
        If the Dask scheduler cannot be reached.

    Warns
    -----
    ResultFileWarning
        If an incomplete last line (a crash mid-write) was cut off.

    Notes
    -----
    Each record is written with one ``write``, then flushed and fsync'ed, as its
    run finishes, so a killed experiment loses at most the runs in flight. Seeds
    depend only on (master seed, problem, network, run index) (`run_seed`), so
    the records are the same whatever ``jobs`` or backend, and the same as an
    uninterrupted run after any number of interruptions; only ``cpu_time``,
    ``wall_time`` and where they were measured, ``host`` and ``machine``
    (`TIMING_FIELDS`), differ.
    """
    import joblib

    from fastnet._validation import check_int

    if not isinstance(experiment, Experiment):
        raise TypeError(f"`experiment` must be a fastnet.experiment.Experiment, "
                        f"got {type(experiment).__name__}.")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    jobs = check_int(jobs, "jobs")
    if jobs == 0 or jobs < -1:
        raise ValueError(f"`jobs` must be >= 1 or -1 (all cores), got {jobs}.")
    path = Path(os.fspath(path))
    if path.is_dir():
        raise ResultFileError(f"{path}: is a directory; give a result file name such as "
                              "results.jsonl.")
    if not path.parent.is_dir():
        # Like `open`: a typo in a directory name must not create a tree of them.
        raise FileNotFoundError(f"{path.parent}: no such directory for the result file "
                                f"{path.name}; create it first.")
    # Load (and so check) every dataset and network here, before any work starts.
    datasets = {p: _load(p, experiment.root) for p in experiment.problems}
    for p in experiment.problems:
        for n in experiment.networks:
            build_network(n, datasets[p])

    with exclusive_lock(path):
        existing = _prepare_file(path, experiment, datasets)
        done_keys = {(r["problem"], r["network"], r["run"]) for r in existing}
        wanted = set(experiment.run_keys())
        setup_hash = experiment.setup_hash()
        todo = [(p, n, r) for (p, n, r) in experiment.run_keys() if (p, n, r) not in done_keys]
        tasks = []
        for (p, n) in dict.fromkeys((p, n) for p, n, _ in todo):
            runs = [r for (pp, nn, r) in todo if (pp, nn) == (p, n)]
            for i in range(0, len(runs), batch_size):
                tasks.append(_Task(p, n, tuple(runs[i:i + batch_size]), experiment.seed,
                                   experiment.options, experiment.keep_predictions,
                                   experiment.root, setup_hash, experiment.rule,
                                   one_per_call=batch_size == 1))
        # Longest tasks first (cost ~ patterns x connections x runs), so that a few long
        # ones do not end up last on one worker. Results do not depend on the order.
        cost = {(p, n): datasets[p].n_train * build_network(n, datasets[p])[0].n_connections
                for p in experiment.problems for n in experiment.networks}
        tasks.sort(key=lambda t: -cost[(t.problem, t.network)] * len(t.runs))
        kept = [r for r in existing if (r["problem"], r["network"], r["run"]) in wanted]
        test_errors = sorted(r["test"]["squared_error_percentage"] for r in existing)
        new = []

        client, own_client = (None, False)
        if scheduler is not None:
            client, own_client = _client(scheduler)
            backend, config = "dask", {"backend": "dask", "client": client, "n_jobs": -1}
        elif jobs == 1:
            backend, config = "sequential", {"backend": "sequential", "n_jobs": 1}
        else:
            backend, config = "loky", {"backend": "loky", "n_jobs": jobs}
        start = time.perf_counter()
        try:
            if tasks:
                with open(path, "ab") as f, joblib.parallel_config(**config):
                    fd = f.fileno()
                    # batch_size=1: joblib's automatic batching would bundle the many
                    # short runs' successors (e.g. all long mushroom runs) on one worker.
                    results = joblib.Parallel(return_as="generator_unordered", batch_size=1)(
                        joblib.delayed(_run_task)(t) for t in tasks)
                    for batch in results:
                        for record in batch:
                            _write_record(fd, _line(record))
                            new.append(record)
                            _insort(test_errors, record["test"]["squared_error_percentage"])
                            if progress is not None:
                                progress(ExperimentProgress(
                                    done=len(new), todo=len(todo), n_resumed=len(kept),
                                    elapsed=time.perf_counter() - start, record=record,
                                    median_test_error=float(np.median(test_errors))))
        finally:
            if own_client:
                client.close()
        wall = time.perf_counter() - start

    records = sorted(kept + new, key=lambda r: (experiment.problems.index(r["problem"]),
                                                experiment.networks.index(r["network"]), r["run"]))
    return ExperimentResult(path=path, experiment=experiment, records=tuple(records),
                            n_new=len(new), n_resumed=len(kept), backend=backend, wall_time=wall)


def _insort(sorted_list, value):
    import bisect

    bisect.insort(sorted_list, value)


def _write_record(fd, line):
    """Append one record with a single write (retried if short), flush and fsync."""
    view = memoryview(line)
    while view:
        n = os.write(fd, view)
        view = view[n:]
    os.fsync(fd)

