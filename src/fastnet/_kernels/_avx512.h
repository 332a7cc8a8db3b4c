/* AVX-512 layer products, used for every layer product when the CPU has
 * AVX-512F/DQ (checked at run time; see gemm_* in _types.pxd for the rules).
 *
 * Why our own: the layers of small nets are skinny (1-64 units), where a
 * general BLAS spends much of its time packing and on edge cases, and the
 * OpenBLAS that SciPy ships is often held to its AVX2 kernels
 * (OPENBLAS_CORETYPE). Register-tiled products over one block of rows (the
 * block is sized to stay in L2, its rows start on cache lines) take the benchmark cases'
 * case E from 1.56 to 0.77 ms per epoch and G from 4.36 to 2.10 on an AMD EPYC
 * (Zen 5), and beat OpenBLAS's own AVX-512 kernels on wide layers too.
 *
 * Three kernels, all row-major as in _types.pxd:
 *   fn512_panel     C[r, j] (+)= sum_p L[r, p] P[p, j]   (broadcast L, vectors of P rows)
 *                   -- the forward product (P = packed W^T) and back-propagation (P = W);
 *   fn512_gradient  G[u, s] += sum_r D[r, u] A[r, s]      (broadcast D, vectors of A rows);
 *   fn512_dots      Z[r, u] = sum_s A[r, s] W[u, s]       (dot products, for layers of < 8 units).
 * Every sum runs in a fixed order written in the code (no reassociation
 * flags), so a run is bit-for-bit reproducible on one machine; the order
 * differs from the AVX2 loops and from BLAS, so results differ in the last
 * bits between machines with and without AVX-512 (as with OpenBLAS itself).
 *
 * Set FASTNET_SIMD=avx2 (the AVX2 tiles of _avx2.h) or FASTNET_SIMD=none (the
 * loops of _loops.h and BLAS) in the environment, read once when a kernel module
 * is imported, to use a lower level; the tests do this to check every path
 * against the NumPy oracle. Building with -DFASTNET_NO_SIMD_TILES (e.g. through
 * FASTNET_CFLAGS) leaves out both sets of tiles; compilers other than GCC >= 10
 * on x86-64 leave them out too.
 */
#ifndef FASTNET_AVX512_H
#define FASTNET_AVX512_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_avx2.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && (__GNUC__ >= 10) \
    && !defined(FASTNET_NO_SIMD_TILES)
#define FASTNET_HAVE_AVX512 1
#include <immintrin.h>
#define FN512 __attribute__((target("avx512f,avx512dq,avx512vl,fma"), unused)) static
#define FN512_TILE __attribute__((target("avx512f,avx512dq,avx512vl,fma"), always_inline)) static inline
#else
#define FASTNET_HAVE_AVX512 0
#endif

/* Which products run (one copy per extension module, as the header is static;
 * fn_simd_init() runs at module import, so the kernels only read it):
 *   -1 not decided yet, 0 the loops of _loops.h and BLAS, 1 the AVX2 tiles of
 *   _avx2.h, 2 the AVX-512 kernels here.
 * The CPU decides; FASTNET_SIMD=avx2 or FASTNET_SIMD=none in the environment caps
 * the level (for tests, and for comparing the paths on one machine). */
static int fn_simd_state = -1;

