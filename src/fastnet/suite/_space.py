"""Search spaces in algorithm texts: distributions of parameters and the quasi-random
configurations drawn from them."""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import numpy as np

from fastnet.suite._distributions import DISTRIBUTIONS, Choice

__all__ = ["SearchSpace", "search_space", "draw_configurations"]


@dataclass(frozen=True)
class SearchSpace:
    """An algorithm's search space: its name, the fixed parameters and the distributions.

    Attributes
    ----------
    text : str
        The algorithm text as given.
    name : str
        The algorithm's name (a key of ``fastnet.algorithms.ALGORITHMS``).
    fixed : dict
        Parameters with one value.
    dimensions : dict
        Parameter -> distribution (`Uniform`, `LogUniform`, `IntUniform`,
        `IntLogUniform`, `Choice`), in the order given.
    """

    text: str
    name: str
    fixed: dict
    dimensions: dict

    __hash__ = None

    @property
    def is_fixed(self):
        """True without distributions: the text is one configuration."""
        return not self.dimensions

    def configuration(self, values):
        """The canonical text (`fastnet.algorithms.spec_of`) of one configuration.

        Parameters
        ----------
        values : dict
            Parameter -> value for the dimensions.

        Returns
        -------
        str
        """
        from fastnet.algorithms import from_spec, spec_of

        params = {**self.fixed, **values}
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return spec_of(from_spec(f"{self.name}({args})" if args else self.name))

    def draw(self, k, seed, study=0):
        """The configurations of one study: ``k`` canonical algorithm texts.

        Parameters
        ----------
        k : int
            Configurations to draw (a text without distributions gives one).
        seed : int
            The suite's master seed.
        study : int, default 0
            The study's index; each study draws its own points.

        Returns
        -------
        list of str
            Drawn by scrambled Halton points (`scipy.stats.qmc.Halton`) seeded by
            ``SeedSequence(seed, spawn_key=(sha(text), study))``: the same on every
            machine and for every problem.
        """
        if self.is_fixed:
            return [self.configuration({})]
        from scipy.stats import qmc

        from fastnet.experiment._protocol import _name_key

        ss = np.random.SeedSequence(int(seed), spawn_key=(_name_key(self.name),
                                                          _name_key(self.text), int(study)))
        points = qmc.Halton(d=len(self.dimensions), scramble=True,
                            seed=np.random.default_rng(ss)).random(int(k))
        return [self.configuration({p: dist.value(float(u)) for (p, dist), u
                                    in zip(self.dimensions.items(), row)}) for row in points]


def search_space(spec):
    """Read an algorithm text with distributions as parameter values.

    Parameters
    ----------
    spec : str
        Such as ``"adam(learning_rate=loguniform(1e-4, 1e-1))"``; the values
        ``uniform(a, b)``, ``loguniform(a, b)`` (0 < a), ``intuniform(a, b)``,
        ``intloguniform(a, b)`` (integers, 1 <= a) and ``choice([v, ...])``.
        Read by :func:`fastnet.algorithms.parse_spec` (no code is run).

    Returns
    -------
    SearchSpace

    Raises
    ------
    ValueError
        For what :func:`fastnet.algorithms.parse_spec` refuses, a malformed
        distribution, a parameter grid (a list: give ``choice([...])``), and a bound the
        algorithm refuses (each distribution's ends are tried, naming the parameter).
    TypeError
        If ``spec`` is not a string.

    Examples
    --------
    >>> s = search_space("adam(learning_rate=loguniform(1e-4, 1e-1), beta1=0.8)")
    >>> s.name, s.fixed, s.dimensions
    ('adam', {'beta1': 0.8}, {'learning_rate': LogUniform(low=0.0001, high=0.1)})
    >>> search_space("rprop+").is_fixed
    True
    """
    from fastnet.algorithms import parse_spec

    name, params = parse_spec(spec, space=True)
    for k, v in params.items():
        if isinstance(v, list):
            raise ValueError(f"`algorithm` {spec!r}: {k}={v!r} is a grid; a suite draws "
                             f"configurations: write {k}=choice({v!r}).")
    _check_names(spec, name, params)
    dims = {k: v for k, v in params.items() if isinstance(v, tuple(DISTRIBUTIONS.values()))}
    fixed = {k: v for k, v in params.items() if k not in dims}
    space = SearchSpace(spec, name, fixed, dims)
    # every end of every dimension is a value the algorithm must take (refused now, not
    # after hours of training)
    lows = {p: d.value(0.0) for p, d in dims.items()}
    for p, d in dims.items():
        for end in ((d.values if isinstance(d, Choice) else (d.value(0.0), d.high))):
            try:
                space.configuration({**lows, p: end})
            except (ValueError, TypeError) as exc:
                raise ValueError(f"`algorithm` {spec!r}: {p}={d.text()} reaches {end!r}, which "
                                 f"{name} refuses ({exc})") from None
    return space


def _check_names(spec, name, params):
    """Refuse a parameter the algorithm does not have, naming it (before any end of a
    distribution is tried, which would blame the distribution)."""
    from fastnet.algorithms import ALGORITHMS

    make = ALGORITHMS[name]
    bound = make.keywords if isinstance(make, functools.partial) else {}
    signature = inspect.signature(make).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.values()):
        return
    known = [p for p in signature if p not in bound]
    unknown = [k for k in params if k not in known]
    if unknown:
        raise ValueError(f"`algorithm` {spec!r}: {name} has no parameter "
                         f"{', '.join(unknown)}; its parameters are {', '.join(known)}.")


def draw_configurations(spec, k, seed, study=0):
    """The configurations one study of a suite trains for algorithm text ``spec``.

    Parameters
    ----------
    spec : str
        An algorithm text, with or without distributions (:func:`search_space`).
    k : int
        The budget: configurations per study (a text without distributions gives one).
    seed : int
        The suite's master seed.
    study : int, default 0

    Returns
    -------
    list of str
        Canonical algorithm texts (:func:`fastnet.algorithms.spec_of`).

    Examples
    --------
    >>> draw_configurations("backprop(learning_rate=choice([0.1, 0.2]))", 2, seed=0)
    ['backprop(learning_rate=0.2)', 'backprop(learning_rate=0.1)']
    >>> draw_configurations("scg", 16, seed=0)
    ['scg']
    """
    from fastnet._validation import check_int

    check_int(k, "budget", minimum=1)
    return search_space(spec).draw(k, seed, study)
