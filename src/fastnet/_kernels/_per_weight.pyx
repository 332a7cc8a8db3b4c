"""The epochs of every per-weight rule on one network: one loop (RPROP, batch
backpropagation, and every other rule of the rules' table, _rules.h).

Each epoch: the forward and backward passes by the shared kernel pieces, over
the whole training set or, given a presentation order, over its mini-batches;
then the rule's step of every weight (fn_rule_update_1 of _rule.h, the scalar
instance of _rules.h: the rule switched once per update, each rule its own
loop); Hamey's success check between epochs; all without the GIL and without a
return to Python per epoch. Online backpropagation (an update per example, the
rule fixed) keeps its own loop in _backprop.pyx.

Written once over the value type (real_t: double, float): the weights, the
gradient, the rule's per-weight arrays and the data are all of one type, the
rule's step is _rule.h's instance of it (fn_rule_update_1, fn_rule_update_1_f32,
the rule's parameters taken to the type once per call), and the epoch errors are
accumulated in double at both types.
"""
from libc.math cimport isfinite
from libc.string cimport memcpy

from fastnet._kernels._backward cimport (check_objective, epoch_objective, net_objective,
                                        net_objective_of)
from fastnet._kernels._forward cimport check_buffers, check_dtypes, check_order, value_bits
from fastnet._kernels._rprop cimport network_correct
from fastnet._kernels._rules cimport Rule, fn_rule
from fastnet._kernels._types cimport fn_ftz_begin, fn_ftz_end, real_t

cdef extern from "_rule.h" nogil:
    ctypedef struct fn_ctx_1:
        pass
    ctypedef struct fn_ctx_1_f32:
        pass
    void fn_ctx_init_1(fn_ctx_1* c, const fn_rule* r)
    void fn_ctx_init_1_f32(fn_ctx_1_f32* c, const fn_rule* r)
    void fn_rule_begin_1(fn_ctx_1* c, const fn_rule* r, Py_ssize_t t, Py_ssize_t t_max,
                         int rose)
    void fn_rule_begin_1_f32(fn_ctx_1_f32* c, const fn_rule* r, Py_ssize_t t,
                             Py_ssize_t t_max, int rose)
    void fn_rule_update_1(int code, Py_ssize_t n, double* w, const double* g, double* gp,
                          double* st, double* dw, const fn_ctx_1* c)
    void fn_rule_update_1_f32(int code, Py_ssize_t n, float* w, const float* g, float* gp,
                              float* st, float* dw, const fn_ctx_1_f32* c)


cdef union ctx_1:
    # The step context of the rule at either value type (_rule.h's fn_ctx_1 of each).
    fn_ctx_1 d
    fn_ctx_1_f32 f


cdef inline void ctx_init(ctx_1* c, const fn_rule* r, const real_t* like) noexcept nogil:
    """The context of rule r at the value type of `like` (not read)."""
    if real_t is double:
        fn_ctx_init_1(&c.d, r)
    else:
        fn_ctx_init_1_f32(&c.f, r)


cdef inline void update(const fn_rule* r, ctx_1* c, Py_ssize_t n_w, real_t* w, const real_t* g,
                        real_t* gp, real_t* st, real_t* dw, Py_ssize_t* t,
                        Py_ssize_t t_max, bint rose) noexcept nogil:
    """Update t[0] + 1 of every weight by rule r (t counts the updates so far and
    is advanced), with the values of that update (fn_rule_begin_1) and whether the
    error rose (irprop+)."""
    if real_t is double:
        fn_rule_begin_1(&c.d, r, t[0], t_max, rose)
        fn_rule_update_1(r.code, n_w, w, g, gp, st, dw, &c.d)
    else:
        fn_rule_begin_1_f32(&c.f, r, t[0], t_max, rose)
        fn_rule_update_1_f32(r.code, n_w, w, g, gp, st, dw, &c.f)
    t[0] += 1


cdef real_t* kept(Rule rule, str array, real_t[::1] a, Py_ssize_t n_w) except? NULL:
    """The data of a rule's per-weight array: n_w values if the rule keeps it
    (rule.states), else NULL (the rule's step does not touch it)."""
    if array not in rule.states:
        return NULL
    if a.shape[0] != n_w:
        raise ValueError(f"kernel: the rule {rule.name}'s {array} must hold one value per weight")
    return &a[0]