__attribute__((unused)) static int
fn_simd_init(void)
{
    const char *cap = getenv("FASTNET_SIMD");
    int level = 0;
#if FASTNET_HAVE_AVX512 || FASTNET_HAVE_AVX2_TILES
    __builtin_cpu_init();
    /* libgcc's checks include the OS saving the vector registers (XCR0). */
#endif
#if FASTNET_HAVE_AVX2_TILES
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        level = 1;
#endif
#if FASTNET_HAVE_AVX512
    if (level == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
        level = 2;
#endif
    if (cap != NULL && strcmp(cap, "avx2") == 0 && level > 1)
        level = 1;
    else if (cap != NULL && strcmp(cap, "none") == 0)
        level = 0;
    fn_simd_state = level;
    return level;
}

/* The highest level this build contains (the CPU may allow less). */
__attribute__((unused)) static int
fn_simd_compiled(void)
{
    return FASTNET_HAVE_AVX512 ? 2 : FASTNET_HAVE_AVX2_TILES ? 1 : 0;
}

__attribute__((unused)) static inline int
fn_simd_level(void)
{
    return fn_simd_state < 0 ? fn_simd_init() : fn_simd_state;
}

#if FASTNET_HAVE_AVX512

/* Lanes [0, w) of a vector of 8: the mask for a row tail of w (w may be <= 0 or > 8). */
#define FN512_MASK(w) ((__mmask8)((w) >= 8 ? 0xFF : (w) <= 0 ? 0 : (1u << (w)) - 1u))

/* One tile of fn512_panel: R rows x V vectors of 8 columns; vector v covers
 * columns [8v, 8v + 8) masked by m[v]. R and V are constants at every call, so
 * the accumulators live in registers (R*V + V + 1 <= 32 zmm). */
FN512_TILE void
fn512_panel_tile(const int R, const int V, ptrdiff_t np,
                 const double *L, ptrdiff_t ldl, const double *P, ptrdiff_t ldp,
                 double *C, ptrdiff_t ldc, const __mmask8 *m, int accumulate,
                 const double *bias)
{
    __m512d acc[6][4], pv[4];
    ptrdiff_t p;
    int i, v;
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            acc[i][v] = accumulate ? _mm512_maskz_loadu_pd(m[v], C + i * ldc + 8 * v)
                                   : _mm512_setzero_pd();
    for (p = 0; p < np; p++) {
        for (v = 0; v < V; v++)
            pv[v] = _mm512_maskz_loadu_pd(m[v], P + p * ldp + 8 * v);
        for (i = 0; i < R; i++) {
            const __m512d l = _mm512_set1_pd(L[i * ldl + p]);
            for (v = 0; v < V; v++)
                acc[i][v] = _mm512_fmadd_pd(l, pv[v], acc[i][v]);
        }
    }
    if (bias) {
        for (v = 0; v < V; v++)
            pv[v] = _mm512_maskz_loadu_pd(m[v], bias + 8 * v);
        for (i = 0; i < R; i++)
            for (v = 0; v < V; v++)
                acc[i][v] = _mm512_add_pd(acc[i][v], pv[v]);
    }
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            _mm512_mask_storeu_pd(C + i * ldc + 8 * v, m[v], acc[i][v]);
}

#define FN512_PANEL_ROWS 6

/* C[r, j] = sum_p L[r, p] P[p, j] (accumulate = 0) or C[r, j] += ... (accumulate = 1),
 * r < nb, j < n, p < np; rows of L, P and C have strides ldl, ldp and ldc. With
 * bias != NULL, bias[j] is added last (to the finished sum, as a separate pass
 * would add it: the same result, one store fewer). */
FN512 void
fn512_panel(ptrdiff_t nb, ptrdiff_t n, ptrdiff_t np, const double *L, ptrdiff_t ldl,
            const double *P, ptrdiff_t ldp, double *C, ptrdiff_t ldc, int accumulate,
            const double *bias)
{
    ptrdiff_t j0, r;
    for (j0 = 0; j0 < n; j0 += 32) {
        const ptrdiff_t w = n - j0 < 32 ? n - j0 : 32;
        const int V = (int)((w + 7) / 8);
        const __mmask8 m[4] = {FN512_MASK(w), FN512_MASK(w - 8), FN512_MASK(w - 16),
                               FN512_MASK(w - 24)};
        const double *Pj = P + j0;
        const double *bj = bias ? bias + j0 : NULL;
        double *Cj = C + j0;
#define FN512_PANEL_CASE(VV)                                                              \
        case VV:                                                                          \
            for (r = 0; r + FN512_PANEL_ROWS <= nb; r += FN512_PANEL_ROWS)                \
                fn512_panel_tile(FN512_PANEL_ROWS, VV, np, L + r * ldl, ldl, Pj, ldp,     \
                                 Cj + r * ldc, ldc, m, accumulate, bj);                   \
            for (; r < nb; r++)                                                           \
                fn512_panel_tile(1, VV, np, L + r * ldl, ldl, Pj, ldp, Cj + r * ldc, ldc, \
                                 m, accumulate, bj);                                      \
            break;
        r = 0;
        switch (V) {
            FN512_PANEL_CASE(1)
            FN512_PANEL_CASE(2)
            FN512_PANEL_CASE(3)
            FN512_PANEL_CASE(4)
        }
#undef FN512_PANEL_CASE
    }
}

/* Inputs are packed in chunks of this many; the packed W^T chunk (FN512_KC x 32
 * doubles, 32 KiB) lives on the stack: kernels do not allocate. */
#define FN512_KC 128

/* Z[r, u] = sum_s A[r, s] W[u, s] (+ b[u] if b != NULL)  (W is (n_out, n_src),
 * row-major): W^T is packed 32 units at a time so that the panel kernel reads
 * whole vectors of units. */
FN512 void
fn512_forward(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
              ptrdiff_t lda, const double *W, const double *b, double *Z, ptrdiff_t ldz)
{
    double pack[FN512_KC * 32] __attribute__((aligned(64)));
    ptrdiff_t j0, k0;
    for (j0 = 0; j0 < n_out; j0 += 32) {
        const ptrdiff_t w = n_out - j0 < 32 ? n_out - j0 : 32;
        for (k0 = 0; k0 < n_src; k0 += FN512_KC) {
            const ptrdiff_t kc = n_src - k0 < FN512_KC ? n_src - k0 : FN512_KC;
            fn_pack_wt(W, n_src, j0, w, k0, kc, pack, 32);
            fn512_panel(nb, w, kc, A + k0, lda, pack, 32, Z + j0, ldz, k0 > 0,
                        b && k0 + kc == n_src ? b + j0 : NULL);
        }
    }
}

/* One tile of fn512_gradient: U units x V vectors of 8 inputs, summed over nb
 * rows in row order. MASKED (a constant) says whether the vectors need the masks
 * m[v] (the last tile of a row) or are all full: mask registers are few, and
 * reloading them every row costs as much as the loads. */
FN512_TILE void
fn512_gradient_tile(const int U, const int V, const int MASKED, ptrdiff_t nb,
                    const double *D, ptrdiff_t ldd, const double *A, ptrdiff_t lda,
                    double *G, ptrdiff_t ldg, const __mmask8 *m)
{
    __m512d acc[6][8], a[8];
    ptrdiff_t r;
    int u, v;
    for (u = 0; u < U; u++)
        for (v = 0; v < V; v++)
            acc[u][v] = MASKED ? _mm512_maskz_loadu_pd(m[v], G + u * ldg + 8 * v)
                               : _mm512_loadu_pd(G + u * ldg + 8 * v);
    for (r = 0; r < nb; r++) {
        for (v = 0; v < V; v++)
            a[v] = MASKED ? _mm512_maskz_loadu_pd(m[v], A + r * lda + 8 * v)
                          : _mm512_loadu_pd(A + r * lda + 8 * v);
        for (u = 0; u < U; u++) {
            const __m512d d = _mm512_set1_pd(D[r * ldd + u]);
            for (v = 0; v < V; v++)
                acc[u][v] = _mm512_fmadd_pd(d, a[v], acc[u][v]);
        }
    }
    for (u = 0; u < U; u++)
        for (v = 0; v < V; v++) {
            if (MASKED)
                _mm512_mask_storeu_pd(G + u * ldg + 8 * v, m[v], acc[u][v]);
            else
                _mm512_storeu_pd(G + u * ldg + 8 * v, acc[u][v]);
        }
}

/* G[u, s] += sum_r D[r, u] A[r, s]  (G is (n_out, n_src), row-major). Layers of
 * one or two units take 64 inputs per pass, wider ones 6 units x 32 inputs; the
 * last pass over a row takes only as many vectors as the inputs left need. */
FN512 void
fn512_gradient(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *D,
               ptrdiff_t ldd, const double *A, ptrdiff_t lda, double *G)
{
    ptrdiff_t s0, u;
/* One call of the tile for U units and the vectors the inputs left need: all
 * VMAX of them unmasked, or the last 1..VMAX (w < 8 VMAX) masked. */
#define FN512_GT(U, V, MASKED) fn512_gradient_tile(U, V, MASKED, nb, Du, ldd, As, lda, Gu, n_src, m)
#define FN512_GRAD4(U)                                                                       \
    do {                                                                                     \
        switch (w >= 32 ? 0 : (w + 7) / 8) {                                                 \
        case 0: FN512_GT(U, 4, 0); break;                                                    \
        case 1: FN512_GT(U, 1, 1); break;                                                    \
        case 2: FN512_GT(U, 2, 1); break;                                                    \
        case 3: FN512_GT(U, 3, 1); break;                                                    \
        default: FN512_GT(U, 4, 1); break;                                                   \
        }                                                                                    \
    } while (0)
#define FN512_GRAD8(U)                                                                       \
    do {                                                                                     \
        switch (w >= 64 ? 0 : (w + 7) / 8) {                                                 \
        case 0: FN512_GT(U, 8, 0); break;                                                    \
        case 1: FN512_GT(U, 1, 1); break;                                                    \
        case 2: FN512_GT(U, 2, 1); break;                                                    \
        case 3: FN512_GT(U, 3, 1); break;                                                    \
        case 4: FN512_GT(U, 4, 1); break;                                                    \
        case 5: FN512_GT(U, 5, 1); break;                                                    \
        case 6: FN512_GT(U, 6, 1); break;                                                    \
        case 7: FN512_GT(U, 7, 1); break;                                                    \
        default: FN512_GT(U, 8, 1); break;                                                   \
        }                                                                                    \
    } while (0)
    if (n_out <= 2) {
        for (s0 = 0; s0 < n_src; s0 += 64) {
            const ptrdiff_t w = n_src - s0;
            const __mmask8 m[8] = {FN512_MASK(w), FN512_MASK(w - 8), FN512_MASK(w - 16),
                                   FN512_MASK(w - 24), FN512_MASK(w - 32), FN512_MASK(w - 40),
                                   FN512_MASK(w - 48), FN512_MASK(w - 56)};
            const double *Du = D, *As = A + s0;
            double *Gu = G + s0;
            if (n_out == 2)
                FN512_GRAD8(2);
            else
                FN512_GRAD8(1);
        }
        return;
    }
    for (s0 = 0; s0 < n_src; s0 += 32) {
        const ptrdiff_t w = n_src - s0;
        const __mmask8 m[4] = {FN512_MASK(w), FN512_MASK(w - 8), FN512_MASK(w - 16),
                               FN512_MASK(w - 24)};
        const double *As = A + s0;
        for (u = 0; u < n_out; u += 6) {
            const double *Du = D + u;
            double *Gu = G + u * n_src + s0;
            switch (n_out - u < 6 ? n_out - u : 6) {
            case 6: FN512_GRAD4(6); break;
            case 5: FN512_GRAD4(5); break;
            case 4: FN512_GRAD4(4); break;
            case 3: FN512_GRAD4(3); break;
            case 2: FN512_GRAD4(2); break;
            default: FN512_GRAD4(1); break;
            }
        }
    }
#undef FN512_GT
#undef FN512_GRAD4
#undef FN512_GRAD8
}

/* The sums of the 8 lanes of each of v[0..7], as one vector (lane i: v[i]),
 * in a fixed order: pairs of lanes, then halves of 128-bit lanes, then 256-bit
 * halves. 21 instructions against 48 for eight separate reductions. */
FN512_TILE __m512d
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
FN512_TILE void
fn512_dots_tile(const int UNITS, ptrdiff_t n_src, ptrdiff_t s_last, __mmask8 mt,
                const double *A, ptrdiff_t lda, const double *W, const double *b,
                double *Z, ptrdiff_t ldz)
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
            v[k] = _mm512_loadu_pd(W + k * n_src + s);
        for (i = 0; i < 8; i++) {
            x[i] = _mm512_loadu_pd(A + i * lda + s);
            for (k = 0; k < UNITS; k++)
                c[k][i] = _mm512_fmadd_pd(x[i], v[k], c[k][i]);
        }
    }
    for (k = 0; k < UNITS; k++)
        v[k] = _mm512_maskz_loadu_pd(mt, W + k * n_src + s);
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

