/* Online backpropagation in the lanes (Backprop(mode="online")): the pieces of
 * its kernels (_trials_online_level.h) that do not depend on the CPU level: a
 * weight's step, the rate of an update, the return of the lanes that reached
 * w_limit within an epoch, and why a queue's trial stops after an epoch.
 * Included by _trials.h (after fn_trials_queue), before the levels.
 */
#ifndef FASTNET_TRIALS_ONLINE_H
#define FASTNET_TRIALS_ONLINE_H

/* One weight's online step in every lane (fn_trials_online_step of _trials_online_level.h): the
 * weight at pw, its previous change at pdw, its gradient g, each lane's rate. */
FN_INLINE void
fn_trials_online_weight(const int BLEND, const int TRACK, fn_real *pw, fn_real *pdw,
                        const fn_tvr *g, const fn_tv *rate, double momentum, const fn_tm *active,
                        const fn_tv *lim, fn_tm *far)
{
    const fn_tvr w0 = FN_TLOAD(pw), dw0 = FN_TLOAD(pdw);
    fn_tvr w = w0, dw = dw0;
    const fn_tvr r = *rate;
    fn_lanes_backprop_gm(&w, g, &dw, &r, momentum);
    if (BLEND) {
        w = FN_TSEL(*active, w, w0);
        dw = FN_TSEL(*active, dw, dw0);
    }
    FN_TSTORE(pw, w);
    FN_TSTORE(pdw, dw);
    if (TRACK) *far |= ~(FN_TABS(w) < *lim);
}

/* The rate of online update p (of n) of epoch t: decay 0, rate0; 1, per epoch,
 * rate0 (1 - t / t_max); 2, per update, update u = t n + p of U = t_max n at
 * rate0 (U - 1 - u) / (U - 1) (rate0 if U = 1). */
FN_INLINE double
fn_trials_online_rate(int decay, double rate0, ptrdiff_t t, ptrdiff_t p, ptrdiff_t n,
                      ptrdiff_t t_max)
{
    if (decay == 1) return rate0 * (1.0 - (double)t / (double)t_max);
    if (decay != 2) return rate0;
    const ptrdiff_t U = t_max * n, u = t * n + p;
    return U > 1 ? rate0 * ((double)(U - 1 - u) / (double)(U - 1)) : rate0;
}

/* The lanes `far` of a group (of those `active`) whose weights reached w_limit
 * within online epoch ep go back to where it started (w_start, dw_start) and
 * stop there (status FN_STATUS_BEYOND + ep; their order stays in `orders`). */
static inline void
fn_trials_online_revert(ptrdiff_t n_w, fn_real *wg, fn_real *dwp, const fn_real *w_start,
                        const fn_real *dw_start, ptrdiff_t ep, fn_tm *far, fn_tm *active,
                        fn_tem *lane_status)
{
    *far &= *active;
    int moved = 0;
    for (int k = 0; k < FN_TL; k++) moved |= (*far)[k] != 0;
    if (!moved) return;
    const fn_tm f = *far;
    for (ptrdiff_t c = 0; c < n_w; c++) {
        fn_real *pw = wg + c * FN_TL, *pdw = dwp + c * FN_TL;
        FN_TSTORE(pw, FN_TSEL(f, FN_TLOAD(w_start + c * FN_TL), FN_TLOAD(pw)));
        FN_TSTORE(pdw, FN_TSEL(f, FN_TLOAD(dw_start + c * FN_TL), FN_TLOAD(pdw)));
    }
    *lane_status = (FN_TEM_OF(f) & ((fn_tem){0} + (FN_STATUS_BEYOND + ep)))
        | (~FN_TEM_OF(f) & *lane_status);
    *active &= ~f;
}

/* How lane l's trial, which trained t epochs, stops after its online epoch t + 1
 * of queue q (the code of fn_trials_queue's status), or FN_TRIALS_ON (it trains on):
 * `beyond` it reached w_limit within the epoch (its weights those of the
 * epoch's start), `v` its epoch error (times sse_scale), `right` Hamey's check
 * of its weights after the epoch held (read at the check's epochs alone). */
FN_INLINE int64_t
fn_trials_online_why(const fn_trials_epochs *e, const fn_trials_queue *q, ptrdiff_t t, int beyond,
                     double v, int right)
{
    const ptrdiff_t u = t + 1;
    if (beyond) return FN_STATUS_BEYOND + t;
    if (!(v - v == 0.0)) return u;
    if (e->check_every > 0 && u % e->check_every == 0 && right) return -u;
    if (q->below_every > 0 && u % q->below_every == 0 && v < q->below) return -u;
    if (u >= e->t_max) return 0;
    return FN_TRIALS_ON;
}

#endif /* FASTNET_TRIALS_ONLINE_H */
