/* Quickprop and Adam for one weight: the scalar rules of the single-network
 * kernels (_per_weight.pyx), beside RPROP's in _rule.h.
 *
 * Plain C, static inline: each caller compiles them into its loop. g is the
 * weight's gradient dE/dw of the summed squared error (no factor 1/2).
 */
#ifndef FASTNET_PER_WEIGHT_H
#define FASTNET_PER_WEIGHT_H

#include <math.h>

/* The quadratic (secant) term s d / (d_prev - d) of Quickprop, 0 where the
 * denominator is 0 (the two slopes are equal: no parabola to jump to). */
static inline double
fn_quickprop_secant(double s_prev, double d, double d_prev)
{
    const double den = d_prev - d;
    return den != 0.0 ? s_prev * d / den : 0.0;
}

/* One Quickprop step of one weight w (Fahlman 1988, as in his code). With the
 * descent slope d = -(g + decay w), the previous step s_prev and slope d_prev
 * (both 0 at the start) and shrink = mu / (1 + mu):
 *   s_prev >  threshold: step = (eps d if d > 0) + (mu s_prev if d > shrink d_prev,
 *                               else the secant term);
 *   s_prev < -threshold: step = (eps d if d < 0) + (mu s_prev if d < shrink d_prev,
 *                               else the secant term);
 *   otherwise:           step = eps d + momentum s_prev.
 * Then w += step, s_prev = step, d_prev = d. */
static inline void
fn_quickprop_weight(double g, double *w, double *s_prev, double *d_prev, double eps,
                    double mu, double shrink, double decay, double threshold,
                    double momentum)
{
    const double d = -(g + decay * *w);
    const double s = *s_prev, dp = *d_prev;
    double step;
    if (s > threshold) {
        step = d > 0.0 ? eps * d : 0.0;
        step += d > shrink * dp ? mu * s : fn_quickprop_secant(s, d, dp);
    } else if (s < -threshold) {
        step = d < 0.0 ? eps * d : 0.0;
        step += d < shrink * dp ? mu * s : fn_quickprop_secant(s, d, dp);
    } else {
        step = eps * d + momentum * s;
    }
    *w += step;
    *s_prev = step;
    *d_prev = d;
}

/* One Adam step of one weight w (Kingma & Ba 2015): the moving averages m and
 * v of g and g^2, then w -= rate mhat / (sqrt(vhat) + eps) with the bias
 * corrections mhat = m / c1, vhat = v / c2 (c1 = 1 - beta1^t, c2 = 1 - beta2^t
 * of update t, computed once per update by the caller). */
static inline void
fn_adam_weight(double g, double *w, double *m, double *v, double rate, double beta1,
               double beta2, double eps, double c1, double c2)
{
    *m = beta1 * *m + (1.0 - beta1) * g;
    *v = beta2 * *v + (1.0 - beta2) * (g * g);
    *w -= rate * (*m / c1) / (sqrt(*v / c2) + eps);
}

#endif /* FASTNET_PER_WEIGHT_H */
