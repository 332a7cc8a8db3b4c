"""A network's persistence: the checksum of its pickled state, the checks that state
passes before it is restored, and reading a network file with errors that name it.
(``MLP.save`` and ``MLP.__getstate__`` stay in ``fastnet.network``: they write that
module's ``FORMAT_VERSION``.)"""
import hashlib
import json
import os

import numpy as np

from fastnet._files import atomic_write, open_regular
from fastnet._netfile import _NotNetworkFile, _check_config, _check_weights, _read_network_file


def checksum(config, weights):
    """SHA-256 (hex) of a network's configuration and weights, as pickles carry it."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
    digest.update(np.ascontiguousarray(weights, dtype=np.float64).tobytes())
    return digest.hexdigest()


def save(path, version, config, weights):
    """Write a network file (``MLP.save``): format ``version``, the JSON ``config`` and the
    ``weights`` (of the network's dtype), atomically."""
    atomic_write(path, lambda f: np.savez(f, format_version=np.array(version),
                                          config=np.array(json.dumps(config)), weights=weights))


def restored_state(state, version, activations):
    """``(config, weights)`` of a pickled network's ``state``, checked: format
    ``version``, keys, configuration, weights and checksum."""
    found = state.get("format_version") if isinstance(state, dict) else None
    if type(found) is not int or found != version:
        raise ValueError(f"cannot restore MLP: format version {found!r}, this fastnet reads "
                         f"version {version} (an integer).")
    missing = {"config", "weights", "sha256"} - set(state)
    if missing:
        raise ValueError(f"cannot restore MLP: the pickled state lacks {sorted(missing)}.")
    config = _check_config(state["config"], "cannot restore MLP: the pickled state", activations)
    weights = _check_weights(state["weights"], config, "cannot restore MLP: the pickled state")
    if checksum(state["config"], weights) != state["sha256"]:
        raise ValueError("cannot restore MLP: the pickled state is corrupted "
                         "(SHA-256 of configuration and weights does not match).")
    return config, weights


def read_network(path, build, activations):
    """``build(config, weights)`` of the network file at ``path``; every failure a
    ValueError that starts with the path."""
    path = os.fspath(path)
    with open_regular(path) as fh:  # our handle, closed even when reading fails
        try:
            return build(*_read_network_file(fh, path, activations))
        except _NotNetworkFile as exc:
            raise ValueError(f"{path}: not a fastnet network file ({exc}).") from None
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith(path) else f"{path}: {msg}") from None
        except Exception as exc:  # truncated zip, bad CRC-32, ...
            raise ValueError(f"{path}: cannot read fastnet network file "
                             f"({type(exc).__name__}: {exc}).") from None
