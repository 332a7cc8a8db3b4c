/* Plain-loop layer products and activations for narrow layers (few units),
 * where BLAS wastes its width and its call overhead dominates. (On CPUs with
 * AVX-512 or AVX2 most products go to the register-tiled kernels of _tiles.h,
 * instantiated per instruction set in _simd.h, instead; these loops then serve
 * blocks of few rows, narrow forward products on AVX2, and other CPUs.)
 *
 * Row-major throughout, as in _types.pxd. Each function is compiled twice
 * (GCC function multi-versioning): for x86-64-v3 (AVX2 + FMA) and the portable
 * baseline; the loader picks the one the CPU runs. (An x86-64-v4 / AVX-512
 * clone was measured slower on these short loops: 0.0198 vs 0.0169 ms per
 * epoch on benchmark case A, cancer1 4+2.) So the build stays portable (no -march=native) yet uses wide vectors.
 * Results can therefore differ in the last bits between CPU generations (FMA
 * rounding), exactly as with OpenBLAS; on one machine a run is bit-for-bit
 * reproducible.
 *
 * No reassociation flags are used: every sum runs in a fixed order written in
 * the code, so the compiler vectorises only element-wise loops.
 */
#ifndef FASTNET_LOOPS_H
#define FASTNET_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "_activations.h"
#include "_cpu.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && (__GNUC__ >= 12) && !defined(FASTNET_NO_CLONES)
#define FASTNET_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), unused))
#elif defined(__GNUC__)
#define FASTNET_CLONES __attribute__((unused))
#else
#define FASTNET_CLONES
#endif

/* Four doubles as one value (GCC vector extension): AVX2 registers in the
 * x86-64-v3 clone, pairs of SSE2 registers in the portable one. */
typedef double fn_v4d __attribute__((vector_size(32)));

/* Unaligned load of four doubles, and the sum of the four lanes. Macros, not
 * functions: a function returning a vector would have a different ABI in each
 * clone. */
#define fn_load4(p) __extension__({ fn_v4d v_; memcpy(&v_, (p), sizeof v_); v_; })
#define fn_hsum4(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))

/* Dot products at least this long use four-lane partial sums (lane j adds the
 * terms s = j mod 4; a fixed order); shorter ones sum in index order. */
#define FASTNET_VECTOR_DOT_MIN 16

/* Z[r, u] = sum_s A[r, s] W[u, s]   (W is (n_out, n_src), row-major).
 * Four rows per pass: four independent dot products share each weight load. */
