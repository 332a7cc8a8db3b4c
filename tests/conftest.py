"""Shared pytest fixtures."""

import os
from pathlib import Path

import pytest

# The Proben1 files are not in the repository: they sit in shared/ beside it.
_SHARED_PROBEN1 = Path(__file__).resolve().parents[2] / "shared" / "proben1"


def _holds_proben1(directory: Path) -> bool:
    return (directory / "cancer1.dt").is_file() or (directory / "cancer" / "cancer1.dt").is_file()


def missing_data_reason(searched) -> str:
    """Why a Proben1 test is skipped, and how a user gets the data."""
    return ("Proben1 data not found (searched " + ", ".join(str(d) for d in searched) + "). Get it with "
            "`fastnet datasets fetch` (downloads the 45 files, SHA-256 checked, into the user cache, "
            "which the tests search), or set FASTNET_DATA to a directory holding the .dt files")


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
    reason = missing_data_reason(candidates)
    if os.environ.get("FASTNET_REQUIRE_DATA", "0") != "0":
        pytest.fail(reason + " (FASTNET_REQUIRE_DATA is set)")
    pytest.skip(reason)
