/* The register-tiled layer products, written once for every instruction set.
 *
 * Not an ordinary header: _simd.h includes it once per instruction set, after
 * defining the parameters below (as FANN builds float and double from one
 * source), so it has no include guard and undefines every parameter at its end.
 *
 * Parameters (see _simd.h for the two sets):
 *   FN_BITS              vector width: 256 or 512. Names follow from it: the vector
 *                        type __m<BITS>d, the intrinsics _mm<BITS>_*, and this
 *                        file's functions fn<BITS>_* (fn256_gemm, fn512_gemm, ...).
 *   FN_TARGET            the target attribute of every function here.
 *   FN_MASK_T            a lane mask; FN_MASK(w): lanes [0, w) for 1 <= w <= lanes.
 *   FN_LOADM(p, m)       masked load (zeros in the other lanes) and
 *   FN_STOREM(p, m, v)   masked store: neither touches memory outside the lanes of m.
 *   FN_PANEL_ROWS, FN_PANEL_VECS   the panel tile: rows x vectors of columns;
 *   FN_GRAD_UNITS, FN_GRAD_VECS    the gradient tile: units x vectors of inputs;
 *   FN_GRAD2_VECS        its vectors for layers of one or two units (2 x this);
 *   FN_FORWARD_UNITS     forward products of layers of fewer units go to FN_DOTS
 *                        (Z = A W^T + b as dot products) if defined, else are declined.
 * The shapes fill the register file (docs/cython.md has the table of why). The
 * caller must have defined fn_pack_wt (plain C, the same for every set).
 *
 * Kernels (row-major, as in _types.pxd), through one entry point:
 *   fn<BITS>_gemm      C (+)= op(A) op(B) (+ bias): the three products of a layer;
 *   fn<BITS>_panel     C[r, j] (+)= sum_p L[r, p] P[p, j]  (broadcast L, vectors of P rows)
 *                      -- back-propagation (P = W) and, on packed W^T, the forward product;
 *   fn<BITS>_forward   Z = A W^T (+ b): W^T packed FN_KC inputs at a time, then the panel;
 *   fn<BITS>_gradient  G[u, s] (+)= sum_r D[r, u] A[r, s]  (broadcast D, vectors of A rows).
 * Every sum runs in a fixed order written in the code (no reassociation flags):
 * each output element is one chain of FMAs in index order, whatever the tile
 * shape, so the products of both instruction sets agree to the bit (only the
 * dot products of FN_DOTS differ) and a run is reproducible. Partial vectors are
 * read and written with masked loads and stores (never past the row end); the
 * stores happen once per tile.
 */

#define FN_CAT3_(a, b, c) a##b##c
#define FN_CAT3(a, b, c) FN_CAT3_(a, b, c)
#define FN_NAME(x) FN_CAT3(fn, FN_BITS, _##x)
#define FN_VEC FN_CAT3(__m, FN_BITS, d)
#define FN_MM(op) FN_CAT3(_mm, FN_BITS, _##op)
#define FN_LANES (FN_BITS / 64)
#define FN_KERNEL __attribute__((target(FN_TARGET), unused)) static
#define FN_TILE __attribute__((target(FN_TARGET), always_inline)) static inline

/* Vector v of the V in a tile: the last one masked when MASKED (all constants). */
#define FN_LOADV(ptr, v) ((MASKED && (v) == V - 1) ? FN_LOADM((ptr), mlast) : FN_MM(loadu_pd)(ptr))
#define FN_STOREV(ptr, v, x)                                                                \
    do {                                                                                    \
        if (MASKED && (v) == V - 1)                                                         \
            FN_STOREM((ptr), mlast, (x));                                                   \
        else                                                                                \
            FN_MM(storeu_pd)((ptr), (x));                                                   \
    } while (0)

/* The constant k = K for a tile's shape: the tiles keep their accumulators in
 * registers only when their shape is known. FN_CASES(N, KMAX, T, X): case k:
 * T(k, X) for k = 1..N, where N (a literal) bounds the tiles' arrays, and KMAX
 * (<= N, a constant once inlined) prunes the cases above it. */
