/* The single-network loops, a template over the value type and the CPU level:
 * _loops.h includes this file once per value type (_values.h: FN_REAL, FN_VT),
 * and the value type's part below includes it again once per CPU level
 * (_levels.h: FN_LV, FN_LV_ATTR), for its loops. So each loop is written once
 * and compiled four times: fn_loops_forward_v3, _v0 (float64, the names they
 * had) and fn_loops_forward_f32_v3, _f32_v0; the dispatchers fn_loops_forward
 * and fn_loops_forward_f32 call the level of _cpu.h (x86-64-v4 takes the v3
 * forms: an AVX-512 form was measured slower on these short loops). Not
 * guarded: its parameters are the includer's.
 *
 * What differs by type is named here once: the dot products' vector (four
 * doubles or eight floats: one AVX2 register either way), the activation forms
 * of each level's width (_activations.h: fn_*_8/_4/_2, fn_*_f16/_f8/_f4), and
 * fabs, log and the bits of a float. Sums that Proben1's measures report
 * (fn_loops_output_deltas' squared error) accumulate in double at both types.
 */
#ifndef FN_LV

#if FN_VT_BITS == 64
#define FN_LOOPS_VEC fn_v4d
#define FN_LOOPS_LANES 4
#define FN_LOOPS_HSUM(v) fn_hsum4(v)
#define FN_LOOPS_FABS fabs
#define FN_LOOPS_LOG log
#define FN_LOOPS_BITS uint64_t
#define FN_LOOPS_EXPONENT 0x7ff0000000000000ULL
#define FN_LOOPS_W_V4 8
#define FN_LOOPS_W_V3 4
#define FN_LOOPS_W_BASE 2
#else
#define FN_LOOPS_VEC fn_v8f
#define FN_LOOPS_LANES 8
#define FN_LOOPS_HSUM(v) fn_hsum8(v)
#define FN_LOOPS_FABS fabsf
#define FN_LOOPS_LOG logf
#define FN_LOOPS_BITS uint32_t
#define FN_LOOPS_EXPONENT 0x7f800000U
#define FN_LOOPS_W_V4 f16
#define FN_LOOPS_W_V3 f8
#define FN_LOOPS_W_BASE f4
#endif
/* Unaligned load of one vector. A macro, not a function: a function returning
 * a vector would have a different ABI in each level's form. */
#define FN_LOOPS_LOAD(p) __extension__({ FN_LOOPS_VEC v_; memcpy(&v_, (p), sizeof v_); v_; })

/* Whether the bits of a value are those of +-inf or NaN (all exponent bits set).
 * Read as integers, so that the tests vectorise (a floating-point sum of x - x
 * would wait on the add latency value by value). */
static inline FN_LOOPS_BITS
FN_VT(fn_loops_nonfinite)(const FN_REAL *x)
{
    FN_LOOPS_BITS bits;
    memcpy(&bits, x, sizeof bits);
    return (FN_LOOPS_BITS)((bits & FN_LOOPS_EXPONENT) == FN_LOOPS_EXPONENT);
}

/* The loops of each level (the second part of this file), then their dispatchers. */
#define FN_LEVEL_FILE "_loops_level.h"
#define FN_LEVEL_V4 0
#define FN_LEVEL_V0_ATTR __attribute__((unused))
#include "_levels.h"

/* The form of loop f that runs here: FN_LOOPS_PICK(FN_VT(fn_loops_forward))(args). */
#define FN_LOOPS_PICK(f) (FN_LOOPS_V3_FORMS ? FN_VT_CAT(f, _v3) : FN_VT_CAT(f, _v0))

__attribute__((unused)) static void
FN_VT(fn_loops_forward)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const FN_REAL *A,
                        ptrdiff_t lda, const FN_REAL *W, FN_REAL *Z, ptrdiff_t ldz)
{
    FN_LOOPS_PICK(FN_VT(fn_loops_forward))(nb, n_out, n_src, A, lda, W, Z, ldz);
}

