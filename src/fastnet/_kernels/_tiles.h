/* The register-tiled layer products, written once for every instruction set
 * and both value types.
 *
 * Not an ordinary header: _simd.h defines an instruction set's parameters
 * (below) and includes this file through _values.h, once per value type (as
 * FANN builds float and double from one source), so it has no include guard.
 * It undefines its own macros at its end, and the instruction set's parameters
 * after the last value type (float, _values.h's second).
 *
 * The value type (_values.h): FN_REAL (double, float), FN_VT_BITS (64, 32) and
 * FN_VT(name) (name, name_f32). From it and the width follow the lanes per
 * vector, FN_LANES = FN_BITS / FN_VT_BITS (8 doubles or 16 floats in AVX-512,
 * 4 or 8 in AVX2), the vector type (__m512d, __m512), the intrinsics
 * (_mm512_fmadd_pd, _mm512_fmadd_ps: FN_MM(fmadd)) and the names
 * (fn512_gemm, fn512_gemm_f32).
 *
 * Parameters of an instruction set (see _simd.h for the two sets):
 *   FN_BITS              vector width: 256 or 512; this file's functions are
 *                        fn<BITS>_* (fn256_gemm, fn512_gemm_f32, ...).
 *   FN_TARGET            the target attribute of every function here.
 *   FN_MASK_T_64, FN_MASK_T_32   a lane mask of each value type, and
 *   FN_MASK_64(w), FN_MASK_32(w)  lanes [0, w) for 1 <= w <= lanes;
 *   FN_LOADM(p, m)       masked load (zeros in the other lanes) and
 *   FN_STOREM(p, m, v)   masked store: neither touches memory outside the lanes
 *                        of m (written with FN_MM, so for either type).
 *   FN_TILE_ROWS, FN_TILE_VECS   the tile: rows of C x vectors of its columns;
 *   FN_NARROW_VECS       the vectors of the tile for C of one or two rows (the
 *                        weight gradient of a layer of one or two units): 2 x this
 *                        (>= FN_TILE_VECS; at most 8);
 *   FN_DOTS_FILE         (optional) a header of dot products FN_NAME(dots) (Z = A
 *                        W^T + b) for forward products of layers of fewer units
 *                        than one vector (FN_LANES): included here per value
 *                        type. Without it such products are declined.
 *   FN_BROADCAST_NARROW(n, k)  with FN_DOTS_FILE: whether a forward product of
 *                        n < FN_LANES units on k sources takes the tiles instead.
 * The shapes fill the register file (docs/cython.md has the table of why); a
 * vector holds twice as many floats as doubles, so the same shapes serve both.
 * The caller must have defined FN_KC and fn_pack_wt, fn_pack_wt_f32 (plain C).
 *
 * One tile kernel, C (+)= op(A) B for op(A) = A or A^T: each step p broadcasts
 * op(A)[i, p] of the tile's R rows and multiplies it into V vectors of row p of B.
 * Row-major, as in _types.pxd, behind one entry point:
 *   fn<BITS>_gemm      C (+)= op(A) op(B) (+ bias): the three products of a layer,
 *     'N','N'  back-propagation  dA += Delta W      fn<BITS>_gemm_xn (the tiles, op(A) = A)
 *     'T','N'  weight gradient   G += Delta^T A     fn<BITS>_gemm_xn (the tiles, op(A) = A^T)
 *     'N','T'  forward product   Z = A W^T + b      fn<BITS>_gemm_nt: W^T packed FN_KC
 *                                                    inputs at a time, then the tiles on it.
 * Every sum runs in a fixed order written in the code (no reassociation flags):
 * each output element is one chain of FMAs in index order, whatever the tile
 * shape, so the products of both instruction sets agree to the bit (only the
 * dot products of FN_DOTS differ) and a run is reproducible. Partial vectors are
 * read and written with masked loads and stores (never past the row end); the
 * stores happen once per tile.
 */

