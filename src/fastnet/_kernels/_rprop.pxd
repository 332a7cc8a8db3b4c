# RPROP step for other Cython extensions:
#     from fastnet._kernels._rprop cimport rprop_update, RPROP_PLUS, IRPROP_MINUS
cdef enum:
    RPROP_PLUS = 0
    RPROP_MINUS = 1
    IRPROP_MINUS = 2
    IRPROP_PLUS = 3

cdef void rprop_update(int variant, Py_ssize_t n, double* w, double* g,
                       double* g_prev, double* dw_prev, double* step,
                       double eta_plus, double eta_minus, double step_min,
                       double step_max, bint error_rose) noexcept nogil
