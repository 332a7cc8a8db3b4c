"""Finding, loading and listing the Proben1 data files."""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fastnet.datasets._checksums import PROBEN1_SHA256
from fastnet.datasets._dataset import Dataset, Split
from fastnet.datasets._format import read_proben1
from fastnet.datasets._registry import PARTITIONINGS, PROBEN1_PROBLEMS, Proben1Problem
from fastnet.exceptions import DataFormatError, DataIntegrityWarning

__all__ = [
    "ENV_DATA_DIR",
    "Proben1Listing",
    "default_cache_dir",
    "find_proben1_file",
    "list_proben1",
    "load_proben1",
    "parse_proben1_name",
    "proben1_search_dirs",
]

#: Environment variable naming a directory that holds the Proben1 files.
ENV_DATA_DIR = "FASTNET_DATA"

_NAME = re.compile(r"([a-z]+)([0-9]+)([a-z]?)")
_FETCH_HINT = ("Download them with `fastnet.datasets.fetch_proben1()` or "
               "`fastnet datasets fetch`, or point `root=` or the FASTNET_DATA "
               "environment variable at a directory holding them.")


def default_cache_dir() -> Path:
    """The per-user cache directory for the Proben1 files.

    Returns
    -------
    pathlib.Path
        ``$XDG_CACHE_HOME/fastnet/proben1`` if ``XDG_CACHE_HOME`` is set to an
        absolute path, else ``~/.cache/fastnet/proben1``. It need not exist.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "fastnet" / "proben1"


def proben1_search_dirs(root: str | os.PathLike | None = None) -> list[Path]:
    """Directories searched for Proben1 files, in order.

    Parameters
    ----------
    root : str or os.PathLike, optional
        If given, it is the only directory searched.

    Returns
    -------
    list of pathlib.Path
        ``[root]`` if `root` is given; otherwise the directory in the
        ``FASTNET_DATA`` environment variable (if set and non-empty) followed by
        `default_cache_dir`.
    """
    if root is not None:
        return [Path(os.fspath(root)).expanduser()]
    dirs = []
    env = os.environ.get(ENV_DATA_DIR, "")
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(default_cache_dir())
    return dirs


def _candidates(directory: Path, problem: Proben1Problem, file_name: str) -> list[Path]:
    """Places a file may sit in under one data directory, in search order."""
    places = [directory / file_name, directory / problem.directory / file_name]
    if problem.directory != problem.name:
        places.append(directory / problem.name / file_name)
    places.append(directory / "proben1" / problem.directory / file_name)
    return places


def parse_proben1_name(name: str) -> tuple[str, int, str]:
    """Split a Proben1 dataset name into problem, permutation and partitioning.

    Parameters
    ----------
    name : str
        ``<problem><permutation>[<partitioning>]``, e.g. ``"cancer1"``,
        ``"glass1d"``, ``"heartac3"``. No suffix means partitioning ``"a"``.

    Returns
    -------
    tuple of (str, int, str)
        ``(problem, permutation, partitioning)``, e.g. ``("glass", 1, "d")``.

    Raises
    ------
    TypeError
        If `name` is not a string.
    ValueError
        If the problem, permutation or partitioning is unknown; the message lists
        the valid ones.

    Examples
    --------
    >>> parse_proben1_name("heartac3")
    ('heartac', 3, 'a')
    >>> parse_proben1_name("glass1d")
    ('glass', 1, 'd')
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string like 'cancer1', got {type(name).__name__}.")
    problems = ", ".join(PROBEN1_PROBLEMS)
    m = _NAME.fullmatch(name)
    if m is None or m.group(1) not in PROBEN1_PROBLEMS:
        problem = m.group(1) if m else name
        if problem in PROBEN1_PROBLEMS and m is None:
            raise ValueError(
                f"`name` must be a problem, a permutation 1-3 and an optional partitioning "
                f"a-f, e.g. '{problem}1' or '{problem}2c', got {name!r}."
            )
        raise ValueError(
            f"`name` {name!r} is not a Proben1 dataset; valid problems are {problems} "
            "(with permutation 1-3 and optional partitioning a-f, e.g. 'cancer1', 'glass1d')."
        )
    problem, perm, part = m.group(1), m.group(2), m.group(3) or "a"
    if perm not in ("1", "2", "3"):
        raise ValueError(
            f"`name` {name!r} has permutation {perm}; Proben1 has permutations 1, 2 and 3 "
            f"(e.g. '{problem}1')."
        )
    if part not in PARTITIONINGS:
        raise ValueError(
            f"`name` {name!r} has partitioning {part!r}; valid partitionings are "
            f"{', '.join(PARTITIONINGS)} (none means a)."
        )
    return problem, int(perm), part


