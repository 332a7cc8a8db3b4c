/* The passes of a block of examples through a group of trials in the lanes:
 * forward (activations, f'(net)), backward (dE/dnet), gradient (dE/dw), each
 * layer's product on register tiles. Layout and types: _lanes.h.
 */
#ifndef FASTNET_LANES_PASS_H
#define FASTNET_LANES_PASS_H

#include "_lanes.h"

/* Register tiles. The three products of a layer run on tiles of up to
 * FN_T_TILE x FN_T_TILE vectors held in registers: forward, rows x units (a sum
 * over the sources); backward, rows x sources (over the units); gradient,
 * units x sources (over the rows). Each step of a tile's sum loads 2 * 4 vectors
 * for 16 FMAs, where one row or one unit at a time loads one vector per FMA.
 * Every sum still runs in the order of the one-at-a-time loops (sources,
 * units, rows ascending), so results do not depend on the tiling. The tile
 * sizes are constants (always-inline helpers, a switch on the remainder). */
#define FN_T_TILE 4
#define FN_T_UNROLL _Pragma("GCC unroll 16")

/* acc[r][u] = sum_i w_u[i] * a_r[i] (i ascending) for rows a + r * as and unit
 * weight rows wu + u * ws (values). */
FN_INLINE void
fn_trials_dot_tile(const int RT, const int UT, const fn_tv *a, ptrdiff_t as, const fn_real *wu,
                   ptrdiff_t ws, ptrdiff_t fan, fn_tvr acc[FN_T_TILE][FN_T_TILE])
{
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int u = 0; u < UT; u++) acc[r][u] = FN_TSPLAT(0.0);
    for (ptrdiff_t i = 0; i < fan; i++) {
        fn_tvr av[FN_T_TILE], wv[FN_T_TILE];
        FN_T_UNROLL for (int r = 0; r < RT; r++) av[r] = a[r * as + i];
        FN_T_UNROLL for (int u = 0; u < UT; u++) wv[u] = FN_TLOAD(wu + u * ws + i * FN_TL);
        FN_T_UNROLL for (int r = 0; r < RT; r++)
            FN_T_UNROLL for (int u = 0; u < UT; u++) acc[r][u] += wv[u] * av[r];
    }
}

/* Forward tile: rows r0.. (RT) x units u0.. (UT) of a layer: net input (the
 * sum, + bias) into A; the layer's activation follows over the whole layer
 * (fn_trials_activate_layer). */
FN_INLINE void
fn_trials_forward_tile(const int RT, const int UT, fn_tv *A, ptrdiff_t n_units, ptrdiff_t r0,
                       ptrdiff_t u0, ptrdiff_t lo, ptrdiff_t fan, ptrdiff_t st, const fn_real *wj,
                       const fn_real *bj)
{
    fn_tvr acc[FN_T_TILE][FN_T_TILE];
    fn_trials_dot_tile(RT, UT, A + r0 * n_units + lo, n_units, wj + u0 * fan * FN_TL,
                       fan * FN_TL, fan, acc);
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int u = 0; u < UT; u++)
            A[(r0 + r) * n_units + st + u0 + u] = acc[r][u] + FN_TLOAD(bj + (u0 + u) * FN_TL);
}

/* Activation ACT (a constant) of rows [0, nb) x units [st, st + size) of A in
 * place: A = f(net) and, unless D is NULL, D = f'(net). */
FN_INLINE void
fn_trials_activate_units(const int VB, const int ACT, fn_tv *A, fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units,
                         ptrdiff_t st, ptrdiff_t size)
{
    for (ptrdiff_t r = 0; r < nb; r++)
        for (ptrdiff_t u = st; u < st + size; u++) {
            const fn_tvr s = A[r * n_units + u];
            fn_tvr y, f;
            fn_lanes_activate(VB, ACT, &s, &y, &f);
            A[r * n_units + u] = y;
            if (D != NULL) D[r * n_units + u] = f;
        }
}

/* The same for activation code act: one loop per activation. Applied to the
 * whole layer after its products rather than inside each tile: inlined in
 * the nine tile shapes, every activation's code would be compiled some fifty
 * times per pass and CPU level (most of this module's build time), for no
 * measurable speed. */
