/* RPROP's rule and Hamey's success check, lane forms: FN_TL trials of one
 * weight (one output) at once, lane by lane what fn_rprop_weight and
 * fn_output_correct of _rule.h do for one.
 *
 * Not an ordinary header: _lanes.h includes it once per mask representation
 * (as _simd.h does _tiles.h), after defining the parameters below, so it has
 * no include guard and undefines every parameter at its end.
 *
 * Parameters:
 *   FN_LR_MASKS   the mask operations: FN_GM (generic vectors) or FN_KM
 *                 (AVX-512 mask registers); see _lanes.h for FN_<set>_<op>.
 *   FN_LR_SUFFIX  the functions' names end in it: fn_lanes_rprop_<suffix>,
 *                 fn_lanes_correct_<suffix>.
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
