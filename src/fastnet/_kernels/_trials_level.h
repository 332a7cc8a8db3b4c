/* The lanes kernels of one CPU level: a template that _trials.h includes once
 * per level of _cpu.h, after defining
 *   FN_LV(name)   the name of this level's function (name_v4, name_v3, name_v0);
 *   FN_LV_ATTR    its target attribute;
 *   FN_LV_TILE    the largest register tile's side (4; 2 in the baseline, whose
 *                 eight-lane vectors take four SSE2 registers each: larger tiles
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
                        const double *w, const double *X, ptrdiff_t p0, const int64_t *rows,
                        fn_tv *A, fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units)
{
    if (rows != NULL)
        fn_trials_gather_inputs(A, X, rows, n_in);
    else
        for (ptrdiff_t r = 0; r < nb; r++) fn_trials_inputs(A + r * n_units, X, p0 + r, n_in);
    fn_trials_forward_rows(FN_LV_TILE, layers, n_layers, w, A, D, nb, n_units);
}

/* A forward pass of one group (weights wg) over a data set X, in blocks of
 * FN_TBLOCK rows of A (n_units vectors each), then for each output of each
 * example, by `kind` (a constant): FN_PASS_SSE adds its squared error to *sse;
 * FN_PASS_OUTPUTS stores it at Y[(p * n_out + k) * FN_TL]; FN_PASS_CHECK
 * clears in *ok the lanes where it is wrong (fn_lanes_correct_gm: Hamey's check,
 * thresholds r_c and analog). */
FN_INLINE void
FN_LV(fn_trials_data_pass)(const int kind, const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                    ptrdiff_t n, const double *X, const double *T, ptrdiff_t n_out,
                    const double *wg, fn_tv *A, ptrdiff_t n_units, fn_tvr *sse, double *Y,
                    fn_tm *ok, double r_c, double analog)
{
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START];
    fn_tv e = FN_TSPLAT(0.0);
    for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
        const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
        FN_LV(fn_trials_forward_block)(layers, n_layers, n_in, wg, X, p0, NULL, A, (fn_tv *)NULL,
                                       nb, n_units);
        for (ptrdiff_t r = 0; r < nb; r++)
            for (ptrdiff_t k = 0; k < n_out; k++) {
                const fn_tvr y = A[r * n_units + out0 + k];
                const ptrdiff_t j = (p0 + r) * n_out + k;
                if (kind == FN_PASS_SSE) {
                    const fn_tv res = y - T[j];
                    e += res * res;
                } else if (kind == FN_PASS_OUTPUTS) {
                    FN_TSTORE(Y + j * FN_TL, y);
                } else {
                    fn_lanes_correct_gm(ok, &y, T[j], r_c, analog);
                }
            }
    }
    if (kind == FN_PASS_SSE) *sse = e;
}

/* Sum of squared errors of each trial of each group over a data set (the
 * forward pass alone): sse[g * FN_TL + k]. work: FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_sse)(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
              ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const double *X,
              const double *T, ptrdiff_t n_out, const double *w, double *work,
              double *sse)
{
    const ptrdiff_t n_units = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START] + n_out;
    for (ptrdiff_t g = 0; g < n_groups; g++) {
        fn_tvr e;
        FN_LV(fn_trials_data_pass)(FN_PASS_SSE, layers, n_layers, n_in, n, X, T, n_out,
                            w + g * n_w * FN_TL, (fn_tv *)work, n_units, &e, NULL, NULL, 0.0,
                            0.0);
        FN_TSTORE(sse + g * FN_TL, e);
    }
}

/* Outputs of every trial on X: Y[((g * n + p) * n_out + k) * FN_TL + lane]
 * (the block forward pass). work: FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_outputs)(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                  ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                  ptrdiff_t n_out, const double *w, double *work, double *Y)
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
                         ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                         const double *T, ptrdiff_t n_out, const double *wg, double *gg,
                         fn_tv *A, fn_tv *D, fn_tv *E, fn_tvr *sse, fn_tm *ok, double r_c,
                         double analog)
{
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START];
    const fn_tv zero = FN_TSPLAT(0.0);
    if (n < 1) memset(gg, 0, (size_t)n_w * FN_TL * sizeof(double));
    fn_tv e = zero;
    for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
        const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
        FN_LV(fn_trials_forward_block)(layers, n_layers, n_in, wg, X, p0, NULL, A, D, nb, n_units);
        for (ptrdiff_t r = 0; r < nb; r++) {
            fn_tv *er = E + r * n_units, *dr = D + r * n_units;
            for (ptrdiff_t k = 0; k < n_out; k++) {
                const fn_tvr y = A[r * n_units + out0 + k];
                const fn_tv res = y - T[(p0 + r) * n_out + k];
                if (ok != NULL) fn_lanes_correct_gm(ok, &y, T[(p0 + r) * n_out + k], r_c, analog);
                e += res * res;
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
 * g (n_groups blocks of n_w x FN_TL) and sse[g * FN_TL + k]. work: 3 *
 * FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_gradient)(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                          ptrdiff_t n_in, ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n,
                          const double *X, const double *T, ptrdiff_t n_out, const double *w,
                          double *g, double *work, double *sse)
{
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + FN_TBLOCK * n_units;
    fn_tv *E = D + FN_TBLOCK * n_units;
    for (ptrdiff_t grp = 0; grp < n_groups; grp++) {
        fn_tvr e;
        FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out,
                                        w + grp * n_w * FN_TL, g + grp * n_w * FN_TL, A, D, E,
                                        &e, (fn_tm *)NULL, 0.0, 0.0);
        FN_TSTORE(sse + grp * FN_TL, e);
    }
}

/* A lanes rule alone (the twin of the single-network rules, for tests): one
 * step of n_w weights of FN_TL lanes, (n_w, FN_TL) blocks in place given the
 * gradient g, after t epochs (decay horizon t_max); rose[lane] != 0: that
 * lane's epoch error rose (irprop+). */
