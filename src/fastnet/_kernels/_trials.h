/* Many trials of one topology at once, side by side in the lanes of a vector
 * (_lanes.h: the layout, the lane status, the CPU levels): the entry points of
 * _trials.pyx.
 *
 *   fn_trials_sse, fn_trials_outputs   a data set's error or outputs, forward alone;
 *   fn_trials_train                    epochs of an epoch-batched rule (any of
 *                                      the rules' table, _rules.h): for RPROP the
 *                                      tiny kernels (_tiny.h) for their shapes,
 *                                      else fn_trials_train_generic (here);
 *   fn_trials_online                   epochs of online backpropagation (an
 *                                      update per example, each lane in its own
 *                                      order, drawn here: _orders.h;
 *                                      _trials_online.h, _trials_online_level.h);
 *   fn_trials_queue_run                a queue of trials, each from its start
 *                                      until it stops (any of these rules).
 *
 * Order of work: a group runs all epochs of the call before the next group
 * starts (its state stays in L1/L2), examples in blocks of FN_TBLOCK, each
 * block forward, then backward into the gradient (_lanes_pass.h); after each
 * epoch the rule and, every check_every epochs, Hamey's check (their lane
 * forms: _rules.h's instances in _lanes.h).
 */
#ifndef FASTNET_TRIALS_H
#define FASTNET_TRIALS_H

#include "_lanes.h"
#include "_lanes_pass.h"
#include "_orders.h"

/* What fn_trials_data_pass does with each output of each example. */
enum { FN_PASS_SSE, FN_PASS_OUTPUTS, FN_PASS_CHECK };

/* The lanes' step context (fn_lanes_ctx_gm of _rules.h's lane instance): the
 * rule's parameters, and the values of the epoch: each lane's own (a lane's
 * trial may have started later than the others'). */
typedef fn_lanes_ctx_gm fn_lanes_ctx;

/* The values of every lane after t epochs (all lanes alike: fn_rule_epoch_value). */
FN_INLINE void
fn_lanes_epoch_values(const fn_rule *rule, ptrdiff_t t, ptrdiff_t t_max, fn_lanes_ctx *v)
{
    double rate, c1, c2;
    fn_rule_epoch_value(rule, t, t_max, &rate, &c1, &c2);
    v->rate = FN_TSPLAT(rate);
    v->c1 = FN_TSPLAT(c1);
    v->c2 = FN_TSPLAT(c2);
}

/* The values of lane k after t[k] epochs (its own trial's). */
FN_INLINE void
fn_lanes_epoch_values_each(const fn_rule *rule, const ptrdiff_t *t, ptrdiff_t t_max,
                           fn_lanes_ctx *v)
{
    double rate[FN_TL], c1[FN_TL], c2[FN_TL];
    for (int k = 0; k < FN_TL; k++)
        fn_rule_epoch_value(rule, t[k], t_max, &rate[k], &c1[k], &c2[k]);
    /* (rounded to the value type: nothing for doubles) */
    v->rate = __builtin_convertvector(FN_TELOAD(rate), fn_tvr);
    v->c1 = __builtin_convertvector(FN_TELOAD(c1), fn_tvr);
    v->c2 = __builtin_convertvector(FN_TELOAD(c2), fn_tvr);
}

/* One step of rule R (a constant) of every weight of a group, in memory
 * (blocks of n_w x FN_TL at wg, gg and the arrays gp, st, dwp that the rule
 * keeps: fn_rule_keeps; the others are neither read nor written), with the
 * context c. With `blend` (a constant), the lanes outside *active keep their
 * state. */
