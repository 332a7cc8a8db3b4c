"""The scikit-learn estimators' files: ``save``/``load`` and checked pickling.

Kept apart from :mod:`fastnet._files` (atomic writes, locks, checked ``.npz``
reading), which :mod:`fastnet.network` uses: this module needs the network, so
the import goes one way only.
"""
import hashlib
import json
import os
import pickle

import numpy as np

from fastnet._files import (MAX_PICKLE_BYTES, NotNpzError, NpzMember, atomic_write,
                            open_regular, read_npz)
from fastnet._version import __version__
from fastnet.network import MLP

__all__ = ["EstimatorPersistence", "FILE_FORMAT_VERSION", "PICKLE_FORMAT_VERSION"]


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
        members = {"format_version": NpzMember("iu", 1, ndim=0, what="the format version"),
                   "estimator": NpzMember("U", 1, ndim=0, itemsize=4 * 256),
                   "pickle": NpzMember("u", MAX_PICKLE_BYTES, ndim=1, itemsize=1)}
        with open_regular(path) as fh:
            try:
                data, _ = read_npz(fh, members)
            except NotNpzError as exc:
                raise ValueError(f"{path}: not a fastnet estimator file ({exc}).") from None
            except ValueError as exc:
                raise ValueError(f"{path}: not a fastnet estimator file: {exc}") from None
            except Exception as exc:  # truncated or corrupt zip, ...
                raise ValueError(f"{path}: cannot read fastnet estimator file "
                                 f"({type(exc).__name__}: {exc}).") from None
        version, kind = int(data["format_version"]), str(data["estimator"])
        payload = data["pickle"].tobytes()
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
        state = super().__getstate__()
        state["_fastnet_format"] = PICKLE_FORMAT_VERSION
        state["_fastnet_version"] = __version__
        if isinstance(state.get("net_"), MLP):
            state["_fastnet_checksum"] = self._checksum()
        return state

    def __setstate__(self, state):
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
