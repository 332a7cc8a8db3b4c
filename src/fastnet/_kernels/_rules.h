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
 *   FN_R_ATTR     storage class, inlining and target of the functions;
 *   FN_R_SHARE    optional: the suffix of an earlier instance of the same value
 *                 type whose records (qp, ap, ctx) this one takes instead of
 *                 defining its own (the lanes' mask sets of each CPU level share
 *                 one step context: _lanes.h);
 *   FN_R_REAL     the scalar of the value type (double, the default; float for
 *                 the lanes of float32 trials): the parameters the steps
 *                 multiply by (Quickprop's, Adam's, the momentum) are converted
 *                 to it once, in the step context (FN_R_NAME(ctx_init)), from
 *                 the record's doubles.
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
#include <stddef.h>

#include "_constants.h"

/* The rules' table: a rule is its body below and one line here; its code, its
 * parameter record, its lines in every dispatch (the single network's loop,
 * the lanes' loops), and the names Python reads (fastnet._kernels._rules) are
 * all made from that line. A line is
 *   X(CODE, name, FIELDS, GP, ST, DW)
 *   CODE    its code is FN_RULE_CODE, the line's place in the table;
 *   name    its step is FN_R_NAME(step_name) of the template below (one weight,
 *           or FN_TL lanes of it), the name Python asks for (_rules.RULES);
 *   FIELDS  its parameters: a list macro F(field) F(field) ..., each a double of
 *           its record (fn_params_name) and a keyword of _rules.Rule(name, ...);
 *   GP, ST, DW  whether it keeps the per-weight arrays g_prev, step, dw_prev
 *           (in that order; 1 or 0): the state its step reads and writes.
 * The values a step takes besides its parameters (RPROP's "error rose", the
 * rate or bias corrections of epoch t: fn_rule_epoch_value) are the step
 * context's (FN_R_NAME(ctx) below). */
#define FN_RPROP_FIELDS(F) F(eta_plus) F(eta_minus) F(delta_min) F(delta_max)
#define FN_BACKPROP_FIELDS(F) F(learning_rate) F(momentum) F(decay)
#define FN_QUICKPROP_FIELDS(F) F(epsilon) F(mu) F(decay) F(threshold) F(momentum)
#define FN_ADAM_FIELDS(F) F(learning_rate) F(beta1) F(beta2) F(epsilon)
#define FN_RULES(X)                                                                     \
    X(RPROP_PLUS, rprop_plus, FN_RPROP_FIELDS, 1, 1, 1)                                 \
    X(RPROP_MINUS, rprop_minus, FN_RPROP_FIELDS, 1, 1, 1)                               \
    X(IRPROP_MINUS, irprop_minus, FN_RPROP_FIELDS, 1, 1, 0)                             \
    X(IRPROP_PLUS, irprop_plus, FN_RPROP_FIELDS, 1, 1, 1)                               \
    X(BACKPROP, backprop, FN_BACKPROP_FIELDS, 0, 0, 1)                                  \
    X(QUICKPROP, quickprop, FN_QUICKPROP_FIELDS, 1, 1, 0)                               \
    X(ADAM, adam, FN_ADAM_FIELDS, 1, 1, 0)                                              \
    /* (the table's end: a new rule's line goes above) */

/* The codes: FN_RULE_<CODE>, in the table's order. */
#define FN_RULE_CODE_OF(C, name, F, gp, st, dw) FN_RULE_##C,
enum { FN_RULES(FN_RULE_CODE_OF) FN_RULE_COUNT };
#undef FN_RULE_CODE_OF
/* RPROP's variants by their own names (Riedmiller & Braun 1993; Igel & Huesken 2000). */
enum {
    FN_RPROP_PLUS = FN_RULE_RPROP_PLUS,    /* rprop+: backtrack the last change on a sign change */
    FN_RPROP_MINUS = FN_RULE_RPROP_MINUS,  /* rprop-: no backtracking */
    FN_IRPROP_MINUS = FN_RULE_IRPROP_MINUS, /* irprop-: no step on a sign change, forget g */
    FN_IRPROP_PLUS = FN_RULE_IRPROP_PLUS   /* irprop+: backtrack only if the epoch error rose */
};

