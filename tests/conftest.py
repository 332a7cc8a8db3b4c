"""Shared pytest fixtures."""

import os
from pathlib import Path

import pytest

# The Proben1 files are not in the repository: they sit in shared/ beside it.
_SHARED_PROBEN1 = Path(__file__).resolve().parents[2] / "shared" / "proben1"


def _holds_proben1(directory: Path) -> bool:
    return (directory / "cancer1.dt").is_file() or (directory / "cancer" / "cancer1.dt").is_file()


@pytest.fixture(scope="session")
def proben1_root() -> Path:
    """Directory with the 45 Proben1 ``.dt`` files (flat or in Proben1's tree).

    ``../shared/proben1`` beside the repository, else ``$FASTNET_DATA``. When
    neither holds the data the test is skipped, or fails if ``FASTNET_REQUIRE_DATA=1``
    (as in CI).
    """
    candidates = [_SHARED_PROBEN1]
    if os.environ.get("FASTNET_DATA"):
        candidates.append(Path(os.environ["FASTNET_DATA"]))
    for directory in candidates:
        if _holds_proben1(directory):
            return directory
    reason = ("Proben1 data not found in " + " or ".join(str(d) for d in candidates)
              + "; put the 45 .dt files there or set FASTNET_DATA")
    if os.environ.get("FASTNET_REQUIRE_DATA", "0") != "0":
        pytest.fail(reason + " (FASTNET_REQUIRE_DATA is set)")
    pytest.skip(reason)
