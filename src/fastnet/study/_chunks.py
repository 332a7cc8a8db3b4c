"""A study's trials in chunks: each chunk's trials drawn and trained from the study's seed
and the trials' indices alone, so that any split of the chunks over processes (or a
Dask cluster) and any interruption give the same trials; each finished chunk kept in a
file of its own, written atomically with a digest of its contents and checked when read
back: every column's values and the digest, so that an edited or corrupted chunk is refused
by name, never resumed into the results."""
from __future__ import annotations

import hashlib
import io
import json
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["CHUNK_TRIALS", "CHUNK_TRIAL_EPOCHS", "chunk_size", "chunk_bounds", "chunk_weights",
           "chunk_seed", "train_chunk", "chunk_path", "save_chunk", "load_chunk", "COLUMNS",
           "chunk_digest"]

#: Most trials of one chunk.
CHUNK_TRIALS = 4096
#: Most trial-epochs of one chunk (trials x epoch limit T): what one `train_many` call of
#: a worker holds per epoch and trial stays within a few tens of MB.
CHUNK_TRIAL_EPOCHS = 1 << 22

#: A chunk's columns, in the order `train_chunk` returns them.
COLUMNS = ("epochs", "success", "cpu_time", "diverged", "traversals", "flops")


def chunk_size(limit):
    """Trials per chunk under the epoch limit ``limit``: `CHUNK_TRIALS`, fewer where
    ``CHUNK_TRIALS x limit`` would pass `CHUNK_TRIAL_EPOCHS` (at least one)."""
    return max(1, min(CHUNK_TRIALS, CHUNK_TRIAL_EPOCHS // int(limit)))


def chunk_bounds(trials, limit):
    """The chunks ``[(lo, hi), ...]`` of ``trials`` trials (the last one shorter)."""
    size = chunk_size(limit)
    return [(lo, min(lo + size, trials)) for lo in range(0, trials, size)]


def chunk_weights(net, trials, seed, init_scale, lo, hi, steps_range=None):
    """Rows ``lo..hi-1`` of ``draw_trials(net, trials, seed, init_scale)`` (and of its
    initial steps with a ``delta0`` range ``steps_range``), drawn without the others.

    ``draw_trials`` draws all K x C weights from ``numpy.random.default_rng(seed)`` in one
    call, then (a ``delta0`` range) all K x C steps; every uniform double takes one 64-bit
    output of PCG64, so row i starts ``i x C`` outputs in, and its steps ``(K + i) x C``:
    ``bit_generator.advance`` skips to them.

    Returns
    -------
    weights : ndarray of shape (hi - lo, C)
    steps : numpy.random.Generator or None
        With ``steps_range``: a generator standing at row ``lo`` of the steps, to be
        given to `fastnet.train_many` as ``seed`` (its ``initial_steps`` draws them
        from there, in one call, as ``draw_trials`` draws them).
    """
    from fastnet.training import draw_trials

    C = net.n_connections
    rng = np.random.default_rng(seed)
    rng.bit_generator.advance(lo * C)
    W, _ = draw_trials(net, hi - lo, rng, init_scale)
    if steps_range is None:
        return W, None
    rng = np.random.default_rng(seed)
    rng.bit_generator.advance((trials + lo) * C)
    return W, rng


def chunk_seed(seed, lo):
    """The seed whose ``spawn(n)`` gives ``SeedSequence(seed).spawn(K)[lo:lo + n]``: the
    own generators of trials ``lo..lo+n-1`` of an algorithm that draws (online
    back-propagation's pattern orders, ...), as `fastnet.train_many` gives them."""
    return np.random.SeedSequence(seed, n_children_spawned=lo)


def _counts(results, net, K):
    """(training traversals, flops) of each trial of a `TrainResults`, from its columns:
    ``epochs x (2 N C + updates per epoch)`` (Prechelt's forward N·C, backward N·C and
    update per epoch) where every epoch costs the same, else each trial's own count;
    each trial's `Traversals` where the columns are not at hand."""
    c = getattr(results, "_columns", None)
    if c is not None and all(hasattr(c, k) for k in ("counts", "n_train", "updates_per_epoch")):
        if c.counts is None:
            per_epoch = 2 * int(c.n_train) * net.n_connections + int(c.updates_per_epoch)
            return (np.asarray(c.epochs[:K], np.int64) * per_epoch).astype(float), np.zeros(K)
        counts = np.asarray(c.counts[:K], np.int64)
        return counts[:, :3].sum(axis=1).astype(float), counts[:, 3].astype(float)
    counts = [results[i].traversals for i in range(K)]          # (no columns: one by one)
    return (np.array([t.training for t in counts], float),
            np.array([t.flops for t in counts], float))


def train_chunk(study, spec, net, X, Y, lo, hi):
    """Trials ``lo..hi-1`` of one algorithm of ``study``: ``(lo, hi, columns)``, the
    columns as in `COLUMNS`, each trial as the whole study's `train_many` call trains it.

    In one `fastnet.train_many` call; if a trial diverges, every trial of the chunk alone
    (`fastnet.train` from the same initial weights and own seed), the diverged ones
    failures at T, their traversals and flops NaN (the error holds no count).
    """
    from fastnet.algorithms import from_spec
    from fastnet.exceptions import DivergenceError, NoConvergenceWarning
    from fastnet.training import train, train_many

    algorithm, stop, T, n = from_spec(spec), study.criterion(), study.limit, hi - lo
    ranged = isinstance(getattr(algorithm, "delta0", None), tuple)
    W, steps = chunk_weights(net, study.trials, study.seed, study.init_scale, lo, hi,
                             algorithm.delta0 if ranged else None)
    seed = steps if ranged else (chunk_seed(study.seed, lo) if algorithm.draws else None)
    kw = dict(algorithm=algorithm, stop=stop, strip=1, max_epochs=T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoConvergenceWarning)     # failures are data
        try:
            r = train_many(net, X, Y, initial_weights=W, seed=seed, history=False, **kw)
            traversals, flops = _counts(r, net, n)
            return lo, hi, (np.asarray(r.epochs[:n], np.int64).copy(),
                            np.array(r.stop_reason[:n]) == stop.name,
                            np.asarray(r.cpu_time[:n], float).copy(), np.zeros(n, bool),
                            traversals, flops)
        except DivergenceError:
            pass
        seeds = chunk_seed(study.seed, lo).spawn(n) if algorithm.draws else [None] * n
        epochs, success = np.full(n, T, np.int64), np.zeros(n, bool)
        cpu, diverged = np.zeros(n), np.zeros(n, bool)
        traversals, flops = np.full(n, np.nan), np.full(n, np.nan)
        for i in range(n):
            c0 = time.process_time()
            try:
                one = train(net.copy().set_weights(W[i]), X, Y, seed=seeds[i], **kw)
                epochs[i], success[i] = one.epochs, one.stop_reason == stop.name
                traversals[i], flops[i] = one.traversals.training, one.traversals.flops
            except DivergenceError as exc:
                epochs[i], diverged[i] = exc.epoch, True
            cpu[i] = time.process_time() - c0
        return lo, hi, (epochs, success, cpu, diverged, traversals, flops)


def chunk_path(folder, lo, hi):
    """The file of chunk ``[lo, hi)`` in an algorithm's folder."""
    return Path(folder) / f"{lo:09d}-{hi:09d}.npz"


#: The dtype each column is written in (`save_chunk`), as its digest covers it.
COLUMN_DTYPES = {"epochs": np.int64, "success": np.uint8, "cpu_time": np.float64,
                 "diverged": np.uint8, "traversals": np.float64, "flops": np.float64}
#: The keys of a chunk's JSON header.
HEADER_KEYS = ("identity", "algorithm", "hash", "lo", "hi", "digest")


def chunk_digest(head, columns):
    """SHA-256 (hex) of a chunk's contents: its header but the digest (canonical JSON:
    sorted keys, no spaces), then each column of `COLUMNS` by name, dtype, shape and
    bytes.

    Parameters
    ----------
    head : dict
        The chunk's header (a ``digest`` in it is left out).
    columns : dict
        {column: ndarray}, as written (or read back).

    Returns
    -------
    str
    """
    text = json.dumps({k: v for k, v in head.items() if k != "digest"}, sort_keys=True,
                      separators=(",", ":"), allow_nan=False)
    h = hashlib.sha256(text.encode())
    for key in COLUMNS:
        v = np.ascontiguousarray(columns[key])
        h.update(f"\n{key} {v.dtype.str} {v.shape}\n".encode())
        h.update(v.tobytes())
    return h.hexdigest()


def save_chunk(path, study, spec, data_sha256, lo, hi, data):
    """Write one chunk's columns into ``path`` atomically (an uncompressed ``.npz``: the
    columns and a JSON header naming the set-up, the algorithm and the trials, with the
    SHA-256 of it all, `chunk_digest`)."""
    from fastnet._files import atomic_write

    head = {"identity": study.identity(data_sha256), "algorithm": spec,
            "hash": study.cell_hash(spec, data_sha256), "lo": lo, "hi": hi}
    columns = {k: np.asarray(v, COLUMN_DTYPES[k]) for k, v in zip(COLUMNS, data)}
    head["digest"] = chunk_digest(head, columns)
    buf = io.BytesIO()
    np.savez(buf, head=np.array(json.dumps(head, sort_keys=True)), **columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, [buf.getvalue()])


def load_chunk(path, study, spec, data_sha256, lo, hi):
    """A finished chunk's columns from its file: None if absent, or if it is a chunk of
    this set-up written before chunks had digests (fastnet 0.2.0: trained again); a
    ValueError naming the file if it does not read or holds trials this set-up cannot have
    (another set-up or algorithm or trials, a trial's epochs outside 0..T, a flag not 0 or
    1, a negative or non-finite CPU time, a count negative or fractional, a column of
    another length or dtype) or contents that differ from its digest (edited or
    corrupted)."""
    from fastnet._files import NpzMember, open_regular, read_npz

    n, T = hi - lo, study.limit
    retrain = "delete it to train those trials again."
    members = {"head": NpzMember("U", 1, ndim=0, itemsize=4 * 65536, what="the header"),
               **{k: NpzMember("iuf", n, ndim=1) for k in COLUMNS}}
    try:
        with open_regular(path) as fh:
            arrays, _ = read_npz(fh, members)
        head = json.loads(str(arrays["head"][()]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: not a study's chunk of trials ({exc}); {retrain}") from None
    if (not isinstance(head, dict) or head.get("algorithm") != spec
            or head.get("hash") != study.cell_hash(spec, data_sha256)
            or head.get("identity") != study.identity(data_sha256)
            or head.get("lo") != lo or head.get("hi") != hi):
        raise ValueError(f"{path}: not trials {lo}..{hi - 1} of {spec!r} in this study's "
                         f"set-up (its header differs); {retrain}")
    if "digest" not in head:
        return None              # (written before chunks had digests: trained again)
    if set(head) != set(HEADER_KEYS) or not isinstance(head["digest"], str):
        raise ValueError(f"{path}: its header must hold {', '.join(HEADER_KEYS)} (the digest a "
                         f"text), got {', '.join(sorted(map(str, head)))}; {retrain}")

    def column(key, ok, why):
        v = arrays[key]
        if v.shape != (n,) or not ok(v):
            raise ValueError(f"{path}: `{key}` must be {n} values ({why}), as this study "
                             f"writes them; {retrain}")
        return v

    def count(v):
        known = v[np.isfinite(v)] if v.dtype.kind == "f" else v
        return not np.isinf(v).any() and bool(np.all((known >= 0) & (known == np.round(known))))

    epochs = column("epochs", lambda v: v.dtype.kind in "iu" and bool(np.all((v >= 0) & (v <= T))),
                    "integers from 0 to the epoch limit")
    success = column("success", lambda v: v.dtype.kind in "iu" and bool(np.all(v <= 1))
                     and bool(np.all(v >= 0)), "0 or 1")
    cpu = column("cpu_time", lambda v: bool(np.all(np.isfinite(v) & (v >= 0))),
                 "finite seconds, not negative")
    diverged = column("diverged", lambda v: v.dtype.kind in "iu" and bool(np.all(v <= 1))
                      and bool(np.all(v >= 0)), "0 or 1")
    traversals = column("traversals", count, "whole numbers, not negative, or NaN where unknown")
    flops = column("flops", count, "whole numbers, not negative, or NaN where unknown")
    if chunk_digest(head, arrays) != head["digest"]:
        raise ValueError(f"{path}: its trials differ from the digest its header records "
                         f"(edited or corrupted: not trials this study wrote); {retrain}")
    return (epochs.astype(np.intp), success.astype(bool), cpu.astype(float),
            diverged.astype(bool), traversals.astype(float), flops.astype(float))
