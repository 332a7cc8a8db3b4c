/* AVX-512 dot products for forward products of layers of fewer than 8 units
 * on many sources (few sources go to the tiles: FN_BROADCAST_NARROW in _simd.h),
 * where a vector of units would be mostly empty: 8 rows x 1 or 2 units per
 * tile, each sum reduced across its 8 lanes in a fixed order. The one kernel
 * that only AVX-512 has (on AVX2 the loops of _loops.h serve these layers, whose
 * dot products suit them), so it is not part of _tiles.h; _simd.h includes it
 * inside the AVX-512 instantiation (FN_TARGET set) and hands it to _tiles.h as
 * FN_DOTS. No include guard: included once, from _simd.h.
 */

/* The sums of the 8 lanes of each of v[0..7], as one vector (lane i: v[i]),
 * in a fixed order: pairs of lanes, then halves of 128-bit lanes, then 256-bit
 * halves. 21 instructions against 48 for eight separate reductions. */
__attribute__((target(FN_TARGET), always_inline)) static inline __m512d
fn512_sum8(const __m512d *v)
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
    return _mm512_add_pd(_mm512_permutex2var_pd(b0, lo, b1), _mm512_permutex2var_pd(b0, hi, b1));
}

/* Eight rows times UNITS (1 or 2) units of fn512_dots: 8 * UNITS independent
 * 8-lane sums, enough to keep both FMA pipes busy. */
__attribute__((target(FN_TARGET), always_inline)) static inline void
fn512_dots_tile(const int UNITS, ptrdiff_t s_last, __mmask8 mt, const double *A,
                ptrdiff_t lda, const double *W, ptrdiff_t ldw, const double *b, double *Z,
                ptrdiff_t ldz)
{
    __m512d c[2][8], x[8], v[2];
    double out[2][8] __attribute__((aligned(64)));
    ptrdiff_t s;
    int i, k;
    for (k = 0; k < UNITS; k++)
        for (i = 0; i < 8; i++)
            c[k][i] = _mm512_setzero_pd();
    for (s = 0; s < s_last; s += 8) {
        for (k = 0; k < UNITS; k++)
            v[k] = _mm512_loadu_pd(W + k * ldw + s);
        for (i = 0; i < 8; i++) {
            x[i] = _mm512_loadu_pd(A + i * lda + s);
            for (k = 0; k < UNITS; k++)
                c[k][i] = _mm512_fmadd_pd(x[i], v[k], c[k][i]);
        }
    }
    for (k = 0; k < UNITS; k++)
        v[k] = _mm512_maskz_loadu_pd(mt, W + k * ldw + s);
    for (i = 0; i < 8; i++) {
        x[i] = _mm512_maskz_loadu_pd(mt, A + i * lda + s);
        for (k = 0; k < UNITS; k++)
            c[k][i] = _mm512_fmadd_pd(x[i], v[k], c[k][i]);
    }
    for (k = 0; k < UNITS; k++) {
        __m512d sum = fn512_sum8(c[k]);
        if (b)
            sum = _mm512_add_pd(sum, _mm512_set1_pd(b[k]));
        _mm512_store_pd(out[k], sum);
    }
    for (i = 0; i < 8; i++)
        for (k = 0; k < UNITS; k++)
            Z[i * ldz + k] = out[k][i];
}

/* Z[r, u] = sum_s A[r, s] W[u, s] (+ b[u] if b != NULL), W of shape (n_out, n_src)
 * with row stride ldw, as dot products (n_src >= 1). */
__attribute__((target(FN_TARGET), unused)) static void
fn512_dots(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A, ptrdiff_t lda,
           const double *W, ptrdiff_t ldw, const double *b, double *Z, ptrdiff_t ldz)
{
    ptrdiff_t r = 0, u, s;
    const __mmask8 mt = (__mmask8)((1u << (n_src % 8 ? n_src % 8 : 8)) - 1u);
    const ptrdiff_t s_last = (n_src - 1) / 8 * 8;  /* start of the (masked) last vector */
    for (; r + 8 <= nb; r += 8) {
        for (u = 0; u + 2 <= n_out; u += 2)
            fn512_dots_tile(2, s_last, mt, A + r * lda, lda, W + u * ldw, ldw,
                            b ? b + u : NULL, Z + r * ldz + u, ldz);
        if (u < n_out)
            fn512_dots_tile(1, s_last, mt, A + r * lda, lda, W + u * ldw, ldw,
                            b ? b + u : NULL, Z + r * ldz + u, ldz);
    }
    for (; r < nb; r++) {
        const double *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const double *w = W + u * ldw;
            __m512d c = _mm512_setzero_pd();
            for (s = 0; s < s_last; s += 8)
                c = _mm512_fmadd_pd(_mm512_loadu_pd(a + s), _mm512_loadu_pd(w + s), c);
            c = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(mt, a + s),
                                _mm512_maskz_loadu_pd(mt, w + s), c);
            Z[r * ldz + u] = b ? _mm512_reduce_add_pd(c) + b[u] : _mm512_reduce_add_pd(c);
        }
    }
}
