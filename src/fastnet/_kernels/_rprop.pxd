# RPROP step for other Cython extensions:
#     from fastnet._kernels._rprop cimport rprop_update, RPROP_PLUS, IRPROP_MINUS
# Variant codes, written once in _constants.h:
cdef extern from "_constants.h":
    enum:
        RPROP_PLUS "FN_RPROP_PLUS"
        RPROP_MINUS "FN_RPROP_MINUS"
        IRPROP_MINUS "FN_IRPROP_MINUS"
        IRPROP_PLUS "FN_IRPROP_PLUS"

cdef void rprop_update(int variant, Py_ssize_t n, double* w, double* g,
                       double* g_prev, double* dw_prev, double* step,
                       double eta_plus, double eta_minus, double step_min,
                       double step_max, bint error_rose) noexcept nogil
