/* Every activation and its derivative, written once: the vector functions
 * exp, tanh and logistic (our own polynomial kernels) and the activation
 * codes of _constants.h built on them. Every kernel family includes this
 * header: the single-network loops (_loops.h, for forward_rows and predict),
 * and softmax outputs (_loops.h), the lanes and the trials kernels
 * (_lanes.h, _lanes_pass.h) and the tiny kernels (_tiny.h).
 *
 * One source, four widths. _activation_forms.h is a template included here
 * once per width, on GCC's generic vectors:
 *   fn_*_8   eight doubles: one AVX-512 register (the lanes' width, FN_TL = 8;
 *            in code for another level GCC splits it, and its comparisons
 *            into scalar ones);
 *   fn_*_4   four doubles: one AVX2 register;
 *   fn_*_2   two doubles: one SSE2 register (the portable baseline);
 *   fn_*_1   one double: the scalar form (a row's last value when one is left).
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

/* exp's constants: ln2 in two parts (the high part's last 21 bits are zero),
 * log2(e), and 1.5 * 2^52, which rounds x * log2(e) to an integer when added
 * (and leaves that integer in the low bits of its representation). */
#define FN_AV_LN2_HI 6.93147180369123816490e-01
#define FN_AV_LN2_LO 1.90821492927058770002e-10
#define FN_AV_LOG2E 1.4426950408889634
#define FN_AV_SHIFTER 6755399441055744.0
#define FN_AV_EXP_MAX 710.0
#define FN_AV_EXP_MIN -746.0
/* Where tanh rounds to 1 (1 - tanh(20) = 8.5e-18, below half an ulp of 1). */
#define FN_AV_TANH_ONE 20.0
/* Below it, tanh is a rational function (Pade); above, it runs on exp. */
#define FN_AV_TANH_SMALL 0.55

#define FN_AV_CAT_(f, w) f##_##w
#define FN_AV_CAT(f, w) FN_AV_CAT_(f, w)

/* (the scalar form first: the wider ones' rows end with it) */
#define FN_AV_T fn_av1
#define FN_AV_I fn_av1i
#define FN_AV_U fn_av1u
#define FN_AV_W 1
#include "_activation_forms.h"
#define FN_AV_T fn_av8
#define FN_AV_I fn_av8i
#define FN_AV_U fn_av8u
#define FN_AV_W 8
#include "_activation_forms.h"
#define FN_AV_T fn_av4
#define FN_AV_I fn_av4i
#define FN_AV_U fn_av4u
#define FN_AV_W 4
#include "_activation_forms.h"
#define FN_AV_T fn_av2
#define FN_AV_I fn_av2i
#define FN_AV_U fn_av2u
#define FN_AV_W 2
#include "_activation_forms.h"

#endif /* FASTNET_ACTIVATIONS_H */