__attribute__((unused)) static void
FN_VT(fn_loops_gradient)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const FN_REAL *Delta,
                         ptrdiff_t ldd, const FN_REAL *A, ptrdiff_t lda, FN_REAL *G)
{
    FN_LOOPS_PICK(FN_VT(fn_loops_gradient))(nb, n_out, n_src, Delta, ldd, A, lda, G);
}

__attribute__((unused)) static void
FN_VT(fn_loops_backprop)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const FN_REAL *Delta,
                         ptrdiff_t ldd, const FN_REAL *W, ptrdiff_t ldw, FN_REAL *dA,
                         ptrdiff_t ldda)
{
    FN_LOOPS_PICK(FN_VT(fn_loops_backprop))(nb, n_out, n_src, Delta, ldd, W, ldw, dA, ldda);
}

__attribute__((unused)) static void
FN_VT(fn_loops_proben1)(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, ptrdiff_t ldz,
                        const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    FN_LOOPS_PICK(FN_VT(fn_loops_proben1))(nb, size, Z, ldz, b, D, ldd);
}

__attribute__((unused)) static void
FN_VT(fn_loops_linear)(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, ptrdiff_t ldz,
                       const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    FN_LOOPS_PICK(FN_VT(fn_loops_linear))(nb, size, Z, ldz, b, D, ldd);
}

__attribute__((unused)) static void
FN_VT(fn_loops_deltas_bias)(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Delta, ptrdiff_t ldd,
                            const FN_REAL *D, FN_REAL *gb)
{
    FN_LOOPS_PICK(FN_VT(fn_loops_deltas_bias))(nb, size, Delta, ldd, D, gb);
}

/* (the squared error in double at both types) */
__attribute__((unused)) static double
FN_VT(fn_loops_output_deltas)(ptrdiff_t nb, ptrdiff_t n_out, const FN_REAL *Y, ptrdiff_t ldy,
                              const FN_REAL *T, ptrdiff_t ldt, const FN_REAL *D,
                              FN_REAL *Delta, ptrdiff_t ldd)
{
    return FN_LOOPS_PICK(FN_VT(fn_loops_output_deltas))(nb, n_out, Y, ldy, T, ldt, D, Delta,
                                                         ldd);
}

__attribute__((unused)) static int
FN_VT(fn_loops_load_rows)(ptrdiff_t nb, ptrdiff_t n, const FN_REAL *X, FN_REAL *A,
                          ptrdiff_t lda)
{
    return FN_LOOPS_PICK(FN_VT(fn_loops_load_rows))(nb, n, X, A, lda);
}

__attribute__((unused)) static int
FN_VT(fn_loops_all_finite)(ptrdiff_t n, const FN_REAL *X)
{
    return FN_LOOPS_PICK(FN_VT(fn_loops_all_finite))(n, X);
}
#undef FN_LOOPS_PICK

/* Units of any elementwise activation `code` (_constants.h: logistic, tanh,
 * relu, ...; the vector functions of _activations.h) and softmax units, at
 * the CPU's own vector width: eight doubles or sixteen floats per vector in
 * AVX-512 code, four or eight in AVX2, two or four in the baseline (SSE2).
 * (target_clones would compile one width into every clone, and GCC splits a
 * vector wider than the instruction set into slow scalar compares.) Each
 * level is a function of its own; fn_loops_level picks one when first asked. */

/* Softmax rows at width W (fn_exp_row_W): each row z <- softmax(z + b),
 * shifted by its largest net input so that exp cannot overflow; log y into D
 * (not f', which is not diagonal), unless D is NULL; b NULL: the biases are in
 * z already. A NaN net input makes its row NaN. */
