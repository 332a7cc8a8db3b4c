/* The lanes kernels of one CPU level: a template that _trials.h includes once
 * per level of _cpu.h, after defining
 *   FN_LV(name)   the name of this level's function (name_v4, name_v3, name_v0);
 *   FN_LV_ATTR    its target attribute;
 *   FN_LV_TILE    the largest register tile's side (4; 2 in the baseline, whose
 *                 64-byte vectors take four SSE2 registers each: larger tiles
 *                 there only multiply the code). Sums run in the same order
 *                 whatever the tiles, so results do not depend on it.
 * _trials.h's dispatchers (fn_trials_sse, ...) call the level fn_cpu_level
 * chooses. The always-inline helpers (_lanes_pass.h, _rules.h, _trials.h)
 * are compiled into each level's functions. Not guarded: its parameters are the
 * includer's, which undefines them.
 */

/* Rows [0, nb) of a block of A (rows of n_units vectors): the inputs of
 * examples p0.. (or, with `rows`, one row whose lane k holds example rows[k]:
 * online training), then the forward pass (f'(net) into D unless it is NULL).
 * Not inlined (one call per block): its five callers would each compile the
 * tiles and activations again. */
FN_LV_ATTR static void
FN_LV(fn_trials_forward_block)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        const fn_real *w, const fn_real *X, ptrdiff_t p0, const int64_t *rows,
                        fn_tv *A, fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units)
{
    if (rows != NULL)
        fn_trials_gather_inputs(A, X, rows, n_in);
    else
        for (ptrdiff_t r = 0; r < nb; r++) fn_trials_inputs(A + r * n_units, X, p0 + r, n_in);
    fn_trials_forward_rows(FN_LV_TILE, FN_LV_VB, layers, n_layers, w, A, D, nb, n_units);
}

/* A forward pass of one group (weights wg) over a data set X, in blocks of
 * FN_TBLOCK rows of A (n_units vectors each), then for each output of each
 * example, by `kind` (a constant): FN_PASS_SSE adds its squared error to *sse;
 * FN_PASS_OUTPUTS stores it at Y[(p * n_out + k) * FN_TL]; FN_PASS_CHECK
 * clears in *ok the lanes where it is wrong (fn_lanes_correct_gm: Hamey's check,
 * thresholds r_c and analog). */
FN_INLINE void
FN_LV(fn_trials_data_pass)(const int kind, const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                    ptrdiff_t n, const fn_real *X, const fn_real *T, ptrdiff_t n_out,
                    const fn_real *wg, fn_tv *A, ptrdiff_t n_units, fn_te *sse, fn_real *Y,
                    fn_tm *ok, double r_c, double analog)
{
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START];
    fn_teu e = FN_TESPLAT(0.0);
    for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
        const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
        FN_LV(fn_trials_forward_block)(layers, n_layers, n_in, wg, X, p0, NULL, A, (fn_tv *)NULL,
                                       nb, n_units);
        for (ptrdiff_t r = 0; r < nb; r++)
            for (ptrdiff_t k = 0; k < n_out; k++) {
                const fn_tvr y = A[r * n_units + out0 + k];
                const ptrdiff_t j = (p0 + r) * n_out + k;
                if (kind == FN_PASS_SSE) {
                    const fn_teu res = FN_TE(y - T[j]);
                    e += res * res;
                } else if (kind == FN_PASS_OUTPUTS) {
                    FN_TSTORE(Y + j * FN_TL, y);
                } else {
                    FN_LV_GM(fn_lanes_correct)(ok, &y, T[j], r_c, analog);
                }
            }
    }
    if (kind == FN_PASS_SSE) *sse = e;
}