FN_INLINE void
fn_trials_update_rule(const int VB, const int R, const int blend, ptrdiff_t n_w, fn_real *wg, const fn_real *gg,
                      fn_real *gp, fn_real *dwp, fn_real *st, const fn_tm *active,
                      const fn_lanes_ctx *c)
{
    const int kgp = fn_rule_keeps(R, 0), kst = fn_rule_keeps(R, 1), kdw = fn_rule_keeps(R, 2);
    for (ptrdiff_t j = 0; j < n_w; j++) {
        fn_real *pw = wg + j * FN_TL, *pgp = gp + j * FN_TL, *pst = st + j * FN_TL;
        fn_real *pdw = dwp + j * FN_TL;
        const fn_tvr g = FN_TLOAD(gg + j * FN_TL), w0 = FN_TLOAD(pw);
        const fn_tvr gp0 = kgp ? FN_TLOAD(pgp) : (fn_tvr){0};
        const fn_tvr s0 = kst ? FN_TLOAD(pst) : (fn_tvr){0};
        const fn_tvr dw0 = kdw ? FN_TLOAD(pdw) : (fn_tvr){0};
        fn_tvr w = w0, gpv = gp0, s = s0, dw = dw0;
        fn_lanes_step_at(VB, R, &w, &g, &gpv, &s, &dw, c);
        if (blend) {
            w = FN_TSEL(*active, w, w0);
            gpv = FN_TSEL(*active, gpv, gp0);
            s = FN_TSEL(*active, s, s0);
            dw = FN_TSEL(*active, dw, dw0);
        }
        FN_TSTORE(pw, w);
        if (kgp) FN_TSTORE(pgp, gpv);
        if (kst) FN_TSTORE(pst, s);
        if (kdw) FN_TSTORE(pdw, dw);
    }
}

