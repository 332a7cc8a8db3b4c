"""Files: atomic replacement, an exclusive writer's lock, and checked ``.npz`` reading.

Every file fastnet writes (result files, saved networks and estimators) goes
through :func:`atomic_write`: a temporary file in the same directory, fsync,
``os.replace``, fsync of the directory. A reader sees the old file or the new
one, never half of either, and the new file gets the permissions any other
new file would (``0o666`` less the umask; ``tempfile.mkstemp`` alone would
leave it ``0o600``).
"""
import contextlib
import io
import json
import math
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from fastnet.exceptions import FileLockedError

__all__ = ["MAX_COMPRESSION_RATIO",
           "MAX_PICKLE_BYTES", "NpzMember", "atomic_write", "open_regular",
           "exclusive_lock", "fsync_dir", "new_file_mode", "read_npz"]


def new_file_mode():
    """The mode ``open(path, "w")`` would give a new file: 0o666 less the umask."""
    try:
        # Linux >= 4.7 reports the umask without changing it (thread-safe).
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def fsync_dir(directory):
    """Flush a directory entry (a rename) to disk where the OS allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def open_regular(path):
    """``path`` opened for binary reading if it is a regular file (symbolic links
    followed); anything else is refused at once with a ValueError naming it: a FIFO
    would wait forever for a writer, a device or directory is no file of ours.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    binary file object

    Raises
    ------
    ValueError
        If ``path`` is not a regular file.
    OSError
        If it cannot be opened (FileNotFoundError, PermissionError, ...).
    """
    path = os.fspath(path)
    # (non-blocking: opening a FIFO for reading would otherwise wait for a writer)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
            raise ValueError(f"{path}: is {kind}, not a regular file; give the file itself.")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_json_record(path, kind, retrain):
    """The JSON value in the regular file `path`; None if there is no such file.

    A result file of a long run (a study's trials, a suite's cell) that cannot be read
    or parsed raises a ValueError naming the file, what it should be (`kind`, e.g.
    "a study's trials file") and what deleting it does (`retrain`): it is never taken
    for a missing one, which would train it again silently.
    """
    try:
        with open_regular(path) as f:
            return json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not {kind} ({exc}); delete it to {retrain}.") from None


def atomic_write(path, write):
    """Replace ``path`` atomically with what ``write(f)`` writes to a binary file.

    Parameters
    ----------
    path : str or os.PathLike
    write : callable or iterable of bytes
        ``write(f)`` gets the open temporary file; an iterable of ``bytes`` is
        written chunk by chunk.

    Raises
    ------
    OSError
        If the directory does not exist or is not writable (the temporary file
        is removed and ``path`` is left as it was).
    """
    path = Path(os.fspath(path))
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(write):
                write(f)
            else:
                for chunk in write:
                    f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(directory)


@contextlib.contextmanager
def exclusive_lock(path):
    """Hold the writer's lock of ``path`` (a sidecar ``path.lock``) or refuse.

    The lock is an OS lock (``fcntl.flock``) on the sidecar file, so it dies
    with its process: a writer killed by SIGKILL leaves no stale lock. Only the
    holder removes the sidecar, while still holding it; a process that opened
    the old sidecar just before finds, once it gets the lock, that the name now
    points elsewhere (or nowhere) and tries again on the new file. So at most
    one process ever holds the lock of a path.

    The sidecar is opened without following a symbolic link (``O_NOFOLLOW``)
    and must be a regular file with one name: the lock writes its pid there, so
    a ``path.lock`` planted as a link to another file would overwrite that file.

    Raises
    ------
    FileLockedError
        If another process holds the lock (the message names it and its pid).
    ResultFileError
        If ``path.lock`` is a symbolic link, a hard link (a file with another
        name too) or not a regular file (the message names it; remove it).

    Notes
    -----
    On systems without ``fcntl`` (Windows) there is no lock: do not run two
    writers of one file there.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = Path(os.fspath(path))
    lock_path = path.with_name(path.name + ".lock")
    while True:
        fd = _open_lock(lock_path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise FileLockedError(
                f"{path}: another process{f' (pid {holder})' if holder else ''} is writing "
                f"this file (it holds {lock_path}); wait for it to finish, or write to "
                "another file.") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed that sidecar meanwhile: take the new one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)       # while still holding it (see above)
        os.close(fd)


def _open_lock(lock_path):
    """Open (or create) the sidecar ``lock_path`` for the lock, refusing any other
    kind of file than a regular one of one name (see `exclusive_lock`)."""
    import errno
    import stat

    from fastnet.exceptions import ResultFileError

    hint = "; fastnet writes its lock there, so remove it (or write to another file)."
    flags = os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(lock_path, flags, new_file_mode())
    except OSError as exc:
        if os.path.islink(lock_path):
            raise ResultFileError(f"{lock_path}: the lock file is a symbolic link (to "
                                  f"{os.readlink(lock_path)!r}){hint}") from None
        if exc.errno == errno.EISDIR:
            raise ResultFileError(f"{lock_path}: the lock file is a directory{hint}") from None
        raise
    st = os.fstat(fd)
    problem = ("is not a regular file" if not stat.S_ISREG(st.st_mode)
               else f"has {st.st_nlink} names (a hard link)" if st.st_nlink != 1 else None)
    if problem:
        os.close(fd)
        raise ResultFileError(f"{lock_path}: the lock file {problem}{hint}")
    return fd


