"""Running an experiment: tasks, joblib and Dask back-ends, progress, resuming."""
from __future__ import annotations

import math
import os
import platform
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastnet._files import atomic_write, exclusive_lock
from fastnet.exceptions import ResultFileError
from fastnet.experiment._protocol import (
    DEFAULT_ALGORITHM, algorithm_arguments, build_network, run_seed,
)
from fastnet.experiment._provenance import _header, _load
from fastnet.experiment._resultfile import (
    ResultFileWarning, _line, _parse_lines, run_key,
)
from fastnet._validation import check_count
from fastnet.experiment._spec import Experiment
from fastnet.experiment._workers import (  # (suite/_run.py imports them from here too)
    _check_address, joblib_backend,
)


#: Most local worker processes of `run_experiment` (``jobs``): each imports
#: NumPy and fastnet (tens of MB), and more processes than cores only share them.
MAX_JOBS = 256
#: Runs of a cell that `run_experiment` trains in method ``"mixed"`` (see
#: `_cell_method`) train in fixed blocks by run index, block b being runs
#: b * MIXED_BLOCK to (b + 1) * MIXED_BLOCK - 1 (the last one up to the experiment's
#: last run), each block in one `train_rprop_many` call: when a run is handed from the
#: lanes to the single-network kernels depends on the other runs of its call, so a
#: call's runs must not depend on the batch size, resuming or ``jobs``. 30 divides
#: Proben1's 60 runs, holds Proben1's 10 of linear networks in one block, and fills 4
#: groups of 8 lanes to 15/16. CPU seconds for 60 runs of the pivot network in blocks
#: of 15/20/30/60, against one call of 60 in lanes (and batches of 16 in lanes, as
#: experiments trained before, scaled from 64 runs):
#: soybean1 5.29/5.34/5.22/5.10, lanes 5.11 (5.8); diabetes1 0.227/0.239/0.228/0.220,
#: lanes 0.212 (0.26); heart1 0.193/0.192/0.188/0.179, lanes 0.179 (0.198); card1
#: 0.112/0.113/0.106/0.106, lanes 0.115 (0.124); thyroid1 (3600 examples)
#: 7.21/7.02/6.98/6.83, one call per run 7.4.
MIXED_BLOCK = 30


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
    algorithm: str = DEFAULT_ALGORITHM
    method: str | None = None       # the cell's `_cell_method` (None: the rule has no lanes)
    blocks: tuple = ()              # "mixed": the blocks to train, as (first run, stop)
    dtype: str = "float64"          # the networks' value type


def _cell_method(n_train, n_connections):
    """How `run_experiment` trains the runs of a cell: ``"lanes"``, ``"mixed"`` or ``"serial"``.

    The `fastnet.train_rprop_many` method of a cell, chosen from the cell alone
    (training examples, connections), never from the number of runs in a batch, as
    ``"auto"`` chooses: lanes where training examples x connections is at most
    ``LANES_MAX_WORK``, lanes with a hand-off of the last runs to the single-network
    kernels (``"mixed"``) beyond it up to ``LANES_MAX_CONNECTIONS`` connections (both
    of ``fastnet.training._many_trials``), one run after another in the single-network
    kernels beyond that. A run's arithmetic in the lanes is its own lane's, and in
    ``"serial"`` its own, so in those a record does not depend on which runs share
    its call. In ``"mixed"`` it does (a run handed on sums its errors in another
    order from then on, and when it is handed on depends on when the others stop),
    so those runs train in fixed blocks of `MIXED_BLOCK` by run index (`_tasks`).

    CPU seconds for 60 runs (10 of linear networks), one call per run against
    blocks of 30 in ``"mixed"``: building2 pivot 6.78/5.54, building3 8.69/6.97,
    building1 noshortcut 0.806/0.777, thyroid1 7.30/6.81, thyroid2 10.25/8.82 and
    noshortcut 3.07/2.45, thyroid1 linear 0.048/0.040, gene1 0.50 (lanes, 15 a
    call)/0.47. Only building1 pivot (0.618/0.635) and mushroom1 linear (3.19/3.40)
    train faster one call per run, by too little for a rule of their own.
    """
    from fastnet.training._many_trials import LANES_MAX_CONNECTIONS, LANES_MAX_WORK

    if n_train * n_connections <= LANES_MAX_WORK:
        return "lanes"
    return "mixed" if n_connections <= LANES_MAX_CONNECTIONS else "serial"