FN_INLINE void
fn_trials_activate_layer(const int VB, ptrdiff_t act, fn_tv *A, fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units,
                         ptrdiff_t st, ptrdiff_t size)
{
    /* (each case with its activation a constant: its own loop) */
#define FN_ACTIVATE_CASE(code) \
    case code: fn_trials_activate_units(VB, code, A, D, nb, n_units, st, size); break;
    switch (act) {
    FN_ACTIVATE_CASE(FN_ACT_PROBEN1)
    FN_ACTIVATE_CASE(FN_ACT_LOGISTIC)
    FN_ACTIVATE_CASE(FN_ACT_TANH)
    FN_ACTIVATE_CASE(FN_ACT_RELU)
    default:                                /* (as fn_activate_8: linear) */
        fn_trials_activate_units(VB, FN_ACT_LINEAR, A, D, nb, n_units, st, size);
        break;
    }
#undef FN_ACTIVATE_CASE
}

/* Calls TILE(RT, UT) for tiles covering rows [0, nb) x units [0, size): RT and
 * UT are 4, 2 or 1 (whatever is left, at most the constant TMAX of the caller),
 * r0 and u0 each tile's first row and unit. */
#define FN_T_TILES(nb, size, r0, u0, TILE)                                             \
    for (ptrdiff_t u0 = 0; u0 < (size);) {                                             \
        const int ut_ = (size) - u0 >= 4 && TMAX >= 4 ? 4 : (size) - u0 >= 2 && TMAX >= 2 ? 2 : 1; \
        for (ptrdiff_t r0 = 0; r0 < (nb);) {                                           \
            const int rt_ = (nb) - r0 >= 4 && TMAX >= 4 ? 4 : (nb) - r0 >= 2 && TMAX >= 2 ? 2 : 1; \
            switch (rt_ * 8 + ut_) {                                                   \
            case 4 * 8 + 4: TILE(4, 4); break;                                         \
            case 4 * 8 + 2: TILE(4, 2); break;                                         \
            case 4 * 8 + 1: TILE(4, 1); break;                                         \
            case 2 * 8 + 4: TILE(2, 4); break;                                         \
            case 2 * 8 + 2: TILE(2, 2); break;                                         \
            case 2 * 8 + 1: TILE(2, 1); break;                                         \
            case 1 * 8 + 4: TILE(1, 4); break;                                         \
            case 1 * 8 + 2: TILE(1, 2); break;                                         \
            default: TILE(1, 1); break;                                                \
            }                                                                          \
            r0 += rt_;                                                                 \
        }                                                                              \
        u0 += ut_;                                                                     \
    }

/* Forward pass of rows [0, nb) of a block: A (nb rows of n_units vectors) holds
 * the inputs; fills the other units and, unless D is NULL, f'(net) into D.
 * Every sum in source order, then + bias. */
FN_INLINE void
fn_trials_forward_rows(const int TMAX, const int VB, const ptrdiff_t *layers, ptrdiff_t n_layers, const fn_real *w, fn_tv *A,
                       fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units)
{
    for (ptrdiff_t j = 0; j < n_layers; j++) {
        const ptrdiff_t *l = layers + j * FN_L_NCOLS;
        const ptrdiff_t lo = l[FN_L_SRC_LO], fan = l[FN_L_SRC_HI] - lo;
        const ptrdiff_t st = l[FN_L_START], act = l[FN_L_ACT], size = l[FN_L_SIZE];
        const fn_real *wj = w + l[FN_L_W_OFF] * FN_TL, *bj = w + l[FN_L_B_OFF] * FN_TL;
#define FN_T_FWD(RT, UT) fn_trials_forward_tile(RT, UT, A, n_units, r0, u0, lo, fan, st, wj, bj)
        FN_T_TILES(nb, size, r0, u0, FN_T_FWD)
#undef FN_T_FWD
        fn_trials_activate_layer(VB, act, A, D, nb, n_units, st, size);
    }
}

/* Backward tile: rows r0.. (RT) x sources s0.. (ST) of layer j: dE/da of the
 * sources += sum over the layer's units u (ascending) of dE/dnet_u w_us. FUSE
 * (a constant): layer j is the sources' last contributor (they are the layer
 * before it), so their dE/da is complete: D (f'(net) there) becomes dE/dnet =
 * f'(net) dE/da at once, and E is not written. */
