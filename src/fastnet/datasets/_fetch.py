"""Download the Proben1 archive into the cache, verified and atomically.

Downloading and hashing are `pooch`'s (as in SciPy's and scikit-image's data
fetchers); what is Proben1's own stays here: the 45 files may lie anywhere in the
archive's tree, each is checked against its published SHA-256, only those names are
ever written (never an archive path: Python < 3.12 has no safe tar filter), and all
45 are installed together or none.
"""

from __future__ import annotations

import lzma
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile
import zlib
from pathlib import Path, PurePosixPath


from fastnet.datasets._checksums import PROBEN1_SHA256
from fastnet.datasets._proben1 import default_cache_dir

__all__ = ["DEFAULT_URL", "FetchError", "fetch_proben1", "verify_proben1"]

#: Where `fetch_proben1` downloads the Proben1 archive from by default: a public
#: mirror of the original ``proben1.tar.gz`` tree (any archive holding the 45
#: ``*.dt`` files anywhere in its tree works; their checksums are what counts).
DEFAULT_URL = "https://github.com/jeffheaton/proben1/archive/refs/heads/master.tar.gz"

_SCHEMES = ("http", "https", "ftp", "file")


class FetchError(OSError):
    """Downloading or unpacking the Proben1 archive failed, or a file's checksum is wrong.

    Nothing is installed when it is raised: the target directory is as it was.
    """


def _sha256_file(path: Path) -> str:
    import pooch        # (here, not at import: pooch brings ssl, ftplib and more)

    return pooch.file_hash(str(path), alg="sha256")


def verify_proben1(root: str | os.PathLike | None = None) -> dict[str, str]:
    """Check the 45 Proben1 files lying flat in a directory against their SHA-256.

    Parameters
    ----------
    root : str or os.PathLike, optional
        Directory holding ``cancer1.dt`` etc. Default: `default_cache_dir`.

    Returns
    -------
    dict
        ``file name -> problem`` for each file that is ``"missing"`` or has a
        ``"checksum mismatch"``; empty if all 45 are present and intact.
    """
    directory = Path(os.fspath(root)) if root is not None else default_cache_dir()
    problems = {}
    for name, digest in PROBEN1_SHA256.items():
        path = directory / name
        if not path.is_file():
            problems[name] = "missing"
        elif _sha256_file(path) != digest:
            problems[name] = "checksum mismatch"
    return problems


def fetch_proben1(url: str = DEFAULT_URL, root: str | os.PathLike | None = None, *,
                  force: bool = False, timeout: float = 60.0) -> Path:
    """Download the Proben1 archive and install its 45 data files, verified.

    Parameters
    ----------
    url : str, default=DEFAULT_URL
        URL of a ``.tar.gz`` (or other ``tar`` compression, or ``.zip``) archive
        that contains the 45 ``*.dt`` files anywhere in its tree, e.g. the
        original ``proben1.tar.gz``. ``http``, ``https`` and ``ftp`` URLs are
        downloaded by `pooch`; ``file`` URLs are copied.
    root : str or os.PathLike, optional
        Directory to install into. Default: the per-user cache
        (`default_cache_dir`), which `load_proben1` searches.
    force : bool, default=False
        Download even if `root` already holds all 45 intact files.
    timeout : float, default=60.0
        Network timeout in seconds for each blocking operation.

    Returns
    -------
    pathlib.Path
        The directory now holding ``building1.dt`` ... ``thyroid3.dt`` flat.

    Raises
    ------
    FetchError
        If the download fails, the archive cannot be read, a file is missing from
        it, or a file's SHA-256 differs from the published one (the message names
        the files). Nothing has been installed then.
    ValueError
        If `url` is not an http, https, ftp or file URL.

    Notes
    -----
    The archive is downloaded into a fresh temporary directory next to `root`;
    only members whose file name is one of the 45 expected names are unpacked
    (written under that name, never under an archive path), each is checked
    against its SHA-256, and only when all 45 are present and intact are they
    moved into place: by renaming the whole directory if `root` does not exist
    yet, otherwise by ``os.replace`` of each file. An interrupted or failed fetch
    therefore never leaves a partly written data file in `root`; the temporary
    directory is removed on any error (a process killed outright may leave a
    hidden ``.<name>.fetch-*`` directory next to `root`, which is safe to delete).

    Examples
    --------
    >>> fetch_proben1()                     # doctest: +SKIP
    PosixPath('/home/me/.cache/fastnet/proben1')
    """
    if not isinstance(url, str):
        raise TypeError(f"`url` must be a string, got {type(url).__name__}.")
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in _SCHEMES:
        raise ValueError(
            f"`url` must be an {', '.join(_SCHEMES)} URL, got {url!r}."
        )
    target = Path(os.fspath(root)).expanduser() if root is not None else default_cache_dir()
    if not force and target.is_dir() and not verify_proben1(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.fetch-", dir=target.parent))
    try:
        archive = work / "archive"
        _download(url, archive, timeout)
        staged = work / target.name
        staged.mkdir()
        _unpack(archive, staged, url)
        _install(staged, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _copy_file_url(url: str, output_file: str, pooch_instance=None) -> None:
    """A pooch downloader for ``file:`` URLs (local mirrors, tests), which pooch lacks."""
    shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlsplit(url).path), output_file)


