"""Training rules from a Python file of the user's own: ``--rules FILE`` of ``fastnet
study``, ``fastnet suite`` and ``fastnet train``, :func:`fastnet.algorithms.load_rules`
in Python.

The file is run as Python runs a module it imports: it is the user's own code, run with
the user's rights, as ``python FILE`` would run it (only its ``if __name__ ==
"__main__":`` block does not run). Every public subclass of `Algorithm` it defines joins
the catalogue under its class name in lower case, until it is unloaded. A loaded rule
keeps the SHA-256 of the file's bytes: a study's or a suite's resume keys include it (so
that an edited file trains again instead of resuming old results), and the file's bytes
travel with each task to the worker processes or Dask workers, which load them before
reading the task's algorithm (they may not share the file system).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path

from fastnet.training._algorithms import Algorithm
from fastnet.training._registry import REGISTRY

__all__ = ["RulesFile", "load_rules", "rules_of", "rules_records", "rules_key", "ensure_loaded"]


@dataclass(frozen=True)
class RulesFile:
    """A Python file of training rules, loaded (:func:`fastnet.algorithms.load_rules`).

    Attributes
    ----------
    path : str
        The file, as an absolute path.
    sha256 : str
        SHA-256 (64 hex digits) of its bytes when it was loaded: what the resume keys of
        studies and suites include.
    names : tuple of str
        The algorithm names it added to ``fastnet.algorithms.ALGORITHMS`` (its classes'
        names in lower case), in the order the file defines them.
    source : bytes
        The file's bytes, which worker processes run to know the rules.

    Notes
    -----
    Used as a context manager, it unloads its rules on leaving the block.
    """

    path: str
    sha256: str
    names: tuple
    source: bytes = field(repr=False)

    @property
    def file_name(self):
        """The file's name without its folder (what pages and result files show)."""
        return os.path.basename(self.path)

    def unload(self):
        """Take this file's rules out of ``ALGORITHMS`` (nothing if they are out already,
        or if a later load of the file replaced them)."""
        for name in self.names:
            entry = _LOADED.get(name)
            if entry is None or entry.rules is not self:
                continue
            del _LOADED[name]
            if REGISTRY.get(name) is entry.cls:
                REGISTRY.pop(name)
            if sys.modules.get(entry.module.__name__) is entry.module:
                del sys.modules[entry.module.__name__]

    def to_dict(self, names=None):
        """What study.json and suite.json record of the file.

        Parameters
        ----------
        names : sequence of str, optional
            Those of its rules that were used (default all of `names`).

        Returns
        -------
        dict
            ``{"file": file name, "sha256": ..., "algorithms": [names]}``.
        """
        return {"file": self.file_name, "sha256": self.sha256,
                "algorithms": list(self.names if names is None else names)}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unload()
        return False


@dataclass(frozen=True)
class _Entry:
    """One loaded rule: its file, its class and the module the file ran in."""

    rules: RulesFile
    cls: type
    module: types.ModuleType


#: The algorithms loaded from rules files, by name.
_LOADED = {}