#define FN_LOOPS_SOFTMAX_BODY(W)                                                  \
    ptrdiff_t r, u;                                                               \
    for (r = 0; r < nb; r++) {                                                    \
        FN_REAL *z = Z + r * ldz, *d = D ? D + r * ldd : NULL;                    \
        FN_REAL m, s = 0, ls;                                                     \
        if (b)                                                                    \
            for (u = 0; u < size; u++) z[u] += b[u];                              \
        m = z[0];                                                                 \
        for (u = 1; u < size; u++)                                                \
            if (!(z[u] <= m)) m = z[u];   /* (a NaN wins, and spreads to the row) */ \
        for (u = 0; u < size; u++) z[u] -= m;                                     \
        if (d)                                                                    \
            for (u = 0; u < size; u++) d[u] = z[u];                               \
        FN_VT_CAT(fn_exp_row_, W)(size, z);                                       \
        for (u = 0; u < size; u++) s += z[u];                                     \
        ls = FN_LOOPS_LOG(s);                                                     \
        if (d)                                                                    \
            for (u = 0; u < size; u++) d[u] -= ls;                                \
        for (u = 0; u < size; u++) z[u] /= s;                                     \
    }

/* (logistic and tanh: their shared loop in a function of its own, where the
 * registers are theirs alone, as before the cheap activations had loops of
 * their own; inlined beside those it ran 2-3 % slower) */
#define FN_LOOPS_NAME(f, SUFFIX) FN_VT_CAT(FN_VT(f), _##SUFFIX)
#define FN_LOOPS_AT_LEVEL(SUFFIX, ATTR, W)                                        \
ATTR __attribute__((noinline, optimize("no-tree-loop-vectorize"))) static void     \
FN_LOOPS_NAME(fn_loops_activate_exp, SUFFIX)(int code, ptrdiff_t nb, ptrdiff_t size, \
                               FN_REAL *Z, ptrdiff_t ldz, const FN_REAL *b,       \
                               FN_REAL *D, ptrdiff_t ldd)                         \
{                                                                                 \
    FN_VT_CAT(fn_activate_rows_packed_, W)(code, nb, size, Z, ldz, b, D, ldd);    \
}                                                                                 \
ATTR static void                                                                  \
FN_LOOPS_NAME(fn_loops_activate, SUFFIX)(int code, ptrdiff_t nb, ptrdiff_t size,  \
                           FN_REAL *Z, ptrdiff_t ldz, const FN_REAL *b,           \
                           FN_REAL *D, ptrdiff_t ldd)                             \
{                                                                                 \
    if (code == FN_ACT_LOGISTIC || code == FN_ACT_TANH)                           \
        FN_LOOPS_NAME(fn_loops_activate_exp, SUFFIX)(code, nb, size, Z, ldz, b, D, ldd); \
    else                                                                          \
        FN_VT_CAT(fn_activate_rows_, W)(code, nb, size, Z, ldz, b, D, ldd);       \
}                                                                                 \
ATTR static void                                                                  \
FN_LOOPS_NAME(fn_loops_exp, SUFFIX)(ptrdiff_t n, FN_REAL *z)                      \
{                                                                                 \
    FN_VT_CAT(fn_exp_row_, W)(n, z);                                              \
}                                                                                 \
ATTR static void                                                                  \
FN_LOOPS_NAME(fn_loops_softmax, SUFFIX)(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, \
                          ptrdiff_t ldz, const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd) \
{                                                                                 \
    FN_LOOPS_SOFTMAX_BODY(W)                                                      \
}
FN_LOOPS_AT_LEVEL(v4, FN_LOOPS_V4, FN_LOOPS_W_V4)
FN_LOOPS_AT_LEVEL(v3, FN_LOOPS_V3, FN_LOOPS_W_V3)
FN_LOOPS_AT_LEVEL(base, __attribute__((unused)), FN_LOOPS_W_BASE)
#undef FN_LOOPS_AT_LEVEL
#undef FN_LOOPS_SOFTMAX_BODY

/* z <- f(z + b), D <- f' for nb rows of `size` units (rows have strides ldz
 * and ldd; D may be NULL; b NULL: the biases are in z already), at the level
 * `level` (-1: the CPU's); returns 0 when the CPU lacks that level (nothing
 * done). The tests ask for every level the CPU runs. */
__attribute__((unused)) static int
FN_VT(fn_loops_activate_at)(int level, int code, ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z,
                            ptrdiff_t ldz, const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    const int top = fn_loops_level();
    if (level < 0) level = top;
    if (level > top) return 0;
    if (level == 2) FN_LOOPS_NAME(fn_loops_activate, v4)(code, nb, size, Z, ldz, b, D, ldd);
    else if (level == 1) FN_LOOPS_NAME(fn_loops_activate, v3)(code, nb, size, Z, ldz, b, D, ldd);
    else FN_LOOPS_NAME(fn_loops_activate, base)(code, nb, size, Z, ldz, b, D, ldd);
    return 1;
}

