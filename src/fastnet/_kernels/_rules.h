/* The per-weight rules and Hamey's success check, each written once: RPROP
 * (its four variants), batch backpropagation with momentum, Quickprop, Adam,
 * and the threshold rule of one output. One body per rule, over a value type
 * and its operations; each representation is an instance of it:
 *
 *   _rule.h    one weight (double; the single-network kernels _rprop.pyx,
 *              _backprop.pyx, _per_weight.pyx): fn_rprop_1, fn_backprop_1,
 *              fn_quickprop_1, fn_adam_1, fn_correct_1;
 *   _lanes.h   FN_TL trials of one weight at once (fn_tvr): fn_lanes_<rule>_gm
 *              (GCC's generic vectors, every CPU level) and fn_lanes_<rule>_km
 *              (AVX-512 mask registers, the tiny kernels).
 *
 * Not an ordinary header. Its first part (guarded) holds what every instance
 * shares: the parameter structs of Quickprop and Adam. The rest is a template
 * that an instance includes after defining its parameters, and that undefines
 * them at its end:
 *   FN_R_SET      the operation set, FN_<set>_<op> (FN_SC: _rule.h; FN_GM,
 *                 FN_KM: _lanes.h), with
 *                   V          the value type;  T  the mask type;
 *                   LT, GT, LE, EQ (a, b)   ordered comparisons (false with NaN);
 *                   SEL(k, a, b)   a where k, else b;
 *                   MIN(a, b), MAX(a, b)   the smaller (larger) value; each set
 *                              keeps its own order of operands, which matters
 *                              only for NaN (never a step of valid parameters);
 *                   SPLAT(x)   the double x as a value;  ABS, SQRT  per value;
 *                   NEG_SIGN_TIMES(g, t)   -sign(g) t for a step t >= +0: -t,
 *                              +t, or -0.0 where g is 0 or NaN (w + -0.0 is w);
 *                   STEP_UNLESS(k, w, g, t)   w where k, else w + NEG_SIGN_TIMES(g, t)
 *                              (vectors: in as many operations as one select);
 *   FN_R_STEPS    RPROP's parameter struct of the instance (eta_plus,
 *                 eta_minus, step_min, step_max as values of type V);
 *   FN_R_PREFIX, FN_R_SUFFIX   a function's name is prefix, rule, suffix
 *                 (fn_lanes_rprop_gm, fn_rprop_1);
 *   FN_R_ATTR     storage class, inlining and target of the functions.
 *
 * A lane of a vector instance computes what the scalar instance computes, in
 * the same operations, so the two agree bit for bit, except that where the CPU
 * level has multiply-adds, the compiler may fuse a product and a sum of the
 * vector instances (as in the lanes' passes): those agree to rounding.
 *
 * Every function reads its arguments through pointers and writes its results
 * back through them (vector arguments by value would have another ABI in each
 * CPU clone, GCC's -Wpsabi; inlined, the pointers vanish).
 */
#ifndef FASTNET_RULES_H
#define FASTNET_RULES_H

#include <math.h>

#include "_constants.h"

/* Quickprop's parameters, as the rule codes' p[] give them (epsilon, mu, decay,
 * threshold, momentum) and shrink = mu / (1 + mu). */
typedef struct {
    double eps, mu, shrink, decay, threshold, momentum;
} fn_quickprop_params;

/* Adam's parameters: learning rate, beta1, beta2, epsilon. */
typedef struct {
    double rate, beta1, beta2, eps;
} fn_adam_params;

static inline void
fn_quickprop_init(fn_quickprop_params *q, const double *p)
{
    q->eps = p[0];
    q->mu = p[1];
    q->shrink = q->mu / (1.0 + q->mu);
    q->decay = p[2];
    q->threshold = p[3];
    q->momentum = p[4];
}

static inline void
fn_adam_init(fn_adam_params *a, const double *p)
{
    a->rate = p[0];
    a->beta1 = p[1];
    a->beta2 = p[2];
    a->eps = p[3];
}

#endif /* FASTNET_RULES_H */