def _read_pid(fd):
    try:
        with io.FileIO(os.dup(fd), "r") as f:
            text = f.read(32).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None

# --------------------------------------------------------------------------- .npz reading

#: Largest ratio of a member's declared size to its compressed size that
#: :func:`read_npz` accepts for members above ``_RATIO_FLOOR`` bytes. fastnet
#: writes its ``.npz`` files uncompressed (ratio 1); a zip "bomb" of zeros has
#: ratios near 1000.
MAX_COMPRESSION_RATIO = 100
_RATIO_FLOOR = 1 << 20
#: Largest pickle an estimator file may carry (1 GiB).
MAX_PICKLE_BYTES = 1 << 30


class NpzMember:
    """What :func:`read_npz` accepts for one array of an ``.npz`` file.

    Parameters
    ----------
    kinds : str
        Accepted dtype kinds (``"iu"``, ``"U"``, ``"f"``, ...); never ``"O"``.
    max_elements : int
        Most elements the array may declare.
    ndim : int or None
        Required number of dimensions (None: any).
    itemsize : int or None
        Largest item size in bytes (for strings).
    what : str, optional
        What the array is, for messages (default: its name).
    """

    def __init__(self, kinds, max_elements, *, ndim=None, itemsize=None, what=None):
        self.kinds, self.max_elements = kinds, max_elements
        self.ndim, self.itemsize, self.what = ndim, itemsize, what


class NotNpzError(ValueError):
    """The file is not a zip of ``.npy`` arrays (or lacks the expected members)."""


def read_npz(fh, members, *, check=None, required=None):
    """Read the named arrays of an ``.npz`` file, checking each before its data.

    For each member the zip entry's declared size and compression ratio are
    checked, then its ``.npy`` header (dtype, shape) is read and checked
    against ``members[name]``, and only then is its data read, in the declared
    size only. Nothing of a size a crafted file chooses is allocated before it
    is checked. Pickled (object) arrays are never read.

    Parameters
    ----------
    fh : binary file
        Open, seekable.
    members : dict of str to NpzMember
        The arrays to read (other members are ignored).
    check : callable, optional
        ``check(headers)`` gets ``{name: (shape, dtype)}`` of all of ``members``
        present before any data is read, and raises to refuse them.
    required : set of str, optional
        Names that must be present; default all of ``members``.

    Returns
    -------
    arrays : dict of str to ndarray
    names : set of str
        The names of all arrays in the file.

    Raises
    ------
    NotNpzError
        If the file is not a zip archive or lacks a required member.
    zipfile.BadZipFile, EOFError
        If the zip archive is truncated or corrupt, or the file empty.
    ValueError
        If a member is too large, compressed beyond ``MAX_COMPRESSION_RATIO``,
        of another dtype or shape than allowed, or corrupt.
    """
    fh.seek(0)
    magic = fh.read(4)
    fh.seek(0)
    if not magic:
        raise EOFError("the file is empty")
    if magic not in (b"PK\x03\x04", b"PK\x05\x06"):
        raise NotNpzError(f"not a zip archive: it starts with {magic!r}")
    archive = zipfile.ZipFile(fh)  # a truncated or corrupt zip raises BadZipFile
    with archive:
        infos = {i.filename[:-4]: i for i in archive.infolist() if i.filename.endswith(".npy")}
        required = set(members) if required is None else set(required)
        if not required <= set(infos):
            raise NotNpzError(f"keys {sorted(infos)}, not {sorted(required)}")
        headers = {name: _npy_header(archive, infos[name], name, spec)
                   for name, spec in members.items() if name in infos}
        if check is not None:
            check({name: h[:2] for name, h in headers.items()})
        for name, header in headers.items():
            _check_header(infos[name], name, members[name], *header)
        return {name: _npy_data(archive, infos[name], *headers[name])
                for name in headers}, set(infos)


