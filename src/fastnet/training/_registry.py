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
import keyword
import math
import numbers
from dataclasses import dataclass

from fastnet._validation import check_float, check_int

__all__ = ["Param", "rule", "REGISTRY", "check_params", "parameter_table"]

#: What makes every registered algorithm, by the names it is known by (its class,
#: or for RPROP's four variants the class with the variant given).
REGISTRY = {}


@dataclass(frozen=True)
class Param:
    """One parameter of a rule: its name, default, type and range.

    The declaration is checked when it is made, so that a rule's entry cannot
    carry a default its own range refuses or a name its class cannot have.

    Parameters
    ----------
    name : str
        The parameter's name: a Python identifier (not a keyword), the field of
        the rule's class and the key of its spec (``"name(key=value)"``).
    default : object
        Its value when none is given; it must pass the parameter's own check
        (None only where ``optional``).
    kind : {float, int, None}, default float
        ``float``: a finite real in the range ``[low, high]`` (ends open where
        ``low_open``/``high_open``); ``int``: an integer in ``[low, high]``;
        None: any value (the class checks it itself, e.g. a choice of strings).
    low, high : float or None, default None
        The range's ends (None: unbounded); not NaN, and ``low <= high`` (``<``
        where an end is open).
    low_open, high_open : bool, default False
        Whether ``low``/``high`` themselves are excluded.
    optional : bool, default False
        None is allowed too.
    doc : str, default ""
        One line for the parameter table.

    Raises
    ------
    TypeError
        If ``name`` or ``doc`` is not a string, ``low``/``high`` not a real
        number or None, a flag not True or False, or ``default`` of another
        type than ``kind`` (a float default of an ``int`` parameter).
    ValueError
        If ``name`` is not an identifier, ``kind`` not float, int or None,
        ``low``/``high`` NaN or their range empty, or ``default`` outside the
        range or not finite.

    Examples
    --------
    >>> from fastnet.algorithms import Param
    >>> Param("eta_minus", 0.5, low=0.0, high=1.0, low_open=True, high_open=True).range_text()
    '(0, 1)'
    >>> Param("eta_minus", 1.5, low=0.0, high=1.0, low_open=True, high_open=True)
    Traceback (most recent call last):
    ...
    ValueError: Param 'eta_minus': `default` must be in (0.0, 1.0), got 1.5.
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

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"`name` must be a string, got {type(self.name).__name__} "
                            f"{self.name!r}.")
        if not self.name.isidentifier() or keyword.iskeyword(self.name):
            raise ValueError(f"`name` must be a Python identifier that is not a keyword (it "
                             f"becomes a field of the rule's class), got {self.name!r}.")
        where = f"Param {self.name!r}: "
        if self.kind not in (float, int, None):
            raise ValueError(f"{where}`kind` must be float, int or None, got {self.kind!r}.")
        for flag in ("low_open", "high_open", "optional"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{where}`{flag}` must be True or False, got "
                                f"{getattr(self, flag)!r}.")
        if not isinstance(self.doc, str):
            raise TypeError(f"{where}`doc` must be a string, got {type(self.doc).__name__}.")
        for end in ("low", "high"):
            value = getattr(self, end)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{where}`{end}` must be a real number or None, got "
                                f"{type(value).__name__} {value!r}.")
            if math.isnan(value):
                raise ValueError(f"{where}`{end}` must be a number or None, got nan.")
        if self.low is not None and self.high is not None and (
                self.low > self.high
                or self.low == self.high and (self.low_open or self.high_open)):
            raise ValueError(f"{where}`low` must be below `high` (at most `high` where both "
                             f"ends are closed), got the empty range "
                             f"{'(' if self.low_open else '['}{self.low!r}, {self.high!r}"
                             f"{')' if self.high_open else ']'}.")
        if self.default is None and not self.optional:
            if self.kind is not None:
                raise ValueError(f"{where}`default` must be a value of the parameter "
                                 "(None only with optional=True), got None.")
            return
        try:
            self._checked(self.default, "default")
        except (TypeError, ValueError) as exc:
            raise type(exc)(where + str(exc)) from None

    def check(self, value):
        """``value`` checked and converted, or TypeError/ValueError naming the parameter."""
        return self._checked(value, self.name)

    def _checked(self, value, name):
        if value is None and self.optional:
            return None
        if self.kind is float:
            return check_float(value, name, low=self.low, high=self.high,
                               low_open=self.low_open, high_open=self.high_open)
        if self.kind is int:
            return check_int(value, name, minimum=self.low, maximum=self.high)
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