/* Sum of squared errors of each trial of each group over a data set (the
 * forward pass alone): sse[g * FN_TL + k]. work: FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_sse)(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
              ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
              const fn_real *T, ptrdiff_t n_out, const fn_real *w, fn_real *work,
              double *sse)
{
    const ptrdiff_t n_units = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START] + n_out;
    for (ptrdiff_t g = 0; g < n_groups; g++) {
        fn_te e;
        FN_LV(fn_trials_data_pass)(FN_PASS_SSE, layers, n_layers, n_in, n, X, T, n_out,
                            w + g * n_w * FN_TL, (fn_tv *)work, n_units, &e, NULL, NULL, 0.0,
                            0.0);
        FN_TESTORE(sse + g * FN_TL, e);
    }
}

/* Outputs of every trial on X: Y[((g * n + p) * n_out + k) * FN_TL + lane]
 * (the block forward pass). work: FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_outputs)(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                  ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                  ptrdiff_t n_out, const fn_real *w, fn_real *work, fn_real *Y)
{
    const ptrdiff_t n_units = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START] + n_out;
    for (ptrdiff_t g = 0; g < n_groups; g++)
        FN_LV(fn_trials_data_pass)(FN_PASS_OUTPUTS, layers, n_layers, n_in, n, X, NULL, n_out,
                            w + g * n_w * FN_TL, (fn_tv *)work, n_units, NULL,
                            Y + g * n * n_out * FN_TL, NULL, 0.0, 0.0);
}

/* One epoch's error and gradient (into gg) of a group at its weights wg: the
 * blocks of FN_TBLOCK examples forward, backward, into the gradient. work: A,
 * D, E of _lanes_pass.h. With `ok` (not NULL), Hamey's check of the outputs
 * the forward pass computes (those of the weights the epoch starts from)
 * clears in *ok the lanes where one is wrong (thresholds r_c, analog). */
FN_INLINE void
FN_LV(fn_trials_epoch_gradient)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                         ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                         const fn_real *T, ptrdiff_t n_out, const fn_real *wg, fn_real *gg,
                         fn_tv *A, fn_tv *D, fn_tv *E, fn_te *sse, fn_tm *ok, double r_c,
                         double analog)
{
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START];
    const fn_tv zero = FN_TSPLAT(0.0);
    if (n < 1) memset(gg, 0, (size_t)n_w * FN_TL * sizeof(fn_real));
    fn_teu e = FN_TESPLAT(0.0);
    for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
        const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
        FN_LV(fn_trials_forward_block)(layers, n_layers, n_in, wg, X, p0, NULL, A, D, nb, n_units);
        for (ptrdiff_t r = 0; r < nb; r++) {
            fn_tv *er = E + r * n_units, *dr = D + r * n_units;
            for (ptrdiff_t k = 0; k < n_out; k++) {
                const fn_tvr y = A[r * n_units + out0 + k];
                const fn_tv res = y - T[(p0 + r) * n_out + k];
                const fn_teu re = FN_TE(res);
                if (ok != NULL) FN_LV_GM(fn_lanes_correct)(ok, &y, T[(p0 + r) * n_out + k], r_c, analog);
                e += re * re;
                /* dE/dnet = f'(net) dE/dy, dE/dy = 2 (y - t) of E = sum (y - t)^2 */
                dr[out0 + k] *= 2.0 * res;
            }
            for (ptrdiff_t s = n_in; s < out0; s++) er[s] = zero;
        }
        fn_trials_backward_rows(FN_LV_TILE, layers, n_layers, n_in, wg, D, E, nb, n_units);
        /* (the first block stores the gradient, the others add to it) */
        if (p0 == 0)
            fn_trials_gradient_rows(1, FN_LV_TILE, layers, n_layers, gg, A, D, nb, n_units);
        else
            fn_trials_gradient_rows(0, FN_LV_TILE, layers, n_layers, gg, A, D, nb, n_units);
    }
    *sse = e;
}

/* Each trial's error and gradient over (X, T) at its weights, every group:
 * g (n_groups blocks of n_w x FN_TL) and sse[g * FN_TL + k]. With ok_bits (not
 * NULL), Hamey's check of the outputs the forward pass computes (thresholds r_c,
 * analog; those of the weights given) as bits, one word per group: a rule stepped
 * from Python checks its last update on the next epoch's pass, as the lanes'
 * rules do. work: 3 * FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_gradient)(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                          ptrdiff_t n_in, ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n,
                          const fn_real *X, const fn_real *T, ptrdiff_t n_out, const fn_real *w,
                          fn_real *g, fn_real *work, double *sse, double r_c, double analog,
                          int64_t *ok_bits)
{
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + FN_TBLOCK * n_units;
    fn_tv *E = D + FN_TBLOCK * n_units;
    for (ptrdiff_t grp = 0; grp < n_groups; grp++) {
        fn_te e;
        fn_tm ok = FN_GM_ALL;
        FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out,
                                        w + grp * n_w * FN_TL, g + grp * n_w * FN_TL, A, D, E,
                                        &e, ok_bits != NULL ? &ok : (fn_tm *)NULL, r_c, analog);
        FN_TESTORE(sse + grp * FN_TL, e);
        if (ok_bits != NULL) ok_bits[grp] = (int64_t)FN_GM_BITS(ok);
    }
}

/* A lanes rule alone (the twin of the single-network rules, for tests): one
 * step of n_w weights of FN_TL lanes, (n_w, FN_TL) blocks in place given the
 * gradient g, after t epochs (decay horizon t_max); rose[lane] != 0: that
 * lane's epoch error rose (irprop+). */
