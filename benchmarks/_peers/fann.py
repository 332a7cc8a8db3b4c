"""FANN 2.2 peer through its public C API (ctypes), float (`libfloatfann`) or double
(`libdoublefann`), from Debian's ``libfann-dev``.

Set-up: ``fann_create_shortcut_array`` / ``fann_create_standard_array``,
``FANN_ELLIOT_SYMMETRIC`` hidden units (x/(1+|x|) at steepness 1.0), ``FANN_LINEAR`` outputs
(steepness 1.0; FANN's default 0.5 would scale them), ``FANN_ERRORFUNC_LINEAR`` (the default
``FANN_ERRORFUNC_TANH`` transforms the output error), ``FANN_TRAIN_RPROP`` (FANN's
``fann_update_weights_irpropm``) with every RPROP parameter set explicitly, and
``fann_train_epoch`` in a loop. The fixed initial weights are loaded through
``fann_get_connection_array`` / ``fann_set_weight_array``: each connection
(from_neuron, to_neuron) is mapped to fastnet's ``W[(i, j)][from, to]`` or ``b[j][to]``
(a shortcut net has one bias neuron, the last neuron of the input layer, feeding every
later unit; a standard net has a bias neuron at the end of every layer). The mapping is
checked by the initial SSE.

FANN's iRPROP- differs a little from torch's (step floored at 1e-4 before scaling, growth
also on a zero gradient product, +Delta move after a sign change, weights clipped to
+-1500), so its error trajectory differs slightly; the work per epoch is the same.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess

import numpy as np

from .cases import RPROP
from .harness import Peer, PeerUnavailable

FANN_LINEAR = 0
FANN_ELLIOT_SYMMETRIC = 11
FANN_SIGMOID = 3             # 1 / (1 + exp(-2 s x)): logistic at steepness s = 0.5
FANN_SIGMOID_SYMMETRIC = 5   # tanh(s x): tanh at steepness s = 1
#: Hidden activation -> (FANN function, steepness); FANN 2.2 has no relu.
FANN_HIDDEN = {"proben1": (FANN_ELLIOT_SYMMETRIC, 1.0), "tanh": (FANN_SIGMOID_SYMMETRIC, 1.0),
               "logistic": (FANN_SIGMOID, 0.5)}
FANN_ERRORFUNC_LINEAR = 0
FANN_TRAIN_RPROP = 2

_LIBS = {"float32": ("floatfann", ctypes.c_float), "float64": ("doublefann", ctypes.c_double)}
_loaded = {}


def _load(dtype):
    """(CDLL, fann_type, connection struct) for one precision, loaded once."""
    if dtype in _loaded:
        return _loaded[dtype]
    stem, ftype = _LIBS[dtype]
    candidates = [f"lib{stem}.so.2", f"lib{stem}.so", ctypes.util.find_library(stem)]
    lib, errors = None, []
    for name in filter(None, candidates):
        try:
            # RTLD_LOCAL: float and double builds export the same symbol names
            lib = ctypes.CDLL(name, mode=os.RTLD_LOCAL)
            break
        except OSError as exc:
            errors.append(str(exc))
    if lib is None:
        raise PeerUnavailable(f"lib{stem} not found ({'; '.join(errors) or 'no candidates'}); "
                              "`apt-get install libfann-dev` adds the FANN columns")

    class Connection(ctypes.Structure):
        _fields_ = [("from_neuron", ctypes.c_uint), ("to_neuron", ctypes.c_uint), ("weight", ftype)]

    P, U, F = ctypes.c_void_p, ctypes.c_uint, ctypes.c_float
    sig = {
        "fann_create_shortcut_array": (P, [U, ctypes.POINTER(U)]),
        "fann_create_standard_array": (P, [U, ctypes.POINTER(U)]),
        "fann_copy": (P, [P]),
        "fann_destroy": (None, [P]),
        "fann_get_total_connections": (U, [P]),
        "fann_get_num_layers": (U, [P]),
        "fann_get_layer_array": (None, [P, ctypes.POINTER(U)]),
        "fann_get_bias_array": (None, [P, ctypes.POINTER(U)]),
        "fann_get_connection_array": (None, [P, ctypes.POINTER(Connection)]),
        "fann_set_weight_array": (None, [P, ctypes.POINTER(Connection), U]),
        "fann_set_activation_function_hidden": (None, [P, ctypes.c_int]),
        "fann_set_activation_function_output": (None, [P, ctypes.c_int]),
        "fann_set_activation_steepness_hidden": (None, [P, ftype]),
        "fann_set_activation_steepness_output": (None, [P, ftype]),
        "fann_set_train_error_function": (None, [P, ctypes.c_int]),
        "fann_set_training_algorithm": (None, [P, ctypes.c_int]),
        "fann_set_rprop_increase_factor": (None, [P, F]),
        "fann_set_rprop_decrease_factor": (None, [P, F]),
        "fann_set_rprop_delta_min": (None, [P, F]),
        "fann_set_rprop_delta_max": (None, [P, F]),
        "fann_set_rprop_delta_zero": (None, [P, F]),
        "fann_get_rprop_delta_zero": (F, [P]),
        "fann_create_train_from_callback": (P, [U, U, U, P]),
        "fann_destroy_train": (None, [P]),
        "fann_train_epoch": (F, [P, P]),
        "fann_run": (ctypes.POINTER(ftype), [P, ctypes.POINTER(ftype)]),
        "fann_get_errno": (ctypes.c_int, [P]),
    }
    for fname, (res, args) in sig.items():
        fn = getattr(lib, fname)
        fn.restype, fn.argtypes = res, args
    _loaded[dtype] = (lib, ftype, Connection)
    return _loaded[dtype]


def fann_version():
    """Debian package version of libfann (dpkg), or None."""
    for pkg in ("libfann-dev", "libfann2"):
        try:
            out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                                 text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.returncode == 0 and out.stdout:
            return f"{pkg} {out.stdout}"
    return None


class FannPeer(Peer):
    name = "fann"

    def __init__(self, case, dtype="float64"):
        self.lib, self.ftype, self.Connection = _load(dtype)
        self.case, self.dtype = case, dtype
        self.nptype = np.dtype(dtype)
        self.X = np.ascontiguousarray(case.X, self.nptype)
        self.T = np.ascontiguousarray(case.T, self.nptype)
        self.train = self._make_train_data()
        self.template = self._make_template()
        self.ann = None
        self.extra = {"fann_version": fann_version()}

    # ------------------------------------------------------------------ set-up
    def _make_train_data(self):
        N, n_in = self.X.shape
        n_out = self.T.shape[1]
        X, T, ftype = self.X, self.T, self.ftype
        size = ctypes.sizeof(ftype)
        CB = ctypes.CFUNCTYPE(None, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                              ctypes.POINTER(ftype), ctypes.POINTER(ftype))

        def fill(num, ni, no, inp, out):
            ctypes.memmove(inp, X[num].ctypes.data, ni * size)
            ctypes.memmove(out, T[num].ctypes.data, no * size)

        cb = CB(fill)
        data = self.lib.fann_create_train_from_callback(N, n_in, n_out, ctypes.cast(cb, ctypes.c_void_p))
        if not data:
            raise PeerUnavailable("fann_create_train_from_callback failed")
        return data

    def _make_template(self):
        lib, sizes, case = self.lib, self.case.sizes, self.case
        layers = (ctypes.c_uint * len(sizes))(*sizes)
        create = lib.fann_create_shortcut_array if case.shortcut else lib.fann_create_standard_array
        ann = create(len(sizes), layers)
        if not ann:
            raise PeerUnavailable("fann_create_*_array failed")
        if case.activation not in FANN_HIDDEN:
            raise PeerUnavailable(f"FANN 2.2 has no {case.activation} units")
        function, steepness = FANN_HIDDEN[case.activation]
        lib.fann_set_activation_function_hidden(ann, function)
        lib.fann_set_activation_function_output(ann, FANN_LINEAR)
        lib.fann_set_activation_steepness_hidden(ann, steepness)
        lib.fann_set_activation_steepness_output(ann, 1.0)
        lib.fann_set_train_error_function(ann, FANN_ERRORFUNC_LINEAR)
        lib.fann_set_training_algorithm(ann, FANN_TRAIN_RPROP)
        lib.fann_set_rprop_increase_factor(ann, RPROP["eta_plus"])
        lib.fann_set_rprop_decrease_factor(ann, RPROP["eta_minus"])
        lib.fann_set_rprop_delta_min(ann, RPROP["delta_min"])
        lib.fann_set_rprop_delta_max(ann, RPROP["delta_max"])
        lib.fann_set_rprop_delta_zero(ann, RPROP["delta0"])
        C = lib.fann_get_total_connections(ann)
        if C != case.n_connections:
            lib.fann_destroy(ann)
            raise PeerUnavailable(f"FANN net has {C} connections, expected {case.n_connections}")
        conns = (self.Connection * C)()
        lib.fann_get_connection_array(ann, conns)
        self._load_init(ann, conns)
        lib.fann_set_weight_array(ann, conns, C)
        return ann

    def _neuron_map(self, ann):
        """FANN neuron index -> ("unit", layer, k) or ("bias",)."""
        lib = self.lib
        nl = lib.fann_get_num_layers(ann)
        layers, bias = (ctypes.c_uint * nl)(), (ctypes.c_uint * nl)()
        lib.fann_get_layer_array(ann, layers)
        lib.fann_get_bias_array(ann, bias)
        where, idx = {}, 0
        for li in range(nl):
            for k in range(layers[li]):
                where[idx] = ("unit", li, k)
                idx += 1
            for _ in range(bias[li]):
                where[idx] = ("bias",)
                idx += 1
        return where

    def _load_init(self, ann, conns):
        W0, b0 = self.case.W0, self.case.b0
        where = self._neuron_map(ann)
        seen = set()
        for c in conns:
            dst = where[c.to_neuron]
            src = where[c.from_neuron]
            assert dst[0] == "unit", "connection into a bias neuron"
            j, t = dst[1], dst[2]
            if src[0] == "bias":
                key, c.weight = ("b", j, t), b0[j][t]
            else:
                i, f = src[1], src[2]
                key, c.weight = ("W", i, j, f, t), W0[(i, j)][f, t]
            assert key not in seen, f"two FANN connections map to {key}"
            seen.add(key)
        assert len(seen) == self.case.n_connections

    # ------------------------------------------------------------------ protocol
    def reset(self):
        """Fresh copy of the never-trained template: initial weights, no RPROP state."""
        if self.ann:
            self.lib.fann_destroy(self.ann)
        self.ann = self.lib.fann_copy(self.template)
        if not self.ann:
            raise RuntimeError("fann_copy failed")

    def run(self, epochs):
        train_epoch, ann, data = self.lib.fann_train_epoch, self.ann, self.train
        for _ in range(epochs):
            train_epoch(ann, data)

    def outputs(self):
        ann, run = self.ann, self.lib.fann_run
        N, n_out = self.T.shape
        row = self.X.strides[0]
        base = self.X.ctypes.data
        ptr_t = ctypes.POINTER(self.ftype)
        Y = np.empty((N, n_out), np.float64)
        for n in range(N):
            out = run(ann, ctypes.cast(base + n * row, ptr_t))
            Y[n] = out[:n_out]
        return Y

    def sse(self):
        d = self.outputs() - self.case.T
        return float(np.einsum("ij,ij->", d, d))

    def close(self):
        if self.ann:
            self.lib.fann_destroy(self.ann)
            self.ann = None
        if self.template:
            self.lib.fann_destroy(self.template)
            self.template = None
        if self.train:
            self.lib.fann_destroy_train(self.train)
            self.train = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
