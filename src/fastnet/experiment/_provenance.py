"""Provenance of a result file: the Proben1 checklist, machine, build, data, kernels."""
from __future__ import annotations

import functools
import platform
import time

import numpy as np

from fastnet._provenance import build_flags, kernel_fingerprint, machine_description
from fastnet.experiment._protocol import DEFAULT_ALGORITHM, build_network, training_arguments
from fastnet.experiment._resultfile import FORMAT, FORMAT_VERSION


def _load(problem, root):
    """The dataset, read once per file: the cache is keyed by the file found (which
    depends on ``$FASTNET_DATA`` and the user cache) and its modification time."""
    from fastnet.datasets import find_proben1_file

    path = find_proben1_file(problem, root)
    return _load_found(problem, root, str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _load_found(problem, root, path, mtime_ns):
    from fastnet.datasets import load_proben1

    return load_proben1(problem, root)


def _checklist(experiment, datasets):
    """The Proben1 checklist (Prechelt 1994) of every (problem, network) cell."""
    from fastnet.rprop import PRESETS, proben1_stopping

    cells = {}
    for problem in experiment.problems:
        ds = datasets[problem]
        for network in experiment.networks:
            net, preset = build_network(network, ds, experiment.rule, experiment.dtype)
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
                "data": {"n_train": ds.n_train, "n_val": ds.n_val, "n_test": ds.n_test,
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
                "dtype": experiment.dtype,
                "arithmetic": ("float64" if experiment.dtype == "float64" else
                               f"{experiment.dtype} passes, error sums accumulated in float64"),
            }
    return cells


def _algorithm_setups(experiment):
    """{algorithm: {"name", "parameters"}} of the experiment's algorithms."""
    from fastnet.algorithms import from_spec

    out = {}
    for spec in experiment.algorithms:
        name, params = from_spec(spec).record()
        out[spec] = {"name": name, "parameters": {k: (list(v) if isinstance(v, tuple) else v)
                                                  for k, v in params.items()}}
    return out


def _header(experiment, datasets):
    default = experiment.algorithms == (DEFAULT_ALGORITHM,)
    return {
        "type": "header", "format": FORMAT, "format_version": FORMAT_VERSION,
        "setup_hash": experiment.setup_hash(), "identity": experiment.identity(),
        "grid": {"problems": list(experiment.problems), "networks": list(experiment.networks),
                 "runs": experiment.runs,
                 **({} if default else {"algorithms": list(experiment.algorithms)})},
        "runs_rule": ("every run of a (problem, network) cell is an independent training from "
                      "its own seed, SeedSequence(master, spawn_key=(sha(problem), sha(network), "
                      "run" + ("" if default else ", and sha(algorithm) for any algorithm but "
                               "rprop+") + ")); no run is excluded or restarted; reports may "
                      "exclude exactly the worst half by validation error (Prechelt 1994)"),
        **({} if default else {"algorithm_setups": _algorithm_setups(experiment)}),
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
