/* The lanes' per-weight rules and Hamey's success check, lane forms: FN_TL
 * trials of one weight (one output) at once, lane by lane what the scalar
 * forms do for one: fn_rprop_weight and fn_output_correct of _rule.h,
 * fn_quickprop_weight and fn_adam_weight of _per_weight.h, and batch
 * backpropagation's momentum step (_backprop.pyx).
 *
 * Not an ordinary header: _lanes.h includes it once per mask representation
 * (as _simd.h does _tiles.h), after defining the parameters below, so it has
 * no include guard and undefines every parameter at its end.
 *
 * Parameters:
 *   FN_LR_MASKS   the mask operations: FN_GM (generic vectors) or FN_KM
 *                 (AVX-512 mask registers); see _lanes.h for FN_<set>_<op>.
 *   FN_LR_SUFFIX  the functions' names end in it: fn_lanes_rprop_<suffix>,
 *                 fn_lanes_backprop_<suffix>, fn_lanes_quickprop_<suffix>,
 *                 fn_lanes_adam_<suffix>, fn_lanes_correct_<suffix>.
 *   FN_LR_ATTR    attributes of the functions (the target of FN_KM's
 *                 intrinsics; empty for FN_GM).
 */

#define FN_LR_CAT_(a, b) a##_##b
#define FN_LR_CAT(a, b) FN_LR_CAT_(a, b)
#define FN_LR(op) FN_LR_CAT(FN_LR_MASKS, op)
#define FN_LR_NAME(f) FN_LR_CAT(f, FN_LR_SUFFIX)

/* RPROP's step of one weight in every lane, variant V (a constant: each
 * variant compiles to its own code), in place: weight w, epoch gradient g,
 * previous gradient gp, step s, previous change dw (neither read nor written
 * for irprop-, which never reads it); rose (irprop+ alone): the lanes whose
 * epoch error rose. Lane by lane fn_rprop_weight's results bit for bit, in
 * fewer operations:
 * - the step: grown and clamped to step_max where gp g > 0, shrunk and
 *   clamped to step_min where gp g < 0, else as it was (MIN and MAX give the
 *   bound where the comparison fails, as the scalar form's selects);
 * - the change: a step >= +0 with the sign of -g is t | (~g & sign) (the
 *   scalar -sign(g) t), and none where g is 0 or NaN (the scalar -0.0 t;
 *   w + -0.0 is w). */
FN_LR_ATTR FN_INLINE void
FN_LR_NAME(fn_lanes_rprop)(const int V, fn_tvr *w, const fn_tvr *g, fn_tvr *gp, fn_tvr *s,
                           fn_tvr *dw, const FN_LR(T) *rose, const fn_lanes_steps *k)
{
    const fn_tv zero = FN_TSPLAT(0.0), mzero = FN_TSPLAT(-0.0);
    const fn_tm signbit = (fn_tm){0} + INT64_MIN;
    const fn_tv gv = *g, wv = *w, sv = *s, prod = *gp * gv;
    const FN_LR(T) pos = FN_LR(GT)(prod, zero), neg = FN_LR(LT)(prod, zero);
    const fn_tv t = FN_LR(SEL)(pos, FN_LR(MIN)(sv * k->eta_plus, k->step_max),
                               FN_LR(SEL)(neg, FN_LR(MAX)(sv * k->eta_minus, k->step_min), sv));
    *s = t;
    if (V == FN_IRPROP_MINUS) {
        /* neg: no step, g' <- 0 (then g' = 0 also means "no step") */
        const fn_tv ge = FN_LR(SEL)(neg, zero, gv);
        const fn_tv cs = (fn_tv)((fn_tm)t | (~(fn_tm)ge & signbit));
        *w = FN_LR(SEL)(FN_LR(NZ)(ge), wv + cs, wv);
        *gp = ge;
        return;
    }
    const fn_tv cs = (fn_tv)((fn_tm)t | (~(fn_tm)gv & signbit));
    const fn_tv change = FN_LR(SEL)(FN_LR(NZ)(gv), cs, mzero);
    const fn_tv dwv = *dw;
    if (V == FN_RPROP_MINUS) {
        *w = wv + change;
        *dw = change;
        *gp = gv;
    } else if (V == FN_RPROP_PLUS) {
        *w = FN_LR(SEL)(neg, wv - dwv, wv + change);
        *dw = FN_LR(SEL)(neg, -dwv, change);
        *gp = FN_LR(SEL)(neg, zero, gv);
    } else {
        *w = FN_LR(SEL)(neg, FN_LR(SEL)(*rose, wv - dwv, wv), wv + change);
        *dw = FN_LR(SEL)(neg, zero, change);
        *gp = FN_LR(SEL)(neg, zero, gv);
    }
}