#define FN_CAT3_(a, b, c) a##b##c
#define FN_CAT3(a, b, c) FN_CAT3_(a, b, c)
#define FN_NAME(x) FN_VT(FN_CAT3(fn, FN_BITS, _##x))
#define FN_LANES (FN_BITS / FN_VT_BITS)
#if FN_VT_BITS == 64
#define FN_VEC FN_CAT3(__m, FN_BITS, d)
#define FN_MM(op) FN_CAT3(_mm, FN_BITS, _##op##_pd)
#define FN_MASK_T FN_MASK_T_64
#define FN_MASK(w) FN_MASK_64(w)
#else
#define FN_VEC FN_CAT3(__m, FN_BITS, )
#define FN_MM(op) FN_CAT3(_mm, FN_BITS, _##op##_ps)
#define FN_MASK_T FN_MASK_T_32
#define FN_MASK(w) FN_MASK_32(w)
#endif
#define FN_KERNEL __attribute__((target(FN_TARGET), unused)) static
#define FN_TILE __attribute__((target(FN_TARGET), always_inline)) static inline

/* Keeps x in a register: GCC would otherwise fold a load of B into each of the
 * R FMAs that use it, loading it R times (15-35 % slower on 2-row tiles). */
#define FN_IN_REGISTER(x) __asm__("" : "+v"(x))

