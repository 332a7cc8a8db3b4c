/* AVX2 register-tiled layer products: the kernels of _avx512.h for CPUs that
 * have AVX2 + FMA but not AVX-512 (checked at run time), with 4-lane vectors and
 * the 16 registers of AVX2:
 *   fn256_panel     C[r, j] (+)= sum_p L[r, p] P[p, j]   4 rows x 12 columns per tile;
 *   fn256_forward   Z = A W^T (+ b), W^T packed on the stack, through fn256_panel;
 *   fn256_gradient  G[u, s] += sum_r D[r, u] A[r, s]      4 units x 12 inputs per tile
 *                   (2 units x 20 inputs for layers of one or two units).
 * Narrow forward products (< 4 units) stay with the loops of _loops.h.
 * Partial vectors are read and written with masked loads and stores (which
 * never touch memory past the row); the stores happen once per tile.
 * Sums run in a fixed order, as in _avx512.h.
 */
#ifndef FASTNET_AVX2_H
#define FASTNET_AVX2_H

#include <stddef.h>

/* A chunk of W^T for the forward products of _avx2.h and _avx512.h:
 * pack[k * ldp + j] = W[(j0 + j) * n_src + k0 + k] for j < w, k < kc. */
__attribute__((unused)) static inline void
fn_pack_wt(const double *W, ptrdiff_t n_src, ptrdiff_t j0, ptrdiff_t w, ptrdiff_t k0,
           ptrdiff_t kc, double *pack, ptrdiff_t ldp)
{
    ptrdiff_t j, k;
    for (j = 0; j < w; j++) {
        const double *wrow = W + (j0 + j) * n_src + k0;
        for (k = 0; k < kc; k++)
            pack[k * ldp + j] = wrow[k];
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && (__GNUC__ >= 10) \
    && !defined(FASTNET_NO_SIMD_TILES)
#define FASTNET_HAVE_AVX2_TILES 1
#include <immintrin.h>
#define FN256 __attribute__((target("avx2,fma"), unused)) static
#define FN256_TILE __attribute__((target("avx2,fma"), always_inline)) static inline

/* Lanes [0, w) of a vector of 4 as a maskload mask (w may be <= 0 or > 4). */
FN256_TILE __m256i
fn256_mask(ptrdiff_t w)
{
    const __m256i lanes = _mm256_set_epi64x(3, 2, 1, 0);
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(w < 0 ? 0 : w > 4 ? 4 : w), lanes);
}

/* One tile of fn256_panel: R rows x V vectors of 4 columns, w columns valid
 * (w > 4 (V - 1)). The last vector is masked when MASKED. */
FN256_TILE void
fn256_panel_tile(const int R, const int V, const int MASKED, ptrdiff_t np,
                 const double *L, ptrdiff_t ldl, const double *P, ptrdiff_t ldp,
                 double *C, ptrdiff_t ldc, ptrdiff_t w, __m256i mlast, int accumulate,
                 const double *bias)
{
    __m256d acc[4][3], pv[3];
    ptrdiff_t p;
    int i, v;
#define FN256_LOAD(ptr, vv) ((MASKED && (vv) == V - 1) ? _mm256_maskload_pd((ptr), mlast) \
                                                      : _mm256_loadu_pd(ptr))
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++)
            acc[i][v] = accumulate ? FN256_LOAD(C + i * ldc + 4 * v, v) : _mm256_setzero_pd();
    for (p = 0; p < np; p++) {
        for (v = 0; v < V; v++)
            pv[v] = FN256_LOAD(P + p * ldp + 4 * v, v);
        for (i = 0; i < R; i++) {
            const __m256d l = _mm256_broadcast_sd(L + i * ldl + p);
            for (v = 0; v < V; v++)
                acc[i][v] = _mm256_fmadd_pd(l, pv[v], acc[i][v]);
        }
    }
    if (bias) {
        for (v = 0; v < V; v++)
            pv[v] = FN256_LOAD(bias + 4 * v, v);
        for (i = 0; i < R; i++)
            for (v = 0; v < V; v++)
                acc[i][v] = _mm256_add_pd(acc[i][v], pv[v]);
    }
#undef FN256_LOAD
    for (i = 0; i < R; i++)
        for (v = 0; v < V; v++) {
            if (MASKED && v == V - 1)
                _mm256_maskstore_pd(C + i * ldc + 4 * v, mlast, acc[i][v]);
            else
                _mm256_storeu_pd(C + i * ldc + 4 * v, acc[i][v]);
        }
}

