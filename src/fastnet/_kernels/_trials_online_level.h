/* Online backpropagation's kernels of one CPU level (an update per example, each
 * lane in its own order: Backprop(mode="online")): a template that
 * _trials_level.h includes, with its FN_LV, FN_LV_ATTR and FN_LV_TILE (see
 * there); its level-free pieces are _trials_online.h's. The entry point
 * fn_trials_online (epochs of every group, for the strips) and the online epoch
 * of fn_trials_queue (fn_trials_online_queue_epoch). Not guarded: its
 * parameters are the includer's.
 */

/* One online update's rule step of every weight of a group, fused with the
 * example's gradient (one row: dE/dw = dE/dnet_u a_i, dE/dnet_u for the bias):
 * fn_lanes_backprop_gm with the update's rate (each lane's). BLEND (a
 * constant): the lanes outside *active keep their weights and changes; TRACK
 * (a constant): *far gathers the lanes with a new weight of magnitude w_limit
 * or more, or NaN. A, D: the example's activations and dE/dnet (one row of
 * n_units vectors). */
FN_INLINE void
FN_LV(fn_trials_online_step)(const int BLEND, const int TRACK, const ptrdiff_t *layers,
                             ptrdiff_t n_layers, fn_real *wg, fn_real *dwp, const fn_tv *A,
                             const fn_tv *D, const fn_tv *rate, double momentum,
                             const fn_tm *active, double w_limit, fn_tm *far)
{
    const fn_tv lim = FN_TSPLAT(w_limit);
    fn_tm f = *far;
    for (ptrdiff_t j = 0; j < n_layers; j++) {
        const ptrdiff_t *l = layers + j * FN_L_NCOLS;
        const ptrdiff_t lo = l[FN_L_SRC_LO], fan = l[FN_L_SRC_HI] - lo;
        const ptrdiff_t start = l[FN_L_START], size = l[FN_L_SIZE];
        fn_real *wb = wg + l[FN_L_B_OFF] * FN_TL, *db = dwp + l[FN_L_B_OFF] * FN_TL;
        fn_real *wu = wg + l[FN_L_W_OFF] * FN_TL, *du = dwp + l[FN_L_W_OFF] * FN_TL;
        const fn_tv *a = A + lo;
        for (ptrdiff_t u = 0; u < size; u++, wu += fan * FN_TL, du += fan * FN_TL) {
            const fn_tvr d = D[start + u];
            fn_trials_online_weight(BLEND, TRACK, wb + u * FN_TL, db + u * FN_TL, &d, rate,
                                    momentum, active, &lim, &f);
            for (ptrdiff_t i = 0; i < fan; i++) {
                const fn_tvr g = d * a[i];
                fn_trials_online_weight(BLEND, TRACK, wu + i * FN_TL, du + i * FN_TL, &g, rate,
                                        momentum, active, &lim, &f);
            }
        }
    }
    *far = f;
}

/* Example p of an online epoch in every lane of a group (weights wg, changes
 * dwp; lane k's example ord[k * n + p]): its forward pass, error (into *sse,
 * before its update), backward pass and update (fn_trials_online_step; all:
 * every lane active, track: w_limit watched into *far; each lane's rate). A,
 * D, E: a row each of activations, f'(net) (then dE/dnet) and dE/da. */
