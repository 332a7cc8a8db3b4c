"""The Jacobian of the outputs with respect to the weights, and the normal equations.

Row (p, k) of the Jacobian, p an example and k an output (row p * n_out + k), is the
gradient of the single output o_pk. It is one backward pass whose output deltas are
the unit vector e_k times f'(net_pk). A block of nb examples runs its nb * n_out
backward passes together: "virtual rows" (p, k) of a delta buffer V of shape
(nb * n_out, units - inputs), sent back through the layers with the same register
tiles / BLAS products as the gradient (one product per layer for the whole block).
Layer j's part of row (p, k) is then an outer product: dO_pk / dW_j[u, s] =
V[(p, k), u] * a_p[s], and dO_pk / db_j[u] = V[(p, k), u].

:func:`normal_equations` forms H = J^T J and J^T e block by block without storing J:
the part of Levenberg-Marquardt's epoch (Hagan & Menhaj 1994) that grows with the
data. By default it forms no Jacobian rows at all: summing an example's n_out backward
passes first (G_p = products of their deltas, see add_block_factored) leaves 1/n_out
of the multiply-adds of J^T J on J's rows (BLAS dsyrk, the other method, kept for
comparison). :func:`solve_damped` then gives the step by LAPACK Cholesky.

The value type (real_t: double, float). The passes (forward, the virtual rows'
backward passes, the Jacobian's rows) run in the network's type; :func:`jacobian`
returns J in it. The normal equations stay in double at both types: H = J^T J and
J^T e are accumulated in double (float32 would square the Jacobian's condition
number at 2^-24, and H's sums run over every example and output), from the float32
rows converted block by block (the factored products from the block's activations
and deltas taken to double; the row products from its rows taken to double), and
the damped system is solved by LAPACK's double Cholesky. Levenberg-Marquardt's
outer step (H, g, L, dw, mu) is therefore double; only the weights and the trial
weights are of the network's type (w + dw rounded to it).
"""
from libc.math cimport isfinite
from libc.string cimport memcpy, memset
from fastnet._kernels._simd cimport (blas_dgemv as dgemv, blas_dsyrk as dsyrk,
                                     lapack_dpotrf as dpotrf, lapack_dpotrs as dpotrs)

from fastnet._kernels._types cimport (
    real_t, L_START, L_SIZE, L_SRC_LO, L_SRC_HI, L_W_OFF, L_B_OFF, L_ACT, L_NCOLS, ACT_SOFTMAX,
    gemm_backprop, gemm_rm, gemm_gradient, fn_loops_deltas_bias,
)
from fastnet._kernels._forward cimport (
    check_buffers, check_dtypes, forward_blocks, forward_rows, value_bits,
)

import numpy as np


cdef void layer_deltas(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t size, real_t* V,
                       Py_ssize_t ldv, const real_t* D, Py_ssize_t ldd) noexcept nogil:
    """V[(p, k), u] *= D[p, u]: dO_pk/da times f'(net) gives the deltas of row (p, k)."""
    cdef Py_ssize_t p, k, u
    cdef real_t* v
    cdef const real_t* d
    for p in range(nb):
        d = D + p * ldd
        for k in range(n_out):
            v = V + (p * n_out + k) * ldv
            for u in range(size):
                v[u] = v[u] * d[u]


cdef void layer_rows(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t size, Py_ssize_t n_src,
                     const real_t* V, Py_ssize_t ldv, const real_t* A, Py_ssize_t lda,
                     real_t* J, Py_ssize_t ldj, Py_ssize_t w_off,
                     Py_ssize_t b_off) noexcept nogil:
    """Layer j's columns of the rows (p, k) of a block: V[(p,k), u] * a_p[s], and V itself
    for the biases (A points at the layer's first source column)."""
    cdef Py_ssize_t p, k, u, s
    cdef const real_t* a
    cdef const real_t* v
    cdef real_t* jr
    cdef real_t* jw
    cdef real_t d
    for p in range(nb):
        a = A + p * lda
        for k in range(n_out):
            v = V + (p * n_out + k) * ldv
            jr = J + (p * n_out + k) * ldj
            for u in range(size):
                d = v[u]
                jw = jr + w_off + u * n_src
                for s in range(n_src):
                    jw[s] = d * a[s]
                jr[b_off + u] = d


