"""Cases A-G of the peer comparison, their data, the fixed initial weights and a float64 reference.

Weights are kept in fastnet's convention: layers are numbered 0 (inputs) .. L (outputs),
``W[(i, j)]`` has shape ``(n_i, n_j)`` for every connected pair ``i < j`` and ``b[j]`` has
shape ``(n_j,)``. Every peer loads its weights from these two dicts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

#: RPROP settings shared by every peer (iRPROP-, Proben1's Delta_min = 0, FANN's defaults).
RPROP = dict(eta_plus=1.2, eta_minus=0.5, delta0=0.1, delta_min=0.0, delta_max=50.0)
#: Initial weights uniform(-INIT_RANGE, INIT_RANGE) from numpy.random.default_rng(INIT_SEED).
INIT_SEED = 12345
INIT_RANGE = 0.5
#: Case G: uniform[-1, 1] inputs, one-hot targets of random classes.
SYNTH_SEED = 2024
SYNTH_SHAPE = (4096, 128, 10)  # examples, inputs, classes
#: Case S: the same kind of data, 4096 examples of 32 inputs, 4 classes; a 32-32-4 network.
SYNTH_SMALL_SHAPE = (4096, 32, 4)
#: Hidden activations every peer runs (``--activation``); outputs stay linear. proben1 is
#: x/(1+|x|), the one of cases A-G.
HIDDEN_ACTIVATIONS = ("proben1", "tanh", "logistic", "relu")


@dataclass(frozen=True)
class CaseSpec:
    key: str
    dataset: str  # Proben1 file stem or "synthetic"
    hidden: tuple
    shortcut: bool
    activation: str = "proben1"

    @property
    def label(self):
        h = "+".join(str(n) for n in self.hidden)
        act = "" if self.activation == "proben1" else f" {self.activation}"
        return f"{self.key} {self.dataset} {h}{' sc' if self.shortcut else ''}{act}"


CASES = {
    "A": CaseSpec("A", "cancer1", (4, 2), True),
    "B": CaseSpec("B", "gene1", (4, 2), True),
    "C": CaseSpec("C", "thyroid1", (16, 8), True),
    "D": CaseSpec("D", "soybean1", (16, 8), True),
    "E": CaseSpec("E", "mushroom1", (32,), False),
    "F": CaseSpec("F", "thyroid1", (16, 8), False),
    "G": CaseSpec("G", "synthetic", (64, 32), False),
    "S": CaseSpec("S", "synthetic-32", (32,), False),
}

# C per case (a self-check of the topology code).
EXPECTED_C = {"A": 100, "B": 1115, "C": 794, "D": 4153, "E": 4098, "F": 515, "G": 10666,
              "S": 1188}


def connected_pairs(sizes, shortcut):
    """Connected layer pairs ``(i, j)``, ordered by target layer, then source layer."""
    n_layers = len(sizes)
    return [(i, j) for j in range(1, n_layers) for i in range(j) if shortcut or i == j - 1]


def sources(sizes, shortcut, j):
    return [i for (i, jj) in connected_pairs(sizes, shortcut) if jj == j]


def count_connections(sizes, shortcut):
    """C: weights plus one bias per hidden and output unit."""
    return sum(sizes[i] * sizes[j] for i, j in connected_pairs(sizes, shortcut)) + sum(sizes[1:])


def init_weights(sizes, shortcut, seed=INIT_SEED, r=INIT_RANGE):
    """The fixed initial weights, generated once for every peer.

    One draw ``rng.uniform(-r, r, C)``, laid out per target layer j as a
    ``(1 + fan_in_j, n_j)`` block: the bias row first, then the rows of the source layers
    in increasing order. This is the layout whose SSE at init every peer reproduces
    (342.32 for case A).
    """
    rng = np.random.default_rng(seed)
    flat = rng.uniform(-r, r, count_connections(sizes, shortcut))
    W, b, off = {}, {}, 0
    for j in range(1, len(sizes)):
        src = sources(sizes, shortcut, j)
        fan_in = sum(sizes[i] for i in src)
        block = flat[off:off + (1 + fan_in) * sizes[j]].reshape(1 + fan_in, sizes[j])
        off += block.size
        b[j] = block[0].copy()
        row = 1
        for i in src:
            W[(i, j)] = block[row:row + sizes[i]].copy()
            row += sizes[i]
    assert off == flat.size
    return W, b


def hidden_units(activation, Z, out, D):
    """NumPy hidden units at their best (in place, no temporaries): out = f(Z), D = f'(Z)."""
    if activation == "proben1":          # a = z/(1+|z|), f' = 1/(1+|z|)^2
        np.abs(Z, out=D)
        D += 1.0
        np.divide(Z, D, out=out)
        np.reciprocal(D, out=D)
        D *= D
    elif activation == "tanh":           # f' = 1 - a^2
        np.tanh(Z, out=out)
        np.multiply(out, out, out=D)
        np.subtract(1.0, D, out=D)
    elif activation == "logistic":       # f' = a (1 - a)
        np.negative(Z, out=out)
        with np.errstate(over="ignore"):     # exp(-z) = inf for z < -709: the unit is 0
            np.exp(out, out=out)
        out += 1.0
        np.reciprocal(out, out=out)
        np.subtract(1.0, out, out=D)
        D *= out
    elif activation == "relu":           # f' = 1 for z > 0, else 0
        np.maximum(Z, 0.0, out=out)
        np.greater(Z, 0.0, out=D)
    else:
        raise ValueError(f"no hidden activation {activation!r}; one of {HIDDEN_ACTIVATIONS}")


