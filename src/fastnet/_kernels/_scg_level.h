/* The SCG lanes kernel of one CPU level: a template that _scg_lanes.h includes
 * once per level, after defining FN_LV(name) and FN_LV_ATTR as _trials.h does
 * for _trials_level.h (whose functions of the same level it calls). Not
 * guarded: its parameters are the includer's, which undefines them.
 */

/* a OP b of the lanes at this level's width (FN_TCMP, _lanes.h: a whole-group
 * comparison is scalar code below x86-64-v4) */
#define FN_SCG_CMP(OP, a, b) FN_TCMP(FN_LV_VB, OP, a, b)

/* One pass of the group at the points x: each lane's error (*sse) and gradient
 * (into g), and Hamey's check of the outputs there if it runs (*ok: the lanes
 * where every output is right; every lane without the check). Not inlined: its
 * sums are trials_gradient's, with the multiply-adds of this level, and the SCG
 * arithmetic around it has none. */
FN_LV_ATTR __attribute__((noinline)) static void
FN_LV(fn_scg_pass)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_units,
                   ptrdiff_t n_w, ptrdiff_t n, const double *X, const double *T, ptrdiff_t n_out,
                   const fn_scg_params *par, const double *x, double *g, double *work,
                   fn_tvr *sse, fn_tm *ok)
{
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + FN_TBLOCK * n_units;
    fn_tv *E = D + FN_TBLOCK * n_units;
    fn_tm right = FN_GM_ALL;
    FN_LV(fn_trials_epoch_gradient)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, x, g,
                                    A, D, E, sse, par->check ? &right : (fn_tm *)NULL, par->r_c,
                                    par->analog);
    *ok = right;
}

/* Steps 1-4 of the iteration for the iterating lanes (`live`): ‖p‖² (*p2), the
 * probe pass where the last step was taken, δ, λ, λ̄, μ (*mu) and α (*alpha, 0
 * outside *a2, the lanes that go on to the trial point). The lanes whose
 * scalars left the floating-point range stop (and take the next trials). */
