/* The per-weight rules and Hamey's success check for one value: the scalar
 * instances of _rules.h (where the rules are written, once), for the
 * single-network kernels (_rprop.pyx, _backprop.pyx, _per_weight.pyx), one
 * per value type (_values.h: double keeps its names, float adds _f32):
 *   fn_step_<rule>_1, fn_step_1            one weight's step of a rule of the table;
 *   fn_correct_1                           one output's check;
 *   fn_rule_update_1                       one step of every weight of a network;
 *   fn_step_<rule>_1_f32, ..., fn_rule_update_1_f32   the same over float.
 * The float instance takes the rules' parameters (doubles in the rule's
 * record, fn_rule) converted to float once, when its context is made
 * (fn_ctx_init_1_f32), and the epoch's values (rate, bias corrections)
 * converted once per update (fn_rule_begin_1_f32).
 * Their lane forms (FN_TL trials at once) are the vector instances of _lanes.h.
 *
 * Plain C, static inline: each caller compiles them into its loop (with RPROP's
 * variant a constant or a loop invariant).
 */
#ifndef FN_REAL
#ifndef FASTNET_RULE_H
#define FASTNET_RULE_H

#include <math.h>
#include <stddef.h>

#include "_constants.h"
#include "_rules.h"

/* The operations of one value (_rules.h names them), over the value type of
 * the instance (FN_REAL, expanded where the template uses them): masks are
 * ints, 0 or 1, and a select a C conditional (only the chosen value is
 * computed). MIN and MAX give the first operand where a comparison with NaN
 * fails. */
#define FN_SC_V FN_REAL
#define FN_SC_T int
#define FN_SC_LT(a, b) ((a) < (b))
#define FN_SC_GT(a, b) ((a) > (b))
#define FN_SC_LE(a, b) ((a) <= (b))
#define FN_SC_EQ(a, b) ((a) == (b))
#define FN_SC_SEL(k, a, b) ((k) ? (a) : (b))
#define FN_SC_MIN(a, b) ((b) < (a) ? (b) : (a))
#define FN_SC_MAX(a, b) ((b) > (a) ? (b) : (a))
#define FN_SC_SPLAT(x) (x)
/* (of the operand's own type: |y - t| of a float output and a double target is
 * a double, as in double code) */
#define FN_SC_ABS(x) _Generic((x), float: fabsf, default: fabs)(x)
#define FN_SC_SQRT(x) _Generic((x), float: sqrtf, default: sqrt)(x)
#define FN_SC_NEG_SIGN_TIMES(g, t) (FN_VT(fn_neg_sign)(g) * (t))
#define FN_SC_STEP_UNLESS(k, w, g, t) ((k) ? (w) : (w) + FN_SC_NEG_SIGN_TIMES(g, t))

/* The instances, one per value type. */
#define FN_VALUE_FILE "_rule.h"
#include "_values.h"

#endif /* FASTNET_RULE_H */
#else  /* FN_REAL: the template of one value type */

/* -sign(x): -1, +1, or -0.0 for 0 and NaN (a change of -0.0 leaves w as it is). */
static inline FN_REAL
FN_VT(fn_neg_sign)(FN_REAL x)
{
    return -(x > 0 ? (FN_REAL)1 : (x < 0 ? (FN_REAL)-1 : (FN_REAL)0));
}

/* RPROP's parameters as the scalar steps take them. */
typedef struct {
    FN_REAL eta_plus, eta_minus, step_min, step_max;
} FN_VT(fn_rprop_steps);

#define FN_R_SET FN_SC
#define FN_R_STEPS FN_VT(fn_rprop_steps)
#define FN_R_PREFIX fn_
#define FN_R_SUFFIX FN_VT(_1)
#define FN_R_ATTR static inline
#include "_rules.h"

/* One step of rule `code` of each of the n weights of one network, with the
 * context c (fn_ctx_1): each rule its own loop. The arrays the rule does not
 * keep (the table's GP, ST, DW) may be NULL: they are not touched. */
static inline void
FN_VT(fn_rule_update_1)(int code, ptrdiff_t n, FN_REAL *w, const FN_REAL *g, FN_REAL *gp,
                        FN_REAL *st, FN_REAL *dw, const FN_VT(fn_ctx_1) *c)
{
    FN_REAL spare[3];           /* (the place of an array the rule does not keep) */
    /* (a local copy: the stores through w and the arrays cannot reach it, so its
     * values stay in registers across the loop) */
    const FN_VT(fn_ctx_1) cl = *c;
    switch (code) {
#define FN_RULE_LOOP_1(C, name, F, kgp, kst, kdw)                                       \
    case FN_RULE_##C:                                                                   \
        for (ptrdiff_t i = 0; i < n; i++)                                               \
            FN_VT(fn_step_##name##_1)(&w[i], &g[i], kgp ? &gp[i] : &spare[0],           \
                                      kst ? &st[i] : &spare[1], kdw ? &dw[i] : &spare[2], &cl); \
        break;
    FN_RULES(FN_RULE_LOOP_1)
#undef FN_RULE_LOOP_1
    }
}

/* The values of update t + 1 of rule r (fn_rule_epoch_value, computed in
 * double, then taken to the value type once) and whether the error rose
 * (irprop+), into the context c. */
static inline void
FN_VT(fn_rule_begin_1)(FN_VT(fn_ctx_1) *c, const fn_rule *r, ptrdiff_t t, ptrdiff_t t_max,
                       int rose)
{
    double rate, c1, c2;
    fn_rule_epoch_value(r, t, t_max, &rate, &c1, &c2);
    c->rate = (FN_REAL)rate;
    c->c1 = (FN_REAL)c1;
    c->c2 = (FN_REAL)c2;
    c->rose = rose;
}

#endif /* FN_REAL */