def find_proben1_file(name: str, root: str | os.PathLike | None = None) -> Path:
    """Locate the data file of a Proben1 dataset.

    Parameters
    ----------
    name : str
        Dataset name such as ``"cancer1"`` or ``"glass1d"`` (the partitioning
        suffix does not change the file).
    root : str or os.PathLike, optional
        Data directory; see `proben1_search_dirs` for the default search.

    Returns
    -------
    pathlib.Path
        The first existing file among, for each search directory ``D``:
        ``D/cancer1.dt`` (flat), ``D/cancer/cancer1.dt`` (Proben1's tree, where
        hearta, heartac and heartc live in ``heart/``), ``D/hearta/hearta1.dt``
        and ``D/proben1/cancer/cancer1.dt`` (the unpacked archive).

    Raises
    ------
    ValueError
        If `name` is not a Proben1 dataset name.
    FileNotFoundError
        If the file is in none of those places; the message lists them and says
        how to download the data.
    """
    problem_name, perm, _ = parse_proben1_name(name)
    problem = PROBEN1_PROBLEMS[problem_name]
    file_name = f"{problem_name}{perm}.dt"
    looked = []
    for directory in proben1_search_dirs(root):
        for place in _candidates(directory, problem, file_name):
            if place.is_file():
                return place
            looked.append(str(place))
    raise FileNotFoundError(
        f"Proben1 file {file_name} not found; looked in: {'; '.join(looked)}. {_FETCH_HINT}"
    )


def load_proben1(name: str, root: str | os.PathLike | None = None) -> Dataset:
    """Load a Proben1 dataset with its partitioning.

    Parameters
    ----------
    name : str
        ``<problem><permutation>[<partitioning>]``: one of the 15 problems of
        `PROBEN1_PROBLEMS`, permutation 1-3, partitioning a-f (default a), e.g.
        ``"cancer1"``, ``"glass1d"``, ``"heartac3"``.
    root : str or os.PathLike, optional
        Data directory. Default: ``$FASTNET_DATA``, then the user cache
        (`default_cache_dir`); files may sit flat or in Proben1's tree.

    Returns
    -------
    Dataset
        ``train``, ``val`` and ``test`` as ``(X, Y)`` C-contiguous float64 arrays,
        ``kind`` from the registry, ``architecture`` the pivot of this permutation,
        ``problem`` the registry entry, and ``header`` and ``path`` of the file.

    Raises
    ------
    ValueError
        If `name` is not a Proben1 dataset name (the message lists the problems).
    FileNotFoundError
        If the file cannot be found (the message says where it looked and how to
        fetch the data).
    DataFormatError
        If the file is malformed, or its header disagrees with the registry's
        numbers of inputs, outputs or set sizes for the problem.

    Warns
    -----
    DataIntegrityWarning
        If the file's SHA-256 differs from the published file's (it still loads;
        ``Dataset.matches_published`` is then False).

    See Also
    --------
    read_proben1 : the file reader.
    fetch_proben1 : download the data into the cache.

    Notes
    -----
    Partitionings re-read the same file with the sets in another order
    (`PARTITIONINGS`): a = train, valid, test; b = train, test, valid;
    c = valid, train, test; d = valid, test, train; e = test, valid, train;
    f = test, train, valid. Each set keeps its size from the header (training
    ``training_examples`` rows, etc.) wherever it sits: ``glass1d`` is 54
    validation rows, then 53 test rows, then 107 training rows.

    References
    ----------
    L. Prechelt, "Proben1 -- A Set of Neural Network Benchmark Problems and
    Benchmarking Rules", Technical Report 21/94, Universität Karlsruhe, 1994.

    Examples
    --------
    >>> ds = load_proben1("glass1d")          # doctest: +SKIP
    >>> ds.n_train, ds.n_val, ds.n_test     # doctest: +SKIP
    (107, 54, 53)
    >>> ds.architecture.spec                  # doctest: +SKIP
    '16+8 l'
    """
    problem_name, perm, part = parse_proben1_name(name)
    problem = PROBEN1_PROBLEMS[problem_name]
    path = find_proben1_file(name, root)
    data = read_proben1(path)
    h = data.header
    expected = {"inputs": (h.n_in, problem.n_in), "outputs": (h.n_out, problem.n_out),
                "training_examples": (h.training_examples, problem.n_train),
                "validation_examples": (h.validation_examples, problem.n_val),
                "test_examples": (h.test_examples, problem.n_test)}
    for what, (got, want) in expected.items():
        if got != want:
            raise DataFormatError(
                path, None,
                f"header declares {got} {what.replace('_', ' ')}, but Proben1 problem "
                f"`{problem_name}` has {want}; is this the right file?",
            )
    sizes = {"train": h.training_examples, "val": h.validation_examples,
             "test": h.test_examples}
    splits = {}
    start = 0
    for role in PARTITIONINGS[part]:
        stop = start + sizes[role]
        splits[role] = Split(np.ascontiguousarray(data.X[start:stop]),
                             np.ascontiguousarray(data.Y[start:stop]))
        start = stop
    return Dataset(
        name=f"{problem_name}{perm}" + ("" if part == "a" else part),
        kind=problem.kind, n_in=problem.n_in, n_out=problem.n_out,
        train=splits["train"], val=splits["val"], test=splits["test"],
        architecture=problem.pivot(perm), problem=problem, permutation=perm,
        partitioning=part, path=path, header=h, sha256=data.sha256,
        matches_published=_matches_published(path, data.sha256),
    )