FN_LV_ATTR FN_SCG_NOFMA static void
FN_LV(fn_scg_steps14)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                      ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                      const double *T, ptrdiff_t n_out, const fn_scg_params *par,
                      fn_scg_queue *q, fn_scg_lanes *s, double *st, double *work, const fn_tm *live,
                      fn_tvr *p2, fn_tvr *mu, fn_tvr *alpha, fn_tm *a2)
{
    double *w = st, *r = w + n_w * FN_TL, *p = r + n_w * FN_TL, *x = p + n_w * FN_TL;
    double *gp = x + n_w * FN_TL;
    const fn_tv zero = FN_TSPLAT(0.0), inf = FN_TSPLAT(INFINITY);
    fn_tvr pp;
    fn_scg_dot(n_w, p, p, &pp);
    const fn_tm a1 = *live & FN_SCG_CMP(>, pp, zero) & FN_SCG_CMP(<, pp, inf);
    const fn_tm out1 = *live & ~a1;
    if (FN_SCG_BITS(out1)) {            /* (1: ‖p‖² = 0 "converged", else "abnormal") */
        fn_scg_stop(par, q, s, FN_SCG_BITS(out1 & FN_SCG_CMP(==, pp, zero)), FN_SCG_CONVERGED, 0, n_w, w, r, p);
        fn_scg_stop(par, q, s, FN_SCG_BITS(out1 & ~FN_SCG_CMP(==, pp, zero)), FN_SCG_ABNORMAL, 0, n_w, w, r, p);
    }
    const fn_tm probe = a1 & s->success;
    fn_tvr delta = s->delta;
    if (FN_SCG_BITS(probe)) {                                           /* (1) */
        const fn_tvr sk = FN_TSEL(probe, FN_TSPLAT(par->sigma) / FN_TSQRT(pp), zero);
        for (ptrdiff_t c = 0; c < n_w; c++) {
            const fn_tvr step = sk * FN_TLOAD(p + c * FN_TL);
            FN_TSTORE(x + c * FN_TL, FN_TLOAD(w + c * FN_TL) + step);
        }
        fn_tvr e;
        fn_tm ok;
        FN_LV(fn_scg_pass)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, par, x, gp,
                           work, &e, &ok);
        /* δ = p·s, s = (g(w + σ_k p) - g(w)) / σ_k, g(w) = -r */
        fn_tvr dd = zero;
        for (ptrdiff_t c = 0; c < n_w; c++) {
            const fn_tvr sc = (FN_TLOAD(gp + c * FN_TL) + FN_TLOAD(r + c * FN_TL)) / sk;
            const fn_tvr prod = FN_TLOAD(p + c * FN_TL) * sc;
            dd = c == 0 ? prod : dd + prod;
        }
        delta = FN_TSEL(probe, dd, delta);
        for (int l = 0; l < FN_TL; l++) s->n_probe[l] += probe[l] != 0;
    }
    const fn_tvr dl = s->lam - s->lam_bar;                              /* (2) */
    const fn_tvr dlp = dl * pp;
    delta = delta + dlp;
    const fn_tm neg = a1 & FN_SCG_CMP(<=, delta, zero);                              /* (3) */
    if (FN_SCG_BITS(neg)) {
        const fn_tvr lb = 2.0 * (s->lam - delta / pp);
        const fn_tvr lp = s->lam * pp;
        s->lam_bar = FN_TSEL(neg, lb, s->lam_bar);
        delta = FN_TSEL(neg, -delta + lp, delta);
        s->lam = FN_TSEL(neg, s->lam_bar, s->lam);
    }
    fn_tvr m;                                                           /* (4) */
    fn_scg_dot(n_w, p, r, &m);
    const fn_tvr al = m / delta;
    const fn_tm ok2 = a1 & FN_SCG_CMP(>, delta, zero) & FN_SCG_CMP(<, delta, inf)
        & FN_SCG_CMP(<, FN_TABS(al), inf) & ~FN_SCG_CMP(==, m, zero);
    const fn_tm out2 = a1 & ~ok2;
    if (FN_SCG_BITS(out2)) {
        /* (δ not in (0, ∞) or μ not finite "abnormal", else μ = 0 "converged",
         * else α not finite "abnormal": SCG's order) */
        const fn_tm first = out2 & ~(FN_SCG_CMP(>, delta, zero) & FN_SCG_CMP(<, delta, inf)
                                            & FN_SCG_CMP(<, FN_TABS(m), inf));
        const fn_tm mu0 = out2 & ~first & FN_SCG_CMP(==, m, zero);
        fn_scg_stop(par, q, s, FN_SCG_BITS(out2 & ~mu0), FN_SCG_ABNORMAL, 0, n_w, w, r, p);
        fn_scg_stop(par, q, s, FN_SCG_BITS(mu0), FN_SCG_CONVERGED, 0, n_w, w, r, p);
    }
    s->delta = delta;
    *p2 = pp;
    *mu = m;
    *alpha = FN_TSEL(ok2, al, zero);
    *a2 = ok2;
}

/* The lanes of `starting` after the trial pass at their initial weights (error
 * e, gradient gt, check ok): r = p = -g, λ = λ₁, λ̄ = 0, success; a trial whose
 * error is not finite stops (diverged), one whose gradient is zero stops
 * ("converged", after its first epoch's error is recorded). */