FN_INLINE void
fn_trials_backward_tile(const int FUSE, const int RT, const int ST, fn_tv *E, fn_tv *D,
                        ptrdiff_t n_units, ptrdiff_t r0, ptrdiff_t s0, ptrdiff_t lo,
                        ptrdiff_t fan, ptrdiff_t start, ptrdiff_t size, const fn_real *wj)
{
    fn_tvr acc[FN_T_TILE][FN_T_TILE];
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int c = 0; c < ST; c++) acc[r][c] = E[(r0 + r) * n_units + s0 + c];
    const fn_tv *d = D + r0 * n_units + start;
    const fn_real *ws = wj + (s0 - lo) * FN_TL;
    for (ptrdiff_t u = 0; u < size; u++) {
        fn_tvr dv[FN_T_TILE], wv[FN_T_TILE];
        FN_T_UNROLL for (int r = 0; r < RT; r++) dv[r] = d[r * n_units + u];
        FN_T_UNROLL for (int c = 0; c < ST; c++) wv[c] = FN_TLOAD(ws + (u * fan + c) * FN_TL);
        FN_T_UNROLL for (int r = 0; r < RT; r++)
            FN_T_UNROLL for (int c = 0; c < ST; c++) acc[r][c] += dv[r] * wv[c];
    }
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int c = 0; c < ST; c++) {
            const ptrdiff_t at = (r0 + r) * n_units + s0 + c;
            if (FUSE) D[at] *= acc[r][c];
            else E[at] = acc[r][c];
        }
}

/* Gradient tile: units u0.. (UT) x sources i0.. (IT) of layer j: dE/dw +=
 * sum over the block's rows (ascending) of dE/dnet_u a_i; FIRST (the epoch's
 * first block): dE/dw = that sum, gw not read (it starts from +0 as a
 * cleared gw would: the same sums). */
FN_INLINE void
fn_trials_gradient_tile(const int FIRST, const int UT, const int IT, fn_real *gw, const fn_tv *A, const fn_tv *D,
                        ptrdiff_t n_units, ptrdiff_t nb, ptrdiff_t u0, ptrdiff_t i0,
                        ptrdiff_t lo, ptrdiff_t fan, ptrdiff_t start)
{
    fn_tvr acc[FN_T_TILE][FN_T_TILE];
    FN_T_UNROLL for (int u = 0; u < UT; u++)
        FN_T_UNROLL for (int i = 0; i < IT; i++)
            acc[u][i] = FIRST ? FN_TSPLAT(0.0) : FN_TLOAD(gw + ((u0 + u) * fan + i0 + i) * FN_TL);
    for (ptrdiff_t r = 0; r < nb; r++) {
        fn_tvr dv[FN_T_TILE], av[FN_T_TILE];
        FN_T_UNROLL for (int u = 0; u < UT; u++) dv[u] = D[r * n_units + start + u0 + u];
        FN_T_UNROLL for (int i = 0; i < IT; i++) av[i] = A[r * n_units + lo + i0 + i];
        FN_T_UNROLL for (int u = 0; u < UT; u++)
            FN_T_UNROLL for (int i = 0; i < IT; i++) acc[u][i] += dv[u] * av[i];
    }
    FN_T_UNROLL for (int u = 0; u < UT; u++)
        FN_T_UNROLL for (int i = 0; i < IT; i++)
            FN_TSTORE(gw + ((u0 + u) * fan + i0 + i) * FN_TL, acc[u][i]);
}

/* Backward pass of a block whose forward pass left f'(net) in D and whose
 * caller made the output units' D dE/dnet (f'(net) dE/dy): D becomes dE/dnet
 * throughout. E: dE/da, zero for the hidden units. Layers in reverse: when
 * layer j is reached every later layer has added its share to dE/da of layer
 * j's units, the layer just after it last, whose tiles then make their D
 * dE/dnet. That layer reads all of layer j as its last sources (every MLP's
 * layers do; _trials.pyx's gate refuses other tables). */