FN_LV_ATTR static void
FN_LV(fn_trials_rule_step)(ptrdiff_t n_w, double *w, const double *g, double *g_prev, double *dw_prev,
                    double *step, const fn_rule *rule, const int64_t *rose, ptrdiff_t t,
                    ptrdiff_t t_max)
{
    fn_lanes_ctx c;
    fn_lanes_ctx_init_gm(&c, rule);
    fn_lanes_epoch_values(rule, t, t_max, &c);
    fn_tm r;
    memcpy(&r, rose, sizeof r);
    const fn_tm all = FN_GM_ALL;
    c.rose = r != 0;
    fn_trials_update_any(0, n_w, w, g, g_prev, dw_prev, step, &all, rule, &c);
}

/* Hamey's lane check alone (for tests): the lanes of outputs Y (n, n_out,
 * FN_TL) that are right for every target of T (n, n_out), as bits. */
FN_LV_ATTR static unsigned
FN_LV(fn_trials_check)(ptrdiff_t n, ptrdiff_t n_out, const double *Y, const double *T, double r_c,
                double analog)
{
    fn_tm ok = FN_GM_ALL;
    for (ptrdiff_t j = 0; j < n * n_out; j++) {
        const fn_tvr y = FN_TLOAD(Y + j * FN_TL);
        fn_lanes_correct_gm(&ok, &y, T[j], r_c, analog);
    }
    return FN_GM_BITS(ok);
}