/* One step of any rule (rule->code; the table's every line), each its own loop. */
FN_INLINE void
fn_trials_update_any(const int VB, const int blend, ptrdiff_t n_w, fn_real *wg, const fn_real *gg, fn_real *gp,
                     fn_real *dwp, fn_real *st, const fn_tm *active, const fn_rule *rule,
                     const fn_lanes_ctx *c)
{
    switch (rule->code) {
#define FN_TRIALS_UPDATE_CASE(C, name, F, kgp, kst, kdw)                                 \
    case FN_RULE_##C:                                                                   \
        fn_trials_update_rule(VB, FN_RULE_##C, blend, n_w, wg, gg, gp, dwp, st, active, c);  \
        break;
    FN_RULES(FN_TRIALS_UPDATE_CASE)
#undef FN_TRIALS_UPDATE_CASE
    }
}

/* Epoch ep's training SSE of the lanes of group grp, times sse_scale, into
 * row grp * FN_TL + lane, column ep of sse_out (row stride ld); returns the
 * largest of them (NaN not counted; -inf if all are NaN). */
FN_INLINE double
fn_trials_sse_out(const fn_trials_epochs *run, ptrdiff_t grp, ptrdiff_t ep, const fn_te *sse)
{
    const fn_te o = *sse * run->sse_scale;
    double l[FN_TL], top = -INFINITY;
    memcpy(l, &o, sizeof l);
    for (int k = 0; k < FN_TL; k++) {
        run->sse_out[(grp * FN_TL + k) * run->ld + ep] = l[k];
        if (l[k] > top) top = l[k];
    }
    return top;
}

/* The lanes of a group (weights wg, n_w x FN_TL) with a weight of magnitude
 * w_limit or more, or NaN, into *far. */
FN_INLINE void
fn_trials_beyond(ptrdiff_t n_w, const fn_real *wg, double w_limit, fn_tm *far)
{
    fn_tm f = (fn_tm){0};
    for (ptrdiff_t c = 0; c < n_w; c++) {
        const fn_tv a = FN_TABS(FN_TLOAD(wg + c * FN_TL));
        f |= ~(a < FN_TSPLAT(w_limit));
    }
    *far = f;
}

/* A queue of trials (fn_trials_queue): each lane takes trial after trial, a
 * lane whose trial stopped the next waiting one at once, so that no lane
 * computes for a trial that has ended and every lane stays busy until the
 * queue is empty. Per trial i (arrays of n_trials, rows of n_w):
 *   w0[i]       its initial weights; step0 its initial steps (step_rows rows:
 *               1, every trial's; n_trials, one each), NULL: zeros;
 *   w_out[i]    the weights it stopped with;
 *   epochs[i]   the epochs it trained; status[i] why it stopped: 0 it reached
 *               t_max; -t Hamey's check held after its epoch t (checked on the
 *               outputs of the next epoch's forward pass, whose update is then
 *               not made); k > 0 its error was not finite in epoch k (un-updated);
 *               FN_STATUS_BEYOND + t a weight reached run->w_limit (or NaN) after t
 *               epochs (run->w_limit > 0; not checked by the tiny kernels);
 *   first[i], top[i], low[i]   the error (times sse_scale) of its first epoch,
 *               its largest (at epoch top_epoch[i], 1-based) and its smallest
 *               (NaN: none);
 *   history     n_trials rows of ld, its error by epoch (times sse_scale), or NULL.
 * `next` is the next trial to take (advanced as the lanes take them). With
 * below_every > 0, a trial whose error (times sse_scale) of an epoch t + 1 that
 * ends a strip of below_every epochs is below `below` stops after that epoch's
 * update, status -(t + 1) (ErrorBelow on the training error, as the strips test
 * it at strip ends). Online backpropagation (bitgens not NULL: fn_trials_online_queue_epoch):
 * bitgens[i] is trial i's generator, from which its lane draws the order of each
 * of its epochs into its row of `orders` (n_groups * FN_TL rows of n). */
typedef struct {
    ptrdiff_t n_trials, next;
    const fn_real *w0, *step0;
    ptrdiff_t step_rows;
    fn_real *w_out;
    int64_t *epochs, *status, *top_epoch;
    double *first, *top, *low;
    double *history;
    ptrdiff_t ld;
    double below;
    ptrdiff_t below_every;
    int64_t *orders;
    fn_bitgen *const *bitgens;
} fn_trials_queue;

/* A group's blocks of the trials' state (fn_trials_state; NULL where it has none). */
typedef struct {
    fn_real *w, *g, *gp, *dwp, *st;
    double *le;
    int64_t *status;
} fn_trials_group;

FN_INLINE fn_trials_group
fn_trials_group_at(const fn_trials_state *s, ptrdiff_t grp, ptrdiff_t n_w)
{
    const ptrdiff_t o = grp * n_w * FN_TL;
    fn_trials_group gr = {s->w + o, s->g ? s->g + o : NULL, s->g_prev ? s->g_prev + o : NULL,
                          s->dw_prev + o, s->step ? s->step + o : NULL,
                          s->last_error ? s->last_error + grp * FN_TL : NULL,
                          s->status ? s->status + grp * FN_TL : NULL};
    return gr;
}

/* Lane l of a group (weights wg, rule state gp, dwp, st; last errors le) takes
 * the queue's next trial, if one waits: its trial index, else -1. */
FN_INLINE ptrdiff_t
fn_trials_take(fn_trials_queue *q, int l, ptrdiff_t n_w, fn_real *wg, fn_real *gp, fn_real *dwp,
               fn_real *st, double *le)
{
    if (q->next >= q->n_trials) return -1;
    const ptrdiff_t i = q->next++;
    const fn_real *w0 = q->w0 + i * n_w;
    const fn_real *s0 = q->step0 == NULL ? NULL : q->step0 + (q->step_rows > 1 ? i : 0) * n_w;
    for (ptrdiff_t c = 0; c < n_w; c++) {
        wg[c * FN_TL + l] = w0[c];
        gp[c * FN_TL + l] = dwp[c * FN_TL + l] = 0.0;
        st[c * FN_TL + l] = s0 == NULL ? 0.0 : s0[c];
    }
    le[l] = INFINITY;
    q->first[i] = q->top[i] = q->low[i] = NAN;
    q->top_epoch[i] = 0;
    return i;
}

/* The lanes `which` (bits) of a group take the queue's next trials (fn_trials_take;
 * trial[l] and, from 0, t[l]); the lanes that took one, as bits. */
FN_INLINE unsigned
fn_trials_refill(fn_trials_queue *q, unsigned which, ptrdiff_t *trial, ptrdiff_t *t, ptrdiff_t n_w,
                 const fn_trials_group *gr)
{
    unsigned live = 0;
    for (int l = 0; l < FN_TL; l++) {
        if (!(which >> l & 1)) continue;
        t[l] = 0;
        trial[l] = fn_trials_take(q, l, n_w, gr->w, gr->gp, gr->dwp, gr->st, gr->le);
        if (trial[l] >= 0) live |= 1u << l;
    }
    return live;
}

/* Trial i (in lane l of a group with weights wg) stops after t epochs, why: code. */
FN_INLINE void
fn_trials_finish(fn_trials_queue *q, ptrdiff_t i, ptrdiff_t t, int64_t code, const fn_real *wg,
                 int l, ptrdiff_t n_w)
{
    fn_real *wo = q->w_out + i * n_w;
    for (ptrdiff_t c = 0; c < n_w; c++) wo[c] = wg[c * FN_TL + l];
    q->epochs[i] = t;
    q->status[i] = code;
}

/* Trial i's error e (times sse_scale) of its epoch t + 1. */
FN_INLINE void
fn_trials_record(fn_trials_queue *q, ptrdiff_t i, ptrdiff_t t, double e)
{
    if (q->history != NULL) q->history[i * q->ld + t] = e;
    if (t == 0) q->first[i] = e;
    if (!(e <= q->top[i])) {                /* (NaN at the start) */
        q->top[i] = e;
        q->top_epoch[i] = t + 1;
    }
    if (!(e >= q->low[i])) q->low[i] = e;
}

/* What fn_trials_why and fn_trials_online_why say of a trial that trains on (no
 * status code: 1 is one, a non-finite error in the first epoch). */
#define FN_TRIALS_ON INT64_MIN

/* Why a trial that trained t epochs stops at this pass (the code of
 * fn_trials_queue's status), or FN_TRIALS_ON (it trains on): `right` its outputs passed
 * Hamey's check, `far` a weight reached w_limit (or NaN) before the pass,
 * `finite` its error is finite. */
FN_INLINE int64_t
fn_trials_why(ptrdiff_t t, int right, int far, int finite, const fn_trials_epochs *e)
{
    if (e->check_every > 0 && t >= 1 && t % e->check_every == 0 && right) return -t;
    if (t >= e->t_max) return 0;
    if (far) return FN_STATUS_BEYOND + t;
    if (!finite) return t + 1;
    return FN_TRIALS_ON;
}

#include "_trials_online.h"

/* The kernels of each CPU level (_trials_level.h), then the dispatchers. */
#define FN_LEVEL_FILE "_trials_level.h"
#define FN_LEVEL_V4 1
/* (the baseline not inlined into the dispatchers: 4 s less compile, and no call it
 * would save) */
#ifdef FN_LANES_F32
#define FN_LEVEL_V0_ATTR __attribute__((unused, noinline, optimize("O2")))
/* (float32's AVX2 form at -O2: its sixteen lanes are two ymm vectors, twice the code of
 * the AVX-512 form, and -O3 adds a fifth of the module's compile time to it; -O2 contracts
 * multiply-adds where -O3 does, which -O1 would not: the same results) */
#define FN_LEVEL_V3_ATTR FN_CPU_V3_ATTR __attribute__((optimize("O2")))
#else
#define FN_LEVEL_V0_ATTR __attribute__((unused, noinline))
#endif
#include "_levels.h"

/* Calls the level's form of a kernel: FN_TRIALS_AT_LEVEL(fn_trials_sse, (args)). */
#define FN_TRIALS_AT_LEVEL(name, args)                                                 \
    do {                                                                               \
        const int level_ = FN_CPU_LEVELS ? fn_cpu_level() : FN_CPU_BASE;               \
        if (level_ == FN_CPU_V4) name##_v4 args;                                       \
        else if (level_ == FN_CPU_V3) name##_v3 args;                                  \
        else name##_v0 args;                                                           \
    } while (0)

/* Sum of squared errors of each trial of each group over a data set (the
 * forward pass alone): sse[g * FN_TL + k]. work: FN_TBLOCK * n_units vectors. */
static void
fn_trials_sse(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
              ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
              const fn_real *T, ptrdiff_t n_out, const fn_real *w, fn_real *work,
              double *sse)
{
    FN_TRIALS_AT_LEVEL(fn_trials_sse, (n_groups, layers, n_layers, n_in, n_w, n, X, T, n_out, w,
                                       work, sse));
}

/* Outputs of every trial on X: Y[((g * n + p) * n_out + k) * FN_TL + lane]. */
static void
fn_trials_outputs(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                  ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                  ptrdiff_t n_out, const fn_real *w, fn_real *work, fn_real *Y)
{
    FN_TRIALS_AT_LEVEL(fn_trials_outputs, (n_groups, layers, n_layers, n_in, n_w, n, X, n_out, w,
                                           work, Y));
}

/* Each trial's error and gradient (fn_trials_gradient_v0), with Hamey's check of
 * the weights given where ok_bits is not NULL: for algorithms that step many trials
 * at once from Python (a user's step_many rule, SCG's trials as arrays). */
static void
fn_trials_gradient(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                   ptrdiff_t n_in, ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                   const fn_real *T, ptrdiff_t n_out, const fn_real *w, fn_real *g, fn_real *work,
                   double *sse, double r_c, double analog, int64_t *ok_bits)
{
    FN_TRIALS_AT_LEVEL(fn_trials_gradient, (n_groups, layers, n_layers, n_in, n_units, n_w, n, X,
                                            T, n_out, w, g, work, sse, r_c, analog, ok_bits));
}

/* A lanes rule alone (for tests; see fn_trials_rule_step_v0). */
static void
fn_trials_rule_step(ptrdiff_t n_w, fn_real *w, const fn_real *g, fn_real *g_prev, fn_real *dw_prev,
                    fn_real *step, const fn_rule *rule, const int64_t *rose, ptrdiff_t t,
                    ptrdiff_t t_max)
{
    FN_TRIALS_AT_LEVEL(fn_trials_rule_step, (n_w, w, g, g_prev, dw_prev, step, rule, rose, t,
                                             t_max));
}

/* Hamey's lane check alone (for tests; see fn_trials_check_v0). */
static unsigned
fn_trials_check(ptrdiff_t n, ptrdiff_t n_out, const fn_real *Y, const fn_real *T, double r_c,
                double analog)
{
    const int level = FN_CPU_LEVELS ? fn_cpu_level() : FN_CPU_BASE;
    if (level == FN_CPU_V4) return fn_trials_check_v4(n, n_out, Y, T, r_c, analog);
    if (level == FN_CPU_V3) return fn_trials_check_v3(n, n_out, Y, T, r_c, analog);
    return fn_trials_check_v0(n, n_out, Y, T, r_c, analog);
}

/* Run run->n_epochs epochs of a lanes rule (epoch-batched) for every group
 * (see the top and fn_trials_train_generic_v0). */
static void
fn_trials_train_generic(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                        const fn_real *T, ptrdiff_t n_out, const fn_trials_state *state,
                        const fn_rule *rule, const fn_trials_epochs *run, fn_real *work)
{
    FN_TRIALS_AT_LEVEL(fn_trials_train_generic, (layers, n_layers, n_in, n_units, n_w, n, X, T,
                                                 n_out, state, rule, run, work));
}

/* Every trial of the queue q, each from its start until it stops (see
 * fn_trials_queue and fn_trials_queue_v0): an epoch-batched lanes rule, Hamey's
 * check every run->check_every epochs (0: none) on the forward passes, or
 * online backpropagation (q->bitgens given), the check on a pass of its own;
 * run->t_max epochs at most, w_limit as fn_trials_queue says. */
static void
fn_trials_queue_train(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                      ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                      const fn_real *T, ptrdiff_t n_out, const fn_trials_state *state,
                      const fn_rule *rule, const fn_trials_epochs *run,
                      fn_trials_queue *q, fn_real *work)
{
    FN_TRIALS_AT_LEVEL(fn_trials_queue, (layers, n_layers, n_in, n_units, n_w, n, X, T, n_out,
                                         state, rule, run, q, work));
}

/* Run run->n_epochs epochs of online backpropagation for every group: in each
 * epoch, each training lane draws its order of the n examples from its own
 * generator (bitgens[g * FN_TL + k]: fn_permutation, rng.permutation's
 * numbers) into its row of `orders` (n_groups * FN_TL rows of n), then the
 * examples in that order, each forward, backward and into the weights
 * (fn_lanes_backprop_gm) before the next, as _backprop.pyx's train_epochs
 * trains one network. rule: FN_RULE_BACKPROP with (rate, momentum, decay):
 * decay 0, a constant rate; 1, epoch t (t0 + the call's epoch) at rate
 * (1 - t / t_max); 2, update u = t n + p of U = t_max n at rate (U - 1 - u) /
 * (U - 1) (the rate itself if U = 1). state: w and dw_prev (the previous
 * change) are read and written, the other arrays neither. run: sse_out gets
 * each epoch's sum of the examples' squared errors, each taken before its own
 * update, times sse_scale; check_every must be 0. The lane status as
 * fn_trials_train's (_lanes.h): k for a non-finite error in epoch k (its
 * updates made); with w_limit > 0, FN_STATUS_BEYOND + k for a lane that
 * reached w_limit (or NaN) before epoch k + 1 or within it: its weights and
 * changes those epoch k + 1 started from, its order of that epoch (already
 * drawn) in `orders`. work: online_work_size values. */
static void
fn_trials_online(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_units,
                 ptrdiff_t n_w, ptrdiff_t n, const fn_real *X, const fn_real *T, ptrdiff_t n_out,
                 const fn_trials_state *state, const fn_rule *rule,
                 const fn_trials_epochs *run, int64_t *orders, fn_bitgen *const *bitgens,
                 fn_real *work)
{
    FN_FTZ_BEGIN
    FN_TRIALS_AT_LEVEL(fn_trials_online, (layers, n_layers, n_in, n_units, n_w, n, X, T, n_out,
                                          state, rule, run, orders, bitgens, work));
    FN_FTZ_END
}

/* The tiny kernels, one per shape of FN_TINY_SHAPES (_tiny.h) and CPU level:
 * _tiny_shapes.h includes the template once per shape at FN_TINY_LEVEL. Which
 * levels have them (FN_TINY_V4, _V3, _V0: 1 or 0; -DFN_TINY_V3=0 and the like
 * override): x86-64-v4 and x86-64-v3 where the build has levels, the baseline on
 * every other CPU or build (aarch64's NEON). x86-64's baseline (SSE2) trains in the
 * generic kernel: its forms cost this module's compile more than the speed they
 * give a CPU that old. */
#if FN_CPU_LEVELS
#define FN_TINY_V4 1
#ifndef FN_TINY_V3
#define FN_TINY_V3 1
#endif
#ifndef FN_TINY_V0
#define FN_TINY_V0 0
#endif
#else
#define FN_TINY_V4 0
#define FN_TINY_V3 0
#undef FN_TINY_V0
#define FN_TINY_V0 1
#endif
#include "_tiny.h"
#if FN_TINY_V4
#define FN_TINY_LEVEL 4
#include "_tiny_shapes.h"
#undef FN_TINY_LEVEL
#define FN_TINY_IF_V4(x) x
#else
#define FN_TINY_IF_V4(x)
#endif
#if FN_TINY_V3
#define FN_TINY_LEVEL 3
#include "_tiny_shapes.h"
#undef FN_TINY_LEVEL
#define FN_TINY_IF_V3(x) x
#else
#define FN_TINY_IF_V3(x)
#endif
#if FN_TINY_V0
#define FN_TINY_LEVEL 0
#include "_tiny_shapes.h"
#undef FN_TINY_LEVEL
#define FN_TINY_IF_V0(x) x
#else
#define FN_TINY_IF_V0(x)
#endif

/* The level this process runs at, and whether it has tiny kernels. */
static int
fn_tiny_level(void)
{
    return FN_CPU_LEVELS ? fn_cpu_level() : FN_CPU_BASE;
}

static int
fn_tiny_here(void)
{
    const int level = fn_tiny_level();
    return level == FN_CPU_V4 ? FN_TINY_V4 : level == FN_CPU_V3 ? FN_TINY_V3 : FN_TINY_V0;
}

/* Calls the tiny kernel f (a name without its level) of the level this process
 * runs at (fn_tiny_here: it has one): FN_TINY_AT_LEVEL(fn_tiny_2_2_1_0, (args)). */
#define FN_TINY_AT_LEVEL(f, args)                                                       \
    do {                                                                                \
        const int level_ = fn_tiny_level();                                             \
        (void)level_;                                                                   \
        FN_TINY_IF_V4(if (level_ == FN_CPU_V4) { f##_v4 args; break; })                 \
        FN_TINY_IF_V3(if (level_ == FN_CPU_V3) { f##_v3 args; break; })                 \
        FN_TINY_IF_V0(f##_v0 args;)                                                     \
    } while (0)
#define FN_TINY_AT_LEVEL_(f, args) FN_TINY_AT_LEVEL(f, args)

/* Whether a network of this layer table has a tiny-network kernel at the level
 * this process runs at (one with tiny kernels, and a listed shape and activation
 * pair: FN_TINY_PAIRS at x86-64-v4, FN_TINY_PAIRS_NARROW below it). */
static int
fn_trials_tiny(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_w,
               ptrdiff_t n_out)
{
    int ni, nh, no, sc;
    if (!fn_tiny_shape(layers, n_layers, n_in, n_w, n_out, &ni, &nh, &no, &sc)) return 0;
    const ptrdiff_t hact = layers[FN_L_ACT], oact = layers[FN_L_NCOLS + FN_L_ACT];
    int listed = 0, paired = 0;
#define FN_TINY_LISTED(a, b, c, d) listed |= ni == a && nh == b && no == c && sc == d;
    FN_TINY_SHAPES(FN_TINY_LISTED)
#undef FN_TINY_LISTED
#define FN_TINY_PAIRED(h, o) paired |= hact == FN_ACT_##h && oact == FN_ACT_##o;
    if (!fn_tiny_here()) return 0;
    if (fn_tiny_level() == FN_CPU_V4) {
        FN_TINY_PAIRS(FN_TINY_PAIRED)
    } else {
        FN_TINY_PAIRS_NARROW(FN_TINY_PAIRED)
    }
#undef FN_TINY_PAIRED
    return listed && paired;
}

/* The tiny kernels are called directly, one call per shape of FN_TINY_SHAPES (by its
 * index k there), not through a table of pointers: a kernel reached through a pointer
 * lost about 12 % on XOR (benchmarks/ab_rules.py), compiled without what GCC knows of
 * its one call site. */

/* The tiny kernel of shape k (its index in FN_TINY_SHAPES): the whole call
 * (fn_tiny_*) or, with `queue` (a constant), the queue (fn_tiny_queue_*, of q). */
static inline __attribute__((always_inline)) void
fn_tiny_call(int k, const int queue, ptrdiff_t hact, ptrdiff_t oact, ptrdiff_t n, const fn_real *X,
             const fn_real *T, const fn_trials_state *state, const fn_rule *rule,
             const fn_trials_epochs *run, fn_trials_queue *q, fn_real *work)
{
    int at = 0;
#define FN_TINY_CALL_SHAPE(a, b, c, d)                                                  \
    if (k == at++) {                                                                    \
        if (queue) FN_TINY_AT_LEVEL_(FN_TINY_CAT(fn_tiny_queue, a, b, c, d),            \
                                     (hact, oact, n, X, T, rule, run, q, work));        \
        else FN_TINY_AT_LEVEL_(FN_TINY_CAT(fn_tiny, a, b, c, d),                        \
                               (hact, oact, n, X, T, state, rule, run, work));          \
    }
    FN_TINY_SHAPES(FN_TINY_CALL_SHAPE)
#undef FN_TINY_CALL_SHAPE
}

/* Which tiny kernel trains RPROP (rule) on this network (`special`: they may):
 * its index in FN_TINY_SHAPES, its activations in *hact, *oact; -1: none. */
static int
fn_trials_tiny_case(const fn_rule *rule, int special, const ptrdiff_t *layers,
                    ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n_out,
                    ptrdiff_t *hact, ptrdiff_t *oact)
{
    int ni = 0, nh = 0, no = 0, sc = 0, k = 0;
    if (!special || rule->code > FN_IRPROP_PLUS
        || !fn_trials_tiny(layers, n_layers, n_in, n_w, n_out))
        return -1;
    *hact = layers[FN_L_ACT];
    *oact = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_ACT];
    fn_tiny_shape(layers, n_layers, n_in, n_w, n_out, &ni, &nh, &no, &sc);
#define FN_TINY_INDEX(a, b, c, d) if (ni == a && nh == b && no == c && sc == d) return k; k++;
    FN_TINY_SHAPES(FN_TINY_INDEX)
#undef FN_TINY_INDEX
    return -1;
}

/* Run run->n_epochs epochs of a lanes rule for every group (as
 * fn_trials_train_generic; work: work_size values); RPROP on tiny
 * shapes goes to their own kernels unless `special` is 0. */
static void
fn_trials_train(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_units,
                ptrdiff_t n_w, ptrdiff_t n, const fn_real *X, const fn_real *T, ptrdiff_t n_out,
                const fn_trials_state *state, const fn_rule *rule,
                const fn_trials_epochs *run, fn_real *work, int special)
{
    ptrdiff_t hact, oact;
    const int k = fn_trials_tiny_case(rule, special, layers, n_layers, n_in, n_w, n_out, &hact,
                                      &oact);
    FN_FTZ_BEGIN
    if (k >= 0)
        fn_tiny_call(k, 0, hact, oact, n, X, T, state, rule, run, NULL, work);
    else
        fn_trials_train_generic(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, state,
                                rule, run, work);
    FN_FTZ_END
}

/* Every trial of the queue q (fn_trials_queue): RPROP on tiny shapes in their
 * own kernels unless `special` is 0 (the pairs of FN_TINY_QUEUE_PAIRS, a check
 * every epoch, no w_limit), else fn_trials_queue_train (online backpropagation
 * too: q->bitgens given). */
static void
fn_trials_queue_run(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                    ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                    const fn_real *T, ptrdiff_t n_out, const fn_trials_state *state,
                    const fn_rule *rule, const fn_trials_epochs *run, fn_trials_queue *q,
                    fn_real *work, int special)
{
    ptrdiff_t hact, oact;
    int paired = 0;
    const int every_epoch = (run->check_every == 1 && q->below_every == 0)
        || (run->check_every == 0 && q->below_every == 1);
    const int k = every_epoch && !(run->w_limit > 0.0) && q->bitgens == NULL
        ? fn_trials_tiny_case(rule, special, layers, n_layers, n_in, n_w, n_out, &hact, &oact) : -1;
    if (k >= 0) {
#define FN_TINY_QUEUE_PAIRED(h, o) paired |= hact == FN_ACT_##h && oact == FN_ACT_##o;
        FN_TINY_QUEUE_PAIRS(FN_TINY_QUEUE_PAIRED)
#undef FN_TINY_QUEUE_PAIRED
    }
    FN_FTZ_BEGIN
    if (paired)
        fn_tiny_call(k, 1, hact, oact, n, X, T, state, rule, run, q, work);
    else
        fn_trials_queue_train(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, state, rule,
                              run, q, work);
    FN_FTZ_END
}

#endif /* FASTNET_TRIALS_H */