FN_LV_ATTR static void
FN_LV(fn_trials_rule_step)(ptrdiff_t n_w, fn_real *w, const fn_real *g, fn_real *g_prev,
                    fn_real *dw_prev, fn_real *step, const fn_rule *rule, const int64_t *rose, ptrdiff_t t,
                    ptrdiff_t t_max)
{
    fn_lanes_ctx c;
    fn_lanes_ctx_init_gm(&c, rule);
    fn_lanes_epoch_values(rule, t, t_max, &c);
    fn_rint r[FN_TL];
    for (int k = 0; k < FN_TL; k++) r[k] = rose[k] != 0 ? -1 : 0;
    memcpy(&c.rose, r, sizeof r);
    const fn_tm all = FN_GM_ALL;
    fn_trials_update_any(FN_LV_VB, 0, n_w, w, g, g_prev, dw_prev, step, &all, rule, &c);
}

/* Hamey's lane check alone (for tests): the lanes of outputs Y (n, n_out,
 * FN_TL) that are right for every target of T (n, n_out), as bits. */
FN_LV_ATTR static unsigned
FN_LV(fn_trials_check)(ptrdiff_t n, ptrdiff_t n_out, const fn_real *Y, const fn_real *T, double r_c,
                double analog)
{
    fn_tm ok = FN_GM_ALL;
    for (ptrdiff_t j = 0; j < n * n_out; j++) {
        const fn_tvr y = FN_TLOAD(Y + j * FN_TL);
        FN_LV_GM(fn_lanes_correct)(&ok, &y, T[j], r_c, analog);
    }
    return FN_GM_BITS(ok);
}

/* Run run->n_epochs epochs of a lanes rule (epoch-batched) for every group
 * (see the top). work: 3 * FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_train_generic)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                        const fn_real *T, ptrdiff_t n_out, const fn_trials_state *state,
                        const fn_rule *rule, const fn_trials_epochs *run, fn_real *work)
{
    /* (local copies, read once: the stores through double pointers would
     * otherwise make the compiler reload the fields) */
    const fn_trials_state s = *state;
    const fn_trials_epochs e = *run;
    fn_lanes_ctx c;
    fn_lanes_ctx_init_gm(&c, rule);
    /* work: FN_TBLOCK rows each of activations, f'(net) (which become dE/dnet)
     * and dE/da. */
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + FN_TBLOCK * n_units;
    fn_tv *E = D + FN_TBLOCK * n_units;
    const fn_tem none = (fn_tem){0};
    double top = -INFINITY;                 /* the largest error written (*sse_max) */
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        const fn_trials_group gr = fn_trials_group_at(&s, grp, n_w);
        fn_real *wg = gr.w, *gg = gr.g, *gp = gr.gp, *dwp = gr.dwp, *st = gr.st;
        int64_t *sg = gr.status;
        fn_tem lane_status;
        memcpy(&lane_status, sg, sizeof lane_status);
        for (ptrdiff_t ep = 0; ep < e.n_epochs; ep++) {
            if (e.w_limit > 0.0) {
                /* Lanes whose weights reached w_limit stop before the epoch. */
                fn_tm far;
                fn_trials_beyond(n_w, wg, e.w_limit, &far);
                far &= FN_TM_OF(lane_status == none);
                lane_status = (FN_TEM_OF(far) & ((fn_tem){0} + (FN_STATUS_BEYOND + ep)))
                    | (~FN_TEM_OF(far) & lane_status);
            }
            fn_tm active = FN_TM_OF(lane_status == none);
            int all = 1, any = 0;
            for (int l = 0; l < FN_TL; l++) { all &= active[l] != 0; any |= active[l] != 0; }
            if (!any) break;
            fn_te sse;
            FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, wg,
                                     gg, A, D, E, &sse, (fn_tm *)NULL, 0.0, 0.0);
            const double top_ep = fn_trials_sse_out(&e, grp, ep, &sse);
            if (top_ep > top) top = top_ep;
            /* Lanes whose error is not finite stop here, un-updated. */
            const fn_tm bad = active & FN_TM_OF(~((sse == sse) & (sse - sse == 0.0)));
            for (int l = 0; l < FN_TL; l++) all &= bad[l] == 0;
            lane_status = (FN_TEM_OF(bad) & ((fn_tem){0} + (ep + 1)))
                | (~FN_TEM_OF(bad) & lane_status);
            active &= ~bad;
            const fn_teu last = FN_TELOAD(s.last_error + grp * FN_TL);
            c.rose = FN_TM_OF(sse > last);
            FN_TESTORE(s.last_error + grp * FN_TL, FN_TESEL(FN_TEM_OF(active), sse, last));
            fn_lanes_epoch_values(rule, e.t0 + ep, e.t_max, &c);
            if (all)
                fn_trials_update_any(FN_LV_VB, 0, n_w, wg, gg, gp, dwp, st, &active, rule, &c);
            else
                fn_trials_update_any(FN_LV_VB, 1, n_w, wg, gg, gp, dwp, st, &active, rule, &c);
            if (e.check_every > 0 && (ep + 1) % e.check_every == 0) {
                fn_tm ok = FN_GM_ALL;
                FN_LV(fn_trials_data_pass)(FN_PASS_CHECK, layers, n_layers, n_in, n, X, T, n_out, wg, A,
                                    n_units, NULL, NULL, &ok, e.r_c, e.analog);
                const fn_tm done = active & ok;
                lane_status = (FN_TEM_OF(done) & ((fn_tem){0} - (ep + 1)))
                    | (~FN_TEM_OF(done) & lane_status);
            }
        }
        memcpy(sg, &lane_status, sizeof lane_status);
    }
    if (top > *e.sse_max) *e.sse_max = top;
}