cdef void block_rows(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                     const real_t* w, real_t* A, Py_ssize_t lda, real_t* D, real_t* V,
                     Py_ssize_t ldd, Py_ssize_t nb, real_t* J, Py_ssize_t ldj,
                     Py_ssize_t blas_min) noexcept nogil:
    """Rows (p, k) of the Jacobian for nb examples (activation rows A, inputs filled in);
    leaves the outputs in A and the rows' deltas in V (J NULL: the deltas only)."""
    cdef Py_ssize_t j, p, k, c, start, size, lo, hi, src0
    cdef Py_ssize_t n_out = layers[(n_layers - 1) * L_NCOLS + L_SIZE]
    cdef Py_ssize_t c_out = layers[(n_layers - 1) * L_NCOLS + L_START] - n_in
    cdef const Py_ssize_t* lay
    cdef const real_t* y
    cdef real_t* v
    forward_rows(layers, n_layers, w, A, lda, D, ldd, n_in, nb, blas_min)
    # Output deltas of the virtual rows: f'(net_pk) at output k, zero elsewhere;
    # softmax outputs: d o_pk / d net_pi = o_pk ([i = k] - o_pi) at every output i.
    memset(V, 0, nb * n_out * ldd * sizeof(real_t))
    if layers[(n_layers - 1) * L_NCOLS + L_ACT] == ACT_SOFTMAX:
        for p in range(nb):
            y = A + p * lda + n_in + c_out
            for k in range(n_out):
                v = V + (p * n_out + k) * ldd + c_out
                for j in range(n_out):
                    v[j] = -y[k] * y[j]
                v[k] = y[k] * (1.0 - y[k])
    else:
        for p in range(nb):
            for k in range(n_out):
                V[(p * n_out + k) * ldd + c_out + k] = D[p * ldd + c_out + k]
    for j in range(n_layers - 1, -1, -1):
        lay = layers + j * L_NCOLS
        start = lay[L_START]; size = lay[L_SIZE]
        lo = lay[L_SRC_LO]; hi = lay[L_SRC_HI]
        c = start - n_in
        if j < n_layers - 1:
            layer_deltas(nb, n_out, size, V + c, ldd, D + c, ldd)
        if J != NULL:
            layer_rows(nb, n_out, size, hi - lo, V + c, ldd, A + lo, lda, J, ldj,
                       lay[L_W_OFF], lay[L_B_OFF])
        src0 = lo if lo > n_in else n_in
        if hi > src0:
            gemm_backprop(nb * n_out, size, hi - src0, V + c, ldd,
                          w + lay[L_W_OFF] + (src0 - lo), hi - lo,
                          V + (src0 - n_in), ldd, blas_min)


cdef int check_workspaces(const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                          Py_ssize_t n_rows, Py_ssize_t n_units, Py_ssize_t n_w,
                          Py_ssize_t d_rows, Py_ssize_t d_cols, Py_ssize_t v_rows,
                          Py_ssize_t v_cols, Py_ssize_t j_rows, Py_ssize_t j_cols,
                          Py_ssize_t j_need) except -1:
    """The kernels' memory-safety gate (they run with boundscheck off); the Jacobian
    buffer needs at least j_need rows."""
    check_buffers(layers, n_in, n_rows, n_units, n_w, -1, -1, d_rows, d_cols)
    cdef Py_ssize_t n_out = layers[layers.shape[0] - 1, L_SIZE]
    if v_rows != d_rows * n_out or v_cols != d_cols:
        raise ValueError(f"kernel: the delta workspace must be ({d_rows * n_out}, {d_cols}), "
                         f"got ({v_rows}, {v_cols})")
    if j_rows < j_need or j_cols != n_w:
        raise ValueError(f"kernel: the Jacobian buffer must have >= {j_need} rows "
                         f"and {n_w} columns, got ({j_rows}, {j_cols})")
    return 0


