"""Optional packages in the tests: skip with the reason where one is missing.

``needs("matplotlib")`` imports an optional package (an extra of fastnet: plot,
sklearn, dask, onnx, or the test extra's pandas and baycomp) for the test calling it,
or skips that test saying which package it needs. With ``FASTNET_REQUIRE_EXTRAS=1`` (as
in CI, which installs the test extra) a missing package fails the test instead, so that
no check is skipped unseen where it should run.
"""
import importlib
import os

import pytest


def needs(module):
    """The imported module, or the test is skipped (failed under FASTNET_REQUIRE_EXTRAS=1)."""
    if os.environ.get("FASTNET_REQUIRE_EXTRAS", "0") != "0":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"needs {module}, an optional package")


def available(module):
    """Whether an optional package imports (always True under FASTNET_REQUIRE_EXTRAS=1,
    where the import itself must then succeed)."""
    if os.environ.get("FASTNET_REQUIRE_EXTRAS", "0") != "0":
        return True
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
