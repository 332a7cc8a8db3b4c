/* The float32 activation functions (fn_*_f16, fn_*_f8, fn_*_f4 of
 * _activations.h: the activation template at the value type float) at each CPU
 * level, for the tests and benchmarks of _activations32.pyx: sixteen lanes in
 * AVX-512 code, eight in AVX2, four in the baseline (SSE2), as the float64
 * forms take eight, four and two (_loops.h). Also exp rows of either type,
 * which no activation code reaches alone (softmax's exp).
 */
#ifndef FASTNET_ACTIVATIONS32_H
#define FASTNET_ACTIVATIONS32_H

#include <stddef.h>

#include "_activations.h"
#include "_cpu.h"

/* (logistic and tanh in a function of their own, as _loops.h runs them) */
#define FN_A32_AT_LEVEL(SUFFIX, ATTR, ID, ID64)                                        \
ATTR __attribute__((noinline)) static void                                             \
fn_a32_activate_exp_##SUFFIX(int code, ptrdiff_t nb, ptrdiff_t size, float *Z, float *D) \
{                                                                                      \
    fn_activate_rows_each_##ID(code, nb, size, Z, size, NULL, D, size);                \
}                                                                                      \
ATTR static void                                                                       \
fn_a32_activate_##SUFFIX(int code, ptrdiff_t nb, ptrdiff_t size, float *Z, float *D)   \
{                                                                                      \
    if (code == FN_ACT_LOGISTIC || code == FN_ACT_TANH)                                \
        fn_a32_activate_exp_##SUFFIX(code, nb, size, Z, D);                            \
    else                                                                               \
        fn_activate_rows_##ID(code, nb, size, Z, size, NULL, D, size);                 \
}                                                                                      \
ATTR static void                                                                       \
fn_a32_exp_##SUFFIX(ptrdiff_t n, float *z)                                             \
{                                                                                      \
    fn_exp_row_##ID(n, z);                                                             \
}                                                                                      \
ATTR static void                                                                       \
fn_a32_exp64_##SUFFIX(ptrdiff_t n, double *z)                                          \
{                                                                                      \
    fn_exp_row_##ID64(n, z);                                                           \
}
FN_A32_AT_LEVEL(v4, FN_CPU_V4_ATTR, f16, 8)
FN_A32_AT_LEVEL(v3, FN_CPU_V3_ATTR, f8, 4)
FN_A32_AT_LEVEL(base, __attribute__((unused)), f4, 2)
#undef FN_A32_AT_LEVEL

/* Whether this process can run `level` (2 x86-64-v4, 1 x86-64-v3, 0 the
 * baseline; _cpu.h's level, FASTNET_SIMD included); -1 asks for its own. */
static int
fn_a32_level(int level)
{
    const int top = fn_cpu_level();
    if (level < 0) return top;
    return level > top ? -1 : level;
}

/* z <- f(z), D <- f'(z) unless D is NULL, for nb rows of `size` floats (the
 * rows contiguous), at `level`; 0 when the process lacks it (nothing done). */
static int
fn_a32_activate_at(int level, int code, ptrdiff_t nb, ptrdiff_t size, float *Z, float *D)
{
    level = fn_a32_level(level);
    if (level == 2) fn_a32_activate_v4(code, nb, size, Z, D);
    else if (level == 1) fn_a32_activate_v3(code, nb, size, Z, D);
    else if (level == 0) fn_a32_activate_base(code, nb, size, Z, D);
    return level >= 0;
}

/* z <- exp(z) for n values, float or double, at `level` (as above). */
static int
fn_a32_exp_at(int level, ptrdiff_t n, float *z)
{
    level = fn_a32_level(level);
    if (level == 2) fn_a32_exp_v4(n, z);
    else if (level == 1) fn_a32_exp_v3(n, z);
    else if (level == 0) fn_a32_exp_base(n, z);
    return level >= 0;
}

static int
fn_a32_exp64_at(int level, ptrdiff_t n, double *z)
{
    level = fn_a32_level(level);
    if (level == 2) fn_a32_exp64_v4(n, z);
    else if (level == 1) fn_a32_exp64_v3(n, z);
    else if (level == 0) fn_a32_exp64_base(n, z);
    return level >= 0;
}

#endif /* FASTNET_ACTIVATIONS32_H */
