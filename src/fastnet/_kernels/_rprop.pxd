# RPROP step for other Cython extensions:
#     from fastnet._kernels._rprop cimport rprop_update, RPROP_PLUS, IRPROP_MINUS
# Variant codes, from the rules' table (_rules.h, through its instance _rule.h):
cdef extern from "_rule.h":
    enum:
        RPROP_PLUS "FN_RPROP_PLUS"
        RPROP_MINUS "FN_RPROP_MINUS"
        IRPROP_MINUS "FN_IRPROP_MINUS"
        IRPROP_PLUS "FN_IRPROP_PLUS"

from fastnet._kernels._types cimport real_t

# (over either value type, real_t: double or float; the parameters are taken to
# it once per call)
cdef void rprop_update(int variant, Py_ssize_t n, real_t* w, real_t* g,
                       real_t* g_prev, real_t* dw_prev, real_t* step,
                       double eta_plus, double eta_minus, double step_min,
                       double step_max, bint error_rose) noexcept nogil

# Hamey's success check at the current weights (forward pass over A), for the
# other epoch loops (_per_weight.pyx).
cdef bint network_correct(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                          const real_t[::1] w, real_t[:, ::1] A, const real_t[:, ::1] T,
                          Py_ssize_t block, Py_ssize_t blas_min, double r_c,
                          double analog) noexcept nogil