/* Run run->n_epochs epochs of a lanes rule (epoch-batched) for every group
 * (see the top). work: 3 * FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_train_generic)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                        const double *T, ptrdiff_t n_out, const fn_trials_state *state,
                        const fn_rule *rule, const fn_trials_epochs *run, double *work)
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
    const fn_tm none = (fn_tm){0};
    double top = -INFINITY;                 /* the largest error written (*sse_max) */
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        const fn_trials_group gr = fn_trials_group_at(&s, grp, n_w);
        double *wg = gr.w, *gg = gr.g, *gp = gr.gp, *dwp = gr.dwp, *st = gr.st;
        int64_t *sg = gr.status;
        fn_tm lane_status;
        memcpy(&lane_status, sg, sizeof lane_status);
        for (ptrdiff_t ep = 0; ep < e.n_epochs; ep++) {
            if (e.w_limit > 0.0) {
                /* Lanes whose weights reached w_limit stop before the epoch. */
                fn_tm far;
                fn_trials_beyond(n_w, wg, e.w_limit, &far);
                far &= lane_status == none;
                lane_status = (far & ((fn_tm){0} + (FN_STATUS_BEYOND + ep))) | (~far & lane_status);
            }
            fn_tm active = lane_status == none;
            int all = 1, any = 0;
            for (int l = 0; l < FN_TL; l++) { all &= active[l] != 0; any |= active[l] != 0; }
            if (!any) break;
            fn_tvr sse;
            FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, wg,
                                     gg, A, D, E, &sse, (fn_tm *)NULL, 0.0, 0.0);
            const double top_ep = fn_trials_sse_out(&e, grp, ep, &sse);
            if (top_ep > top) top = top_ep;
            /* Lanes whose error is not finite stop here, un-updated. */
            const fn_tm bad = active & ~((sse == sse) & (sse - sse == 0.0));
            for (int l = 0; l < FN_TL; l++) all &= bad[l] == 0;
            lane_status = (bad & ((fn_tm){0} + (ep + 1))) | (~bad & lane_status);
            active &= ~bad;
            const fn_tv last = FN_TLOAD(s.last_error + grp * FN_TL);
            c.rose = sse > last;
            FN_TSTORE(s.last_error + grp * FN_TL, FN_TSEL(active, sse, last));
            fn_lanes_epoch_values(rule, e.t0 + ep, e.t_max, &c);
            if (all)
                fn_trials_update_any(0, n_w, wg, gg, gp, dwp, st, &active, rule, &c);
            else
                fn_trials_update_any(1, n_w, wg, gg, gp, dwp, st, &active, rule, &c);
            if (e.check_every > 0 && (ep + 1) % e.check_every == 0) {
                fn_tm ok = FN_GM_ALL;
                FN_LV(fn_trials_data_pass)(FN_PASS_CHECK, layers, n_layers, n_in, n, X, T, n_out, wg, A,
                                    n_units, NULL, NULL, &ok, e.r_c, e.analog);
                const fn_tm done = active & ok;
                lane_status = (done & ((fn_tm){0} - (ep + 1))) | (~done & lane_status);
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
    int64_t m[FN_TL];
    for (int l = 0; l < FN_TL; l++) m[l] = -(int64_t)(live >> l & 1);
    memcpy(k, m, sizeof *k);
}

/* One pass of a queue's group: the epoch's gradient and check at the lanes'
 * weights, then each live lane's trial either stops (fn_trials_why: finished
 * into the queue) or has its error recorded; the stopped lanes as bits. */
FN_INLINE unsigned
FN_LV(fn_trials_queue_pass)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                            ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                            const double *T, ptrdiff_t n_out, const fn_trials_epochs *e,
                            fn_trials_queue *q, const double *wg, double *gg, fn_tv *A,
                            fn_tv *D, fn_tv *E, unsigned live, const ptrdiff_t *trial,
                            const ptrdiff_t *t, fn_tvr *sse, double *top, unsigned *below)
{
    fn_tm ok = FN_GM_ALL, far = (fn_tm){0};
    if (e->w_limit > 0.0) fn_trials_beyond(n_w, wg, e->w_limit, &far);
    FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, wg, gg,
                                    A, D, E, sse, e->check_every > 0 ? &ok : (fn_tm *)NULL,
                                    e->r_c, e->analog);
    double raw[FN_TL];
    int64_t right[FN_TL], beyond[FN_TL];
    memcpy(raw, sse, sizeof raw);
    memcpy(right, &ok, sizeof right);
    memcpy(beyond, &far, sizeof beyond);
    unsigned stopped = 0;
    *below = 0;
    for (int l = 0; l < FN_TL; l++) {
        if (!(live >> l & 1)) continue;
        const int64_t why = fn_trials_why(t[l], right[l] != 0, beyond[l] != 0, raw[l] - raw[l] == 0.0,
                                           e);
        if (why != 1) {
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

/* Every trial of the queue q (fn_trials_queue in _trials.h) in the lanes of
 * the state's groups, each taking trial after trial: a pass (forward, check,
 * backward) at the lanes' weights, then the rule's update of the lanes whose
 * trials train on (each with its own epoch's values), then the stopped lanes
 * take the next trials. work: 3 * FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_queue)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                       ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                       const double *T, ptrdiff_t n_out, const fn_trials_state *state,
                       const fn_rule *rule, const fn_trials_epochs *run,
                       fn_trials_queue *q, double *work)
{
    const fn_trials_state s = *state;
    const fn_trials_epochs e = *run;
    fn_lanes_ctx c;
    fn_lanes_ctx_init_gm(&c, rule);
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + FN_TBLOCK * n_units;
    fn_tv *E = D + FN_TBLOCK * n_units;
    const unsigned full = (1u << FN_TL) - 1;
    const int varies = fn_rule_epoch_varies(rule);
    fn_lanes_epoch_values(rule, 0, e.t_max, &c);
    double top = -INFINITY;                 /* the largest error recorded (*sse_max) */
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        const fn_trials_group gr = fn_trials_group_at(&s, grp, n_w);
        double *wg = gr.w, *gg = gr.g, *gp = gr.gp, *dwp = gr.dwp, *st = gr.st, *le = gr.le;
        ptrdiff_t trial[FN_TL], t[FN_TL];
        unsigned live = fn_trials_refill(q, full, trial, t, n_w, &gr);
        while (live) {
            fn_tvr sse;
            unsigned below;
            unsigned stopped = FN_LV(fn_trials_queue_pass)(
                layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, &e, q, wg, gg, A, D, E,
                live, trial, t, &sse, &top, &below);
            live &= ~stopped;
            if (live) {
                fn_tm active;
                FN_LV(fn_trials_lanes_mask)(live, &active);
                const fn_tv last = FN_TLOAD(le);
                c.rose = sse > last;
                FN_TSTORE(le, FN_TSEL(active, sse, last));
                if (varies) fn_lanes_epoch_values_each(rule, t, e.t_max, &c);
                if (live == full)
                    fn_trials_update_any(0, n_w, wg, gg, gp, dwp, st, &active, rule, &c);
                else
                    fn_trials_update_any(1, n_w, wg, gg, gp, dwp, st, &active, rule, &c);
                for (int l = 0; l < FN_TL; l++) t[l] += live >> l & 1;
                /* (trials whose error was below the threshold stop after the update) */
                for (int l = 0; l < FN_TL; l++)
                    if (below >> l & 1) fn_trials_finish(q, trial[l], t[l], -t[l], wg, l, n_w);
                live &= ~below;
                stopped |= below;
            }
            live |= fn_trials_refill(q, stopped, trial, t, n_w, &gr);
        }
    }
    if (top > *e.sse_max) *e.sse_max = top;
}