def _npy_header(archive, info, name, spec):
    """(shape, dtype, fortran, offset) of a member whose entry's sizes are checked."""
    what = f"{spec.what} (array `{name}`)" if spec.what else f"the array `{name}`"
    nbytes_max = spec.max_elements * (spec.itemsize or 8) + 4096
    if info.file_size > nbytes_max:
        raise ValueError(f"{what} takes {info.file_size} bytes, more than the "
                         f"{nbytes_max} allowed.")
    if (info.file_size > _RATIO_FLOOR
            and info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1)):
        raise ValueError(f"{what} is compressed {info.file_size} : "
                         f"{info.compress_size}, more than {MAX_COMPRESSION_RATIO} : 1.")
    with archive.open(info) as member:
        major, _ = np.lib.format.read_magic(member)
        read = (np.lib.format.read_array_header_1_0 if major == 1
                else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read(member)
        offset = member.tell()
    return shape, dtype, fortran, offset


def _check_header(info, name, spec, shape, dtype, fortran, offset):
    """Refuse a member whose header does not fit ``spec`` or its entry's size."""
    count = math.prod(shape)
    what = f"{spec.what} (array `{name}`)" if spec.what else f"the array `{name}`"
    if dtype.hasobject or dtype.kind not in spec.kinds or dtype.fields is not None:
        raise ValueError(f"{what} must have a dtype of the kinds {spec.kinds!r}, got {dtype} "
                         f"of shape {shape}.")
    if ((spec.ndim is not None and len(shape) != spec.ndim) or count > spec.max_elements
            or (spec.itemsize is not None and dtype.itemsize > spec.itemsize)):
        raise ValueError(f"{what} has dtype {dtype} and shape {shape}; at most "
                         f"{spec.max_elements} elements"
                         f"{'' if spec.ndim is None else f' in {spec.ndim} dimensions'}"
                         f"{'' if spec.itemsize is None else f' of {spec.itemsize} bytes'}"
                         " are allowed.")
    if offset + count * dtype.itemsize != info.file_size:
        raise ValueError(f"the array `{name}` declares {count} values of {dtype.itemsize} "
                         f"bytes but holds {info.file_size - offset} bytes.")


def _npy_data(archive, info, shape, dtype, fortran, offset):
    """The data of a member whose header was checked: read in its declared size only."""
    nbytes = math.prod(shape) * dtype.itemsize
    with archive.open(info) as member:
        member.read(offset)
        raw = member.read(nbytes)
        if len(raw) != nbytes or member.read(1):  # reading to the end checks the CRC-32
            raise ValueError(f"the array `{info.filename[:-4]}` is truncated.")
    return np.frombuffer(raw, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()


def refuse_other_dtype(out, kind, section, dtype):
    """Refuse to resume a ``kind`` ("study", "suite") whose finished ``<kind>.json`` in
    the directory ``out`` was trained in another dtype than ``dtype`` (its chunks or
    cells have other hashes: the two would share one directory and its pages). The
    dtype is read from the file's ``section``; files without it are float64."""
    try:
        found = json.loads((Path(out) / f"{kind}.json").read_text("utf-8"))[section].get(
            "dtype", "float64")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return                      # (no finished one there, or not one this check reads)
    if found != dtype:
        raise ValueError(f"`out` {str(out)!r} holds a {kind} trained in {found}; a {kind} in "
                         f"{dtype} is not mixed into it: write it to another directory.")



def output_directory(out, *, kind, marker, folder, outputs, earlier, example):
    """``out`` as a Path, if a ``kind`` ("study", "suite") may write there: not an empty
    path, and a directory that is absent, empty (its lock aside) or the kind's own (it
    holds ``marker``, or ``earlier(path)`` says it holds one written before the marker
    existed), where what the kind writes is absent or of the kind it writes (``folder`` a
    directory, ``outputs`` regular files). Else a ValueError saying why, raised before
    anything is written or trained; ``example`` names a directory in the message."""
    text = os.fspath(out)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text.strip() == "":
        raise ValueError(f"`out` must be a directory path, got {text!r} (an empty path, which "
                         f"would be the working directory); name the {kind}'s directory, e.g. "
                         f"{example!r}.")
    out = Path(text)
    if os.path.lexists(out) and not out.is_dir():
        raise ValueError(f"`out` {text!r} must be a directory (or absent), got a file; a {kind} "
                         "writes several files there.")
    for what in (folder,) + tuple(outputs):
        p = out / what
        if os.path.lexists(p) and not (p.is_dir() if what == folder else p.is_file()):
            shape = "a directory" if what == folder else "a regular file"
            raise ValueError(f"`out` {text!r}: {p} must be {shape} (or absent), as the "
                             f"{kind} writes it; move it away.")
    try:
        names = set(os.listdir(out)) - {f"{kind}.json.lock"}
    except FileNotFoundError:
        return out
    if not names or marker in names or earlier(out):
        return out
    shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
    raise ValueError(f"`out` {text!r} must be a {kind}'s directory (empty, or holding the "
                     f"{marker} file a {kind} writes), got a directory holding {shown}; "
                     f"a {kind} would overwrite its {', '.join(outputs)}: give a new or empty "
                     "directory.")


def json_record_has(path, section):
    """Whether the file ``path`` holds a JSON object with the object ``section`` in it (a
    result file's set-up: how a directory written before its marker is recognised)."""
    try:
        record = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and isinstance(record.get(section), dict)


def mark_output_directory(out, marker, text):
    """Create ``out`` and write its ``marker`` file (``text``), unless it is there."""
    out.mkdir(parents=True, exist_ok=True)
    if not (out / marker).is_file():
        atomic_write(out / marker, [text.encode()])
