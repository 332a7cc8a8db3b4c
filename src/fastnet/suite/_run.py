"""Running a suite: one task per cell (problem x configuration, all its runs in one
`fastnet.train_many` call), locally (joblib) or on Dask, each finished cell written
atomically as it completes, resumed cell by cell."""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import numpy as np

from fastnet.suite._cells import cell_path, load_cell, save_cell
from fastnet.suite._database import merge_baselines
from fastnet.suite._setup import Suite, generated_task

__all__ = ["run_suite", "SuiteProgress"]


@dataclass(frozen=True)
class _Cell:
    problem: str
    configuration: str
    hash: str
    identity: dict
    runs: int
    seed: int
    network: str
    max_epochs: int | None
    limit: int
    root: str | None
    generated: bool
    classification: bool = False
    n_test: int = 0
    dtype: str = "float64"
    #: The rules files (`fastnet.algorithms.RulesFile`, their bytes) the configuration
    #: needs: a worker loads them before reading it.
    rules: tuple = ()

    @property
    def epoch_limit(self):
        """The most epochs a run of this cell can train."""
        from fastnet.experiment._protocol import PROBEN1_MAX_EPOCHS

        if self.generated:
            return self.limit
        return PROBEN1_MAX_EPOCHS if self.max_epochs is None else self.max_epochs


@dataclass(frozen=True)
class SuiteProgress:
    """What a progress callback of `run_suite` receives after every finished cell.

    Attributes
    ----------
    done : int
        Cells trained in this call so far.
    todo : int
        Cells this call trains (missing from the output directory at the start).
    n_resumed : int
        Cells found finished in the output directory.
    elapsed : float
        Wall seconds since training started.
    problem, configuration : str
        The cell just written.
    """

    done: int
    todo: int
    n_resumed: int
    elapsed: float
    problem: str
    configuration: str

    @property
    def eta(self):
        """Estimated wall seconds left (mean time per cell so far)."""
        return self.elapsed / self.done * (self.todo - self.done) if self.done else math.inf


def _sets(cell):
    """(network, preset or None, training set, validation set, test set or None)."""
    from fastnet.experiment import build_network
    from fastnet.network import MLP

    if cell.generated:
        _, X, Y, hidden = generated_task(cell.problem)
        net = MLP(X.shape[1], hidden, Y.shape[1], hidden_activation="tanh",
                  output_activation="logistic", dtype=cell.dtype)
        return net, None, (X, Y), (None, None), None
    from fastnet.experiment._provenance import _load

    ds = _load(cell.problem, cell.root)
    net, preset = build_network(cell.network, ds, dtype=cell.dtype)
    return net, preset, ds.train, ds.val, (ds.test, ds.kind == "classification")


def _arguments(cell, preset):
    """(trainer, keyword arguments): ``"many"`` for `fastnet.train_many`, ``"rprop"`` for
    `fastnet.train_rprop_many` with Proben1's RPROP preset (as experiments train)."""
    if cell.generated:
        from fastnet.algorithms import from_spec
        from fastnet.stopping import Correct, MaxEpochs

        # the limit is a criterion, so a failure is a stop reason, not a warning
        return "many", dict(algorithm=from_spec(cell.configuration),
                            stop=Correct(0.4) | MaxEpochs(cell.limit), strip=1,
                            max_epochs=cell.limit, init_scale=1.0)
    from fastnet.experiment._protocol import algorithm_arguments

    options = {} if cell.max_epochs is None else {"max_epochs": cell.max_epochs}
    return algorithm_arguments(preset, options, cell.configuration)


def _fit(trainer, nets, train, val, test, seeds, kw):
    from fastnet.training import train_many, train_rprop_many

    if test is not None:
        kw = {**kw, "X_test": test[0][0], "Y_test": test[0][1]}
    fit = train_many if trainer == "many" else train_rprop_many
    return fit(nets, *train, *val, seeds=seeds, **kw)


#: Runs of a cell trained in one `fastnet.train_many` call. A call's results (networks,
#: curves, histories: about 50 kB a run on cancer1) are turned into the cell's compact
#: records (about 1 kB a run) before the next call, so a cell's memory stays bounded
#: whatever its number of runs; each run's seed is its own, so the batches do not change
#: a run's result.
CELL_BATCH = 256


