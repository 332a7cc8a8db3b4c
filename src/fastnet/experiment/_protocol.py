"""Proben1's protocol: network names, presets and rules of a run, seeds, run counts."""
from __future__ import annotations

import hashlib

import numpy as np



#: Named networks (besides Proben1 specs such as ``"8+4 s"``).
NETWORK_KINDS = ("linear", "pivot", "noshortcut")

#: train_rprop arguments an experiment may override (all JSON numbers or strings).
TRAIN_OPTIONS = ("variant", "eta_plus", "eta_minus", "delta0", "delta_min", "delta_max",
                 "max_epochs", "init_scale")

_LINEAR_PRESET = "proben1-linear"
#: Readings of Proben1's multilayer set-up (`Experiment.rule`) and their presets:
#: "tables" reproduces the report's published results, "literal" follows its words
#: (see fastnet.stopping.proben1_multilayer and docs/reproduction.md).
MULTILAYER_RULES = {"tables": "proben1-multilayer", "literal": "proben1-multilayer-literal"}

#: Runs per data file of Proben1's protocols (Prechelt 1994): 10 for linear networks,
#: 60 for the others.
PROBEN1_RUNS = {"linear": 10, "pivot": 60, "noshortcut": 60}

#: The algorithm of an experiment that names none: Proben1's RPROP presets. Its runs
#: are recorded, and their seeds derived, as before experiments had algorithms.
DEFAULT_ALGORITHM = "rprop+"


def normalise_algorithm(spec):
    """An algorithm's canonical text (`fastnet.algorithms.spec_of` of what
    `fastnet.algorithms.from_spec` reads)."""
    from fastnet.algorithms import from_spec, spec_of

    return spec_of(from_spec(spec))


def algorithm_arguments(preset, options, spec):
    """(trainer, keyword arguments) of a run of algorithm ``spec``: ``"rprop"`` with
    `training_arguments` of the preset, the options and the RPROP parameters the
    spec changes from RPROP's defaults (its variant unless ``"rprop+"``); else
    ``"many"`` with ``fastnet.train_many``'s arguments: the algorithm and the
    preset's (and options') initial weights, strip, epoch limit and stopping rule."""
    import dataclasses

    from fastnet.algorithms import RPROP, from_spec
    from fastnet.rprop import PRESETS, proben1_stopping

    algorithm = from_spec(spec)
    if isinstance(algorithm, RPROP):
        changed = {f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm)
                   if getattr(algorithm, f.name) != f.default}
        changed = {k: (list(v) if isinstance(v, tuple) else v) for k, v in changed.items()}
        return "rprop", training_arguments(preset, {**options, **changed})
    rprop = training_arguments(preset, options)
    params = {**PRESETS[preset], **{k: v for k, v in options.items()
                                    if k in ("max_epochs", "init_scale")}}
    stop = rprop.get("stop", proben1_stopping(PRESETS[preset]["stop"]))
    return "many", dict(algorithm=algorithm, init_scale=params["init_scale"],
                        strip=params["strip"], max_epochs=params["max_epochs"], stop=stop)

def expand_problems(problems):
    """Turn problem names into Proben1 dataset names.

    Parameters
    ----------
    problems : str or sequence of str
        Dataset names (``"cancer1"``, ``"glass1d"``) or problem names
        (``"cancer"``, meaning permutations 1, 2 and 3), or ``"all"`` (the 45
        datasets).

    Returns
    -------
    tuple of str
        Dataset names in their preferred form, without duplicates, in the order given.

    Raises
    ------
    ValueError
        If a name is neither a problem nor a dataset (the message lists the problems).

    Examples
    --------
    >>> expand_problems(["cancer", "glass1d", "cancer1"])
    ('cancer1', 'cancer2', 'cancer3', 'glass1d')
    """
    from fastnet.datasets import PROBEN1_PROBLEMS, parse_proben1_name

    if isinstance(problems, str):
        problems = [problems]
    out = []
    for name in problems:
        if not isinstance(name, str):
            raise TypeError(f"`problems` must hold strings, got {name!r}.")
        key = name.strip().lower()
        if key == "all":
            names = [f"{p}{k}" for p in PROBEN1_PROBLEMS for k in (1, 2, 3)]
        elif key in PROBEN1_PROBLEMS:
            names = [f"{key}{k}" for k in (1, 2, 3)]
        else:
            problem, perm, part = parse_proben1_name(key)
            names = [f"{problem}{perm}" + ("" if part == "a" else part)]
        out.extend(n for n in names if n not in out)
    if not out:
        raise ValueError("`problems` must name at least one Proben1 problem, got none.")
    return tuple(out)


def _normalise_network(name):
    """Canonical network name: a kind of NETWORK_KINDS or a Proben1 spec."""
    from fastnet.network import MLP

    if not isinstance(name, str):
        raise TypeError(f"`networks` must hold strings, got {name!r}.")
    key = " ".join(name.strip().lower().split())
    if key in NETWORK_KINDS:
        return key
    try:
        spec = MLP.from_proben1(key, 1, 1).proben1_spec
    except ValueError:
        raise ValueError(
            f"`networks`: {name!r} is neither one of {', '.join(NETWORK_KINDS)} nor a Proben1 "
            "spec such as '8+4 l' or '16+0 s'.") from None
    return "linear" if spec == "0+0 l" else spec


