"""The baseline database's files are trusted for nothing: a copy of the shipped database with
one field changed at a time, its SHA-256s recomputed as the loader checks them, is refused
with the file, the line and the field named (as a suite's cell files are)."""
import csv
import gzip
import hashlib
import io
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from fastnet.suite import baselines

MANIFEST, CSV = "baselines.json", "baselines.csv.gz"


def shipped():
    root = resources.files("fastnet.suite").joinpath("database")
    return json.loads(root.joinpath(MANIFEST).read_text("utf-8")), root.joinpath(CSV).read_bytes()


def manifest_sha256(manifest):
    """The manifest's digest as the loader recomputes it: SHA-256 of the canonical JSON
    (sorted keys, no spaces) of every key but ``manifest_sha256``."""
    rest = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def write(folder, manifest, table, *, digests=True):
    """Write a database of ``manifest`` and ``table`` (rows of strings, header first; or the
    CSV file's bytes), with both SHA-256s recomputed (``digests``) as a forger would."""
    if isinstance(table, bytes):
        data = table
    else:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(table)
        data = gzip.compress(buf.getvalue().encode(), compresslevel=1, mtime=0)
    manifest = dict(manifest)
    if digests:
        manifest["csv_sha256"] = hashlib.sha256(data).hexdigest()
        manifest["manifest_sha256"] = manifest_sha256(manifest)
    (folder / CSV).write_bytes(data)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return folder


@pytest.fixture(scope="module")
def database():
    manifest, data = shipped()
    table = list(csv.reader(io.StringIO(gzip.decompress(data).decode())))
    return manifest, table


@pytest.fixture(scope="module")
def shipped_csv():
    return shipped()[1]


def find(table, **where):
    """Index in ``table`` of the first row whose columns hold the given texts (a callable
    is a test of the text)."""
    head = table[0]
    for i, row in enumerate(table[1:], 1):
        d = dict(zip(head, row))
        if all(v(d[k]) if callable(v) else d[k] == v for k, v in where.items()):
            return i
    raise AssertionError(f"no row with {where}")


def changed(table, i, **values):
    head = table[0]
    out = [list(r) for r in table]
    for k, v in values.items():
        out[i][head.index(k)] = v(dict(zip(head, out[i]))) if callable(v) else v
    return out


def test_the_shipped_database_loads_and_its_copy_too(database, tmp_path):
    manifest, table = database
    db = baselines()
    assert len(db) == manifest["runs"] == len(table) - 1
    assert manifest["manifest_sha256"] == manifest_sha256(manifest)
    assert len(baselines(write(tmp_path, manifest, table))) == len(db)


CANCER = dict(problem="cancer1", diverged="False")          # a classification problem
XOR_OK = dict(problem="xor", success="True")
XOR_FAILED = dict(problem="xor", success="False", diverged="False")
ON_TARGET = dict(problem="cancer1", on_target="True")
RUNS = 3