/* The three rules below compute lane by lane what their scalar forms compute,
 * operation for operation, except that the compiler may fuse a product and a
 * sum into one multiply-add where the CPU level has them (as in the lanes'
 * passes): a lane agrees with the scalar form to rounding. */

/* Batch backpropagation's step of one weight in every lane, in place (as
 * _backprop.pyx's momentum_update): dw = -rate g + momentum dw_prev,
 * w += dw, dw_prev = dw. */
FN_LR_ATTR FN_INLINE void
FN_LR_NAME(fn_lanes_backprop)(fn_tvr *w, const fn_tvr *g, fn_tvr *dw, double rate,
                              double momentum)
{
    const fn_tv d = -rate * *g + momentum * *dw;
    *w += d;
    *dw = d;
}

/* Quickprop's step of one weight in every lane, in place (fn_quickprop_weight's
 * branches as selects): weight w, epoch gradient g, previous slope dp and
 * step sp; shrink = mu / (1 + mu). The secant term is 0 where dp - d is 0. */
FN_LR_ATTR FN_INLINE void
FN_LR_NAME(fn_lanes_quickprop)(fn_tvr *w, const fn_tvr *g, fn_tvr *dp, fn_tvr *sp,
                               const fn_lanes_quickprop_params *q)
{
    const fn_tv zero = FN_TSPLAT(0.0);
    const fn_tv d = -(*g + q->decay * *w);
    const fn_tv s = *sp, dpv = *dp, den = dpv - d;
    const fn_tv secant = FN_LR(SEL)(FN_LR(EQ)(den, zero), zero, s * d / den);
    const fn_tv lin = q->eps * d, grow = q->mu * s, lim = q->shrink * dpv;
    const fn_tv up = FN_LR(SEL)(FN_LR(GT)(d, zero), lin, zero)
        + FN_LR(SEL)(FN_LR(GT)(d, lim), grow, secant);
    const fn_tv down = FN_LR(SEL)(FN_LR(LT)(d, zero), lin, zero)
        + FN_LR(SEL)(FN_LR(LT)(d, lim), grow, secant);
    const fn_tv plain = lin + q->momentum * s;
    const fn_tv step = FN_LR(SEL)(FN_LR(GT)(s, FN_TSPLAT(q->threshold)), up,
                                  FN_LR(SEL)(FN_LR(LT)(s, FN_TSPLAT(-q->threshold)), down,
                                             plain));
    *w += step;
    *sp = step;
    *dp = d;
}

/* Adam's step of one weight in every lane, in place (fn_adam_weight): moment
 * estimates m and v; c1 = 1 - beta1^t and c2 = 1 - beta2^t of update t. */
FN_LR_ATTR FN_INLINE void
FN_LR_NAME(fn_lanes_adam)(fn_tvr *w, const fn_tvr *g, fn_tvr *m, fn_tvr *v,
                          const fn_lanes_adam_params *a, double c1, double c2)
{
    const fn_tv gv = *g;
    const fn_tv mv = a->beta1 * *m + (1.0 - a->beta1) * gv;
    const fn_tv vv = a->beta2 * *v + (1.0 - a->beta2) * (gv * gv);
    const fn_tv q = vv / c2;
    fn_tvr r;
    for (int k = 0; k < FN_TL; k++) r[k] = sqrt(q[k]);
    *w -= a->rate * (mv / c1) / (r + a->eps);
    *m = mv;
    *v = vv;
}

/* Hamey's success check (1992) of one output y of target t in every lane:
 * clears in *ok the lanes where y is wrong (the threshold rule of
 * fn_output_correct: > 1 - r_c for target 1, < r_c for target 0, within analog
 * of other targets; analog < 0: never). NaN is never right. */
FN_LR_ATTR FN_INLINE void
FN_LR_NAME(fn_lanes_correct)(FN_LR(T) *ok, const fn_tvr *y, double t, double r_c, double analog)
{
    if (t == 1.0) *ok &= FN_LR(GT)(*y, FN_TSPLAT(1.0 - r_c));
    else if (t == 0.0) *ok &= FN_LR(LT)(*y, FN_TSPLAT(r_c));
    else *ok &= FN_LR(LE)(FN_TABS(*y - t), FN_TSPLAT(analog));
}

#undef FN_LR_CAT_
#undef FN_LR_CAT
#undef FN_LR
#undef FN_LR_NAME
#undef FN_LR_MASKS
#undef FN_LR_SUFFIX
#undef FN_LR_ATTR