/* The lanes of a group that train on (`live`, bits) as a mask, into *k. */
FN_INLINE void
FN_LV(fn_trials_lanes_mask)(unsigned live, fn_tm *k)
{
    fn_rint m[FN_TL];
    for (int l = 0; l < FN_TL; l++) m[l] = -(fn_rint)(live >> l & 1);
    memcpy(k, m, sizeof *k);
}

/* One pass of a queue's group: the epoch's gradient and check at the lanes'
 * weights, then each live lane's trial either stops (fn_trials_why: finished
 * into the queue) or has its error recorded; the stopped lanes as bits. */
FN_INLINE unsigned
FN_LV(fn_trials_queue_pass)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                            ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                            const fn_real *T, ptrdiff_t n_out, const fn_trials_epochs *e,
                            fn_trials_queue *q, const fn_real *wg, fn_real *gg, fn_tv *A,
                            fn_tv *D, fn_tv *E, unsigned live, const ptrdiff_t *trial,
                            const ptrdiff_t *t, fn_te *sse, double *top, unsigned *below)
{
    fn_tm ok = FN_GM_ALL, far = (fn_tm){0};
    if (e->w_limit > 0.0) fn_trials_beyond(n_w, wg, e->w_limit, &far);
    FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, wg, gg,
                                    A, D, E, sse, e->check_every > 0 ? &ok : (fn_tm *)NULL,
                                    e->r_c, e->analog);
    double raw[FN_TL];
    fn_rint right[FN_TL], beyond[FN_TL];
    memcpy(raw, sse, sizeof raw);
    memcpy(right, &ok, sizeof right);
    memcpy(beyond, &far, sizeof beyond);
    unsigned stopped = 0;
    *below = 0;
    for (int l = 0; l < FN_TL; l++) {
        if (!(live >> l & 1)) continue;
        const int64_t why = fn_trials_why(t[l], right[l] != 0, beyond[l] != 0, raw[l] - raw[l] == 0.0,
                                           e);
        if (why != FN_TRIALS_ON) {
            fn_trials_finish(q, trial[l], t[l], why, wg, l, n_w);
            stopped |= 1u << l;
        } else {
            const double v = raw[l] * e->sse_scale;
            fn_trials_record(q, trial[l], t[l], v);
            if (v > *top) *top = v;
            if (q->below_every > 0 && (t[l] + 1) % q->below_every == 0 && v < q->below)
                *below |= 1u << l;
        }
    }
    return stopped;
}

/* Online backpropagation's kernels of this level (the queue's online epoch among them). */
#include "_trials_online_level.h"