/* z <- exp(z) for n values at the level `level` (as fn_loops_activate_at): the exp that
 * softmax runs, which no activation code reaches alone (for the tests and benchmarks). */
__attribute__((unused)) static int
FN_VT(fn_loops_exp_at)(int level, ptrdiff_t n, FN_REAL *z)
{
    const int top = fn_loops_level();
    if (level < 0) level = top;
    if (level > top) return 0;
    if (level == 2) FN_LOOPS_NAME(fn_loops_exp, v4)(n, z);
    else if (level == 1) FN_LOOPS_NAME(fn_loops_exp, v3)(n, z);
    else FN_LOOPS_NAME(fn_loops_exp, base)(n, z);
    return 1;
}

__attribute__((unused)) static void
FN_VT(fn_loops_activate)(int code, ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, ptrdiff_t ldz,
                         const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    FN_VT(fn_loops_activate_at)(-1, code, nb, size, Z, ldz, b, D, ldd);
}

__attribute__((unused)) static void
FN_VT(fn_loops_softmax)(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, ptrdiff_t ldz,
                        const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    const int level = fn_loops_level();
    if (level == 2) FN_LOOPS_NAME(fn_loops_softmax, v4)(nb, size, Z, ldz, b, D, ldd);
    else if (level == 1) FN_LOOPS_NAME(fn_loops_softmax, v3)(nb, size, Z, ldz, b, D, ldd);
    else FN_LOOPS_NAME(fn_loops_softmax, base)(nb, size, Z, ldz, b, D, ldd);
}
#undef FN_LOOPS_NAME

#undef FN_LOOPS_VEC
#undef FN_LOOPS_LANES
#undef FN_LOOPS_HSUM
#undef FN_LOOPS_FABS
#undef FN_LOOPS_LOG
#undef FN_LOOPS_BITS
#undef FN_LOOPS_EXPONENT
#undef FN_LOOPS_W_V4
#undef FN_LOOPS_W_V3
#undef FN_LOOPS_W_BASE
#undef FN_LOOPS_LOAD

#else /* FN_LV: the loops of one CPU level */

/* Z[r, u] = sum_s A[r, s] W[u, s]   (W is (n_out, n_src), row-major).
 * Four rows per pass: four independent dot products share each weight load. */