FASTNET_CLONES static void
fn_loops_forward(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                 const double *A, ptrdiff_t lda, const double *W,
                 double *Z, ptrdiff_t ldz)
{
    ptrdiff_t r = 0, u, s;
    const ptrdiff_t n_vec = n_src >= FASTNET_VECTOR_DOT_MIN ? n_src - n_src % 4 : 0;
    for (; r + 4 <= nb; r += 4) {
        const double *a0 = A + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        u = 0;
        /* Long dot products: two units per pass share each input load. */
        for (; n_vec && u + 2 <= n_out; u += 2) {
            const double *w = W + u * n_src, *x = w + n_src;
            fn_v4d v0 = {0.0, 0.0, 0.0, 0.0}, v1 = v0, v2 = v0, v3 = v0;
            fn_v4d y0 = v0, y1 = v0, y2 = v0, y3 = v0;
            double c[8];
            int i;
            for (s = 0; s < n_vec; s += 4) {
                const fn_v4d ws = fn_load4(w + s), xs = fn_load4(x + s);
                const fn_v4d b0 = fn_load4(a0 + s), b1 = fn_load4(a1 + s);
                const fn_v4d b2 = fn_load4(a2 + s), b3 = fn_load4(a3 + s);
                v0 += b0 * ws; v1 += b1 * ws; v2 += b2 * ws; v3 += b3 * ws;
                y0 += b0 * xs; y1 += b1 * xs; y2 += b2 * xs; y3 += b3 * xs;
            }
            c[0] = fn_hsum4(v0); c[1] = fn_hsum4(v1); c[2] = fn_hsum4(v2); c[3] = fn_hsum4(v3);
            c[4] = fn_hsum4(y0); c[5] = fn_hsum4(y1); c[6] = fn_hsum4(y2); c[7] = fn_hsum4(y3);
            for (s = n_vec; s < n_src; s++) {
                c[0] += a0[s] * w[s]; c[1] += a1[s] * w[s]; c[2] += a2[s] * w[s]; c[3] += a3[s] * w[s];
                c[4] += a0[s] * x[s]; c[5] += a1[s] * x[s]; c[6] += a2[s] * x[s]; c[7] += a3[s] * x[s];
            }
            for (i = 0; i < 4; i++) {
                Z[(r + i) * ldz + u] = c[i];
                Z[(r + i) * ldz + u + 1] = c[4 + i];
            }
        }
        /* Short dot products: two units per pass give eight independent chains,
         * enough to hide the add latency. */
        for (; !n_vec && u + 2 <= n_out; u += 2) {
            const double *w = W + u * n_src, *x = w + n_src;
            double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
            double e0 = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
            for (s = 0; s < n_src; s++) {
                const double ws = w[s], xs = x[s];
                const double b0 = a0[s], b1 = a1[s], b2 = a2[s], b3 = a3[s];
                c0 += b0 * ws; c1 += b1 * ws; c2 += b2 * ws; c3 += b3 * ws;
                e0 += b0 * xs; e1 += b1 * xs; e2 += b2 * xs; e3 += b3 * xs;
            }
            Z[r * ldz + u] = c0; Z[(r + 1) * ldz + u] = c1;
            Z[(r + 2) * ldz + u] = c2; Z[(r + 3) * ldz + u] = c3;
            Z[r * ldz + u + 1] = e0; Z[(r + 1) * ldz + u + 1] = e1;
            Z[(r + 2) * ldz + u + 1] = e2; Z[(r + 3) * ldz + u + 1] = e3;
        }
        for (; u < n_out; u++) {
            const double *w = W + u * n_src;
            double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
            if (n_vec) {
                fn_v4d v0 = {0.0, 0.0, 0.0, 0.0}, v1 = v0, v2 = v0, v3 = v0;
                for (s = 0; s < n_vec; s += 4) {
                    const fn_v4d ws = fn_load4(w + s);
                    v0 += fn_load4(a0 + s) * ws;
                    v1 += fn_load4(a1 + s) * ws;
                    v2 += fn_load4(a2 + s) * ws;
                    v3 += fn_load4(a3 + s) * ws;
                }
                c0 = fn_hsum4(v0); c1 = fn_hsum4(v1); c2 = fn_hsum4(v2); c3 = fn_hsum4(v3);
            }
            for (s = n_vec; s < n_src; s++) {
                const double ws = w[s];
                c0 += a0[s] * ws;
                c1 += a1[s] * ws;
                c2 += a2[s] * ws;
                c3 += a3[s] * ws;
            }
            Z[r * ldz + u] = c0;
            Z[(r + 1) * ldz + u] = c1;
            Z[(r + 2) * ldz + u] = c2;
            Z[(r + 3) * ldz + u] = c3;
        }
    }
    for (; r < nb; r++) {
        const double *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const double *w = W + u * n_src;
            double c = 0.0;
            if (n_vec) {
                fn_v4d v = {0.0, 0.0, 0.0, 0.0};
                for (s = 0; s < n_vec; s += 4)
                    v += fn_load4(a + s) * fn_load4(w + s);
                c = fn_hsum4(v);
            }
            for (s = n_vec; s < n_src; s++)
                c += a[s] * w[s];
            Z[r * ldz + u] = c;
        }
    }
}