/* Each rule's parameter record, fn_params_<name>: its FIELDS, doubles. */
#define FN_RULE_FIELD(f) double f;
#define FN_RULE_PARAMS_OF(C, name, FIELDS, gp, st, dw) typedef struct { FIELDS(FN_RULE_FIELD) } fn_params_##name;
FN_RULES(FN_RULE_PARAMS_OF)
#undef FN_RULE_PARAMS_OF
#undef FN_RULE_FIELD

/* The most parameters of a rule. */
#define FN_RULE_NP 5

/* A rule as the kernels take it: its code and its parameter record (the
 * member of its name; p: the same doubles in order). Made and checked by
 * fastnet._kernels._rules.Rule, by name. */
typedef struct {
    int code;
    union {
        double p[FN_RULE_NP];
#define FN_RULE_MEMBER_OF(C, name, F, gp, st, dw) fn_params_##name name;
        FN_RULES(FN_RULE_MEMBER_OF)
#undef FN_RULE_MEMBER_OF
    };
} fn_rule;

/* The table as data, for Python (_rules.pyx): name, fields (separated by
 * spaces) and the arrays kept, of each code. */
typedef struct {
    const char *name, *fields;
    int gp, st, dw;
} fn_rule_entry;
#define FN_RULE_FIELD_NAME(f) #f " "
#define FN_RULE_ENTRY_OF(C, name, FIELDS, gp, st, dw) {#name, FIELDS(FN_RULE_FIELD_NAME), gp, st, dw},
static const fn_rule_entry fn_rule_table[FN_RULE_COUNT] __attribute__((unused)) = {
    FN_RULES(FN_RULE_ENTRY_OF)
};
#undef FN_RULE_ENTRY_OF
#undef FN_RULE_FIELD_NAME

/* Whether rule R (a constant where the caller makes it one) keeps array k
 * (0 g_prev, 1 step, 2 dw_prev). */
static inline __attribute__((always_inline)) int
fn_rule_keeps(int R, int k)
{
    switch (R) {
#define FN_RULE_KEEPS_OF(C, name, F, gp, st, dw) \
    case FN_RULE_##C: return k == 0 ? gp : k == 1 ? st : dw;
    FN_RULES(FN_RULE_KEEPS_OF)
#undef FN_RULE_KEEPS_OF
    }
    return 0;
}

/* Quickprop's parameters as its step uses them: its record and
 * shrink = mu / (1 + mu). */
typedef struct {
    double eps, mu, shrink, decay, threshold, momentum;
} fn_quickprop_params;

/* Adam's parameters: learning rate, beta1, beta2, epsilon. */
typedef struct {
    double rate, beta1, beta2, eps;
} fn_adam_params;

static inline void
fn_quickprop_init(fn_quickprop_params *q, const fn_params_quickprop *p)
{
    q->eps = p->epsilon;
    q->mu = p->mu;
    q->shrink = q->mu / (1.0 + q->mu);
    q->decay = p->decay;
    q->threshold = p->threshold;
    q->momentum = p->momentum;
}

static inline void
fn_adam_init(fn_adam_params *a, const fn_params_adam *p)
{
    a->rate = p->learning_rate;
    a->beta1 = p->beta1;
    a->beta2 = p->beta2;
    a->eps = p->epsilon;
}

/* Whether a rule's values change from epoch to epoch (backprop's decayed
 * rate, Adam's bias corrections). */
static inline int
fn_rule_epoch_varies(const fn_rule *r)
{
    return (r->code == FN_RULE_BACKPROP && r->backprop.decay != 0.0) || r->code == FN_RULE_ADAM;
}