/* Z[r, u] = sum_s A[r, s] W[u, s] (+ b[u] if b != NULL) as dot products: for
 * layers of fewer than 8 units, where a vector of units would be mostly empty. */
FN512 void
fn512_dots(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
           ptrdiff_t lda, const double *W, const double *b, double *Z, ptrdiff_t ldz)
{
    ptrdiff_t r = 0, u, s;
    const __mmask8 mt = FN512_MASK(n_src % 8 ? n_src % 8 : 8);
    const ptrdiff_t s_last = (n_src - 1) / 8 * 8;  /* start of the (masked) last vector */
    for (; r + 8 <= nb; r += 8) {
        for (u = 0; u + 2 <= n_out; u += 2)
            fn512_dots_tile(2, n_src, s_last, mt, A + r * lda, lda, W + u * n_src,
                            b ? b + u : NULL, Z + r * ldz + u, ldz);
        if (u < n_out)
            fn512_dots_tile(1, n_src, s_last, mt, A + r * lda, lda, W + u * n_src,
                            b ? b + u : NULL, Z + r * ldz + u, ldz);
    }
    for (; r < nb; r++) {
        const double *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const double *w = W + u * n_src;
            __m512d c = _mm512_setzero_pd();
            for (s = 0; s < s_last; s += 8)
                c = _mm512_fmadd_pd(_mm512_loadu_pd(a + s), _mm512_loadu_pd(w + s), c);
            c = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(mt, a + s),
                                _mm512_maskz_loadu_pd(mt, w + s), c);
            Z[r * ldz + u] = b ? _mm512_reduce_add_pd(c) + b[u] : _mm512_reduce_add_pd(c);
        }
    }
}

