"""Online backpropagation with momentum (an update per example) on one network.

Written once over the value type (real_t: double, float; _rule.h's fn_backprop_1
and fn_backprop_1_f32), the epoch errors accumulated in double at both.
"""
from libc.math cimport isfinite
from libc.string cimport memset

from fastnet._kernels._backward cimport (
    add_weight_decay, backward_rows, check_objective, output_objective,
)
from fastnet._kernels._types cimport fn_ftz_begin, fn_ftz_end, real_t, L_ACT, LOSS_SSE
from fastnet._kernels._forward cimport (
    check_buffers, check_dtypes, check_order, forward_rows, value_bits,
)

# The rule is written once, in C, in _rules.h (_rule.h: its one-weight instance).
cdef extern from "_rule.h" nogil:
    void fn_backprop_1(double* w, const double* g, double* dw_prev, const double* rate,
                       double momentum)
    void fn_backprop_1_f32(float* w, const float* g, float* dw_prev, const float* rate,
                           double momentum)


cdef inline void momentum_update(Py_ssize_t n, real_t* w, const real_t* g,
                                 real_t* dw_prev, double rate,
                                 double momentum) noexcept nogil:
    """One step of batch backpropagation with momentum of every weight (fn_backprop_1;
    the rate taken to the value type once)."""
    cdef Py_ssize_t i
    cdef real_t r = <real_t>rate
    for i in range(n):
        if real_t is double:
            fn_backprop_1(&w[i], &g[i], &dw_prev[i], &r, momentum)
        else:
            fn_backprop_1_f32(&w[i], &g[i], &dw_prev[i], &r, momentum)


def online_epochs(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, g, dw_prev, D,
                  Dl, const double[::1] rates, double momentum,
                  const Py_ssize_t[:, ::1] order, double[::1] sse_out,
                  Py_ssize_t blas_min, int loss=LOSS_SSE, double decay=0.0,
                  bint rate_per_update=False):
    """Run len(sse_out) epochs of online backpropagation in one call: an update
    per example, in the order of its epoch (the epoch-batched rules run in
    _per_weight.train_epochs).

    Parameters
    ----------
    A, T, layers, n_in : as in fastnet._kernels._per_weight.train_epochs (float64
        or float32; w, g, dw_prev, D, Dl of A's dtype, rates and sse_out float64).
    w, g, dw_prev : weights, gradient workspace and the previous change (momentum).
    D, Dl : (block, n_units - n_in) workspaces.
    rates : learning rate of each epoch (length n_epochs; decay is computed by
        the caller), or with rate_per_update of each update, update p of epoch e
        at rates[e * n_patterns + p] (length n_epochs * n_patterns).
    momentum : momentum factor.
    order : (n_epochs, n_patterns) presentation order.
    sse_out : output, per-epoch SSE summed over the epoch, each example's error
        taken before its own update.
    blas_min : BLAS threshold on m*n*k.
    loss, decay : the objective (see _backward.gradient); sse_out then holds it.
        Each example's objective is its loss plus decay / n_patterns * sum w**2
        (the epoch's terms add up to the batch objective).

    Returns
    -------
    status : int, 0, or the 1-based epoch k with a non-finite error.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w, g, dw_prev, D, Dl), "T w g dw_prev D Dl")
    if bits == 32:
        return online_epochs_t[float](A, T, layers, n_in, w, g, dw_prev, D, Dl, rates,
                                      momentum, order, sse_out, blas_min, loss, decay,
                                      rate_per_update)
    return online_epochs_t[double](A, T, layers, n_in, w, g, dw_prev, D, Dl, rates, momentum,
                                   order, sse_out, blas_min, loss, decay, rate_per_update)


cdef int online_epochs_t(real_t[:, ::1] A, const real_t[:, ::1] T,
                         const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                         real_t[::1] w, real_t[::1] g, real_t[::1] dw_prev,
                         real_t[:, ::1] D, real_t[:, ::1] Dl,
                         const double[::1] rates, double momentum,
                         const Py_ssize_t[:, ::1] order, double[::1] sse_out,
                         Py_ssize_t blas_min, int loss, double decay,
                         bint rate_per_update) except? -1:
    """`online_epochs` at one value type."""
    cdef Py_ssize_t e, p, row, n_epochs = sse_out.shape[0]
    cdef Py_ssize_t n = A.shape[0], lda = A.shape[1], ldt = T.shape[1]
    cdef Py_ssize_t ldd = D.shape[1], n_w = w.shape[0]
    cdef double sse
    cdef int status = 0
    cdef int act = <int>layers[layers.shape[0] - 1, L_ACT]
    check_buffers(layers, n_in, n, lda, n_w, T.shape[0], T.shape[1], D.shape[0], D.shape[1])
    if (g.shape[0] != n_w or dw_prev.shape[0] != n_w or Dl.shape[0] != D.shape[0]
            or Dl.shape[1] != D.shape[1] or rates.shape[0] < n_epochs * (n if rate_per_update else 1)
            or n < 1):
        raise ValueError("kernel: optimiser state or workspace does not match the network")
    check_order(order, n_epochs, n)
    check_objective(layers, loss, decay)
    cdef unsigned long mode
    with nogil:
        mode = fn_ftz_begin(real_t is float)
        for e in range(n_epochs):
            sse = 0.0
            for p in range(n):
                row = order[e, p]
                memset(&g[0], 0, n_w * sizeof(real_t))
                forward_rows(&layers[0, 0], layers.shape[0], &w[0], &A[row, 0], lda, &D[0, 0],
                             ldd, n_in, 1, blas_min)
                sse += output_objective(loss, act, &A[row, n_in + ldd - ldt], lda, &T[row, 0],
                                        ldt, &D[0, 0], &Dl[0, 0], ldd, ldt, 1)
                backward_rows(&layers[0, 0], layers.shape[0], &w[0], &A[row, 0], lda, &D[0, 0],
                              &Dl[0, 0], ldd, n_in, 1, &g[0], blas_min)
                if decay != 0.0:
                    sse += add_weight_decay(&w[0], &g[0], n_w, decay / n)
                momentum_update(n_w, &w[0], &g[0], &dw_prev[0],
                                rates[e * n + p] if rate_per_update else rates[e], momentum)
            sse_out[e] = sse
            if not isfinite(sse):
                status = <int>(e + 1)
                break
        fn_ftz_end(mode)
    return status
