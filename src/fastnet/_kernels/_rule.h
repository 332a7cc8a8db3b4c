/* The per-weight rules and Hamey's success check for one value: the scalar
 * instance of _rules.h (where the rules are written, once), for the
 * single-network kernels (_rprop.pyx, _backprop.pyx, _per_weight.pyx):
 *   fn_rprop_1, fn_backprop_1, fn_quickprop_1, fn_adam_1   one weight's step;
 *   fn_correct_1                                          one output's check.
 * Their lane forms (FN_TL trials at once) are the vector instances of _lanes.h.
 *
 * Plain C, static inline: each caller compiles them into its loop (with RPROP's
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

/* The operations of one value (_rules.h names them): masks are ints, 0 or 1,
 * and a select a C conditional (only the chosen value is computed). MIN and
 * MAX give the first operand where a comparison with NaN fails. */
#define FN_SC_V double
#define FN_SC_T int
#define FN_SC_LT(a, b) ((a) < (b))
#define FN_SC_GT(a, b) ((a) > (b))
#define FN_SC_LE(a, b) ((a) <= (b))
#define FN_SC_EQ(a, b) ((a) == (b))
#define FN_SC_SEL(k, a, b) ((k) ? (a) : (b))
#define FN_SC_MIN(a, b) ((b) < (a) ? (b) : (a))
#define FN_SC_MAX(a, b) ((b) > (a) ? (b) : (a))
#define FN_SC_SPLAT(x) (x)
#define FN_SC_ABS(x) fabs(x)
#define FN_SC_SQRT(x) sqrt(x)
#define FN_SC_NEG_SIGN_TIMES(g, t) (fn_neg_sign(g) * (t))
#define FN_SC_STEP_UNLESS(k, w, g, t) ((k) ? (w) : (w) + FN_SC_NEG_SIGN_TIMES(g, t))

/* RPROP's parameters (as train_epochs in _rprop.pyx takes them). */
typedef struct {
    double eta_plus, eta_minus, step_min, step_max;
} fn_rprop_steps;

#define FN_R_SET FN_SC
#define FN_R_STEPS fn_rprop_steps
#define FN_R_PREFIX fn_
#define FN_R_SUFFIX _1
#define FN_R_ATTR static inline
#include "_rules.h"

#endif /* FASTNET_RULE_H */
