/* AVX-512 dot products for forward products of layers of fewer units than one
 * vector (8 doubles, 16 floats) on many sources (few sources go to the tiles:
 * FN_BROADCAST_NARROW in _simd.h), where a vector of units would be mostly
 * empty: 8 rows x 1 or 2 units per tile, each sum reduced across its lanes in
 * a fixed order. The one kernel that only AVX-512 has (on AVX2 the loops of
 * _loops.h serve these layers, whose dot products suit them), so it is not part
 * of _tiles.h; _simd.h names it as the AVX-512 set's FN_DOTS_FILE, which
 * _tiles.h includes once per value type with its macros (FN_NAME, FN_VEC,
 * FN_MM, FN_LANES, FN_MASK, FN_REAL) set, and hands on as FN_DOTS. No include
 * guard: a template.
 */

/* The sums of the lanes of each of v[0..7] into out[0..7], in a fixed order. */
#if FN_VT_BITS == 64
/* Pairs of lanes, then halves of 128-bit lanes, then 256-bit halves: 21
 * instructions against 48 for eight separate reductions. */
__attribute__((target(FN_TARGET), always_inline)) static inline void
FN_NAME(sum8)(const __m512d *v, double *out)
{
    const __m512d a0 = _mm512_add_pd(_mm512_unpacklo_pd(v[0], v[1]), _mm512_unpackhi_pd(v[0], v[1]));
    const __m512d a1 = _mm512_add_pd(_mm512_unpacklo_pd(v[2], v[3]), _mm512_unpackhi_pd(v[2], v[3]));
    const __m512d a2 = _mm512_add_pd(_mm512_unpacklo_pd(v[4], v[5]), _mm512_unpackhi_pd(v[4], v[5]));
    const __m512d a3 = _mm512_add_pd(_mm512_unpacklo_pd(v[6], v[7]), _mm512_unpackhi_pd(v[6], v[7]));
    /* b0 = [v0 lo, v1 lo, v0 hi, v1 hi, v2 lo, v3 lo, v2 hi, v3 hi] (lo: lanes 0-3, hi: 4-7) */
    const __m512d b0 = _mm512_add_pd(_mm512_shuffle_f64x2(a0, a1, 0x88), _mm512_shuffle_f64x2(a0, a1, 0xDD));
    const __m512d b1 = _mm512_add_pd(_mm512_shuffle_f64x2(a2, a3, 0x88), _mm512_shuffle_f64x2(a2, a3, 0xDD));
    const __m512i lo = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0);
    const __m512i hi = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
    _mm512_store_pd(out, _mm512_add_pd(_mm512_permutex2var_pd(b0, lo, b1),
                                       _mm512_permutex2var_pd(b0, hi, b1)));
}
#else
/* The 256-bit halves of each, then horizontal adds of pairs (lanes 0+1, 2+3
 * of each 128-bit lane), twice, then the 128-bit halves. */
__attribute__((target(FN_TARGET), always_inline)) static inline void
FN_NAME(sum8)(const __m512 *v, float *out)
{
    __m256 h[8];
    int i;
    for (i = 0; i < 8; i++)
        h[i] = _mm256_add_ps(_mm512_castps512_ps256(v[i]), _mm512_extractf32x8_ps(v[i], 1));
    /* t0 = [h0 h1 h2 h3 (lanes 0-3) | h0 h1 h2 h3 (lanes 4-7)], t1 the same of h4-h7 */
    const __m256 t0 = _mm256_hadd_ps(_mm256_hadd_ps(h[0], h[1]), _mm256_hadd_ps(h[2], h[3]));
    const __m256 t1 = _mm256_hadd_ps(_mm256_hadd_ps(h[4], h[5]), _mm256_hadd_ps(h[6], h[7]));
    _mm256_store_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(t0, t1, 0x20),
                                       _mm256_permute2f128_ps(t0, t1, 0x31)));
}
#endif

