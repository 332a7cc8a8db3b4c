"""Shared pytest fixtures."""

import os
from pathlib import Path

import pytest

# The Proben1 files are not in the repository (see `proben1_root_or_skip` for where the
# tests look; on the project's own machines a folder beside the checkout holds them).
_SHARED_PROBEN1 = Path(__file__).resolve().parents[2] / "shared" / "proben1"

#: Why a Proben1 test is skipped, the same words for every such test, so that pytest's
#: summary folds them into one line (see `pytest_runtest_makereport`).
MISSING_DATA = ("needs the Proben1 data, which was not found: get it with `fastnet datasets fetch` "
                "(downloads the 45 files, SHA-256 checked, into the user cache, which the tests search) "
                "or set FASTNET_DATA to a directory holding the .dt files")


def _holds_proben1(directory: Path) -> bool:
    return (directory / "cancer1.dt").is_file() or (directory / "cancer" / "cancer1.dt").is_file()


def missing_data_reason(searched=None) -> str:
    """Why a Proben1 test is skipped, and how a user gets the data (``searched`` is not
    named: one line for all such tests, and no folder outside the repository)."""
    return MISSING_DATA


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Report every test skipped for want of Proben1 data at one place, so that the
    summary says once how many tests need the data and how to get it (pytest folds
    skips of the same place and reason into one line), not once per test."""
    report = yield
    if (report.skipped and isinstance(report.longrepr, tuple)
            and report.longrepr[2].endswith(MISSING_DATA)):
        report.longrepr = (str(Path(__file__)), _SKIP_LINE, f"{report.longrepr[2]}")
    return report


@pytest.fixture(scope="session")
def proben1_root() -> Path:
    """Directory with the 45 Proben1 ``.dt`` files (see `proben1_root_or_skip`)."""
    return proben1_root_or_skip()


def proben1_root_or_skip() -> Path:
    """Directory with the 45 Proben1 ``.dt`` files (flat or in Proben1's tree).

    ``../shared/proben1`` beside the repository, else ``$FASTNET_DATA``, else the
    user cache that ``fastnet datasets fetch`` fills. When none holds the data the
    test is skipped with how to get it, or fails if ``FASTNET_REQUIRE_DATA=1`` (as in CI).
    """
    from fastnet.datasets import default_cache_dir

    candidates = [_SHARED_PROBEN1]
    if os.environ.get("FASTNET_DATA"):
        candidates.append(Path(os.environ["FASTNET_DATA"]))
    candidates.append(default_cache_dir())
    for directory in candidates:
        if _holds_proben1(directory):
            return directory
    if os.environ.get("FASTNET_REQUIRE_DATA", "0") != "0":
        given = os.environ.get("FASTNET_DATA")
        pytest.fail(MISSING_DATA + " (FASTNET_REQUIRE_DATA is set; "
                    + (f"FASTNET_DATA={given} holds no cancer1.dt)" if given else "FASTNET_DATA is not set)"))
    pytest.skip(MISSING_DATA)


#: The line of the skip above, where the summary reports every test that needs the data.
_SKIP_LINE = proben1_root_or_skip.__code__.co_firstlineno