def _train_runs(cell, net, trainer, kw, train, val, test, seeds, first):
    """Train a batch of a cell's runs (numbered from ``first``): one `train_many` call,
    after a divergence every run alone, the diverged ones recorded as such. Returns
    (method, run records)."""
    from fastnet.exceptions import DivergenceError

    try:
        nets = [net.copy() for _ in seeds]
        batch = _fit(trainer, nets, train, val, test, seeds, kw)
        method = batch[0].setup["batch"]["method"]
        results = [(r, None) for r in batch]
        del nets, batch
    except DivergenceError:
        method = "one run per call (after a divergence)"
        results = []
        for s in seeds:
            c0 = time.process_time()
            try:
                results.append((_fit(trainer, [net.copy()], train, val, test, [s], kw)[0], None))
            except DivergenceError as exc:
                results.append((None, (str(exc), time.process_time() - c0)))
    return method, [_run_record(cell, first + i, r, failed, test)
                    for i, (r, failed) in enumerate(results)]


def _train_cell(cell):
    """Train one cell's runs (in a worker) and return its record: `train_many` calls of
    at most `CELL_BATCH` runs (the lanes where the rule has them); after a divergence
    every run of that call alone, the diverged ones recorded as such."""
    from fastnet.experiment import run_seed
    from fastnet.training._rules_files import ensure_loaded

    ensure_loaded(cell.rules)
    net, preset, train, val, test = _sets(cell)
    trainer, kw = _arguments(cell, preset)
    seeds = [run_seed(cell.seed, cell.problem, cell.network if not cell.generated
                      else "-".join(map(str, net.layer_sizes)), r, cell.configuration)
             for r in range(cell.runs)]
    start = time.process_time()
    methods, runs = [], []
    for first in range(0, cell.runs, CELL_BATCH):
        method, records = _train_runs(cell, net, trainer, kw, train, val, test,
                                      seeds[first:first + CELL_BATCH], first)
        runs += records
        if method not in methods:
            methods.append(method)
    return {"hash": cell.hash, "identity": cell.identity, "algorithm": cell.configuration,
            "runs": runs, "method": "; ".join(methods), "cpu_time": time.process_time() - start}