#define FN_R_CAT_(a, b) a##_##b
#define FN_R_CAT(a, b) FN_R_CAT_(a, b)
#define FN_R(op) FN_R_CAT(FN_R_SET, op)
#define FN_R_JOIN_(a, b, c) a##b##c
#define FN_R_JOIN(a, b, c) FN_R_JOIN_(a, b, c)
#define FN_R_NAME(rule) FN_R_JOIN(FN_R_PREFIX, rule, FN_R_SUFFIX)

/* One RPROP step of one weight (Riedmiller & Braun 1993; the variants after
 * Igel & Huesken 2000), V an FN_*RPROP_* code (a constant where the caller can
 * make it one: each variant then compiles to its own code), in place: weight
 * w, epoch gradient g, previous gradient gp, step s, previous change dw
 * (neither read nor written for irprop-, which never needs it); rose (irprop+
 * alone): whether the epoch error rose. The step grows by eta_plus (at most
 * step_max) where gp g > 0, shrinks by eta_minus (at least step_min) where
 * gp g < 0 (a sign change); then
 *   rprop+   steps by -sign(g) step, but on a sign change takes the last change
 *            back and forgets g (gp = 0);
 *   rprop-   always steps (with the shrunk step on a sign change);
 *   irprop-  on a sign change makes no step and forgets g;
 *   irprop+  on a sign change takes the last change back only if the epoch
 *            error rose, and forgets g. */
FN_R_ATTR void
FN_R_NAME(rprop)(const int V, FN_R(V) *w, const FN_R(V) *g, FN_R(V) *gp, FN_R(V) *s,
                 FN_R(V) *dw, const FN_R(T) *rose, const FN_R_STEPS *k)
{
    const FN_R(V) zero = FN_R(SPLAT)(0.0);
    const FN_R(V) gv = *g, wv = *w, sv = *s, prod = *gp * gv;
    const FN_R(V) dwv = V == FN_IRPROP_MINUS ? zero : *dw;
    const FN_R(T) pos = FN_R(GT)(prod, zero), neg = FN_R(LT)(prod, zero);
    const FN_R(V) t = FN_R(SEL)(pos, FN_R(MIN)(sv * k->eta_plus, k->step_max),
                                FN_R(SEL)(neg, FN_R(MAX)(sv * k->eta_minus, k->step_min), sv));
    *s = t;
    const FN_R(V) change = FN_R(NEG_SIGN_TIMES)(gv, t);
    if (V == FN_IRPROP_MINUS) {
        *w = FN_R(STEP_UNLESS)(neg, wv, gv, t);
        *gp = FN_R(SEL)(neg, zero, gv);
        return;
    }
    if (V == FN_RPROP_MINUS) {
        *w = wv + change;
        *dw = change;
        *gp = gv;
    } else if (V == FN_RPROP_PLUS) {
        *w = FN_R(SEL)(neg, wv - dwv, wv + change);
        *dw = FN_R(SEL)(neg, -dwv, change);
        *gp = FN_R(SEL)(neg, zero, gv);
    } else {
        *w = FN_R(SEL)(neg, FN_R(SEL)(*rose, wv - dwv, wv), wv + change);
        *dw = FN_R(SEL)(neg, zero, change);
        *gp = FN_R(SEL)(neg, zero, gv);
    }
}

/* One step of batch backpropagation with momentum of one weight, in place:
 * dw = -rate g + momentum dw_prev, w += dw, dw_prev = dw. The rate is a value
 * (each lane's own: trials that started in different epochs decay apart). */
FN_R_ATTR void
FN_R_NAME(backprop)(FN_R(V) *w, const FN_R(V) *g, FN_R(V) *dw, const FN_R(V) *rate,
                    double momentum)
{
    const FN_R(V) d = -*rate * *g + momentum * *dw;
    *w += d;
    *dw = d;
}