FN_INLINE void
FN_LV(fn_trials_online_example)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                                ptrdiff_t n_units, ptrdiff_t n, const fn_real *X, const fn_real *T,
                                ptrdiff_t n_out, fn_real *wg, fn_real *dwp, const int64_t *ord,
                                ptrdiff_t p, const fn_tm *active, int all, int track,
                                const fn_tv *rate, double momentum, double w_limit, fn_tv *A,
                                fn_tv *D, fn_tv *E, fn_teu *sse, fn_tm *far)
{
    const fn_tv zero = FN_TSPLAT(0.0);
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START];
    int64_t rows[FN_TL];
    for (int k = 0; k < FN_TL; k++) rows[k] = (*active)[k] ? ord[k * n + p] : 0;
    FN_LV(fn_trials_forward_block)(layers, n_layers, n_in, wg, X, 0, rows, A, D, 1, n_units);
    /* the example's error, before its update, and dE/dy = 2 (y - t) */
    fn_teu err = FN_TESPLAT(0.0);
    for (ptrdiff_t k = 0; k < n_out; k++) {
        fn_tvr tv;
        for (int q = 0; q < FN_TL; q++) tv[q] = T[rows[q] * n_out + k];
        const fn_tv res = A[out0 + k] - tv;
        const fn_teu re = FN_TE(res);
        err += re * re;
        D[out0 + k] *= 2.0 * res;   /* dE/dnet = f'(net) dE/dy */
    }
    *sse += err;
    for (ptrdiff_t u = n_in; u < out0; u++) E[u] = zero;
    fn_trials_backward_rows(FN_LV_TILE, layers, n_layers, n_in, wg, D, E, 1, n_units);
    if (all && !track)
        FN_LV(fn_trials_online_step)(0, 0, layers, n_layers, wg, dwp, A, D, rate, momentum,
                                     active, w_limit, far);
    else if (all)
        FN_LV(fn_trials_online_step)(0, 1, layers, n_layers, wg, dwp, A, D, rate, momentum,
                                     active, w_limit, far);
    else if (!track)
        FN_LV(fn_trials_online_step)(1, 0, layers, n_layers, wg, dwp, A, D, rate, momentum,
                                     active, w_limit, far);
    else
        FN_LV(fn_trials_online_step)(1, 1, layers, n_layers, wg, dwp, A, D, rate, momentum,
                                     active, w_limit, far);
}

/* One online epoch of the lanes *active of a group (weights wg, changes dwp;
 * lane k's order ord[k * n ..], its trial's epoch t[k]; the rule's rates,
 * fn_trials_online_rate, horizon t_max): the examples in turn
 * (fn_trials_online_example), their errors summed into *sse (each before its
 * update), the lanes that reached w_limit (track) into *far. */
FN_INLINE void
FN_LV(fn_trials_online_epoch)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                              ptrdiff_t n_units, ptrdiff_t n, const fn_real *X, const fn_real *T,
                              ptrdiff_t n_out, fn_real *wg, fn_real *dwp, const int64_t *ord,
                              const fn_tm *active, int track, const fn_rule *rule,
                              const ptrdiff_t *t, ptrdiff_t t_max, double w_limit, fn_tv *A,
                              fn_tv *D, fn_tv *E, fn_teu *sse, fn_tm *far)
{
    const double rate0 = rule->backprop.learning_rate, momentum = rule->backprop.momentum;
    const int decay = (int)rule->backprop.decay;
    int all = 1, same = 1;
    for (int k = 0; k < FN_TL; k++) {
        all &= (*active)[k] != 0;
        same &= t[k] == t[0] || !(*active)[k];
    }
    const ptrdiff_t t0 = t[0];
    *sse = FN_TESPLAT(0.0);
    *far = (fn_tm){0};
    fn_real r[FN_TL];
    for (ptrdiff_t p = 0; p < n; p++) {
        if (p == 0 || decay == 2) {
            /* (lanes that do not train take any rate: their updates are not kept) */
            const double r0 = fn_trials_online_rate(decay, rate0, t0, p, n, t_max);
            for (int k = 0; k < FN_TL; k++)
                r[k] = (fn_real)(same ? r0
                                 : fn_trials_online_rate(decay, rate0, t[k], p, n, t_max));
        }
        const fn_tv rate = FN_TLOAD(r);
        FN_LV(fn_trials_online_example)(layers, n_layers, n_in, n_units, n, X, T, n_out, wg, dwp,
                                        ord, p, active, all, track, &rate, momentum, w_limit, A,
                                        D, E, sse, far);
    }
}