def _run_task(task):
    """Train the runs of one task (one cell's runs) and return their records (in a worker).

    The runs train in one `train_rprop_many` call with the cell's method
    (`_cell_method`), or with ``one_per_call`` in one `train_rprop` call each. A
    task of a ``"mixed"`` cell trains whole blocks instead (``task.blocks``), one
    call each, and returns the records of its ``runs`` only (a block's other runs
    are in the file already). Either way a record does not depend on how the runs
    were batched or resumed, nor on ``jobs``.
    """
    ds = _load(task.problem, task.root)
    preset = build_network(task.network, ds, task.rule)[1]
    trainer, args = algorithm_arguments(preset, task.options, task.algorithm)
    kw = dict(X_test=ds.test[0], Y_test=ds.test[1], **args)
    wanted = set(task.runs)
    records = []
    for runs in [range(*b) for b in task.blocks] if task.blocks else (task.runs,):
        nets = [build_network(task.network, ds, task.rule, task.dtype)[0] for _ in runs]
        seeds = [run_seed(task.master, task.problem, task.network, r, task.algorithm)
                 for r in runs]
        results, batch = _train(task, trainer, ds, nets, seeds, kw)
        if task.blocks:
            batch["first_run"] = runs[0]
        records += [_record(task, run, seed, net, preset, r, batch, ds)
                    for run, seed, net, r in zip(runs, seeds, nets, results) if run in wanted]
    return records


def _train(task, trainer, ds, nets, seeds, kw):
    """(results, the records' ``"batch"``) of ``nets`` trained as ``task`` says."""
    # No warnings.catch_warnings() here: it is not thread-safe (Dask runs tasks in
    # threads). An epoch cap is part of the stopping rule instead (training_arguments).
    if trainer == "many":
        from fastnet.training import train, train_many

        if task.one_per_call:
            return ([train(net, *ds.train, *ds.val, seed=seed, **kw)
                     for net, seed in zip(nets, seeds)], {"runs": 1, "method": "train"})
        if task.method is not None:     # (a rule without lanes trains "serial")
            kw = {**kw, "method": task.method}
        results = train_many(nets, *ds.train, *ds.val, seeds=seeds, **kw)
    elif task.one_per_call:
        from fastnet.rprop import train_rprop

        return ([train_rprop(net, *ds.train, *ds.val, seed=seed, **kw)
                 for net, seed in zip(nets, seeds)], {"runs": 1, "method": "train_rprop"})
    else:
        from fastnet.training import train_rprop_many

        results = train_rprop_many(nets, *ds.train, *ds.val, seeds=seeds, method=task.method,
                                   **kw)
    done = results[0].setup["batch"]
    # (a record of a "mixed" block also says how many of its runs were handed on, when)
    return results, {"runs": len(nets), "method": done["method"],
                     **({"handoffs": done["handoffs"]} if task.blocks else {})}