def _download(url: str, dest: Path, timeout: float) -> None:
    """Download `url` to `dest` with pooch (no known hash: the 45 files are checked)."""
    import ftplib

    import pooch

    scheme = urllib.parse.urlsplit(url).scheme.lower()
    downloader = (_copy_file_url if scheme == "file" else
                  pooch.FTPDownloader(timeout=timeout) if scheme == "ftp" else
                  pooch.HTTPDownloader(timeout=timeout))
    logger = pooch.get_logger()
    level = logger.level
    # pooch logs the archive's hash with advice to pin it: not ours to follow (the
    # archive may change; the 45 files' hashes are what counts)
    logger.setLevel("WARNING")
    try:
        pooch.retrieve(url, known_hash=None, fname=dest.name, path=dest.parent,
                       downloader=downloader)
    except (OSError, ftplib.Error) as exc:  # requests' errors, timeouts, local file errors
        raise FetchError(f"could not download the Proben1 archive from {url}: {exc}") from exc
    finally:
        logger.setLevel(level)


def _copy_hashed(src, dest: Path) -> str:
    with open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
    return _sha256_file(dest)


def _members(archive: Path):
    """Yield ``(file name, open binary file)`` for archive members named like a data file."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                name = PurePosixPath(info.filename).name
                if not info.is_dir() and name in PROBEN1_SHA256:
                    with zf.open(info) as src:
                        yield name, src
        return
    with tarfile.open(archive, "r:*") as tf:
        for member in tf:
            name = PurePosixPath(member.name).name
            if member.isfile() and name in PROBEN1_SHA256:
                src = tf.extractfile(member)
                with src:
                    yield name, src


def _unpack(archive: Path, staged: Path, url: str) -> None:
    """Write each verified data file of `archive` to ``staged/<name>``."""
    good: set[str] = set()
    bad: set[str] = set()
    scratch = staged / ".incoming"
    try:
        for name, src in _members(archive):
            if name in good:
                continue
            digest = _copy_hashed(src, scratch)
            if digest == PROBEN1_SHA256[name]:
                os.replace(scratch, staged / name)
                good.add(name)
                bad.discard(name)
            else:
                bad.add(name)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError,
            OSError) as exc:
        if isinstance(exc, FetchError):
            raise
        raise FetchError(
            f"the archive downloaded from {url} is corrupt or not a tar/zip archive: {exc}"
        ) from exc
    finally:
        scratch.unlink(missing_ok=True)
    if bad:
        raise FetchError(
            f"SHA-256 mismatch for {len(bad)} Proben1 file(s) from {url}: "
            f"{', '.join(sorted(bad))}; the archive is corrupt or not the published data. "
            "Nothing was installed."
        )
    missing = sorted(set(PROBEN1_SHA256) - good)
    if missing:
        raise FetchError(
            f"the archive from {url} lacks {len(missing)} of the 45 Proben1 files: "
            f"{', '.join(missing)}. Nothing was installed."
        )


def _install(staged: Path, target: Path) -> None:
    """Move the verified files into `target` (one rename if it does not exist yet)."""
    if not target.exists():
        try:
            os.rename(staged, target)
            return
        except OSError:
            if not target.is_dir():  # lost a race to something that is not a directory
                raise
    for name in PROBEN1_SHA256:
        os.replace(staged / name, target / name)
