"""The set-up record of a run: the Proben1 checklist (Prechelt 1994) as a dict for result files."""
import numpy as np

from fastnet._network_layout import DTYPE_NAMES
from fastnet._provenance import build_flags, machine_description
from fastnet._version import __version__

__all__ = ["setup_record", "network_record", "time_shares", "batch_record"]

# The network entries made so far, by the values they are made of (a study
# records the same topology thousands of times; its repr alone is ~1.5 us).
_NETWORKS = {}


def network_record(net):
    """The set-up record's ``network`` entry (a new dict each call)."""
    key = (type(net), net.n_in, tuple(net.hidden), net.n_out, net.shortcut,
           net.hidden_activation, net.output_activation, net.n_connections, net.dtype)
    made = _NETWORKS.get(key)
    if made is None:
        if len(_NETWORKS) >= 256:
            _NETWORKS.clear()
        made = _NETWORKS[key] = {
            "repr": repr(net), "layer_sizes": list(net.layer_sizes), "shortcut": net.shortcut,
            "n_connections": net.n_connections, "hidden_activation": net.hidden_activation,
            "output_activation": net.output_activation, "proben1": net.proben1_spec,
            "dtype": DTYPE_NAMES[net.dtype]}
    return dict(made, layer_sizes=list(made["layer_sizes"]))


def setup_record(net, algorithm, run, sets, *, seed, initialisation, block_size, extra=None):
    """The set-up every trainer records: ``algorithm`` an algorithm object,
    ``run`` the `RunOptions`, ``sets`` the checked `Sets`; ``extra`` more
    entries of ``parameters`` (RPROP's preset)."""
    stop = run.stop
    name, parameters = algorithm.record()
    if extra:
        parameters = {**parameters, **extra}
    return {
        "algorithm": name,
        "parameters": parameters,
        "network": network_record(net),
        "initialisation": initialisation,
        "stopping": stop.name if stop is not None else "none",
        "stopping_rule": stop.to_dict() if stop is not None else None,
        "strip": run.strip,
        "max_epochs": run.max_epochs,
        "error_function": "summed squared error, squared error percentage",
        # (the value type of every pass; the reported error sums accumulate in float64)
        "dtype": DTYPE_NAMES[net.dtype],
        "loss": run.loss,
        "weight_decay": run.weight_decay,
        "target_range": list(run.target_range),
        "seed": seed if isinstance(seed, (int, type(None))) else repr(seed),
        "n_train": sets.X.shape[0], "n_val": sets.n_val, "n_test": sets.n_test,
        "block_size": block_size,
        "version": __version__,
        "machine": machine_description(),
        "build": build_flags(),
    }


def time_shares(epochs):
    """Each trial's share of the batch's time: its part of the epochs trained."""
    epochs = np.asarray(epochs, dtype=float)
    total = np.add.reduce(epochs)
    return epochs / total if total > 0 else np.full(epochs.size, 1.0 / epochs.size)


def batch_record(method, n_trials, cpu, wall, trials, queued=False):
    """The ``setup["batch"]`` entry: how the batch trained (``handoffs``: the
    trials of each hand-off from the lanes to the single-network kernels;
    ``repacks``: (groups before, trials kept) of each packing of the lanes;
    ``queued``: every trial in the lanes' queue, a stopped trial's lane taken by
    the next at once) and how its time was shared."""
    return {"method": method, "n_trials": n_trials, "cpu_time": cpu, "wall_time": wall,
            "apportioned": "the batch's CPU and wall time, shared by epochs trained",
            "handoffs": trials.handoffs, "repacks": trials.repacks, "queued": queued}