def _record(task, run, seed, net, preset, r, batch, ds):
    from fastnet._provenance import machine_description

    def errors(s):
        return {"squared_error_percentage": s.squared_error_percentage,
                "classification_error": s.classification_error, "nmse": s.nmse}

    record = {
        "type": "run", "setup_hash": task.setup_hash,
        "problem": task.problem, "network": task.network, "run": run,
        **({} if task.algorithm == DEFAULT_ALGORITHM else {"algorithm": task.algorithm}),
        "seed": {"entropy": task.master, "spawn_key": [int(k) for k in seed.spawn_key]},
        "architecture": net.proben1_spec, "shortcut": net.shortcut,
        "n_connections": net.n_connections, "preset": preset, "dtype": str(net.dtype),
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


def _tasks(experiment, todo, datasets, batch_size, setup_hash):
    """The tasks of the runs ``todo`` (run keys): per cell, ``batch_size`` runs each, or
    with a batch size of 1 one run each, one `train_rprop` call per run (``one_per_call``);
    but in a ``"mixed"`` cell (`_cell_method`), whole blocks of `MIXED_BLOCK` runs,
    ``batch_size // MIXED_BLOCK`` blocks a task (at least one), writing only the runs
    of ``todo``."""
    tasks = []
    for (p, n, a) in dict.fromkeys((p, n, a) for p, n, _, a in todo):
        runs = [r for (pp, nn, r, aa) in todo if (pp, nn, aa) == (p, n, a)]
        net, preset = build_network(n, datasets[p], experiment.rule)
        trainer, args = algorithm_arguments(preset, experiment.options, a)
        method = (_cell_method(datasets[p].n_train, net.n_connections)
                  if trainer == "rprop" or args["algorithm"].lanes else None)
        if batch_size == 1 or method != "mixed":
            groups = [(tuple(runs[i:i + batch_size]), ())
                      for i in range(0, len(runs), batch_size)]
        else:
            blocks = list(dict.fromkeys(r // MIXED_BLOCK for r in runs))
            per = max(1, batch_size // MIXED_BLOCK)
            groups = [(tuple(r for r in runs if r // MIXED_BLOCK in blocks[i:i + per]),
                       tuple((b * MIXED_BLOCK, min(b * MIXED_BLOCK + MIXED_BLOCK,
                                                   experiment.runs))
                             for b in blocks[i:i + per]))
                      for i in range(0, len(blocks), per)]
        tasks += [_Task(p, n, group, experiment.seed, experiment.options,
                        experiment.keep_predictions, experiment.root, setup_hash,
                        experiment.rule, one_per_call=batch_size == 1, algorithm=a,
                        method=method, blocks=blocks_of, dtype=experiment.dtype)
                  for group, blocks_of in groups]
    return tasks


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
    algorithms = list(grid.get("algorithms", [DEFAULT_ALGORITHM]))
    algorithms += [a for a in experiment.algorithms if a not in algorithms]
    if algorithms != [DEFAULT_ALGORITHM]:
        new_grid["algorithms"] = algorithms
    if partial:
        warnings.warn(f"{path}: cut off an incomplete last line ({partial} bytes, a run that was "
                      "being written when the process died); that run is rerun.",
                      ResultFileWarning, stacklevel=3)
    if new_grid != grid:
        merged = dict(old)
        merged["grid"] = new_grid
        merged["checklist"] = {**old.get("checklist", {}), **header["checklist"]}
        merged["data"] = {**old.get("data", {}), **header["data"]}
        setups = {**old.get("algorithm_setups", {}), **header.get("algorithm_setups", {})}
        if setups:
            merged["algorithm_setups"] = setups
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
    workers : int
        Local processes that ran the runs: ``jobs`` capped at the batches of
        runs to do (1 for ``"sequential"``, 0 for ``"dask"``).
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
    workers: int = 1


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
        Local worker processes (joblib ``loky``), from 1 to `MAX_JOBS`; 1 runs
        in this process, -1 uses every core. No more workers start than there
        are batches of runs to do (`ExperimentResult.workers` says how many
        did); with one batch the runs go in this process. Workers exit when this
        process dies, even by SIGKILL (within `PARENT_POLL` seconds). Ignored
        with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Run on a Dask cluster: a scheduler address (``"tcp://host:8786"``) or a
        client. The workers need fastnet and the data under ``experiment.root``
        (or their ``$FASTNET_DATA``).
    progress : callable, optional
        ``progress(ExperimentProgress)`` after each record is written.
    batch_size : int, default `BATCH_SIZE` (16)
        Runs of one (problem, network) cell trained in one task, in one call of
        `fastnet.train_rprop_many`: networks of up to 6,000 connections side by
        side in vector lanes (past ``LANES_MAX_WORK``, training examples x
        connections, with the last runs of a group of lanes that early stopping
        has left too empty handed on to the single-network kernels: method
        ``"mixed"``), larger ones one after another. Each record is what one
        `train_rprop` call gives (to rounding), and a killed experiment loses at
        most the tasks in flight. Records do not depend on the batch size, on which
        runs share a task, on interruptions or on ``jobs``, bit for bit: each run
        sums in a lane of its own, or in a call of its own, and a cell of method
        ``"mixed"`` (whose hand-off of a run depends on when the other runs of its
        call stop) trains in fixed blocks of `MIXED_BLOCK` (30) runs by run index,
        whole blocks a task (``batch_size // MIXED_BLOCK``, at least one); a block
        with runs in the file already trains whole, and only its missing runs are
        written. The last block ends at the last run, so its records depend on
        ``experiment.runs`` when that is no multiple of `MIXED_BLOCK` (Proben1's
        60 runs are; its 10 of linear networks make one block of 10). 1
        trains one run per `train_rprop` call instead, for comparison (its records
        differ from the batched ones in the last bits where the lanes ran). Each
        record says how it was trained (``"batch"``, one of `TIMING_FIELDS`: the
        method and the runs of its call, and for a block its first run and the
        runs of each hand-off).

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
    ValueError
        If ``scheduler`` is a string but no Dask address (such as ``"local"``:
        for local processes give ``jobs``).
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
    if jobs != -1:
        try:
            jobs = check_count(jobs, "jobs", MAX_JOBS)
        except ValueError as exc:
            raise ValueError(f"{str(exc)[:-1]} (or -1: every core).") from None
    if isinstance(scheduler, str):
        _check_address(scheduler)
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
        done_keys = {run_key(r) for r in existing}
        wanted = set(experiment.run_keys())
        setup_hash = experiment.setup_hash()
        todo = [k for k in experiment.run_keys() if k not in done_keys]
        tasks = _tasks(experiment, todo, datasets, batch_size, setup_hash)
        # Longest tasks first (cost ~ patterns x connections x runs), so that a few long
        # ones do not end up last on one worker. Results do not depend on the order.
        cost = {(p, n): datasets[p].n_train * build_network(n, datasets[p])[0].n_connections
                for p in experiment.problems for n in experiment.networks}
        tasks.sort(key=lambda t: -cost[(t.problem, t.network)] * (
            sum(stop - first for first, stop in t.blocks) if t.blocks else len(t.runs)))
        kept = [r for r in existing if run_key(r) in wanted]
        test_errors = sorted(r["test"]["squared_error_percentage"] for r in existing)
        new = []

        backend, config, own_client = joblib_backend(jobs, scheduler, len(tasks))
        workers = 0 if backend == "dask" else config["n_jobs"]
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
            if own_client is not None:
                own_client.close()
        wall = time.perf_counter() - start

    records = sorted(kept + new, key=lambda r: (
        experiment.problems.index(r["problem"]), experiment.networks.index(r["network"]),
        experiment.algorithms.index(run_key(r)[3]), r["run"]))
    return ExperimentResult(path=path, experiment=experiment, records=tuple(records),
                            n_new=len(new), n_resumed=len(kept), backend=backend, wall_time=wall,
                            workers=workers)


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
