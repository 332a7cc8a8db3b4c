"""Direct calls of the lanes kernels at either value type (tests/test_lanes_f32.py and
benchmarks): a queue of trials and epochs of the strips, state allocated in the dtype
of the weights (16 float32 or 8 float64 trials per group), the errors in float64."""
import numpy as np

from fastnet._kernels import _trials
from fastnet._kernels._rules import Rule


def lanes(dtype):
    return _trials.LANES_OF[np.dtype(dtype).name]


def blocks(W, dtype):
    """(K, C) rows -> (G, C, L) blocks of dtype (padding lanes: copies of trial 0)."""
    L = lanes(dtype)
    K, C = W.shape
    G = -(-K // L)
    rows = np.concatenate([W, np.repeat(W[:1], G * L - K, axis=0)]).astype(dtype)
    return np.ascontiguousarray(rows.reshape(G, L, C).transpose(0, 2, 1))


def unblock(B, K):
    G, C, L = B.shape
    return B.transpose(0, 2, 1).reshape(G * L, C)[:K]


def rprop(name="irprop_minus", **kw):
    p = dict(eta_plus=1.2, eta_minus=0.5, delta_min=0.0, delta_max=50.0)
    p.update(kw)
    return Rule(name, **p)


def queue(net, X, T, W, dtype, rule=None, t_max=200, check_every=1, special=True, step0=0.1,
          history=True, w_limit=0.0, below=-1.0, below_every=0, groups=None, online=None):
    """Every trial of W (K, C) in the queue; a dict of its per-trial results."""
    dtype = np.dtype(dtype)
    rule = rule if rule is not None else rprop()
    L, K, C = lanes(dtype), W.shape[0], W.shape[1]
    G = groups if groups is not None else min(-(-K // L), 4)
    X, T = np.ascontiguousarray(X, dtype), np.ascontiguousarray(T, dtype)
    state = [np.zeros((G, C, L), dtype) for _ in range(5)]
    work_n = max(_trials.work_size(net.n_units, X.shape[0], net.n_in, dtype=dtype.name),
                 _trials.online_work_size(net.n_units, C, dtype=dtype.name))
    out = dict(w_out=np.zeros((K, C), dtype), epochs=np.zeros(K, np.int64),
               status=np.zeros(K, np.int64), top_epoch=np.zeros(K, np.int64),
               first=np.zeros(K), top=np.zeros(K), low=np.zeros(K),
               history=np.full((K, t_max), np.nan) if history else None)
    s0 = None if step0 is None else np.full((1, C), step0, dtype)
    kw = {}
    if online is not None:       # (generators: one per trial)
        kw = dict(orders=np.zeros((G * L, X.shape[0]), np.int64),
                  bitgens=np.array([_trials.bitgen_address(g) for g in online], np.uintp))
    out["largest"] = _trials.trials_queue(
        net.layer_table, net.n_in, X, T, *state, np.zeros(G * L), np.zeros(work_n, dtype), rule,
        np.ascontiguousarray(W, dtype), s0, out["w_out"], out["epochs"], out["status"],
        out["top_epoch"], out["first"], out["top"], out["low"], out["history"],
        check_every=check_every, special=special, t_max=t_max, w_limit=w_limit, below=below,
        below_every=below_every, **kw)
    return out


def strips(net, X, T, W, dtype, rule=None, epochs=20, check_every=0, special=True, step0=0.1,
           w_limit=0.0):
    """epochs of trials_train for every trial of W: (weights (K, C), status (K,), sse (K, epochs))."""
    dtype = np.dtype(dtype)
    rule = rule if rule is not None else rprop()
    K, C = W.shape
    w = blocks(W, dtype)
    G, _, L = w.shape
    g, gp, dw = (np.zeros_like(w) for _ in range(3))
    st = np.full_like(w, step0)
    X, T = np.ascontiguousarray(X, dtype), np.ascontiguousarray(T, dtype)
    status, sse = np.zeros(G * L, np.int64), np.full((G * L, epochs), np.nan)
    work = np.zeros(_trials.work_size(net.n_units, X.shape[0], net.n_in, dtype=dtype.name), dtype)
    _trials.trials_train(net.layer_table, net.n_in, X, T, w, g, gp, dw, st, np.full(G * L, np.inf),
                         status, work, rule, sse, check_every=check_every, special=special,
                         t_max=epochs, w_limit=w_limit)
    return unblock(w, K), status[:K], sse[:K]