#define FN_CASE(k, KMAX, T, X) case k: if ((k) <= (KMAX)) T(k, X); break;
#define FN_CASES_1(KMAX, T, X) FN_CASE(1, KMAX, T, X)
#define FN_CASES_2(KMAX, T, X) FN_CASES_1(KMAX, T, X) FN_CASE(2, KMAX, T, X)
#define FN_CASES_3(KMAX, T, X) FN_CASES_2(KMAX, T, X) FN_CASE(3, KMAX, T, X)
#define FN_CASES_4(KMAX, T, X) FN_CASES_3(KMAX, T, X) FN_CASE(4, KMAX, T, X)
#define FN_CASES_5(KMAX, T, X) FN_CASES_4(KMAX, T, X) FN_CASE(5, KMAX, T, X)
#define FN_CASES_6(KMAX, T, X) FN_CASES_5(KMAX, T, X) FN_CASE(6, KMAX, T, X)
#define FN_CASES_7(KMAX, T, X) FN_CASES_6(KMAX, T, X) FN_CASE(7, KMAX, T, X)
#define FN_CASES_8(KMAX, T, X) FN_CASES_7(KMAX, T, X) FN_CASE(8, KMAX, T, X)
#define FN_CASES(N, KMAX, T, X) FN_CAT3(FN_CASES_, N, )(KMAX, T, X)
/* T(V, masked) for 1 <= V <= VMAX <= N, with V and masked as constants. */
#define FN_SWITCH_V(V, masked, N, VMAX, T)                                                  \
    do {                                                                                    \
        if (masked) switch (V) { FN_CASES(N, VMAX, T, 1) }                                  \
        else switch (V) { FN_CASES(N, VMAX, T, 0) }                                         \
    } while (0)

/* One tile of the panel: R rows x V vectors (R, V and MASKED constants at every
 * call, so the R V + V + 1 vectors live in registers). */
FN_TILE void
FN_NAME(panel_tile)(const int R, const int V, const int MASKED, ptrdiff_t np,
                    const double *L, ptrdiff_t ldl, const double *P, ptrdiff_t ldp,
                    double *C, ptrdiff_t ldc, FN_MASK_T mlast, int accumulate,
                    const double *bias)
{
    FN_VEC acc[FN_PANEL_ROWS][FN_PANEL_VECS], pv[FN_PANEL_VECS];
    ptrdiff_t p;
    int i, v;
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            acc[i][v] = accumulate ? FN_LOADV(C + i * ldc + FN_LANES * v, v) : FN_MM(setzero_pd)();
    for (p = 0; p < np; p++) {
        for (v = 0; v < V; v++)
            pv[v] = FN_LOADV(P + p * ldp + FN_LANES * v, v);
        for (i = 0; i < R; i++) {
            const FN_VEC l = FN_MM(set1_pd)(L[i * ldl + p]);
            for (v = 0; v < V; v++)
                acc[i][v] = FN_MM(fmadd_pd)(l, pv[v], acc[i][v]);
        }
    }
    if (bias) {
        for (v = 0; v < V; v++)
            pv[v] = FN_LOADV(bias + FN_LANES * v, v);
        for (i = 0; i < R; i++)
            for (v = 0; v < V; v++)
                acc[i][v] = FN_MM(add_pd)(acc[i][v], pv[v]);
    }
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            FN_STOREV(C + i * ldc + FN_LANES * v, v, acc[i][v]);
}

/* C[r, j] = sum_p L[r, p] P[p, j] (accumulate = 0) or C[r, j] += ... (accumulate = 1),
 * r < nb, j < n, p < np; rows of L, P and C have strides ldl, ldp and ldc. With
 * bias != NULL, bias[j] is added last (to the finished sum, as a separate pass
 * would add it: the same result, one store fewer). */
FN_KERNEL void
FN_NAME(panel)(ptrdiff_t nb, ptrdiff_t n, ptrdiff_t np, const double *L, ptrdiff_t ldl,
               const double *P, ptrdiff_t ldp, double *C, ptrdiff_t ldc, int accumulate,
               const double *bias)
{
    const ptrdiff_t width = FN_LANES * FN_PANEL_VECS;
    ptrdiff_t j0, r;
    for (j0 = 0; j0 < n; j0 += width) {
        const ptrdiff_t w = n - j0 < width ? n - j0 : width;
        const int V = (int)((w + FN_LANES - 1) / FN_LANES);
        const FN_MASK_T m = FN_MASK((int)(w - FN_LANES * (V - 1)));
        const double *Pj = P + j0;
        const double *bj = bias ? bias + j0 : NULL;
        double *Cj = C + j0;
#define FN_PANEL_T(VV, MM)                                                                  \
        do {                                                                                \
            for (r = 0; r + FN_PANEL_ROWS <= nb; r += FN_PANEL_ROWS)                        \
                FN_NAME(panel_tile)(FN_PANEL_ROWS, VV, MM, np, L + r * ldl, ldl, Pj, ldp,   \
                                    Cj + r * ldc, ldc, m, accumulate, bj);                  \
            for (; r < nb; r++)                                                             \
                FN_NAME(panel_tile)(1, VV, MM, np, L + r * ldl, ldl, Pj, ldp, Cj + r * ldc, \
                                    ldc, m, accumulate, bj);                                \
        } while (0)
        r = 0;
        FN_SWITCH_V(V, w % FN_LANES != 0, FN_PANEL_VECS, FN_PANEL_VECS, FN_PANEL_T);
#undef FN_PANEL_T
    }
}

