"""Comparing new algorithms against a baseline database: only they are trained, on the
database's set-up, then analysed beside every baseline as if all had been run together."""
from __future__ import annotations

__all__ = ["suite_beside", "compare_with_baselines"]

#: The set-up a suite beside a database takes from it (`Suite` attributes).
_SHARED = ("budget", "runs", "studies", "seed", "network", "max_epochs", "limit")


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


def merge_baselines(suite, database, shas):
    """(the suite of the baselines and the new algorithms, the baselines' configurations,
    their records, provenance): checks that ``suite`` is on the database's set-up and
    data."""
    from fastnet.suite._database import baseline_records
    from fastnet.suite._setup import Suite

    db = _database(database)
    setup = db.manifest["setup"]
    beside = {k: setup[k] for k in _SHARED}
    mine = {k: getattr(suite, k) for k in _SHARED}
    for k in _SHARED:
        if beside[k] != mine[k]:
            raise ValueError(f"`suite`: its {k} must be the baseline database's ({beside[k]!r}) "
                             f"to be compared with it, got {mine[k]!r}; build it with "
                             "fastnet.suite.suite_beside.")
    unknown = [p for p in suite.problems if p not in db.problems]
    if unknown:
        raise ValueError(f"`suite`: the baseline database has no runs on {', '.join(unknown)}.")
    for p in suite.problems:
        if (setup.get("networks") or {}).get(p, setup["network"]) != suite.network_of(p):
            raise ValueError(f"`suite`: {p} must train the database's network "
                             f"{(setup.get('networks') or {}).get(p, setup['network'])!r}, got "
                             f"{suite.network_of(p)!r}.")
        stored = db.manifest["data_sha256"].get(p)
        if shas.get(p) != stored:
            raise ValueError(f"{p}: the data (SHA-256 {shas.get(p)}) is not the data the "
                             f"baseline database was trained on (SHA-256 {stored}).")
        if not suite.is_generated(p) and (not isinstance(suite.target, dict)
                                          or suite.target[p] != db.targets[p]):
            raise ValueError(f"`suite`: its target on {p} must be the database's "
                             f"{db.targets[p]!r}; build it with fastnet.suite.suite_beside.")
    same = [a for a in suite.algorithms if a in db.algorithms]
    if same:
        raise ValueError(f"`suite`: {', '.join(same)} is a baseline of the database already.")
    configs, records = baseline_records(db, suite.problems)
    combined = Suite(suite.problems, db.algorithms + suite.algorithms, target=suite.target,
                     rope=suite.rope, root=suite.root, networks=suite.networks,
                     **{k: getattr(suite, k) for k in _SHARED})
    m = db.manifest
    provenance = {"algorithms": list(db.algorithms), "fastnet": m.get("fastnet"),
                  "machine": m.get("machine"), "command": m.get("command"),
                  "created": m.get("created"), "where": db.where,
                  "build": m.get("build")}
    return combined, configs, records, provenance


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
