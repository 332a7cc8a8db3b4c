"""Peers for ``benchmarks/peers.py``: the cases, the fixed initial weights and one
module per peer (NumPy reference, FANN through ctypes, PyTorch, fastnet).

Every peer implements the same small interface (see :class:`_peers.harness.Peer`):
``reset()`` loads the fixed initial weights and fresh optimiser state, ``run(epochs)``
is the timed epoch loop and ``sse()`` evaluates the training-set sum of squared errors.
"""
