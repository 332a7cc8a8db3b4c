"""The baseline database: a suite's per-run results as a gzip-compressed CSV beside a JSON
manifest (command, version, machine, seeds, data SHA-256s, targets), shipped in the
package; loaded by `baselines` (every field checked: ``_database_check``), and turned back
into the cell records the suite's analysis reads, so that a new algorithm is compared beside
the baselines without training them."""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from fastnet.suite._database_check import (_BOOL, _FLOAT, _INT, DATABASE_COLUMNS,
                                           DATABASE_FILES, DATABASE_FORMAT, SHARED_SETUP,
                                           manifest_digest, read_database)

__all__ = ["Baselines", "baselines", "DATABASE_FORMAT", "DATABASE_COLUMNS",
           "DATABASE_FILES"]


@dataclass(frozen=True, repr=False)
class Baselines:
    """A baseline database: every run of a suite of baseline algorithms.

    Attributes
    ----------
    manifest : dict
        Its provenance: ``format``, ``command``, ``fastnet`` (version), ``created``,
        ``machine``, ``build`` (vector kernels and BLAS that ran), ``setup`` (the
        suite's set-up: problems, algorithms with their search spaces, budget, runs,
        studies, master seed, networks, epoch caps), ``seeds`` (how every run's seed
        derives from the master seed), ``configurations`` ({algorithm: [configurations
        of each study]}), ``data_sha256``, ``targets``, ``runs`` (the rows), ``csv_sha256``
        (of the CSV file) and ``manifest_sha256`` (of the manifest's other contents).
    rows : tuple of dict
        One per run, with the keys `DATABASE_COLUMNS` (None where there is no value).
    where : str
        Where it was read from.
    """

    manifest: dict
    rows: tuple
    where: str

    @property
    def algorithms(self):
        """The baseline algorithms' texts (search spaces)."""
        return tuple(self.manifest["setup"]["algorithms"])

    @property
    def problems(self):
        """The problems it covers."""
        return tuple(self.manifest["setup"]["problems"])

    @property
    def targets(self):
        """{problem: validation error target, None for a generated task}."""
        return {p: self.manifest["targets"].get(p) for p in self.problems}

    def column(self, name):
        """One column over the runs as a NumPy array.

        Parameters
        ----------
        name : str
            One of `DATABASE_COLUMNS`.

        Returns
        -------
        numpy.ndarray
            float64 for numbers (NaN where there is none: a diverged run's errors, a
            missed target), bool for flags (None as False), else str.
        """
        if name not in DATABASE_COLUMNS:
            raise ValueError(f"`name` must be one of {', '.join(DATABASE_COLUMNS)}, got {name!r}.")
        values = [r[name] for r in self.rows]
        if name in _INT or name in _FLOAT:
            return np.array([math.nan if v is None else v for v in values], dtype=float)
        if name in _BOOL:
            return np.array([bool(v) for v in values], dtype=bool)
        return np.array(["" if v is None else v for v in values], dtype=str)

    def columns(self):
        """{column: numpy.ndarray} of every column (`column`)."""
        return {c: self.column(c) for c in DATABASE_COLUMNS}

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return (f"Baselines({len(self.algorithms)} algorithms x {len(self.problems)} problems, "
                f"{len(self.rows):,} runs, fastnet {self.manifest.get('fastnet')}, from "
                f"{self.where})")


def _cell(v):
    if v is None:
        return ""
    return repr(v) if isinstance(v, float) else str(v)



def baselines(path=None):
    """Load a baseline database.

    Every file is trusted for nothing: the manifest must be what `database_files`
    writes (each key, the suite's set-up as `Suite` checks it, the configurations each
    algorithm's search space can give, the targets, and the SHA-256 of its own contents)
    and every row of the CSV a run that suite can have trained, checked field by field
    as the suite checks its cells (``fastnet.suite._cells``): finite errors, not negative,
    epochs within the cap, a relevant epoch within the epochs, traversals that an int64
    counts, finite CPU seconds, a time to target that agrees with the run, the manifest's
    algorithms, problems and configurations, and one row per run, as many as the
    manifest counts.

    Parameters
    ----------
    path : str or os.PathLike, optional
        A directory holding ``baselines.json`` and ``baselines.csv.gz`` (as ``fastnet
        suite --baseline-suite`` writes them); default the database shipped in the
        package.

    Returns
    -------
    Baselines
        Its manifest and its runs (``.rows``; ``.column(name)`` and ``.columns()``
        give NumPy arrays).

    Raises
    ------
    ValueError
        Naming the file (the line of a row) and the field at fault, if a file is of
        another format, does not read (truncated, not JSON, not gzip), its contents differ
        from the SHA-256 the manifest records, or it holds what the suite cannot have
        written; a manifest without its own SHA-256 (written by fastnet 0.2.0) is refused
        too, saying how to write it again.
    OSError
        If a file cannot be read.

    Examples
    --------
    >>> db = baselines()
    >>> len(db.algorithms) >= 8 and len(db.problems) >= 18
    True
    """
    if path is None:
        root = resources.files("fastnet.suite").joinpath("database")
        where = "fastnet/suite/database, shipped with fastnet"
    else:
        root = Path(os.fspath(path))
        where = str(root)
    manifest, rows = read_database(root, where)
    return Baselines(manifest, tuple(rows), where)


