"""Epoch loops of Quickprop (Fahlman 1988) and Adam (Kingma & Ba 2015) on one network.

Like RPROP's (_rprop.pyx): forward and backward passes by the shared kernel
pieces, then the per-weight rule (_rules.h, its one-weight instance _rule.h), all without the GIL and
without a return to Python per epoch; Hamey's success check between epochs as
in _rprop.pyx.
"""
from libc.math cimport isfinite, pow
from libc.string cimport memcpy

from fastnet._kernels._backward cimport check_objective, epoch_objective
from fastnet._kernels._forward cimport check_buffers
from fastnet._kernels._rprop cimport network_correct

cdef extern from "_rule.h" nogil:
    ctypedef struct Quickprop "fn_quickprop_params":
        double eps, mu, shrink, decay, threshold, momentum
    ctypedef struct Adam "fn_adam_params":
        double rate, beta1, beta2, eps
    void fn_quickprop_1(double* w, const double* g, double* d_prev, double* s_prev,
                        const Quickprop* q)
    void fn_adam_1(double* w, const double* g, double* m, double* v, const Adam* a,
                   const double* c1, const double* c2)


cdef inline void quickprop_update(Py_ssize_t n, double* w, const double* g, double* s_prev,
                                  double* d_prev, const Quickprop* q) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        fn_quickprop_1(&w[i], &g[i], &d_prev[i], &s_prev[i], q)


cdef inline void adam_update(Py_ssize_t n, double* w, const double* g, double* m, double* v,
                             const Adam* a, Py_ssize_t* t) noexcept nogil:
    """Update t + 1 (t counts the updates so far and is advanced)."""
    cdef Py_ssize_t i
    t[0] += 1
    cdef double c1 = 1.0 - pow(a.beta1, <double>t[0])
    cdef double c2 = 1.0 - pow(a.beta2, <double>t[0])
    for i in range(n):
        fn_adam_1(&w[i], &g[i], &m[i], &v[i], a, &c1, &c2)


cdef Quickprop quickprop_params(tuple params) except *:
    cdef Quickprop q
    q.eps, q.mu, q.decay, q.threshold, q.momentum = params
    if not (q.eps > 0.0 and q.mu > 0.0 and q.decay >= 0.0 and q.threshold >= 0.0
            and q.momentum >= 0.0):
        raise ValueError("kernel: Quickprop parameters out of range")
    q.shrink = q.mu / (1.0 + q.mu)
    return q


cdef Adam adam_params(tuple params) except *:
    cdef Adam a
    a.rate, a.beta1, a.beta2, a.eps = params
    if not (a.rate > 0.0 and 0.0 <= a.beta1 < 1.0 and 0.0 <= a.beta2 < 1.0 and a.eps > 0.0):
        raise ValueError("kernel: Adam parameters out of range")
    return a


def quickprop_step(tuple params, double[::1] w, const double[::1] g, double[::1] s_prev,
                   double[::1] d_prev):
    """Python twin of the Quickprop update for tests: one step of every weight.

    ``params`` = (epsilon, mu, decay, threshold, momentum); all vectors of equal length.
    """
    cdef Quickprop q = quickprop_params(params)
    cdef Py_ssize_t n = w.shape[0]
    if g.shape[0] != n or s_prev.shape[0] != n or d_prev.shape[0] != n:
        raise ValueError("kernel: Quickprop vectors differ in length")
    if n:
        with nogil:
            quickprop_update(n, &w[0], &g[0], &s_prev[0], &d_prev[0], &q)


def adam_step(tuple params, double[::1] w, const double[::1] g, double[::1] m, double[::1] v,
              Py_ssize_t[::1] t):
    """Python twin of the Adam update for tests: update t[0] + 1 of every weight.

    ``params`` = (learning_rate, beta1, beta2, epsilon); ``t`` has length 1.
    """
    cdef Adam a = adam_params(params)
    cdef Py_ssize_t n = w.shape[0]
    if g.shape[0] != n or m.shape[0] != n or v.shape[0] != n or t.shape[0] != 1 or t[0] < 0:
        raise ValueError("kernel: Adam vectors differ in length")
    if n:
        with nogil:
            adam_update(n, &w[0], &g[0], &m[0], &v[0], &a, &t[0])