def _finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def _run_record(cell, i, r, failed, test):
    """One run's record (JSON values; None where there is no number, such as the
    errors of a run that diverged)."""
    if failed is not None:
        return {"run": i, "diverged": True, "stop_reason": "diverged", "epochs": None,
                "relevant_epoch": None, "val_error": None, "test_error": None,
                "train_error": None, "curve": [], "traversals": None,
                "cpu_time": failed[1], "success": False}
    rec = {"run": i, "diverged": False, "stop_reason": r.stop_reason, "epochs": int(r.epochs),
           "relevant_epoch": int(r.relevant_epoch),
           "train_error": _finite(r.final_train.squared_error_percentage),
           "traversals": int(r.traversals.total), "cpu_time": float(r.cpu_time)}
    if cell.generated:
        return {**rec, "success": r.stop_reason == "correct", "val_error": None,
                "test_error": None, "curve": []}
    curve = [] if r.val_error is None else [_finite(v) for v in r.val_error[:r.epochs // 5]]
    rec.update(success=None, val_error=_finite(r.final_val.squared_error_percentage),
               test_error=_finite(r.final_test.squared_error_percentage),
               test_classification=(None if r.final_test.classification_error is None
                                    else _finite(r.final_test.classification_error)),
               curve=curve, strip=5)
    (X_test, T_test), classification = test
    if classification:
        wrong = np.argmax(r.net.predict(X_test), axis=1) != np.argmax(T_test, axis=1)
        rec["test_wrong"] = "".join("1" if w else "0" for w in wrong)
    return rec


def _cells(suite):
    """{(problem, configuration): _Cell} of every configuration of every study, and the
    data's SHA-256 per problem (None for the generated tasks)."""
    shas, tests = {}, {}
    for p in suite.problems:
        if suite.is_generated(p):
            shas[p], tests[p] = None, (False, 0)
        else:
            from fastnet.experiment import build_network
            from fastnet.experiment._provenance import _load

            ds = _load(p, suite.root)
            build_network(suite.network_of(p), ds)   # (refuses mushroom's pivot now)
            shas[p] = ds.sha256
            tests[p] = (ds.kind == "classification", len(ds.test[0]))
    from fastnet.training._rules_files import rules_of

    configs = suite.configurations()
    cells = {}
    for p in suite.problems:
        for studies in configs.values():
            for c in dict.fromkeys(c for study in studies for c in study):
                cells[(p, c)] = _Cell(p, c, suite.cell_hash(p, shas[p], c),
                                      suite.identity(p, shas[p]), suite.runs, suite.seed,
                                      suite.network_of(p), suite.max_epochs, suite.limit, suite.root,
                                      suite.is_generated(p), *tests[p], dtype=suite.dtype,
                                      rules=rules_of([c]))
    return cells, configs, shas


def run_suite(suite, out, *, jobs=1, scheduler=None, progress=None, pictures=True,
              baselines=None):
    """Train a suite's missing cells into ``out``, then analyse and write it.

    Parameters
    ----------
    suite : Suite
    out : str or os.PathLike
        Output directory (created). Each finished cell (a problem and one
        configuration: its R runs) is written as it completes, atomically, to
        ``cells/<hash>.json``, the hash covering the set-up, the data's SHA-256 and
        the configuration; a rerun trains only the cells missing (resuming after a
        kill). At the end: ``suite.html``, ``scores.csv``, ``suite.json`` and
        ``summary.md`` (:func:`fastnet.suite.write_suite`). It must be absent, empty or
        a suite's directory (it holds the marker file ``.fastnet-suite`` the suite writes
        first), so that no other files are overwritten.
    jobs : int, default 1
        Local worker processes (joblib ``loky``), -1 for every core; the workers
        exit when this process dies. Ignored with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Train on a Dask cluster (an address such as ``"tcp://host:8786"``); the
        workers need fastnet and the data.
    progress : callable, optional
        ``progress(SuiteProgress)`` after each cell is written.
    pictures : bool, default True
        Draw the page's pictures (needs matplotlib).
    baselines : Baselines, optional
        A baseline database (:func:`fastnet.suite.baselines`): only the suite's
        algorithms are trained, on the database's set-up (its problems or some of
        them, seeds, budget, runs, studies, networks, epoch caps and targets: build
        the suite with :func:`fastnet.suite.suite_beside`), and they are analysed
        beside every baseline algorithm as if all had been run together.

    Returns
    -------
    SuiteResult

    Raises
    ------
    FileLockedError
        If another process is writing into ``out``.
    ValueError, TypeError
        For a bad argument (naming it); for an ``out`` that is empty (``""``) or a
        directory holding other files than a suite's; for a cell file of another set-up
        or one that this suite cannot have written (edited, truncated, corrupted: the
        message names the file, the run and the field; nothing is trained).
    OSError
        If a cell or an output cannot be written (a full disk), naming the file; the
        outputs are replaced as one set or not at all.
    ConnectionError
        If the Dask scheduler cannot be reached.

    Notes
    -----
    A cell's runs train in one `fastnet.train_many` (RPROP: `train_rprop_many`
    with Proben1's preset, as experiments train) call whatever ``jobs`` or the
    back-end, with seeds from the master seed and the cell alone
    (`fastnet.experiment.run_seed`), so results do not depend on ``jobs``, the
    back-end or interruptions, bit for bit; only CPU times do. An algorithm of a rules
    file (:func:`fastnet.algorithms.load_rules`) trains on every back-end too: each cell
    carries the file's bytes to its worker, and the file's SHA-256 joins the cell's
    hash, so that an edited file trains again instead of resuming.
    """

    from fastnet._files import exclusive_lock, mark_output_directory, refuse_other_dtype
    from fastnet._validation import check_int
    from fastnet.experiment import MAX_JOBS
    from fastnet.suite._analyse import analyse_suite
    from fastnet.suite._write import write_suite

    if not isinstance(suite, Suite):
        raise TypeError(f"`suite` must be a fastnet.suite.Suite, got {type(suite).__name__}.")
    jobs = check_int(jobs, "jobs")
    if jobs != -1 and not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"`jobs` must be from 1 to {MAX_JOBS} or -1 (every core), got {jobs}.")
    if isinstance(scheduler, str):
        from fastnet.experiment._runner import _check_address

        _check_address(scheduler)
    out = _check_out(out)
    cells, configs, shas = _cells(suite)        # (data and networks refused before `out`)
    merged = None if baselines is None else merge_baselines(suite, baselines, shas)
    mark_output_directory(out, SUITE_MARKER, MARKER_TEXT)
    with exclusive_lock(out / "suite.json"):
        refuse_other_dtype(out, "suite", "setup", suite.dtype)
        (out / "cells").mkdir(exist_ok=True)
        records = {}
        todo = []
        for key, cell in cells.items():
            rec = load_cell(cell_path(out, cell), cell)
            if rec is None:
                todo.append(cell)
            else:
                records[key] = rec
        n_resumed = len(records)
        # costliest first (patterns x connections), so that no long cell comes last
        todo.sort(key=lambda c: -_cost(c))
        start = time.perf_counter()
        backend = _train_missing(todo, out, records, jobs, scheduler, progress, n_resumed,
                                 start)
        wall = time.perf_counter() - start
        suite, configs, records, provenance = _beside(suite, configs, records, merged)
        result = analyse_suite(suite, configs, records, shas, n_trained=len(todo),
                               n_resumed=n_resumed, backend=backend, wall_time=wall,
                               baselines=provenance)
        result = _with_rules(result)
        write_suite(result, out, pictures=pictures)
    return result


def _with_rules(result):
    """``result`` with the rules files its algorithms came from (`SuiteResult.rules`)."""
    import dataclasses

    from fastnet.training._rules_files import rules_records

    rules = rules_records(result.suite.algorithms)
    return dataclasses.replace(result, rules=rules) if rules else result


def _beside(suite, configs, records, merged):
    """(suite, configurations, records, provenance) to analyse: with a baseline database's
    (``merged``), the baselines first, as the database has them, then the new algorithms."""
    if merged is None:
        return suite, configs, records, None
    combined, base_configs, base_records, provenance = merged
    return combined, {**base_configs, **configs}, {**base_records, **records}, provenance


def _train_missing(todo, out, records, jobs, scheduler, progress, n_resumed, start):
    """Train the cells ``todo``, each written to its file and put in ``records`` as it
    completes; return the back-end's name."""
    import joblib

    if not todo:
        return "none"
    from fastnet.experiment._workers import joblib_backend

    backend, config, client = joblib_backend(jobs, scheduler, len(todo))
    try:
        with joblib.parallel_config(**config):
            done = joblib.Parallel(return_as="generator_unordered", batch_size=1)(
                joblib.delayed(_train_cell)(c) for c in todo)
            by_hash = {c.hash: c for c in todo}
            for k, rec in enumerate(done, 1):
                cell = by_hash[rec["hash"]]
                save_cell(cell_path(out, cell), rec)
                records[(cell.problem, cell.configuration)] = rec
                if progress is not None:
                    progress(SuiteProgress(k, len(todo), n_resumed, time.perf_counter() - start,
                                           cell.problem, cell.configuration))
    finally:
        if client is not None:
            client.close()
    return backend


#: The file that marks a directory as a suite's output directory: `run_suite` writes into a
#: directory that is absent, empty or holds it (or a suite written before it existed).
SUITE_MARKER = ".fastnet-suite"
MARKER_TEXT = ("This directory holds a fastnet suite (fastnet suite, fastnet.suite.run_suite): "
               "its cells, tables and page. fastnet writes a suite into a directory that is "
               "empty or holds this file.\n")


def _check_out(out):
    """``out`` as a Path, if a suite may write there (`fastnet._files.output_directory`:
    not an empty path; absent, empty, or a suite's, by `SUITE_MARKER` or
    `_earlier_suite`); else a ValueError saying why, before anything is trained."""
    from fastnet._files import output_directory
    from fastnet.suite._write import OUTPUTS

    return output_directory(out, kind="suite", marker=SUITE_MARKER, folder="cells",
                            outputs=OUTPUTS, earlier=_earlier_suite, example="suite-out")


def _earlier_suite(out):
    """Whether ``out`` holds a suite written before `SUITE_MARKER`: a ``suite.json`` with
    its set-up, or cells (``cells/<16 hex digits>.json``)."""
    import re

    from fastnet._files import json_record_has

    if json_record_has(out / "suite.json", "setup"):
        return True
    try:
        return any(re.fullmatch(r"[0-9a-f]{16}\.json", name) and (out / "cells" / name).is_file()
                   for name in os.listdir(out / "cells"))
    except OSError:
        return False


def _cost(cell):
    if cell.generated:
        return 0
    from fastnet.experiment import build_network
    from fastnet.experiment._provenance import _load

    ds = _load(cell.problem, cell.root)
    return ds.n_train * build_network(cell.network, ds)[0].n_connections