FN_LV_ATTR static void
FN_LV(FN_VT(fn_loops_forward))(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                 const FN_REAL *A, ptrdiff_t lda, const FN_REAL *W,
                 FN_REAL *Z, ptrdiff_t ldz)
{
    ptrdiff_t r = 0, u, s;
    const ptrdiff_t n_vec = n_src >= FASTNET_VECTOR_DOT_MIN ? n_src - n_src % FN_LOOPS_LANES : 0;
    for (; r + 4 <= nb; r += 4) {
        const FN_REAL *a0 = A + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        u = 0;
        /* Long dot products: two units per pass share each input load. */
        for (; n_vec && u + 2 <= n_out; u += 2) {
            const FN_REAL *w = W + u * n_src, *x = w + n_src;
            FN_LOOPS_VEC v0 = {0}, v1 = v0, v2 = v0, v3 = v0;
            FN_LOOPS_VEC y0 = v0, y1 = v0, y2 = v0, y3 = v0;
            FN_REAL c[8];
            int i;
            for (s = 0; s < n_vec; s += FN_LOOPS_LANES) {
                const FN_LOOPS_VEC ws = FN_LOOPS_LOAD(w + s), xs = FN_LOOPS_LOAD(x + s);
                const FN_LOOPS_VEC b0 = FN_LOOPS_LOAD(a0 + s), b1 = FN_LOOPS_LOAD(a1 + s);
                const FN_LOOPS_VEC b2 = FN_LOOPS_LOAD(a2 + s), b3 = FN_LOOPS_LOAD(a3 + s);
                v0 += b0 * ws; v1 += b1 * ws; v2 += b2 * ws; v3 += b3 * ws;
                y0 += b0 * xs; y1 += b1 * xs; y2 += b2 * xs; y3 += b3 * xs;
            }
            c[0] = FN_LOOPS_HSUM(v0); c[1] = FN_LOOPS_HSUM(v1); c[2] = FN_LOOPS_HSUM(v2); c[3] = FN_LOOPS_HSUM(v3);
            c[4] = FN_LOOPS_HSUM(y0); c[5] = FN_LOOPS_HSUM(y1); c[6] = FN_LOOPS_HSUM(y2); c[7] = FN_LOOPS_HSUM(y3);
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
            const FN_REAL *w = W + u * n_src, *x = w + n_src;
            FN_REAL c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
            FN_REAL e0 = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
            for (s = 0; s < n_src; s++) {
                const FN_REAL ws = w[s], xs = x[s];
                const FN_REAL b0 = a0[s], b1 = a1[s], b2 = a2[s], b3 = a3[s];
                c0 += b0 * ws; c1 += b1 * ws; c2 += b2 * ws; c3 += b3 * ws;
                e0 += b0 * xs; e1 += b1 * xs; e2 += b2 * xs; e3 += b3 * xs;
            }
            Z[r * ldz + u] = c0; Z[(r + 1) * ldz + u] = c1;
            Z[(r + 2) * ldz + u] = c2; Z[(r + 3) * ldz + u] = c3;
            Z[r * ldz + u + 1] = e0; Z[(r + 1) * ldz + u + 1] = e1;
            Z[(r + 2) * ldz + u + 1] = e2; Z[(r + 3) * ldz + u + 1] = e3;
        }
        for (; u < n_out; u++) {
            const FN_REAL *w = W + u * n_src;
            FN_REAL c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
            if (n_vec) {
                FN_LOOPS_VEC v0 = {0}, v1 = v0, v2 = v0, v3 = v0;
                for (s = 0; s < n_vec; s += FN_LOOPS_LANES) {
                    const FN_LOOPS_VEC ws = FN_LOOPS_LOAD(w + s);
                    v0 += FN_LOOPS_LOAD(a0 + s) * ws;
                    v1 += FN_LOOPS_LOAD(a1 + s) * ws;
                    v2 += FN_LOOPS_LOAD(a2 + s) * ws;
                    v3 += FN_LOOPS_LOAD(a3 + s) * ws;
                }
                c0 = FN_LOOPS_HSUM(v0); c1 = FN_LOOPS_HSUM(v1); c2 = FN_LOOPS_HSUM(v2); c3 = FN_LOOPS_HSUM(v3);
            }
            for (s = n_vec; s < n_src; s++) {
                const FN_REAL ws = w[s];
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
        const FN_REAL *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const FN_REAL *w = W + u * n_src;
            FN_REAL c = 0.0;
            if (n_vec) {
                FN_LOOPS_VEC v = {0};
                for (s = 0; s < n_vec; s += FN_LOOPS_LANES)
                    v += FN_LOOPS_LOAD(a + s) * FN_LOOPS_LOAD(w + s);
                c = FN_LOOPS_HSUM(v);
            }
            for (s = n_vec; s < n_src; s++)
                c += a[s] * w[s];
            Z[r * ldz + u] = c;
        }
    }
}

/* G[u, s] += sum_r Delta[r, u] A[r, s]   (G is (n_out, n_src)) */
FN_LV_ATTR static void
FN_LV(FN_VT(fn_loops_gradient))(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                  const FN_REAL *Delta, ptrdiff_t ldd,
                  const FN_REAL *A, ptrdiff_t lda, FN_REAL *G)
{
    ptrdiff_t r = 0, u, s;
    for (; r + 4 <= nb; r += 4) {
        const FN_REAL *a0 = A + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        /* Two units per pass: each loaded input serves both. */
        for (u = 0; u + 2 <= n_out; u += 2) {
            const FN_REAL *d = Delta + r * ldd + u;
            const FN_REAL d00 = d[0], d10 = d[ldd], d20 = d[2 * ldd], d30 = d[3 * ldd];
            const FN_REAL d01 = d[1], d11 = d[ldd + 1], d21 = d[2 * ldd + 1], d31 = d[3 * ldd + 1];
            FN_REAL *g0 = G + u * n_src, *g1 = g0 + n_src;
            for (s = 0; s < n_src; s++) {
                const FN_REAL x0 = a0[s], x1 = a1[s], x2 = a2[s], x3 = a3[s];
                g0[s] += (d00 * x0 + d10 * x1) + (d20 * x2 + d30 * x3);
                g1[s] += (d01 * x0 + d11 * x1) + (d21 * x2 + d31 * x3);
            }
        }
        for (; u < n_out; u++) {
            const FN_REAL d0 = Delta[r * ldd + u], d1 = Delta[(r + 1) * ldd + u];
            const FN_REAL d2 = Delta[(r + 2) * ldd + u], d3 = Delta[(r + 3) * ldd + u];
            FN_REAL *g = G + u * n_src;
            for (s = 0; s < n_src; s++)
                g[s] += (d0 * a0[s] + d1 * a1[s]) + (d2 * a2[s] + d3 * a3[s]);
        }
    }
    for (; r < nb; r++) {
        const FN_REAL *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const FN_REAL d = Delta[r * ldd + u];
            FN_REAL *g = G + u * n_src;
            for (s = 0; s < n_src; s++)
                g[s] += d * a[s];
        }
    }
}

