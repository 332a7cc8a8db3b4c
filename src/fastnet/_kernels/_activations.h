/* Every activation and its derivative, written once: the vector functions
 * exp, tanh and logistic (our own polynomial kernels) and the activation
 * codes of _constants.h built on them. Every kernel family includes this
 * header: the single-network loops (_loops.h, for forward_rows and predict),
 * and softmax outputs (_loops.h), the lanes and the trials kernels
 * (_lanes.h, _lanes_pass.h) and the tiny kernels (_tiny.h).
 *
 * One source, two value types, four widths each. _activation_forms.h is a
 * template included here once per (type, width), on GCC's generic vectors:
 *   fn_*_8   eight doubles: one AVX-512 register (the lanes' width, FN_TL = 8;
 *            in code for another level GCC splits it, and its comparisons
 *            into scalar ones);
 *   fn_*_4   four doubles: one AVX2 register;
 *   fn_*_2   two doubles: one SSE2 register (the portable baseline);
 *   fn_*_1   one double: the scalar form (a row's last value when one is left);
 *   fn_*_f16, fn_*_f8, fn_*_f4, fn_*_f1   the same at float32: sixteen floats
 *            per AVX-512 register, eight per AVX2, four per SSE2, one.
 * The value type is the template's parameter FN_AV_BITS (64 or 32) with the
 * vector, mask (int64 or int32) and scalar types: the range reduction, the
 * scalings by 2^k, tanh's two forms and their selection, the rows and their
 * tails are one text for both. What is written per type: the constants
 * (FN_AV64_*, FN_AV32_* below) and the polynomials, shorter for float32
 * (exp's of degree 4, not 9; tanh's [2/2] Pade, not [3/4];
 * benchmarks/activation_coefficients.py makes both sets); and float32's
 * logistic carries e and 1 + e as pairs of floats (see fn_logistic).
 * The float64 forms compile to the same code as before float32 was added
 * (benchmarks/activation_bits.py fingerprints their results).
 * Lane for lane, every width runs the same operations in the same order, so
 * within one CPU level a value's result does not depend on the width or the
 * place it was computed in (tested bit for bit). The CPU level is the
 * includer's: the functions are always inlined into the kernels, each of
 * which is compiled per level (_trials_level.h, _loops.h's functions of one
 * level each, which take the width native to their level).
 *
 * Accuracy (tests/test_activations.py sweeps the whole range against the C
 * library; docs/performance.md gives the measured maxima): within 2 ulp of
 * libm's exp and tanh, tanh within 1 ulp of its exact value (libm's own is
 * up to 2 off, so rare values lie 3 ulp from libm's: 1 in 40 million of
 * benchmarks/activation_accuracy.py), logistic within 2 ulp of its exact value.
 *   exp(x)   x = k ln2 + r, |r| <= ln2 / 2 (Cody & Waite's two-part ln2, whose
 *            high part has 32 significant bits, so k * ln2_hi is exact);
 *            exp(r) = 1 + (r + r^2 Q(r)), Q the degree-9 Chebyshev fit of
 *            (exp(r) - 1 - r) / r^2 (1.6e-17 relative at most, with its
 *            coefficients rounded to double); the result is scaled by
 *            2^k as 2^k1 * 2^k2, k1 + k2 = k, so that results near the
 *            overflow threshold and subnormal results need no special case
 *            (for x <= 0, logistic's exp, as 2^(k+55) * 2^-55: the same one
 *            rounding in fewer operations).
 *            x > 710 is taken as 710 (exp overflows to +inf) and x < -746 as
 *            -746 (exp underflows to +0): out of range, k would overflow.
 *   tanh(x)  |x| < 0.55: |x| + |x| s P(s) / Q(s), s = x^2, P/Q the [3/4] Pade
 *            approximant of (tanh(x)/x - 1)/s (Lambert's continued fraction;
 *            4.7e-18 relative to tanh with its coefficients rounded);
 *            |x| >= 0.55: e / (e + 2), e = exp(2|x|) - 1 = 2^k (exp(r) - 1)
 *            + (2^k - 1) (k >= 2 there: little cancellation); the two forms
 *            share one division; then the sign of x. tanh(+-0) = +-0,
 *            subnormals pass unchanged, |x| >= 20 gives
 *            +-1 exactly (as libm rounds it), +-inf gives +-1.
 *            exp's polynomial runs by Estrin's scheme (a short chain of
 *            dependent operations: the tiny kernels wait on it).
 *   logistic 1 / (1 + exp(-x)) for x >= 0, e / (1 + e) with e = exp(x) for
 *            x < 0 (1 + e then rounds no more than for x >= 0); subnormal
 *            below -708.4, 0 below -745.2, 1 above 36.7. Within 2 ulp of the
 *            exact value (tested against long double), not of the formula
 *            1 / (1 + exp(-x)), which loses accuracy for x < 0.
 * float32 (tests/test_activations_f32.py on 10^7 inputs; every one of the
 * 2^32 in benchmarks/activation_accuracy_f32.py): tanh, logistic and exp within
 * 2 ulp of float32 of the exact value (measured on every input: at most 1.50,
 * 1.08 and 1.10 ulp; logistic 1.52 in the baseline, which has no FMA);
 * exp overflows to +inf above 88.72 and is 0 below -103.98, tanh is +-1 from
 * 9.02 on, logistic 1 above 17.4; the edges otherwise as in float64.
 * NaN propagates through every function (a NaN net input still shows as
 * divergence). No function reads errno or the rounding mode, and no branch
 * depends on the data: a vector computes both tanh forms and selects.
 */
