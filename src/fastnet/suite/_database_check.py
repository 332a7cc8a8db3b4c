"""Reading a baseline database's files back, trusting them for nothing: the manifest checked
key by key (a set-up `Suite` accepts, configurations its search spaces give, the runs they
count, the SHA-256 of its own contents) and every row of the CSV field by field, as a suite's
cell files are checked (``fastnet.suite._cells``), each error naming the file, the line and
the field."""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import re
from dataclasses import dataclass

from fastnet.suite._cells import STRIP, _Bad, _canonical, _check, _seconds, check_outcome

__all__ = ["DATABASE_FORMAT", "DATABASE_COLUMNS", "DATABASE_FILES", "SHARED_SETUP",
           "read_database", "manifest_digest"]

#: Format version of the database (a reader refuses another).
DATABASE_FORMAT = 1
#: The database's files: the manifest and the per-run results.
DATABASE_FILES = ("baselines.json", "baselines.csv.gz")
#: Columns of ``baselines.csv.gz``: those of the suite's ``scores.csv``, then what the
#: analysis needs beside them (a run's divergence, a generated task's success, the test
#: classification error and, on classification problems, which test patterns the run's
#: network got wrong, one character 0 or 1 each, for Lacoste's test).
DATABASE_COLUMNS = ("algorithm", "problem", "study", "configuration", "studies", "parameters",
                    "run", "epochs", "relevant_epoch", "stop_reason", "validation_error",
                    "test_error", "train_error", "traversals", "cpu_seconds", "on_target",
                    "epochs_to_target", "traversals_to_target", "cpu_seconds_to_target",
                    "diverged", "success", "test_classification", "test_wrong")
_INT = {"study", "configuration", "run", "epochs", "relevant_epoch", "traversals"}
_FLOAT = {"validation_error", "test_error", "train_error", "cpu_seconds", "epochs_to_target",
          "traversals_to_target", "cpu_seconds_to_target", "test_classification"}
_BOOL = {"on_target", "diverged", "success"}
#: The set-up a suite beside a database takes from it (`Suite` attributes).
SHARED_SETUP = ("budget", "runs", "studies", "seed", "network", "max_epochs", "limit")
#: The most bytes ``baselines.json`` may hold (the shipped one holds 12 kB; a suite's
#: configurations, at most `fastnet.suite.MAX_SUITE_RUNS`, take at most a few MB of text).
MAX_MANIFEST_BYTES = 1 << 26
#: The most bytes a run's row of ``baselines.csv.gz`` may hold once decompressed (the
#: longest, on mushroom1, holds its 2031 test patterns' wrongness and about 500 more).
MAX_ROW_BYTES = 16_384
#: The manifest's keys, as `database_files` writes them.
MANIFEST_KEYS = ("format", "command", "fastnet", "created", "machine", "build",
                 "training_cpu_seconds", "setup", "seeds", "configurations", "data_sha256",
                 "targets", "targets_from", "cpu_seconds", "runs", "columns", "csv_sha256",
                 "manifest_sha256")
#: The keys of the manifest's ``setup`` (a `Suite`'s ``to_dict()`` without its target
#: and the seeds' description; ``dtype`` may be absent: float64).
SETUP_KEYS = ("problems", "algorithms", "budget", "runs", "studies", "seed", "network",
              "max_epochs", "limit", "rope", "networks", "generated_success", "dtype")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_WHOLE = re.compile(r"-?[0-9]{1,30}")
_REBUILD = ("build the database again (fastnet suite --baseline-suite with the same options "
            "and -o directory resumes from the suite's cells and writes both files)")


def manifest_digest(manifest):
    """SHA-256 (hex) of a manifest's contents but its own ``manifest_sha256``: the
    canonical JSON (sorted keys, no spaces) of the rest."""
    return hashlib.sha256(_canonical({k: v for k, v in manifest.items()
                                      if k != "manifest_sha256"})).hexdigest()