#else /* no AVX-512 tiles in this build: stubs, never called (fn_simd_level() < 2) */

__attribute__((unused)) static void
fn512_panel(ptrdiff_t nb, ptrdiff_t n, ptrdiff_t np, const double *L, ptrdiff_t ldl,
            const double *P, ptrdiff_t ldp, double *C, ptrdiff_t ldc, int accumulate,
            const double *bias)
{ (void)nb; (void)n; (void)np; (void)L; (void)ldl; (void)P; (void)ldp; (void)C; (void)ldc;
  (void)accumulate; (void)bias; }

__attribute__((unused)) static void
fn512_forward(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
              ptrdiff_t lda, const double *W, const double *b, double *Z, ptrdiff_t ldz)
{ (void)nb; (void)n_out; (void)n_src; (void)A; (void)lda; (void)W; (void)b; (void)Z; (void)ldz; }

__attribute__((unused)) static void
fn512_dots(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
           ptrdiff_t lda, const double *W, const double *b, double *Z, ptrdiff_t ldz)
{ (void)nb; (void)n_out; (void)n_src; (void)A; (void)lda; (void)W; (void)b; (void)Z; (void)ldz; }

__attribute__((unused)) static void
fn512_gradient(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *D,
               ptrdiff_t ldd, const double *A, ptrdiff_t lda, double *G)
{ (void)nb; (void)n_out; (void)n_src; (void)D; (void)ldd; (void)A; (void)lda; (void)G; }

#endif /* FASTNET_HAVE_AVX512 */
#endif /* FASTNET_AVX512_H */