FN_INLINE void
fn_trials_backward_rows(const int TMAX, const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        const fn_real *w, fn_tv *D, fn_tv *E, ptrdiff_t nb, ptrdiff_t n_units)
{
    for (ptrdiff_t j = n_layers - 1; j > 0; j--) {
        const ptrdiff_t *l = layers + j * FN_L_NCOLS;
        const ptrdiff_t lo = l[FN_L_SRC_LO], fan = l[FN_L_SRC_HI] - lo;
        const ptrdiff_t start = l[FN_L_START], size = l[FN_L_SIZE];
        const ptrdiff_t back_lo = lo > n_in ? lo : n_in;   /* no dE/da for inputs */
        const ptrdiff_t prev = (l - FN_L_NCOLS)[FN_L_START];  /* layer j - 1's first unit */
        const fn_real *wj = w + l[FN_L_W_OFF] * FN_TL;
        /* earlier layers' units (shortcuts): their dE/da grows in E */
#define FN_T_BWD(RT, ST) fn_trials_backward_tile(0, RT, ST, E, D, n_units, r0, back_lo + c0, lo, \
                                                 fan, start, size, wj)
        FN_T_TILES(nb, prev - back_lo, r0, c0, FN_T_BWD)
#undef FN_T_BWD
        /* layer j - 1's units: complete here, into D */
#define FN_T_BWD(RT, ST) fn_trials_backward_tile(1, RT, ST, E, D, n_units, r0, prev + c0, lo, \
                                                 fan, start, size, wj)
        FN_T_TILES(nb, lo + fan - prev, r0, c0, FN_T_BWD)
#undef FN_T_BWD
    }
}

/* dE/dw of a block (D = dE/dnet, A the activations) added into gw; FIRST (a
 * constant; the epoch's first block): stored, gw not read. */
FN_INLINE void
fn_trials_gradient_rows(const int FIRST, const int TMAX, const ptrdiff_t *layers,
                        ptrdiff_t n_layers, fn_real *gw, const fn_tv *A, const fn_tv *D,
                        ptrdiff_t nb, ptrdiff_t n_units)
{
    for (ptrdiff_t j = 0; j < n_layers; j++) {
        const ptrdiff_t *l = layers + j * FN_L_NCOLS;
        const ptrdiff_t lo = l[FN_L_SRC_LO], fan = l[FN_L_SRC_HI] - lo;
        const ptrdiff_t start = l[FN_L_START], size = l[FN_L_SIZE];
        fn_real *gj = gw + l[FN_L_W_OFF] * FN_TL, *gb = gw + l[FN_L_B_OFF] * FN_TL;
        for (ptrdiff_t u = 0; u < size; u++) {
            fn_tv acc = FIRST ? FN_TSPLAT(0.0) : FN_TLOAD(gb + u * FN_TL);
            for (ptrdiff_t r = 0; r < nb; r++) acc += D[r * n_units + start + u];
            FN_TSTORE(gb + u * FN_TL, acc);
        }
        /* (tiles of units x sources: the "rows" of FN_T_TILES are the units) */
#define FN_T_GRAD(UT, IT) fn_trials_gradient_tile(FIRST, UT, IT, gj, A, D, n_units, nb, u0, i0, \
                                                  lo, fan, start)
        FN_T_TILES(size, fan, u0, i0, FN_T_GRAD)
#undef FN_T_GRAD
    }
}

/* Inputs of example p broadcast into a[0 .. n_in). */
FN_INLINE void
fn_trials_inputs(fn_tv *a, const fn_real *X, ptrdiff_t p, ptrdiff_t n_in)
{
    for (ptrdiff_t i = 0; i < n_in; i++) a[i] = FN_TSPLAT(X[p * n_in + i]);
}

/* Inputs of example rows[k] into lane k of a[0 .. n_in) (online training:
 * each lane presents its own example). */
FN_INLINE void
fn_trials_gather_inputs(fn_tv *a, const fn_real *X, const int64_t *rows, ptrdiff_t n_in)
{
    for (ptrdiff_t i = 0; i < n_in; i++) {
        fn_tvr v;
        for (int k = 0; k < FN_TL; k++) v[k] = X[rows[k] * n_in + i];
        a[i] = v;
    }
}

#endif /* FASTNET_LANES_PASS_H */
