"""Many trials in float32 lanes: _trials_body.pxi compiled for float (16 trials per
64-byte vector; _lanes.h). _trials takes float32 arrays in each of its entries and
hands them here; this module holds the float32 instance alone."""

cdef extern from *:
    """
    #define FN_LANES_F32 1
    """

ctypedef float real_t
DTYPE = "float32"

include "_trials_body.pxi"
