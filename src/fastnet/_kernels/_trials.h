/* Many trials of one topology at once: the trials lie side by side in the lanes
 * of a vector, so that one vector operation applies the same weight of FN_TL
 * trials. Timing studies train hundreds of tiny networks (XOR 2-2-1, encoders,
 * 4+2 Proben1 nets) whose layers fill no vector on their own; lane by lane the
 * arithmetic is that of one network, and no lane reads another.
 *
 * Layout. Trials are grouped FN_TL at a time. Every per-weight quantity of a
 * group (weights, gradient, RPROP's step, previous gradient and change) is a
 * (n_w, FN_TL) row-major block: the FN_TL values of weight c are contiguous. The
 * training inputs X (n, n_in) and targets T (n, n_out) are shared by all trials.
 * The layer table is the single-network one (_types.pxd: start, size, src_lo,
 * src_hi, w_off, b_off, act per layer), so W_j's row u, column s-src_lo is
 * weight w_off + u * (src_hi - src_lo) + (s - src_lo).
 *
 * Order of work: a group runs all epochs of the call before the next group
 * starts (its state stays in L1/L2), examples one at a time, each forward,
 * then backward into the gradient. Every sum runs in a fixed order written in
 * the code (no reassociation flags): one machine reproduces a run bit for bit.
 * The sums are ordered differently from the single-network kernels, so a trial
 * agrees with train_rprop to rounding, not bit for bit.
 *
 * Each lane carries a status: 0 trains; anything else is frozen (its state is
 * not changed; padding lanes and finished trials). A lane whose epoch error is
 * not finite gets status k (its k-th epoch of this call, weights left as they
 * were before that epoch's update); one that passes the success check after
 * its k-th epoch gets -k. A group whose lanes are all frozen stops early.
 *
 * Compiled per CPU level by GCC function multi-versioning, like _loops.h
 * (x86-64-v4 runs each 8-lane operation as one AVX-512 instruction, v3 as two
 * AVX2 ones, the baseline as four SSE2 ones).
 */
#ifndef FASTNET_TRIALS_H
#define FASTNET_TRIALS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && (__GNUC__ >= 12) && !defined(FASTNET_NO_CLONES)
#define FN_TRIALS_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), unused))
#elif defined(__GNUC__)
#define FN_TRIALS_CLONES __attribute__((unused))
#else
#define FN_TRIALS_CLONES
#endif

/* Examples per block: the block's activations and dE/dnet stay in cache
 * between the forward/backward passes and the gradient pass. */
#ifndef FN_TBLOCK
#define FN_TBLOCK 32
#endif

/* Lanes per group. */
#ifndef FN_TL
#define FN_TL 8
#endif

/* Alignment lowered to a double's: the work buffers come from NumPy, which
 * aligns to 16 bytes, and a fn_tv* dereference must not assume 64. */
typedef double fn_tv __attribute__((vector_size(FN_TL * sizeof(double)), aligned(8)));
typedef int64_t fn_tm __attribute__((vector_size(FN_TL * sizeof(double))));

/* Macros, not functions: a function returning a vector would have a different
 * ABI in each clone. Loads and stores go through memcpy (no alignment needed). */
#define FN_TLOAD(p) __extension__({ fn_tv v_; memcpy(&v_, (p), sizeof v_); v_; })
#define FN_TSTORE(p, v) __extension__({ fn_tv s_ = (v); memcpy((p), &s_, sizeof s_); })
#define FN_TSEL(m, a, b) ((fn_tv)(((m) & (fn_tm)(a)) | (~(m) & (fn_tm)(b))))
/* x - 0 is x exactly, -0.0 included (x + 0 would turn -0.0 into +0.0). */
#define FN_TSPLAT(x) ((x) - (fn_tv){0})

/* Layer table columns (as in _types.pxd). */
enum { FN_T_START, FN_T_SIZE, FN_T_SRC_LO, FN_T_SRC_HI, FN_T_W_OFF, FN_T_B_OFF, FN_T_ACT,
       FN_T_NCOLS };