# (which row, the columns changed, the field the error names and what it says)
CORRUPTIONS = {
    "test error -5": (CANCER, dict(test_error="-5"), r"`test_error` must be a finite float, "
                      r"not negative, or null, got -5\.0"),
    "test error NaN": (CANCER, dict(test_error="nan"), r"`test_error` must be a finite float"),
    "test error inf": (CANCER, dict(test_error="inf"), r"`test_error` must be a finite float"),
    "validation error -inf": (CANCER, dict(validation_error="-inf"),
                              r"`validation_error` must be a finite float"),
    "train error text": (CANCER, dict(train_error="1_000"), r"`train_error` must be a number"),
    "epochs beyond the cap": (CANCER, dict(epochs="999999"),
                              r"`epochs` must be a whole number from 0 to the epoch limit 1000"),
    "epochs negative": (CANCER, dict(epochs="-5"), r"`epochs` must be a whole number from 0"),
    "epochs not whole": (CANCER, dict(epochs="100.5"), r"`epochs` must be a whole number, got"),
    "relevant epoch beyond the epochs": (
        CANCER, dict(relevant_epoch=lambda r: str(int(r["epochs"]) + 5)),
        r"`relevant_epoch` must be a whole number from 0 to its epochs"),
    "traversals -1": (CANCER, dict(traversals="-1"), r"`traversals` must be a whole number "
                      r"from 0 to 2\*\*63 - 1, got -1"),
    "traversals 2**70": (CANCER, dict(traversals=str(2 ** 70)), r"`traversals` must be a whole "
                         r"number from 0 to 2\*\*63 - 1, got 1180591620717411303424"),
    "CPU seconds NaN": (CANCER, dict(cpu_seconds="nan"), r"`cpu_seconds` must be finite "
                        r"seconds, not negative, got nan"),
    "CPU seconds negative": (CANCER, dict(cpu_seconds="-0.5"), r"`cpu_seconds` must be finite"),
    "unknown algorithm": (CANCER, dict(algorithm="sgd(learning_rate=uniform(0.1, 0.2))"),
                          r"`algorithm` must be one of the manifest's 11 algorithms"),
    "unknown problem": (CANCER, dict(problem="cancer9"),
                        r"`problem` must be one of the manifest's problems"),
    "a problem of the manifest, not this run's": (
        CANCER, dict(problem="glass1"), r"`test_wrong` must be 53 characters 0 or 1"),
    "unknown configuration": (CANCER, dict(parameters="rprop+(eta_plus=1.2, delta0=0.1)"),
                              r"`parameters` must be a configuration of rprop\+"),
    "study": (CANCER, dict(study="1"), r"`study` must be 0 \(the first study that drew it\)"),
    "configuration index": (CANCER, dict(configuration="3"), r"`configuration` must be 0 "),
    "run out of range": (CANCER, dict(run=str(RUNS)), r"`run` must be a run from 0 to 2"),
    "stop reason empty": (CANCER, dict(stop_reason=""), r"`stop_reason` must be a short text"),
    "diverged flag set": (CANCER, dict(diverged="True"),
                          r"`epochs` must be null in a run that diverged"),
    "diverged flag not a flag": (CANCER, dict(diverged="yes"),
                                 r"`diverged` must be True or False, got 'yes'"),
    "test wrong edited": (CANCER, dict(test_wrong=lambda r: "1" * len(r["test_wrong"])),
                          r"`test_classification` must be 100\.0 \(the share of test patterns"),
    "test wrong too short": (CANCER, dict(test_wrong="0101"),
                             r"`test_wrong` must be 174 characters 0 or 1"),
    "test classification above 100": (CANCER, dict(test_classification="250"),
                                      r"`test_classification` must be a percentage"),
    "success on a Proben1 problem": (CANCER, dict(success="True"),
                                     r"`success` must be null on a Proben1 problem"),
    "success without the criterion": (XOR_FAILED, dict(success="True"),
                                      r"`success` must be False \(its stop reason is"),
    "validation error on a generated task": (XOR_OK, dict(validation_error="1.5"),
                                             r"`validation_error` must be null on a generated"),
    "on target though above it": (dict(problem="cancer1", on_target="False", diverged="False"),
                                  dict(on_target="True"), r"`on_target` must be False \(its "
                                  r"validation error"),
    "epochs to target beyond the relevant epoch": (
        ON_TARGET, dict(epochs_to_target=lambda r: str(int(r["relevant_epoch"]) + 5)),
        r"`epochs_to_target` must be a multiple of 5 from 5 to its relevant epoch"),
    "traversals to target +81": (
        ON_TARGET, dict(traversals_to_target=lambda r: repr(float(r["traversals_to_target"]) + 81)),
        r"`traversals_to_target` must be its traversals x"),
    "time to target off target": (dict(problem="cancer1", on_target="False", diverged="False"),
                                  dict(epochs_to_target="5"),
                                  r"`epochs_to_target` must be empty in a run not on target"),
    "generated time to target": (XOR_OK, dict(cpu_seconds_to_target="1.0"),
                                 r"`cpu_seconds_to_target` must be its cpu_seconds"),
}


