"""Epoch-batched RPROP (Riedmiller & Braun 1993; variants after Igel & Hüsken 2000)."""
from libc.math cimport isfinite

from fastnet._kernels._backward cimport check_objective, epoch_objective
from fastnet._kernels._forward cimport check_buffers, forward_blocks
from fastnet._kernels._types cimport L_START, LOSS_SSE

# Variant codes RPROP_PLUS .. IRPROP_PLUS are declared in _rprop.pxd, from
# _constants.h (fastnet.rprop.VARIANTS maps names to them). The rule and the
# success check are written once, in C, in _rules.h; _rule.h is their instance
# for one value (the lanes' for many trials at once are in _lanes.h).
cdef extern from "_rule.h" nogil:
    ctypedef struct fn_rprop_steps:
        double eta_plus, eta_minus, step_min, step_max
    void fn_rprop_1(int variant, double* w, const double* g, double* g_prev, double* step,
                    double* dw_prev, const int* rose, const fn_rprop_steps* k)
    void fn_correct_1(int* ok, const double* y, double t, double r_c, double analog)


cdef void rprop_update(int variant, Py_ssize_t n, double* w, double* g,
                       double* g_prev, double* dw_prev, double* step,
                       double eta_plus, double eta_minus, double step_min,
                       double step_max, bint error_rose) noexcept nogil:
    """One RPROP step of every weight, given the epoch gradient g (Riedmiller & Braun 1993;
    Igel & Hüsken 2000): fn_rprop_1 of _rule.h for each."""
    cdef Py_ssize_t i
    cdef int rose = error_rose
    cdef fn_rprop_steps k
    k.eta_plus, k.eta_minus, k.step_min, k.step_max = eta_plus, eta_minus, step_min, step_max
    for i in range(n):
        fn_rprop_1(variant, &w[i], &g[i], &g_prev[i], &step[i], &dw_prev[i], &rose, &k)


def rprop_step(int variant, double[::1] w, double[::1] g, double[::1] g_prev,
               double[::1] dw_prev, double[::1] step, double eta_plus,
               double eta_minus, double step_min, double step_max,
               bint error_rose):
    """Python twin of the RPROP update for tests (all vectors of equal length).

    Returns
    -------
    status : int, 0.
    """
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
                          const double[::1] w, double[:, ::1] A, const double[:, ::1] T,
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
            fn_correct_1(&ok, &A[r, out0 + k], T[r, k], r_c, analog)
            if not ok:
                return False
    return True


def train_epochs(double[:, ::1] A, const double[:, ::1] T,
                 const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                 double[::1] w, double[::1] g, double[::1] g_prev,
                 double[::1] dw_prev, double[::1] step,
                 double[:, ::1] D, double[:, ::1] Dl,
                 int variant, double eta_plus, double eta_minus,
                 double step_min, double step_max,
                 double[::1] last_error, double[::1] sse_out,
                 Py_ssize_t blas_min, Py_ssize_t check_every=0, double r_c=0.4,
                 double analog=-1.0, Py_ssize_t check_block=0, int loss=LOSS_SSE,
                 double decay=0.0):
    """Run len(sse_out) RPROP epochs in one call.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 with the training inputs filled in
        (rows may be padded past the units; the padding is not read).
    T : (n_patterns, n_out) float64 targets.
    layers, n_in : layer table and input count.
    w, g, g_prev, dw_prev, step : flat vectors of length n_weights; the optimiser
        state is read and updated in place.
    D, Dl : (block, n_units - n_in) workspaces (their row count is the block size).
    variant : 0 rprop+, 1 rprop-, 2 irprop-, 3 irprop+.
    eta_plus, eta_minus, step_min, step_max : RPROP parameters.
    last_error : length-1 array, the SSE of the previous epoch (inf at the
        start); irprop+ compares against it. Updated in place.
    sse_out : output, the SSE of each epoch measured in its forward pass
        (before its update).
    blas_min : BLAS threshold on m*n*k.
    check_every : if > 0, after every check_every-th update (counted from the
        start of this call) run Hamey's success check (network_correct, forward
        blocks of check_block rows) and stop as soon as it holds: the Correct
        criterion without a return to Python per strip.
    r_c, analog : thresholds of the check (analog < 0: no analog targets).
    loss, decay : the objective (see _backward.gradient); last_error and sse_out
        then hold it instead of the SSE.

    Returns
    -------
    status : int. 0 if all epochs ran (and no check held); k > 0 if epoch k
        (1-based) gave a non-finite error (its weights are left un-updated);
        -k if the check held after epoch k (k epochs ran).
    """
    cdef Py_ssize_t e, n_epochs = sse_out.shape[0]
    cdef double sse
    cdef int status = 0
    cdef Py_ssize_t n_w = w.shape[0]
    check_buffers(layers, n_in, A.shape[0], A.shape[1], n_w, T.shape[0], T.shape[1],
                  D.shape[0], D.shape[1])
    if (g.shape[0] != n_w or g_prev.shape[0] != n_w or dw_prev.shape[0] != n_w
            or step.shape[0] != n_w or Dl.shape[0] != D.shape[0] or Dl.shape[1] != D.shape[1]
            or last_error.shape[0] != 1 or A.shape[0] < 1):
        raise ValueError("kernel: optimiser state or workspace does not match the network")
    if variant < 0 or variant > 3:
        raise ValueError("kernel: unknown RPROP variant")
    if check_every > 0 and (check_block < 1 or not 0.0 < r_c <= 0.5):
        raise ValueError("kernel: success check needs check_block >= 1 and r_c in (0, 0.5]")
    check_objective(layers, loss, decay)
    with nogil:
        for e in range(n_epochs):
            sse = epoch_objective(&layers[0, 0], layers.shape[0], n_in, &A[0, 0],
                                  A.shape[0], A.shape[1], &T[0, 0], T.shape[1],
                                  &w[0], &g[0], g.shape[0], &D[0, 0], &Dl[0, 0],
                                  D.shape[1], D.shape[0], blas_min, loss, decay)
            sse_out[e] = sse
            if not isfinite(sse):
                status = <int>(e + 1)
                break
            rprop_update(variant, w.shape[0], &w[0], &g[0], &g_prev[0],
                         &dw_prev[0], &step[0], eta_plus, eta_minus, step_min,
                         step_max, sse > last_error[0])
            last_error[0] = sse
            if (check_every > 0 and (e + 1) % check_every == 0
                    and network_correct(layers, n_in, w, A, T, check_block, blas_min, r_c,
                                        analog)):
                status = -<int>(e + 1)
                break
    return status
