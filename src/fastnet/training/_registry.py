"""The rules' registration: one entry per rule, from which the rest is made.

A per-weight rule is its arithmetic, written once in C (``fastnet/_kernels/_rules.h``:
its step and its line of the kernels' table), and one entry here: the
decorator :func:`rule` on its parameter class, which declares the names it is
known by, its parameters (:class:`Param`: name, default, range, type) and its
line in the kernels' table. From that entry come its dataclass fields and their
defaults, the range checks made when it is constructed (the kernels check
nothing again), its record for the kernels (its parameters by the names of the
kernel record's fields), the names ``fastnet.algorithms.ALGORITHMS`` and the
specs (``"name(key=value)"``) know, and the parameter table of the
documentation (:func:`parameter_table`). Algorithms without a kernel rule
(SCG, Levenberg-Marquardt, L-BFGS) register their names and parameters the same
way. docs/algorithms.md walks through adding a rule.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from fastnet._validation import check_float, check_int

__all__ = ["Param", "rule", "REGISTRY", "check_params", "parameter_table"]

#: What makes every registered algorithm, by the names it is known by (its class,
#: or for RPROP's four variants the class with the variant given).
REGISTRY = {}


@dataclass(frozen=True)
class Param:
    """One parameter of a rule: its name, default, type and range.

    ``kind``: ``float`` (a finite real in the range ``[low, high]``, ends open
    where ``low_open``/``high_open``), ``int`` (an integer in ``[low, high]``) or
    ``None`` (any value: the class checks it itself, e.g. a choice of strings).
    ``optional``: None is allowed too. ``doc``: one line for the parameter table.
    """

    name: str
    default: object
    kind: type | None = float
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False
    doc: str = ""

    def check(self, value):
        """``value`` checked and converted, or TypeError/ValueError naming the parameter."""
        if value is None and self.optional:
            return None
        if self.kind is float:
            return check_float(value, self.name, low=self.low, high=self.high,
                               low_open=self.low_open, high_open=self.high_open)
        if self.kind is int:
            return check_int(value, self.name, minimum=self.low, maximum=self.high)
        return value

    def range_text(self):
        """The range as text: ``(0, 1)``, ``[0, inf)``, ``>= 1``, or ``""``."""
        if self.kind is None or (self.low is None and self.high is None):
            return ""
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "(" if self.low_open or self.low is None else "["
        right = ")" if self.high_open or self.high is None else "]"
        return f"{left}{lo}, {hi}{right}" + (" or None" if self.optional else "")


def rule(*names, params, kernel=None, name_param=None):
    """Register the decorated class as a rule known by ``names``, with ``params``.

    The class becomes a frozen dataclass whose fields are the parameters, in order,
    with their defaults; construction checks each (:func:`check_params`) before the
    class's own ``__post_init__`` runs (for checks across parameters). ``kernel``:
    the rule's name in the kernels' table (``fastnet._kernels._rules.RULES``), whose
    record takes the parameters of the same names (``KernelRule.kernel_values``).
    ``name_param``: each name is that parameter's value (RPROP's variants), and
    the catalogue makes the class with it.

    Raises
    ------
    TypeError
        If a name is not a string, ``params`` holds something other than `Param`
        objects, or the decorated object is not a class.
    ValueError
        If no name is given, a name is registered already or given twice, two
        parameters share a name, ``kernel`` is not in the kernels' table, or the
        kernel's record has a field the class has no parameter for.
    """
    _check_entry(names, params, kernel, name_param)

    def register(cls):
        if not isinstance(cls, type):
            raise TypeError(f"`rule` decorates a class, got {cls!r}.")
        cls.__annotations__ = {p.name: "object" for p in params}
        for p in params:
            setattr(cls, p.name, p.default)
        cls.PARAMS = tuple(params)
        cls.NAME_PARAM = name_param
        if kernel is not None:
            cls.kernel = kernel
        own = cls.__dict__.get("__post_init__")

        def __post_init__(self):
            check_params(self)
            if own is not None:
                own(self)
        cls.__post_init__ = __post_init__
        cls = dataclass(frozen=True)(cls)
        if kernel is not None:
            from fastnet._kernels._rules import RULES
            missing = set(RULES[kernel].fields) - {p.name for p in params} - set(
                getattr(cls, "KERNEL_DERIVED", ()))
            if missing:
                raise ValueError(f"rule {names[0]}: the kernel record's fields {sorted(missing)} "
                                 f"are no parameters of {cls.__name__}")
        for name in names:
            if name in REGISTRY:
                raise ValueError(f"an algorithm named {name!r} is registered already")
            REGISTRY[name] = (cls if name_param is None
                              else functools.partial(cls, **{name_param: name}))
        return cls
    return register


def _check_entry(names, params, kernel, name_param):
    """Refuse a registration entry that is not one, naming what is wrong."""
    if not names:
        raise ValueError("`names` must hold at least one name, got none.")
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"`names` must be non-empty strings, got {name!r}.")
        if name in REGISTRY:
            raise ValueError(f"an algorithm named {name!r} is registered already")
    if len(set(names)) != len(names):
        raise ValueError(f"`names` must differ, got {names!r}.")
    params = tuple(params)
    for p in params:
        if not isinstance(p, Param):
            raise TypeError(f"`params` must hold fastnet.algorithms.Param objects, got {p!r}.")
    fields = [p.name for p in params]
    if len(set(fields)) != len(fields):
        raise ValueError(f"`params` must name each parameter once, got {fields}.")
    if name_param is not None and name_param not in fields:
        raise ValueError(f"`name_param` must be one of the parameters {fields}, got "
                         f"{name_param!r}.")
    if kernel is not None:
        from fastnet._kernels._rules import RULES
        if kernel not in RULES:
            raise ValueError(f"`kernel` must be a rule of the kernels' table {sorted(RULES)}, "
                             f"got {kernel!r}.")


def check_params(algorithm):
    """Check and convert every declared parameter of ``algorithm`` in place."""
    put = object.__setattr__.__get__(algorithm)
    for p in type(algorithm).PARAMS:
        put(p.name, p.check(getattr(algorithm, p.name)))


def parameter_table():
    """The parameters of every registered algorithm as a Markdown table (the
    documentation's, docs/algorithms.md, is this text)."""
    rows = ["| algorithm | parameter | default | range |", "|---|---|---|---|"]
    classes = {name: getattr(make, "func", make) for name, make in REGISTRY.items()}
    seen = set()
    for cls in classes.values():
        if cls in seen:
            continue
        seen.add(cls)
        names = ", ".join(f"`{n}`" for n, c in classes.items() if c is cls)
        for p in cls.PARAMS:
            rows.append(f"| {names} | `{p.name}` | `{p.default!r}` | {p.range_text()} |")
    return "\n".join(rows) + "\n"
