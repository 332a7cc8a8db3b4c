"""RPROP's step of every weight of one network (Riedmiller & Braun 1993; variants after
Igel & Hüsken 2000), for other Cython extensions (_rprop.pxd), and Hamey's success
check of one network, for the epoch loops (_per_weight.pyx, _backprop.pyx). The
epochs themselves run in _per_weight.pyx's loop, with every per-weight rule.

Both are written once over the value type (real_t: double, float): _rule.h's
instance of the type (fn_rprop_1, fn_rprop_1_f32), RPROP's parameters taken to
it once per call."""
from fastnet._kernels._forward cimport check_dtypes, forward_blocks, value_bits
from fastnet._kernels._types cimport real_t, L_START

# Variant codes RPROP_PLUS .. IRPROP_PLUS are declared in _rprop.pxd, from the
# rules' table (_rules.h; fastnet.rprop.VARIANTS maps names to them). The rule and the
# success check are written once, in C, in _rules.h; _rule.h is their instance
# for one value (the lanes' for many trials at once are in _lanes.h).
cdef extern from "_rule.h" nogil:
    ctypedef struct fn_rprop_steps:
        double eta_plus, eta_minus, step_min, step_max
    ctypedef struct fn_rprop_steps_f32:
        float eta_plus, eta_minus, step_min, step_max
    void fn_rprop_1(int variant, double* w, const double* g, double* g_prev, double* step,
                    double* dw_prev, const int* rose, const fn_rprop_steps* k)
    void fn_rprop_1_f32(int variant, float* w, const float* g, float* g_prev, float* step,
                        float* dw_prev, const int* rose, const fn_rprop_steps_f32* k)
    void fn_correct_1(int* ok, const double* y, double t, double r_c, double analog)
    void fn_correct_1_f32(int* ok, const float* y, double t, double r_c, double analog)


cdef void rprop_update(int variant, Py_ssize_t n, real_t* w, real_t* g,
                       real_t* g_prev, real_t* dw_prev, real_t* step,
                       double eta_plus, double eta_minus, double step_min,
                       double step_max, bint error_rose) noexcept nogil:
    """One RPROP step of every weight, given the epoch gradient g (Riedmiller & Braun 1993;
    Igel & Hüsken 2000): fn_rprop_1 (fn_rprop_1_f32) of _rule.h for each."""
    cdef Py_ssize_t i
    cdef int rose = error_rose
    cdef fn_rprop_steps k
    cdef fn_rprop_steps_f32 kf
    if real_t is double:
        k.eta_plus, k.eta_minus, k.step_min, k.step_max = eta_plus, eta_minus, step_min, step_max
        for i in range(n):
            fn_rprop_1(variant, &w[i], &g[i], &g_prev[i], &step[i], &dw_prev[i], &rose, &k)
    else:
        kf.eta_plus, kf.eta_minus = <float>eta_plus, <float>eta_minus
        kf.step_min, kf.step_max = <float>step_min, <float>step_max
        for i in range(n):
            fn_rprop_1_f32(variant, &w[i], &g[i], &g_prev[i], &step[i], &dw_prev[i], &rose, &kf)


def rprop_step(int variant, w, g, g_prev, dw_prev, step, double eta_plus, double eta_minus,
               double step_min, double step_max, bint error_rose):
    """Python twin of the RPROP update for tests (all vectors of equal length, float64
    or float32, all of w's dtype).

    Returns
    -------
    status : int, 0.
    """
    cdef int bits = value_bits(w, "w")
    check_dtypes(bits, (g, g_prev, dw_prev, step), "g g_prev dw_prev step")
    if bits == 32:
        return rprop_step_t[float](variant, w, g, g_prev, dw_prev, step, eta_plus, eta_minus,
                                   step_min, step_max, error_rose)
    return rprop_step_t[double](variant, w, g, g_prev, dw_prev, step, eta_plus, eta_minus,
                                step_min, step_max, error_rose)


cdef object rprop_step_t(int variant, real_t[::1] w, real_t[::1] g, real_t[::1] g_prev,
                         real_t[::1] dw_prev, real_t[::1] step, double eta_plus,
                         double eta_minus, double step_min, double step_max,
                         bint error_rose):
    """`rprop_step` at one value type."""
    cdef Py_ssize_t n = w.shape[0]
    if g.shape[0] != n or g_prev.shape[0] != n or dw_prev.shape[0] != n or step.shape[0] != n:
        raise ValueError("kernel: RPROP vectors differ in length")
    if variant < 0 or variant > 3:
        raise ValueError("kernel: unknown RPROP variant")
    if n == 0:
        return 0
    with nogil:
        rprop_update(variant, w.shape[0], &w[0], &g[0], &g_prev[0], &dw_prev[0],
                     &step[0], eta_plus, eta_minus, step_min, step_max, error_rose)
    return 0


cdef bint network_correct(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                          const real_t[::1] w, real_t[:, ::1] A, const real_t[:, ::1] T,
                          Py_ssize_t block, Py_ssize_t blas_min, double r_c,
                          double analog) noexcept nogil:
    """Hamey's success check at the current weights: a forward pass over A, then
    every output right by the threshold rule (fn_correct_1 of _rule.h)."""
    cdef Py_ssize_t r, k, n_out = T.shape[1]
    cdef Py_ssize_t out0 = layers[layers.shape[0] - 1, L_START]
    cdef int ok = 1
    forward_blocks(layers, n_in, w, A, NULL, block, blas_min)
    for r in range(A.shape[0]):
        for k in range(n_out):
            if real_t is double:
                fn_correct_1(&ok, &A[r, out0 + k], T[r, k], r_c, analog)
            else:
                fn_correct_1_f32(&ok, &A[r, out0 + k], T[r, k], r_c, analog)
            if not ok:
                return False
    return True