/* Z[r, u] = sum_s A[r, s] W[u, s] (+ Z[r, u] if accumulate) (+ b[u] if b != NULL),
 * W of shape (n_out, n_src) with row stride ldw: W^T is packed FN_PANEL_VECS
 * vectors of units at a time, FN_KC inputs per chunk, so that the panel reads
 * whole vectors of units. The chunk (at most 128 x 32 doubles, 32 KiB) lives on
 * the stack: kernels do not allocate. */
FN_KERNEL void
FN_NAME(forward)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
                 ptrdiff_t lda, const double *W, ptrdiff_t ldw, int accumulate,
                 const double *b, double *Z, ptrdiff_t ldz)
{
    enum { WIDTH = FN_LANES * FN_PANEL_VECS };
    double pack[FN_KC * WIDTH] __attribute__((aligned(64)));
    ptrdiff_t j0, k0;
    for (j0 = 0; j0 < n_out; j0 += WIDTH) {
        const ptrdiff_t w = n_out - j0 < WIDTH ? n_out - j0 : WIDTH;
        for (k0 = 0; k0 < n_src; k0 += FN_KC) {
            const ptrdiff_t kc = n_src - k0 < FN_KC ? n_src - k0 : FN_KC;
            fn_pack_wt(W, ldw, j0, w, k0, kc, pack, WIDTH);
            FN_NAME(panel)(nb, w, kc, A + k0, lda, pack, WIDTH, Z + j0, ldz,
                           accumulate || k0 > 0, b && k0 + kc == n_src ? b + j0 : NULL);
        }
    }
}

/* One tile of the gradient: U units x V vectors of inputs, summed over nb rows
 * in row order (U, V and MASKED constants at every call). */
FN_TILE void
FN_NAME(gradient_tile)(const int U, const int V, const int MASKED, ptrdiff_t nb,
                       const double *D, ptrdiff_t ldd, const double *A, ptrdiff_t lda,
                       double *G, ptrdiff_t ldg, FN_MASK_T mlast, int accumulate)
{
    FN_VEC acc[FN_GRAD_UNITS][FN_GRAD2_VECS], a[FN_GRAD2_VECS];
    ptrdiff_t r;
    int u, v;
    for (u = 0; u < U; u++)
        for (v = 0; v < V; v++)
            acc[u][v] = accumulate ? FN_LOADV(G + u * ldg + FN_LANES * v, v) : FN_MM(setzero_pd)();
    for (r = 0; r < nb; r++) {
        for (v = 0; v < V; v++)
            a[v] = FN_LOADV(A + r * lda + FN_LANES * v, v);
        for (u = 0; u < U; u++) {
            const FN_VEC d = FN_MM(set1_pd)(D[r * ldd + u]);
            for (v = 0; v < V; v++)
                acc[u][v] = FN_MM(fmadd_pd)(d, a[v], acc[u][v]);
        }
    }
    for (u = 0; u < U; u++)
        for (v = 0; v < V; v++)
            FN_STOREV(G + u * ldg + FN_LANES * v, v, acc[u][v]);
}

/* The tile of U units (a constant) for the V vectors (1..VMAX) the inputs left need. */
FN_TILE void
FN_NAME(gradient_units)(const int U, const int VMAX, int V, int masked, ptrdiff_t nb,
                        const double *D, ptrdiff_t ldd, const double *A, ptrdiff_t lda,
                        double *G, ptrdiff_t ldg, FN_MASK_T m, int accumulate)
{
#define FN_GRAD_T(VV, MM) FN_NAME(gradient_tile)(U, VV, MM, nb, D, ldd, A, lda, G, ldg, m, accumulate)
    FN_SWITCH_V(V, masked, FN_GRAD2_VECS, VMAX, FN_GRAD_T);
#undef FN_GRAD_T
}