def reference_outputs(sizes, shortcut, W, b, X, activation="proben1"):
    """Plain float64 forward pass: `activation` hidden units, linear outputs."""
    acts = [np.asarray(X, dtype=np.float64)]
    last = len(sizes) - 1
    for j in range(1, last + 1):
        z = b[j] + sum(acts[i] @ W[(i, j)] for i in sources(sizes, shortcut, j))
        if j < last:
            a, d = np.empty_like(z), np.empty_like(z)
            hidden_units(activation, z, a, d)
            z = a
        acts.append(z)
    return acts[-1]


def sse_of(Y, T):
    """Sum over examples and outputs of (y - t)^2, accumulated in float64."""
    d = np.asarray(Y, dtype=np.float64) - T
    return float(np.einsum("ij,ij->", d, d))


# --------------------------------------------------------------------------- data

def repo_root():
    return Path(__file__).resolve().parents[2]


def data_dir():
    """Proben1 directory: $FASTNET_DATA if set, else ../shared/proben1 next to the repo."""
    env = os.environ.get("FASTNET_DATA")
    if env:
        return Path(env)
    return (repo_root() / ".." / "shared" / "proben1").resolve()


def read_proben1_train(path):
    """Training examples of a Proben1 ``.dt`` file: the first ``training_examples`` rows.

    Seven ``key=value`` header lines, then one example per line (inputs, then outputs).
    """
    path = Path(path)
    with open(path) as fh:
        header = {}
        for lineno in range(1, 8):
            key, sep, value = fh.readline().strip().partition("=")
            if not sep:
                raise ValueError(f"{path}:{lineno}: expected key=value header line")
            header[key] = int(value)
        n_in = header["bool_in"] + header["real_in"]
        n_out = header["bool_out"] + header["real_out"]
        n = header["training_examples"]
        rows = []
        for k in range(n):
            fields = fh.readline().split()
            if len(fields) != n_in + n_out:
                raise ValueError(f"{path}:{8 + k}: expected {n_in + n_out} fields, got {len(fields)}")
            rows.append([float(v) for v in fields])
    data = np.array(rows, dtype=np.float64)
    return np.ascontiguousarray(data[:, :n_in]), np.ascontiguousarray(data[:, n_in:])


def _fastnet_train_split(name, directory):
    """(X, T) of ``fastnet.datasets.load_proben1(name).train``; raises if unusable."""
    try:
        from fastnet.datasets import load_proben1  # noqa: PLC0415
    except ImportError:
        import sys  # noqa: PLC0415

        src = str(repo_root() / "src")
        if src in sys.path:
            raise
        sys.path.insert(0, src)   # an in-place build of the work tree
        from fastnet.datasets import load_proben1  # noqa: PLC0415

    try:
        ds = load_proben1(name, root=directory)
    except TypeError:
        ds = load_proben1(name)
    tr = ds.train
    if isinstance(tr, tuple) and len(tr) == 2:
        return np.asarray(tr[0], float), np.asarray(tr[1], float)
    for xs, ts in (("X", "T"), ("X", "Y"), ("inputs", "targets"), ("x", "t")):
        if hasattr(tr, xs) and hasattr(tr, ts):
            return np.asarray(getattr(tr, xs), float), np.asarray(getattr(tr, ts), float)
    raise TypeError(f"cannot find inputs/targets on {type(tr).__name__}")