#ifndef FASTNET_ACTIVATIONS_H
#define FASTNET_ACTIVATIONS_H

#include <stddef.h>
#include <stdint.h>

#include "_constants.h"

#define FN_AV_INLINE static inline __attribute__((always_inline))

typedef double fn_av8 __attribute__((vector_size(8 * sizeof(double))));
typedef int64_t fn_av8i __attribute__((vector_size(8 * sizeof(double))));
typedef uint64_t fn_av8u __attribute__((vector_size(8 * sizeof(double))));
typedef double fn_av4 __attribute__((vector_size(4 * sizeof(double))));
typedef int64_t fn_av4i __attribute__((vector_size(4 * sizeof(double))));
typedef uint64_t fn_av4u __attribute__((vector_size(4 * sizeof(double))));
typedef double fn_av2 __attribute__((vector_size(2 * sizeof(double))));
typedef int64_t fn_av2i __attribute__((vector_size(2 * sizeof(double))));
typedef uint64_t fn_av2u __attribute__((vector_size(2 * sizeof(double))));
typedef double fn_av1 __attribute__((vector_size(sizeof(double))));
typedef int64_t fn_av1i __attribute__((vector_size(sizeof(double))));
typedef uint64_t fn_av1u __attribute__((vector_size(sizeof(double))));
/* float32: sixteen lanes per AVX-512 register, eight per AVX2, four per SSE */
typedef float fn_avf16 __attribute__((vector_size(16 * sizeof(float))));
typedef int32_t fn_avf16i __attribute__((vector_size(16 * sizeof(float))));
typedef uint32_t fn_avf16u __attribute__((vector_size(16 * sizeof(float))));
typedef float fn_avf8 __attribute__((vector_size(8 * sizeof(float))));
typedef int32_t fn_avf8i __attribute__((vector_size(8 * sizeof(float))));
typedef uint32_t fn_avf8u __attribute__((vector_size(8 * sizeof(float))));
typedef float fn_avf4 __attribute__((vector_size(4 * sizeof(float))));
typedef int32_t fn_avf4i __attribute__((vector_size(4 * sizeof(float))));
typedef uint32_t fn_avf4u __attribute__((vector_size(4 * sizeof(float))));
typedef float fn_avf1 __attribute__((vector_size(sizeof(float))));
typedef int32_t fn_avf1i __attribute__((vector_size(sizeof(float))));
typedef uint32_t fn_avf1u __attribute__((vector_size(sizeof(float))));

/* exp's constants: ln2 in two parts (the high part's last 21 bits are zero),
 * log2(e), and 1.5 * 2^52, which rounds x * log2(e) to an integer when added
 * (and leaves that integer in the low bits of its representation). */
#define FN_AV64_LN2_HI 6.93147180369123816490e-01
#define FN_AV64_LN2_LO 1.90821492927058770002e-10
#define FN_AV64_LOG2E 1.4426950408889634
#define FN_AV64_SHIFTER 6755399441055744.0
#define FN_AV64_EXP_MAX 710.0
#define FN_AV64_EXP_MIN -746.0
/* Where tanh rounds to 1 (1 - tanh(20) = 8.5e-18, below half an ulp of 1). */
#define FN_AV64_TANH_ONE 20.0
/* Below it, tanh is a rational function (Pade); above, it runs on exp. */
#define FN_AV64_TANH_SMALL 0.55
/* The exponent's bias and place; exp's scalings (2^k = 2^k1 2^k2 around
 * HALF_K; 2^(k + LIFT) UNLIFT for x <= 0); the sign bit and the rest. */
