"""Algorithms by name: the catalogue ``ALGORITHMS`` and the reader of short texts
such as ``"backprop(learning_rate=0.1)"`` (:func:`from_spec`, :func:`parse_spec`,
:func:`spec_of`).

It lives in ``fastnet.training`` because :func:`fastnet.train` and
:func:`fastnet.train_many` take such texts and the divergence hints name a rule
by its text; :mod:`fastnet.algorithms` is its public home (re-exported there).
"""
from __future__ import annotations

import ast
import cmath
import re

# (the modules that register the algorithms: their entries make the catalogue)
from fastnet.training import _batch_rules, _lbfgs, _per_weight  # noqa: F401
from fastnet.training._algorithms import Algorithm
from fastnet.training._registry import REGISTRY

__all__ = ["ALGORITHMS", "from_spec", "parse_spec", "MAX_SPEC_LENGTH", "SPACE_FUNCTIONS",
           "spec_of"]

#: Algorithm names and the callables that make them from keyword parameters: the
#: registered algorithms (``fastnet.training._registry``).
ALGORITHMS = REGISTRY

_SPEC = re.compile(r"^\s*([A-Za-z][\w+\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def from_spec(spec: str | Algorithm) -> Algorithm:
    """The algorithm a short text names, such as ``"backprop(learning_rate=0.1)"``.

    Parameters
    ----------
    spec : str or Algorithm
        A name from ``ALGORITHMS``, optionally followed by keyword parameters
        in parentheses whose values are Python literals (numbers, strings,
        tuples, True/False). An `Algorithm` is returned as it is.

    Returns
    -------
    Algorithm

    Raises
    ------
    ValueError
        For an unknown name, parameters that are not ``name=literal`` pairs, or
        a parameter the algorithm does not have or refuses (naming it).
    TypeError
        If ``spec`` is neither a string nor an `Algorithm`.

    Examples
    --------
    >>> from fastnet.algorithms import from_spec
    >>> from_spec("rprop+(eta_plus=1.1, delta0=(0.05, 0.2))").delta0
    (0.05, 0.2)
    """
    if isinstance(spec, Algorithm):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"`algorithm` must be an Algorithm or a name such as 'rprop+' or "
                        f"'backprop(learning_rate=0.1)', got {spec!r}.")
    made = _MADE.get(spec)
    if made is not None and made[0] is ALGORITHMS.get(made[1]):
        return made[2]
    name, kwargs = parse_spec(spec)
    try:
        algorithm = ALGORITHMS[name](**kwargs)
    except TypeError as exc:
        if "unexpected keyword" in str(exc) or "got multiple values" in str(exc):
            raise ValueError(f"`algorithm` {spec!r}: {name} has no such parameter ({exc}).") from None
        raise
    params = getattr(type(algorithm), "__dataclass_params__", None)
    if params is not None and params.frozen:
        # (a frozen algorithm is a value: the same text may share it, and its kernel
        # record; a per-call train() then parses and checks nothing again)
        if len(_MADE) >= _MADE_MAX:
            _MADE.clear()
        _MADE[spec] = (ALGORITHMS[name], name, algorithm)
    return algorithm


#: Algorithms made from texts, by text: (what made it, its name, the algorithm).
_MADE = {}
_MADE_MAX = 1024


#: The longest algorithm text :func:`parse_spec` reads (a spec is a name and a few
#: parameters; the limit keeps a crafted text from tying up the parser).
MAX_SPEC_LENGTH = 10_000


def parse_spec(spec: str, *, space: bool = False,
               make_distribution=None) -> tuple[str, dict]:
    """The name and keyword parameters of an algorithm text (see
    :func:`fastnet.algorithms.parse_spec`, its public form). With ``space``, a
    value may name a distribution, which ``make_distribution(name, args, key,
    spec)`` makes (the search-space layer gives it: nothing here knows its
    classes)."""
    if not isinstance(spec, str):
        raise TypeError(f"`algorithm` must be a name such as 'rprop+' or "
                        f"'backprop(learning_rate=0.1)', got {spec!r}.")
    if len(spec) > MAX_SPEC_LENGTH:
        raise ValueError(f"`algorithm` must be at most {MAX_SPEC_LENGTH} characters, got "
                         f"{len(spec)}.")
    match = _SPEC.match(spec)
    name = match.group(1).lower() if match else None
    if name not in ALGORITHMS:
        raise ValueError(f"`algorithm` must name one of {sorted(ALGORITHMS)}, optionally with "
                         f"parameters such as 'backprop(learning_rate=0.1)', got {spec!r} (a "
                         "rule of your own: load its file with --rules FILE, or "
                         "fastnet.algorithms.load_rules).")
    params = _parameters(match.group(2) or "", spec, space, make_distribution)
    by = getattr(getattr(ALGORITHMS[name], "func", None), "NAME_PARAM", None)
    if by and by in params and params[by] != name:
        raise ValueError(f"`algorithm` {spec!r} names the {by} twice ({name!r} and "
                         f"{by}={params[by]!r}); write {params[by]!r} as the name instead.")
    return name, params