/* Activation codes (as in _types.pxd). */
enum { FN_T_LINEAR, FN_T_PROBEN1, FN_T_LOGISTIC, FN_T_TANH };
/* RPROP variants (as in _rprop.pxd). */
enum { FN_T_RPROP_PLUS, FN_T_RPROP_MINUS, FN_T_IRPROP_MINUS, FN_T_IRPROP_PLUS };

/* y = f(s) and f = f'(s) for activation code `act` (as activate() in
 * _types.pxd, operation for operation). */
#define FN_TACT(act, s, y, f)                                                          \
    do {                                                                               \
        if ((act) == FN_T_PROBEN1) {                                                   \
            const fn_tv q_ = 1.0 / (1.0 + FN_TSEL((s) < 0.0, -(s), (s)));              \
            (y) = (s) * q_; (f) = q_ * q_;                                             \
        } else if ((act) == FN_T_LINEAR) {                                             \
            (y) = (s); (f) = FN_TSPLAT(1.0);                                           \
        } else {                                                                       \
            for (int k_ = 0; k_ < FN_TL; k_++) {                                       \
                const double t_ = (act) == FN_T_LOGISTIC                               \
                    ? 1.0 / (1.0 + exp(-(s)[k_])) : tanh((s)[k_]);                     \
                (y)[k_] = t_;                                                          \
                (f)[k_] = (act) == FN_T_LOGISTIC ? t_ * (1.0 - t_) : 1.0 - t_ * t_;    \
            }                                                                          \
        }                                                                              \
    } while (0)

/* Forward pass of rows [0, nb) of a block: A (nb rows of n_units vectors) holds
 * the inputs; fills the other units and, unless D is NULL, f'(net) into D.
 * Layer by layer, four rows at a time (four independent sums share each weight
 * load); every sum in source order, then + bias, so a row's result does not
 * depend on the rows beside it. */