#define FN_AV64_BIAS 1023
#define FN_AV64_MANT 52
#define FN_AV64_HALF_K 1024
#define FN_AV64_LIFT 55
#define FN_AV64_UNLIFT 0x1p-55
#define FN_AV64_INT_MIN INT64_MIN
#define FN_AV64_INT_MAX INT64_MAX

/* float32's: the same, at float's precision and range. ln2's high part has 15
 * significant bits (0x3f317200: k ln2_hi is exact for |k| < 512) and the low
 * part is float's nearest to the rest (fdlibm's expf); 1.5 * 2^23 rounds to
 * integers. exp overflows above 88.72 (x > 89 is taken as 89: k = 128) and
 * is 0 below -103.98 (x < -104 as -104: k = -150); tanh rounds to 1 above
 * 9.01 (1 - tanh(10) = 4.1e-9, below half an ulp of 1: 3e-8). */
#define FN_AV32_LN2_HI 0.693145751953125f
#define FN_AV32_LN2_LO 1.4286068e-06f
#define FN_AV32_LOG2E 1.442695f
#define FN_AV32_SHIFTER 12582912.0f
#define FN_AV32_EXP_MAX 89.0f
#define FN_AV32_EXP_MIN -104.0f
#define FN_AV32_TANH_ONE 10.0f
#define FN_AV32_TANH_SMALL 0.55f
#define FN_AV32_BIAS 127
#define FN_AV32_MANT 23
#define FN_AV32_HALF_K 128
#define FN_AV32_LIFT 26
#define FN_AV32_UNLIFT 0x1p-26f
#define FN_AV32_INT_MIN INT32_MIN
#define FN_AV32_INT_MAX INT32_MAX

#define FN_AV_CAT_(f, w) f##_##w
#define FN_AV_CAT(f, w) FN_AV_CAT_(f, w)
#define FN_AV_KCAT_(b, c) FN_AV##b##c
#define FN_AV_KCAT(b, c) FN_AV_KCAT_(b, c)

/* float64: fn_*_1, fn_*_8, fn_*_4, fn_*_2 (the scalar form first: the wider
 * ones' rows end with it) */
#define FN_AV_BITS 64
#define FN_AV_S double
#define FN_AV_T1 fn_av1
#define FN_AV_ONE(f) f##_1
#define FN_AV_T fn_av1
#define FN_AV_I fn_av1i
#define FN_AV_U fn_av1u
#define FN_AV_W 1
#define FN_AV_ID 1
#include "_activation_forms.h"
#define FN_AV_T fn_av8
#define FN_AV_I fn_av8i
#define FN_AV_U fn_av8u
#define FN_AV_W 8
#define FN_AV_ID 8
#include "_activation_forms.h"
#define FN_AV_T fn_av4
#define FN_AV_I fn_av4i
#define FN_AV_U fn_av4u
#define FN_AV_W 4
#define FN_AV_ID 4
#include "_activation_forms.h"
#define FN_AV_T fn_av2
#define FN_AV_I fn_av2i
#define FN_AV_U fn_av2u
#define FN_AV_W 2
#define FN_AV_ID 2
#include "_activation_forms.h"
#undef FN_AV_BITS
#undef FN_AV_S
#undef FN_AV_T1
#undef FN_AV_ONE

/* float32: fn_*_f1, fn_*_f16, fn_*_f8, fn_*_f4, the same template */
#define FN_AV_BITS 32
#define FN_AV_S float
#define FN_AV_T1 fn_avf1
#define FN_AV_ONE(f) f##_f1
#define FN_AV_T fn_avf1
#define FN_AV_I fn_avf1i
#define FN_AV_U fn_avf1u
#define FN_AV_W 1
#define FN_AV_ID f1
#include "_activation_forms.h"
#define FN_AV_T fn_avf16
#define FN_AV_I fn_avf16i
#define FN_AV_U fn_avf16u
#define FN_AV_W 16
#define FN_AV_ID f16
#include "_activation_forms.h"
#define FN_AV_T fn_avf8
#define FN_AV_I fn_avf8i
#define FN_AV_U fn_avf8u
#define FN_AV_W 8
#define FN_AV_ID f8
#include "_activation_forms.h"
#define FN_AV_T fn_avf4
#define FN_AV_I fn_avf4i
#define FN_AV_U fn_avf4u
#define FN_AV_W 4
#define FN_AV_ID f4
#include "_activation_forms.h"
#undef FN_AV_BITS
#undef FN_AV_S
#undef FN_AV_T1
#undef FN_AV_ONE

#endif /* FASTNET_ACTIVATIONS_H */
