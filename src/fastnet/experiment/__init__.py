"""Experiments: problems x networks x algorithms x runs under one master seed (Prechelt 1994's rules).

An *experiment* trains every network on every problem a number of times with
Proben1's set-up (Prechelt 1994), by default with its RPROP, or with each of several
algorithms. Each run's seed is derived from the master seed and the run's identity
(problem, network, run index, algorithm) alone, so results do
not depend on the order, the number of processes or the machine pool that runs
them. Runs execute sequentially, in local processes (joblib) or on a Dask
cluster, through one code path (`joblib.Parallel` with the ``loky`` or
``dask`` backend).

Results are JSON lines: a header record with the complete set-up (the Proben1
checklist, fastnet version, machine and build flags), then one record per run,
appended, flushed and fsync'ed as soon as the run finishes. Running the same
experiment on the same file resumes it: finished runs are kept, missing ones run.
Every line is checked when a file is read (nesting at most `MAX_NESTING` levels,
finite numbers, the fields of a header or run record with their types and ranges,
runs inside the header's grid), so a changed file is a `ResultFileError` naming its
line and field. A crash can leave at most one incomplete last line; it is detected and cut off
(with a `ResultFileWarning`), never silently dropping a complete record. Files
are only ever replaced atomically (temporary file + ``os.replace``).

Network names
-------------
* ``"linear"``: no hidden layer (preset ``proben1-linear``)
* ``"pivot"``: Proben1's pivot architecture of the permutation (Prechelt 1994, Table 7)
* ``"noshortcut"``: the pivot's hidden sizes without shortcut connections
* ``"8+4 s"``: any Proben1 spec, with shortcut connections

Networks with hidden layers use preset ``proben1-multilayer``.

Examples
--------
>>> exp = Experiment(problems=("cancer1",), networks=("linear",), runs=2, seed=0)
>>> [t[:3] for t in exp.run_keys()]
[('cancer1', 'linear', 0), ('cancer1', 'linear', 1)]
>>> run_experiment(exp, "cancer1-linear.jsonl")          # doctest: +SKIP
"""
from fastnet.exceptions import FileLockedError, ResultFileError
from fastnet.experiment._protocol import (
    MULTILAYER_RULES, NETWORK_KINDS, PROBEN1_MAX_EPOCHS, PROBEN1_RUNS, PROBEN1_STRIP, TRAIN_OPTIONS,
    build_network, check_max_epochs, expand_problems, run_seed, training_arguments,
)
from fastnet._provenance import kernel_fingerprint
from fastnet.experiment._record import MAX_CELLS, MAX_COUNT, MAX_MEASURE, MAX_NESTING
from fastnet.experiment._resultfile import (
    FORMAT, FORMAT_VERSION, TIMING_FIELDS, ResultFile, ResultFileWarning, read_results,
    strip_timing,
)
from fastnet.experiment._runner import (
    BATCH_SIZE, MAX_JOBS, MIXED_BLOCK, ExperimentProgress, ExperimentResult, run_experiment,
)
from fastnet.experiment._spec import MAX_GRID_RUNS, MAX_RUNS, Experiment
from fastnet.experiment._workers import PARENT_POLL, SCHEDULER_TIMEOUT

__all__ = [
    "Experiment",
    "MAX_CELLS",
    "MAX_COUNT",
    "MAX_MEASURE",
    "MAX_NESTING",
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
    "BATCH_SIZE",
    "MULTILAYER_RULES",
    "PROBEN1_MAX_EPOCHS",
    "PROBEN1_RUNS",
    "PROBEN1_STRIP",
    "SCHEDULER_TIMEOUT",
    "MAX_GRID_RUNS",
    "MAX_JOBS",
    "MAX_RUNS",
    "PARENT_POLL",
    "MIXED_BLOCK",
]
