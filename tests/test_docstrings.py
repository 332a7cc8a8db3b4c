"""The Examples sections of the public modules' docstrings run and give what they show."""
import doctest
import importlib

import pytest

MODULES = ["fastnet", "fastnet.backprop", "fastnet.experiment", "fastnet.gradients",
           "fastnet.measures",
           "fastnet.network", "fastnet.rprop", "fastnet.sklearn", "fastnet.stopping",
           "fastnet.traversal", "fastnet.stats._describe", "fastnet.stats._hamey",
           "fastnet.stats._lacoste_single", "fastnet.stats._lacoste_datasets",
           "fastnet.stats._lacoste_pairwise", "fastnet.stats._proben1_ttest",
           "fastnet.stats._resampling", "fastnet._many", "fastnet.reproduction", "fastnet.demo"]
# fastnet.datasets' modules: tests/test_datasets_proben1.py::test_docstring_examples


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # examples that write files write them here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples to run"
    assert result.failed == 0