def database_files(result, records, *, command, targets_from):
    """The files of a database made from a suite's result: {name: bytes}.

    Parameters
    ----------
    result : SuiteResult
        A suite whose targets are fixed (``target`` a dict: the frozen targets).
    records : dict
        {(problem, configuration): cell record} the result was analysed from.
    command : str
        The command that made it (recorded).
    targets_from : str
        Where the targets come from (recorded).

    Returns
    -------
    dict
        ``baselines.json`` and ``baselines.csv.gz`` as bytes.
    """
    import datetime
    import platform

    import scipy

    from fastnet._provenance import _build_flags, machine_description
    from fastnet._version import __version__

    s = result.suite
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(DATABASE_COLUMNS)
    for row in result.rows:
        run = records[(row["problem"], row["parameters"])]["runs"][row["run"]]
        extra = {"diverged": run["diverged"], "success": run["success"],
                 "test_classification": run.get("test_classification"),
                 "test_wrong": run.get("test_wrong")}
        w.writerow([_cell({**row, **extra}[c]) for c in DATABASE_COLUMNS])
    data = gzip.compress(buf.getvalue().encode("utf-8"), compresslevel=9, mtime=0)
    flags = _build_flags()
    setup = {k: v for k, v in s.to_dict().items() if k != "target"}
    manifest = {
        "format": DATABASE_FORMAT, "command": command, "fastnet": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_description(),
        "build": {"vector_kernels": flags.get("vector_kernels"), "blas": flags.get("blas"),
                  "python": platform.python_version(), "numpy": np.__version__,
                  "scipy": scipy.__version__},
        "training_cpu_seconds": sum(float(rec["cpu_time"]) for rec in records.values()),
        "setup": setup,
        "seeds": {"master": s.seed, "configurations": setup.pop("configurations_drawn_by"),
                  "runs": setup.pop("run_seeds")},
        "configurations": result.configurations,
        "data_sha256": {p: h for p, h in result.data_sha256.items() if h},
        "targets": {p: result.targets[p] for p in s.problems},
        "targets_from": targets_from,
        "cpu_seconds": "process CPU time of each run on the machine above; traversals, "
                       "epochs and errors do not depend on the machine",
        "runs": len(result.rows), "columns": list(DATABASE_COLUMNS),
        "csv_sha256": hashlib.sha256(data).hexdigest(),
    }
    manifest["manifest_sha256"] = manifest_digest(manifest)
    text = json.dumps(manifest, indent=1, allow_nan=False) + "\n"
    return {DATABASE_FILES[0]: text.encode("utf-8"), DATABASE_FILES[1]: data}


def baseline_records(db, problems):
    """({algorithm: [configurations of each study]}, {(problem, configuration): record})
    of a database's algorithms on ``problems``: records whose runs carry their time to
    target (``to_target``) in place of the validation curve."""
    configs = {a: [list(study) for study in db.manifest["configurations"][a]]
               for a in db.algorithms}
    records = {}
    for r in db.rows:
        if r["problem"] not in problems:
            continue
        run = {"run": r["run"], "diverged": bool(r["diverged"]), "stop_reason": r["stop_reason"],
               "epochs": r["epochs"], "relevant_epoch": r["relevant_epoch"],
               "val_error": r["validation_error"], "test_error": r["test_error"],
               "train_error": r["train_error"], "traversals": r["traversals"],
               "cpu_time": r["cpu_seconds"], "success": r["success"],
               "to_target": (None if not r["on_target"] else
                             (r["epochs_to_target"], r["traversals_to_target"],
                              r["cpu_seconds_to_target"]))}
        if r["test_wrong"]:
            run["test_wrong"] = r["test_wrong"]
        rec = records.setdefault((r["problem"], r["parameters"]),
                                 {"algorithm": r["parameters"], "runs": []})
        if all(x["run"] != run["run"] for x in rec["runs"]):  # (two algorithms drew it)
            rec["runs"].append(run)
    for (p, c), rec in records.items():
        rec["runs"].sort(key=lambda run: run["run"])
        if [run["run"] for run in rec["runs"]] != list(range(db.manifest["setup"]["runs"])):
            raise ValueError(f"{db.where}: the runs of {c!r} on {p} are not runs 0 to "
                             f"{db.manifest['setup']['runs'] - 1}.")
    missing = [(p, c) for a in configs for study in configs[a] for c in study
               for p in problems if (p, c) not in records]
    if missing:
        p, c = missing[0]
        raise ValueError(f"{db.where}: no runs of {c!r} on {p} ({len(missing)} configurations "
                         "missing).")
    return configs, records


def merge_baselines(suite, database, shas):
    """(the suite of the baselines and the new algorithms, the baselines' configurations,
    their records, provenance): checks that ``suite`` is on the database's set-up and
    data."""
    from fastnet.suite._setup import Suite

    db = database if isinstance(database, Baselines) else baselines(database)
    setup = db.manifest["setup"]
    beside = {k: setup[k] for k in SHARED_SETUP}
    mine = {k: getattr(suite, k) for k in SHARED_SETUP}
    beside["dtype"], mine["dtype"] = setup.get("dtype", "float64"), suite.dtype
    for k in (*SHARED_SETUP, "dtype"):
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
                     **{k: getattr(suite, k) for k in SHARED_SETUP})
    m = db.manifest
    provenance = {"algorithms": list(db.algorithms), "fastnet": m.get("fastnet"),
                  "machine": m.get("machine"), "command": m.get("command"),
                  "created": m.get("created"), "where": db.where,
                  "build": m.get("build")}
    return combined, configs, records, provenance