FN_LV_ATTR FN_SCG_NOFMA static void
FN_LV(fn_scg_begin)(const fn_scg_params *par, fn_scg_queue *q, fn_scg_lanes *s, ptrdiff_t n_w,
                    double *st, const double *gt, const fn_tm *start, const fn_tvr *e,
                    const fn_tm *ok)
{
    double *w = st, *r = w + n_w * FN_TL, *p = r + n_w * FN_TL;
    const fn_tv zero = FN_TSPLAT(0.0);
    const fn_tm starting = *start;
    fn_tm nz = (fn_tm){0};
    for (ptrdiff_t c = 0; c < n_w; c++) {
        const fn_tvr rc = -FN_TLOAD(gt + c * FN_TL);
        FN_TSTORE(r + c * FN_TL, FN_TSEL(starting, rc, FN_TLOAD(r + c * FN_TL)));
        FN_TSTORE(p + c * FN_TL, FN_TSEL(starting, rc, FN_TLOAD(p + c * FN_TL)));
        nz |= rc != zero;
    }
    s->E = FN_TSEL(starting, *e, s->E);
    s->low = FN_TSEL(starting, *e, s->low);
    s->lam = FN_TSEL(starting, FN_TSPLAT(par->lambda1), s->lam);
    s->lam_bar = FN_TSEL(starting, zero, s->lam_bar);
    s->delta = FN_TSEL(starting, zero, s->delta);
    s->success |= starting;
    s->ok_start = (starting & *ok) | (~starting & s->ok_start);
    const unsigned b = FN_SCG_BITS(starting);
    const fn_tm finite = FN_SCG_CMP(==, *e - *e, zero);
    for (int l = 0; l < FN_TL; l++) {
        if (!(b >> l & 1)) continue;
        const ptrdiff_t i = s->trial[l];
        q->first[i] = (*e)[l];
        s->n_grad[l] = 1;
        s->state[l] = FN_SCG_LIVE;
    }
    const fn_tm bad = starting & ~finite, flat = starting & finite & ~nz;
    if (FN_SCG_BITS(bad))
        fn_scg_stop(par, q, s, FN_SCG_BITS(bad), FN_SCG_DIVERGED_INITIAL, 0, n_w, w, r, p);
    if (FN_SCG_BITS(flat)) {
        for (int l = 0; l < FN_TL; l++)
            if (flat[l] && q->history != NULL)
                q->history[s->trial[l] * q->ld] = (*e)[l] * q->sse_scale;
        fn_scg_stop(par, q, s, FN_SCG_BITS(flat), FN_SCG_CONVERGED, 0, n_w, w, r, p);
    }
}

/* Steps 5-7 of the iteration for the lanes of a2 after the trial pass at x
 * (error e, gradient gt, check ok), then the stops: "converged" (λ not finite,
 * or r' = 0), Hamey's check, the error below `below`, t_max. */