def jacobian(A, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, J, D, V,
             Py_ssize_t blas_min):
    """The Jacobian of the outputs with respect to the weights, over every row of A.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 or float32, inputs filled in; activations
        overwritten (the outputs are left in it). w, J, D, V of its dtype.
    layers, n_in : layer table and input count.
    w : flat weights.
    J : (n_patterns * n_out, n_weights) output, row p * n_out + k = d o_pk / dw.
    D : (block, n_units - n_in) derivative workspace; its row count is the block size.
    V : (block * n_out, n_units - n_in) delta workspace.
    blas_min : BLAS threshold on m*n*k.

    Returns
    -------
    status : int, 0 on success.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (w, J, D, V), "w J D V")
    if bits == 32:
        return jacobian_t[float](A, layers, n_in, w, J, D, V, blas_min)
    return jacobian_t[double](A, layers, n_in, w, J, D, V, blas_min)


cdef int jacobian_t(real_t[:, ::1] A, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                    const real_t[::1] w, real_t[:, ::1] J, real_t[:, ::1] D, real_t[:, ::1] V,
                    Py_ssize_t blas_min) except -1:
    """`jacobian` at one value type."""
    cdef Py_ssize_t n = A.shape[0], nb, r0 = 0
    cdef Py_ssize_t n_out = layers[layers.shape[0] - 1, L_SIZE]
    check_workspaces(layers, n_in, n, A.shape[1], w.shape[0], D.shape[0], D.shape[1],
                     V.shape[0], V.shape[1], J.shape[0], J.shape[1], n * n_out)
    with nogil:
        while r0 < n:
            nb = D.shape[0] if D.shape[0] < n - r0 else n - r0
            block_rows(&layers[0, 0], layers.shape[0], n_in, &w[0], &A[r0, 0], A.shape[1],
                       &D[0, 0], &V[0, 0], D.shape[1], nb, &J[r0 * n_out, 0], J.shape[1],
                       blas_min)
            r0 += nb
    return 0


cdef double block_errors(const real_t* A, Py_ssize_t lda, Py_ssize_t out0,
                         const real_t* T, Py_ssize_t n_out, Py_ssize_t nb,
                         double* e) noexcept nogil:
    """e[p * n_out + k] = o_pk - t_pk for nb rows (in double); return their summed squares."""
    cdef Py_ssize_t p, k
    cdef double sse = 0.0, d
    for p in range(nb):
        for k in range(n_out):
            d = <double>A[p * lda + out0 + k] - <double>T[p * n_out + k]
            e[p * n_out + k] = d
            sse += d * d
    return sse


cdef void add_block_products(double* Jb, Py_ssize_t m, Py_ssize_t n_w, const double* e,
                             double* H, double* g) noexcept nogil:
    """H += Jb^T Jb (upper triangle in row-major terms; not if H is NULL) and g += Jb^T e,
    for a row-major block Jb of m rows (BLAS: Jb is the column-major n_w x m matrix Jb^T)."""
    cdef int n = <int>n_w, k = <int>m, inc = 1
    cdef double one = 1.0
    cdef char lower = b'L', no = b'N'
    if H != NULL:
        dsyrk(&lower, &no, &n, &k, &one, Jb, &n, &one, H, &n)
    dgemv(&no, &n, &k, &one, Jb, &n, <double*>e, &inc, &one, g, &inc)


cdef void add_block_factored(const Py_ssize_t* layers, Py_ssize_t n_layers, Py_ssize_t n_in,
                             const double* A, Py_ssize_t lda, const double* V, Py_ssize_t nu,
                             const double* e, Py_ssize_t nb, Py_ssize_t n_out,
                             Py_ssize_t n_w, double* G, double* R, double* H, double* g,
                             Py_ssize_t blas_min) noexcept nogil:
    """H += J^T J and g += J^T e for one block, from the deltas, without J's rows.

    Row (p, k) of J restricted to unit u of layer j is delta^k_pu a_p (its source
    activations a_p, and 1 for the bias), so

        H[(u, s), (u', s')] = sum_p G_p[u, u'] a_ps a_ps',  G_p[u, u'] = sum_k delta^k_pu delta^k_pu'

    (the example's n_out backward passes are summed into G_p first). The rows of H that
    belong to unit u are then one product per block: a_p^T times R_u, with
    R_u[p, (u', s')] = G_p[u, u'] a_ps' -- 1/n_out of the multiply-adds of J^T J on J's
    rows. Only the columns from u's first weight on are formed (the upper triangle in
    row-major terms). Likewise g[(u, s)] = sum_p eps_pu a_ps, eps_pu = sum_k e_pk delta^k_pu.
    V holds the deltas of the block's rows (p, k) (nu = units - inputs columns); G is a
    workspace of nb * (nu * (nu + 1) + 1) doubles, R of nb * n_w.
    """
    cdef Py_ssize_t j, m, u, u2, p, k, a, b, s, c_l, c_m, i0, width, col
    cdef Py_ssize_t size, lo, n_src, size_m, lo_m, n_src_m
    cdef const Py_ssize_t* lay
    cdef const Py_ssize_t* lay_m
    cdef const double* v
    cdef const double* ap
    cdef double* gp
    cdef double* ep
    cdef double* r
    cdef double* eps = G + nb * nu * nu
    cdef double* ones = eps + nb * nu
    cdef double va, gv
    for p in range(nb):                          # G_p (upper triangle) and eps_p
        ones[p] = 1.0
        gp = G + p * nu * nu
        ep = eps + p * nu
        for a in range(nu):
            ep[a] = 0.0
            for b in range(a, nu):
                gp[a * nu + b] = 0.0
        for k in range(n_out):
            v = V + (p * n_out + k) * nu
            for a in range(nu):
                va = v[a]
                ep[a] = ep[a] + e[p * n_out + k] * va
                for b in range(a, nu):
                    gp[a * nu + b] = gp[a * nu + b] + va * v[b]
    for j in range(n_layers):
        lay = layers + j * L_NCOLS
        size = lay[L_SIZE]; lo = lay[L_SRC_LO]; n_src = lay[L_SRC_HI] - lo
        c_l = lay[L_START] - n_in
        for u in range(size):
            a = c_l + u
            i0 = lay[L_W_OFF] + u * n_src
            width = n_w - i0
            for p in range(nb):                  # R_u[p, c - i0] for the columns c >= i0
                r = R + p * width - i0
                gp = G + p * nu * nu
                ap = A + p * lda
                for m in range(j, n_layers):
                    lay_m = layers + m * L_NCOLS
                    size_m = lay_m[L_SIZE]; lo_m = lay_m[L_SRC_LO]
                    n_src_m = lay_m[L_SRC_HI] - lo_m
                    c_m = lay_m[L_START] - n_in
                    for u2 in range(u if m == j else 0, size_m):
                        gv = gp[a * nu + c_m + u2]
                        col = lay_m[L_W_OFF] + u2 * n_src_m
                        for s in range(n_src_m):
                            r[col + s] = gv * ap[lo_m + s]
                    for u2 in range(size_m):     # the biases (in layer j: u's and its neighbours')
                        b = c_m + u2
                        r[lay_m[L_B_OFF] + u2] = gp[a * nu + b] if b >= a else gp[b * nu + a]
            # weight rows: H[i0 + s, i0:] += sum_p a_p[lo + s] R_u[p, :]
            gemm_rm(c'T', c'N', n_src, width, nb, A + lo, lda, R, width, 1.0,
                    H + i0 * n_w + i0, n_w, NULL, nb, True, 0)
            # bias row: H[b, i0:] += sum_p R_u[p, :], a product with ones (tiles or BLAS:
            # measured 1.2x faster than a loop on cancer1 4+2)
            gemm_rm(c'T', c'N', 1, width, nb, ones, 1, R, width, 1.0,
                    H + (lay[L_B_OFF] + u) * n_w + i0, n_w, NULL, nb, True, 0)
        # J^T e of the layer: the gradient's products with eps in place of the deltas
        fn_loops_deltas_bias(nb, size, eps + c_l, nu, NULL, g + lay[L_B_OFF])
        gemm_gradient(nb, size, n_src, eps + c_l, nu, A + lo, lda, g + lay[L_W_OFF],
                      blas_min)


def normal_equations(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w,
                     double[:, ::1] H, double[::1] g, D, V, double[:, ::1] Jb, double[::1] e,
                     double[::1] R, bint factored, Py_ssize_t blas_min):
    """A = J^T J and J^T e (e = outputs - targets) without storing J, and the SSE.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 or float32 activations, inputs filled in.
    T : (n_patterns, n_out) targets; T, w, D, V of A's dtype, H, g, Jb, e, R float64
        at both value types (the normal equations are accumulated in double).
    layers, n_in, w, D, V, blas_min : as in :func:`jacobian`.
    H : (n_weights, n_weights) output: J^T J in its upper triangle (row-major, diagonal
        included); the strict lower triangle is unspecified.
    g : (n_weights,) output, J^T e (half the gradient of the SSE).
    Jb : (block * n_out, n_weights) workspace: one block's Jacobian rows.
    e : (block * n_out,) workspace: one block's errors.
    R : (block * (n_weights + nu * (nu + 1) + 1),) workspace of the factored products,
        nu = n_units - n_in (unused otherwise).
    factored : J^T J and J^T e from the deltas through the rows' outer-product
        structure (see add_block_factored; Jb is then unused) instead of BLAS dsyrk and
        dgemv on the block's rows.

    Returns
    -------
    sse : float, the summed squared error at w.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w, D, V), "T w D V")
    if bits == 32:
        return normal_equations_t[float](A, T, layers, n_in, w, H, g, D, V, Jb, e, R, factored,
                                         blas_min)
    return normal_equations_t[double](A, T, layers, n_in, w, H, g, D, V, Jb, e, R, factored,
                                      blas_min)


cdef double normal_equations_t(real_t[:, ::1] A, const real_t[:, ::1] T,
                               const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                               const real_t[::1] w, double[:, ::1] H, double[::1] g,
                               real_t[:, ::1] D, real_t[:, ::1] V, double[:, ::1] Jb,
                               double[::1] e, double[::1] R, bint factored,
                               Py_ssize_t blas_min) except? -1.0:
    """`normal_equations` at one value type."""
    cdef double sse
    cdef double[::1] conv
    cdef real_t[::1] rows
    cdef double* cp = NULL          # (float32: the conversion buffers)
    cdef real_t* rp = NULL
    check_normal_equations(A, T, layers, n_in, w, H, g, D, V, Jb, e, R, factored)
    if real_t is float:
        conv, rows = conversion_buffers(A, D, w.shape[0], layers[layers.shape[0] - 1, L_SIZE],
                                        factored)
        cp, rp = &conv[0], &rows[0]
    with nogil:
        sse = ne_compute(A, T, layers, n_in, w, H, g, D, V, Jb, e, R, factored, blas_min,
                         cp, rp)
    return sse


cdef tuple conversion_buffers(real_t[:, ::1] A, real_t[:, ::1] D, Py_ssize_t n_w,
                              Py_ssize_t n_out, bint factored):
    """ne_compute's buffers (float32 only): one block's activation rows and deltas
    taken to double (factored), or its float32 Jacobian rows (not factored)."""
    cdef Py_ssize_t nb = D.shape[0]
    if factored:
        return np.empty(nb * (A.shape[1] + n_out * D.shape[1])), np.empty(1, np.float32)
    return np.empty(1), np.empty(nb * n_out * n_w, np.float32)


cdef int check_normal_equations(real_t[:, ::1] A, const real_t[:, ::1] T,
                                const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
                                const real_t[::1] w, double[:, ::1] H, double[::1] g,
                                real_t[:, ::1] D, real_t[:, ::1] V, double[:, ::1] Jb,
                                double[::1] e, double[::1] R, bint factored) except -1:
    """The memory-safety gate of `ne_compute`'s buffers."""
    cdef Py_ssize_t n = A.shape[0], n_w = w.shape[0]
    cdef Py_ssize_t n_out = layers[layers.shape[0] - 1, L_SIZE]
    check_workspaces(layers, n_in, n, A.shape[1], n_w, D.shape[0], D.shape[1],
                     V.shape[0], V.shape[1], Jb.shape[0], Jb.shape[1],
                     0 if factored else D.shape[0] * n_out)
    check_buffers(layers, n_in, n, A.shape[1], n_w, T.shape[0], T.shape[1], -1, -1)
    if H.shape[0] != n_w or H.shape[1] != n_w or g.shape[0] != n_w:
        raise ValueError("kernel: H must be (n_weights, n_weights) and g (n_weights,)")
    if e.shape[0] < D.shape[0] * n_out:
        raise ValueError("kernel: the error workspace is too short")
    cdef Py_ssize_t nu = D.shape[1]
    if factored and R.shape[0] < D.shape[0] * (n_w + nu * (nu + 1) + 1):
        raise ValueError("kernel: the product workspace is too short")
    return 0


cdef double ne_compute(real_t[:, ::1] A, const real_t[:, ::1] T,
                       const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const real_t[::1] w,
                       double[:, ::1] H, double[::1] g, real_t[:, ::1] D, real_t[:, ::1] V,
                       double[:, ::1] Jb, double[::1] e, double[::1] R, bint factored,
                       Py_ssize_t blas_min, double* conv, real_t* rows) noexcept nogil:
    """`normal_equations` on checked buffers (conv, rows: conversion_buffers')."""
    cdef Py_ssize_t n = A.shape[0], nb, r0 = 0, n_w = w.shape[0], nu = D.shape[1]
    cdef Py_ssize_t n_out = layers[layers.shape[0] - 1, L_SIZE], lda = A.shape[1]
    cdef Py_ssize_t out0 = layers[layers.shape[0] - 1, L_START]
    cdef double sse = 0.0
    cdef real_t* jrows = NULL
    cdef const real_t* Vb = &V[0, 0]
    if not factored:
        jrows = <real_t*>&Jb[0, 0] if real_t is double else rows
    memset(&H[0, 0], 0, n_w * n_w * sizeof(double))
    memset(&g[0], 0, n_w * sizeof(double))
    while r0 < n:
        nb = D.shape[0] if D.shape[0] < n - r0 else n - r0
        block_rows(&layers[0, 0], layers.shape[0], n_in, &w[0], &A[r0, 0], lda,
                   &D[0, 0], &V[0, 0], nu, nb, jrows, n_w, blas_min)
        sse += block_errors(&A[r0, 0], lda, out0, &T[r0, 0], n_out, nb, &e[0])
        if factored:
            if real_t is double:
                add_block_factored(&layers[0, 0], layers.shape[0], n_in, &A[r0, 0], lda,
                                   &V[0, 0], nu, &e[0], nb, n_out, n_w,
                                   &R[D.shape[0] * n_w], &R[0], &H[0, 0], &g[0], blas_min)
            else:
                to_double(conv, &A[r0, 0], nb * lda)
                to_double(conv + nb * lda, Vb, nb * n_out * nu)
                add_block_factored(&layers[0, 0], layers.shape[0], n_in, conv, lda,
                                   conv + nb * lda, nu, &e[0], nb, n_out, n_w,
                                   &R[D.shape[0] * n_w], &R[0], &H[0, 0], &g[0], blas_min)
        else:
            if real_t is float:
                to_double(&Jb[0, 0], rows, nb * n_out * n_w)
            add_block_products(&Jb[0, 0], nb * n_out, n_w, &e[0], &H[0, 0], &g[0])
        r0 += nb
    return sse


cdef inline void to_double(double* out, const real_t* x, Py_ssize_t n) noexcept nogil:
    """out[i] = x[i] for n values (exact: a float is a double)."""
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = x[i]


def solve_damped(const double[:, ::1] H, const double[::1] r, double mu, bint marquardt,
                 double[:, ::1] L, double[::1] dw):
    """dw = -(H + mu D)^-1 r by Cholesky (LAPACK dpotrf, dpotrs), D = I or diag(H).

    Parameters
    ----------
    H : (n, n) symmetric positive semi-definite (J^T J) in its upper triangle (row-major;
        the strict lower triangle is not read), not changed.
    r : (n,) right-hand side (J^T e).
    mu : damping, > 0.
    marquardt : D = diag(H) (Marquardt) instead of I (Levenberg).
    L : (n, n) workspace: the Cholesky factor on return.
    dw : (n,) output.

    Returns
    -------
    info : int, 0 on success; k > 0 when the leading minor of order k is not
        positive definite (dw is then not set).
    """
    cdef int n = <int>H.shape[0], info = 0
    if H.shape[1] != n or r.shape[0] != n or L.shape[0] != n or L.shape[1] != n or dw.shape[0] != n:
        raise ValueError("kernel: H, r, L and dw must be (n, n), (n,), (n, n) and (n,)")
    if n == 0:
        return 0
    with nogil:
        info = ne_solve(H, r, mu, marquardt, L, dw)
    return info


cdef int ne_solve(const double[:, ::1] H, const double[::1] r, double mu, bint marquardt,
                  double[:, ::1] L, double[::1] dw) noexcept nogil:
    """`solve_damped` on checked buffers (n >= 1)."""
    cdef int n = <int>H.shape[0], one = 1, info = 0
    cdef Py_ssize_t i
    cdef char lower = b'L'
    memcpy(&L[0, 0], &H[0, 0], n * n * sizeof(double))
    for i in range(n):
        if marquardt:
            L[i, i] = H[i, i] * (1.0 + mu)
        else:
            L[i, i] = H[i, i] + mu
    # The row-major upper triangle is LAPACK's (column-major) lower one.
    dpotrf(&lower, &n, &L[0, 0], &n, &info)
    if info == 0:
        for i in range(n):
            dw[i] = -r[i]
        dpotrs(&lower, &n, &one, &L[0, 0], &n, &dw[0], &n, &info)
    return info


def lm_epochs(A, T, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, w, trial,
              double[:, ::1] H, double[::1] g, D, V, double[:, ::1] Jb, double[::1] e,
              double[::1] R, bint factored, double[:, ::1] L, double[::1] dw, double[::1] mu,
              double mu_dec, double mu_inc, double mu_max, bint marquardt,
              double[::1] sse_out, Py_ssize_t[::1] solves, Py_ssize_t[::1] tries,
              Py_ssize_t eval_block, Py_ssize_t blas_min):
    """Levenberg-Marquardt epochs (Hagan & Menhaj 1994), one per entry of sse_out.

    Each epoch forms the normal equations at w (`normal_equations`), then solves
    the damped ones (`solve_damped`) for trial weights w + dw and evaluates their
    SSE, until one lowers it (taken, mu *= mu_dec) or mu passes mu_max (mu *=
    mu_inc after every failed or not positive definite try).

    Parameters
    ----------
    A, T, layers, n_in, H, g, D, V, Jb, e, R, factored, blas_min : as in
        `normal_equations` (A also serves the trial weights' forward passes, in
        blocks of ``eval_block`` rows).
    w : (n_weights,) the weights, updated (of A's dtype, as trial).
    trial, dw : (n_weights,) workspaces (dw float64); L : (n_weights, n_weights)
        float64 workspace.
    mu : length 1, the damping, updated.
    sse_out : output, each epoch's SSE at the weights it starts from.
    solves, tries : outputs (as long as sse_out), each epoch's Cholesky solves
        and trial-weight evaluations.

    Returns
    -------
    status : int, 0 after every epoch; k > 0 if epoch k's SSE was not finite;
        -k if mu passed mu_max in epoch k.
    """
    cdef int bits = value_bits(A, "A")
    check_dtypes(bits, (T, w, trial, D, V), "T w trial D V")
    if bits == 32:
        return lm_epochs_t[float](A, T, layers, n_in, w, trial, H, g, D, V, Jb, e, R, factored,
                                  L, dw, mu, mu_dec, mu_inc, mu_max, marquardt, sse_out, solves,
                                  tries, eval_block, blas_min)
    return lm_epochs_t[double](A, T, layers, n_in, w, trial, H, g, D, V, Jb, e, R, factored, L,
                               dw, mu, mu_dec, mu_inc, mu_max, marquardt, sse_out, solves, tries,
                               eval_block, blas_min)


cdef int lm_epochs_t(real_t[:, ::1] A, const real_t[:, ::1] T, const Py_ssize_t[:, ::1] layers,
                     Py_ssize_t n_in, real_t[::1] w, real_t[::1] trial, double[:, ::1] H,
                     double[::1] g, real_t[:, ::1] D, real_t[:, ::1] V, double[:, ::1] Jb,
                     double[::1] e, double[::1] R, bint factored, double[:, ::1] L,
                     double[::1] dw, double[::1] mu, double mu_dec, double mu_inc,
                     double mu_max, bint marquardt, double[::1] sse_out,
                     Py_ssize_t[::1] solves, Py_ssize_t[::1] tries, Py_ssize_t eval_block,
                     Py_ssize_t blas_min) except? -1:
    """`lm_epochs` at one value type."""
    cdef Py_ssize_t j, i, n_w = w.shape[0], n_ep = sse_out.shape[0]
    cdef double sse, err
    cdef int info, status = 0
    cdef double[::1] conv
    cdef real_t[::1] rows
    cdef double* cp = NULL          # (float32: the conversion buffers)
    cdef real_t* rp = NULL
    check_normal_equations(A, T, layers, n_in, w, H, g, D, V, Jb, e, R, factored)
    if (trial.shape[0] != n_w or dw.shape[0] != n_w or L.shape[0] != n_w
            or L.shape[1] != n_w or n_w == 0 or mu.shape[0] != 1
            or solves.shape[0] < n_ep or tries.shape[0] < n_ep or eval_block < 1):
        raise ValueError("kernel: Levenberg-Marquardt workspaces do not match the network")
    if real_t is float:
        conv, rows = conversion_buffers(A, D, n_w, layers[layers.shape[0] - 1, L_SIZE], factored)
        cp, rp = &conv[0], &rows[0]
    with nogil:
        for j in range(n_ep):
            sse = ne_compute(A, T, layers, n_in, w, H, g, D, V, Jb, e, R, factored, blas_min,
                             cp, rp)
            sse_out[j] = sse
            solves[j] = tries[j] = 0
            if not isfinite(sse):
                status = <int>(j + 1)
                break
            while True:
                info = ne_solve(H, g, mu[0], marquardt, L, dw)
                solves[j] += 1
                if info == 0:
                    for i in range(n_w):
                        trial[i] = w[i] + dw[i]
                    err = forward_blocks(layers, n_in, trial, A, &T[0, 0], eval_block,
                                         blas_min)
                    tries[j] += 1
                    if err < sse:
                        memcpy(&w[0], &trial[0], n_w * sizeof(real_t))
                        mu[0] *= mu_dec
                        break
                mu[0] *= mu_inc
                if mu[0] > mu_max:
                    break
            if mu[0] > mu_max:
                status = -<int>(j + 1)
                break
    return status