/* Run run->n_epochs epochs of online backpropagation (an update per example,
 * each lane in its own order: Backprop(mode="online")) for every group; see
 * fn_trials_online in _trials.h for the arguments and the lane status. work:
 * 3 * n_units + 2 * n_w vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_online)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const fn_real *X,
                        const fn_real *T, ptrdiff_t n_out, const fn_trials_state *state,
                        const fn_rule *rule, const fn_trials_epochs *run,
                        int64_t *orders, fn_bitgen *const *bitgens, fn_real *work)
{
    const fn_trials_state s = *state;
    const fn_trials_epochs e = *run;
    /* work: one row each of activations, f'(net) (then dE/dnet) and dE/da; the
     * weights and changes of the group when its epoch started. */
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + n_units;
    fn_tv *E = D + n_units;
    fn_real *w_start = (fn_real *)(E + n_units), *dw_start = w_start + n_w * FN_TL;
    const fn_tem none = (fn_tem){0};
    const int track = e.w_limit > 0.0;
    double top = -INFINITY;
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        fn_real *wg = s.w + grp * n_w * FN_TL, *dwp = s.dw_prev + grp * n_w * FN_TL;
        int64_t *sg = s.status + grp * FN_TL;
        int64_t *ord = orders + grp * FN_TL * n;
        fn_tem lane_status;
        memcpy(&lane_status, sg, sizeof lane_status);
        for (ptrdiff_t ep = 0; ep < e.n_epochs; ep++) {
            fn_tm active = FN_TM_OF(lane_status == none);
            int any = 0;
            for (int k = 0; k < FN_TL; k++) any |= active[k] != 0;
            if (!any) break;
            /* Each training lane's order of this epoch, from its own generator. */
            for (int k = 0; k < FN_TL; k++)
                if (active[k]) fn_permutation(bitgens[grp * FN_TL + k], n, ord + k * n);
            if (track) {
                /* Lanes whose weights reached w_limit stop before the epoch. */
                fn_tm far0;
                fn_trials_beyond(n_w, wg, e.w_limit, &far0);
                far0 &= active;
                lane_status = (FN_TEM_OF(far0) & ((fn_tem){0} + (FN_STATUS_BEYOND + ep)))
                    | (~FN_TEM_OF(far0) & lane_status);
                active &= ~far0;
                memcpy(w_start, wg, (size_t)n_w * FN_TL * sizeof(fn_real));
                memcpy(dw_start, dwp, (size_t)n_w * FN_TL * sizeof(fn_real));
            }
            any = 0;
            for (int k = 0; k < FN_TL; k++) any |= active[k] != 0;
            if (!any) continue;
            ptrdiff_t t[FN_TL];
            for (int k = 0; k < FN_TL; k++) t[k] = e.t0 + ep;
            fn_teu sse;
            fn_tm far;
            FN_LV(fn_trials_online_epoch)(layers, n_layers, n_in, n_units, n, X, T, n_out, wg, dwp,
                                          ord, &active, track, rule, t, e.t_max, e.w_limit, A, D,
                                          E, &sse, &far);
            const double top_ep = fn_trials_sse_out(&e, grp, ep, &sse);
            if (top_ep > top) top = top_ep;
            if (track)
                fn_trials_online_revert(n_w, wg, dwp, w_start, dw_start, ep, &far, &active,
                                        &lane_status);
            /* Lanes whose epoch error is not finite stop after it. */
            const fn_tm bad = active & FN_TM_OF(~((sse == sse) & (sse - sse == 0.0)));
            lane_status = (FN_TEM_OF(bad) & ((fn_tem){0} + (ep + 1)))
                | (~FN_TEM_OF(bad) & lane_status);
        }
        memcpy(sg, &lane_status, sizeof lane_status);
    }
    if (top > *e.sse_max) *e.sse_max = top;
}