/* G[u, s] += sum_r Delta[r, u] A[r, s]   (G is (n_out, n_src)) */
FASTNET_CLONES static void
fn_loops_gradient(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                  const double *Delta, ptrdiff_t ldd,
                  const double *A, ptrdiff_t lda, double *G)
{
    ptrdiff_t r = 0, u, s;
    for (; r + 4 <= nb; r += 4) {
        const double *a0 = A + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        /* Two units per pass: each loaded input serves both. */
        for (u = 0; u + 2 <= n_out; u += 2) {
            const double *d = Delta + r * ldd + u;
            const double d00 = d[0], d10 = d[ldd], d20 = d[2 * ldd], d30 = d[3 * ldd];
            const double d01 = d[1], d11 = d[ldd + 1], d21 = d[2 * ldd + 1], d31 = d[3 * ldd + 1];
            double *g0 = G + u * n_src, *g1 = g0 + n_src;
            for (s = 0; s < n_src; s++) {
                const double x0 = a0[s], x1 = a1[s], x2 = a2[s], x3 = a3[s];
                g0[s] += (d00 * x0 + d10 * x1) + (d20 * x2 + d30 * x3);
                g1[s] += (d01 * x0 + d11 * x1) + (d21 * x2 + d31 * x3);
            }
        }
        for (; u < n_out; u++) {
            const double d0 = Delta[r * ldd + u], d1 = Delta[(r + 1) * ldd + u];
            const double d2 = Delta[(r + 2) * ldd + u], d3 = Delta[(r + 3) * ldd + u];
            double *g = G + u * n_src;
            for (s = 0; s < n_src; s++)
                g[s] += (d0 * a0[s] + d1 * a1[s]) + (d2 * a2[s] + d3 * a3[s]);
        }
    }
    for (; r < nb; r++) {
        const double *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const double d = Delta[r * ldd + u];
            double *g = G + u * n_src;
            for (s = 0; s < n_src; s++)
                g[s] += d * a[s];
        }
    }
}

/* dA[r, s] += sum_u Delta[r, u] W[u, s]   (rows of W have stride ldw) */
FASTNET_CLONES static void
fn_loops_backprop(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                  const double *Delta, ptrdiff_t ldd,
                  const double *W, ptrdiff_t ldw, double *dA,
                  ptrdiff_t ldda)
{
    ptrdiff_t r, u, s;
    for (r = 0; r < nb; r++) {
        double *out = dA + r * ldda;
        for (u = 0; u < n_out; u++) {
            const double d = Delta[r * ldd + u];
            const double *w = W + u * ldw;
            for (s = 0; s < n_src; s++)
                out[s] += d * w[s];
        }
    }
}

/* Proben1 units: z <- f(z + b) with f(x) = x / (1 + |x|); D <- f'(x) = 1 / (1 + |x|)^2
 * (D may be NULL; b NULL: the biases are in z already). nb rows of `size` units;
 * rows have strides ldz and ldd. */
FASTNET_CLONES static void
fn_loops_proben1(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                 const double *b, double *D, ptrdiff_t ldd)
{
    ptrdiff_t r, u;
    for (r = 0; r < nb; r++) {
        double *z = Z + r * ldz;
        if (D) {
            double *d = D + r * ldd;
            for (u = 0; u < size; u++) {
                const double x = b ? z[u] + b[u] : z[u];
                const double t = 1.0 / (1.0 + fabs(x));
                z[u] = x * t;
                d[u] = t * t;
            }
        } else {
            for (u = 0; u < size; u++) {
                const double x = b ? z[u] + b[u] : z[u];
                z[u] = x / (1.0 + fabs(x));
            }
        }
    }
}

/* Linear units: z <- z + b (b NULL: the biases are in z already); D <- 1 (D may
 * be NULL). The arrays never overlap (restrict), so b stays in registers. */
FASTNET_CLONES static void
fn_loops_linear(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                const double *b, double *D, ptrdiff_t ldd)
{
    ptrdiff_t r, u;
    for (r = 0; r < nb; r++) {
        if (b) {
            double *__restrict z = Z + r * ldz;
            const double *__restrict bb = b;
            for (u = 0; u < size; u++)
                z[u] += bb[u];
        }
        if (D) {
            double *__restrict d = D + r * ldd;
            for (u = 0; u < size; u++)
                d[u] = 1.0;
        }
    }
}

/* Units of any elementwise activation `code` (_constants.h: logistic, tanh,
 * relu, ...; the vector functions of _activations.h) and softmax units, at
 * the CPU's own vector width: eight lanes in AVX-512 code, four in AVX2, two
 * in the baseline (SSE2). (target_clones would compile one width into every
 * clone, and GCC splits a vector wider than the instruction set into slow
 * scalar compares.) Each level is a function of its own; fn_loops_level picks
 * one when first asked. */
/* (the levels of _cpu.h, which decides among them) */
#define FN_LOOPS_LEVELS FN_CPU_LEVELS
#define FN_LOOPS_V4 FN_CPU_V4_ATTR
#define FN_LOOPS_V3 FN_CPU_V3_ATTR