/* Eight rows times UNITS (1 or 2) units of FN_NAME(dots): 8 * UNITS independent
 * vector sums, enough to keep both FMA pipes busy. */
__attribute__((target(FN_TARGET), always_inline)) static inline void
FN_NAME(dots_tile)(const int UNITS, ptrdiff_t s_last, FN_MASK_T mt, const FN_REAL *A,
                   ptrdiff_t lda, const FN_REAL *W, ptrdiff_t ldw, const FN_REAL *b,
                   FN_REAL *Z, ptrdiff_t ldz)
{
    FN_VEC c[2][8], x[8], v[2];
    FN_REAL out[2][8] __attribute__((aligned(64)));
    ptrdiff_t s;
    int i, k;
    for (k = 0; k < UNITS; k++)
        for (i = 0; i < 8; i++)
            c[k][i] = FN_MM(setzero)();
    for (s = 0; s < s_last; s += FN_LANES) {
        for (k = 0; k < UNITS; k++)
            v[k] = FN_MM(loadu)(W + k * ldw + s);
        for (i = 0; i < 8; i++) {
            x[i] = FN_MM(loadu)(A + i * lda + s);
            for (k = 0; k < UNITS; k++)
                c[k][i] = FN_MM(fmadd)(x[i], v[k], c[k][i]);
        }
    }
    for (k = 0; k < UNITS; k++)
        v[k] = FN_LOADM(W + k * ldw + s, mt);
    for (i = 0; i < 8; i++) {
        x[i] = FN_LOADM(A + i * lda + s, mt);
        for (k = 0; k < UNITS; k++)
            c[k][i] = FN_MM(fmadd)(x[i], v[k], c[k][i]);
    }
    for (k = 0; k < UNITS; k++)
        FN_NAME(sum8)(c[k], out[k]);
    /* (the bias added to each finished sum, as one vector add of it would) */
    for (i = 0; i < 8; i++)
        for (k = 0; k < UNITS; k++)
            Z[i * ldz + k] = b ? out[k][i] + b[k] : out[k][i];
}

/* Z[r, u] = sum_s A[r, s] W[u, s] (+ b[u] if b != NULL), W of shape (n_out, n_src)
 * with row stride ldw, as dot products (n_src >= 1). */
__attribute__((target(FN_TARGET), unused)) static void
FN_NAME(dots)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const FN_REAL *A, ptrdiff_t lda,
              const FN_REAL *W, ptrdiff_t ldw, const FN_REAL *b, FN_REAL *Z, ptrdiff_t ldz)
{
    ptrdiff_t r = 0, u, s;
    const FN_MASK_T mt = FN_MASK((int)(n_src % FN_LANES ? n_src % FN_LANES : FN_LANES));
    const ptrdiff_t s_last = (n_src - 1) / FN_LANES * FN_LANES;  /* start of the (masked) last vector */
    for (; r + 8 <= nb; r += 8) {
        for (u = 0; u + 2 <= n_out; u += 2)
            FN_NAME(dots_tile)(2, s_last, mt, A + r * lda, lda, W + u * ldw, ldw,
                               b ? b + u : NULL, Z + r * ldz + u, ldz);
        if (u < n_out)
            FN_NAME(dots_tile)(1, s_last, mt, A + r * lda, lda, W + u * ldw, ldw,
                               b ? b + u : NULL, Z + r * ldz + u, ldz);
    }
    for (; r < nb; r++) {
        const FN_REAL *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const FN_REAL *w = W + u * ldw;
            FN_VEC c = FN_MM(setzero)();
            for (s = 0; s < s_last; s += FN_LANES)
                c = FN_MM(fmadd)(FN_MM(loadu)(a + s), FN_MM(loadu)(w + s), c);
            c = FN_MM(fmadd)(FN_LOADM(a + s, mt), FN_LOADM(w + s, mt), c);
            Z[r * ldz + u] = b ? FN_MM(reduce_add)(c) + b[u] : FN_MM(reduce_add)(c);
        }
    }
}