/* The values of the epoch (or update) after a trial's t-th (t = 0: its first):
 * backprop's rate, falling linearly to 0 at t_max where it decays; Adam's bias
 * corrections c1 = 1 - beta1^(t+1), c2 = 1 - beta2^(t+1); 1 otherwise. */
static inline void
fn_rule_epoch_value(const fn_rule *r, ptrdiff_t t, ptrdiff_t t_max, double *rate, double *c1,
                    double *c2)
{
    *rate = r->p[0];
    *c1 = *c2 = 1.0;
    if (r->code == FN_RULE_BACKPROP && r->backprop.decay != 0.0) {
        *rate = r->backprop.learning_rate * (1.0 - (double)t / (double)t_max);
    } else if (r->code == FN_RULE_ADAM) {
        *c1 = 1.0 - pow(r->adam.beta1, (double)(t + 1));
        *c2 = 1.0 - pow(r->adam.beta2, (double)(t + 1));
    }
}

#endif /* FASTNET_RULES_H */

/* The template (included with an instance's parameters; without them, the
 * table alone). */
#ifdef FN_R_SET

#define FN_R_CAT_(a, b) a##_##b
#define FN_R_CAT(a, b) FN_R_CAT_(a, b)
#define FN_R(op) FN_R_CAT(FN_R_SET, op)
#define FN_R_JOIN_(a, b, c) a##b##c
#define FN_R_JOIN(a, b, c) FN_R_JOIN_(a, b, c)
#define FN_R_NAME(rule) FN_R_JOIN(FN_R_PREFIX, rule, FN_R_SUFFIX)
#ifndef FN_R_REAL
#define FN_R_REAL double
#endif
/* the records' names: the instance's own, or those of FN_R_SHARE's */
#ifdef FN_R_SHARE
#define FN_R_REC(rec) FN_R_JOIN(FN_R_PREFIX, rec, FN_R_SHARE)
#else
#define FN_R_REC(rec) FN_R_NAME(rec)
#endif

/* Quickprop's and Adam's parameters in the instance's scalar (fn_quickprop_params,
 * fn_adam_params converted once). */
#ifndef FN_R_SHARE
typedef struct {
    FN_R_REAL eps, mu, shrink, decay, threshold, momentum;
} FN_R_REC(qp);
typedef struct {
    FN_R_REAL rate, beta1, beta2, eps;
} FN_R_REC(ap);
#endif

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
                    FN_R_REAL momentum)
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
                     const FN_R_REC(qp) *q)
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
FN_R_NAME(adam)(FN_R(V) *w, const FN_R(V) *g, FN_R(V) *m, FN_R(V) *v, const FN_R_REC(ap) *a,
                const FN_R(V) *c1, const FN_R(V) *c2)
{
    const FN_R(V) gv = *g;
    const FN_R(V) mv = a->beta1 * *m + (FN_R_REAL)(1.0 - a->beta1) * gv;
    const FN_R(V) vv = a->beta2 * *v + (FN_R_REAL)(1.0 - a->beta2) * (gv * gv);
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
    else *ok &= FN_R(LE)(FN_R(ABS)(*y - (FN_R_REAL)t), FN_R(SPLAT)(analog));
}

/* The step context of the instance, FN_R_REC(ctx): what a rule's step takes
 * besides the weight and its arrays: the parameters as the steps use them
 * (RPROP's as values: k), made once by FN_R_NAME(ctx_init) from the record,
 * and the values the caller sets each epoch or update: rose (RPROP: the
 * epoch's error rose), rate, c1, c2 (fn_rule_epoch_value). */
#ifndef FN_R_SHARE
typedef struct {
    FN_R_STEPS k;
    FN_R_REC(qp) q;
    FN_R_REC(ap) a;
    FN_R_REAL momentum;
    FN_R(V) rate, c1, c2;
    FN_R(T) rose;
} FN_R_REC(ctx);
#endif

