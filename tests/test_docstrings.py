"""The Examples sections of the public modules' docstrings run and give what they show."""
import doctest
import importlib
import inspect
import re

import pytest
from _extras import available, needs

def _modules_with_examples():
    """Every module of fastnet (not the kernels) whose own docstrings hold examples:
    found, not listed, so that a module that gains or moves an example is run
    (fastnet.datasets' modules: tests/test_datasets_proben1.py, they read Proben1 data)."""
    import pkgutil

    import fastnet

    names = ["fastnet"]
    for m in pkgutil.walk_packages(fastnet.__path__, "fastnet."):
        if "._kernels" in m.name or m.name.startswith("fastnet.datasets") or m.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(m.name)
        except ImportError:                  # (an optional extra's module: tested where it is)
            continue
        tests = [t for t in doctest.DocTestFinder().find(module) if t.name.startswith(m.name)]
        if any(not e.options.get(doctest.SKIP) for t in tests for e in t.examples):
            names.append(m.name)
    return names


MODULES = _modules_with_examples()
# fastnet.datasets' modules: tests/test_datasets_proben1.py::test_docstring_examples


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    if name == "fastnet.sklearn":
        needs("sklearn")
    monkeypatch.chdir(tmp_path)   # examples that write files write them here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples to run"
    assert result.failed == 0


PUBLIC = ["fastnet", "fastnet.algorithms", "fastnet.datasets", "fastnet.experiment",
          "fastnet.export", "fastnet.gradients", "fastnet.measures", "fastnet.network", "fastnet.plots",
          "fastnet.report", "fastnet.reproduction", "fastnet.sklearn", "fastnet.stats",
          "fastnet.stopping", "fastnet.study", "fastnet.training", "fastnet.traversal"]


def _documented_parameters(doc):
    """The names a numpydoc Parameters section gives (``a, b : type`` names two)."""
    section = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    names = set()
    for line in (section.group(1) if section else "").splitlines():
        if line[:1].strip():                       # a name line, not its indented text
            names.update(n.strip().lstrip("*") for n in line.split(" : ")[0].split(","))
    return names


def _public_callables():
    for module_name in PUBLIC:
        if module_name == "fastnet.sklearn" and not available("sklearn"):
            continue                      # (checked wherever scikit-learn is installed)
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                yield f"{module_name}.{name}", obj
            elif inspect.isclass(obj):
                yield f"{module_name}.{name}", obj
                for attr, member in vars(obj).items():
                    if inspect.isfunction(member) and not attr.startswith("_"):
                        yield f"{module_name}.{name}.{attr}", member


def test_parameters_sections_name_every_parameter():
    # a Parameters section that leaves arguments out reads as complete and is not
    missing = {}
    for qualname, obj in _public_callables():
        doc = inspect.getdoc(obj) or ""
        if "\nParameters\n" not in f"\n{doc}":
            continue
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        gone = [p for p in params if p not in ("self", "cls")
                and p not in _documented_parameters(doc)]
        if gone:
            missing[qualname] = gone
    assert not missing
    assert _documented_parameters("Parameters\n----------\na, b : int\n    text\nc\n\nReturns\n"
                                  "-------\nd : int\n") == {"a", "b", "c"}
