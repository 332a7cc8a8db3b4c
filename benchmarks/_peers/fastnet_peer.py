"""fastnet itself, driven through its public API (``MLP``, ``train_rprop``)."""

from __future__ import annotations

import sys

import numpy as np

from .cases import RPROP, repo_root
from .harness import Peer, PeerUnavailable

_fastnet = None
_import_error = None


def import_fastnet():
    """Import fastnet (installed, else from ``src/``); raise PeerUnavailable with the reason."""
    global _fastnet, _import_error
    if _fastnet is not None:
        return _fastnet
    if _import_error is not None:
        raise PeerUnavailable(_import_error)
    try:
        try:
            import fastnet  # noqa: PLC0415
        except ImportError:
            sys.path.insert(0, str(repo_root() / "src"))
            import fastnet  # noqa: PLC0415
        missing = [a for a in ("MLP", "train_rprop") if not hasattr(fastnet, a)]
        if missing:
            raise ImportError(f"fastnet {getattr(fastnet, '__version__', '?')} at "
                              f"{getattr(fastnet, '__file__', '?')} has no {', '.join(missing)}")
    except Exception as exc:  # ImportError, or a build that fails while importing
        _import_error = f"not importable ({type(exc).__name__}: {exc})"
        raise PeerUnavailable(_import_error) from exc
    _fastnet = fastnet
    return fastnet


def fastnet_version():
    try:
        fn = import_fastnet()
    except PeerUnavailable:
        return None
    return getattr(fn, "__version__", "?")


class FastnetPeer(Peer):
    name = "fastnet"

    def __init__(self, case, dtype="float64"):
        fn = import_fastnet()
        self.fn, self.case, self.dtype = fn, case, dtype
        hidden = tuple(case.spec.hidden)
        kwargs = dict(shortcut=case.shortcut, hidden_activation=case.activation, output_activation="linear")
        n_in, n_out = case.sizes[0], case.sizes[-1]
        if dtype == "float64":
            self.net = fn.MLP(n_in, hidden, n_out, **kwargs)
        else:
            try:
                self.net = fn.MLP(n_in, hidden, n_out, dtype=dtype, **kwargs)
            except Exception as exc:
                raise PeerUnavailable(f"fastnet {dtype} unavailable: fastnet.MLP(..., dtype={dtype!r}) "
                                      f"raised {type(exc).__name__}: {exc}") from exc
        if self.net.n_connections != case.n_connections:
            raise PeerUnavailable(f"fastnet net has n_connections={self.net.n_connections}, "
                                  f"expected {case.n_connections}")
        self.X = np.ascontiguousarray(case.X, dtype)
        self.T = np.ascontiguousarray(case.T, dtype)
        self.last = None
        self.calls = []
        self.extra = {"fastnet_version": getattr(fn, "__version__", "?"),
                      "fastnet_net_dtype": str(getattr(self.net, "dtype", "float64"))}

    def reset(self):
        self.net.set_params(*self.case.init_copy())

    def run(self, epochs):
        res = self.fn.train_rprop(self.net, self.X, self.T, variant="irprop-",
                                  eta_plus=RPROP["eta_plus"], eta_minus=RPROP["eta_minus"],
                                  delta0=RPROP["delta0"], delta_min=RPROP["delta_min"],
                                  delta_max=RPROP["delta_max"], max_epochs=epochs)
        self.last = res
        if res.epochs != epochs:
            raise RuntimeError(f"fastnet.train_rprop ran {res.epochs} epochs, asked for {epochs} "
                               f"(stop_reason={getattr(res, 'stop_reason', '?')})")
        # fastnet's own account of each call: (epochs, res.cpu_time, res.traversals.total)
        self.calls.append((epochs, float(res.cpu_time), int(res.traversals.total)))
        self.extra["own_calls"] = list(self.calls)

    def sse(self):
        Y = np.asarray(self.net.predict(self.X), dtype=np.float64)
        d = Y - self.case.T
        return float(np.einsum("ij,ij->", d, d))