/* One online update's rule step of every weight of a group, fused with the
 * example's gradient (one row: dE/dw = dE/dnet_u a_i, dE/dnet_u for the bias):
 * fn_lanes_backprop_gm with the update's rate (each lane's). BLEND (a constant): the lanes
 * outside *active keep their weights and changes; TRACK (a constant): *far
 * gathers the lanes with a new weight of magnitude w_limit or more, or NaN.
 * A, D: the example's activations and dE/dnet (one row of n_units vectors). */
FN_INLINE void
FN_LV(fn_trials_online_step)(const int BLEND, const int TRACK, const ptrdiff_t *layers,
                             ptrdiff_t n_layers, double *wg, double *dwp, const fn_tv *A,
                             const fn_tv *D, const fn_tv *rate, double momentum,
                             const fn_tm *active, double w_limit, fn_tm *far)
{
    const fn_tv lim = FN_TSPLAT(w_limit);
    fn_tm f = *far;
    for (ptrdiff_t j = 0; j < n_layers; j++) {
        const ptrdiff_t *l = layers + j * FN_L_NCOLS;
        const ptrdiff_t lo = l[FN_L_SRC_LO], fan = l[FN_L_SRC_HI] - lo;
        const ptrdiff_t start = l[FN_L_START], size = l[FN_L_SIZE];
        double *wb = wg + l[FN_L_B_OFF] * FN_TL, *db = dwp + l[FN_L_B_OFF] * FN_TL;
        double *wu = wg + l[FN_L_W_OFF] * FN_TL, *du = dwp + l[FN_L_W_OFF] * FN_TL;
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
                                ptrdiff_t n_units, ptrdiff_t n, const double *X, const double *T,
                                ptrdiff_t n_out, double *wg, double *dwp, const int64_t *ord,
                                ptrdiff_t p, const fn_tm *active, int all, int track,
                                const fn_tv *rate, double momentum, double w_limit, fn_tv *A,
                                fn_tv *D, fn_tv *E, fn_tv *sse, fn_tm *far)
{
    const fn_tv zero = FN_TSPLAT(0.0);
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_L_NCOLS + FN_L_START];
    int64_t rows[FN_TL];
    for (int k = 0; k < FN_TL; k++) rows[k] = (*active)[k] ? ord[k * n + p] : 0;
    FN_LV(fn_trials_forward_block)(layers, n_layers, n_in, wg, X, 0, rows, A, D, 1, n_units);
    /* the example's error, before its update, and dE/dy = 2 (y - t) */
    fn_tv err = zero;
    for (ptrdiff_t k = 0; k < n_out; k++) {
        fn_tvr tv;
        for (int q = 0; q < FN_TL; q++) tv[q] = T[rows[q] * n_out + k];
        const fn_tv res = A[out0 + k] - tv;
        err += res * res;
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
                              ptrdiff_t n_units, ptrdiff_t n, const double *X, const double *T,
                              ptrdiff_t n_out, double *wg, double *dwp, const int64_t *ord,
                              const fn_tm *active, int track, const fn_rule *rule,
                              const ptrdiff_t *t, ptrdiff_t t_max, double w_limit, fn_tv *A,
                              fn_tv *D, fn_tv *E, fn_tv *sse, fn_tm *far)
{
    const double rate0 = rule->backprop.learning_rate, momentum = rule->backprop.momentum;
    const int decay = (int)rule->backprop.decay;
    int all = 1, same = 1;
    for (int k = 0; k < FN_TL; k++) {
        all &= (*active)[k] != 0;
        same &= t[k] == t[0] || !(*active)[k];
    }
    const ptrdiff_t t0 = t[0];
    *sse = FN_TSPLAT(0.0);
    *far = (fn_tm){0};
    double r[FN_TL];
    for (ptrdiff_t p = 0; p < n; p++) {
        if (p == 0 || decay == 2) {
            /* (lanes that do not train take any rate: their updates are not kept) */
            const double r0 = fn_trials_online_rate(decay, rate0, t0, p, n, t_max);
            for (int k = 0; k < FN_TL; k++)
                r[k] = same ? r0 : fn_trials_online_rate(decay, rate0, t[k], p, n, t_max);
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
                        ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                        const double *T, ptrdiff_t n_out, const fn_trials_state *state,
                        const fn_rule *rule, const fn_trials_epochs *run,
                        int64_t *orders, fn_bitgen *const *bitgens, double *work)
{
    const fn_trials_state s = *state;
    const fn_trials_epochs e = *run;
    /* work: one row each of activations, f'(net) (then dE/dnet) and dE/da; the
     * weights and changes of the group when its epoch started. */
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + n_units;
    fn_tv *E = D + n_units;
    double *w_start = (double *)(E + n_units), *dw_start = w_start + n_w * FN_TL;
    const fn_tm none = (fn_tm){0};
    const int track = e.w_limit > 0.0;
    double top = -INFINITY;
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        double *wg = s.w + grp * n_w * FN_TL, *dwp = s.dw_prev + grp * n_w * FN_TL;
        int64_t *sg = s.status + grp * FN_TL;
        int64_t *ord = orders + grp * FN_TL * n;
        fn_tm lane_status;
        memcpy(&lane_status, sg, sizeof lane_status);
        for (ptrdiff_t ep = 0; ep < e.n_epochs; ep++) {
            fn_tm active = lane_status == none;
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
                lane_status = (far0 & ((fn_tm){0} + (FN_STATUS_BEYOND + ep))) | (~far0 & lane_status);
                active &= ~far0;
                memcpy(w_start, wg, (size_t)n_w * FN_TL * sizeof(double));
                memcpy(dw_start, dwp, (size_t)n_w * FN_TL * sizeof(double));
            }
            any = 0;
            for (int k = 0; k < FN_TL; k++) any |= active[k] != 0;
            if (!any) continue;
            ptrdiff_t t[FN_TL];
            for (int k = 0; k < FN_TL; k++) t[k] = e.t0 + ep;
            fn_tv sse;
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
            const fn_tm bad = active & ~((sse == sse) & (sse - sse == 0.0));
            lane_status = (bad & ((fn_tm){0} + (ep + 1))) | (~bad & lane_status);
        }
        memcpy(sg, &lane_status, sizeof lane_status);
    }
    if (top > *e.sse_max) *e.sse_max = top;
}

/* One online epoch of the live lanes of a queue's group (fn_trials_online_queue):
 * each draws its trial's order (into ord), stops before the epoch at w_limit
 * (status FN_STATUS_BEYOND + t), trains it (fn_trials_online_epoch), then, by
 * fn_trials_online_why, trains on or stops (the check: a forward pass over the
 * training set at the weights after the epoch, where a lane's strip ends). The
 * lanes that stopped, as bits; t[l] counts the epochs of lane l's trial. */
FN_INLINE unsigned
FN_LV(fn_trials_online_queue_epoch)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                                    ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n,
                                    const double *X, const double *T, ptrdiff_t n_out,
                                    const fn_rule *rule, const fn_trials_epochs *e,
                                    fn_trials_queue *q, double *wg, double *dwp, int64_t *ord,
                                    double *work, unsigned live, const ptrdiff_t *trial,
                                    ptrdiff_t *t, double *top)
{
    fn_tv *A = (fn_tv *)work, *D = A + n_units, *E = D + n_units;
    double *w_start = (double *)(E + n_units), *dw_start = w_start + n_w * FN_TL;
    const int track = e->w_limit > 0.0;
    fn_tm active, far0 = (fn_tm){0}, far, gone = (fn_tm){0}, ok = FN_GM_ALL;
    FN_LV(fn_trials_lanes_mask)(live, &active);
    for (int l = 0; l < FN_TL; l++)
        if (live >> l & 1) fn_permutation(q->bitgens[trial[l]], n, ord + l * n);
    if (track) {
        fn_trials_beyond(n_w, wg, e->w_limit, &far0);
        far0 &= active;
        active &= ~far0;
        memcpy(w_start, wg, (size_t)n_w * FN_TL * sizeof(double));
        memcpy(dw_start, dwp, (size_t)n_w * FN_TL * sizeof(double));
    }
    fn_tv sse = FN_TSPLAT(0.0);
    if (FN_GM_BITS(active)) {
        FN_LV(fn_trials_online_epoch)(layers, n_layers, n_in, n_units, n, X, T, n_out, wg, dwp,
                                      ord, &active, track, rule, t, e->t_max, e->w_limit, A, D,
                                      E, &sse, &far);
        if (track) fn_trials_online_revert(n_w, wg, dwp, w_start, dw_start, 0, &far, &active, &gone);
    }
    unsigned due = 0;
    for (int l = 0; l < FN_TL; l++)
        if (e->check_every > 0 && active[l] && (t[l] + 1) % e->check_every == 0) due |= 1u << l;
    if (due)
        FN_LV(fn_trials_data_pass)(FN_PASS_CHECK, layers, n_layers, n_in, n, X, T, n_out, wg, A,
                                   n_units, NULL, NULL, &ok, e->r_c, e->analog);
    double raw[FN_TL];
    int64_t right[FN_TL], before[FN_TL], within[FN_TL];
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
        if (why != 1) {
            fn_trials_finish(q, trial[l], why > 0 && why < FN_STATUS_BEYOND ? t[l] + 1 : t[l], why,
                             wg, l, n_w);
            stopped |= 1u << l;
        }
    }
    return stopped;
}