#: The distributions of a search space (:func:`parse_spec` with ``space=True``).
SPACE_FUNCTIONS = ("uniform", "loguniform", "intuniform", "intloguniform", "choice")


def _distribution(node, key, text, spec, space, usage, make_distribution):
    """The distribution a call ``loguniform(1e-4, 0.1)`` names (its arguments literals,
    nothing evaluated), or a ValueError naming parameter ``key``."""
    name = node.func.id if isinstance(node.func, ast.Name) else None
    shown = ast.get_source_segment(f"f({text})", node)
    if name not in SPACE_FUNCTIONS or node.keywords:
        raise ValueError(usage + f" ({key} is not a literal; a search space is one of "
                         f"{', '.join(f'{n}(...)' for n in SPACE_FUNCTIONS)} with "
                         f"positional literal arguments, got {shown}).")
    if not space:
        raise ValueError(f"`algorithm` {spec!r}: {key}={shown} is a search space; only "
                         "`fastnet suite` draws configurations from one: give one value.")
    try:
        args = [ast.literal_eval(a) for a in node.args]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(usage + f" (the arguments of {key}={name}(...) must be literals, got "
                         f"{shown}).") from None
    if not _finite(args):
        raise ValueError(f"`algorithm` {spec!r}: {key}={shown} must have finite bounds.")
    return make_distribution(name, args, key, spec)


def _parameters(text, spec, space=False, make_distribution=None):
    if not text.strip():
        return {}
    shown = repr(spec) if len(spec) <= 200 else f"{spec[:100]!r}... ({len(spec)} characters)"
    usage = (f"`algorithm` parameters must be name=value pairs with literal values, such as "
             f"'backprop(learning_rate=0.1, momentum=0.9)', got {shown}")
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except (MemoryError, RecursionError):
        raise ValueError(usage + " (nested too deeply to read).") from None
    except (SyntaxError, ValueError):
        raise ValueError(usage + ".") from None
    if not isinstance(call, ast.Call) or call.args:
        raise ValueError(usage + " (a positional value names no parameter).")
    params = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise ValueError(usage + " (no ** unpacking).")
        if kw.arg in params:
            raise ValueError(f"`algorithm` {spec!r} gives {kw.arg} twice.")
        if isinstance(kw.value, ast.Call):
            params[kw.arg] = _distribution(kw.value, kw.arg, text, spec, space, usage,
                                           make_distribution)
            continue
        try:
            params[kw.arg] = ast.literal_eval(kw.value)
        except (MemoryError, RecursionError):
            raise ValueError(usage + f" ({kw.arg} is nested too deeply to read).") from None
        except (ValueError, TypeError, SyntaxError):
            raise ValueError(usage + f" ({kw.arg} is not a literal).") from None
        if not _finite(params[kw.arg]):
            raise ValueError(f"`algorithm` {spec!r}: {kw.arg} must be finite, got "
                             f"{ast.get_source_segment(f'f({text})', kw.value)} "
                             f"({params[kw.arg]!r}).")
    return params


def _finite(value):
    """Whether every number of a literal (lists and tuples walked) is finite."""
    if isinstance(value, (list, tuple)):
        return all(map(_finite, value))
    return not isinstance(value, (float, complex)) or cmath.isfinite(value)


def spec_of(algorithm: Algorithm) -> str:
    """The short text that :func:`from_spec` turns back into ``algorithm``.

    Parameters
    ----------
    algorithm : Algorithm
        One of the package's algorithms (or a user's, if registered in
        ``ALGORITHMS`` under its class name in lower case).

    Returns
    -------
    str
        The name and every parameter that differs from its default.

    Examples
    --------
    >>> from fastnet.algorithms import RPROP, Backprop, from_spec, spec_of
    >>> spec_of(RPROP(variant="irprop+", eta_plus=1.1))
    'irprop+(eta_plus=1.1)'
    >>> from_spec(spec_of(Backprop(learning_rate=0.5))) == Backprop(learning_rate=0.5)
    True
    """
    import dataclasses

    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"`algorithm` must be an Algorithm, got {algorithm!r}.")
    cls = type(algorithm)
    by = getattr(cls, "NAME_PARAM", None)       # (RPROP: its variant names it)
    name = getattr(algorithm, by) if by else next(
        (k for k, make in ALGORITHMS.items() if make is cls), cls.__name__.lower())
    changed = []
    for field in dataclasses.fields(algorithm):
        if field.name == by:
            continue
        value = getattr(algorithm, field.name)
        if field.default is dataclasses.MISSING or value != field.default:
            changed.append(f"{field.name}={value!r}")
    return f"{name}({', '.join(changed)})" if changed else name
