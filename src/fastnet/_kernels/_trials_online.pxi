# Online backpropagation in the lanes (fn_trials_online, and the queue's online
# form: _trials_online.h, _trials_online_level.h): its scratch, the generators'
# C interfaces and its gates; included by _trials.pyx.

cdef extern from "_trials.h" nogil:
    void fn_trials_online(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                          Py_ssize_t n_units, Py_ssize_t n_w, Py_ssize_t n, const real_t* X,
                          const real_t* T, Py_ssize_t n_out, const fn_trials_state* state,
                          const fn_rule* rule, const fn_trials_epochs* run,
                          int64_t* orders, fn_bitgen* const* bitgens, real_t* work)


cdef int _check_online(fn_rule r, const real_t[::1] work, Py_ssize_t n_units,
                       Py_ssize_t n_w) except -1:
    """The gate of online training (trials_online, trials_queue's online form):
    the rule and the scratch."""
    if r.code != FN_RULE_BACKPROP or r.p[2] not in (0.0, 1.0, 2.0):
        raise ValueError("kernel: online training needs the rule backprop with decay 0, 1 or 2")
    if work.shape[0] < online_work_size(n_units, n_w):
        raise ValueError("kernel: work buffer too small")
    return 0


cdef int _check_orders(Py_ssize_t n_groups, Py_ssize_t n, int64_t[:, ::1] orders,
                       const size_t[::1] bitgens, Py_ssize_t n_bitgens) except -1:
    """The gate of the online orders: one row of n per lane, n_bitgens generators."""
    if orders is None or bitgens is None or bitgens.shape[0] != n_bitgens:
        raise ValueError(f"kernel: online training needs {n_bitgens} generators and orders")
    if orders.shape[0] != n_groups * FN_TL or orders.shape[1] != n:
        raise ValueError("kernel: orders must be (n_groups * LANES, n_patterns)")
    return 0


def online_work_size(Py_ssize_t n_units, Py_ssize_t n_w):
    """Values (of the weights' dtype) of scratch trials_online needs.

    Parameters
    ----------
    n_units, n_w : the network's units (inputs included) and weights.

    Returns
    -------
    size : int, one row each of activations, f'(net) and dE/da, and a copy of
        a group's weights and changes (LANES lanes each).
    """
    return (3 * n_units + 2 * n_w) * FN_TL


def bitgen_address(generator):
    """The address of a generator's C interface, what trials_online and
    draw_orders draw from.

    Parameters
    ----------
    generator : numpy.random.Generator

    Returns
    -------
    address : int, of its bit generator's ``bitgen_t`` (NumPy's C interface,
        ``BitGenerator.capsule``). The caller keeps the generator alive and
        holds its bit generator's lock while a kernel draws.
    """
    return <size_t>PyCapsule_GetPointer(generator.bit_generator.capsule, "BitGenerator")


def draw_orders(generator, int64_t[:, ::1] out):
    """Python twin of the kernels' order draw: each row of ``out`` (n_rows, n)
    becomes ``generator.permutation(n)``, drawn in C in turn (the same numbers
    as NumPy's, the generator advanced as NumPy advances it).

    Returns
    -------
    status : int, 0.
    """
    cdef fn_bitgen* b = <fn_bitgen*><size_t>bitgen_address(generator)
    cdef Py_ssize_t i, n = out.shape[1]
    if out.shape[0] == 0 or n == 0:
        return 0
    with generator.bit_generator.lock:
        with nogil:
            for i in range(out.shape[0]):
                fn_permutation(b, n, &out[i, 0])
    return 0


def trials_online(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[:, ::1] X,
                  const real_t[:, ::1] T, real_t[:, :, ::1] w, real_t[:, :, ::1] dw_prev,
                  int64_t[::1] status, real_t[::1] work, Rule rule, double[:, :] sse_out,
                  int64_t[:, ::1] orders, const size_t[::1] bitgens, double sse_scale=1.0,
                  Py_ssize_t t0=0, Py_ssize_t t_max=1, double w_limit=0.0):
    """Run sse_out.shape[1] epochs of online backpropagation for every lane whose
    status is 0: an update per example, each lane's examples in its own order
    (fn_trials_online in _trials.h).

    Parameters
    ----------
    layers, n_in, X, T : as trials_train.
    w, dw_prev : (n_groups, n_w, LANES) weights and previous changes (momentum),
        read and updated in place (frozen lanes are left unchanged).
    status : (n_groups * LANES,) int64, as trials_train's (k > 0: non-finite
        error in epoch k of this call; BEYOND + k: the lane stopped after k
        epochs at w_limit, its order of epoch k + 1 already drawn, in orders).
    work : scratch of at least online_work_size(n_units, n_w) values (of the weights' dtype).
    rule : Rule("backprop", ...), its decay 0 (constant rate),
        1 (falling linearly per epoch to 0 at t_max) or 2 (per update, to 0 at
        the last of t_max * n updates), as Backprop's decay False, True and
        "update".
    sse_out : (n_groups * LANES, n_epochs), rows contiguous: per lane and epoch
        the sum of the examples' squared errors, each before its own update,
        times sse_scale (only the epochs a lane trained are meaningful).
    orders : (n_groups * LANES, n) int64: each lane's order of its last epoch.
    bitgens : (n_groups * LANES,) the bitgen_address of each lane's generator
        (0 for lanes that do not train), whose locks the caller holds.
    t0, t_max, w_limit : as trials_train.

    Returns
    -------
    top : float, the largest value written to sse_out (NaN not counted), -inf
        if none.
    """
    cdef fn_rule r = rule.c
    cdef Py_ssize_t n_units = _check(layers, n_in, X, T.shape[0], T.shape[1], w, work)
    cdef Py_ssize_t n_groups = w.shape[0], n_w = w.shape[1], n = X.shape[0], k
    _check_online(r, work, n_units, n_w)
    if not _same_shape(dw_prev, w):
        raise ValueError("kernel: the rule's state does not match the weights")
    _check_orders(n_groups, n, orders, bitgens, n_groups * FN_TL)
    for k in range(n_groups * FN_TL):
        if status[k] == 0 and bitgens[k] == 0:
            raise ValueError("kernel: a training lane has no generator")
    if not _strip_runs(n_groups, status, sse_out, t0, t_max):
        return -INFINITY
    cdef fn_trials_state state = fn_trials_state(
        n_groups, &w[0, 0, 0], NULL, NULL, &dw_prev[0, 0, 0], NULL, NULL, &status[0])
    cdef double top = -INFINITY
    cdef fn_trials_epochs run = _strip_epochs(sse_out, 0, sse_scale, 0.4, -1.0, t0, t_max,
                                              w_limit, &top)
    with nogil:
        fn_trials_online(&layers[0, 0], layers.shape[0], n_in, n_units, n_w, n, &X[0, 0],
                         &T[0, 0], T.shape[1], &state, &r, &run, &orders[0, 0],
                         <fn_bitgen* const*>&bitgens[0], &work[0])
    return top