/* The gradient in tiles of at most UMAX units x VMAX vectors (constants). */
FN_TILE void
FN_NAME(gradient_pass)(const int UMAX, const int VMAX, ptrdiff_t nb, ptrdiff_t n_out,
                       ptrdiff_t n_src, const double *D, ptrdiff_t ldd, const double *A,
                       ptrdiff_t lda, double *G, ptrdiff_t ldg, int accumulate)
{
    const ptrdiff_t width = FN_LANES * VMAX;
    ptrdiff_t s0, u;
    for (s0 = 0; s0 < n_src; s0 += width) {
        const ptrdiff_t w = n_src - s0 < width ? n_src - s0 : width;
        const int V = (int)((w + FN_LANES - 1) / FN_LANES);
        const int masked = w % FN_LANES != 0;
        const FN_MASK_T m = FN_MASK((int)(w - FN_LANES * (V - 1)));
        for (u = 0; u < n_out; u += UMAX) {
            const int U = (int)(n_out - u < UMAX ? n_out - u : UMAX);
#define FN_GRAD_U(UU, X)                                                                    \
            FN_NAME(gradient_units)(UU, VMAX, V, masked, nb, D + u, ldd, A + s0, lda,       \
                                    G + u * ldg + s0, ldg, m, accumulate)
            switch (U) { FN_CASES(FN_GRAD_UNITS, UMAX, FN_GRAD_U, 0) }
#undef FN_GRAD_U
        }
    }
}

/* G[u, s] = sum_r D[r, u] A[r, s] (accumulate = 0) or G[u, s] += ... (accumulate = 1),
 * G of shape (n_out, n_src) with row stride ldg. Layers of one or two units
 * take 2 x FN_GRAD2_VECS tiles (more inputs per pass over the rows), wider ones
 * FN_GRAD_UNITS x FN_GRAD_VECS. */
FN_KERNEL void
FN_NAME(gradient)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *D,
                  ptrdiff_t ldd, const double *A, ptrdiff_t lda, double *G, ptrdiff_t ldg,
                  int accumulate)
{
    if (n_out <= 2)
        FN_NAME(gradient_pass)(2, FN_GRAD2_VECS, nb, n_out, n_src, D, ldd, A, lda, G, ldg,
                               accumulate);
    else
        FN_NAME(gradient_pass)(FN_GRAD_UNITS, FN_GRAD_VECS, nb, n_out, n_src, D, ldd, A, lda,
                               G, ldg, accumulate);
}

/* The one row-major GEMM of this instruction set: C (m x n, row stride ldc)
 * = op(A) op(B) (+ C if accumulate) (+ bias[j] in every row, if bias != NULL),
 * op(X) = X for 'N', X^T for 'T'; op(A) is m x k, op(B) k x n. A layer's three
 * products are
 *   'N','T'  forward          Z = A W^T + b   (fn<BITS>_forward, or FN_DOTS)
 *   'N','N'  back-propagation dA += Delta W   (fn<BITS>_panel)
 *   'T','N'  weight gradient  G += Delta^T A  (fn<BITS>_gradient; no bias).
 * Returns 1 when done, 0 when declined (another combination, or a forward
 * product of fewer than FN_FORWARD_UNITS units without FN_DOTS): the caller
 * then computes it (C untouched). */
FN_KERNEL int
FN_NAME(gemm)(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, const double *A,
              ptrdiff_t lda, const double *B, ptrdiff_t ldb, int accumulate, double *C,
              ptrdiff_t ldc, const double *bias)
{
    if (ta == 'N' && tb == 'N') {
        FN_NAME(panel)(m, n, k, A, lda, B, ldb, C, ldc, accumulate, bias);
        return 1;
    }
    if (ta == 'N' && tb == 'T') {
        if (n >= FN_FORWARD_UNITS) {
            FN_NAME(forward)(m, n, k, A, lda, B, ldb, accumulate, bias, C, ldc);
            return 1;
        }
#ifdef FN_DOTS
        if (!accumulate) {
            FN_DOTS(m, n, k, A, lda, B, ldb, bias, C, ldc);
            return 1;
        }
#endif
        return 0;
    }
    if (ta == 'T' && tb == 'N' && bias == NULL) {
        FN_NAME(gradient)(k, m, n, A, lda, B, ldb, C, ldc, accumulate);
        return 1;
    }
    return 0;
}

#undef FN_SWITCH_V
#undef FN_CASES
#undef FN_CASES_8
#undef FN_CASES_7
#undef FN_CASES_6
#undef FN_CASES_5
#undef FN_CASES_4
#undef FN_CASES_3
#undef FN_CASES_2
#undef FN_CASES_1
#undef FN_CASE
#undef FN_STOREV
#undef FN_LOADV
#undef FN_TILE
#undef FN_KERNEL
#undef FN_LANES
#undef FN_MM
#undef FN_VEC
#undef FN_NAME
#undef FN_CAT3
#undef FN_CAT3_
/* The parameters: the next instruction set defines its own. */
#undef FN_BITS
#undef FN_TARGET
#undef FN_MASK_T
#undef FN_MASK
#undef FN_LOADM
#undef FN_STOREM
#undef FN_PANEL_ROWS
#undef FN_PANEL_VECS
#undef FN_GRAD_UNITS
#undef FN_GRAD_VECS
#undef FN_GRAD2_VECS
#undef FN_FORWARD_UNITS
#undef FN_DOTS