cdef int check_common(double[:, ::1] A, const double[:, ::1] T,
                      const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, double[::1] w,
                      double[::1] g, double[::1] u, double[::1] z, double[:, ::1] D,
                      double[:, ::1] Dl, Py_ssize_t check_every, double r_c,
                      Py_ssize_t check_block) except -1:
    """The memory-safety gate of both epoch loops (u, z: the rule's two state vectors)."""
    cdef Py_ssize_t n_w = w.shape[0]
    check_buffers(layers, n_in, A.shape[0], A.shape[1], n_w, T.shape[0], T.shape[1],
                  D.shape[0], D.shape[1])
    if (g.shape[0] != n_w or u.shape[0] != n_w or z.shape[0] != n_w
            or Dl.shape[0] != D.shape[0] or Dl.shape[1] != D.shape[1] or A.shape[0] < 1):
        raise ValueError("kernel: optimiser state or workspace does not match the network")
    if check_every > 0 and (check_block < 1 or not 0.0 < r_c <= 0.5):
        raise ValueError("kernel: success check needs check_block >= 1 and r_c in (0, 0.5]")
    return 0


cdef inline double whole_set(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                             double[:, ::1] A, const double[:, ::1] T, const double[::1] w,
                             double[::1] g, double[:, ::1] D, double[:, ::1] Dl,
                             Py_ssize_t blas_min, int loss, double weight_decay) noexcept nogil:
    """g = dE/dw over the whole training set; E (the SSE, or the objective `loss`
    plus weight_decay * sum w**2)."""
    return epoch_objective(&layers[0, 0], layers.shape[0], n_in, &A[0, 0], A.shape[0],
                           A.shape[1], &T[0, 0], T.shape[1], &w[0], &g[0], w.shape[0],
                           &D[0, 0], &Dl[0, 0], D.shape[1], D.shape[0], blas_min, loss,
                           weight_decay)


cdef inline bint check_holds(Py_ssize_t e, Py_ssize_t every, const Py_ssize_t[:, ::1] layers,
                             Py_ssize_t n_in, const double[::1] w, double[:, ::1] A,
                             const double[:, ::1] T, Py_ssize_t block, Py_ssize_t blas_min,
                             double r_c, double analog) noexcept nogil:
    """Hamey's success check after epoch e (0-based), if it is due (every > 0)."""
    return (every > 0 and (e + 1) % every == 0
            and network_correct(layers, n_in, w, A, T, block, blas_min, r_c, analog))


def quickprop_epochs(double[:, ::1] A, const double[:, ::1] T,
                     const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                     double[::1] w, double[::1] g, double[::1] s_prev, double[::1] d_prev,
                     double[:, ::1] D, double[:, ::1] Dl, tuple params,
                     double[::1] sse_out, Py_ssize_t blas_min, Py_ssize_t check_every=0,
                     double r_c=0.4, double analog=-1.0, Py_ssize_t check_block=0,
                     int loss=0, double weight_decay=0.0):
    """Run len(sse_out) Quickprop epochs in one call.

    Parameters
    ----------
    A, T, layers, n_in, w, g, D, Dl, blas_min, check_every, r_c, analog, check_block
        As in fastnet._kernels._rprop.train_epochs.
    s_prev, d_prev : the previous step and descent slope of every weight (updated).
    params : (epsilon, mu, decay, threshold, momentum).
    sse_out : output, the SSE of each epoch at the weights it starts from.
    loss, weight_decay : the objective (see _backward.gradient); sse_out then holds it.

    Returns
    -------
    status : int, as fastnet._kernels._rprop.train_epochs's.
    """
    cdef Quickprop q = quickprop_params(params)
    cdef Py_ssize_t e, n_w = w.shape[0]
    cdef double sse
    cdef int status = 0
    check_common(A, T, layers, n_in, w, g, s_prev, d_prev, D, Dl, check_every, r_c, check_block)
    check_objective(layers, loss, weight_decay)
    with nogil:
        for e in range(sse_out.shape[0]):
            sse = whole_set(layers, n_in, A, T, w, g, D, Dl, blas_min, loss, weight_decay)
            sse_out[e] = sse
            if not isfinite(sse):
                status = <int>(e + 1)
                break
            quickprop_update(n_w, &w[0], &g[0], &s_prev[0], &d_prev[0], &q)
            if check_holds(e, check_every, layers, n_in, w, A, T, check_block, blas_min, r_c,
                           analog):
                status = -<int>(e + 1)
                break
    return status


