"""Comparing new algorithms against a baseline database: only they are trained, on the
database's set-up, then analysed beside every baseline as if all had been run together."""
from __future__ import annotations

__all__ = ["suite_beside", "compare_with_baselines", "build_database"]

import os
from pathlib import Path

from fastnet.suite._database import SHARED_SETUP as _SHARED


def _database(database):
    from fastnet.suite._database import Baselines, baselines

    if isinstance(database, Baselines):
        return database
    return baselines(database)


def suite_beside(database, algorithms, *, problems=None, rope=1.0, root=None):
    """The suite of new algorithms on a baseline database's set-up.

    Parameters
    ----------
    database : Baselines, str, os.PathLike or None
        The database (None: the one shipped in fastnet; a path: a directory that
        ``fastnet suite --baseline-suite`` wrote).
    algorithms : str or sequence of str
        The new algorithms' texts (search spaces, as `Suite` takes them).
    problems : sequence of str, optional
        Some of the database's problems (default all).
    rope : float, default 1.0
        The Bayesian signed-rank test's ROPE (percentage points).
    root : str, optional
        Directory of the Proben1 files.

    Returns
    -------
    Suite
        With the database's budget, runs, studies, master seed, networks, epoch caps
        and targets.

    Raises
    ------
    ValueError
        For a problem the database does not have, or an algorithm text it already
        holds.
    """
    from fastnet.suite._setup import Suite

    db = _database(database)
    setup = db.manifest["setup"]
    chosen = list(db.problems) if problems is None else (
        [problems] if isinstance(problems, str) else list(problems))
    unknown = [p for p in chosen if p not in db.problems]
    if unknown:
        raise ValueError(f"`problems` must be problems of the baseline database "
                         f"({', '.join(db.problems)}), got {', '.join(map(repr, unknown))}.")
    texts = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    for a in texts:
        if isinstance(a, str) and " ".join(a.split()) in db.algorithms:
            raise ValueError(f"`algorithms`: {a!r} is a baseline of the database already; "
                             "its runs are read, not trained.")
    targets = {p: t for p, t in db.targets.items() if t is not None and p in chosen}
    networks = {p: n for p, n in (setup.get("networks") or {}).items() if p in chosen}
    return Suite(tuple(chosen), tuple(texts), target=targets, rope=rope, root=root,
                 networks=networks or None, **{k: setup[k] for k in _SHARED})


def compare_with_baselines(algorithms, out, *, database=None, problems=None, rope=1.0,
                           root=None, jobs=1, scheduler=None, progress=None, pictures=True):
    """Compare new algorithms against a baseline database, training only them.

    Parameters
    ----------
    algorithms : str or sequence of str
        The new algorithms' texts (search spaces, or fixed configurations; a rule
        registered with :func:`fastnet.algorithms.register` too).
    out : str or os.PathLike
        Output directory (as `run_suite`).
    database : Baselines, str or os.PathLike, optional
        Default the database shipped in fastnet.
    problems : sequence of str, optional
        Some of the database's problems (default all).
    rope : float, default 1.0
    root : str, optional
        Directory of the Proben1 files.
    jobs, scheduler, progress, pictures : optional
        As `run_suite`.

    Returns
    -------
    SuiteResult
        Of the baselines and the new algorithms together; ``baselines`` says which
        numbers came from the database.
    """
    db = _database(database)
    suite = suite_beside(db, algorithms, problems=problems, rope=rope, root=root)
    from fastnet.suite._run import run_suite

    return run_suite(suite, out, jobs=jobs, scheduler=scheduler, progress=progress,
                     pictures=pictures, baselines=db)


def build_database(suite, out, *, command, jobs=1, scheduler=None, progress=None,
                   pictures=True):
    """Run a baseline suite into ``out`` (`run_suite`: resumable) and write its database
    files there beside the suite's outputs.

    Parameters
    ----------
    suite : Suite
        With fixed targets (``target="frozen"``, :func:`fastnet.suite.baseline_suite`).
    out : str or os.PathLike
    command : str
        The command that made it (recorded in the manifest).
    jobs, scheduler, progress, pictures : optional
        As `run_suite`.

    Returns
    -------
    SuiteResult

    Raises
    ------
    ValueError
        If the suite's targets are not fixed per problem (they would move with the
        algorithms).
    """
    from fastnet.suite._cells import cell_path, load_cell
    from fastnet.suite._database import database_files
    from fastnet.suite._run import _cells, run_suite
    from fastnet.suite._write import _replace_all

    if not isinstance(getattr(suite, "target", None), dict):
        raise ValueError("`suite`: a baseline database needs fixed targets per problem "
                         f"(target='frozen' or a dict), got target={suite.target!r}.")
    result = run_suite(suite, out, jobs=jobs, scheduler=scheduler, progress=progress,
                       pictures=pictures)
    cells, _, _ = _cells(suite)
    records = {key: load_cell(cell_path(out, cell), cell) for key, cell in cells.items()}
    files = database_files(result, records, command=command,
                           targets_from="fixed per problem: the frozen targets "
                           "(fastnet/suite/targets.json) unless the command gave others")
    _replace_all(Path(os.fspath(out)), files)
    return result
