"""Many trials of one topology at once, side by side in vector lanes (see _trials.h).

The body (_trials_body.pxi) is written once over the value type real_t: this module is
its float64 instance (LANES = 8 trials per group), _trials32 its float32 one (16), the
same sources compiled again for float (_lanes.h). Every entry here takes float32 arrays
as well and hands the call to _trials32 (one dtype test of the array that decides:
``DECIDES``); the lanes' errors (sse_out, last_error, a queue's records) are float64 at
both types, everything else of a call has the dtype of its weights.
"""
import inspect
import types

from fastnet._kernels import _trials32

ctypedef double real_t
DTYPE = "float64"

include "_trials_body.pxi"

#: Trials per group of each value type (the lanes of one 64-byte vector).
LANES_OF = {"float64": FN_TL, "float32": _trials32.LANES}

#: The entries that take arrays of either dtype, and the argument (position, name)
#: whose dtype decides which instance runs the call.
DECIDES = {
    "gather_rows": (1, "out"), "scatter_rows": (0, "rows"), "trials_sse": (2, "X"),
    "trials_gradient": (2, "X"), "trials_outputs": (2, "X"), "trials_train": (2, "X"),
    "trials_queue": (2, "X"), "trials_rprop": (2, "X"), "rule_step": (1, "w"),
    "lanes_rule_step": (1, "w"), "check_lanes": (0, "Y"), "trials_online": (2, "X"),
}
# the arrays that are float64 at both types (the lanes' errors)
_ERRORS = frozenset(("sse_out", "last_error", "first", "top", "low", "history"))


cdef inline bint _is_f32(object a):
    dt = getattr(a, "dtype", None)
    return dt is not None and dt.char == "f"


def _mismatch(str entry, str decider, object names, tuple args, dict kw, str want):
    """The TypeError of a call whose real-valued arrays are not all of one dtype, or None."""
    given = dict(zip(names, args))
    given.update(kw)
    for name, a in given.items():
        if name in _ERRORS or name == decider:
            continue
        dt = getattr(a, "dtype", None)
        if dt is not None and dt.char in "fd" and dt.name != want:
            return TypeError(f"kernel: `{name}` must be {want} as `{decider}` is (all the "
                             f"real-valued arrays of one {entry} call share a dtype; the "
                             f"errors are float64), got {dt.name}")
    return None


def _dispatching(str entry, f64, f32, Py_ssize_t at, str decider):
    """The entry `entry`: f32 for float32 arrays at argument `at`, else f64."""
    try:
        names = tuple(inspect.signature(f64).parameters)
    except (TypeError, ValueError):
        names = ()

    def call(*args, **kw):
        a = args[at] if len(args) > at else kw.get(decider)
        f32_call = _is_f32(a)
        try:
            return (f32 if f32_call else f64)(*args, **kw)
        except ValueError as e:
            if not str(e).startswith("Buffer dtype mismatch"):
                raise
            err = _mismatch(entry, decider, names, args, kw, "float32" if f32_call else "float64")
            if err is None:
                raise
            raise err from None

    call.__name__ = call.__qualname__ = entry
    call.__doc__ = f64.__doc__
    call.__wrapped__ = f64
    return call


def _sized(f64, f32):
    """An entry without arrays with a dtype keyword (float64 unless "float32" or numpy.float32)."""
    def call(*args, dtype="float64", **kw):
        return (f32 if str(dtype) in ("float32", "<class 'numpy.float32'>") else f64)(*args, **kw)

    call.__name__ = call.__qualname__ = f64.__name__
    call.__doc__ = f64.__doc__ + "\n\n    dtype: the weights' dtype (float64 or float32).\n"
    call.__wrapped__ = f64
    return call


#: Each value type's entries as they are, without the dtype test of this module's (about
#: 0.1 us a call): INSTANCES["float32"].trials_train, ... (for a caller that chooses once
#: per run); the float32 instance is the module _trials32 itself.
INSTANCES = {
    "float64": types.SimpleNamespace(
        LANES=FN_TL, BLOCK=FN_TBLOCK, BEYOND=FN_STATUS_BEYOND, DTYPE=DTYPE,
        **{name: globals()[name] for name in (*DECIDES, "work_size", "online_work_size",
                                              "tiny_kernel", "lanes_level", "bitgen_address",
                                              "draw_orders")}),
    "float32": _trials32,
}

for _entry, (_at, _decider) in DECIDES.items():
    globals()[_entry] = _dispatching(_entry, globals()[_entry], getattr(_trials32, _entry), _at,
                                     _decider)
work_size = _sized(work_size, _trials32.work_size)
online_work_size = _sized(online_work_size, _trials32.online_work_size)
tiny_kernel = _sized(tiny_kernel, _trials32.tiny_kernel)