/* One Quickprop step of one weight (Fahlman 1988, as in his code), in place:
 * weight w, epoch gradient g, previous slope dp and step sp (both 0 at the
 * start). With the descent slope d = -(g + decay w) and shrink = mu / (1 + mu):
 *   sp >  threshold: step = (eps d if d > 0) + (mu sp if d > shrink dp,
 *                           else the secant term);
 *   sp < -threshold: step = (eps d if d < 0) + (mu sp if d < shrink dp,
 *                           else the secant term);
 *   otherwise:       step = eps d + momentum sp;
 * the secant term sp d / (dp - d), 0 where dp - d is 0 (no parabola to jump
 * to). Then w += step, sp = step, dp = d. */
FN_R_ATTR void
FN_R_NAME(quickprop)(FN_R(V) *w, const FN_R(V) *g, FN_R(V) *dp, FN_R(V) *sp,
                     const fn_quickprop_params *q)
{
    const FN_R(V) zero = FN_R(SPLAT)(0.0);
    const FN_R(V) d = -(*g + q->decay * *w);
    const FN_R(V) s = *sp, dpv = *dp, den = dpv - d;
    const FN_R(V) secant = FN_R(SEL)(FN_R(EQ)(den, zero), zero, s * d / den);
    const FN_R(V) lin = q->eps * d, grow = q->mu * s, lim = q->shrink * dpv;
    const FN_R(V) up = FN_R(SEL)(FN_R(GT)(d, zero), lin, zero)
        + FN_R(SEL)(FN_R(GT)(d, lim), grow, secant);
    const FN_R(V) down = FN_R(SEL)(FN_R(LT)(d, zero), lin, zero)
        + FN_R(SEL)(FN_R(LT)(d, lim), grow, secant);
    const FN_R(V) plain = lin + q->momentum * s;
    const FN_R(V) step = FN_R(SEL)(FN_R(GT)(s, FN_R(SPLAT)(q->threshold)), up,
                                   FN_R(SEL)(FN_R(LT)(s, FN_R(SPLAT)(-q->threshold)), down,
                                             plain));
    *w += step;
    *sp = step;
    *dp = d;
}

/* One Adam step of one weight (Kingma & Ba 2015), in place: the moving
 * averages m and v of g and g^2, then w -= rate mhat / (sqrt(vhat) + eps) with
 * the bias corrections mhat = m / c1, vhat = v / c2 (c1 = 1 - beta1^t,
 * c2 = 1 - beta2^t of update t, computed once per update by the caller; values:
 * each lane's own, its trial's t). */
FN_R_ATTR void
FN_R_NAME(adam)(FN_R(V) *w, const FN_R(V) *g, FN_R(V) *m, FN_R(V) *v, const fn_adam_params *a,
                const FN_R(V) *c1, const FN_R(V) *c2)
{
    const FN_R(V) gv = *g;
    const FN_R(V) mv = a->beta1 * *m + (1.0 - a->beta1) * gv;
    const FN_R(V) vv = a->beta2 * *v + (1.0 - a->beta2) * (gv * gv);
    const FN_R(V) r = FN_R(SQRT)(vv / *c2);
    *w -= a->rate * (mv / *c1) / (r + a->eps);
    *m = mv;
    *v = vv;
}

/* Hamey's success check (1992) of one output y of target t: clears *ok where
 * y is wrong by the threshold rule of fastnet.measures.threshold_correct:
 * right if y > 1 - r_c for target 1, y < r_c for target 0, |y - t| <= analog
 * for other targets (analog < 0: never). NaN is never right. A network passes
 * when every output of every example is right. */
FN_R_ATTR void
FN_R_NAME(correct)(FN_R(T) *ok, const FN_R(V) *y, double t, double r_c, double analog)
{
    if (t == 1.0) *ok &= FN_R(GT)(*y, FN_R(SPLAT)(1.0 - r_c));
    else if (t == 0.0) *ok &= FN_R(LT)(*y, FN_R(SPLAT)(r_c));
    else *ok &= FN_R(LE)(FN_R(ABS)(*y - t), FN_R(SPLAT)(analog));
}

#undef FN_R_CAT_
#undef FN_R_CAT
#undef FN_R
#undef FN_R_JOIN_
#undef FN_R_JOIN
#undef FN_R_NAME
#undef FN_R_SET
#undef FN_R_STEPS
#undef FN_R_PREFIX
#undef FN_R_SUFFIX
#undef FN_R_ATTR