FN_R_ATTR void
FN_R_NAME(ctx_init)(FN_R_REC(ctx) *c, const fn_rule *r)
{
    c->k.eta_plus = FN_R(SPLAT)(r->rprop_plus.eta_plus);
    c->k.eta_minus = FN_R(SPLAT)(r->rprop_plus.eta_minus);
    c->k.step_min = FN_R(SPLAT)(r->rprop_plus.delta_min);
    c->k.step_max = FN_R(SPLAT)(r->rprop_plus.delta_max);
    fn_quickprop_params q;
    fn_adam_params a;
    fn_quickprop_init(&q, &r->quickprop);
    fn_adam_init(&a, &r->adam);
    c->q = (FN_R_REC(qp)){(FN_R_REAL)q.eps, (FN_R_REAL)q.mu, (FN_R_REAL)q.shrink,
                           (FN_R_REAL)q.decay, (FN_R_REAL)q.threshold, (FN_R_REAL)q.momentum};
    c->a = (FN_R_REC(ap)){(FN_R_REAL)a.rate, (FN_R_REAL)a.beta1, (FN_R_REAL)a.beta2,
                           (FN_R_REAL)a.eps};
    c->momentum = (FN_R_REAL)r->backprop.momentum;
    c->rate = FN_R(SPLAT)(r->p[0]);
    c->c1 = c->c2 = FN_R(SPLAT)(1.0);
}

/* Each rule's step in one form: weight w, gradient g, the arrays gp, st, dw
 * (those it keeps: the table's GP, ST, DW; the others are not touched) and the
 * context c. */
#define FN_R_STEP_SIGNATURE(name)                                                       \
    FN_R_ATTR void FN_R_NAME(step_##name)(FN_R(V) *w, const FN_R(V) *g, FN_R(V) *gp,    \
                                          FN_R(V) *st, FN_R(V) *dw, const FN_R_REC(ctx) *c)
FN_R_STEP_SIGNATURE(rprop_plus)
{
    FN_R_NAME(rprop)(FN_RPROP_PLUS, w, g, gp, st, dw, &c->rose, &c->k);
}
FN_R_STEP_SIGNATURE(rprop_minus)
{
    FN_R_NAME(rprop)(FN_RPROP_MINUS, w, g, gp, st, dw, &c->rose, &c->k);
}
FN_R_STEP_SIGNATURE(irprop_minus)
{
    FN_R_NAME(rprop)(FN_IRPROP_MINUS, w, g, gp, st, dw, &c->rose, &c->k);
}
FN_R_STEP_SIGNATURE(irprop_plus)
{
    FN_R_NAME(rprop)(FN_IRPROP_PLUS, w, g, gp, st, dw, &c->rose, &c->k);
}
FN_R_STEP_SIGNATURE(backprop)
{
    (void)gp, (void)st;
    FN_R_NAME(backprop)(w, g, dw, &c->rate, c->momentum);
}
FN_R_STEP_SIGNATURE(quickprop)
{
    (void)dw;
    FN_R_NAME(quickprop)(w, g, gp, st, &c->q);
}
FN_R_STEP_SIGNATURE(adam)
{
    (void)dw;
    FN_R_NAME(adam)(w, g, gp, st, &c->a, &c->c1, &c->c2);
}
#undef FN_R_STEP_SIGNATURE

/* The step of rule R (a constant where the caller makes it one: then just
 * that rule's step). */
FN_R_ATTR void
FN_R_NAME(step)(const int R, FN_R(V) *w, const FN_R(V) *g, FN_R(V) *gp, FN_R(V) *st,
                FN_R(V) *dw, const FN_R_REC(ctx) *c)
{
    switch (R) {
#define FN_R_CASE(C, name, F, kgp, kst, kdw) \
    case FN_RULE_##C: FN_R_NAME(step_##name)(w, g, gp, st, dw, c); break;
    FN_RULES(FN_R_CASE)
#undef FN_R_CASE
    }
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
#undef FN_R_REAL
#undef FN_R_REC
#undef FN_R_SHARE

#endif /* FN_R_SET */