def rule_step(Rule rule, w, g, g_prev, step, dw_prev, Py_ssize_t[::1] t, Py_ssize_t t_max=1,
              bint error_rose=False):
    """Python twin of a rule's update for tests: update t[0] + 1 of every weight.

    ``w``, ``g``: float64 or float32, and ``g_prev``, ``step``, ``dw_prev`` of their
    dtype: the arrays the rule keeps (``rule.states``; the others may be empty);
    ``t`` has length 1 (advanced); ``error_rose``: the epoch error rose (irprop+).
    """
    cdef int bits = value_bits(w, "w")
    check_dtypes(bits, (g, g_prev, step, dw_prev), "g g_prev step dw_prev")
    if bits == 32:
        return rule_step_t[float](rule, w, g, g_prev, step, dw_prev, t, t_max, error_rose)
    return rule_step_t[double](rule, w, g, g_prev, step, dw_prev, t, t_max, error_rose)


cdef object rule_step_t(Rule rule, real_t[::1] w, const real_t[::1] g, real_t[::1] g_prev,
                        real_t[::1] step, real_t[::1] dw_prev, Py_ssize_t[::1] t,
                        Py_ssize_t t_max, bint error_rose):
    """`rule_step` at one value type."""
    cdef Py_ssize_t n = w.shape[0]
    if g.shape[0] != n or t.shape[0] != 1 or t[0] < 0 or t_max < 1:
        raise ValueError("kernel: rule vectors differ in length, or t is not one count >= 0")
    cdef real_t* gp = kept(rule, "g_prev", g_prev, n)
    cdef real_t* st = kept(rule, "step", step, n)
    cdef real_t* dw = kept(rule, "dw_prev", dw_prev, n)
    cdef ctx_1 c
    ctx_init(&c, &rule.c, &w[0] if n else NULL)
    if n:
        with nogil:
            update(&rule.c, &c, n, &w[0], &g[0], gp, st, dw, &t[0], t_max, error_rose)


cdef int check_common(real_t[:, ::1] A, const real_t[:, ::1] T,
                      const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, real_t[::1] w,
                      real_t[::1] g, real_t[:, ::1] D, real_t[:, ::1] Dl, Py_ssize_t check_every,
                      double r_c, Py_ssize_t check_block) except -1:
    """The memory-safety gate of the epoch loop beyond the rule's arrays."""
    cdef Py_ssize_t n_w = w.shape[0]
    check_buffers(layers, n_in, A.shape[0], A.shape[1], n_w, T.shape[0], T.shape[1],
                  D.shape[0], D.shape[1])
    if g.shape[0] != n_w or Dl.shape[0] != D.shape[0] or Dl.shape[1] != D.shape[1] \
            or A.shape[0] < 1:
        raise ValueError("kernel: gradient or workspace does not match the network")
    if check_every > 0 and (check_block < 1 or not 0.0 < r_c <= 0.5):
        raise ValueError("kernel: success check needs check_block >= 1 and r_c in (0, 0.5]")
    return 0


cdef int check_batches(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, Py_ssize_t n,
                       Py_ssize_t n_w, real_t[:, ::1] B, real_t[:, ::1] TB, real_t[:, ::1] D,
                       const Py_ssize_t[:, ::1] order, Py_ssize_t n_epochs) except -1:
    """The gate of mini-batch training: the batch buffers and the presentation order."""
    check_buffers(layers, n_in, B.shape[0], B.shape[1], n_w, TB.shape[0], TB.shape[1],
                  D.shape[0], D.shape[1])
    return check_order(order, n_epochs, n)


cdef inline double whole_set(const net_objective* o, real_t[:, ::1] A,
                             const real_t[:, ::1] T, const real_t[::1] w, real_t[::1] g,
                             real_t[:, ::1] D, real_t[:, ::1] Dl) noexcept nogil:
    """g = dE/dw over the whole training set; E (the SSE, or the objective ``o.loss``
    plus ``o.decay`` * sum w**2)."""
    return epoch_objective(o, &A[0, 0], A.shape[0], A.shape[1], &T[0, 0], T.shape[1], &w[0],
                           &g[0], w.shape[0], &D[0, 0], &Dl[0, 0], D.shape[1])