@pytest.mark.parametrize("where, values, message", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_row_the_suite_cannot_have_written_is_refused(database, tmp_path, where, values,
                                                        message):
    manifest, table = database
    i = find(table, **where)
    write(tmp_path, manifest, changed(table, i, **values))
    with pytest.raises(ValueError, match=message) as info:
        baselines(tmp_path)
    text = str(info.value)
    assert text.startswith(f"{tmp_path}: {CSV}:{i + 1}: "), text      # (line 1: the header)


def test_rows_dropped_or_doubled_are_refused(database, tmp_path):
    manifest, table = database
    write(tmp_path, manifest, table[:-1])
    with pytest.raises(ValueError, match=rf"{CSV} must hold the 4,752 runs its manifest counts "
                                         r"\(`runs`\), got 4,751; no row for run 2 of "):
        baselines(tmp_path)
    write(tmp_path, manifest, table + [table[7]])
    with pytest.raises(ValueError, match=rf"{CSV}:{len(table) + 1}: run \d of .* is there twice "
                                         r"\(line 8 too\)"):
        baselines(tmp_path)
    # one row dropped, another doubled: the count agrees, the rows do not
    write(tmp_path, manifest, table[:-1] + [table[1]])
    with pytest.raises(ValueError, match=r"is there twice \(line 2 too\)"):
        baselines(tmp_path)


def test_manifest_edits_are_refused(database, shipped_csv, tmp_path):
    manifest, _ = database
    for edit in ({"machine": "a faster machine"}, {"runs": 4751},
                 {"targets": {**manifest["targets"], "cancer1": 5.0}}):
        write(tmp_path, manifest, shipped_csv)
        m = json.loads((tmp_path / MANIFEST).read_text())
        m.update(edit)                              # (edited after its digest was written)
        (tmp_path / MANIFEST).write_text(json.dumps(m))
        with pytest.raises(ValueError, match=rf"{MANIFEST} differs from the SHA-256 it records "
                                             r"in `manifest_sha256` \(edited or corrupted\)"):
            baselines(tmp_path)


def setup_with(**values):
    return lambda m: {**m, "setup": {**m["setup"], **values}}


def first_configuration(text):
    def edit(m):
        a = m["setup"]["algorithms"][0]
        return {**m, "configurations": {**m["configurations"],
                                        a: [[text, *m["configurations"][a][0][1:]]]}}
    return edit


# (the manifest changed, its SHA-256 recomputed; what the error says)
MANIFEST_CORRUPTIONS = {
    "runs": (lambda m: {**m, "runs": 4751}, r"`runs` must be 4752 \(the runs of every "
             r"configuration"),
    "runs text": (lambda m: {**m, "runs": "4752"}, r"`runs` must be 4752"),
    "a target moved": (lambda m: {**m, "targets": {**m["targets"], "cancer1": 0.5}},
                       r"baselines\.csv\.gz:\d+: `on_target` must be False"),
    "a target missing": (lambda m: {**m, "targets": {**m["targets"], "cancer1": None}},
                         r"`setup` is not a suite's set-up: .*cancer1"),
    "a target on a generated task": (lambda m: {**m, "targets": {**m["targets"], "xor": 1.0}},
                                     r"`targets.xor` must be null on a generated task"),
    "budget": (setup_with(budget=9), r"`configurations\['rprop\+.*'\]` must be 1 lists \(one "
               r"per study\) of 9 configurations"),
    "epoch cap": (setup_with(max_epochs=500), r"baselines\.csv\.gz:\d+: `epochs` must be a "
                  r"whole number from 0 to the epoch limit 500"),
    "budget not whole": (setup_with(budget=8.0), r"`setup` is not a suite's set-up: `budget`"),
    "unknown problem": (lambda m: setup_with(problems=m["setup"]["problems"] + ["nosuch1"])(m),
                        r"`targets` must be an object with a target for each of"),
    "unknown algorithm": (setup_with(algorithms=["sgd"]), r"`setup` is not a suite's set-up: "
                          r".*sgd"),
    "a configuration outside its space": (
        first_configuration("rprop+(eta_plus=1.9, delta0=0.5)"),
        r"`configurations\['rprop\+.*'\]\[0\]\[0\]` must be a configuration its search "
        r"space can give"),
    "data SHA-256": (lambda m: {**m, "data_sha256": {**m["data_sha256"], "glass1": "xyz"}},
                     r"`data_sha256` must be the SHA-256"),
    "unknown key": (lambda m: {**m, "note": "trust me"}, r"its keys must be .*; unknown note"),
    "missing key": (lambda m: {k: v for k, v in m.items() if k != "seeds"}, r"missing seeds"),
    "columns": (lambda m: {**m, "columns": ["algorithm"]},
                r"`columns` must be the list DATABASE_COLUMNS"),
    "CPU seconds": (lambda m: {**m, "training_cpu_seconds": -1.0},
                    r"`training_cpu_seconds` must be finite"),
}


@pytest.mark.parametrize("edit, message", MANIFEST_CORRUPTIONS.values(),
                         ids=MANIFEST_CORRUPTIONS.keys())
def test_a_manifest_the_suite_cannot_have_written_is_refused(database, shipped_csv, tmp_path,
                                                            edit, message):
    manifest, _ = database
    write(tmp_path, edit(manifest), shipped_csv)
    with pytest.raises(ValueError, match=message) as info:
        baselines(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}: "), info.value


def test_a_truncated_or_undigested_file_is_a_named_error(database, tmp_path):
    manifest, table = database
    write(tmp_path, manifest, table)
    text = (tmp_path / MANIFEST).read_text()
    (tmp_path / MANIFEST).write_text(text[:len(text) // 2])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(tmp_path))}: {MANIFEST} is not a "
                                         r"baseline database's manifest \(truncated, or not JSON"):
        baselines(tmp_path)
    (tmp_path / MANIFEST).write_text(text.replace('"runs": 4752', '"runs": NaN'))
    with pytest.raises(ValueError, match=r"not JSON: a non-finite number NaN"):
        baselines(tmp_path)
    # a truncated CSV whose SHA-256 was recomputed
    write(tmp_path, manifest, table)
    data = (tmp_path / CSV).read_bytes()[:5000]
    (tmp_path / CSV).write_bytes(data)
    m = json.loads((tmp_path / MANIFEST).read_text())
    m["csv_sha256"] = hashlib.sha256(data).hexdigest()
    m["manifest_sha256"] = manifest_sha256(m)
    (tmp_path / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(ValueError, match=rf"{CSV} is not a gzip-compressed CSV of the runs"):
        baselines(tmp_path)
    # a manifest of fastnet 0.2.0: no digest of its own
    write(tmp_path, {k: v for k, v in manifest.items() if k != "manifest_sha256"}, table,
          digests=False)
    with pytest.raises(ValueError, match=rf"{MANIFEST} has no `manifest_sha256` .*build the "
                                         r"database again"):
        baselines(tmp_path)


def test_the_shipped_files_are_what_the_tests_copy():
    root = Path(resources.files("fastnet.suite").joinpath("database"))
    assert sorted(p.name for p in root.iterdir() if p.suffix in (".json", ".gz")) == [CSV, MANIFEST]