/* C[r, j] = sum_p L[r, p] P[p, j] (accumulate = 0) or += (accumulate = 1), then
 * + bias[j] if bias != NULL; as fn512_panel. */
FN256 void
fn256_panel(ptrdiff_t nb, ptrdiff_t n, ptrdiff_t np, const double *L, ptrdiff_t ldl,
            const double *P, ptrdiff_t ldp, double *C, ptrdiff_t ldc, int accumulate,
            const double *bias)
{
    ptrdiff_t j0, r;
    for (j0 = 0; j0 < n; j0 += 12) {
        const ptrdiff_t w = n - j0 < 12 ? n - j0 : 12;
        const int V = (int)((w + 3) / 4);
        const int masked = w % 4 != 0;
        const __m256i m = fn256_mask(w - 4 * (V - 1));
        const double *Pj = P + j0;
        const double *bj = bias ? bias + j0 : NULL;
        double *Cj = C + j0;
#define FN256_PANEL(VV, MM)                                                                  \
        do {                                                                                 \
            for (r = 0; r + 4 <= nb; r += 4)                                                 \
                fn256_panel_tile(4, VV, MM, np, L + r * ldl, ldl, Pj, ldp, Cj + r * ldc,     \
                                 ldc, w, m, accumulate, bj);                                 \
            for (; r < nb; r++)                                                              \
                fn256_panel_tile(1, VV, MM, np, L + r * ldl, ldl, Pj, ldp, Cj + r * ldc,     \
                                 ldc, w, m, accumulate, bj);                                 \
        } while (0)
        r = 0;
        if (!masked) {
            if (V == 3) FN256_PANEL(3, 0);
            else if (V == 2) FN256_PANEL(2, 0);
            else FN256_PANEL(1, 0);
        } else {
            if (V == 3) FN256_PANEL(3, 1);
            else if (V == 2) FN256_PANEL(2, 1);
            else FN256_PANEL(1, 1);
        }
#undef FN256_PANEL
    }
}

#define FN256_KC 128

/* Z[r, u] = sum_s A[r, s] W[u, s] (+ b[u] if b != NULL); W^T packed 12 units at a
 * time (a 12 KiB stack buffer). */
FN256 void
fn256_forward(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
              ptrdiff_t lda, const double *W, const double *b, double *Z, ptrdiff_t ldz)
{
    double pack[FN256_KC * 12] __attribute__((aligned(32)));
    ptrdiff_t j0, k0;
    for (j0 = 0; j0 < n_out; j0 += 12) {
        const ptrdiff_t w = n_out - j0 < 12 ? n_out - j0 : 12;
        for (k0 = 0; k0 < n_src; k0 += FN256_KC) {
            const ptrdiff_t kc = n_src - k0 < FN256_KC ? n_src - k0 : FN256_KC;
            fn_pack_wt(W, n_src, j0, w, k0, kc, pack, 12);
            fn256_panel(nb, w, kc, A + k0, lda, pack, 12, Z + j0, ldz, k0 > 0,
                        b && k0 + kc == n_src ? b + j0 : NULL);
        }
    }
}

/* One tile of fn256_gradient: U units x V vectors of 4 inputs (w valid), summed
 * over nb rows in row order; the last vector masked when MASKED. */
FN256_TILE void
fn256_gradient_tile(const int U, const int V, const int MASKED, ptrdiff_t nb,
                    const double *D, ptrdiff_t ldd, const double *A, ptrdiff_t lda,
                    double *G, ptrdiff_t ldg, ptrdiff_t w, __m256i mlast)
{
    __m256d acc[4][5], a[5];
    ptrdiff_t r;
    int u, v;
#define FN256_LOAD(ptr, vv) ((MASKED && (vv) == V - 1) ? _mm256_maskload_pd((ptr), mlast) \
                                                      : _mm256_loadu_pd(ptr))
    for (u = 0; u < U; u++)
        for (v = 0; v < V; v++)
            acc[u][v] = FN256_LOAD(G + u * ldg + 4 * v, v);
    for (r = 0; r < nb; r++) {
        for (v = 0; v < V; v++)
            a[v] = FN256_LOAD(A + r * lda + 4 * v, v);
        for (u = 0; u < U; u++) {
            const __m256d d = _mm256_broadcast_sd(D + r * ldd + u);
            for (v = 0; v < V; v++)
                acc[u][v] = _mm256_fmadd_pd(d, a[v], acc[u][v]);
        }
    }
