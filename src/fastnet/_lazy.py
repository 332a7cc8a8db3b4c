"""Names of a package loaded on first use (PEP 562), written once for the packages that
do it (:mod:`fastnet.study`, :mod:`fastnet.suite`): their command-line parsers and the
lighter callers import the package without its heavier modules."""
import importlib
import sys

__all__ = ["lazy_attributes"]


def lazy_attributes(package, table):
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` (its ``__name__``)
    whose names in ``table`` (name -> module) are imported from their module on first use,
    then kept in the package's namespace (later lookups skip ``__getattr__``)."""
    def __getattr__(name):
        if name in table:
            value = getattr(importlib.import_module(table[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