/* dA[r, s] += sum_u Delta[r, u] W[u, s]   (rows of W have stride ldw) */
FN_LV_ATTR static void
FN_LV(FN_VT(fn_loops_backprop))(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                  const FN_REAL *Delta, ptrdiff_t ldd,
                  const FN_REAL *W, ptrdiff_t ldw, FN_REAL *dA,
                  ptrdiff_t ldda)
{
    ptrdiff_t r, u, s;
    for (r = 0; r < nb; r++) {
        FN_REAL *out = dA + r * ldda;
        for (u = 0; u < n_out; u++) {
            const FN_REAL d = Delta[r * ldd + u];
            const FN_REAL *w = W + u * ldw;
            for (s = 0; s < n_src; s++)
                out[s] += d * w[s];
        }
    }
}

/* Proben1 units: z <- f(z + b) with f(x) = x / (1 + |x|); D <- f'(x) = 1 / (1 + |x|)^2
 * (D may be NULL; b NULL: the biases are in z already). nb rows of `size` units;
 * rows have strides ldz and ldd. */
FN_LV_ATTR static void
FN_LV(FN_VT(fn_loops_proben1))(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, ptrdiff_t ldz,
                 const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    ptrdiff_t r, u;
    for (r = 0; r < nb; r++) {
        FN_REAL *z = Z + r * ldz;
        if (D) {
            FN_REAL *d = D + r * ldd;
            for (u = 0; u < size; u++) {
                const FN_REAL x = b ? z[u] + b[u] : z[u];
                const FN_REAL t = (FN_REAL)1 / ((FN_REAL)1 + FN_LOOPS_FABS(x));
                z[u] = x * t;
                d[u] = t * t;
            }
        } else {
            for (u = 0; u < size; u++) {
                const FN_REAL x = b ? z[u] + b[u] : z[u];
                z[u] = x / ((FN_REAL)1 + FN_LOOPS_FABS(x));
            }
        }
    }
}

/* Linear units: z <- z + b (b NULL: the biases are in z already); D <- 1 (D may
 * be NULL). The arrays never overlap (restrict), so b stays in registers. */
FN_LV_ATTR static void
FN_LV(FN_VT(fn_loops_linear))(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Z, ptrdiff_t ldz,
                const FN_REAL *b, FN_REAL *D, ptrdiff_t ldd)
{
    ptrdiff_t r, u;
    for (r = 0; r < nb; r++) {
        if (b) {
            FN_REAL *__restrict z = Z + r * ldz;
            const FN_REAL *__restrict bb = b;
            for (u = 0; u < size; u++)
                z[u] += bb[u];
        }
        if (D) {
            FN_REAL *__restrict d = D + r * ldd;
            for (u = 0; u < size; u++)
                d[u] = 1.0;
        }
    }
}