#undef FN256_LOAD
    for (u = 0; u < U; u++)
        for (v = 0; v < V; v++) {
            if (MASKED && v == V - 1)
                _mm256_maskstore_pd(G + u * ldg + 4 * v, mlast, acc[u][v]);
            else
                _mm256_storeu_pd(G + u * ldg + 4 * v, acc[u][v]);
        }
}

/* G[u, s] += sum_r D[r, u] A[r, s]  (G is (n_out, n_src), row-major). */
FN256 void
fn256_gradient(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *D,
               ptrdiff_t ldd, const double *A, ptrdiff_t lda, double *G)
{
    const int VMAX = n_out <= 2 ? 5 : 3, UMAX = n_out <= 2 ? 2 : 4;
    ptrdiff_t s0, u;
    for (s0 = 0; s0 < n_src; s0 += 4 * VMAX) {
        const ptrdiff_t w = n_src - s0 < 4 * VMAX ? n_src - s0 : 4 * VMAX;
        const int V = (int)((w + 3) / 4);
        const int masked = w % 4 != 0;
        const __m256i m = fn256_mask(w - 4 * (V - 1));
        const double *As = A + s0;
        for (u = 0; u < n_out; u += UMAX) {
            const int U = (int)(n_out - u < UMAX ? n_out - u : UMAX);
            const double *Du = D + u;
            double *Gu = G + u * n_src + s0;
#define FN256_GT(UU, VV, MM) fn256_gradient_tile(UU, VV, MM, nb, Du, ldd, As, lda, Gu, n_src, w, m)
#define FN256_GV(UU, V4, V5)                                                                 \
            do {                                                                             \
                if (masked) switch (V) {                                                     \
                    case 1: FN256_GT(UU, 1, 1); break;                                       \
                    case 2: FN256_GT(UU, 2, 1); break;                                       \
                    case 3: FN256_GT(UU, 3, 1); break;                                       \
                    case 4: FN256_GT(UU, V4, 1); break;                                      \
                    default: FN256_GT(UU, V5, 1); break;                                     \
                } else switch (V) {                                                          \
                    case 1: FN256_GT(UU, 1, 0); break;                                       \
                    case 2: FN256_GT(UU, 2, 0); break;                                       \
                    case 3: FN256_GT(UU, 3, 0); break;                                       \
                    case 4: FN256_GT(UU, V4, 0); break;                                      \
                    default: FN256_GT(UU, V5, 0); break;                                     \
                }                                                                            \
            } while (0)
            /* Wider tiles take at most 3 vectors (V <= 3 there): 4 and 5 only
             * for one or two units, so no instance needs more than 16 registers. */
            switch (U) {
            case 4: FN256_GV(4, 3, 3); break;
            case 3: FN256_GV(3, 3, 3); break;
            case 2: FN256_GV(2, 4, 5); break;
            default: FN256_GV(1, 4, 5); break;
            }
#undef FN256_GV
#undef FN256_GT
        }
    }
}

#else /* no AVX2 tiles in this build: stubs, never called (fn_simd_level() < 1) */
#define FASTNET_HAVE_AVX2_TILES 0

__attribute__((unused)) static void
fn256_panel(ptrdiff_t nb, ptrdiff_t n, ptrdiff_t np, const double *L, ptrdiff_t ldl,
            const double *P, ptrdiff_t ldp, double *C, ptrdiff_t ldc, int accumulate,
            const double *bias)
{ (void)nb; (void)n; (void)np; (void)L; (void)ldl; (void)P; (void)ldp; (void)C; (void)ldc;
  (void)accumulate; (void)bias; }

__attribute__((unused)) static void
fn256_forward(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A,
              ptrdiff_t lda, const double *W, const double *b, double *Z, ptrdiff_t ldz)
{ (void)nb; (void)n_out; (void)n_src; (void)A; (void)lda; (void)W; (void)b; (void)Z; (void)ldz; }

__attribute__((unused)) static void
fn256_gradient(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *D,
               ptrdiff_t ldd, const double *A, ptrdiff_t lda, double *G)
{ (void)nb; (void)n_out; (void)n_src; (void)D; (void)ldd; (void)A; (void)lda; (void)G; }

#endif /* AVX2 tiles */
#endif /* FASTNET_AVX2_H */
