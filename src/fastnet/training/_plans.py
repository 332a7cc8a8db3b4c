"""What RPROP's options resolve to: Proben1's presets and stopping rules
(Prechelt 1994), the defaults, and the plan of a run (`RpropPlan`), made once
per distinct arguments."""
from __future__ import annotations

import math
from dataclasses import dataclass

from fastnet._validation import check_choice, check_float
from fastnet.network import MAX_INIT_SCALE
from fastnet.stopping import GL, AnyOf, MaxEpochs, ProgressBelow, StoppingCriterion, proben1_multilayer
from fastnet.training._algorithms import RPROP

__all__ = ["PRESETS", "proben1_stopping", "check_stop", "RpropPlan", "resolve_rprop", "UNSET"]


class _Default:
    """An argument left out: the preset's value, else the documented default.

    Its repr is what ``help(train_rprop)`` shows for such arguments.
    """

    def __repr__(self):
        return "<preset or default>"


#: An argument left out, the default of the arguments a preset may set
#: (``train_rprop``'s, ``train_rprop_many``'s); `resolve_rprop` takes it as ``unset``.
UNSET = _Default()


def proben1_stopping(kind: str) -> StoppingCriterion:
    """Proben1's stopping rule for ``kind`` (Prechelt 1994).

    Parameters
    ----------
    kind : {"linear", "multilayer", "multilayer-literal"}
        ``"linear"``: GL5 or P5(t) < 0.1 or 3000 epochs. ``"multilayer"``: GL2 or
        P5(t) < 0.1 or 3000 epochs, the reading that reproduces the report's
        published multilayer results (Tables 10-11). ``"multilayer-literal"``: the
        rule as the report words it, P5(t) < 0.1, or 3000 epochs, or once GL5, UP8
        and GL/P5 > 3 have each held at least once. See
        :func:`fastnet.stopping.proben1_multilayer` for the evidence.

    Returns
    -------
    StoppingCriterion
    """
    kind = check_choice(kind, "kind", {"linear", "multilayer", "multilayer-literal"})
    if kind == "linear":
        return AnyOf(GL(5), ProgressBelow(0.1), MaxEpochs(3000))
    return proben1_multilayer("tables" if kind == "multilayer" else "literal")



def check_stop(stop):
    """``stop`` as a criterion or None (the name of a Proben1 rule read)."""
    if not isinstance(stop, str):
        return stop
    if stop in ("linear", "multilayer", "multilayer-literal"):
        return proben1_stopping(stop)
    raise ValueError("`stop` must be None, a fastnet.stopping criterion such as GL(5) or "
                     "AnyOf(GL(5), MaxEpochs(3000)), or the name of a Proben1 rule, one of "
                     f"['linear', 'multilayer', 'multilayer-literal'], got {stop!r}.")

#: Proben1's RPROP set-ups (Prechelt 1994). ``init_scale`` is the half-width of
#: the uniform initial weights; ``delta0`` a range is drawn per weight.
#: ``"proben1-multilayer"`` is the reading of the report that reproduces its
#: published multilayer results (GL2, eta_plus 1.2, initial weights within
#: +-0.2: 41 of 42 test-error and 38 of 42 epoch means of Tables 10-11 match);
#: ``"proben1-multilayer-literal"`` keeps the report's words (eta_plus 1.1,
#: +-0.5, the "all three have held at least once" rule), which trains 3-10
#: times longer than the report's tables show. ``docs/reproduction.md`` has
#: the ablation behind the choice.
PRESETS = {
    "proben1-linear": dict(variant="rprop+", eta_plus=1.2, eta_minus=0.5, delta0=(0.005, 0.02),
                           delta_min=0.0, delta_max=50.0, init_scale=0.01, strip=5,
                           max_epochs=3000, stop="linear"),
    "proben1-multilayer": dict(variant="rprop+", eta_plus=1.2, eta_minus=0.5, delta0=(0.05, 0.2),
                               delta_min=0.0, delta_max=50.0, init_scale=0.2, strip=5,
                               max_epochs=3000, stop="multilayer"),
    "proben1-multilayer-literal": dict(variant="rprop+", eta_plus=1.1, eta_minus=0.5,
                                       delta0=(0.05, 0.2), delta_min=0.0, delta_max=50.0,
                                       init_scale=0.5, strip=5, max_epochs=3000,
                                       stop="multilayer-literal"),
}