/* One epoch of the live lanes of a queue's group (gr) for an epoch-batched rule:
 * its pass (fn_trials_queue_pass), then the rule's update of the lanes whose
 * trials train on (each with its own epoch's values, where they vary: context
 * c), then the stops of ErrorBelow after the update. The lanes that stopped, as
 * bits; t[l] counts the epochs of lane l's trial. */
FN_INLINE unsigned
FN_LV(fn_trials_queue_epoch)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                             ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                             const fn_real *T, ptrdiff_t n_out, const fn_rule *rule,
                             fn_lanes_ctx *c, int varies, const fn_trials_epochs *e,
                             fn_trials_queue *q, const fn_trials_group *gr, fn_real *work,
                             unsigned live, const ptrdiff_t *trial, ptrdiff_t *t, double *top)
{
    fn_tv *A = (fn_tv *)work, *D = A + FN_TBLOCK * n_units, *E = D + FN_TBLOCK * n_units;
    fn_te sse;
    unsigned below;
    const unsigned stopped = FN_LV(fn_trials_queue_pass)(
        layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, e, q, gr->w, gr->g, A, D, E, live,
        trial, t, &sse, top, &below);
    live &= ~stopped;
    if (!live) return stopped;
    fn_tm active;
    FN_LV(fn_trials_lanes_mask)(live, &active);
    const fn_teu last = FN_TELOAD(gr->le);
    c->rose = FN_TM_OF(sse > last);
    FN_TESTORE(gr->le, FN_TESEL(FN_TEM_OF(active), sse, last));
    if (varies) fn_lanes_epoch_values_each(rule, t, e->t_max, c);
    if (live == (1u << FN_TL) - 1)
        fn_trials_update_any(FN_LV_VB, 0, n_w, gr->w, gr->g, gr->gp, gr->dwp, gr->st, &active, rule, c);
    else
        fn_trials_update_any(FN_LV_VB, 1, n_w, gr->w, gr->g, gr->gp, gr->dwp, gr->st, &active, rule, c);
    for (int l = 0; l < FN_TL; l++) t[l] += live >> l & 1;
    /* (trials whose error was below the threshold stop after the update) */
    for (int l = 0; l < FN_TL; l++)
        if (below >> l & 1) fn_trials_finish(q, trial[l], t[l], -t[l], gr->w, l, n_w);
    return stopped | below;
}

/* Every trial of the queue q (fn_trials_queue in _trials.h) in the lanes of
 * the state's groups, each lane taking trial after trial: an epoch of its live
 * lanes (an epoch-batched rule: fn_trials_queue_epoch, a pass at the lanes'
 * weights, then the update; online backpropagation, q->bitgens given:
 * fn_trials_online_queue_epoch), then the stopped lanes take the next trials.
 * work: 3 * FN_TBLOCK * n_units vectors (online: and online_work_size values). */
FN_LV_ATTR static void
FN_LV(fn_trials_queue)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                       ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                       const fn_real *T, ptrdiff_t n_out, const fn_trials_state *state,
                       const fn_rule *rule, const fn_trials_epochs *run,
                       fn_trials_queue *q, fn_real *work)
{
    const fn_trials_state s = *state;
    const fn_trials_epochs e = *run;
    fn_lanes_ctx c;
    fn_lanes_ctx_init_gm(&c, rule);
    const int varies = fn_rule_epoch_varies(rule), online = q->bitgens != NULL;
    fn_lanes_epoch_values(rule, 0, e.t_max, &c);
    double top = -INFINITY;                 /* the largest error recorded (*sse_max) */
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        const fn_trials_group gr = fn_trials_group_at(&s, grp, n_w);
        ptrdiff_t trial[FN_TL], t[FN_TL];
        unsigned live = fn_trials_refill(q, (1u << FN_TL) - 1, trial, t, n_w, &gr);
        while (live) {
            const unsigned stopped = online
                ? FN_LV(fn_trials_online_queue_epoch)(layers, n_layers, n_in, n_units, n_w, n, X,
                                                      T, n_out, rule, &e, q, gr.w, gr.dwp,
                                                      q->orders + grp * FN_TL * n, work, live,
                                                      trial, t, &top)
                : FN_LV(fn_trials_queue_epoch)(layers, n_layers, n_in, n_units, n_w, n, X, T,
                                               n_out, rule, &c, varies, &e, q, &gr, work, live,
                                               trial, t, &top);
            live = (live & ~stopped) | fn_trials_refill(q, stopped, trial, t, n_w, &gr);
        }
    }
    if (top > *e.sse_max) *e.sse_max = top;
}
