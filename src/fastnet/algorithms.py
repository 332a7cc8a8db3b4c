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
from fastnet.training._algorithms import RPROP, Algorithm, Backprop
from fastnet.training._batch_rules import (LM_MAX_MEMORY, SCG, LevenbergMarquardt,
                                           normal_equation_flops)
from fastnet.training._lbfgs import LBFGS, MAX_MAXCOR
from fastnet.training._per_weight import Adam, Quickprop
# (the catalogue and the reader of algorithm texts live with the trainers, which
# take texts; this is their public home)
from fastnet.training._specs import ALGORITHMS, MAX_SPEC_LENGTH, from_spec, parse_spec, spec_of

__all__ = ["Algorithm", "RPROP", "Backprop", "Quickprop", "Adam", "SCG", "LevenbergMarquardt",
           "LBFGS", "LM_MAX_MEMORY", "MAX_MAXCOR", "normal_equation_flops", "ALGORITHMS", "from_spec",
           "parse_spec", "MAX_SPEC_LENGTH",
           "spec_of"]