FN_LV_ATTR FN_SCG_NOFMA static void
FN_LV(fn_scg_steps57)(const fn_scg_params *par, fn_scg_queue *q, fn_scg_lanes *s,
                      ptrdiff_t n_w, double *st, const double *gt, const fn_tm *lanes,
                      const fn_tvr *e, const fn_tm *ok, const fn_tvr *p2, const fn_tvr *mu)
{
    double *w = st, *r = w + n_w * FN_TL, *p = r + n_w * FN_TL, *x = p + n_w * FN_TL;
    const fn_tv zero = FN_TSPLAT(0.0), inf = FN_TSPLAT(INFINITY);
    const fn_tm a2 = *lanes;
    const fn_tvr mu2 = *mu * *mu;
    for (int l = 0; l < FN_TL; l++) s->n_error[l] += a2[l] != 0;
    const fn_tm a3 = a2 & FN_SCG_CMP(<, *e, inf) & FN_SCG_CMP(>, mu2, zero) & FN_SCG_CMP(<, mu2, inf);
    const fn_tm out3 = a2 & ~a3;
    if (FN_SCG_BITS(out3)) {
        const fn_tm bad = out3 & ~FN_SCG_CMP(<, *e, inf);
        fn_scg_stop(par, q, s, FN_SCG_BITS(bad), FN_SCG_DIVERGED, 0, n_w, w, r, p);
        fn_scg_stop(par, q, s, FN_SCG_BITS(out3 & ~bad & FN_SCG_CMP(==, mu2, inf)), FN_SCG_ABNORMAL, 0,
                    n_w, w, r, p);
        fn_scg_stop(par, q, s, FN_SCG_BITS(out3 & ~bad & FN_SCG_CMP(==, mu2, zero)), FN_SCG_CONVERGED, 0,
                    n_w, w, r, p);
    }
    if (!FN_SCG_BITS(a3)) return;
    const fn_tvr Delta = 2.0 * s->delta * (s->E - *e) / mu2;               /* (5) */
    const fn_tm acc = a3 & FN_SCG_CMP(>=, Delta, zero);                                 /* (6) */
    s->E = FN_TSEL(acc, *e, s->E);
    for (int l = 0; l < FN_TL; l++) s->n_grad[l] += acc[l] != 0;
    fn_tvr rr = zero, rnr = zero;
    fn_tm nz = (fn_tm){0};
    for (ptrdiff_t c = 0; c < n_w; c++) {
        const fn_tvr rn = -FN_TLOAD(gt + c * FN_TL);
        const fn_tvr q1 = rn * rn, q2 = rn * FN_TLOAD(r + c * FN_TL);
        rr = c == 0 ? q1 : rr + q1;
        rnr = c == 0 ? q2 : rnr + q2;
        nz |= rn != zero;
    }
    fn_tm restart;
    {
        int64_t m[FN_TL];
        for (int l = 0; l < FN_TL; l++) m[l] = -(int64_t)((s->t[l] + 1) % par->restart == 0);
        memcpy(&restart, m, sizeof restart);
    }
    const fn_tvr beta = (rr - rnr) / *mu;
    for (ptrdiff_t c = 0; c < n_w; c++) {
        const fn_tvr rn = -FN_TLOAD(gt + c * FN_TL), pc = FN_TLOAD(p + c * FN_TL);
        const fn_tvr bp = beta * pc;
        const fn_tvr pn = FN_TSEL(restart, rn, rn + bp);
        FN_TSTORE(w + c * FN_TL, FN_TSEL(acc, FN_TLOAD(x + c * FN_TL), FN_TLOAD(w + c * FN_TL)));
        FN_TSTORE(p + c * FN_TL, FN_TSEL(acc, pn, pc));
        FN_TSTORE(r + c * FN_TL, FN_TSEL(acc, rn, FN_TLOAD(r + c * FN_TL)));
    }
    fn_tvr lam = s->lam;
    s->lam_bar = FN_TSEL(a3, FN_TSEL(acc, zero, lam), s->lam_bar);
    s->success = (a3 & acc) | (~a3 & s->success);
    lam = FN_TSEL(acc & FN_SCG_CMP(>=, Delta, FN_TSPLAT(0.75)), lam / 4.0, lam);
    const fn_tvr rise = s->delta * (1.0 - Delta) / *p2;                     /* (7) */
    lam = FN_TSEL(a3 & FN_SCG_CMP(<, Delta, FN_TSPLAT(0.25)), lam + rise, lam);
    s->lam = FN_TSEL(a3, lam, s->lam);
    /* the stops: λ not finite or r' = 0 (the weights stay), then the check */
    const fn_tm flat = a3 & (~FN_SCG_CMP(<, FN_TABS(lam), inf) | (acc & FN_SCG_CMP(==, rr, zero) & ~nz));
    if (FN_SCG_BITS(flat))
        fn_scg_stop(par, q, s, FN_SCG_BITS(flat), FN_SCG_CONVERGED, 0, n_w, w, r, p);
    fn_tm first;
    {
        int64_t m[FN_TL];
        for (int l = 0; l < FN_TL; l++) m[l] = -(int64_t)(s->t[l] == 0);
        memcpy(&first, m, sizeof first);
    }
    /* (where the step was taken the trial point is checked; elsewhere the weights
     * did not change since their last check, but for a trial's first epoch) */
    const fn_tm right = par->check ? a3 & ~flat & ((acc & *ok) | (~acc & first & s->ok_start))
                                   : (fn_tm){0};
    if (FN_SCG_BITS(right))
        fn_scg_stop(par, q, s, FN_SCG_BITS(right), FN_SCG_CORRECT, 1, n_w, w, r, p);
    const fn_tvr reported = s->E_start * q->sse_scale;
    const fn_tm low = a3 & ~flat & ~right & (reported < FN_TSPLAT(par->below));
    if (FN_SCG_BITS(low))
        fn_scg_stop(par, q, s, FN_SCG_BITS(low), FN_SCG_BELOW, 1, n_w, w, r, p);
    unsigned last = 0;
    const unsigned on = FN_SCG_BITS(a3 & ~flat & ~right & ~low);
    for (int l = 0; l < FN_TL; l++) {
        if (!(on >> l & 1)) continue;
        if (s->t[l] + 1 >= par->t_max) last |= 1u << l;
    }
    if (last) fn_scg_stop(par, q, s, last, FN_SCG_MAX_EPOCHS, 1, n_w, w, r, p);
    for (int l = 0; l < FN_TL; l++) s->t[l] += (on & ~last) >> l & 1;
}

