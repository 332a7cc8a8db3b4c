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
"Training algorithms"); :func:`load_rules` adds the rules a Python file of yours
defines to ``ALGORITHMS``, as ``--rules FILE`` does on the command line.
"""
from __future__ import annotations

from fastnet.training import _specs
from fastnet.training._algorithms import Algorithm, KernelRule
from fastnet.training._batch_rules import LM_MAX_MEMORY, normal_equation_flops
from fastnet.training._lbfgs import MAX_MAXCOR
from fastnet.training._registry import Param, parameter_table, rule
from fastnet.training._rules_files import RulesFile, load_rules
# (the catalogue and the reader of algorithm texts live with the trainers, which
# take texts; this is their public home)
from fastnet.training._specs import (  # noqa: F401 (SPACE_FUNCTIONS: read by fastnet.suite)
    ALGORITHMS, MAX_SPEC_LENGTH, SPACE_FUNCTIONS, from_spec, spec_of)

# Every registered algorithm's class is public here by its own name (RPROP,
# Backprop, SCG, ...): the registry's entries make the listing.
_CLASSES = {c.__name__: c for c in (getattr(make, "func", make) for make in ALGORITHMS.values())}
globals().update(_CLASSES)

__all__ = ["Algorithm", "KernelRule", *_CLASSES, "LM_MAX_MEMORY", "MAX_MAXCOR", "normal_equation_flops",
           "ALGORITHMS", "from_spec", "parse_spec", "MAX_SPEC_LENGTH", "spec_of", "parameter_table",
           "Param", "rule", "load_rules", "RulesFile"]


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
    make = None
    if space:
        from fastnet._distributions import make_distribution as make
    return _specs.parse_spec(spec, space=space, make_distribution=make)