cdef inline bint check_holds(Py_ssize_t e, Py_ssize_t every, const Py_ssize_t[:, ::1] layers,
                             Py_ssize_t n_in, const real_t[::1] w, real_t[:, ::1] A,
                             const real_t[:, ::1] T, Py_ssize_t block, Py_ssize_t blas_min,
                             double r_c, double analog) noexcept nogil:
    """Hamey's success check after epoch e (0-based), if it is due (every > 0)."""
    return (every > 0 and (e + 1) % every == 0
            and network_correct(layers, n_in, w, A, T, block, blas_min, r_c, analog))


cdef double batch_gradient(const net_objective* o, const real_t[:, ::1] A,
                           const real_t[:, ::1] T, const Py_ssize_t* rows, Py_ssize_t nb,
                           real_t[:, ::1] B, real_t[:, ::1] TB, const real_t[::1] w,
                           real_t[::1] g, real_t[:, ::1] D, real_t[:, ::1] Dl) noexcept nogil:
    """g = dE/dw over the nb training rows ``rows`` (gathered into B, TB); their E
    (the SSE, or the objective ``o.loss`` plus ``o.decay`` * sum w**2, the decay
    given already scaled to the batch)."""
    cdef Py_ssize_t r, n_in = o.n_in, n_out = T.shape[1]
    for r in range(nb):
        memcpy(&B[r, 0], &A[rows[r], 0], n_in * sizeof(real_t))
        memcpy(&TB[r, 0], &T[rows[r], 0], n_out * sizeof(real_t))
    return epoch_objective(o, &B[0, 0], nb, B.shape[1], &TB[0, 0], n_out, &w[0], &g[0],
                           w.shape[0], &D[0, 0], &Dl[0, 0], D.shape[1])