_RPROP_DEFAULTS = dict(variant="rprop+", eta_plus=1.2, eta_minus=0.5, delta0=0.1,
                       delta_min=0.0, delta_max=50.0, max_epochs=100, stop=None, strip=5,
                       init_scale=None)
_RULE = ("variant", "eta_plus", "eta_minus", "delta0", "delta_min", "delta_max")


# The RPROP rules checked so far, by their arguments, and the plans of
# `resolve_rprop` by its own (a study trains thousands of runs with one rule;
# building and checking it costs several microseconds). A key holds each
# argument's type, and a zero's sign, besides its value: True == 1 and
# 0.0 == -0.0, but a bool is refused and -0.0 is recorded as given.
_RULES, _PLANS = {}, {}


def _rule_key(values, unset=None):
    """``values`` (str, int, float, None, ``unset`` or tuples of them) as a key
    of `_RULES` or `_PLANS`, or None: not cached (other types, e.g. a list, a
    NumPy number or a stopping criterion)."""
    key = []
    for v in values:
        if v is unset or v is None:
            key.append(v)
            continue
        t = type(v)
        if t is float:
            if v == 0.0:
                v = (v, math.copysign(1.0, v))
        elif t is tuple:
            v = _rule_key(v)
            if v is None:
                return None
        elif t is not str and t is not int:
            return None
        key.append((t, v))
    return tuple(key)


def _kept(cache, key, made):
    """``made``, kept in ``cache`` under ``key`` (unless None; at most 256 entries)."""
    if key is not None:
        if len(cache) >= 256:
            cache.clear()
        cache[key] = made
    return made


def _rule(values):
    """``RPROP(*values)`` (in the order of `_RULE`), checked once per distinct
    arguments."""
    key = _rule_key(values)
    rule = _RULES.get(key) if key is not None else None
    return rule if rule is not None else _kept(_RULES, key, RPROP(*values))


@dataclass(frozen=True)
class RpropPlan:
    """What ``train_rprop``'s options resolve to: the rule and the run's limits."""

    algorithm: RPROP
    max_epochs: object
    stop: StoppingCriterion | None
    strip: object
    init_scale: float | None
    preset: str | None
    init: str = "uniform"

    @property
    def draws_weights(self):
        """Whether each trial's weights are drawn (not taken from its network)."""
        return self.init_scale is not None or self.init != "uniform"


def resolve_rprop(preset, given, unset):
    """The defaults, ``preset`` and the arguments in ``given`` that are not
    ``unset``, as an `RpropPlan` (the rule checked; ``stop`` a criterion), made
    once per distinct arguments (unless one is, e.g., a criterion object: the
    plan's criterion, made from a name, is shared, and the strip loop copies it)."""
    key = _rule_key((preset, *given.values()), unset)
    if key is not None:
        key = (tuple(given), key)
        plan = _PLANS.get(key)
        if plan is not None:
            return plan
    return _kept(_PLANS, key, _plan(preset, given, unset))


def _plan(preset, given, unset):
    params = dict(_RPROP_DEFAULTS)
    if preset is not None:
        check_choice(preset, "preset", PRESETS)
        params.update(PRESETS[preset])
    for k, v in given.items():
        if v is not unset:
            params[k] = v
    stop = check_stop(params["stop"])
    algorithm = _rule(tuple([params[k] for k in _RULE]))
    init = params["init_scale"]
    if init is not None:
        init = check_float(init, "init_scale", low=0.0, high=MAX_INIT_SCALE)
    return RpropPlan(algorithm, params["max_epochs"], stop, params["strip"], init, preset)
