/* Scaled conjugate gradient (Møller 1993) for many trials at once, in the
 * lanes of a vector (_lanes.h's layout): the kernel of fastnet.training._scg_many.
 *
 * One group of FN_TL lanes takes the trials of a queue (fn_scg_queue), each lane
 * trial after trial: a lane whose trial stopped takes the next waiting one at
 * once, so that a stopped trial costs nothing more. Each iteration of the group
 * is one of Møller's iterations for every lane's trial (steps 1-7 of
 * fastnet.training._batch_rules.SCG): its scalars (λ, λ̄, δ, μ, α, Δ) are
 * vectors of the lanes, its branches masks, its dot products sums over the
 * weights in order (c = 0, 1, ...: as NumPy sums the rows of a (C, S) array),
 * and none of its products is fused into a multiply-add (FN_SCG_NOFMA): given
 * the same errors and gradients, a lane computes what SCG's NumPy arithmetic
 * computes, bit for bit. Those come from the lanes' passes
 * (fn_trials_epoch_gradient of _trials_level.h: trials_gradient's numbers), at
 * most two per group iteration:
 *   1. the probe pass, at w + σ_k p, for the lanes whose last step was taken;
 *   2. the trial pass, at w + αp, whose forward pass also runs Hamey's check
 *      (those weights are the trial's next ones if the step is taken). A lane
 *      whose trial has just started evaluates its initial weights here (error,
 *      gradient, check); its first iteration follows in the next group
 *      iteration.
 * The error at the trial point is computed with its gradient (kept if the step
 * is taken); the counts are those of a run alone (fastnet.training._batch_rules
 * counts an error evaluation, then a gradient pass if the step is taken).
 *
 * Safety: the lanes' fused products agree with the single-network kernels only
 * within a weight range (fastnet.training._lanes.safe_weight). Before a trial
 * pass, a lane whose trial point has a weight beyond params->w_limit (or NaN)
 * ends the run at once with FN_SCG_UNSAFE (the caller then trains the trials
 * one at a time); the probe points lie within σ of weights so checked.
 */
#ifndef FASTNET_SCG_LANES_H
#define FASTNET_SCG_LANES_H

/* (the lanes kernels; those this module does not call are not compiled) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "_trials.h"
#pragma GCC diagnostic pop

/* Why a trial stopped (fn_scg_queue's reason). */
enum {
    FN_SCG_MAX_EPOCHS = 0,      /* it trained t_max epochs */
    FN_SCG_CORRECT = 1,         /* Hamey's check held after its last epoch */
    FN_SCG_CONVERGED = 2,       /* r = 0, λ overflowed, or ‖p‖², μ or μ² underflowed */
    FN_SCG_ABNORMAL = 3,        /* ‖p‖², δ, μ, α or μ² overflowed, or δ <= 0 */
    FN_SCG_DIVERGED_INITIAL = 4,  /* its initial error was not finite (epoch 1) */
    FN_SCG_DIVERGED = 5,        /* the error at its trial point was not finite */
    FN_SCG_BELOW = 6            /* its error at its last iteration's start was below `below` */
};

/* What fn_scg_run returns. */
enum { FN_SCG_DONE = 0, FN_SCG_UNSAFE = 1 };

/* A lane's trial: none, waiting for its start evaluation (in the next trial
 * pass), or iterating. */
enum { FN_SCG_IDLE = 0, FN_SCG_WAITING = 1, FN_SCG_LIVE = 2 };

/* The run's parameters: SCG's σ and λ₁; w_limit (see the top); check: Hamey's
 * check after every epoch (its thresholds r_c and analog: fn_lanes_correct_gm),
 * or none; below: a trial whose error at an iteration's start, times the
 * queue's sse_scale, is below it stops after that iteration (ErrorBelow on the
 * training error; < 0: never); the most epochs a trial trains (t_max >= 1);
 * the restart period of the direction (p = r every restart-th iteration: the
 * number of weights). A trial's own stops come first, then the check, then
 * `below`, then t_max. */
typedef struct {
    double sigma, lambda1, w_limit, r_c, analog;
    int check;
    double below;
    ptrdiff_t t_max, restart;
} fn_scg_params;

/* The queue of trials, per trial i (arrays of n_trials; rows of n_w):
 *   w0[i]         its initial weights;   w_out[i]  the weights it stopped with;
 *   epochs[i]     the epochs it trained; checks[i] the success checks run
 *                 (0 without the check);
 *   reason[i]     why it stopped (FN_SCG_*);
 *   counts        three rows of n_trials: its probe passes, error evaluations
 *                 and gradient passes (the start's included);
 *   first[i], low[i]   its initial error and the smallest error at the start
 *                 of an iteration (raw sums);
 *   history       n_trials rows of ld >= t_max: the error at the start of each
 *                 iteration times sse_scale, or NULL.
 * `next` is the next trial to take. */
typedef struct {
    ptrdiff_t n_trials, next;
    const double *w0;
    double *w_out;
    int64_t *epochs, *checks, *reason, *counts;
    double *first, *low, *history;
    ptrdiff_t ld;
    double sse_scale;
} fn_scg_queue;

/* Doubles of the group's state: w, r, p, the pass point x and the gradients at
 * the probe and the trial points, (n_w, FN_TL) blocks each. */
#define FN_SCG_BLOCKS 6

/* The per-lane values of the group (each lane its own trial's). */
typedef struct {
    fn_tvr E, E_start, lam, lam_bar, delta, low;
    fn_tm success, ok_start;
    ptrdiff_t trial[FN_TL], t[FN_TL];
    int state[FN_TL];
    int64_t n_probe[FN_TL], n_error[FN_TL], n_grad[FN_TL];
} fn_scg_lanes;

