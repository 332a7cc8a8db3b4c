"""The per-weight rules as the kernels take them: one typed record per rule, by name.

The rules are written once, in C (``_rules.h``): each rule's step, and one line of
the rules' table that gives its code, its parameters (the fields of its record)
and the per-weight arrays it keeps. This module reads that table: :data:`RULES`
names every rule with its code, fields and arrays, and :class:`Rule` makes the
record a kernel call takes, from keywords that must be exactly the rule's fields
(so that no parameter crosses into the kernels by position).
"""
from collections import namedtuple

from libc.math cimport isfinite

cdef extern from "_rules.h" nogil:
    ctypedef struct fn_rule_entry:
        const char* name
        const char* fields
        int gp, st, dw
    const fn_rule_entry fn_rule_table[]

#: A rule of the table: its kernel code, its parameters (the record's fields, in
#: order) and the per-weight arrays it keeps, of ("g_prev", "step", "dw_prev").
RuleEntry = namedtuple("RuleEntry", "code fields states")

#: Every rule of the kernels' table by name (``"backprop"``, ``"rprop_plus"``, ...).
RULES = {}
#: The same, by code.
NAMES = []


def _read_table():
    cdef int code
    for code in range(FN_RULE_COUNT):
        e = fn_rule_table[code]
        name = e.name.decode()
        fields = tuple(e.fields.decode().split())
        states = tuple(a for a, kept in zip(("g_prev", "step", "dw_prev"), (e.gp, e.st, e.dw))
                       if kept)
        if len(fields) > FN_RULE_NP:
            raise ImportError(f"kernel: rule {name} has more than {FN_RULE_NP} parameters")
        RULES[name] = RuleEntry(code, fields, states)
        NAMES.append(name)


_read_table()


cdef class Rule:
    """One rule's record for the kernels: ``Rule("backprop", learning_rate=0.1,
    momentum=0.9, decay=0.0)``.

    Parameters
    ----------
    name : str
        A rule of :data:`RULES`.
    **params : float
        Exactly the rule's fields (``RULES[name].fields``), each a finite number.
        Their ranges are the rule's class's to check (``fastnet.training``); the
        kernels read them as given.

    Raises
    ------
    ValueError
        For an unknown rule, a missing or unknown field or a value that is not finite.
    """

    def __init__(self, str name, **params):
        cdef Py_ssize_t i
        if name not in RULES:
            raise ValueError(f"kernel: unknown rule {name!r}; the table has {sorted(RULES)}")
        entry = RULES[name]
        if set(params) != set(entry.fields):
            raise ValueError(f"kernel: rule {name!r} takes exactly the fields {entry.fields}, "
                             f"got {tuple(params)}")
        self.name = name
        self.states = entry.states
        self.c.code = entry.code
        for i in range(FN_RULE_NP):
            self.c.p[i] = 0.0
        for i, field in enumerate(entry.fields):
            self.c.p[i] = float(params[field])
            if not isfinite(self.c.p[i]):
                raise ValueError(f"kernel: rule {name!r}: {field} must be finite, got "
                                 f"{params[field]!r}")

    @property
    def code(self):
        """The rule's kernel code."""
        return self.c.code

    @property
    def params(self):
        """The record's fields and values, as a dict."""
        return {f: self.c.p[i] for i, f in enumerate(RULES[self.name].fields)}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Rule({self.name!r}, {args})"
