/* The RPROP rule and Hamey's success check for one value: the scalar forms
 * (the single-network kernels, _rprop.pyx). Their lane forms, FN_TL trials of
 * one weight or one output at once, are in _lanes_rule.h.
 *
 * Plain C, static inline: each caller compiles them into its loop (with the
 * variant a constant or a loop invariant).
 */
#ifndef FASTNET_RULE_H
#define FASTNET_RULE_H

#include <math.h>

#include "_constants.h"

/* -sign(x): -1, +1, or -0.0 for 0 and NaN (a change of -0.0 leaves w as it is). */
static inline double
fn_neg_sign(double x)
{
    return -(x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0));
}

/* One RPROP step of one weight w from its epoch gradient g (Riedmiller & Braun
 * 1993; the variants after Igel & Huesken 2000, `variant` an FN_*RPROP_* code):
 * the step grows by eta_plus (at most step_max) while g keeps its sign, shrinks
 * by eta_minus (at least step_min) when it changes; then
 *   rprop+   steps by -sign(g) step, but on a sign change takes the last change
 *            back and forgets g (g_prev = 0);
 *   rprop-   always steps;
 *   irprop-  on a sign change makes no step and forgets g;
 *   irprop+  on a sign change takes the last change back only if the epoch
 *            error rose (error_rose), and forgets g.
 * g_prev, dw_prev (the last change) and step are the weight's state. */
static inline void
fn_rprop_weight(int variant, double g, double *w, double *g_prev, double *dw_prev,
                double *step, double eta_plus, double eta_minus, double step_min,
                double step_max, int error_rose)
{
    const double prod = *g_prev * g;
    if (prod > 0.0) {
        const double t = *step * eta_plus;
        *step = step_max < t ? step_max : t;
    } else if (prod < 0.0) {
        const double t = *step * eta_minus;
        *step = step_min > t ? step_min : t;
        if (variant != FN_RPROP_MINUS) {    /* (rprop- steps with the shrunk step) */
            if (variant == FN_RPROP_PLUS) {
                *w -= *dw_prev;                 /* backtrack the last change */
                *dw_prev = -*dw_prev;
            } else {
                if (variant == FN_IRPROP_PLUS && error_rose) *w -= *dw_prev;
                *dw_prev = 0.0;                 /* no step this epoch */
            }
            *g_prev = 0.0;
            return;
        }
    }
    const double dw = fn_neg_sign(g) * *step;
    *w += dw;
    *dw_prev = dw;
    *g_prev = g;
}

/* Hamey's success check (1992) for one output y of target t, the threshold
 * rule of fastnet.measures.threshold_correct: right if y > 1 - r_c for target
 * 1, y < r_c for target 0, |y - t| <= analog for other targets (analog < 0:
 * never). NaN is never right. A network passes when every output of every
 * example is right. */
static inline int
fn_output_correct(double y, double t, double r_c, double analog)
{
    if (t == 1.0) return y > 1.0 - r_c;
    if (t == 0.0) return y < r_c;
    return fabs(y - t) <= analog;
}

#endif /* FASTNET_RULE_H */