def _value(column, text):
    """A field of the CSV read as `database_files` writes it (None for an empty one)."""
    if text == "":
        return None
    if column in _INT:
        if not _WHOLE.fullmatch(text):
            raise _Bad(f"`{column}` must be a whole number, got {text[:60]!r}")
        return int(text)
    if column in _FLOAT:
        if "_" in text or text.strip() != text:
            raise _Bad(f"`{column}` must be a number, got {text[:60]!r}")
        try:
            return float(text)
        except ValueError:
            raise _Bad(f"`{column}` must be a number, got {text[:60]!r}") from None
    if column in _BOOL:
        if text not in ("True", "False"):
            raise _Bad(f"`{column}` must be True or False, got {text[:60]!r}")
        return text == "True"
    return text


def read_database(root, where):
    """(manifest, rows) of the database in ``root`` (a directory or a package resource),
    every key and row checked; a ValueError naming the file (``where`` says where the
    directory is) and the field at fault, an OSError if a file cannot be read."""
    manifest, plan = _read_manifest(root, where)
    return manifest, _read_rows(root, where, manifest, plan)


def _no_constant(name):
    raise ValueError(f"a non-finite number {name}")


def _shown(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _read_manifest(root, where):
    """(manifest, what its rows must be), or a ValueError naming the file and the key."""
    name = DATABASE_FILES[0]
    data = root.joinpath(name).read_bytes()
    if len(data) > MAX_MANIFEST_BYTES:
        raise ValueError(f"{where}: {name} must hold at most {MAX_MANIFEST_BYTES:,} bytes, got "
                         f"{len(data):,}.")
    try:
        manifest = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:       # (UnicodeDecodeError, JSONDecodeError)
        raise ValueError(f"{where}: {name} is not a baseline database's manifest (truncated, "
                         f"or not JSON: {exc}); {_REBUILD}.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != DATABASE_FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise ValueError(f"{where}: a baseline database of format {DATABASE_FORMAT} was "
                         f"expected, got format {got!r}.")
    if "manifest_sha256" not in manifest:
        raise ValueError(f"{where}: {name} has no `manifest_sha256` (the SHA-256 of its "
                         "contents: a manifest of fastnet 0.2.0, or edited); " + _REBUILD + ".")
    if manifest["manifest_sha256"] != manifest_digest(manifest):
        raise ValueError(f"{where}: {name} differs from the SHA-256 it records in "
                         "`manifest_sha256` (edited or corrupted).")
    try:
        plan = _check_manifest(manifest)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{where}: {name}: {exc}") from None
    return manifest, plan


@dataclass(frozen=True)
class _Problem:
    """What the runs on one problem can hold (the fields `_cells.check_outcome` reads)."""

    generated: bool
    classification: bool
    n_test: int
    epoch_limit: int
    target: float | None


def _in_space(space, text):
    """Whether ``text`` is a configuration ``space`` can give: the canonical text of
    values of its dimensions, each within its distribution."""
    from fastnet.algorithms import parse_spec
    from fastnet._distributions import Choice

    try:
        name, params = parse_spec(text)
    except (ValueError, TypeError):
        return False
    if name != space.name or set(params) != set(space.fixed) | set(space.dimensions):
        return False
    values = {}
    for p, dist in space.dimensions.items():
        v = params[p]
        if isinstance(dist, Choice):
            if v not in dist.values:
                return False
        elif isinstance(v, bool) or not isinstance(v, (int, float)) or not (
                dist.low <= v <= dist.high):
            return False
        values[p] = v
    try:
        return space.configuration(values) == text
    except (ValueError, TypeError):
        return False


def _check_manifest(m):
    """What the rows of a manifest ``m`` must be: {"configs": {algorithm: [[text]]},
    "problems": {problem: _Problem}, "runs", "studies": {(algorithm, text): (study, index,
    studies text)}, "expected": rows}; a ValueError naming the key at fault."""
    from fastnet.datasets import PROBEN1_PROBLEMS, parse_proben1_name
    from fastnet.experiment._protocol import PROBEN1_MAX_EPOCHS
    from fastnet.suite._setup import Suite

    def need(ok, key, expected, value):
        if not ok(value):
            raise ValueError(f"`{key}` must be {expected}, got {_shown(value)}.")

    missing = [k for k in MANIFEST_KEYS if k not in m]
    extra = sorted(set(m) - set(MANIFEST_KEYS))
    if missing or extra:
        raise ValueError("its keys must be " + ", ".join(MANIFEST_KEYS) + "; "
                         + (f"missing {', '.join(missing)}" if missing
                            else f"unknown {', '.join(extra)}") + ".")
    for key in ("command", "fastnet", "created", "machine", "targets_from", "cpu_seconds"):
        need(lambda x: type(x) is str and 0 < len(x) <= 10_000, key, "a text", m[key])
    for key in ("build", "seeds"):
        need(lambda x: isinstance(x, dict), key, "an object", m[key])
    need(_seconds, "training_cpu_seconds", "finite seconds, not negative",
         m["training_cpu_seconds"])
    need(lambda x: x == list(DATABASE_COLUMNS), "columns", "the list DATABASE_COLUMNS",
         m["columns"])
    need(lambda x: type(x) is str and _HEX64.fullmatch(x), "csv_sha256",
         "64 hexadecimal digits", m["csv_sha256"])
    setup = m["setup"]
    need(lambda x: isinstance(x, dict) and set(SETUP_KEYS) - {"dtype"} <= set(x) <= set(SETUP_KEYS),
         "setup", "an object with the keys " + ", ".join(SETUP_KEYS) + " (dtype optional)",
         setup)
    need(lambda x: isinstance(x, list) and all(type(p) is str for p in x), "setup.problems",
         "a list of problem names", setup["problems"])
    need(lambda x: isinstance(x, list) and all(type(a) is str for a in x), "setup.algorithms",
         "a list of algorithm texts", setup["algorithms"])
    targets = m["targets"]
    need(lambda x: isinstance(x, dict) and set(x) == set(setup["problems"]), "targets",
         f"an object with a target for each of {', '.join(setup['problems'])}", targets)
    try:
        suite = Suite(tuple(setup["problems"]), tuple(setup["algorithms"]),
                      **{k: setup[k] for k in SHARED_SETUP}, rope=setup["rope"],
                      networks=setup["networks"], dtype=setup.get("dtype", "float64"),
                      target={p: t for p, t in targets.items() if t is not None})
    except (ValueError, TypeError) as exc:
        raise ValueError(f"`setup` is not a suite's set-up: {exc}") from None
    made = suite.to_dict()
    for k in setup:
        if _canonical(setup[k]) != _canonical(made[k]):
            raise ValueError(f"`setup.{k}` must be what the suite it describes has, "
                             f"{_shown(made[k])}, got {_shown(setup[k])}.")
    for p in suite.problems:
        generated = suite.is_generated(p)
        need(lambda x, g=generated: (x is None) if g else type(x) is float,
             f"targets.{p}", "null on a generated task" if generated else
             "a validation error (a float)", targets[p])
    proben1 = [p for p in suite.problems if not suite.is_generated(p)]
    need(lambda x: isinstance(x, dict) and set(x) == set(proben1)
         and all(type(v) is str and _HEX64.fullmatch(v) for v in x.values()), "data_sha256",
         f"the SHA-256 (64 hexadecimal digits) of each of {', '.join(proben1) or 'none'}",
         m["data_sha256"])
    configs = m["configurations"]
    need(lambda x: isinstance(x, dict) and set(x) == set(suite.algorithms), "configurations",
         "an object with the configurations of each algorithm of the set-up", configs)
    studies = {}
    for a, space in zip(suite.algorithms, suite.spaces):
        k = 1 if space.is_fixed else suite.budget
        need(lambda x, k=k: isinstance(x, list) and len(x) == suite.studies
             and all(isinstance(s, list) and len(s) == k for s in x),
             f"configurations[{a!r}]", f"{suite.studies} lists (one per study) of {k} "
             "configurations", configs[a])
        for s, study in enumerate(configs[a]):
            for i, c in enumerate(study):
                need(lambda x, space=space: type(x) is str and _in_space(space, x),
                     f"configurations[{a!r}][{s}][{i}]", "a configuration its search space "
                     "can give (a canonical algorithm text)", c)
                studies.setdefault((a, c), (s, i, []))[2].append(s)
    expected = len(studies) * suite.runs * len(suite.problems)
    need(lambda x: type(x) is int and x == expected, "runs",
         f"{expected} (the runs of every configuration on every problem)", m["runs"])
    problems = {}
    for p in suite.problems:
        if suite.is_generated(p):
            problems[p] = _Problem(True, False, 0, suite.limit, None)
            continue
        info = PROBEN1_PROBLEMS[parse_proben1_name(p)[0]]
        problems[p] = _Problem(False, info.kind == "classification", info.n_test,
                               PROBEN1_MAX_EPOCHS if suite.max_epochs is None
                               else suite.max_epochs, targets[p])
    return {"configs": configs, "problems": problems, "runs": suite.runs,
            "studies": {key: (s, i, " ".join(map(str, where)))
                        for key, (s, i, where) in studies.items()},
            "expected": expected}


#: How a row's columns are called in a cell's run (`_cells.check_outcome` reads them).
_RUN_NAMES = {"diverged": "diverged", "cpu_time": "cpu_seconds", "stop_reason": "stop_reason",
              "epochs": "epochs", "relevant_epoch": "relevant_epoch",
              "train_error": "train_error", "traversals": "traversals", "success": "success",
              "val_error": "validation_error", "test_error": "test_error",
              "test_classification": "test_classification", "test_wrong": "test_wrong"}


def _read_rows(root, where, manifest, plan):
    """The rows of ``baselines.csv.gz``, each checked; a ValueError naming the line."""
    import zlib

    name = DATABASE_FILES[1]
    data = root.joinpath(name).read_bytes()
    if hashlib.sha256(data).hexdigest() != manifest["csv_sha256"]:
        raise ValueError(f"{where}: {name} differs from the SHA-256 its "
                         "manifest records (edited or corrupted).")
    limit = MAX_ROW_BYTES * (plan["expected"] + 1)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            raise ValueError(f"more than {limit:,} bytes ({MAX_ROW_BYTES:,} a run)")
        reader = csv.reader(io.StringIO(raw.decode("utf-8"), newline=""))
        head = next(reader, [])
    except (OSError, EOFError, ValueError, zlib.error, csv.Error) as exc:
        raise ValueError(f"{where}: {name} is not a gzip-compressed CSV of the runs ({exc}); "
                         f"{_REBUILD}.") from None
    if tuple(head) != DATABASE_COLUMNS:
        raise ValueError(f"{where}: {name} must have the columns "
                         f"{', '.join(DATABASE_COLUMNS)}, got {', '.join(head)}.")
    rows, lines, runs = [], {}, {}
    line = 1
    try:
        for line, fields in enumerate(reader, 2):
            if len(fields) != len(head):
                raise ValueError(f"{len(head)} fields expected, got {len(fields)}")
            row = {c: _value(c, t) for c, t in zip(head, fields)}
            a, p, c, r = _check_row(row, plan)
            if (a, p, c, r) in lines:
                raise ValueError(f"run {r} of {c!r} ({a}) on {p} is there twice (line "
                                 f"{lines[(a, p, c, r)]} too)")
            lines[(a, p, c, r)] = line
            # (two algorithms drew one configuration: its run is listed under each)
            first = runs.setdefault((p, c, r), (line, row))
            differ = [k for k in _RUN_NAMES.values() if row[k] != first[1][k]]
            if differ:
                k = differ[0]
                raise ValueError(f"`{k}` of run {r} of {c!r} on {p} must be what line "
                                 f"{first[0]} gives it, {first[1][k]!r}, got {row[k]!r}")
            rows.append(row)
    except (csv.Error, ValueError) as exc:              # (_cells._Bad is a ValueError)
        raise ValueError(f"{where}: {name}:{line}: {exc}.") from None
    if len(rows) != plan["expected"]:
        missing = next(((a, p, c, r) for (a, c) in plan["studies"] for p in plan["problems"]
                        for r in range(plan["runs"]) if (a, p, c, r) not in lines), None)
        what = ("" if missing is None else
                f"; no row for run {missing[3]} of {missing[2]!r} ({missing[0]}) on {missing[1]}")
        raise ValueError(f"{where}: {name} must hold the {plan['expected']:,} runs its manifest "
                         f"counts (`runs`), got {len(rows):,}{what}.")
    return rows


def _check_row(row, plan):
    """(algorithm, problem, configuration, run) of a row holding what the suite of the
    manifest can have written, else a ValueError (_cells._Bad) naming the column."""
    configs = plan["configs"]
    _check(lambda x: x in configs, row["algorithm"], "", "algorithm",
           f"one of the manifest's {len(configs)} algorithms")
    _check(lambda x: x in plan["problems"], row["problem"], "", "problem",
           f"one of the manifest's problems ({', '.join(plan['problems'])})")
    a, p, c = row["algorithm"], row["problem"], row["parameters"]
    _check(lambda x: (a, x) in plan["studies"], c, "", "parameters",
           f"a configuration of {a} in the manifest")
    study, index, studies = plan["studies"][(a, c)]
    _check(lambda x: x == study, row["study"], "", "study", f"{study} (the first study that drew it)")
    _check(lambda x: x == index, row["configuration"], "", "configuration",
           f"{index} (its place in study {study})")
    _check(lambda x: x == studies, row["studies"], "", "studies",
           f"{studies!r} (the studies that drew it)")
    _check(lambda x: type(x) is int and 0 <= x < plan["runs"], row["run"], "", "run",
           f"a run from 0 to {plan['runs'] - 1}")
    problem = plan["problems"][p]
    run = {k: row[c] for k, c in _RUN_NAMES.items()}
    proben1 = check_outcome(run, "", problem, names=_RUN_NAMES)
    if not proben1:
        for col in ("test_classification", "test_wrong"):
            _check(lambda x: x is None, row[col], "", col,
                   "empty in a run that diverged" if row["diverged"] else "empty on a generated task")
    elif not problem.classification:
        _check(lambda x: x is None, row["test_wrong"], "", "test_wrong",
               f"empty on {p} (not a classification problem)")
    else:
        share = 100.0 * row["test_wrong"].count("1") / problem.n_test
        _check(lambda x: x is not None and math.isclose(x, share, rel_tol=1e-9, abs_tol=1e-12),
               row["test_classification"], "", "test_classification",
               f"{share!r} (the share of test patterns `test_wrong` marks wrong)")
    _check_to_target(row, problem)
    return a, p, c, row["run"]


def _check_to_target(row, problem):
    """The time to target of a row agrees with its run (as `_analyse._config_stats` times
    it): none unless on target; on a generated task the run itself if it succeeded; on a
    Proben1 problem the first strip end at most its relevant epoch, with the traversals
    and CPU seconds of that share of the run."""
    keys = ("epochs_to_target", "traversals_to_target", "cpu_seconds_to_target")
    _check(lambda x: type(x) is bool, row["on_target"], "", "on_target", "True or False")
    if row["diverged"] or (problem.generated and not row["success"]):
        _check(lambda x: x is False, row["on_target"], "", "on_target",
               "False in a run that diverged" if row["diverged"] else
               "False in a run that did not succeed")
    elif problem.generated:
        _check(lambda x: x is True, row["on_target"], "", "on_target",
               "True in a run that succeeded")
    else:
        t, v = problem.target, row["validation_error"]
        reached = (v is not None and v <= t * (1 + 1e-12) if row["on_target"]
                   else v is None or v > t * (1 - 1e-12))
        _check(lambda x: reached, row["on_target"], "", "on_target",
               f"{not row['on_target']} (its validation error {v!r}, the target {t!r})")
    if not row["on_target"]:
        for k in keys:
            _check(lambda x: x is None, row[k], "", k, "empty in a run not on target")
        return
    if problem.generated:
        for k, c in zip(keys, ("epochs", "traversals", "cpu_seconds")):
            _check(lambda x, c=c: x == row[c], row[k], "", k, f"its {c}, {row[c]!r}")
        return
    e, epochs = row["epochs_to_target"], row["epochs"]
    _check(lambda x: x is not None and x == int(x) and int(x) % STRIP == 0
           and STRIP <= x <= row["relevant_epoch"], e, "", "epochs_to_target",
           f"a multiple of {STRIP} from {STRIP} to its relevant epoch {row['relevant_epoch']}")
    share = e / epochs
    for k, c in zip(keys[1:], ("traversals", "cpu_seconds")):
        want = row[c] * share
        _check(lambda x, w=want: x is not None and math.isclose(x, w, rel_tol=1e-12),
               row[k], "", k, f"its {c} x {e:g}/{epochs} epochs, {want!r}")