def load_rules(path) -> RulesFile:
    """Run a Python file of training rules and add its algorithms to ``ALGORITHMS``.

    The file runs as Python runs a module it imports (not as ``__main__``): it is your
    own code, run with your rights, as ``python FILE`` would run it. Every public class
    it defines (its name not starting with ``_``) that subclasses :class:`Algorithm`
    becomes an algorithm named by the class name in lower case: ``class SignSGD`` is
    ``"signsgd(learning_rate=0.01)"`` in :func:`from_spec`, ``-a`` of the command line, a
    study's grids and a suite's search spaces, its dataclass fields the parameters.
    Classes imported into the file do not count. Loading a file loaded before (the same
    path) replaces its rules, so that an edited file loads again.

    Parameters
    ----------
    path : str or os.PathLike
        The Python file.

    Returns
    -------
    RulesFile
        The file's name, SHA-256, bytes and the names it added; ``unload()`` takes them
        out again, as does leaving a ``with`` block.

    Raises
    ------
    ValueError
        If the file does not exist or cannot be read, raises an exception when it runs
        (the message shows it, with the line; the exception is chained), defines no
        public `Algorithm` subclass, defines one that is not a dataclass, or one whose
        name clashes with an algorithm of fastnet or of another rules file.
    TypeError
        If ``path`` is not a path.

    Examples
    --------
    >>> from pathlib import Path
    >>> from fastnet.algorithms import from_spec, load_rules
    >>> _ = Path("my_rules.py").write_text('''
    ... from dataclasses import dataclass
    ... import numpy as np
    ... from fastnet.algorithms import Algorithm
    ...
    ... @dataclass(frozen=True)
    ... class SignSGD(Algorithm):
    ...     learning_rate: float = 0.01
    ...
    ...     def step(self, weights, gradient, error, state):
    ...         return weights - self.learning_rate * np.sign(gradient), state
    ... ''')
    >>> with load_rules("my_rules.py") as rules:
    ...     print(rules.names, from_spec("signsgd(learning_rate=0.1)"))
    ('signsgd',) SignSGD(learning_rate=0.1)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"`path` must be the path of a Python file, got "
                        f"{type(path).__name__} {path!r}.")
    given = os.fspath(path)
    if not given or not Path(given).exists():
        raise ValueError(f"`path` must name a Python file of training rules, got {given!r} "
                         "(no such file).")
    if not Path(given).is_file():
        raise ValueError(f"`path` must name a Python file of training rules, got {given!r} "
                         "(not a file).")
    try:
        source = Path(given).read_bytes()
    except OSError as exc:
        raise ValueError(f"`path` {given!r}: cannot be read ({exc.strerror or exc}).") from None
    where = str(Path(given).resolve())
    for entry in list(_LOADED.values()):                # (the same file: its new version)
        if entry.rules.path == where:
            entry.rules.unload()
    return _load(source, where, given)


def _load(source, path, shown=None):
    """Run ``source`` (the bytes of the file ``path``) as a module and register its
    algorithms; ``shown``: the path as the messages give it."""
    shown = path if shown is None else shown
    sha = hashlib.sha256(source).hexdigest()
    # (its own module, named by the contents: dataclasses and pickle find classes by
    # their module, and two versions of a file never share one)
    module = types.ModuleType(f"fastnet_rules_{sha[:16]}")
    module.__file__ = path
    sys.modules[module.__name__] = module
    try:
        code = compile(importlib.util.decode_source(source), path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
        classes = _rule_classes(module, shown)
        names = tuple(cls.__name__.lower() for cls in classes)
    except _Refused as exc:
        sys.modules.pop(module.__name__, None)
        raise ValueError(str(exc)) from None
    except (Exception, SystemExit) as exc:
        sys.modules.pop(module.__name__, None)
        what = exc.msg if isinstance(exc, SyntaxError) else exc
        raise ValueError(f"`path` {shown!r}: running it raised {type(exc).__name__}: "
                         f"{what}{_line(exc, path)}.") from exc
    except BaseException:                               # (Ctrl-C while it runs)
        sys.modules.pop(module.__name__, None)
        raise
    rules = RulesFile(path, sha, names, source)
    for cls, name in zip(classes, names):
        _LOADED[name] = _Entry(rules, cls, module)
        REGISTRY[name] = cls
    return rules


class _Refused(ValueError):
    """A rules file that ran but cannot give its algorithms (the message says why)."""


def _line(exc, path):
    """`` (line N of FILE)``: where in the rules file ``exc`` was raised (the deepest
    frame in the file), or ``""``."""
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f" (line {exc.lineno} of {os.path.basename(path)})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return f" (line {frames[-1].lineno} of {os.path.basename(path)})" if frames else ""


def _rule_classes(module, shown):
    """The public `Algorithm` subclasses ``module`` defines (not imports), checked: each
    a dataclass, named apart from every algorithm of fastnet and of other rules files."""
    classes, imported = [], []
    for attr, obj in vars(module).items():
        if (attr.startswith("_") or not isinstance(obj, type) or not issubclass(obj, Algorithm)
                or obj.__name__.startswith("_")):
            continue
        if obj.__module__ != module.__name__:
            if not obj.__module__.startswith("fastnet."):      # (Algorithm itself: no hint)
                imported.append(attr)
        elif obj not in classes:
            classes.append(obj)
    if not classes:
        also = (f"; {', '.join(imported)} {'is' if len(imported) == 1 else 'are'} imported "
                "into it, which does not count") if imported else ""
        raise _Refused(f"`path` {shown!r} must define a public subclass of "
                       "fastnet.algorithms.Algorithm (a frozen dataclass whose fields are its "
                       f"parameters, with step or step_many), got none{also}.")
    seen = {}
    for cls in classes:
        name = cls.__name__.lower()
        if not dataclasses.is_dataclass(cls):
            raise _Refused(f"`path` {shown!r}: class {cls.__name__} must be a dataclass whose "
                           "fields are the rule's parameters (@dataclass(frozen=True)), got a "
                           "plain class.")
        if not name.isascii():
            raise _Refused(f"`path` {shown!r}: class {cls.__name__} must have an ASCII name "
                           "(it is the algorithm's name on the command line).")
        if name in seen:
            raise _Refused(f"`path` {shown!r}: classes {seen[name]} and {cls.__name__} would "
                           f"both be named {name!r}; rename one.")
        seen[name] = cls.__name__
        if name in _LOADED:
            raise _Refused(f"`path` {shown!r}: class {cls.__name__} would be named {name!r}, "
                           f"which the rules file {_LOADED[name].rules.path} defines already; "
                           "rename the class.")
        if name in REGISTRY:
            made = getattr(REGISTRY[name], "func", REGISTRY[name])
            raise _Refused(f"`path` {shown!r}: class {cls.__name__} would be named {name!r}, "
                           f"which names fastnet's algorithm {made.__name__} already; rename "
                           f"the class (e.g. My{cls.__name__}).")
    return classes


def _name(spec):
    """The algorithm name of a spec text (lower case), or None."""
    from fastnet.training._specs import _SPEC

    match = _SPEC.match(spec) if isinstance(spec, str) else None
    return match.group(1).lower() if match else None


def rules_of(specs):
    """The loaded rules files whose algorithms ``specs`` (algorithm texts) name, each
    once, in the order first named."""
    found = {}
    for spec in specs:
        entry = _LOADED.get(_name(spec))
        if entry is not None:
            found.setdefault(id(entry.rules), entry.rules)
    return tuple(found.values())


def rules_records(specs):
    """`RulesFile.to_dict` of each loaded rules file ``specs`` name, with the names of its
    rules they use (for result files and pages)."""
    used = {_name(spec) for spec in specs}
    return tuple(r.to_dict([n for n in r.names if n in used]) for r in rules_of(specs))


def rules_key(spec):
    """``{"rules_sha256": ...}`` where ``spec`` names a rule of a loaded rules file (for
    a resume key: an edited file trains again), else ``{}``."""
    entry = _LOADED.get(_name(spec))
    return {} if entry is None else {"rules_sha256": entry.rules.sha256}


def ensure_loaded(rules):
    """Load each `RulesFile` of ``rules`` from its bytes where its rules are not loaded in
    this version (a worker process, a Dask worker): nothing where they are (the process
    that loaded them, a worker that ran a task of the same file before)."""
    for wanted in rules:
        if all(n in _LOADED and _LOADED[n].rules.sha256 == wanted.sha256 for n in wanted.names):
            continue
        for name in wanted.names:                      # (another version of the file)
            if name in _LOADED:
                _LOADED[name].rules.unload()
        got = _load(wanted.source, wanted.path)
        if got.names != wanted.names:
            got.unload()
            raise RuntimeError(f"the rules file {wanted.file_name} defined {list(got.names)} "
                               f"in this worker, {list(wanted.names)} where it was loaded.")
