/* The per-weight rules and Hamey's success check for one value: the scalar
 * instance of _rules.h (where the rules are written, once), for the
 * single-network kernels (_rprop.pyx, _backprop.pyx, _per_weight.pyx):
 *   fn_step_<rule>_1, fn_step_1   one weight's step of a rule of the table;
 *   fn_correct_1                                          one output's check.
 * Their lane forms (FN_TL trials at once) are the vector instances of _lanes.h.
 *
 * Plain C, static inline: each caller compiles them into its loop (with RPROP's
 * variant a constant or a loop invariant).
 */
#ifndef FASTNET_RULE_H
#define FASTNET_RULE_H

#include <math.h>
#include <stddef.h>

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

/* RPROP's parameters as the scalar steps take them. */
typedef struct {
    double eta_plus, eta_minus, step_min, step_max;
} fn_rprop_steps;

#define FN_R_SET FN_SC
#define FN_R_STEPS fn_rprop_steps
#define FN_R_PREFIX fn_
#define FN_R_SUFFIX _1
#define FN_R_ATTR static inline
#include "_rules.h"

/* One step of rule `code` of each of the n weights of one network, with the
 * context c (fn_ctx_1): each rule its own loop. The arrays the rule does not
 * keep (the table's GP, ST, DW) may be NULL: they are not touched. */
static inline void
fn_rule_update_1(int code, ptrdiff_t n, double *w, const double *g, double *gp, double *st,
                 double *dw, const fn_ctx_1 *c)
{
    double spare[3];            /* (the place of an array the rule does not keep) */
    /* (a local copy: the stores through w and the arrays cannot reach it, so its
     * values stay in registers across the loop) */
    const fn_ctx_1 cl = *c;
    switch (code) {
#define FN_RULE_LOOP_1(C, name, F, kgp, kst, kdw)                                       \
    case FN_RULE_##C:                                                                   \
        for (ptrdiff_t i = 0; i < n; i++)                                               \
            fn_step_##name##_1(&w[i], &g[i], kgp ? &gp[i] : &spare[0],                  \
                               kst ? &st[i] : &spare[1], kdw ? &dw[i] : &spare[2], &cl); \
        break;
    FN_RULES(FN_RULE_LOOP_1)
#undef FN_RULE_LOOP_1
    }
}

#endif /* FASTNET_RULE_H */