/* Vector v of the V in a tile: the last one masked when MASKED (all constants). */
#define FN_LOADV(ptr, v) ((MASKED && (v) == V - 1) ? FN_LOADM((ptr), mlast) : FN_MM(loadu)(ptr))
#define FN_STOREV(ptr, v, x)                                                                \
    do {                                                                                    \
        if (MASKED && (v) == V - 1)                                                         \
            FN_STOREM((ptr), mlast, (x));                                                   \
        else                                                                                \
            FN_MM(storeu)((ptr), (x));                                                      \
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

/* The dot products of narrow forward products, of this value type. */
#ifdef FN_DOTS_FILE
#include FN_DOTS_FILE
#define FN_DOTS FN_NAME(dots)
#endif

/* One tile: C[i, j] (+)= sum_p op(A)[i, p] B[p, j] (+ bias[j]) for R rows i and
 * V vectors of columns j, op(A)[i, p] = A[i * lda + p], or A[p * lda + i] when
 * TRANS; with scale != NULL the finished value is multiplied by scale[i * lds + j]
 * before it is stored (back-propagation: dE/da times f'(net), as a separate pass
 * over C would multiply it: the same rounding). TRANS, R, V and MASKED are
 * constants at every call, so the R V + V + 1 vectors live in registers. */
FN_TILE void
FN_NAME(tile)(const int TRANS, const int R, const int V, const int MASKED, ptrdiff_t k,
              const FN_REAL *A, ptrdiff_t lda, const FN_REAL *B, ptrdiff_t ldb, FN_REAL *C,
              ptrdiff_t ldc, FN_MASK_T mlast, int accumulate, const FN_REAL *bias,
              const FN_REAL *scale, ptrdiff_t lds)
{
    FN_VEC acc[FN_TILE_ROWS][FN_NARROW_VECS], b[FN_NARROW_VECS];
    const ptrdiff_t a_row = TRANS ? 1 : lda, a_step = TRANS ? lda : 1;
    ptrdiff_t p;
    int i, v;
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            acc[i][v] = accumulate ? FN_LOADV(C + i * ldc + FN_LANES * v, v) : FN_MM(setzero)();
    for (p = 0; p < k; p++) {
        for (v = 0; v < V; v++) {
            b[v] = FN_LOADV(B + p * ldb + FN_LANES * v, v);
            FN_IN_REGISTER(b[v]);
        }
        for (i = 0; i < R; i++) {
            const FN_VEC a = FN_MM(set1)(A[i * a_row + p * a_step]);
            for (v = 0; v < V; v++)
                acc[i][v] = FN_MM(fmadd)(a, b[v], acc[i][v]);
        }
    }
    if (bias) {
        for (v = 0; v < V; v++)
            b[v] = FN_LOADV(bias + FN_LANES * v, v);
        for (i = 0; i < R; i++)
            for (v = 0; v < V; v++)
                acc[i][v] = FN_MM(add)(acc[i][v], b[v]);
    }
    if (scale)
        for (i = 0; i < R; i++)
            for (v = 0; v < V; v++)
                acc[i][v] = FN_MM(mul)(acc[i][v], FN_LOADV(scale + i * lds + FN_LANES * v, v));
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            FN_STOREV(C + i * ldc + FN_LANES * v, v, acc[i][v]);
}

/* One column panel, rows [0, m): tiles of RMAX rows, then one of the rows left
 * (TRANS, RMAX, V and MASKED constants: no dispatch inside the sweep). */
FN_TILE void
FN_NAME(column)(const int TRANS, const int RMAX, const int V, const int MASKED, ptrdiff_t m,
                ptrdiff_t k, const FN_REAL *A, ptrdiff_t lda, const FN_REAL *B, ptrdiff_t ldb,
                FN_REAL *C, ptrdiff_t ldc, FN_MASK_T mlast, int accumulate, const FN_REAL *bias,
                const FN_REAL *scale, ptrdiff_t lds)
{
    ptrdiff_t i0;
#define FN_TILE_R(RR, X)                                                                    \
    FN_NAME(tile)(TRANS, RR, V, MASKED, k, A + (TRANS ? i0 : i0 * lda), lda, B, ldb,        \
                  C + i0 * ldc, ldc, mlast, accumulate, bias, scale ? scale + i0 * lds : NULL, \
                  lds)
    for (i0 = 0; i0 + RMAX <= m; i0 += RMAX)
        FN_TILE_R(RMAX, 0);
    switch (m - i0) { FN_CASES(FN_TILE_ROWS, RMAX - 1, FN_TILE_R, 0) }
#undef FN_TILE_R
}

/* C (m x n) (+)= op(A) B (+ bias) (times scale) in tiles of at most RMAX rows x
 * VMAX vectors (TRANS, RMAX and VMAX constants): column panels of VMAX vectors
 * (the last one as many as the columns left need, its last vector masked), each
 * swept over the rows of C. */
FN_TILE void
FN_NAME(tiles)(const int TRANS, const int RMAX, const int VMAX, ptrdiff_t m, ptrdiff_t n,
               ptrdiff_t k, const FN_REAL *A, ptrdiff_t lda, const FN_REAL *B, ptrdiff_t ldb,
               FN_REAL *C, ptrdiff_t ldc, int accumulate, const FN_REAL *bias,
               const FN_REAL *scale, ptrdiff_t lds)
{
    const ptrdiff_t width = FN_LANES * VMAX;
    ptrdiff_t j0;
    for (j0 = 0; j0 < n; j0 += width) {
        const ptrdiff_t w = n - j0 < width ? n - j0 : width;
        const int V = (int)((w + FN_LANES - 1) / FN_LANES);
        const FN_MASK_T mlast = FN_MASK((int)(w - FN_LANES * (V - 1)));
        const FN_REAL *bj = bias ? bias + j0 : NULL;
#define FN_COLUMN(VV, MM)                                                                   \
        FN_NAME(column)(TRANS, RMAX, VV, MM, m, k, A, lda, B + j0, ldb, C + j0, ldc, mlast,  \
                        accumulate, bj, scale ? scale + j0 : NULL, lds)
        FN_SWITCH_V(V, w % FN_LANES != 0, FN_NARROW_VECS, VMAX, FN_COLUMN);
#undef FN_COLUMN
    }
}

/* C (m x n) = op(A) B (accumulate = 0) or C += op(A) B (accumulate = 1), op(A)
 * = A of shape (m, k), or with trans A^T, A of shape (k, m); B (k, n); rows with
 * strides lda, ldb, ldc. With bias != NULL, bias[j] is added last (to the
 * finished sum, as a separate pass would add it: the same result, one store
 * fewer); with scale != NULL (not with trans), the result is multiplied by
 * scale[i * lds + j] (the same way). C of one or two rows with trans (the weight
 * gradient of a layer of one or two units) takes 2 x FN_NARROW_VECS tiles: more
 * columns per pass over the k rows of A and B. */
FN_KERNEL void
FN_NAME(gemm_xn)(int trans, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, const FN_REAL *A,
                 ptrdiff_t lda, const FN_REAL *B, ptrdiff_t ldb, FN_REAL *C, ptrdiff_t ldc,
                 int accumulate, const FN_REAL *bias, const FN_REAL *scale, ptrdiff_t lds)
{
    if (!trans)
        FN_NAME(tiles)(0, FN_TILE_ROWS, FN_TILE_VECS, m, n, k, A, lda, B, ldb, C, ldc,
                       accumulate, bias, scale, lds);
    else if (m <= 2)
        FN_NAME(tiles)(1, 2, FN_NARROW_VECS, m, n, k, A, lda, B, ldb, C, ldc, accumulate, bias,
                       NULL, 0);
    else
        FN_NAME(tiles)(1, FN_TILE_ROWS, FN_TILE_VECS, m, n, k, A, lda, B, ldb, C, ldc,
                       accumulate, bias, NULL, 0);
}

/* C (m x n) (+)= A W^T (+ bias), W of shape (n, k): W^T is packed FN_TILE_VECS
 * vectors of columns at a time, FN_KC of k per chunk, so that the tiles read
 * whole vectors of them. The chunk (at most 128 x 32 doubles or 128 x 64 floats, 32 KiB) lives on
 * the stack: kernels do not allocate. */
FN_KERNEL void
FN_NAME(gemm_nt)(ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, const FN_REAL *A, ptrdiff_t lda,
                 const FN_REAL *W, ptrdiff_t ldw, FN_REAL *C, ptrdiff_t ldc, int accumulate,
                 const FN_REAL *bias)
{
    enum { WIDTH = FN_LANES * FN_TILE_VECS };
    FN_REAL pack[FN_KC * WIDTH] __attribute__((aligned(64)));
    ptrdiff_t j0, k0;
    for (j0 = 0; j0 < n; j0 += WIDTH) {
        const ptrdiff_t w = n - j0 < WIDTH ? n - j0 : WIDTH;
        for (k0 = 0; k0 < k; k0 += FN_KC) {
            const ptrdiff_t kc = k - k0 < FN_KC ? k - k0 : FN_KC;
            FN_VT(fn_pack_wt)(W, ldw, j0, w, k0, kc, pack, WIDTH);
            FN_NAME(gemm_xn)(0, m, w, kc, A + k0, lda, pack, WIDTH, C + j0, ldc,
                             accumulate || k0 > 0, bias && k0 + kc == k ? bias + j0 : NULL,
                             NULL, 0);
        }
    }
}

/* The one row-major GEMM of this instruction set: C (m x n, row stride ldc)
 * = op(A) op(B) (+ C if accumulate) (+ bias[j] in every row, if bias != NULL)
 * (times scale[i * lds + j], if scale != NULL: 'N','N' only), op(X) = X for
 * 'N', X^T for 'T'; op(A) is m x k, op(B) k x n. Returns 1 when done, 0 when
 * declined ('T','T', a scale with another pair, or a forward product of fewer
 * than FN_LANES columns without FN_DOTS): the caller then computes it
 * (C untouched). */
FN_KERNEL int
FN_NAME(gemm)(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, const FN_REAL *A,
              ptrdiff_t lda, const FN_REAL *B, ptrdiff_t ldb, int accumulate, FN_REAL *C,
              ptrdiff_t ldc, const FN_REAL *bias, const FN_REAL *scale, ptrdiff_t lds)
{
    if (scale && (ta != 'N' || tb != 'N'))
        return 0;
    if (tb == 'N') {
        FN_NAME(gemm_xn)(ta != 'N', m, n, k, A, lda, B, ldb, C, ldc, accumulate, bias, scale,
                         lds);
        return 1;
    }
    if (ta != 'N')
        return 0;
    if (n >= FN_LANES || FN_BROADCAST_NARROW(n, k)) {
        FN_NAME(gemm_nt)(m, n, k, A, lda, B, ldb, C, ldc, accumulate, bias);
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
#undef FN_IN_REGISTER
#undef FN_LOADV
#undef FN_TILE
#undef FN_KERNEL
#undef FN_LANES
#undef FN_MM
#undef FN_VEC
#undef FN_MASK_T
#undef FN_MASK
#undef FN_NAME
#undef FN_CAT3
#undef FN_CAT3_
#undef FN_DOTS
/* The instruction set's parameters, after its last value type (float): the
 * next instruction set defines its own. */
#if FN_VT_BITS == 32
#undef FN_BITS
#undef FN_TARGET
#undef FN_MASK_T_64
#undef FN_MASK_T_32
#undef FN_MASK_64
#undef FN_MASK_32
#undef FN_LOADM
#undef FN_STOREM
#undef FN_TILE_ROWS
#undef FN_TILE_VECS
#undef FN_NARROW_VECS
#undef FN_BROADCAST_NARROW
#undef FN_DOTS_FILE
#endif