#define FN_TRIALS_FORWARD_BLOCK(layers, n_layers, w, A, D, nb, n_units)              \
    do {                                                                               \
        for (ptrdiff_t j_ = 0; j_ < (n_layers); j_++) {                                \
            const ptrdiff_t *l_ = (layers) + j_ * FN_T_NCOLS;                          \
            const ptrdiff_t lo_ = l_[FN_T_SRC_LO], fan_ = l_[FN_T_SRC_HI] - lo_;       \
            const ptrdiff_t st_ = l_[FN_T_START], act_ = l_[FN_T_ACT];                 \
            const double *wj_ = (w) + l_[FN_T_W_OFF] * FN_TL;                          \
            const double *bj_ = (w) + l_[FN_T_B_OFF] * FN_TL;                          \
            for (ptrdiff_t u_ = 0; u_ < l_[FN_T_SIZE]; u_++) {                         \
                const double *wu_ = wj_ + u_ * fan_ * FN_TL;                           \
                const fn_tv b_ = FN_TLOAD(bj_ + u_ * FN_TL);                           \
                ptrdiff_t r_ = 0;                                                      \
                for (; r_ + 4 <= (nb); r_ += 4) {                                      \
                    const fn_tv *a0_ = (A) + r_ * (n_units) + lo_;                     \
                    const fn_tv *a1_ = a0_ + (n_units), *a2_ = a1_ + (n_units);        \
                    const fn_tv *a3_ = a2_ + (n_units);                                \
                    fn_tv s0_ = FN_TSPLAT(0.0), s1_ = s0_, s2_ = s0_, s3_ = s0_;       \
                    for (ptrdiff_t i_ = 0; i_ < fan_; i_++) {                          \
                        const fn_tv wv_ = FN_TLOAD(wu_ + i_ * FN_TL);                  \
                        s0_ += wv_ * a0_[i_]; s1_ += wv_ * a1_[i_];                    \
                        s2_ += wv_ * a2_[i_]; s3_ += wv_ * a3_[i_];                    \
                    }                                                                  \
                    s0_ += b_; s1_ += b_; s2_ += b_; s3_ += b_;                        \
                    fn_tv y_, f_;                                                      \
                    FN_TACT(act_, s0_, y_, f_);                                        \
                    (A)[r_ * (n_units) + st_ + u_] = y_; (D)[r_ * (n_units) + st_ + u_] = f_; \
                    FN_TACT(act_, s1_, y_, f_);                                        \
                    (A)[(r_ + 1) * (n_units) + st_ + u_] = y_;                         \
                    (D)[(r_ + 1) * (n_units) + st_ + u_] = f_;                         \
                    FN_TACT(act_, s2_, y_, f_);                                        \
                    (A)[(r_ + 2) * (n_units) + st_ + u_] = y_;                         \
                    (D)[(r_ + 2) * (n_units) + st_ + u_] = f_;                         \
                    FN_TACT(act_, s3_, y_, f_);                                        \
                    (A)[(r_ + 3) * (n_units) + st_ + u_] = y_;                         \
                    (D)[(r_ + 3) * (n_units) + st_ + u_] = f_;                         \
                }                                                                      \
                for (; r_ < (nb); r_++) {                                              \
                    const fn_tv *a0_ = (A) + r_ * (n_units) + lo_;                     \
                    fn_tv s0_ = FN_TSPLAT(0.0);                                        \
                    for (ptrdiff_t i_ = 0; i_ < fan_; i_++)                            \
                        s0_ += FN_TLOAD(wu_ + i_ * FN_TL) * a0_[i_];                   \
                    s0_ += b_;                                                         \
                    fn_tv y_, f_;                                                      \
                    FN_TACT(act_, s0_, y_, f_);                                        \
                    (A)[r_ * (n_units) + st_ + u_] = y_;                               \
                    if ((D) != NULL) (D)[r_ * (n_units) + st_ + u_] = f_;              \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    } while (0)

/* Forward pass of one example (the block pass of one row): a holds its inputs
 * broadcast in [0, n_in); fills the other units and, unless d is NULL, f'(net). */
#define FN_TRIALS_FORWARD(layers, n_layers, w, a, d)                                   \
    FN_TRIALS_FORWARD_BLOCK(layers, n_layers, w, a, d, 1, 0)

/* Inputs of example p broadcast into a[0 .. n_in). */
#define FN_TRIALS_INPUTS(a, X, p, n_in)                                                \
    do {                                                                               \
        for (ptrdiff_t i_ = 0; i_ < (n_in); i_++)                                      \
            (a)[i_] = FN_TSPLAT((X)[(p) * (n_in) + i_]);                               \
    } while (0)

/* Lanes of a group that still train: all-ones where status == 0. */
#define FN_TRIALS_ACTIVE(status)                                                       \
    __extension__({ fn_tm m_;                                                          \
                    for (int k_ = 0; k_ < FN_TL; k_++) { m_[k_] = (status)[k_] == 0 ? -1 : 0; } \
                    m_; })

/* Sum of squared errors of each trial of each group over a data set (the
 * forward pass alone): sse[g * FN_TL + k]. work: n_units vectors. */
FN_TRIALS_CLONES static void
fn_trials_sse(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
              ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const double *X,
              const double *T, ptrdiff_t n_out, const double *w, double *work,
              double *sse)
{
    fn_tv *a = (fn_tv *)work;
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_T_NCOLS + FN_T_START];
    for (ptrdiff_t g = 0; g < n_groups; g++) {
        const double *wg = w + g * n_w * FN_TL;
        fn_tv e = FN_TSPLAT(0.0);
        for (ptrdiff_t p = 0; p < n; p++) {
            FN_TRIALS_INPUTS(a, X, p, n_in);
            FN_TRIALS_FORWARD(layers, n_layers, wg, a, (fn_tv *)NULL);
            for (ptrdiff_t k = 0; k < n_out; k++) {
                const fn_tv r = a[out0 + k] - T[p * n_out + k];
                e += r * r;
            }
        }
        FN_TSTORE(sse + g * FN_TL, e);
    }
}

/* Outputs of every trial on X: Y[((g * n + p) * n_out + k) * FN_TL + lane]
 * (the one-row forward pass). work: n_units vectors. */
FN_TRIALS_CLONES static void
fn_trials_outputs(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                  ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                  ptrdiff_t n_out, const double *w, double *work, double *Y)
{
    fn_tv *a = (fn_tv *)work;
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_T_NCOLS + FN_T_START];
    for (ptrdiff_t g = 0; g < n_groups; g++) {
        const double *wg = w + g * n_w * FN_TL;
        for (ptrdiff_t p = 0; p < n; p++) {
            FN_TRIALS_INPUTS(a, X, p, n_in);
            FN_TRIALS_FORWARD(layers, n_layers, wg, a, (fn_tv *)NULL);
            for (ptrdiff_t k = 0; k < n_out; k++)
                FN_TSTORE(Y + ((g * n + p) * n_out + k) * FN_TL, a[out0 + k]);
        }
    }
}

/* Hamey's success check (fastnet.measures.threshold_correct) for the lanes of
 * one group at its current weights: all-ones in the lanes whose every output of
 * every example is right (> 1 - r_c for target 1, < r_c for target 0, within
 * analog of other targets; analog < 0: never right). NaN is never right. */
#define FN_TRIALS_CORRECT(result, layers, n_layers, n_in, n, X, T, n_out, wg, a, r_c, analog) \
    do {                                                                               \
        const ptrdiff_t o_ = (layers)[((n_layers) - 1) * FN_T_NCOLS + FN_T_START];     \
        fn_tm ok_ = (fn_tm){0} - 1;                                                    \
        for (ptrdiff_t p_ = 0; p_ < (n); p_++) {                                       \
            FN_TRIALS_INPUTS(a, X, p_, n_in);                                          \
            FN_TRIALS_FORWARD(layers, n_layers, wg, a, (fn_tv *)NULL);                 \
            for (ptrdiff_t k_ = 0; k_ < (n_out); k_++) {                               \
                const fn_tv y_ = (a)[o_ + k_];                                         \
                const double t_ = (T)[p_ * (n_out) + k_];                              \
                if (t_ == 1.0) ok_ &= (y_ > 1.0 - (r_c));                              \
                else if (t_ == 0.0) ok_ &= (y_ < (r_c));                               \
                else {                                                                 \
                    const fn_tv r_ = y_ - t_;                                          \
                    ok_ &= (FN_TSEL(r_ < 0.0, -r_, r_) <= (analog));                   \
                }                                                                      \
            }                                                                          \
        }                                                                              \
        (result) = ok_;                                                                \
    } while (0)

/* One RPROP step of the FN_TL lanes of weight c, lane by lane as rprop_update in
 * _rprop.pyx (variant V a constant, so each variant compiles to its own
 * loop). With BLEND, lanes outside `active` keep their state. */
#define FN_TRIALS_UPDATE(V, BLEND)                                                     \
    for (ptrdiff_t c = 0; c < n_w; c++) {                                              \
        double *pw = wg + c * FN_TL, *pg = gg + c * FN_TL, *pgp = gp + c * FN_TL;      \
        double *pdw = dwp + c * FN_TL, *pst = st + c * FN_TL;                          \
        const fn_tv gv = FN_TLOAD(pg), gpv = FN_TLOAD(pgp), sv = FN_TLOAD(pst);         \
        const fn_tv wv = FN_TLOAD(pw);                                                 \
        const fn_tv dwv = (V) == FN_T_IRPROP_MINUS ? zero : FN_TLOAD(pdw);             \
        const fn_tv prod = gpv * gv;                                                   \
        const fn_tm pos = prod > 0.0, neg = prod < 0.0;                                \
        fn_tv grown = sv * eta_plus, shrunk = sv * eta_minus;                          \
        grown = FN_TSEL(grown < smax, grown, smax);                                    \
        shrunk = FN_TSEL(shrunk > smin, shrunk, smin);                                 \
        const fn_tv s_new = FN_TSEL(pos, grown, FN_TSEL(neg, shrunk, sv));             \
        /* -sign(g) * step: the change of a non-negative product (and of rprop-) */    \
        const fn_tv dw = FN_TSEL(gv > 0.0, -s_new, FN_TSEL(gv < 0.0, s_new, -zero * s_new)); \
        fn_tv w_new = wv + dw, dw_new = dw, gp_new = gv;                               \
        if ((V) == FN_T_RPROP_PLUS) {                                                  \
            w_new = FN_TSEL(neg, wv - dwv, w_new);                                     \
            dw_new = FN_TSEL(neg, -dwv, dw_new);                                       \
            gp_new = FN_TSEL(neg, zero, gp_new);                                       \
        } else if ((V) == FN_T_IRPROP_MINUS) {                                         \
            w_new = FN_TSEL(neg, wv, w_new);                                           \
            dw_new = FN_TSEL(neg, zero, dw_new);                                       \
            gp_new = FN_TSEL(neg, zero, gp_new);                                       \
        } else if ((V) == FN_T_IRPROP_PLUS) {                                          \
            w_new = FN_TSEL(neg, FN_TSEL(rose, wv - dwv, wv), w_new);                  \
            dw_new = FN_TSEL(neg, zero, dw_new);                                       \
            gp_new = FN_TSEL(neg, zero, gp_new);                                       \
        }                                                                              \
        if (BLEND) {                                                                   \
            w_new = FN_TSEL(active, w_new, wv); dw_new = FN_TSEL(active, dw_new, dwv); \
            gp_new = FN_TSEL(active, gp_new, gpv); s_new_b = FN_TSEL(active, s_new, sv); \
        } else {                                                                       \
            s_new_b = s_new;                                                           \
        }                                                                              \
        FN_TSTORE(pw, w_new); FN_TSTORE(pgp, gp_new); FN_TSTORE(pst, s_new_b);         \
        if ((V) != FN_T_IRPROP_MINUS || (BLEND)) FN_TSTORE(pdw, dw_new);               \
    }

/* Run n_epochs epochs of epoch-batched RPROP for every group (see the top).
 *
 * w, g, g_prev, dw_prev, step: (n_groups, n_w, FN_TL); last_error, status:
 * (n_groups, FN_TL); sse_out: (n_groups, n_epochs, FN_TL), the training SSE of
 * each epoch (its forward pass, before its update; meaningful for the epochs a
 * lane trained); work: 3 * n_units vectors. check_every > 0: the success check
 * after every check_every-th epoch of the call. */
FN_TRIALS_CLONES static void
fn_trials_rprop(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                ptrdiff_t n_in, ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n,
                const double *X, const double *T, ptrdiff_t n_out,
                double *w, double *g, double *g_prev, double *dw_prev, double *step,
                double *last_error, int64_t *status, double *work,
                int variant, double eta_plus, double eta_minus, double step_min,
                double step_max, ptrdiff_t n_epochs, double *sse_out,
                ptrdiff_t check_every, double r_c, double analog)
{
    /* work: FN_TBLOCK rows each of activations, f'(net) (which become dE/dnet)
     * and dE/da. */
    fn_tv *A = (fn_tv *)work;
    fn_tv *D = A + FN_TBLOCK * n_units;
    fn_tv *E = D + FN_TBLOCK * n_units;
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_T_NCOLS + FN_T_START];
    const fn_tv zero = FN_TSPLAT(0.0);
    const fn_tv smax = FN_TSPLAT(step_max), smin = FN_TSPLAT(step_min);
    const fn_tm none = (fn_tm){0};
    for (ptrdiff_t grp = 0; grp < n_groups; grp++) {
        double *wg = w + grp * n_w * FN_TL, *gg = g + grp * n_w * FN_TL;
        double *gp = g_prev + grp * n_w * FN_TL, *dwp = dw_prev + grp * n_w * FN_TL;
        double *st = step + grp * n_w * FN_TL;
        int64_t *sg = status + grp * FN_TL;
        double *sse_g = sse_out + grp * n_epochs * FN_TL;
        fn_tm lane_status;
        memcpy(&lane_status, sg, sizeof lane_status);
        for (ptrdiff_t ep = 0; ep < n_epochs; ep++) {
            fn_tm active = lane_status == none;
            int all = 1, any = 0;
            for (int k = 0; k < FN_TL; k++) { all &= active[k] != 0; any |= active[k] != 0; }
            if (!any) break;
            memset(gg, 0, (size_t)n_w * FN_TL * sizeof(double));
            fn_tv sse = zero;
            for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
                const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
                for (ptrdiff_t r = 0; r < nb; r++)
                    FN_TRIALS_INPUTS(A + r * n_units, X, p0 + r, n_in);
                FN_TRIALS_FORWARD_BLOCK(layers, n_layers, wg, A, D, nb, n_units);
                for (ptrdiff_t r = 0; r < nb; r++) {
                    fn_tv *er = E + r * n_units;
                    for (ptrdiff_t k = 0; k < n_out; k++) {
                        const fn_tv res = A[r * n_units + out0 + k] - T[(p0 + r) * n_out + k];
                        sse += res * res;
                        er[out0 + k] = 2.0 * res;   /* dE/dy of E = sum (y - t)^2 */
                    }
                    for (ptrdiff_t s = n_in; s < out0; s++) er[s] = zero;
                }
                /* Layers in reverse: when layer j is reached every later layer has
                 * added its share to dE/da of layer j's units. D becomes dE/dnet,
                 * which the block's gradient reads below. */
                for (ptrdiff_t j = n_layers - 1; j >= 0; j--) {
                    const ptrdiff_t *l = layers + j * FN_T_NCOLS;
                    const ptrdiff_t lo = l[FN_T_SRC_LO], fan = l[FN_T_SRC_HI] - lo;
                    const ptrdiff_t start = l[FN_T_START], size = l[FN_T_SIZE];
                    const ptrdiff_t back_lo = lo > n_in ? lo : n_in;  /* no dE/da for inputs */
                    const double *wj = wg + l[FN_T_W_OFF] * FN_TL;
                    for (ptrdiff_t r = 0; r < nb; r++)
                        for (ptrdiff_t u = 0; u < size; u++)
                            D[r * n_units + start + u] *= E[r * n_units + start + u];
                    for (ptrdiff_t s = back_lo; s < lo + fan; s++) {
                        const double *ws = wj + (s - lo) * FN_TL;
                        ptrdiff_t r = 0;
                        for (; r + 4 <= nb; r += 4) {
                            const fn_tv *d0 = D + r * n_units + start, *d1 = d0 + n_units;
                            const fn_tv *d2 = d1 + n_units, *d3 = d2 + n_units;
                            fn_tv c0 = E[r * n_units + s], c1 = E[(r + 1) * n_units + s];
                            fn_tv c2 = E[(r + 2) * n_units + s], c3 = E[(r + 3) * n_units + s];
                            for (ptrdiff_t u = 0; u < size; u++) {
                                const fn_tv wv = FN_TLOAD(ws + u * fan * FN_TL);
                                c0 += d0[u] * wv; c1 += d1[u] * wv; c2 += d2[u] * wv; c3 += d3[u] * wv;
                            }
                            E[r * n_units + s] = c0; E[(r + 1) * n_units + s] = c1;
                            E[(r + 2) * n_units + s] = c2; E[(r + 3) * n_units + s] = c3;
                        }
                        for (; r < nb; r++) {
                            const fn_tv *d0 = D + r * n_units + start;
                            fn_tv c0 = E[r * n_units + s];
                            for (ptrdiff_t u = 0; u < size; u++)
                                c0 += d0[u] * FN_TLOAD(ws + u * fan * FN_TL);
                            E[r * n_units + s] = c0;
                        }
                    }
                }
                /* dE/dw of the block: one pass per weight over the block's rows. */
                for (ptrdiff_t j = 0; j < n_layers; j++) {
                    const ptrdiff_t *l = layers + j * FN_T_NCOLS;
                    const ptrdiff_t lo = l[FN_T_SRC_LO], fan = l[FN_T_SRC_HI] - lo;
                    const ptrdiff_t start = l[FN_T_START], size = l[FN_T_SIZE];
                    double *gw = gg + l[FN_T_W_OFF] * FN_TL, *gb = gg + l[FN_T_B_OFF] * FN_TL;
                    for (ptrdiff_t u = 0; u < size; u++) {
                        double *gu = gw + u * fan * FN_TL;
                        fn_tv acc = FN_TLOAD(gb + u * FN_TL);
                        for (ptrdiff_t r = 0; r < nb; r++) acc += D[r * n_units + start + u];
                        FN_TSTORE(gb + u * FN_TL, acc);
                        ptrdiff_t i = 0;
                        for (; i + 4 <= fan; i += 4) {
                            fn_tv c0 = FN_TLOAD(gu + i * FN_TL), c1 = FN_TLOAD(gu + (i + 1) * FN_TL);
                            fn_tv c2 = FN_TLOAD(gu + (i + 2) * FN_TL), c3 = FN_TLOAD(gu + (i + 3) * FN_TL);
                            for (ptrdiff_t r = 0; r < nb; r++) {
                                const fn_tv dl = D[r * n_units + start + u];
                                const fn_tv *ar = A + r * n_units + lo + i;
                                c0 += dl * ar[0]; c1 += dl * ar[1]; c2 += dl * ar[2]; c3 += dl * ar[3];
                            }
                            FN_TSTORE(gu + i * FN_TL, c0); FN_TSTORE(gu + (i + 1) * FN_TL, c1);
                            FN_TSTORE(gu + (i + 2) * FN_TL, c2); FN_TSTORE(gu + (i + 3) * FN_TL, c3);
                        }
                        for (; i < fan; i++) {
                            fn_tv c0 = FN_TLOAD(gu + i * FN_TL);
                            for (ptrdiff_t r = 0; r < nb; r++)
                                c0 += D[r * n_units + start + u] * A[r * n_units + lo + i];
                            FN_TSTORE(gu + i * FN_TL, c0);
                        }
                    }
                }
            }
            FN_TSTORE(sse_g + ep * FN_TL, sse);
            /* Lanes whose error is not finite stop here, un-updated. */
            const fn_tm bad = active & ~((sse == sse) & (sse - sse == 0.0));
            for (int k = 0; k < FN_TL; k++) all &= bad[k] == 0;
            lane_status = (bad & ((fn_tm){0} + (ep + 1))) | (~bad & lane_status);
            active &= ~bad;
            const fn_tv last = FN_TLOAD(last_error + grp * FN_TL);
            const fn_tm rose = sse > last;
            FN_TSTORE(last_error + grp * FN_TL, FN_TSEL(active, sse, last));
            fn_tv s_new_b;
            (void)rose;
            if (all) {
                switch (variant) {
                case FN_T_RPROP_PLUS: FN_TRIALS_UPDATE(FN_T_RPROP_PLUS, 0) break;
                case FN_T_RPROP_MINUS: FN_TRIALS_UPDATE(FN_T_RPROP_MINUS, 0) break;
                case FN_T_IRPROP_MINUS: FN_TRIALS_UPDATE(FN_T_IRPROP_MINUS, 0) break;
                default: FN_TRIALS_UPDATE(FN_T_IRPROP_PLUS, 0) break;
                }
            } else {
                switch (variant) {
                case FN_T_RPROP_PLUS: FN_TRIALS_UPDATE(FN_T_RPROP_PLUS, 1) break;
                case FN_T_RPROP_MINUS: FN_TRIALS_UPDATE(FN_T_RPROP_MINUS, 1) break;
                case FN_T_IRPROP_MINUS: FN_TRIALS_UPDATE(FN_T_IRPROP_MINUS, 1) break;
                default: FN_TRIALS_UPDATE(FN_T_IRPROP_PLUS, 1) break;
                }
            }
            if (check_every > 0 && (ep + 1) % check_every == 0) {
                fn_tm ok;
                FN_TRIALS_CORRECT(ok, layers, n_layers, n_in, n, X, T, n_out, wg, A, r_c, analog);
                const fn_tm done = active & ok;
                lane_status = (done & ((fn_tm){0} - (ep + 1))) | (~done & lane_status);
            }
        }
        memcpy(sg, &lane_status, sizeof lane_status);
    }
}

#endif
