"""Writing files safely: atomic replacement and an exclusive writer's lock.

Every file fastnet writes (result files, saved networks and estimators) goes
through :func:`atomic_write`: a temporary file in the same directory, fsync,
``os.replace``, fsync of the directory. A reader sees the old file or the new
one, never half of either, and the new file gets the permissions any other
new file would (``0o666`` less the umask; ``tempfile.mkstemp`` alone would
leave it ``0o600``).
"""
import contextlib
import io
import os
import tempfile
from pathlib import Path

from fastnet.exceptions import FileLockedError

__all__ = ["atomic_write", "exclusive_lock", "fsync_dir", "new_file_mode"]


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

    Raises
    ------
    FileLockedError
        If another process holds the lock (the message names it and its pid).

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
        fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, new_file_mode())
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


def _read_pid(fd):
    try:
        with io.FileIO(os.dup(fd), "r") as f:
            text = f.read(32).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None