/* Every trial of the queue q (see fn_scg_run in _scg_lanes.h). */
FN_LV_ATTR FN_SCG_NOFMA static int
FN_LV(fn_scg_run)(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_units,
                  ptrdiff_t n_w, ptrdiff_t n, const double *X, const double *T, ptrdiff_t n_out,
                  const fn_scg_params *par, fn_scg_queue *q, double *st, double *work)
{
    double *w = st, *r = w + n_w * FN_TL, *p = r + n_w * FN_TL, *x = p + n_w * FN_TL;
    double *gt = x + 2 * n_w * FN_TL;
    const fn_tv zero = FN_TSPLAT(0.0);
    fn_scg_lanes s;
    memset(&s, 0, sizeof s);
    for (int l = 0; l < FN_TL; l++) fn_scg_take(q, &s, l, n_w, w, r, p);
    const fn_tv limit = FN_TSPLAT(par->w_limit);
    for (;;) {
        unsigned live_b = 0, start_b = 0;
        for (int l = 0; l < FN_TL; l++) {
            live_b |= (unsigned)(s.state[l] == FN_SCG_LIVE) << l;
            start_b |= (unsigned)(s.state[l] == FN_SCG_WAITING) << l;
        }
        if (!live_b && !start_b) break;
        /* each iterating trial's error at the start of its iteration t */
        for (int l = 0; l < FN_TL; l++) {
            if (!(live_b >> l & 1)) continue;
            if (q->history != NULL) q->history[s.trial[l] * q->ld + s.t[l]] = s.E[l] * q->sse_scale;
            if (s.E[l] < s.low[l]) s.low[l] = s.E[l];
            s.E_start[l] = s.E[l];
        }
        fn_tm live;
        fn_scg_mask(live_b, &live);
        fn_tvr p2 = zero, mu = zero, alpha = zero;
        fn_tm a2 = (fn_tm){0};
        if (live_b)
            FN_LV(fn_scg_steps14)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, par, q, &s,
                                  st, work, &live, &p2, &mu, &alpha, &a2);
        /* the trial points (a lane that stopped above has taken its next trial:
         * its point is that trial's initial weights, r = p = 0) */
        fn_tm far = (fn_tm){0};
        for (ptrdiff_t c = 0; c < n_w; c++) {
            const fn_tvr step = alpha * FN_TLOAD(p + c * FN_TL);
            const fn_tvr xc = FN_TLOAD(w + c * FN_TL) + step;
            FN_TSTORE(x + c * FN_TL, xc);
            far |= ~(FN_TABS(xc) <= limit);
        }
        if (FN_SCG_BITS(far & a2)) return FN_SCG_UNSAFE;
        start_b = 0;
        for (int l = 0; l < FN_TL; l++) start_b |= (unsigned)(s.state[l] == FN_SCG_WAITING) << l;
        if (!FN_SCG_BITS(a2) && !start_b) continue;
        fn_tvr e;
        fn_tm ok;
        FN_LV(fn_scg_pass)(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, par, x, gt, work,
                           &e, &ok);
        fn_tm starting;
        fn_scg_mask(start_b, &starting);
        if (FN_SCG_BITS(a2))
            FN_LV(fn_scg_steps57)(par, q, &s, n_w, st, gt, &a2, &e, &ok, &p2, &mu);
        if (start_b) FN_LV(fn_scg_begin)(par, q, &s, n_w, st, gt, &starting, &e, &ok);
    }
    return FN_SCG_DONE;
}

#undef FN_SCG_CMP
