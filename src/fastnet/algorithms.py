"""Training algorithms as objects, for :func:`fastnet.train` and the experiments.

Every algorithm is a frozen dataclass whose fields are its parameters, checked
when it is made; :func:`fastnet.train` trains one network with it under
Proben1's strips and stopping rules (Prechelt 1994). Algorithms are also named
by short strings, the form the command line takes::

    >>> from fastnet.algorithms import from_spec
    >>> from_spec("irprop+")
    RPROP(variant='irprop+', eta_plus=1.2, eta_minus=0.5, delta0=0.1, delta_min=0.0, delta_max=50.0)
    >>> from_spec("backprop(learning_rate=0.1, momentum=0.9)").momentum
    0.9

``ALGORITHMS`` maps each name to what makes it; the four RPROP variants
(Riedmiller & Braun 1993; Igel & Hüsken 2000) are names of their own, beside
``"backprop"``, ``"quickprop"`` (Fahlman 1988) and ``"adam"`` (Kingma & Ba 2015);
``"scg"``, ``"lm"`` and ``"lbfgs"`` name scaled conjugate gradient (Møller
1993), Levenberg-Marquardt (Hagan & Menhaj 1994) and SciPy's L-BFGS-B.
Subclass :class:`Algorithm` to train with a rule of your own (see the guide
"Training algorithms").
"""
from __future__ import annotations

import ast
import cmath
import functools
import re

from fastnet.training._algorithms import RPROP, VARIANTS, Algorithm, Backprop
from fastnet.training._batch_rules import (LM_MAX_MEMORY, SCG, LevenbergMarquardt,
                                           normal_equation_flops)
from fastnet.training._lbfgs import LBFGS, MAX_MAXCOR
from fastnet.training._per_weight import Adam, Quickprop

__all__ = ["Algorithm", "RPROP", "Backprop", "Quickprop", "Adam", "SCG", "LevenbergMarquardt",
           "LBFGS", "LM_MAX_MEMORY", "MAX_MAXCOR", "normal_equation_flops", "ALGORITHMS", "from_spec",
           "parse_spec", "MAX_SPEC_LENGTH",
           "spec_of"]

#: Algorithm names and the callables that make them from keyword parameters.
ALGORITHMS = {name: functools.partial(RPROP, variant=name) for name in VARIANTS}
ALGORITHMS["backprop"] = Backprop
ALGORITHMS["quickprop"] = Quickprop
ALGORITHMS["adam"] = Adam
ALGORITHMS["scg"] = SCG
ALGORITHMS["lm"] = LevenbergMarquardt
ALGORITHMS["lbfgs"] = LBFGS

_SPEC = re.compile(r"^\s*([A-Za-z][\w+\-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def from_spec(spec: str | Algorithm) -> Algorithm:
    """The algorithm a short text names, such as ``"quickprop(epsilon=0.01)"``.

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
    >>> from_spec("rprop+(eta_plus=1.1, delta0=(0.05, 0.2))").delta0
    (0.05, 0.2)
    """
    if isinstance(spec, Algorithm):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"`algorithm` must be an Algorithm or a name such as 'rprop+' or "
                        f"'backprop(learning_rate=0.1)', got {spec!r}.")
    name, kwargs = parse_spec(spec)
    try:
        return ALGORITHMS[name](**kwargs)
    except TypeError as exc:
        if "unexpected keyword" in str(exc) or "got multiple values" in str(exc):
            raise ValueError(f"`algorithm` {spec!r}: {name} has no such parameter ({exc}).") from None
        raise


#: The longest algorithm text :func:`parse_spec` reads (a spec is a name and a few
#: parameters; the limit keeps a crafted text from tying up the parser).
MAX_SPEC_LENGTH = 10_000


def parse_spec(spec: str, *, space: bool = False) -> tuple[str, dict]:
    """The name and keyword parameters of an algorithm text, unchecked against the algorithm.

    The one reader of specs: :func:`from_spec`, the grids of ``fastnet study``
    (lists as values) and the search spaces of ``fastnet suite`` (distributions as
    values) all use it.

    Parameters
    ----------
    spec : str
        ``name`` or ``name(key=literal, ...)``; the name from ``ALGORITHMS`` (any case),
        the values Python literals (lists are kept: grid axes).
    space : bool, default False
        Also read a search space: a value may be ``uniform(a, b)``, ``loguniform(a, b)``,
        ``intuniform(a, b)``, ``intloguniform(a, b)`` or ``choice([v, ...])`` with
        literal arguments (returned as the distribution objects of
        :mod:`fastnet.suite`; nothing is called or evaluated). Without it such a value
        is refused, naming the parameter.

    Returns
    -------
    name : str
        The name, in lower case.
    params : dict
        The parameters in the order given.

    Raises
    ------
    ValueError
        For an unknown name, a text longer than ``MAX_SPEC_LENGTH``, positional or
        ``**``-unpacked arguments, a parameter given twice, a value that is not a literal,
        an RPROP name with another ``variant``, and a distribution without ``space``
        or malformed (bounds not numbers, low not below high, an empty choice).
    TypeError
        If ``spec`` is not a string.

    Examples
    --------
    >>> parse_spec("Backprop(learning_rate=[0.1, 0.5])")
    ('backprop', {'learning_rate': [0.1, 0.5]})
    >>> parse_spec("adam(learning_rate=loguniform(1e-4, 0.1))", space=True)
    ('adam', {'learning_rate': LogUniform(low=0.0001, high=0.1)})
    """
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
                         f"parameters such as 'backprop(learning_rate=0.1)', got {spec!r}.")
    params = _parameters(match.group(2) or "", spec, space)
    if name in VARIANTS and "variant" in params and params["variant"] != name:
        raise ValueError(f"`algorithm` {spec!r} names the variant twice ({name!r} and "
                         f"variant={params['variant']!r}); write {params['variant']!r} as the "
                         "name instead.")
    return name, params


#: The distributions of a search space (:func:`parse_spec` with ``space=True``).
SPACE_FUNCTIONS = ("uniform", "loguniform", "intuniform", "intloguniform", "choice")


def _distribution(node, key, text, spec, space, usage):
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
    from fastnet.suite._distributions import make_distribution

    return make_distribution(name, args, key, spec)


def _parameters(text, spec, space=False):
    if not text.strip():
        return {}
    shown = repr(spec) if len(spec) <= 200 else f"{spec[:100]!r}... ({len(spec)} characters)"
    usage = (f"`algorithm` parameters must be name=value pairs with literal values, such as "
             f"'quickprop(epsilon=0.01, mu=1.75)', got {shown}")
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
            params[kw.arg] = _distribution(kw.value, kw.arg, text, spec, space, usage)
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
    >>> spec_of(RPROP(variant="irprop+", eta_plus=1.1))
    'irprop+(eta_plus=1.1)'
    >>> from_spec(spec_of(Backprop(learning_rate=0.5))) == Backprop(learning_rate=0.5)
    True
    """
    import dataclasses

    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"`algorithm` must be an Algorithm, got {algorithm!r}.")
    cls = type(algorithm)
    name = algorithm.variant if isinstance(algorithm, RPROP) else next(
        (k for k, make in ALGORITHMS.items() if make is cls), cls.__name__.lower())
    changed = []
    for field in dataclasses.fields(algorithm):
        if field.name == "variant" and isinstance(algorithm, RPROP):
            continue
        value = getattr(algorithm, field.name)
        if field.default is dataclasses.MISSING or value != field.default:
            changed.append(f"{field.name}={value!r}")
    return f"{name}({', '.join(changed)})" if changed else name