/* The SCG arithmetic: no multiply-add (NumPy's products and sums are separate
 * operations). Every function that computes with SCG's values carries it, and
 * calls only functions that carry it too (always_inline needs equal options). */
#if defined(__GNUC__) && !defined(__clang__)
#define FN_SCG_NOFMA __attribute__((optimize("fp-contract=off")))
#else
#define FN_SCG_NOFMA
#endif
#define FN_SCG_INLINE static inline __attribute__((always_inline)) FN_SCG_NOFMA

/* Σ_c a_c b_c of each lane over n_w >= 1 weights ((n_w, FN_TL) blocks), the
 * sum from the first product on, in order. */
FN_SCG_INLINE void
fn_scg_dot(ptrdiff_t n_w, const double *a, const double *b, fn_tvr *out)
{
    fn_tvr s = FN_TLOAD(a) * FN_TLOAD(b);
    for (ptrdiff_t c = 1; c < n_w; c++) {
        const fn_tvr prod = FN_TLOAD(a + c * FN_TL) * FN_TLOAD(b + c * FN_TL);
        s = s + prod;
    }
    *out = s;
}

/* The lanes of bits `b` as a mask. */
FN_SCG_INLINE void
fn_scg_mask(unsigned b, fn_tm *k)
{
    int64_t m[FN_TL];
    for (int l = 0; l < FN_TL; l++) m[l] = -(int64_t)(b >> l & 1);
    memcpy(k, m, sizeof *k);
}

/* Lane l takes the queue's next trial (its weights into w, r = p = 0: its point
 * in the next trial pass is its initial weights), or goes idle (w = r = p = 0). */
FN_SCG_INLINE void
fn_scg_take(fn_scg_queue *q, fn_scg_lanes *s, int l, ptrdiff_t n_w, double *w, double *r,
            double *p)
{
    const double *w0 = NULL;
    if (q->next < q->n_trials) {
        s->trial[l] = q->next++;
        w0 = q->w0 + s->trial[l] * n_w;
        s->state[l] = FN_SCG_WAITING;
    } else {
        s->trial[l] = -1;
        s->state[l] = FN_SCG_IDLE;
    }
    for (ptrdiff_t c = 0; c < n_w; c++) {
        w[c * FN_TL + l] = w0 == NULL ? 0.0 : w0[c];
        r[c * FN_TL + l] = p[c * FN_TL + l] = 0.0;
    }
    s->t[l] = 0;
    s->n_probe[l] = s->n_error[l] = s->n_grad[l] = 0;
}

/* The trials of the lanes of bits `b` stop, why: `reason`, after t + 1 epochs and
 * t + `checked` checks if the check runs (t: the iterations they had run before
 * this one); each lane takes the next trial. */
FN_SCG_INLINE void
fn_scg_stop(const fn_scg_params *par, fn_scg_queue *q, fn_scg_lanes *s, unsigned b,
            int64_t reason, int checked, ptrdiff_t n_w, double *w, double *r, double *p)
{
    for (int l = 0; l < FN_TL; l++) {
        if (!(b >> l & 1) || s->state[l] == FN_SCG_IDLE) continue;
        const ptrdiff_t i = s->trial[l], K = q->n_trials;
        double *wo = q->w_out + i * n_w;
        for (ptrdiff_t c = 0; c < n_w; c++) wo[c] = w[c * FN_TL + l];
        q->epochs[i] = s->t[l] + 1;
        q->checks[i] = par->check ? s->t[l] + checked : 0;
        q->reason[i] = reason;
        q->counts[i] = s->n_probe[l];
        q->counts[K + i] = s->n_error[l];
        q->counts[2 * K + i] = s->n_grad[l];
        q->low[i] = s->low[l];
        fn_scg_take(q, s, l, n_w, w, r, p);
    }
}

/* The lanes of a mask as bits. */
#define FN_SCG_BITS(k) __extension__({ fn_tm k_ = (k); fn_gm_bits(&k_); })

/* The kernels of each CPU level (_scg_level.h: FN_LV, FN_LV_ATTR as _trials.h
 * defines them for _trials_level.h), then the dispatcher. */
#define FN_LEVEL_FILE "_scg_level.h"
#define FN_LEVEL_V4 1
#define FN_LEVEL_V0_ATTR __attribute__((unused))
#include "_levels.h"

/* Every trial of the queue q by SCG in the lanes of one group (see the top):
 * FN_SCG_DONE, or FN_SCG_UNSAFE (the run ended at a trial point beyond
 * params->w_limit; the queue's outputs are then incomplete). state:
 * FN_SCG_BLOCKS blocks of n_w x FN_TL doubles; work: 3 * FN_TBLOCK * n_units
 * vectors (trials_gradient's). */
static int
fn_scg_run(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_units,
           ptrdiff_t n_w, ptrdiff_t n, const double *X, const double *T, ptrdiff_t n_out,
           const fn_scg_params *par, fn_scg_queue *q, double *state, double *work)
{
    const int level = FN_CPU_LEVELS ? fn_cpu_level() : FN_CPU_BASE;
    if (level == FN_CPU_V4)
        return fn_scg_run_v4(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, par, q, state,
                             work);
    if (level == FN_CPU_V3)
        return fn_scg_run_v3(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, par, q, state,
                             work);
    return fn_scg_run_v0(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, par, q, state,
                         work);
}

#endif /* FASTNET_SCG_LANES_H */