def train_epochs(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, g, g_prev, step,
                 dw_prev, D, Dl, Rule rule, Py_ssize_t[::1] t, Py_ssize_t t_max,
                 double[::1] last_error, const Py_ssize_t[:, ::1] order, B, TB,
                 double[::1] sse_out, Py_ssize_t blas_min, Py_ssize_t check_every=0,
                 double r_c=0.4, double analog=-1.0, Py_ssize_t check_block=0,
                 int loss=0, double weight_decay=0.0):
    """Run len(sse_out) epochs of a per-weight rule in one call.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 or float32 with the training inputs
        filled in (rows may be padded past the units; the padding is not read);
        every other real-valued array but last_error and sse_out (float64 at both
        value types) is of A's dtype (TypeError otherwise).
    T : (n_patterns, n_out) targets.
    layers, n_in : layer table and input count.
    w, g : the weights (trained in place) and the gradient workspace.
    g_prev, step, dw_prev : the rule's per-weight arrays (read and updated in
        place): those it keeps (``rule.states``) of length n_weights, the others
        of any length (not read).
    D, Dl : (block, n_units - n_in) workspaces (their row count is the block size).
    rule : fastnet._kernels._rules.Rule, the rule's record.
    t : length 1, the updates made so far (advanced): a decaying rate's epoch
        and Adam's bias corrections (fn_rule_epoch_value); t_max: the decay's
        horizon.
    last_error : length 1, the error of the previous update (inf at the start):
        irprop+ compares against it. Updated in place.
    order : (n_epochs, n_patterns) presentation order of mini-batch training,
        or shape (0, 0): one update per epoch on the whole set.
    B, TB : mini-batch buffers, (batch, lda >= n_units) and (batch, n_out); the
        epoch's rows are cut into consecutive batches of B.shape[0] rows (the
        last one shorter). Unused (any shape with one row) without ``order``.
    sse_out : output, per-epoch error: at the weights the epoch starts from;
        with mini-batches summed over the batches, each measured before its update.
    blas_min : BLAS threshold on m*n*k.
    check_every : if > 0, after every check_every-th epoch (counted from the
        start of this call) run Hamey's success check (network_correct, forward
        blocks of check_block rows) and stop as soon as it holds: the Correct
        criterion without a return to Python per strip.
    r_c, analog : thresholds of the check (analog < 0: no analog targets).
    loss, weight_decay : the objective (see _backward.gradient); sse_out and
        last_error then hold it. A mini-batch of nb rows carries
        weight_decay * nb / n_patterns of the decay, so that an epoch's batches
        sum to the whole objective.

    Returns
    -------
    status : int. 0 if all epochs ran (and no check held); k > 0 if epoch k
        (1-based) gave a non-finite error (its weights are left un-updated);
        -k if the check held after epoch k (k epochs ran).
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w, g, g_prev, step, dw_prev, D, Dl, B, TB),
                 "T w g g_prev step dw_prev D Dl B TB")
    if bits == 32:
        return train_epochs_t[float](A, T, layers, n_in, w, g, g_prev, step, dw_prev, D, Dl,
                                     rule, t, t_max, last_error, order, B, TB, sse_out,
                                     blas_min, check_every, r_c, analog, check_block, loss,
                                     weight_decay)
    return train_epochs_t[double](A, T, layers, n_in, w, g, g_prev, step, dw_prev, D, Dl, rule,
                                  t, t_max, last_error, order, B, TB, sse_out, blas_min,
                                  check_every, r_c, analog, check_block, loss, weight_decay)


cdef int train_epochs_t(real_t[:, ::1] A, const real_t[:, ::1] T,
                        const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                        real_t[::1] w, real_t[::1] g, real_t[::1] g_prev, real_t[::1] step,
                        real_t[::1] dw_prev, real_t[:, ::1] D, real_t[:, ::1] Dl, Rule rule,
                        Py_ssize_t[::1] t, Py_ssize_t t_max, double[::1] last_error,
                        const Py_ssize_t[:, ::1] order, real_t[:, ::1] B, real_t[:, ::1] TB,
                        double[::1] sse_out, Py_ssize_t blas_min, Py_ssize_t check_every,
                        double r_c, double analog, Py_ssize_t check_block,
                        int loss, double weight_decay) except? -1:
    """`train_epochs` at one value type."""
    cdef Py_ssize_t e, p, nb, n = A.shape[0], n_w = w.shape[0], bs = B.shape[0]
    cdef bint batches = order.shape[0] > 0
    cdef double sse, part
    cdef int status = 0
    check_common(A, T, layers, n_in, w, g, D, Dl, check_every, r_c, check_block)
    check_objective(layers, loss, weight_decay)
    cdef real_t* gp = kept(rule, "g_prev", g_prev, n_w)
    cdef real_t* st = kept(rule, "step", step, n_w)
    cdef real_t* dw = kept(rule, "dw_prev", dw_prev, n_w)
    if t.shape[0] != 1 or t[0] < 0 or t_max < 1 or last_error.shape[0] != 1:
        raise ValueError("kernel: t and last_error must have length 1, t >= 0 and t_max >= 1")
    if batches:
        check_batches(layers, n_in, n, n_w, B, TB, D, order, sse_out.shape[0])
    cdef const fn_rule* r = &rule.c
    cdef ctx_1 c
    ctx_init(&c, r, &w[0])
    cdef net_objective whole = net_objective_of(layers, n_in, D.shape[0], blas_min, loss,
                                                weight_decay)
    cdef net_objective batch = whole
    cdef unsigned long mode
    with nogil:
        mode = fn_ftz_begin(real_t is float)
        for e in range(sse_out.shape[0]):
            if not batches:
                sse = whole_set(&whole, A, T, w, g, D, Dl)
                if isfinite(sse):
                    update(r, &c, n_w, &w[0], &g[0], gp, st, dw, &t[0], t_max,
                           sse > last_error[0])
                    last_error[0] = sse
            else:
                sse = 0.0
                p = 0
                while p < n:
                    nb = bs if bs < n - p else n - p
                    batch.decay = weight_decay * nb / n
                    part = batch_gradient(&batch, A, T, &order[e, p], nb, B, TB, w, g, D, Dl)
                    sse += part
                    if not isfinite(part):
                        break
                    update(r, &c, n_w, &w[0], &g[0], gp, st, dw, &t[0], t_max,
                           part > last_error[0])
                    last_error[0] = part
                    p += nb
            sse_out[e] = sse
            if not isfinite(sse):
                status = <int>(e + 1)
                break
            if check_holds(e, check_every, layers, n_in, w, A, T, check_block, blas_min, r_c,
                           analog):
                status = -<int>(e + 1)
                break
        fn_ftz_end(mode)
    return status
