"""Frozen targets: per problem a fixed validation error target, read from a versioned file
shipped in the package (``fastnet/suite/targets.json``), so that a target never moves with
the set of compared algorithms."""
from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np

from fastnet._docstrings import fill

__all__ = ["frozen_targets", "choose_targets", "targets_document", "TARGETS_FORMAT",
           "TARGET_QUANTILE"]

#: Format version of ``targets.json`` (a reader refuses another).
TARGETS_FORMAT = 1
#: The quantile over the tuned baseline algorithms of their selected validation errors
#: that a frozen target is: most tuned baselines reach it (their times are measured),
#: and it is still a good error.
TARGET_QUANTILE = 0.75
#: How the frozen targets were chosen (written into the file).
TARGETS_RULE = (
    "Per Proben1 problem: the {q:g} quantile (linear interpolation, numpy.quantile) over the "
    "baseline algorithms of their tuned validation errors, each the median over studies of "
    "the selected configuration's median best validation squared error percentage "
    "(algorithms whose selected configurations diverged are left out). Generated tasks: "
    "the success criterion {success} within the epoch limit.")


def _read(path=None):
    if path is None:
        text = resources.files("fastnet.suite").joinpath("targets.json").read_text("utf-8")
        where = "fastnet/suite/targets.json"
    else:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        where = str(path)
    d = json.loads(text)
    if not isinstance(d, dict) or d.get("format") != TARGETS_FORMAT:
        got = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise ValueError(f"{where}: a targets file of format {TARGETS_FORMAT} was expected, "
                         f"got format {got!r}.")
    return d


def frozen_targets(path=None):
    """The frozen validation error targets.

    Parameters
    ----------
    path : str or os.PathLike, optional
        A targets file; default the one shipped in the package.

    Returns
    -------
    dict
        {problem: target}: a validation squared error percentage for a Proben1
        problem, None for a generated task (judged by its success criterion).

    Raises
    ------
    ValueError
        If the file is not of format `TARGETS_FORMAT`.

    Examples
    --------
    >>> t = frozen_targets()
    >>> t["xor"] is None, t["cancer1"] > 0
    (True, True)
    """
    d = _read(path)
    out = {p: float(v) for p, v in d["targets"].items()}
    out.update(dict.fromkeys(d.get("generated", {})))
    return out


#: Parameters of the functions that choose targets from a suite's result.
_CHOOSE_PARAMETERS = """
Parameters
----------
result : SuiteResult
    The result of a suite of baseline algorithms.
quantile : float, default `TARGET_QUANTILE`
    Per problem, the quantile over the algorithms of their selected validation
    errors (`CellSummary.validation`).
"""


@fill(parameters=_CHOOSE_PARAMETERS)
def choose_targets(result, quantile=TARGET_QUANTILE):
    """Choose frozen targets from a (baseline) suite's result.

    {{parameters}}

    Returns
    -------
    dict
        {problem: target} for the Proben1 problems where an algorithm has a finite
        selected validation error.
    """
    out = {}
    for p in result.suite.problems:
        if result.suite.is_generated(p):
            continue
        v = [result.cells[(a, p)].validation for a in result.suite.algorithms]
        v = [x for x in v if math.isfinite(x)]
        if v:
            out[p] = float(np.quantile(v, quantile))
    return out


@fill(parameters=_CHOOSE_PARAMETERS)
def targets_document(result, quantile=TARGET_QUANTILE):
    """The content of a targets file chosen from a suite's result (`choose_targets`).

    {{parameters}}

    Returns
    -------
    dict
        JSON values: ``format``, ``rule``, ``fastnet``, ``setup``, ``data_sha256``,
        ``targets`` {Proben1 problem: float} and ``generated`` {task: criterion}.
    """
    from fastnet._version import __version__

    s = result.suite
    setup = {k: v for k, v in s.to_dict().items() if k not in ("target", "rope")}
    success = setup["generated_success"]
    return {"format": TARGETS_FORMAT,
            "rule": TARGETS_RULE.format(q=quantile, success=success),
            "quantile": quantile, "fastnet": __version__, "setup": setup,
            "data_sha256": {p: h for p, h in result.data_sha256.items() if h},
            "targets": choose_targets(result, quantile),
            "generated": {p: f"{success} within {s.limit} epochs"
                          for p in s.problems if s.is_generated(p)}}


def resolve_target(target, problems, is_generated):
    """A suite's ``target`` as given (None, a float, ``"frozen"`` or a mapping) checked:
    None, a float, or {Proben1 problem: float} covering every Proben1 problem."""
    from fastnet._validation import check_float

    if target is None:
        return None
    if not isinstance(target, (str, dict)):
        return check_float(target, "target", low=0.0)
    if isinstance(target, str):
        if target != "frozen":
            raise ValueError(f"`target` must be a number, 'frozen' or a dict {{problem: "
                             f"target}}, got {target!r}.")
        target = {p: t for p, t in frozen_targets().items() if t is not None}
        source = "the frozen targets (fastnet/suite/targets.json)"
    else:
        source = "`target`"
    need = [p for p in problems if not is_generated(p)]
    missing = [p for p in need if p not in target]
    if missing:
        raise ValueError(f"{source} must give a target for every Proben1 problem of the "
                         f"suite; none for {', '.join(missing)} (it has "
                         f"{', '.join(sorted(target)) or 'none'}).")
    return {p: check_float(target[p], f"target[{p!r}]", low=0.0) for p in need}