def build_network(network, dataset, rule="tables", dtype="float64"):
    """The network and RPROP preset of a run.

    Parameters
    ----------
    network : str
        ``"linear"``, ``"pivot"``, ``"noshortcut"`` or a Proben1 spec (``"8+4 s"``).
    dataset : fastnet.datasets.Dataset
        The Proben1 dataset (its pivot architecture and sizes are used).
    rule : {"tables", "literal"}, default "tables"
        Reading of the multilayer set-up (`MULTILAYER_RULES`).
    dtype : {"float64", "float32"}, default "float64"
        The network's value type (``MLP(..., dtype=...)``).

    Returns
    -------
    net : MLP
        Fresh network (weights are drawn by training from the run's seed).
    preset : str
        ``"proben1-linear"`` for networks without hidden layers, else the
        multilayer preset of ``rule``.

    Raises
    ------
    ValueError
        If ``network`` is unknown, or ``"pivot"``/``"noshortcut"`` is asked for a
        problem without a pivot architecture (mushroom).
    """
    from fastnet.network import MLP

    name = _normalise_network(network)
    if name == "linear":
        net = MLP.from_proben1("linear", dataset.n_in, dataset.n_out, dtype=dtype)
    elif name in ("pivot", "noshortcut"):
        arch = dataset.architecture
        if arch is None:
            raise ValueError(
                f"`networks`: {name!r} is undefined for {dataset.name}: Proben1 Table 7 gives no "
                "pivot architecture for this problem; use 'linear' or a spec such as '16+8 l'.")
        net = MLP.from_proben1(arch.spec, dataset.n_in, dataset.n_out,
                               shortcut=(name == "pivot"), dtype=dtype)
    else:
        net = MLP.from_proben1(name, dataset.n_in, dataset.n_out, dtype=dtype)
    return net, (_LINEAR_PRESET if not net.hidden else MULTILAYER_RULES[rule])


#: Proben1's epoch limit; a smaller cap may be set with ``options={"max_epochs": n}``.
PROBEN1_MAX_EPOCHS = 3000
#: Proben1's strip length: criteria, and so an epoch cap, act at strip ends only.
PROBEN1_STRIP = 5


def check_max_epochs(n):
    """Check an epoch cap: a multiple of the strip length 5, at most Proben1's 3000."""
    from fastnet._validation import check_int

    n = check_int(n, "max_epochs", minimum=PROBEN1_STRIP)
    if n % PROBEN1_STRIP or n > PROBEN1_MAX_EPOCHS:
        raise ValueError(f"`max_epochs` must be a multiple of the strip length {PROBEN1_STRIP} "
                         f"and at most Proben1's {PROBEN1_MAX_EPOCHS}, got {n}.")
    return n


def training_arguments(preset, options):
    """``train_rprop`` keyword arguments of a run: the preset, the overrides, the stopping rule.

    Parameters
    ----------
    preset : str
        A key of `fastnet.rprop.PRESETS`.
    options : mapping
        Overrides (keys of `TRAIN_OPTIONS`).

    Returns
    -------
    dict
        ``preset``, the overrides, and with a ``max_epochs`` cap the stopping rule
        ``proben1_stopping(kind) | MaxEpochs(cap)``: the cap is then a stopping
        criterion that fires at a strip end (stop reason ``"max_epochs"``), as
        Proben1's own 3000-epoch limit does, not a cut that leaves the rule unmet.
    """
    from fastnet.rprop import PRESETS, proben1_stopping
    from fastnet.stopping import MaxEpochs

    kw = dict(options)
    kw["preset"] = preset
    if "max_epochs" in kw:
        kw["max_epochs"] = check_max_epochs(kw["max_epochs"])
        kw["stop"] = proben1_stopping(PRESETS[preset]["stop"]) | MaxEpochs(kw["max_epochs"])
    return kw


def _name_key(text):
    """A stable 64-bit integer from a name (for seed derivation)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def run_seed(master, problem, network, run, algorithm=DEFAULT_ALGORITHM):
    """The seed of one run, derived from the master seed and the run's identity only.

    Parameters
    ----------
    master : int
        Master seed of the experiment.
    problem, network : str
        Dataset name and network name as used by the experiment.
    run : int
        Run index, 0-based.
    algorithm : str, default "rprop+"
        The algorithm's canonical text (`fastnet.algorithms.spec_of`).

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(master, spawn_key=(key(problem), key(network), run))`` with
        ``key`` the first 8 bytes of the SHA-256 of the name, and ``key(algorithm)``
        appended to the spawn key for any algorithm but `DEFAULT_ALGORITHM`. It
        does not depend on which other runs exist or in which order they run.

    Examples
    --------
    >>> s = run_seed(0, "cancer1", "linear", 3)
    >>> s.entropy, s.spawn_key[2]
    (0, 3)
    """
    key = (_name_key(problem), _name_key(network), int(run))
    if algorithm != DEFAULT_ALGORITHM:
        key += (_name_key(algorithm),)
    return np.random.SeedSequence(int(master), spawn_key=key)
