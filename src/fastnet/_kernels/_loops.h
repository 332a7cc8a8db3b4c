/* Plain-loop layer products and activations for narrow layers (few units),
 * where BLAS wastes its width and its call overhead dominates. (On CPUs with
 * AVX-512 or AVX2 most products go to the register-tiled kernels of _tiles.h,
 * instantiated per instruction set in _simd.h, instead; these loops then serve
 * blocks of few rows, narrow forward products on AVX2, and other CPUs.)
 *
 * Row-major throughout, as in _types.pxd. Each function is compiled twice
 * (_loops_level.h): for x86-64-v3 (AVX2 + FMA) and the portable baseline;
 * _cpu.h's level picks one (FASTNET_SIMD=none: the baseline). (An x86-64-v4 / AVX-512
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


/* Four doubles as one value (GCC vector extension): AVX2 registers in the
 * x86-64-v3 form, pairs of SSE2 registers in the portable one. */
typedef double fn_v4d __attribute__((vector_size(32)));

/* Unaligned load of four doubles, and the sum of the four lanes. Macros, not
 * functions: a function returning a vector would have a different ABI in each
 * level's form. */
#define fn_load4(p) __extension__({ fn_v4d v_; memcpy(&v_, (p), sizeof v_); v_; })
#define fn_hsum4(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))

/* Dot products at least this long use four-lane partial sums (lane j adds the
 * terms s = j mod 4; a fixed order); shorter ones sum in index order. */
#define FASTNET_VECTOR_DOT_MIN 16

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

/* The loops of each level (_loops_level.h), then their dispatchers. */
#define FN_LEVEL_FILE "_loops_level.h"
#define FN_LEVEL_V4 0
#define FN_LEVEL_V0_ATTR __attribute__((unused))
#include "_levels.h"

/* Whether the loops run their x86-64-v3 forms (on v3 and v4 CPUs, unless
 * FASTNET_SIMD=none). */
#define FN_LOOPS_V3_FORMS (FN_CPU_LEVELS && fn_cpu_level() >= FN_CPU_V3)
/* The form of loop f that runs here: FN_LOOPS_PICK(fn_loops_forward)(args). */
#define FN_LOOPS_PICK(f) (FN_LOOPS_V3_FORMS ? f##_v3 : f##_v0)

__attribute__((unused)) static void
fn_loops_forward(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *A, ptrdiff_t lda,
                 const double *W, double *Z, ptrdiff_t ldz)
{
    FN_LOOPS_PICK(fn_loops_forward)(nb, n_out, n_src, A, lda, W, Z, ldz);
}

__attribute__((unused)) static void
fn_loops_gradient(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *Delta,
                  ptrdiff_t ldd, const double *A, ptrdiff_t lda, double *G)
{
    FN_LOOPS_PICK(fn_loops_gradient)(nb, n_out, n_src, Delta, ldd, A, lda, G);
}

__attribute__((unused)) static void
fn_loops_backprop(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src, const double *Delta,
                  ptrdiff_t ldd, const double *W, ptrdiff_t ldw, double *dA, ptrdiff_t ldda)
{
    FN_LOOPS_PICK(fn_loops_backprop)(nb, n_out, n_src, Delta, ldd, W, ldw, dA, ldda);
}

__attribute__((unused)) static void
fn_loops_proben1(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz, const double *b,
                 double *D, ptrdiff_t ldd)
{
    FN_LOOPS_PICK(fn_loops_proben1)(nb, size, Z, ldz, b, D, ldd);
}

__attribute__((unused)) static void
fn_loops_linear(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz, const double *b,
                double *D, ptrdiff_t ldd)
{
    FN_LOOPS_PICK(fn_loops_linear)(nb, size, Z, ldz, b, D, ldd);
}

__attribute__((unused)) static void
fn_loops_deltas_bias(ptrdiff_t nb, ptrdiff_t size, double *Delta, ptrdiff_t ldd,
                     const double *D, double *gb)
{
    FN_LOOPS_PICK(fn_loops_deltas_bias)(nb, size, Delta, ldd, D, gb);
}

__attribute__((unused)) static double
fn_loops_output_deltas(ptrdiff_t nb, ptrdiff_t n_out, const double *Y, ptrdiff_t ldy,
                       const double *T, ptrdiff_t ldt, const double *D, double *Delta,
                       ptrdiff_t ldd)
{
    return FN_LOOPS_PICK(fn_loops_output_deltas)(nb, n_out, Y, ldy, T, ldt, D, Delta, ldd);
}

__attribute__((unused)) static int
fn_loops_load_rows(ptrdiff_t nb, ptrdiff_t n, const double *X, double *A, ptrdiff_t lda)
{
    return FN_LOOPS_PICK(fn_loops_load_rows)(nb, n, X, A, lda);
}

__attribute__((unused)) static int
fn_loops_all_finite(ptrdiff_t n, const double *X)
{
    return FN_LOOPS_PICK(fn_loops_all_finite)(n, X);
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

/* (logistic and tanh: their shared loop in a function of its own, where the
 * registers are theirs alone, as before the cheap activations had loops of
 * their own; inlined beside those it ran 2-3 % slower) */
#define FN_LOOPS_AT_LEVEL(SUFFIX, ATTR, W)                                        \
ATTR __attribute__((noinline)) static void                                        \
fn_loops_activate_exp_##SUFFIX(int code, ptrdiff_t nb, ptrdiff_t size, double *Z, \
                               ptrdiff_t ldz, const double *b, double *D,         \
                               ptrdiff_t ldd)                                     \
{                                                                                 \
    fn_activate_rows_each_##W(code, nb, size, Z, ldz, b, D, ldd);                 \
}                                                                                 \
ATTR static void                                                                  \
fn_loops_activate_##SUFFIX(int code, ptrdiff_t nb, ptrdiff_t size, double *Z,     \
                           ptrdiff_t ldz, const double *b, double *D, ptrdiff_t ldd) \
{                                                                                 \
    if (code == FN_ACT_LOGISTIC || code == FN_ACT_TANH)                           \
        fn_loops_activate_exp_##SUFFIX(code, nb, size, Z, ldz, b, D, ldd);        \
    else                                                                          \
        fn_activate_rows_##W(code, nb, size, Z, ldz, b, D, ldd);                  \
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

#endif /* FASTNET_LOOPS_H */