/* One online epoch of the live lanes of a queue's group (fn_trials_queue):
 * each draws its trial's order (into ord), stops before the epoch at w_limit
 * (status FN_STATUS_BEYOND + t), trains it (fn_trials_online_epoch), then, by
 * fn_trials_online_why, trains on or stops (the check: a forward pass over the
 * training set at the weights after the epoch, where a lane's strip ends). The
 * lanes that stopped, as bits; t[l] counts the epochs of lane l's trial. */
FN_INLINE unsigned
FN_LV(fn_trials_online_queue_epoch)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                                    ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n,
                                    const fn_real *X, const fn_real *T, ptrdiff_t n_out,
                                    const fn_rule *rule, const fn_trials_epochs *e,
                                    fn_trials_queue *q, fn_real *wg, fn_real *dwp, int64_t *ord,
                                    fn_real *work, unsigned live, const ptrdiff_t *trial,
                                    ptrdiff_t *t, double *top)
{
    fn_tv *A = (fn_tv *)work, *D = A + n_units, *E = D + n_units;
    fn_real *w_start = (fn_real *)(E + n_units), *dw_start = w_start + n_w * FN_TL;
    const int track = e->w_limit > 0.0;
    fn_tm active, far0 = (fn_tm){0}, far, ok = FN_GM_ALL;
    fn_tem gone = (fn_tem){0};
    FN_LV(fn_trials_lanes_mask)(live, &active);
    for (int l = 0; l < FN_TL; l++)
        if (live >> l & 1) fn_permutation(q->bitgens[trial[l]], n, ord + l * n);
    if (track) {
        fn_trials_beyond(n_w, wg, e->w_limit, &far0);
        far0 &= active;
        active &= ~far0;
        memcpy(w_start, wg, (size_t)n_w * FN_TL * sizeof(fn_real));
        memcpy(dw_start, dwp, (size_t)n_w * FN_TL * sizeof(fn_real));
    }
    fn_teu sse = FN_TESPLAT(0.0);
    if (FN_GM_BITS(active)) {
        FN_LV(fn_trials_online_epoch)(layers, n_layers, n_in, n_units, n, X, T, n_out, wg, dwp,
                                      ord, &active, track, rule, t, e->t_max, e->w_limit, A, D,
                                      E, &sse, &far);
        if (track)
            fn_trials_online_revert(n_w, wg, dwp, w_start, dw_start, 0, &far, &active, &gone);
    }
    unsigned due = 0;
    for (int l = 0; l < FN_TL; l++)
        if (e->check_every > 0 && active[l] && (t[l] + 1) % e->check_every == 0) due |= 1u << l;
    if (due)
        FN_LV(fn_trials_data_pass)(FN_PASS_CHECK, layers, n_layers, n_in, n, X, T, n_out, wg, A,
                                   n_units, NULL, NULL, &ok, e->r_c, e->analog);
    double raw[FN_TL];
    fn_rint right[FN_TL], before[FN_TL];
    int64_t within[FN_TL];
    memcpy(raw, &sse, sizeof raw);
    memcpy(right, &ok, sizeof right);
    memcpy(before, &far0, sizeof before);
    memcpy(within, &gone, sizeof within);
    unsigned stopped = 0;
    for (int l = 0; l < FN_TL; l++) {
        if (!(live >> l & 1)) continue;
        int64_t why = FN_STATUS_BEYOND + t[l];
        if (!before[l]) {
            const double v = raw[l] * e->sse_scale;
            why = fn_trials_online_why(e, q, t[l], within[l] != 0, v, right[l] != 0);
            if (!within[l] && v - v == 0.0) {
                fn_trials_record(q, trial[l], t[l], v);
                if (v > *top) *top = v;
                t[l]++;
            }
        }
        if (why != FN_TRIALS_ON) {
            fn_trials_finish(q, trial[l], why > 0 && why < FN_STATUS_BEYOND ? t[l] + 1 : t[l], why,
                             wg, l, n_w);
            stopped |= 1u << l;
        }
    }
    return stopped;
}