/* Softmax rows at width W (fn_exp_row_W): each row z <- softmax(z + b),
 * shifted by its largest net input so that exp cannot overflow; log y into D
 * (not f', which is not diagonal), unless D is NULL; b NULL: the biases are in
 * z already. A NaN net input makes its row NaN. */
#define FN_LOOPS_SOFTMAX_BODY(W)                                                  \
    ptrdiff_t r, u;                                                               \
    for (r = 0; r < nb; r++) {                                                    \
        double *z = Z + r * ldz, *d = D ? D + r * ldd : NULL;                     \
        double m, s = 0.0, ls;                                                    \
        if (b)                                                                    \
            for (u = 0; u < size; u++) z[u] += b[u];                              \
        m = z[0];                                                                 \
        for (u = 1; u < size; u++)                                                \
            if (!(z[u] <= m)) m = z[u];   /* (a NaN wins, and spreads to the row) */ \
        for (u = 0; u < size; u++) z[u] -= m;                                     \
        if (d)                                                                    \
            for (u = 0; u < size; u++) d[u] = z[u];                               \
        fn_exp_row_##W(size, z);                                                  \
        for (u = 0; u < size; u++) s += z[u];                                     \
        ls = log(s);                                                              \
        if (d)                                                                    \
            for (u = 0; u < size; u++) d[u] -= ls;                                \
        for (u = 0; u < size; u++) z[u] /= s;                                     \
    }

#define FN_LOOPS_AT_LEVEL(SUFFIX, ATTR, W)                                        \
ATTR static void                                                                  \
fn_loops_activate_##SUFFIX(int code, ptrdiff_t nb, ptrdiff_t size, double *Z,     \
                           ptrdiff_t ldz, const double *b, double *D, ptrdiff_t ldd) \
{                                                                                 \
    fn_activate_rows_##W(code, nb, size, Z, ldz, b, D, ldd);                      \
}                                                                                 \
ATTR static void                                                                  \
fn_loops_softmax_##SUFFIX(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz, \
                          const double *b, double *D, ptrdiff_t ldd)              \
{                                                                                 \
    FN_LOOPS_SOFTMAX_BODY(W)                                                      \
}
FN_LOOPS_AT_LEVEL(v4, FN_LOOPS_V4, 8)
FN_LOOPS_AT_LEVEL(v3, FN_LOOPS_V3, 4)
FN_LOOPS_AT_LEVEL(base, __attribute__((unused)), 2)
#undef FN_LOOPS_AT_LEVEL
#undef FN_LOOPS_SOFTMAX_BODY

/* The level this process runs at: 2 x86-64-v4, 1 x86-64-v3, 0 the baseline
 * (_cpu.h: the CPU's, capped by FASTNET_SIMD). */
__attribute__((unused)) static int
fn_loops_level(void)
{
    return fn_cpu_level();
}

/* z <- f(z + b), D <- f' for nb rows of `size` units (rows have strides ldz
 * and ldd; D may be NULL; b NULL: the biases are in z already), at the level
 * `level` (-1: the CPU's); returns 0 when the CPU lacks that level (nothing
 * done). The tests ask for every level the CPU runs. */
__attribute__((unused)) static int
fn_loops_activate_at(int level, int code, ptrdiff_t nb, ptrdiff_t size, double *Z,
                     ptrdiff_t ldz, const double *b, double *D, ptrdiff_t ldd)
{
    const int top = fn_loops_level();
    if (level < 0) level = top;
    if (level > top) return 0;
    if (level == 2) fn_loops_activate_v4(code, nb, size, Z, ldz, b, D, ldd);
    else if (level == 1) fn_loops_activate_v3(code, nb, size, Z, ldz, b, D, ldd);
    else fn_loops_activate_base(code, nb, size, Z, ldz, b, D, ldd);
    return 1;
}

__attribute__((unused)) static void
fn_loops_activate(int code, ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                  const double *b, double *D, ptrdiff_t ldd)
{
    fn_loops_activate_at(-1, code, nb, size, Z, ldz, b, D, ldd);
}

