"""The Jacobian of the outputs with respect to the weights, and the normal equations.

Row (p, k) of the Jacobian, p an example and k an output (row p * n_out + k), is the
gradient of the single output o_pk. It is one backward pass whose output deltas are
the unit vector e_k times f'(net_pk). A block of nb examples runs its nb * n_out
backward passes together: "virtual rows" (p, k) of a delta buffer V of shape
(nb * n_out, units - inputs), sent back through the layers with the same register
tiles / BLAS products as the gradient (one product per layer for the whole block).
Layer j's part of row (p, k) is then an outer product: dO_pk / dW_j[u, s] =
V[(p, k), u] * a_p[s], and dO_pk / db_j[u] = V[(p, k), u].

:func:`normal_equations` forms A = J^T J and J^T e block by block (BLAS dsyrk and
dgemv on each block's rows, which stay in cache) without storing J: the part of
Levenberg-Marquardt's epoch (Hagan & Menhaj 1994) that grows with the data.
"""
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from fastnet._kernels._types cimport (
    L_START, L_SIZE, L_SRC_LO, L_SRC_HI, L_W_OFF, L_B_OFF, L_NCOLS, gemm_backprop, gemm_rm,
)
from fastnet._kernels._forward cimport check_buffers, forward_rows


cdef void layer_deltas(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t size, double* V,
                       Py_ssize_t ldv, const double* D, Py_ssize_t ldd) noexcept nogil:
    """V[(p, k), u] *= D[p, u]: dO_pk/da times f'(net) gives the deltas of row (p, k)."""
    cdef Py_ssize_t p, k, u
    cdef double* v
    cdef const double* d
    for p in range(nb):
        d = D + p * ldd
        for k in range(n_out):
            v = V + (p * n_out + k) * ldv
            for u in range(size):
                v[u] = v[u] * d[u]


cdef void layer_rows(Py_ssize_t nb, Py_ssize_t n_out, Py_ssize_t size, Py_ssize_t n_src,
                     const double* V, Py_ssize_t ldv, const double* A, Py_ssize_t lda,
                     double* J, Py_ssize_t ldj, Py_ssize_t w_off,
                     Py_ssize_t b_off) noexcept nogil:
    """Layer j's columns of the rows (p, k) of a block: V[(p,k), u] * a_p[s], and V itself
    for the biases (A points at the layer's first source column)."""
    cdef Py_ssize_t p, k, u, s
    cdef const double* a
    cdef const double* v
    cdef double* jr
    cdef double* jw
    cdef double d
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
                     const double* w, double* A, Py_ssize_t lda, double* D, double* V,
                     Py_ssize_t ldd, Py_ssize_t nb, double* J, Py_ssize_t ldj,
                     Py_ssize_t blas_min) noexcept nogil:
    """Rows (p, k) of the Jacobian for nb examples (activation rows A, inputs filled in);
    leaves the outputs in A."""
    cdef Py_ssize_t j, p, k, c, start, size, lo, hi, src0
    cdef Py_ssize_t n_out = layers[(n_layers - 1) * L_NCOLS + L_SIZE]
    cdef Py_ssize_t c_out = layers[(n_layers - 1) * L_NCOLS + L_START] - n_in
    cdef const Py_ssize_t* lay
    forward_rows(layers, n_layers, w, A, lda, D, ldd, n_in, nb, blas_min)
    # Output deltas of the virtual rows: f'(net_pk) at output k, zero elsewhere.
    memset(V, 0, nb * n_out * ldd * sizeof(double))
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