cdef double batch_gradient(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                           const double[:, ::1] A, const double[:, ::1] T,
                           const Py_ssize_t* rows, Py_ssize_t nb,
                           double[:, ::1] B, double[:, ::1] TB, const double[::1] w,
                           double[::1] g, double[:, ::1] D, double[:, ::1] Dl,
                           Py_ssize_t blas_min, int loss, double weight_decay) noexcept nogil:
    """g = dE/dw over the nb training rows ``rows`` (gathered into B, TB); their E
    (the SSE, or the objective `loss` plus weight_decay * sum w**2, the decay given
    already scaled to the batch)."""
    cdef Py_ssize_t r, n_out = T.shape[1]
    for r in range(nb):
        memcpy(&B[r, 0], &A[rows[r], 0], n_in * sizeof(double))
        memcpy(&TB[r, 0], &T[rows[r], 0], n_out * sizeof(double))
    return epoch_objective(&layers[0, 0], layers.shape[0], n_in, &B[0, 0], nb, B.shape[1],
                           &TB[0, 0], n_out, &w[0], &g[0], w.shape[0], &D[0, 0], &Dl[0, 0],
                           D.shape[1], D.shape[0], blas_min, loss, weight_decay)


def adam_epochs(double[:, ::1] A, const double[:, ::1] T,
                const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                double[::1] w, double[::1] g, double[::1] m, double[::1] v,
                Py_ssize_t[::1] t, double[:, ::1] D, double[:, ::1] Dl, tuple params,
                const Py_ssize_t[:, ::1] order, double[:, ::1] B, double[:, ::1] TB,
                double[::1] sse_out, Py_ssize_t blas_min, Py_ssize_t check_every=0,
                double r_c=0.4, double analog=-1.0, Py_ssize_t check_block=0,
                int loss=0, double weight_decay=0.0):
    """Run len(sse_out) Adam epochs in one call.

    Parameters
    ----------
    A, T, layers, n_in, w, g, D, Dl, blas_min, check_every, r_c, analog, check_block
        As in fastnet._kernels._rprop.train_epochs.
    m, v : the moving averages of every weight's gradient and squared gradient (updated).
    t : length 1, the updates made so far (advanced).
    params : (learning_rate, beta1, beta2, epsilon).
    order : (n_epochs, n_patterns) presentation order of mini-batch training, or
        shape (0, 0) for one update per epoch on the whole set.
    B, TB : mini-batch buffers, (batch, lda >= n_units) and (batch, n_out); the
        epoch's rows are cut into consecutive batches of B.shape[0] rows (the last
        one shorter). Unused (any shape with one row) without ``order``.
    sse_out : output, per-epoch SSE: at the weights the epoch starts from; with
        mini-batches summed over the batches, each measured before its update.
    loss, weight_decay : the objective (see _backward.gradient); sse_out then holds
        it. A mini-batch of nb rows carries weight_decay * nb / n_patterns of the
        decay, so that an epoch's batches sum to the whole objective.

    Returns
    -------
    status : int, as fastnet._kernels._rprop.train_epochs's.
    """
    cdef Adam a = adam_params(params)
    cdef Py_ssize_t e, p, nb, n = A.shape[0], n_w = w.shape[0], bs = B.shape[0]
    cdef bint batches = order.shape[0] > 0
    cdef double sse, part
    cdef int status = 0
    check_common(A, T, layers, n_in, w, g, m, v, D, Dl, check_every, r_c, check_block)
    check_objective(layers, loss, weight_decay)
    if t.shape[0] != 1 or t[0] < 0:
        raise ValueError("kernel: Adam's update count must have length 1 and be >= 0")
    if batches:
        check_buffers(layers, n_in, bs, B.shape[1], n_w, TB.shape[0], TB.shape[1],
                      D.shape[0], D.shape[1])
        if order.shape[0] < sse_out.shape[0] or order.shape[1] != n:
            raise ValueError("kernel: presentation order has the wrong shape")
        for e in range(sse_out.shape[0]):
            for p in range(n):
                if order[e, p] < 0 or order[e, p] >= n:
                    raise ValueError("kernel: presentation order out of range")
    with nogil:
        for e in range(sse_out.shape[0]):
            if not batches:
                sse = whole_set(layers, n_in, A, T, w, g, D, Dl, blas_min, loss, weight_decay)
                if isfinite(sse):
                    adam_update(n_w, &w[0], &g[0], &m[0], &v[0], &a, &t[0])
            else:
                sse = 0.0
                p = 0
                while p < n:
                    nb = bs if bs < n - p else n - p
                    part = batch_gradient(layers, n_in, A, T, &order[e, p], nb, B, TB, w, g,
                                          D, Dl, blas_min, loss, weight_decay * nb / n)
                    sse += part
                    if not isfinite(part):
                        break
                    adam_update(n_w, &w[0], &g[0], &m[0], &v[0], &a, &t[0])
                    p += nb
            sse_out[e] = sse
            if not isfinite(sse):
                status = <int>(e + 1)
                break
            if check_holds(e, check_every, layers, n_in, w, A, T, check_block, blas_min, r_c,
                           analog):
                status = -<int>(e + 1)
                break
    return status
