"""The distributions of a search space (``loguniform(1e-4, 0.1)`` as a parameter's value),
read by :func:`fastnet.algorithms.parse_spec` and drawn by :mod:`fastnet.suite`; nothing
here imports the rest of fastnet (it stands on the package's lowest floor, so that the
algorithm texts can read them without reaching up to the suite)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

__all__ = ["Uniform", "LogUniform", "IntUniform", "IntLogUniform", "Choice", "DISTRIBUTIONS",
           "make_distribution"]


#: The largest magnitude of an integer bound: integers are drawn through float64, which
#: holds every integer up to 2**53 exactly (beyond, some integers could never be drawn).
MAX_INT_BOUND = 2 ** 53


def _number(value, what, spec, *, integer=False):
    ok = (type(value) is int) if integer else (type(value) in (int, float))
    if not ok or (isinstance(value, float) and not math.isfinite(value)):
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"`algorithm` {spec!r}: {what} must be {kind}, got {value!r}.")
    if integer and abs(value) > MAX_INT_BOUND:
        raise ValueError(f"`algorithm` {spec!r}: {what} must be an integer of magnitude at most "
                         f"2**53 = {MAX_INT_BOUND} (drawn through float64), got {_short(value)}.")
    if not integer and type(value) is int:
        try:
            float(value)
        except OverflowError:
            raise ValueError(f"`algorithm` {spec!r}: {what} must be a finite number within float "
                             f"range (about 1.8e308), got {_short(value)}.") from None
    return value


def _short(value):
    """An integer as a message shows it: its digits, or its first ones and how many there are."""
    text = str(value)
    return text if len(text) <= 30 else f"{text[:12]}... ({len(text.lstrip('-'))} digits)"


def _log_scale(low, high, u):
    """The point at quantile ``u`` of [low, high] in log scale (0 < low), unclamped."""
    lo, hi = math.log(low), math.log(high)
    return math.exp(lo + u * (hi - lo))


class _Distribution:
    """What every distribution has: its name in an algorithm text, a value per quantile."""

    #: The function an algorithm text calls it by.
    name = ""

    def value(self, u):
        """The value at quantile ``u``.

        Parameters
        ----------
        u : float
            A point of [0, 1) (a coordinate of a quasi-random point).

        Returns
        -------
        The parameter's value.
        """
        return self._value(float(u))

    def text(self):
        """The distribution as an algorithm text writes it, such as ``loguniform(0.0001, 0.1)``."""
        args = (list(v) if isinstance(v, tuple) else v
                for v in (getattr(self, f.name) for f in dataclasses.fields(self)))
        return f"{self.name}({', '.join(map(repr, args))})"


@dataclass(frozen=True)
class _Bounds(_Distribution):
    """A distribution on [low, high] (its two fields, in this order)."""

    low: float
    high: float


@dataclass(frozen=True)
class Uniform(_Bounds):
    """Uniform on [low, high]: ``uniform(low, high)``.

    Attributes
    ----------
    low, high : float
    """

    name = "uniform"

    def _value(self, u):
        return float(self.low + u * (self.high - self.low))


@dataclass(frozen=True)
class LogUniform(_Bounds):
    """Uniform in log scale on [low, high], 0 < low: ``loguniform(low, high)``.

    Attributes
    ----------
    low, high : float
    """

    name = "loguniform"

    def _value(self, u):
        return float(min(self.high, max(self.low, _log_scale(self.low, self.high, u))))


@dataclass(frozen=True)
class IntUniform(_Bounds):
    """Each integer of low..high (both included) equally likely: ``intuniform(low, high)``.

    Attributes
    ----------
    low, high : int
    """

    name = "intuniform"

    def _value(self, u):
        return int(min(self.high, self.low + math.floor(u * (self.high - self.low + 1))))


@dataclass(frozen=True)
class IntLogUniform(_Bounds):
    """Integers of low..high (1 <= low) uniform in log scale: ``intloguniform(low, high)``,
    the integer part of a log-uniform value on [low, high + 1).

    Attributes
    ----------
    low, high : int
    """

    name = "intloguniform"

    def _value(self, u):
        return int(min(self.high, max(self.low, math.floor(_log_scale(self.low, self.high + 1, u)))))


@dataclass(frozen=True)
class Choice(_Distribution):
    """One of a list of values, each equally likely: ``choice([v1, v2, ...])``.

    Attributes
    ----------
    values : tuple
    """

    name = "choice"
    values: tuple

    def _value(self, u):
        return self.values[min(len(self.values) - 1, math.floor(u * len(self.values)))]


#: The distributions an algorithm text may give as a parameter's value, by name.
DISTRIBUTIONS = {d.name: d for d in (Uniform, LogUniform, IntUniform, IntLogUniform, Choice)}


def make_distribution(name, args, param, spec):
    """The distribution ``name(*args)`` of parameter ``param`` (literal arguments), checked.

    Raises
    ------
    ValueError
        Naming the parameter, what its distribution needs and what it got.
    """
    where = f"{param}={name}(...)"
    if name == "choice":
        if len(args) != 1 or not isinstance(args[0], (list, tuple)) or not args[0]:
            raise ValueError(f"`algorithm` {spec!r}: {where} must be choice([v1, v2, ...]) with "
                             f"at least one value, got choice{tuple(args)!r}.")
        values = tuple(args[0])
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"`algorithm` {spec!r}: {where} must list distinct values, got "
                             f"{list(values)!r}.")
        return Choice(values)
    if len(args) != 2:
        raise ValueError(f"`algorithm` {spec!r}: {where} must have two bounds, {name}(low, high), "
                         f"got {len(args)} values.")
    integer = name.startswith("int")
    low = _number(args[0], f"the low bound of {where}", spec, integer=integer)
    high = _number(args[1], f"the high bound of {where}", spec, integer=integer)
    if name in ("loguniform", "intloguniform") and not low > 0:
        raise ValueError(f"`algorithm` {spec!r}: {where} needs a low bound > 0 (a log scale), "
                         f"got {low!r}.")
    if not (low <= high if integer else low < high):
        rel = "<=" if integer else "<"
        raise ValueError(f"`algorithm` {spec!r}: {where} needs low {rel} high, got {low!r} and "
                         f"{high!r}.")
    if name == "uniform" and not math.isfinite(float(high) - float(low)):
        raise ValueError(f"`algorithm` {spec!r}: {where} needs a width high - low within float "
                         f"range (about 1.8e308), got {low!r} and {high!r}, {float(high) - float(low)!r} "
                         f"apart; narrow the bounds.")
    return DISTRIBUTIONS[name](low, high)