def jacobian(double[:, ::1] A, const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in,
             const double[::1] w, double[:, ::1] J, double[:, ::1] D, double[:, ::1] V,
             Py_ssize_t blas_min):
    """The Jacobian of the outputs with respect to the weights, over every row of A.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64, inputs filled in; activations
        overwritten (the outputs are left in it).
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


cdef double block_errors(const double* A, Py_ssize_t lda, Py_ssize_t out0,
                         const double* T, Py_ssize_t n_out, Py_ssize_t nb,
                         double* e) noexcept nogil:
    """e[p * n_out + k] = o_pk - t_pk for nb rows; return their summed squares."""
    cdef Py_ssize_t p, k
    cdef double sse = 0.0, d
    for p in range(nb):
        for k in range(n_out):
            d = A[p * lda + out0 + k] - T[p * n_out + k]
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
                             const double* A, Py_ssize_t lda, const double* V, Py_ssize_t ldv,
                             const double* Jb, Py_ssize_t nb, Py_ssize_t n_out,
                             Py_ssize_t n_w, double* R, double* H) noexcept nogil:
    """H += J^T J for one block, through the outer-product structure of J's rows.

    Row (p, k) of J restricted to layer j is delta^k_p (x) a_p (its units' deltas times
    its source activations; 1 for the biases). So the rows of H that belong to unit u
    of layer j are sum_p a_p (x) R_u[p, :] with R_u[p, :] = sum_k delta^k_pu J[(p, k), :]:
    the n_out rows of an example are summed *before* the product, which then costs
    nb * S_j * (n_w - first column of u) multiply-adds per unit u (one product of the
    activations' transpose with R_u), against n_out times that in J^T J. Only the
    columns from u's first weight on are formed: the upper triangle in row-major terms.
    """
    cdef Py_ssize_t j, u, p, k, c, s, start, size, lo, hi, n_src, c_l, i0, width
    cdef const Py_ssize_t* lay
    cdef double* r
    cdef double* hb
    cdef const double* jr
    cdef double v
    for j in range(n_layers):
        lay = layers + j * L_NCOLS
        start = lay[L_START]; size = lay[L_SIZE]
        lo = lay[L_SRC_LO]; hi = lay[L_SRC_HI]
        n_src = hi - lo
        c_l = start - n_in
        for u in range(size):
            i0 = lay[L_W_OFF] + u * n_src
            width = n_w - i0
            for p in range(nb):                  # R_u[p, :] = sum_k delta^k_pu J[(p, k), i0:]
                r = R + p * width
                jr = Jb + p * n_out * n_w + i0
                v = V[p * n_out * ldv + c_l + u]
                for c in range(width):
                    r[c] = v * jr[c]
                for k in range(1, n_out):
                    jr = jr + n_w
                    v = V[(p * n_out + k) * ldv + c_l + u]
                    for c in range(width):
                        r[c] = r[c] + v * jr[c]
            # weight rows: H[i0 + s, i0:] += sum_p a_p[lo + s] R_u[p, :]
            gemm_rm(b'T', b'N', n_src, width, nb, A + lo, lda, R, width, 1.0,
                    H + i0 * n_w + i0, n_w, NULL, nb, True, 0)
            # bias row: H[b, i0:] += sum_p R_u[p, :]
            hb = H + (lay[L_B_OFF] + u) * n_w + i0
            for p in range(nb):
                r = R + p * width
                for c in range(width):
                    hb[c] = hb[c] + r[c]


def normal_equations(double[:, ::1] A, const double[:, ::1] T,
                     const Py_ssize_t[:, ::1] layers, Py_ssize_t n_in, const double[::1] w,
                     double[:, ::1] H, double[::1] g, double[:, ::1] D, double[:, ::1] V,
                     double[:, ::1] Jb, double[::1] e, double[::1] R, bint factored,
                     Py_ssize_t blas_min):
    """A = J^T J and J^T e (e = outputs - targets) without storing J, and the SSE.

    Parameters
    ----------
    A : (n_patterns, lda >= n_units) float64 activations, inputs filled in.
    T : (n_patterns, n_out) float64 targets.
    layers, n_in, w, D, V, blas_min : as in :func:`jacobian`.
    H : (n_weights, n_weights) output, J^T J (symmetric, both triangles set).
    g : (n_weights,) output, J^T e (half the gradient of the SSE).
    Jb : (block * n_out, n_weights) workspace: one block's Jacobian rows.
    e : (block * n_out,) workspace: one block's errors.
    R : (block * n_weights,) workspace of the factored products (unused otherwise).
    factored : J^T J through the rows' outer-product structure (see
        add_block_factored) instead of BLAS dsyrk on the block's rows.

    Returns
    -------
    sse : float, the summed squared error at w.
    """
    cdef Py_ssize_t n = A.shape[0], nb, r0 = 0, i, j, n_w = w.shape[0]
    cdef Py_ssize_t n_out = layers[layers.shape[0] - 1, L_SIZE]
    cdef Py_ssize_t out0 = layers[layers.shape[0] - 1, L_START]
    cdef double sse = 0.0
    check_workspaces(layers, n_in, n, A.shape[1], n_w, D.shape[0], D.shape[1],
                     V.shape[0], V.shape[1], Jb.shape[0], Jb.shape[1], D.shape[0] * n_out)
    check_buffers(layers, n_in, n, A.shape[1], n_w, T.shape[0], T.shape[1], -1, -1)
    if H.shape[0] != n_w or H.shape[1] != n_w or g.shape[0] != n_w:
        raise ValueError("kernel: H must be (n_weights, n_weights) and g (n_weights,)")
    if e.shape[0] < D.shape[0] * n_out:
        raise ValueError("kernel: the error workspace is too short")
    if factored and R.shape[0] < D.shape[0] * n_w:
        raise ValueError("kernel: the product workspace is too short")
    with nogil:
        memset(&H[0, 0], 0, n_w * n_w * sizeof(double))
        memset(&g[0], 0, n_w * sizeof(double))
        while r0 < n:
            nb = D.shape[0] if D.shape[0] < n - r0 else n - r0
            block_rows(&layers[0, 0], layers.shape[0], n_in, &w[0], &A[r0, 0], A.shape[1],
                       &D[0, 0], &V[0, 0], D.shape[1], nb, &Jb[0, 0], n_w, blas_min)
            sse += block_errors(&A[r0, 0], A.shape[1], out0, &T[r0, 0], n_out, nb, &e[0])
            if factored:
                add_block_factored(&layers[0, 0], layers.shape[0], n_in, &A[r0, 0],
                                   A.shape[1], &V[0, 0], D.shape[1], &Jb[0, 0], nb, n_out,
                                   n_w, &R[0], &H[0, 0])
                add_block_products(&Jb[0, 0], nb * n_out, n_w, &e[0], NULL, &g[0])
            else:
                add_block_products(&Jb[0, 0], nb * n_out, n_w, &e[0], &H[0, 0], &g[0])
            r0 += nb
        for i in range(n_w):          # mirror the upper triangle into the lower one
            for j in range(i):
                H[i, j] = H[j, i]
    return sse


def solve_damped(const double[:, ::1] H, const double[::1] r, double mu, bint marquardt,
                 double[:, ::1] L, double[::1] dw):
    """dw = -(H + mu D)^-1 r by Cholesky (LAPACK dpotrf, dpotrs), D = I or diag(H).

    Parameters
    ----------
    H : (n, n) symmetric positive semi-definite (J^T J), not changed.
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
    cdef int n = <int>H.shape[0], one = 1, info = 0
    cdef Py_ssize_t i
    cdef char lower = b'L'
    if H.shape[1] != n or r.shape[0] != n or L.shape[0] != n or L.shape[1] != n or dw.shape[0] != n:
        raise ValueError("kernel: H, r, L and dw must be (n, n), (n,), (n, n) and (n,)")
    if n == 0:
        return 0
    with nogil:
        memcpy(&L[0, 0], &H[0, 0], n * n * sizeof(double))
        for i in range(n):
            if marquardt:
                L[i, i] = H[i, i] * (1.0 + mu)
            else:
                L[i, i] = H[i, i] + mu
        # H is symmetric and both triangles are set, so the row-major array is
        # the same matrix for column-major LAPACK.
        dpotrf(&lower, &n, &L[0, 0], &n, &info)
        if info == 0:
            for i in range(n):
                dw[i] = -r[i]
            dpotrs(&lower, &n, &one, &L[0, 0], &n, &dw[0], &n, &info)
    return info