__attribute__((unused)) static void
fn_loops_softmax(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz, const double *b,
                 double *D, ptrdiff_t ldd)
{
    const int level = fn_loops_level();
    if (level == 2) fn_loops_softmax_v4(nb, size, Z, ldz, b, D, ldd);
    else if (level == 1) fn_loops_softmax_v3(nb, size, Z, ldz, b, D, ldd);
    else fn_loops_softmax_base(nb, size, Z, ldz, b, D, ldd);
}

/* Layer deltas and bias gradient in one pass: for hidden layers (D != NULL)
 * Delta <- Delta * D (dE/da times f'(net)); then gb[u] += sum_r Delta[r, u],
 * four rows per step ((r0 + r1) + (r2 + r3), a fixed order): a chain of one add
 * per row would make narrow layers wait on the add latency. */
FASTNET_CLONES static void
fn_loops_deltas_bias(ptrdiff_t nb, ptrdiff_t size, double *Delta, ptrdiff_t ldd,
                     const double *D, double *gb)
{
    ptrdiff_t r, u;
    if (D) {
        for (r = 0; r < nb; r++) {
            double *__restrict dl = Delta + r * ldd;
            const double *__restrict d = D + r * ldd;
            for (u = 0; u < size; u++)
                dl[u] *= d[u];
        }
    }
    for (r = 0; r + 4 <= nb; r += 4) {
        const double *__restrict d0 = Delta + r * ldd, *__restrict d1 = d0 + ldd;
        const double *__restrict d2 = d1 + ldd, *__restrict d3 = d2 + ldd;
        double *__restrict g = gb;
        for (u = 0; u < size; u++)
            g[u] += (d0[u] + d1[u]) + (d2[u] + d3[u]);
    }
    for (; r < nb; r++) {
        const double *__restrict dl = Delta + r * ldd;
        double *__restrict g = gb;
        for (u = 0; u < size; u++)
            g[u] += dl[u];
    }
}

/* Output deltas 2 (y - t) f'(net) of nb rows (n_out outputs each); returns the
 * rows' summed squared error, added in row order. */
FASTNET_CLONES static double
fn_loops_output_deltas(ptrdiff_t nb, ptrdiff_t n_out, const double *Y, ptrdiff_t ldy,
                       const double *T, ptrdiff_t ldt, const double *D, double *Delta,
                       ptrdiff_t ldd)
{
    ptrdiff_t r, k;
    double sse = 0.0;
    for (r = 0; r < nb; r++) {
        const double *y = Y + r * ldy, *t = T + r * ldt, *d = D + r * ldd;
        double *dl = Delta + r * ldd;
        double row = 0.0;
        for (k = 0; k < n_out; k++) {
            const double e = y[k] - t[k];
            row += e * e;
            dl[k] = 2.0 * e * d[k];
        }
        sse += row;
    }
    return sse;
}

/* Whether the bits of a double are those of +-inf or NaN (all exponent bits set).
 * Read as integers, so that the tests vectorise (a floating-point sum of x - x
 * would wait on the add latency value by value). */
static inline uint64_t
fn_loops_nonfinite(const double *x)
{
    const uint64_t exponent = 0x7ff0000000000000ULL;
    uint64_t bits;
    memcpy(&bits, x, sizeof bits);
    return (uint64_t)((bits & exponent) == exponent);
}

/* Copy nb rows of n values (X contiguous) into the first columns of the rows of
 * A (stride lda); returns 1 when every value is finite, 0 otherwise. */
FASTNET_CLONES static int
fn_loops_load_rows(ptrdiff_t nb, ptrdiff_t n, const double *X, double *A, ptrdiff_t lda)
{
    uint64_t nonfinite = 0;
    ptrdiff_t r, c;
    for (r = 0; r < nb; r++) {
        const double *__restrict x = X + r * n;
        double *__restrict a = A + r * lda;
        for (c = 0; c < n; c++) {
            nonfinite |= fn_loops_nonfinite(x + c);
            a[c] = x[c];
        }
    }
    return nonfinite == 0;
}

/* Whether the n values of X are all finite. */
FASTNET_CLONES static int
fn_loops_all_finite(ptrdiff_t n, const double *X)
{
    uint64_t nonfinite = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        nonfinite |= fn_loops_nonfinite(X + i);
    return nonfinite == 0;
}

#endif /* FASTNET_LOOPS_H */