/* Every trial of the queue q (fn_trials_queue; q->bitgens given) trained by
 * online backpropagation in the lanes of the state's groups, each lane taking
 * trial after trial: an epoch of every live lane (fn_trials_online_queue_epoch),
 * then the stopped lanes take the next trials. rule, run: as fn_trials_online's,
 * run->check_every Hamey's check after every check_every-th epoch of a trial.
 * work: online_work_size doubles and FN_TBLOCK * n_units vectors. */
FN_LV_ATTR static void
FN_LV(fn_trials_online_queue)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                              ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                              const double *T, ptrdiff_t n_out, const fn_trials_state *state,
                              const fn_rule *rule, const fn_trials_epochs *run,
                              fn_trials_queue *q, double *work)
{
    const fn_trials_state s = *state;
    const fn_trials_epochs e = *run;
    const unsigned full = (1u << FN_TL) - 1;
    double top = -INFINITY;                 /* the largest error recorded (*sse_max) */
    for (ptrdiff_t grp = 0; grp < s.n_groups; grp++) {
        const fn_trials_group gr = fn_trials_group_at(&s, grp, n_w);
        ptrdiff_t trial[FN_TL], t[FN_TL];
        unsigned live = fn_trials_refill(q, full, trial, t, n_w, &gr);
        while (live) {
            const unsigned stopped = FN_LV(fn_trials_online_queue_epoch)(
                layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, rule, &e, q, gr.w, gr.dwp,
                q->orders + grp * FN_TL * n, work, live, trial, t, &top);
            live = (live & ~stopped) | fn_trials_refill(q, stopped, trial, t, n_w, &gr);
        }
    }
    if (top > *e.sse_max) *e.sse_max = top;
}