/* Layer deltas and bias gradient in one pass: for hidden layers (D != NULL)
 * Delta <- Delta * D (dE/da times f'(net)); then gb[u] += sum_r Delta[r, u],
 * four rows per step ((r0 + r1) + (r2 + r3), a fixed order): a chain of one add
 * per row would make narrow layers wait on the add latency. */
FN_LV_ATTR static void
FN_LV(FN_VT(fn_loops_deltas_bias))(ptrdiff_t nb, ptrdiff_t size, FN_REAL *Delta, ptrdiff_t ldd,
                     const FN_REAL *D, FN_REAL *gb)
{
    ptrdiff_t r, u;
    if (D) {
        for (r = 0; r < nb; r++) {
            FN_REAL *__restrict dl = Delta + r * ldd;
            const FN_REAL *__restrict d = D + r * ldd;
            for (u = 0; u < size; u++)
                dl[u] *= d[u];
        }
    }
    for (r = 0; r + 4 <= nb; r += 4) {
        const FN_REAL *__restrict d0 = Delta + r * ldd, *__restrict d1 = d0 + ldd;
        const FN_REAL *__restrict d2 = d1 + ldd, *__restrict d3 = d2 + ldd;
        FN_REAL *__restrict g = gb;
        for (u = 0; u < size; u++)
            g[u] += (d0[u] + d1[u]) + (d2[u] + d3[u]);
    }
    for (; r < nb; r++) {
        const FN_REAL *__restrict dl = Delta + r * ldd;
        FN_REAL *__restrict g = gb;
        for (u = 0; u < size; u++)
            g[u] += dl[u];
    }
}

/* Output deltas 2 (y - t) f'(net) of nb rows (n_out outputs each); returns the
 * rows' summed squared error, added in row order. */
FN_LV_ATTR static double
FN_LV(FN_VT(fn_loops_output_deltas))(ptrdiff_t nb, ptrdiff_t n_out, const FN_REAL *Y, ptrdiff_t ldy,
                       const FN_REAL *T, ptrdiff_t ldt, const FN_REAL *D, FN_REAL *Delta,
                       ptrdiff_t ldd)
{
    ptrdiff_t r, k;
    double sse = 0.0;
    for (r = 0; r < nb; r++) {
        const FN_REAL *y = Y + r * ldy, *t = T + r * ldt, *d = D + r * ldd;
        FN_REAL *dl = Delta + r * ldd;
        double row = 0.0;
        for (k = 0; k < n_out; k++) {
            const FN_REAL e = y[k] - t[k];
            row += (double)e * e;
            dl[k] = (FN_REAL)2 * e * d[k];
        }
        sse += row;
    }
    return sse;
}

/* Copy nb rows of n values (X contiguous) into the first columns of the rows of
 * A (stride lda); returns 1 when every value is finite, 0 otherwise. */
FN_LV_ATTR static int
FN_LV(FN_VT(fn_loops_load_rows))(ptrdiff_t nb, ptrdiff_t n, const FN_REAL *X, FN_REAL *A, ptrdiff_t lda)
{
    FN_LOOPS_BITS nonfinite = 0;
    ptrdiff_t r, c;
    for (r = 0; r < nb; r++) {
        const FN_REAL *__restrict x = X + r * n;
        FN_REAL *__restrict a = A + r * lda;
        for (c = 0; c < n; c++) {
            nonfinite |= FN_VT(fn_loops_nonfinite)(x + c);
            a[c] = x[c];
        }
    }
    return nonfinite == 0;
}

/* Whether the n values of X are all finite. */
FN_LV_ATTR static int
FN_LV(FN_VT(fn_loops_all_finite))(ptrdiff_t n, const FN_REAL *X)
{
    FN_LOOPS_BITS nonfinite = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        nonfinite |= FN_VT(fn_loops_nonfinite)(X + i);
    return nonfinite == 0;
}

#endif /* FN_LV */
