"""Writing files safely: atomic replacement and an exclusive writer's lock.

Every file fastnet writes (result files, saved networks and estimators) goes
through :func:`atomic_write`: a temporary file in the same directory, fsync,
``os.replace``, fsync of the directory. A reader sees the old file or the new
one, never half of either, and the new file gets the permissions any other
new file would (``0o666`` less the umask; ``tempfile.mkstemp`` alone would
leave it ``0o600``).
"""
import contextlib
import hashlib
import io
import json
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np

from fastnet._version import __version__
from fastnet.exceptions import FileLockedError

__all__ = ["EstimatorPersistence", "FILE_FORMAT_VERSION", "PICKLE_FORMAT_VERSION", "atomic_write",
           "exclusive_lock", "fsync_dir", "new_file_mode"]


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

# --------------------------------------------------------------------------- estimators

#: Version of the pickled state of the estimators (see ``docs/embedding.md``).
#: Bumped whenever the set or meaning of the stored attributes changes; loading
#: a pickle of another version raises ValueError.
PICKLE_FORMAT_VERSION = 1
#: Version of the ``.npz`` container written by the estimators' ``save``.
FILE_FORMAT_VERSION = 1


class EstimatorPersistence:
    """``save``/``load`` and checked pickling of fastnet's scikit-learn estimators.

    The estimator file is an ``.npz`` written by `atomic_write` that carries the
    estimator's pickle; the pickled state carries a format version and a SHA-256 of
    what predictions depend on, which detects corruption (not tampering: loading a
    pickle runs code, as in Python itself).
    """

    def save(self, path):
        """Save the estimator (fitted or not) to an ``.npz`` file for :meth:`load`.

        The file holds ``format_version`` (int, :data:`FILE_FORMAT_VERSION`),
        ``estimator`` (the class name), ``fastnet_version`` and ``pickle`` (the
        estimator's pickle as uint8, whose state carries its own version and
        checksum). Zip CRC-32 checks make corruption and truncation detectable.
        It is written to a temporary file and renamed, so it is never half-written.

        Parameters
        ----------
        path : str or os.PathLike
        """
        path = os.fspath(path)
        payload = pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(path, lambda f: np.savez(
            f, format_version=np.array(FILE_FORMAT_VERSION),
            estimator=np.array(type(self).__name__), fastnet_version=np.array(__version__),
            pickle=np.frombuffer(payload, dtype=np.uint8)))

    @classmethod
    def load(cls, path):
        """Load an estimator written by :meth:`save`.

        Like ``pickle.load`` and ``joblib.load``, this unpickles: load only
        files you trust.

        Parameters
        ----------
        path : str or os.PathLike

        Returns
        -------
        estimator : cls

        Raises
        ------
        ValueError
            If the file is not a fastnet estimator file, is truncated or
            corrupt, has another format version, or holds another estimator class.
        """
        path = os.fspath(path)
        with open(path, "rb") as fh:
            try:
                with np.load(fh, allow_pickle=False) as data:
                    keys = set(data.files)
                    if not {"format_version", "estimator", "pickle"} <= keys:
                        raise KeyError(f"keys {sorted(keys)}")
                    version = data["format_version"]
                    if version.shape != () or version.dtype.kind not in "iu":
                        raise KeyError(f"a format version of {version.dtype} (not an integer)")
                    version = int(version)
                    kind = str(data["estimator"])
                    payload = np.asarray(data["pickle"], dtype=np.uint8).tobytes()
            except KeyError as exc:
                raise ValueError(f"{path}: not a fastnet estimator file ({exc.args[0]}).") from None
            except Exception as exc:  # truncated or corrupt zip, not a zip, ...
                raise ValueError(f"{path}: cannot read fastnet estimator file "
                                 f"({type(exc).__name__}: {exc}).") from None
        if version != FILE_FORMAT_VERSION:
            raise ValueError(f"{path}: estimator file format version {version}, this fastnet "
                             f"({__version__}) reads version {FILE_FORMAT_VERSION}.")
        if kind != cls.__name__:
            raise ValueError(f"{path}: holds a {kind}, not a {cls.__name__}.")
        try:
            estimator = pickle.loads(payload)
        except ValueError as exc:  # our __setstate__: version or checksum
            raise ValueError(f"{path}: {exc}") from None
        except Exception as exc:
            raise ValueError(f"{path}: cannot unpickle the estimator "
                             f"({type(exc).__name__}: {exc}).") from None
        if type(estimator) is not cls:
            raise ValueError(f"{path}: holds a {type(estimator).__name__}, not a {cls.__name__}.")
        return estimator

    # --------------------------------------------------------------- pickling
    def _checksum(self):
        """SHA-256 of what predictions depend on: network, weights, classes, features."""
        net = self.net_
        h = hashlib.sha256()
        h.update(json.dumps([net.n_in, list(net.hidden), net.n_out, net.shortcut,
                             net.hidden_activation, net.output_activation]).encode())
        h.update(np.ascontiguousarray(net.weights, dtype="<f8").tobytes())
        h.update(repr(getattr(self, "classes_", np.empty(0)).tolist()).encode())
        h.update(repr(getattr(self, "n_features_in_", None)).encode())
        return h.hexdigest()

    def __getstate__(self):
        from fastnet.network import MLP  # here: fastnet.network imports this module

        state = super().__getstate__()
        state["_fastnet_format"] = PICKLE_FORMAT_VERSION
        state["_fastnet_version"] = __version__
        if isinstance(state.get("net_"), MLP):
            state["_fastnet_checksum"] = self._checksum()
        return state

    def __setstate__(self, state):
        from fastnet.network import MLP

        name = type(self).__name__
        if not isinstance(state, dict) or "_fastnet_format" not in state:
            raise ValueError(f"cannot restore {name}: the pickled state is not a fastnet "
                             "estimator state (no format version).")
        state = dict(state)
        version = state.pop("_fastnet_format")
        state.pop("_fastnet_version", None)
        checksum = state.pop("_fastnet_checksum", None)
        if version != PICKLE_FORMAT_VERSION:
            raise ValueError(f"cannot restore {name}: pickle format version {version!r}, this "
                             f"fastnet ({__version__}) reads version {PICKLE_FORMAT_VERSION}; "
                             "refit the estimator with this version.")
        super().__setstate__(state)
        if "net_" in state:
            if not isinstance(state["net_"], MLP) or checksum is None:
                raise ValueError(f"cannot restore {name}: the pickled state is corrupted "
                                 "(network or checksum missing).")
            if self._checksum() != checksum:
                raise ValueError(f"cannot restore {name}: the pickled state is corrupted "
                                 "(SHA-256 checksum of the network and classes does not match).")