def load_training_set(name):
    """Training set of a Proben1 problem and a note on how it was read.

    Uses ``fastnet.datasets.load_proben1`` when it is importable and agrees with the
    file; otherwise the small parser above.
    """
    directory = data_dir()
    path = directory / f"{name}.dt"
    X, T = read_proben1_train(path)
    try:
        Xf, Tf = _fastnet_train_split(name, directory)
    except Exception as exc:  # not written yet, or another signature
        return X, T, f"own parser ({path}); fastnet.datasets unused: {type(exc).__name__}: {exc}"
    if Xf.shape == X.shape and Tf.shape == T.shape and np.array_equal(Xf, X) and np.array_equal(Tf, T):
        return np.ascontiguousarray(Xf), np.ascontiguousarray(Tf), "fastnet.datasets.load_proben1"
    return X, T, (f"own parser ({path}); fastnet.datasets.load_proben1 DISAGREES "
                  f"(shapes {Xf.shape}/{Tf.shape} vs {X.shape}/{T.shape})")


def synthetic_set(seed=SYNTH_SEED, shape=SYNTH_SHAPE):
    n, n_in, n_cls = shape
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, n_in))
    T = np.eye(n_cls)[rng.integers(0, n_cls, n)]
    return X, T


# --------------------------------------------------------------------------- cases

@dataclass
class Case:
    spec: CaseSpec
    X: np.ndarray
    T: np.ndarray
    data_note: str
    sizes: tuple = field(init=False)
    W0: dict = field(init=False)
    b0: dict = field(init=False)
    sse_init_ref: float = field(init=False)

    def __post_init__(self):
        self.sizes = (self.X.shape[1],) + tuple(self.spec.hidden) + (self.T.shape[1],)
        self.W0, self.b0 = init_weights(self.sizes, self.spec.shortcut)
        self.sse_init_ref = sse_of(reference_outputs(self.sizes, self.shortcut, self.W0, self.b0, self.X,
                                                     self.activation), self.T)

    key = property(lambda self: self.spec.key)
    activation = property(lambda self: self.spec.activation)
    shortcut = property(lambda self: self.spec.shortcut)
    n_patterns = property(lambda self: self.X.shape[0])

    @property
    def n_connections(self):
        return count_connections(self.sizes, self.shortcut)

    @property
    def traversals_per_epoch(self):
        """Proben1 counting: forward + backward over N examples, one update per connection."""
        return 2 * self.n_patterns * self.n_connections + self.n_connections

    @property
    def flop_per_epoch(self):
        """2NC forward + 4NC backward."""
        return 6 * self.n_patterns * self.n_connections

    def init_copy(self):
        """Deep copy of the fixed initial weights (peers may train them in place)."""
        return ({k: v.copy() for k, v in self.W0.items()}, {k: v.copy() for k, v in self.b0.items()})


def load_case(key, activation="proben1"):
    """Case `key` of CASES with `activation` hidden units (linear outputs)."""
    if activation not in HIDDEN_ACTIVATIONS:
        raise ValueError(f"no hidden activation {activation!r}; one of {HIDDEN_ACTIVATIONS}")
    spec = replace(CASES[key], activation=activation)
    if spec.dataset == "synthetic":
        X, T = synthetic_set()
        note = f"synthetic, seed {SYNTH_SEED}"
    elif spec.dataset == "synthetic-32":
        X, T = synthetic_set(shape=SYNTH_SMALL_SHAPE)
        note = f"synthetic {SYNTH_SMALL_SHAPE}, seed {SYNTH_SEED}"
    else:
        X, T, note = load_training_set(spec.dataset)
    case = Case(spec, X, T, note)
    if case.n_connections != EXPECTED_C[key]:
        raise AssertionError(f"case {key}: C = {case.n_connections}, expected {EXPECTED_C[key]}")
    return case