def _matches_published(path: Path, sha256: str) -> bool | None:
    """Whether a Proben1 file is the published one; warns when it is not."""
    published = PROBEN1_SHA256.get(Path(path).name)
    if published is None:
        return None
    if sha256 != published:
        warnings.warn(
            f"{path}: contents differ from the published Proben1 file (SHA-256 {sha256[:16]}... "
            f"instead of {published[:16]}...); results from it are not comparable with "
            "Prechelt's (1994). `fastnet datasets fetch` gets the published files.",
            DataIntegrityWarning, stacklevel=3)
        return False
    return True


@dataclass(frozen=True)
class Proben1Listing:
    """One row of `list_proben1`: a Proben1 problem and whether its files are present.

    Attributes
    ----------
    problem : str
        Problem name.
    kind : {"classification", "approximation"}
    n_in, n_out : int
        Numbers of inputs and outputs.
    n_examples : int
        Examples per file.
    available : bool
        ``True`` if all three permutation files were found.
    paths : tuple of (pathlib.Path or None)
        Where permutation 1, 2, 3 was found, ``None`` where it was not.
    """

    problem: str
    kind: str
    n_in: int
    n_out: int
    n_examples: int
    available: bool
    paths: tuple[Path | None, Path | None, Path | None]


def list_proben1(root: str | os.PathLike | None = None) -> list[Proben1Listing]:
    """List the 15 Proben1 problems and which of their files are present locally.

    Parameters
    ----------
    root : str or os.PathLike, optional
        Data directory; see `proben1_search_dirs` for the default search.

    Returns
    -------
    list of Proben1Listing
        One row per problem, in registry order. Presence means the file exists;
        it is not read or checksummed here.

    Examples
    --------
    >>> rows = list_proben1("/nonexistent")
    >>> rows[1].problem, rows[1].n_in, rows[1].n_out, rows[1].available
    ('cancer', 9, 2, False)
    """
    rows = []
    for problem in PROBEN1_PROBLEMS.values():
        paths = []
        for perm in (1, 2, 3):
            try:
                paths.append(find_proben1_file(f"{problem.name}{perm}", root))
            except FileNotFoundError:
                paths.append(None)
        rows.append(Proben1Listing(
            problem=problem.name, kind=problem.kind, n_in=problem.n_in, n_out=problem.n_out,
            n_examples=problem.n_examples, available=all(p is not None for p in paths),
            paths=tuple(paths),
        ))
    return rows
