"""JAX at its best: the whole training under ``jax.jit``, float64 or float32, one XLA thread.

Same layout as the NumPy peer (one flat weight vector; layer j a ``(fan_in, n_j)``
matrix and its bias; a layer reads a contiguous column range of the activations, so
shortcuts need no copies), the gradient from ``jax.value_and_grad``, iRPROP- with
``jnp.where`` exactly as the NumPy and torch peers, and the epochs in a
``lax.fori_loop`` whose trip count is an argument, so that one compilation (in the
warm-up) serves every timed run.

float32 is JAX's default precision (``jax_enable_x64`` off): the float32 peer leaves x64 off
(``peers.py`` runs it in a process of its own) and gets float32 data and weights; with x64
switched on by a float64 peer in the same process (``--inline``), float32 arrays stay
float32 and the Python-float constants are weakly typed, so it computes the same.
"""

from __future__ import annotations

import os

# Before jax is imported: one XLA thread, no eigen thread pool.
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

from .cases import RPROP  # noqa: E402
from .harness import Peer, PeerUnavailable  # noqa: E402
from .numpy_peer import NumpyPeer  # noqa: E402


def import_jax(x64=True):
    """Import jax; ``x64``: switch on float64 (JAX's default is float32)."""
    try:
        import jax
    except ImportError:
        raise PeerUnavailable("jax is not installed (pip install '.[bench]')") from None
    if x64:
        jax.config.update("jax_enable_x64", True)
    return jax


class JaxPeer(Peer):
    name = "jax"

    def __init__(self, case, dtype="float64"):
        if dtype not in ("float64", "float32"):
            raise PeerUnavailable(f"the JAX peer runs float64 or float32, not {dtype}")
        jax = import_jax(x64=dtype == "float64")
        import jax.numpy as jnp

        self.case, self.dtype = case, dtype
        jdt = jnp.float64 if dtype == "float64" else jnp.float32
        ref = NumpyPeer(case, dtype)   # the flat layout and the fixed initial weights
        ref.reset()
        self.w0 = jnp.asarray(ref.w, dtype=jdt)
        sizes, n_in = case.sizes, case.sizes[0]
        col = [0]
        for n in sizes[:-1]:
            col.append(col[-1] + n)
        layout, off = [], 0
        for lay in ref.layers:
            j, src = lay["j"], lay["src"]
            lo, hi = col[src[0]], col[src[-1]] + sizes[src[-1]]
            n = sizes[j]
            layout.append((lo, hi, n, off, off + (hi - lo) * n, j == len(sizes) - 1))
            off += (hi - lo) * n + n
        X, T = jnp.asarray(case.X, jdt), jnp.asarray(case.T, jdt)
        hidden = {"proben1": lambda z: z / (1.0 + jnp.abs(z)), "tanh": jnp.tanh,
                  "logistic": jax.nn.sigmoid, "relu": jax.nn.relu}[case.activation]

        def forward(w):
            A = X
            for lo, hi, n, w_off, b_off, last in layout:
                z = A[:, lo:hi] @ w[w_off:b_off].reshape(hi - lo, n) + w[b_off:b_off + n]
                if last:
                    return z
                A = jnp.concatenate([A, hidden(z)], axis=1)

        def sse(w):
            return jnp.sum((forward(w) - T) ** 2)

        grad = jax.grad(sse)
        p = RPROP

        def epoch(_, carry):
            w, g_prev, step = carry
            g = grad(w)
            prod = g * g_prev
            step = jnp.where(prod > 0, jnp.minimum(step * p["eta_plus"], p["delta_max"]),
                             jnp.where(prod < 0,
                                       jnp.maximum(step * p["eta_minus"], p["delta_min"]), step))
            g = jnp.where(prod < 0, 0.0, g)
            return w - jnp.sign(g) * step, g, step

        def train(w, epochs):
            carry = (w, jnp.zeros_like(w), jnp.full_like(w, p["delta0"]))
            return jax.lax.fori_loop(0, epochs, epoch, carry)[0]

        self._train = jax.jit(train)
        self._forward = jax.jit(forward)
        self.w = self.w0
        self.extra = {"jax": jax.__version__, "xla_flags": os.environ.get("XLA_FLAGS", ""),
                      "jax_enable_x64": bool(jax.config.jax_enable_x64), "jax_dtype": str(self.w0.dtype)}
        if n_in != X.shape[1]:
            raise PeerUnavailable("inconsistent case")

    def reset(self):
        self.w = self.w0

    def run(self, epochs):
        self.w = self._train(self.w, epochs).block_until_ready()

    def sse(self):
        """SSE summed in float64 from the peer's own forward pass (as the other peers)."""
        import numpy as np

        d = np.asarray(self._forward(self.w), dtype=np.float64) - self.case.T
        return float(np.einsum("ij,ij->", d, d))
