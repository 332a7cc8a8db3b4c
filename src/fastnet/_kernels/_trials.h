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
#ifndef FN_TINY_NI     /* the header; the tiny-network template is at the end */
#ifndef FASTNET_TRIALS_H
#define FASTNET_TRIALS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

/* Lanes per group. */
#ifndef FN_TL
#define FN_TL 8
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && (__GNUC__ >= 12) && !defined(FASTNET_NO_CLONES)
#define FN_TRIALS_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), unused))
/* The tiny-network kernels (below) are built for x86-64-v4 alone: elsewhere
 * GCC splits their 8-lane masks into scalar code, and the generic kernel does
 * as well there. */
#define FN_TINY_TARGET __attribute__((target("arch=x86-64-v4"), unused))
#define FN_TINY_SUPPORTED()                                                            \
    (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")           \
     && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")       \
     && __builtin_cpu_supports("avx512cd"))
/* The outputs are rounded before the residual y - t, as in the generic kernel
 * (which stores them): without this, GCC fuses x * q - t of an x/(1+|x|)
 * output into one FMA. An empty asm on the (zmm) register hides the product. */
#define FN_TINY_OPAQUE(v) __asm__("" : "+v"(v))
#if FN_TL == 8
#include <immintrin.h>
/* Lane masks of the tiny kernels (x86-64-v4): a comparison gives a mask
 * register, a select is one blend (or a masked operation), min and max one
 * instruction each, where GCC's generic vectors take all-ones lanes in a vector
 * register and bit operations on them. */
typedef __mmask8 fn_tk;
#define FN_TK_CMP_(a, b, p) _mm512_cmp_pd_mask((__m512d)(a), (__m512d)(b), (p))
#define FN_TK_LT(a, b) FN_TK_CMP_(a, b, _CMP_LT_OQ)
#define FN_TK_GT(a, b) FN_TK_CMP_(a, b, _CMP_GT_OQ)
#define FN_TK_LE(a, b) FN_TK_CMP_(a, b, _CMP_LE_OQ)
#define FN_TK_EQ(a, b) FN_TK_CMP_(a, b, _CMP_EQ_OQ)
#define FN_TK_NZ(a) FN_TK_CMP_(a, FN_TSPLAT(0.0), _CMP_NEQ_OQ)       /* NaN: no */
#define FN_TK_SEL(k, a, b) ((fn_tv)_mm512_mask_blend_pd((k), (__m512d)(b), (__m512d)(a)))
#define FN_TK_ALL ((fn_tk)0xFF)
#define FN_TK_BITS(k) ((unsigned)(k))
#define FN_TINY_MIN(a, b) ((fn_tv)_mm512_min_pd((__m512d)(a), (__m512d)(b)))
#define FN_TINY_MAX(a, b) ((fn_tv)_mm512_max_pd((__m512d)(a), (__m512d)(b)))
#endif
#elif defined(__GNUC__)
#define FN_TRIALS_CLONES __attribute__((unused))
#define FN_TINY_TARGET __attribute__((unused))
#define FN_TINY_SUPPORTED() 1
#define FN_TINY_OPAQUE(v) ((void)0)    /* (no contraction guard here) */
#else
#define FN_TRIALS_CLONES
#define FN_TINY_TARGET
#define FN_TINY_SUPPORTED() 1
#define FN_TINY_OPAQUE(v) ((void)0)
#endif

/* Examples per block: the block's activations and dE/dnet stay in cache
 * between the forward/backward passes and the gradient pass. */
#ifndef FN_TBLOCK
#define FN_TBLOCK 32
#endif

/* Alignment lowered to a double's: the work buffers come from NumPy, which
 * aligns to 16 bytes, and a fn_tv* dereference must not assume 64. */
typedef double fn_tv __attribute__((vector_size(FN_TL * sizeof(double)), aligned(8)));
typedef int64_t fn_tm __attribute__((vector_size(FN_TL * sizeof(double))));
/* The same vector with its natural alignment, for local arrays that the
 * compiler may keep in registers. */
typedef double fn_tvr __attribute__((vector_size(FN_TL * sizeof(double))));

/* The same with generic vectors (masks: all-ones lanes). Comparisons are
 * ordered (false with NaN); FN_TINY_MIN(a, b) is a where a < b, else b (as
 * x86's minpd), FN_TINY_MAX likewise. */
#ifndef FN_TK_SEL
typedef fn_tm fn_tk;
#define FN_TK_LT(a, b) ((a) < (b))
#define FN_TK_GT(a, b) ((a) > (b))
#define FN_TK_LE(a, b) ((a) <= (b))
#define FN_TK_EQ(a, b) ((a) == (b))
#define FN_TK_NZ(a) (FN_TABS(a) > 0.0)
#define FN_TK_SEL(k, a, b) FN_TSEL(k, a, b)
#define FN_TK_ALL ((fn_tm){0} - 1)
#define FN_TK_BITS(k) __extension__({ unsigned b_ = 0; fn_tm k_ = (k);                 \
        for (int i_ = 0; i_ < FN_TL; i_++) b_ |= (unsigned)(k_[i_] != 0) << i_; b_; })
#define FN_TINY_MIN(a, b) FN_TSEL((a) < (b), (a), (b))
#define FN_TINY_MAX(a, b) FN_TSEL((a) > (b), (a), (b))
#endif

/* Macros, not functions: a function returning a vector would have a different
 * ABI in each clone. Loads and stores go through memcpy (no alignment needed). */
#define FN_TLOAD(p) __extension__({ fn_tv v_; memcpy(&v_, (p), sizeof v_); v_; })
#define FN_TSTORE(p, v) __extension__({ fn_tv s_ = (v); memcpy((p), &s_, sizeof s_); })
#define FN_TSEL(m, a, b) ((fn_tv)(((m) & (fn_tm)(a)) | (~(m) & (fn_tm)(b))))
/* x - 0 is x exactly, -0.0 included (x + 0 would turn -0.0 into +0.0). */
#define FN_TSPLAT(x) ((x) - (fn_tv){0})
/* |x|, the sign bit cleared (one AND; 1 + |x| is the same as with a select). */
#define FN_TABS(x) ((fn_tv)((fn_tm)(x) & ((fn_tm){0} + INT64_MAX)))

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
            const fn_tv q_ = 1.0 / (1.0 + FN_TABS(s));                                 \
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
 * weight rows wu + u * ws (doubles). */
static inline __attribute__((always_inline)) void
fn_trials_dot_tile(const int RT, const int UT, const fn_tv *a, ptrdiff_t as, const double *wu,
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

/* Forward tile: rows r0.. (RT) x units u0.. (UT) of a layer: sum, + bias,
 * activation into A and (unless NULL) f'(net) into D. */
static inline __attribute__((always_inline)) void
fn_trials_forward_tile(const int RT, const int UT, fn_tv *A, fn_tv *D, ptrdiff_t n_units,
                       ptrdiff_t r0, ptrdiff_t u0, ptrdiff_t lo, ptrdiff_t fan, ptrdiff_t st,
                       ptrdiff_t act, const double *wj, const double *bj)
{
    fn_tvr acc[FN_T_TILE][FN_T_TILE];
    fn_trials_dot_tile(RT, UT, A + r0 * n_units + lo, n_units, wj + u0 * fan * FN_TL,
                       fan * FN_TL, fan, acc);
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int u = 0; u < UT; u++) {
            fn_tv s = acc[r][u] + FN_TLOAD(bj + (u0 + u) * FN_TL), y, f;
            FN_TACT(act, s, y, f);
            A[(r0 + r) * n_units + st + u0 + u] = y;
            if (D != NULL) D[(r0 + r) * n_units + st + u0 + u] = f;
        }
}

/* Calls TILE(RT, UT) for tiles covering rows [0, nb) x units [0, size): RT and
 * UT are 4, 2 or 1 (whatever is left), r0 and u0 each tile's first row and unit. */
#define FN_T_TILES(nb, size, r0, u0, TILE)                                             \
    for (ptrdiff_t u0 = 0; u0 < (size);) {                                             \
        const int ut_ = (size) - u0 >= 4 ? 4 : (size) - u0 >= 2 ? 2 : 1;               \
        for (ptrdiff_t r0 = 0; r0 < (nb);) {                                           \
            const int rt_ = (nb) - r0 >= 4 ? 4 : (nb) - r0 >= 2 ? 2 : 1;               \
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
static inline __attribute__((always_inline)) void
fn_trials_forward_rows(const ptrdiff_t *layers, ptrdiff_t n_layers, const double *w, fn_tv *A,
                       fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units)
{
    for (ptrdiff_t j = 0; j < n_layers; j++) {
        const ptrdiff_t *l = layers + j * FN_T_NCOLS;
        const ptrdiff_t lo = l[FN_T_SRC_LO], fan = l[FN_T_SRC_HI] - lo;
        const ptrdiff_t st = l[FN_T_START], act = l[FN_T_ACT], size = l[FN_T_SIZE];
        const double *wj = w + l[FN_T_W_OFF] * FN_TL, *bj = w + l[FN_T_B_OFF] * FN_TL;
#define FN_T_FWD(RT, UT) fn_trials_forward_tile(RT, UT, A, D, n_units, r0, u0, lo, fan, st, \
                                                act, wj, bj)
        FN_T_TILES(nb, size, r0, u0, FN_T_FWD)
#undef FN_T_FWD
    }
}

/* Backward tile: rows r0.. (RT) x sources s0.. (ST) of layer j: dE/da of the
 * sources += sum over the layer's units u (ascending) of dE/dnet_u w_us. */
static inline __attribute__((always_inline)) void
fn_trials_backward_tile(const int RT, const int ST, fn_tv *E, const fn_tv *D, ptrdiff_t n_units,
                        ptrdiff_t r0, ptrdiff_t s0, ptrdiff_t lo, ptrdiff_t fan,
                        ptrdiff_t start, ptrdiff_t size, const double *wj)
{
    fn_tvr acc[FN_T_TILE][FN_T_TILE];
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int c = 0; c < ST; c++) acc[r][c] = E[(r0 + r) * n_units + s0 + c];
    const fn_tv *d = D + r0 * n_units + start;
    const double *ws = wj + (s0 - lo) * FN_TL;
    for (ptrdiff_t u = 0; u < size; u++) {
        fn_tvr dv[FN_T_TILE], wv[FN_T_TILE];
        FN_T_UNROLL for (int r = 0; r < RT; r++) dv[r] = d[r * n_units + u];
        FN_T_UNROLL for (int c = 0; c < ST; c++) wv[c] = FN_TLOAD(ws + (u * fan + c) * FN_TL);
        FN_T_UNROLL for (int r = 0; r < RT; r++)
            FN_T_UNROLL for (int c = 0; c < ST; c++) acc[r][c] += dv[r] * wv[c];
    }
    FN_T_UNROLL for (int r = 0; r < RT; r++)
        FN_T_UNROLL for (int c = 0; c < ST; c++) E[(r0 + r) * n_units + s0 + c] = acc[r][c];
}

/* Gradient tile: units u0.. (UT) x sources i0.. (IT) of layer j: dE/dw +=
 * sum over the block's rows (ascending) of dE/dnet_u a_i. */
static inline __attribute__((always_inline)) void
fn_trials_gradient_tile(const int UT, const int IT, double *gw, const fn_tv *A, const fn_tv *D,
                        ptrdiff_t n_units, ptrdiff_t nb, ptrdiff_t u0, ptrdiff_t i0,
                        ptrdiff_t lo, ptrdiff_t fan, ptrdiff_t start)
{
    fn_tvr acc[FN_T_TILE][FN_T_TILE];
    FN_T_UNROLL for (int u = 0; u < UT; u++)
        FN_T_UNROLL for (int i = 0; i < IT; i++)
            acc[u][i] = FN_TLOAD(gw + ((u0 + u) * fan + i0 + i) * FN_TL);
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

/* Backward pass of a block whose forward pass left f'(net) in D: D becomes
 * dE/dnet, given dE/dy of the outputs in E (and zero for the hidden units).
 * Layers in reverse: when layer j is reached every later layer has added its
 * share to dE/da of layer j's units. */
static inline __attribute__((always_inline)) void
fn_trials_backward_rows(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        const double *w, fn_tv *D, fn_tv *E, ptrdiff_t nb, ptrdiff_t n_units)
{
    for (ptrdiff_t j = n_layers - 1; j >= 0; j--) {
        const ptrdiff_t *l = layers + j * FN_T_NCOLS;
        const ptrdiff_t lo = l[FN_T_SRC_LO], fan = l[FN_T_SRC_HI] - lo;
        const ptrdiff_t start = l[FN_T_START], size = l[FN_T_SIZE];
        const ptrdiff_t back_lo = lo > n_in ? lo : n_in;   /* no dE/da for inputs */
        const double *wj = w + l[FN_T_W_OFF] * FN_TL;
        for (ptrdiff_t r = 0; r < nb; r++)
            for (ptrdiff_t u = 0; u < size; u++)
                D[r * n_units + start + u] *= E[r * n_units + start + u];
        const ptrdiff_t n_src = lo + fan - back_lo;
#define FN_T_BWD(RT, ST) fn_trials_backward_tile(RT, ST, E, D, n_units, r0, back_lo + c0, lo, \
                                                 fan, start, size, wj)
        FN_T_TILES(nb, n_src, r0, c0, FN_T_BWD)
#undef FN_T_BWD
    }
}

/* dE/dw of a block (D = dE/dnet, A the activations) added into gw. */
static inline __attribute__((always_inline)) void
fn_trials_gradient_rows(const ptrdiff_t *layers, ptrdiff_t n_layers, double *gw,
                        const fn_tv *A, const fn_tv *D, ptrdiff_t nb, ptrdiff_t n_units)
{
    for (ptrdiff_t j = 0; j < n_layers; j++) {
        const ptrdiff_t *l = layers + j * FN_T_NCOLS;
        const ptrdiff_t lo = l[FN_T_SRC_LO], fan = l[FN_T_SRC_HI] - lo;
        const ptrdiff_t start = l[FN_T_START], size = l[FN_T_SIZE];
        double *gj = gw + l[FN_T_W_OFF] * FN_TL, *gb = gw + l[FN_T_B_OFF] * FN_TL;
        for (ptrdiff_t u = 0; u < size; u++) {
            fn_tv acc = FN_TLOAD(gb + u * FN_TL);
            for (ptrdiff_t r = 0; r < nb; r++) acc += D[r * n_units + start + u];
            FN_TSTORE(gb + u * FN_TL, acc);
        }
        /* (tiles of units x sources: the "rows" of FN_T_TILES are the units) */
#define FN_T_GRAD(UT, IT) fn_trials_gradient_tile(UT, IT, gj, A, D, n_units, nb, u0, i0, lo, \
                                                  fan, start)
        FN_T_TILES(size, fan, u0, i0, FN_T_GRAD)
#undef FN_T_GRAD
    }
}

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
 * forward pass alone, in blocks of FN_TBLOCK rows): sse[g * FN_TL + k]. work:
 * FN_TBLOCK * n_units vectors. */
FN_TRIALS_CLONES static void
fn_trials_sse(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
              ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const double *X,
              const double *T, ptrdiff_t n_out, const double *w, double *work,
              double *sse)
{
    fn_tv *A = (fn_tv *)work;
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_T_NCOLS + FN_T_START];
    const ptrdiff_t n_units = out0 + n_out;
    for (ptrdiff_t g = 0; g < n_groups; g++) {
        const double *wg = w + g * n_w * FN_TL;
        fn_tv e = FN_TSPLAT(0.0);
        for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
            const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
            for (ptrdiff_t r = 0; r < nb; r++) FN_TRIALS_INPUTS(A + r * n_units, X, p0 + r, n_in);
            fn_trials_forward_rows(layers, n_layers, wg, A, (fn_tv *)NULL, nb, n_units);
            for (ptrdiff_t r = 0; r < nb; r++)
                for (ptrdiff_t k = 0; k < n_out; k++) {
                    const fn_tv res = A[r * n_units + out0 + k] - T[(p0 + r) * n_out + k];
                    e += res * res;
                }
        }
        FN_TSTORE(sse + g * FN_TL, e);
    }
}

/* Outputs of every trial on X: Y[((g * n + p) * n_out + k) * FN_TL + lane]
 * (the block forward pass). work: FN_TBLOCK * n_units vectors. */
FN_TRIALS_CLONES static void
fn_trials_outputs(ptrdiff_t n_groups, const ptrdiff_t *layers, ptrdiff_t n_layers,
                  ptrdiff_t n_in, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                  ptrdiff_t n_out, const double *w, double *work, double *Y)
{
    fn_tv *A = (fn_tv *)work;
    const ptrdiff_t out0 = layers[(n_layers - 1) * FN_T_NCOLS + FN_T_START];
    const ptrdiff_t n_units = out0 + n_out;
    for (ptrdiff_t g = 0; g < n_groups; g++) {
        const double *wg = w + g * n_w * FN_TL;
        for (ptrdiff_t p0 = 0; p0 < n; p0 += FN_TBLOCK) {
            const ptrdiff_t nb = n - p0 < FN_TBLOCK ? n - p0 : FN_TBLOCK;
            for (ptrdiff_t r = 0; r < nb; r++) FN_TRIALS_INPUTS(A + r * n_units, X, p0 + r, n_in);
            fn_trials_forward_rows(layers, n_layers, wg, A, (fn_tv *)NULL, nb, n_units);
            for (ptrdiff_t r = 0; r < nb; r++)
                for (ptrdiff_t k = 0; k < n_out; k++)
                    FN_TSTORE(Y + ((g * n + p0 + r) * n_out + k) * FN_TL,
                              A[r * n_units + out0 + k]);
        }
    }
}

/* Hamey's success check (fastnet.measures.threshold_correct) for the lanes of
 * one group at its current weights: all-ones in the lanes whose every output of
 * every example is right (> 1 - r_c for target 1, < r_c for target 0, within
 * analog of other targets; analog < 0: never right). NaN is never right. */
#define FN_TRIALS_CORRECT(result, layers, n_layers, n_in, n, X, T, n_out, wg, A, n_units, r_c, analog) \
    do {                                                                               \
        const ptrdiff_t o_ = (layers)[((n_layers) - 1) * FN_T_NCOLS + FN_T_START];     \
        fn_tm ok_ = (fn_tm){0} - 1;                                                    \
        for (ptrdiff_t p0_ = 0; p0_ < (n); p0_ += FN_TBLOCK) {                          \
            const ptrdiff_t nb_ = (n) - p0_ < FN_TBLOCK ? (n) - p0_ : FN_TBLOCK;       \
            for (ptrdiff_t r_ = 0; r_ < nb_; r_++)                                     \
                FN_TRIALS_INPUTS((A) + r_ * (n_units), X, p0_ + r_, n_in);             \
            fn_trials_forward_rows(layers, n_layers, wg, A, (fn_tv *)NULL, nb_, n_units); \
            for (ptrdiff_t r_ = 0; r_ < nb_; r_++)                                     \
                for (ptrdiff_t k_ = 0; k_ < (n_out); k_++) {                           \
                    const fn_tv y_ = (A)[r_ * (n_units) + o_ + k_];                    \
                    const double t_ = (T)[(p0_ + r_) * (n_out) + k_];                  \
                    if (t_ == 1.0) ok_ &= (y_ > 1.0 - (r_c));                          \
                    else if (t_ == 0.0) ok_ &= (y_ < (r_c));                           \
                    else {                                                             \
                        const fn_tv d_ = y_ - t_;                                      \
                        ok_ &= (FN_TSEL(d_ < 0.0, -d_, d_) <= (analog));               \
                    }                                                                  \
                }                                                                      \
        }                                                                              \
        (result) = ok_;                                                                \
    } while (0)

/* RPROP's rule for the FN_TL lanes of one weight, lane by lane as rprop_update in
 * _rprop.pyx (V a constant, so each variant compiles to its own code): from the
 * weight wv, gradient gv, previous gradient gpv, step sv and previous change dwv,
 * the new values w_new, gp_new, s_new, dw_new (variables distinct from the
 * inputs). Reads eta_plus, eta_minus, smax, smin, zero and (irprop+) rose. */
#define FN_TRIALS_RULE(V, wv, gv, gpv, sv, dwv, w_new, gp_new, s_new, dw_new)          \
    do {                                                                               \
        const fn_tv prod_ = (gpv) * (gv);                                              \
        const fn_tm pos_ = prod_ > 0.0, neg_ = prod_ < 0.0;                            \
        fn_tv grown_ = (sv) * eta_plus, shrunk_ = (sv) * eta_minus;                    \
        grown_ = FN_TSEL(grown_ < smax, grown_, smax);                                 \
        shrunk_ = FN_TSEL(shrunk_ > smin, shrunk_, smin);                              \
        (s_new) = FN_TSEL(pos_, grown_, FN_TSEL(neg_, shrunk_, (sv)));                 \
        /* -sign(g) * step: the change of a non-negative product (and of rprop-) */    \
        const fn_tv dw_ = FN_TSEL((gv) > 0.0, -(s_new),                                \
                                  FN_TSEL((gv) < 0.0, (s_new), -zero * (s_new)));      \
        (w_new) = (wv) + dw_; (dw_new) = dw_; (gp_new) = (gv);                         \
        if ((V) == FN_T_RPROP_PLUS) {                                                  \
            (w_new) = FN_TSEL(neg_, (wv) - (dwv), (w_new));                            \
            (dw_new) = FN_TSEL(neg_, -(dwv), (dw_new));                                \
            (gp_new) = FN_TSEL(neg_, zero, (gp_new));                                  \
        } else if ((V) == FN_T_IRPROP_MINUS) {                                         \
            (w_new) = FN_TSEL(neg_, (wv), (w_new));                                    \
            (dw_new) = FN_TSEL(neg_, zero, (dw_new));                                  \
            (gp_new) = FN_TSEL(neg_, zero, (gp_new));                                  \
        } else if ((V) == FN_T_IRPROP_PLUS) {                                          \
            (w_new) = FN_TSEL(neg_, FN_TSEL(rose, (wv) - (dwv), (wv)), (w_new));       \
            (dw_new) = FN_TSEL(neg_, zero, (dw_new));                                  \
            (gp_new) = FN_TSEL(neg_, zero, (gp_new));                                  \
        }                                                                              \
    } while (0)

/* One RPROP step (FN_TRIALS_RULE) of the FN_TL lanes of every weight of a group,
 * in memory. With BLEND, lanes outside `active` keep their state. */
#define FN_TRIALS_UPDATE(V, BLEND)                                                     \
    for (ptrdiff_t c = 0; c < n_w; c++) {                                              \
        double *pw = wg + c * FN_TL, *pg = gg + c * FN_TL, *pgp = gp + c * FN_TL;      \
        double *pdw = dwp + c * FN_TL, *pst = st + c * FN_TL;                          \
        const fn_tv gv = FN_TLOAD(pg), gpv = FN_TLOAD(pgp), sv = FN_TLOAD(pst);         \
        const fn_tv wv = FN_TLOAD(pw);                                                 \
        const fn_tv dwv = (V) == FN_T_IRPROP_MINUS ? zero : FN_TLOAD(pdw);             \
        fn_tv w_new, gp_new, s_new, dw_new;                                            \
        FN_TRIALS_RULE(V, wv, gv, gpv, sv, dwv, w_new, gp_new, s_new, dw_new);         \
        if (BLEND) {                                                                   \
            w_new = FN_TSEL(active, w_new, wv); dw_new = FN_TSEL(active, dw_new, dwv); \
            gp_new = FN_TSEL(active, gp_new, gpv); s_new = FN_TSEL(active, s_new, sv); \
        }                                                                              \
        FN_TSTORE(pw, w_new); FN_TSTORE(pgp, gp_new); FN_TSTORE(pst, s_new);           \
        if ((V) != FN_T_IRPROP_MINUS || (BLEND)) FN_TSTORE(pdw, dw_new);               \
    }

/* Epoch ep's training SSE of the lanes of group grp, times sse_scale, into
 * row grp * FN_TL + lane, column ep of sse_out (row stride ld). */
#define FN_TRIALS_SSE_OUT(grp, ep, sse)                                                \
    do {                                                                               \
        const fn_tv o_ = (sse) * sse_scale;                                            \
        double l_[FN_TL];                                                              \
        memcpy(l_, &o_, sizeof l_);                                                    \
        for (int k_ = 0; k_ < FN_TL; k_++) sse_out[((grp) * FN_TL + k_) * ld + (ep)] = l_[k_]; \
    } while (0)

/* The trials' state, read and updated in place by a call: w, g, g_prev,
 * dw_prev, step: (n_groups, n_w, FN_TL) blocks; last_error (the previous epoch's
 * SSE, for irprop+) and status: (n_groups, FN_TL). */
typedef struct {
    ptrdiff_t n_groups;
    double *w, *g, *g_prev, *dw_prev, *step, *last_error;
    int64_t *status;
} fn_trials_state;

/* RPROP's rule (as train_epochs in _rprop.pyx). */
typedef struct {
    int variant;
    double eta_plus, eta_minus, step_min, step_max;
} fn_trials_rule;

/* What a call runs and reports: n_epochs epochs; sse_out: n_groups * FN_TL rows
 * (trial g * FN_TL + lane), row stride ld >= n_epochs: the training SSE of each
 * epoch times sse_scale (its forward pass, before its update; meaningful for the
 * epochs a lane trained); check_every > 0: the success check (r_c, analog) after
 * every check_every-th epoch of the call. */
typedef struct {
    ptrdiff_t n_epochs, ld, check_every;
    double *sse_out;
    double sse_scale, r_c, analog;
} fn_trials_epochs;

/* The fields of the three structs as local variables (read once: the kernels'
 * stores through double pointers would otherwise make the compiler reload
 * them). */
#define FN_TRIALS_UNPACK(state, rule, run)                                             \
    const ptrdiff_t n_groups = (state)->n_groups;                                      \
    double *const w = (state)->w, *const g = (state)->g;                               \
    double *const g_prev = (state)->g_prev, *const dw_prev = (state)->dw_prev;         \
    double *const step = (state)->step, *const last_error = (state)->last_error;       \
    int64_t *const status = (state)->status;                                           \
    const int variant = (rule)->variant;                                               \
    const double eta_plus = (rule)->eta_plus, eta_minus = (rule)->eta_minus;           \
    const double step_min = (rule)->step_min, step_max = (rule)->step_max;             \
    const ptrdiff_t n_epochs = (run)->n_epochs, ld = (run)->ld;                        \
    const ptrdiff_t check_every = (run)->check_every;                                  \
    double *const sse_out = (run)->sse_out;                                            \
    const double sse_scale = (run)->sse_scale, r_c = (run)->r_c, analog = (run)->analog

/* Run run->n_epochs epochs of epoch-batched RPROP for every group (see the
 * top). work: 3 * FN_TBLOCK * n_units vectors. */
FN_TRIALS_CLONES static void
fn_trials_rprop_generic(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in,
                        ptrdiff_t n_units, ptrdiff_t n_w, ptrdiff_t n, const double *X,
                        const double *T, ptrdiff_t n_out, const fn_trials_state *state,
                        const fn_trials_rule *rule, const fn_trials_epochs *run, double *work)
{
    FN_TRIALS_UNPACK(state, rule, run);
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
                fn_trials_forward_rows(layers, n_layers, wg, A, D, nb, n_units);
                for (ptrdiff_t r = 0; r < nb; r++) {
                    fn_tv *er = E + r * n_units;
                    for (ptrdiff_t k = 0; k < n_out; k++) {
                        const fn_tv res = A[r * n_units + out0 + k] - T[(p0 + r) * n_out + k];
                        sse += res * res;
                        er[out0 + k] = 2.0 * res;   /* dE/dy of E = sum (y - t)^2 */
                    }
                    for (ptrdiff_t s = n_in; s < out0; s++) er[s] = zero;
                }
                fn_trials_backward_rows(layers, n_layers, n_in, wg, D, E, nb, n_units);
                fn_trials_gradient_rows(layers, n_layers, gg, A, D, nb, n_units);
            }
            FN_TRIALS_SSE_OUT(grp, ep, sse);
            /* Lanes whose error is not finite stop here, un-updated. */
            const fn_tm bad = active & ~((sse == sse) & (sse - sse == 0.0));
            for (int k = 0; k < FN_TL; k++) all &= bad[k] == 0;
            lane_status = (bad & ((fn_tm){0} + (ep + 1))) | (~bad & lane_status);
            active &= ~bad;
            const fn_tv last = FN_TLOAD(last_error + grp * FN_TL);
            const fn_tm rose = sse > last;
            FN_TSTORE(last_error + grp * FN_TL, FN_TSEL(active, sse, last));
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
                FN_TRIALS_CORRECT(ok, layers, n_layers, n_in, n, X, T, n_out, wg, A, n_units, r_c, analog);
                const fn_tm done = active & ok;
                lane_status = (done & ((fn_tm){0} - (ep + 1))) | (~done & lane_status);
            }
        }
        memcpy(sg, &lane_status, sizeof lane_status);
    }
}

/* ------------------------------------------------------------------------
 * Tiny networks: one hidden layer of a few units (XOR 2-2-1, encoders). Their
 * layers are too short for the loops above to pay: per epoch the generic kernel
 * spends more on loop control, the layer table and round trips through the
 * work rows than on arithmetic. For the shapes listed below, the template at
 * the end of this file (this header includes itself once per shape) compiles
 * the whole epoch with the sizes as constants: every loop unrolled, a group's
 * weights, RPROP state and gradient in local arrays (registers where they
 * fit), one example at a time, forward, backward and gradient fused. Every sum
 * runs in the generic kernel's order (forward sums in source order then the
 * bias; dE/da of a hidden unit over the output units in order; the gradient
 * over the examples in order), so a lane's arithmetic is the generic kernel's.
 * ------------------------------------------------------------------------ */

/* The canonical layer table of a one-hidden-layer network (network.py's
 * layout): hidden units from the inputs, outputs from [lo, n_in + n_h) with lo 0
 * (shortcuts) or n_in. Returns 1 and the sizes if `layers` is one. */
static int
fn_tiny_shape(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_w,
              ptrdiff_t n_out, int *ni, int *nh, int *no, int *sc)
{
    if (n_layers != 2) return 0;
    const ptrdiff_t *h = layers, *o = layers + FN_T_NCOLS;
    const ptrdiff_t H = h[FN_T_SIZE], lo = o[FN_T_SRC_LO];
    if (h[FN_T_START] != n_in || h[FN_T_SRC_LO] != 0 || h[FN_T_SRC_HI] != n_in
        || h[FN_T_W_OFF] != 0 || h[FN_T_B_OFF] != H * n_in) return 0;
    if (o[FN_T_START] != n_in + H || o[FN_T_SIZE] != n_out || (lo != 0 && lo != n_in)
        || o[FN_T_SRC_HI] != n_in + H || o[FN_T_W_OFF] != H * n_in + H
        || o[FN_T_B_OFF] != o[FN_T_W_OFF] + n_out * (n_in + H - lo)
        || n_w != o[FN_T_B_OFF] + n_out) return 0;
    *ni = (int)n_in; *nh = (int)H; *no = (int)n_out; *sc = lo == 0;
    return 1;
}

#define FN_TINY_UNROLL _Pragma("GCC unroll 256")

/* Groups that a tiny kernel runs side by side, as independent streams of
 * work. One: a group's weights and gradients fill most of the 32 registers,
 * and with two (interleaved per example or one after the other) the spills
 * cost more than the overlap gains (XOR 2-2-1 on a Zen 4: 1.8 ms against 2.0
 * for 1000 trials x 200 epochs). */
#ifndef FN_TINY_Q
#define FN_TINY_Q 1
#endif
/* Epochs whose errors a tiny kernel keeps before writing them to their rows. */
#define FN_TINY_CHUNK 16

/* FN_TACT for the two activations the tiny kernels take (x/(1+|x|) or linear;
 * the others go through libm lane by lane, which would spill the arrays). */
#define FN_TINY_ACT(act, s, y, f)                                                      \
    do {                                                                               \
        if ((act) == FN_T_PROBEN1) {                                                   \
            const fn_tv q_ = 1.0 / (1.0 + FN_TABS(s));                                 \
            (y) = (s) * q_; (f) = q_ * q_;                                             \
        } else {                                                                       \
            (y) = (s); (f) = FN_TSPLAT(1.0);                                           \
        }                                                                              \
    } while (0)
#define FN_TINY_CAT_(a, b, c, d, e) a##_##b##_##c##_##d##_##e
#define FN_TINY_CAT(a, b, c, d, e) FN_TINY_CAT_(a, b, c, d, e)

/* The specialised shapes (n_in, n_hidden, n_out, shortcut). */
#define FN_TINY_SHAPES(X) X(2, 2, 1, 1) X(2, 2, 1, 0)

#define FN_TINY_NI 2
#define FN_TINY_NH 2
#define FN_TINY_NO 1
#define FN_TINY_SC 1
#include "_trials.h"
#undef FN_TINY_SC
#define FN_TINY_SC 0
#include "_trials.h"
#undef FN_TINY_NI
#undef FN_TINY_NH
#undef FN_TINY_NO
#undef FN_TINY_SC

/* Whether a network of this layer table has a tiny-network kernel on this
 * CPU (a listed shape, x/(1+|x|) hidden units, linear or x/(1+|x|) outputs). */
static int
fn_trials_tiny(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_w,
               ptrdiff_t n_out)
{
    int ni, nh, no, sc;
    if (!fn_tiny_shape(layers, n_layers, n_in, n_w, n_out, &ni, &nh, &no, &sc)) return 0;
    const ptrdiff_t hact = layers[FN_T_ACT], oact = layers[FN_T_NCOLS + FN_T_ACT];
    if (hact != FN_T_PROBEN1 || (oact != FN_T_PROBEN1 && oact != FN_T_LINEAR)) return 0;
    int listed = 0;
#define FN_TINY_LISTED(a, b, c, d) listed |= ni == a && nh == b && no == c && sc == d;
    FN_TINY_SHAPES(FN_TINY_LISTED)
#undef FN_TINY_LISTED
    return listed && FN_TINY_SUPPORTED();
}

/* Run run->n_epochs epochs of epoch-batched RPROP for every group (as
 * fn_trials_rprop_generic; work: trials_work_size doubles); tiny shapes go to
 * their own kernels unless `special` is 0. */
static void
fn_trials_rprop(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_units,
                ptrdiff_t n_w, ptrdiff_t n, const double *X, const double *T, ptrdiff_t n_out,
                const fn_trials_state *state, const fn_trials_rule *rule,
                const fn_trials_epochs *run, double *work, int special)
{
    int ni = 0, nh = 0, no = 0, sc = 0;
    if (special && fn_trials_tiny(layers, n_layers, n_in, n_w, n_out)) {
        const ptrdiff_t oact = layers[(n_layers - 1) * FN_T_NCOLS + FN_T_ACT];
        fn_tiny_shape(layers, n_layers, n_in, n_w, n_out, &ni, &nh, &no, &sc);
#define FN_TINY_CALL(a, b, c, d)                                                       \
        if (ni == a && nh == b && no == c && sc == d) {                                \
            FN_TINY_CAT(fn_tiny, a, b, c, d)(oact, n, X, T, state, rule, run, work);   \
            return;                                                                    \
        }
        FN_TINY_SHAPES(FN_TINY_CALL)
#undef FN_TINY_CALL
    }
    fn_trials_rprop_generic(layers, n_layers, n_in, n_units, n_w, n, X, T, n_out, state,
                            rule, run, work);
}

#endif  /* FASTNET_TRIALS_H */

#else   /* FN_TINY_NI defined: the tiny-network template, for one shape */

#define TI FN_TINY_NI
#define TH FN_TINY_NH
#define TO FN_TINY_NO
#define TLO (FN_TINY_SC ? 0 : TI)          /* first source of the output layer */
#define TFAN (TI + TH - TLO)               /* its fan-in */
#define TB1 (TH * TI)                      /* hidden biases */
#define TW2 (TB1 + TH)                     /* output weights */
#define TB2 (TW2 + TO * TFAN)              /* output biases */
#define TNW (TB2 + TO)                     /* weights */
#define TNU (TI + TH + TO)                 /* units */

/* The forward pass of example p with weights W into A (units) and F (f'(net)
 * of the hidden then output units); as FN_TRIALS_FORWARD_BLOCK, sum by sum.
 * The inputs come broadcast from XB. */
#define FN_TINY_FORWARD(W, A, F, p)                                                    \
    do {                                                                               \
        FN_TINY_UNROLL for (int i_ = 0; i_ < TI; i_++)                                 \
            (A)[i_] = FN_TLOAD(XB + ((p) * TI + i_) * FN_TL);                          \
        FN_TINY_UNROLL for (int u_ = 0; u_ < TH; u_++) {                               \
            fn_tv s_ = zero;                                                           \
            FN_TINY_UNROLL for (int i_ = 0; i_ < TI; i_++)                             \
                s_ += (W)[u_ * TI + i_] * (A)[i_];                                     \
            s_ += (W)[TB1 + u_];                                                       \
            FN_TINY_ACT(HA, s_, (A)[TI + u_], (F)[u_]);                                \
        }                                                                              \
        FN_TINY_UNROLL for (int o_ = 0; o_ < TO; o_++) {                               \
            fn_tv s_ = zero;                                                           \
            FN_TINY_UNROLL for (int i_ = 0; i_ < TFAN; i_++)                           \
                s_ += (W)[TW2 + o_ * TFAN + i_] * (A)[TLO + i_];                       \
            s_ += (W)[TB2 + o_];                                                       \
            FN_TINY_ACT(OA, s_, (A)[TI + TH + o_], (F)[TH + o_]);                      \
            FN_TINY_OPAQUE((A)[TI + TH + o_]);                                         \
        }                                                                              \
    } while (0)

/* RPROP's step of every weight of group q, every lane: FN_TRIALS_RULE's
 * results bit for bit, in fewer operations:
 * - the step: grown and clamped to step_max where g' g > 0, shrunk and
 *   clamped to step_min where g' g < 0, else as it was (FN_TINY_MIN and _MAX
 *   are the rule's selects: the bound where the comparison fails);
 * - the change: a step >= +0 with the sign of -g is t | (~g & sign) (the
 *   selects' -t or t), and none where g is 0 or NaN (the selects' -0 * t;
 *   w + -0.0 is w). */
#define FN_TINY_UPDATE(V, q)                                                           \
    FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {                                     \
        const fn_tv gv = G[q][c], wv = W[q][c], sv = S[q][c], prod = GP[q][c] * gv;    \
        const fn_tk pos = FN_TK_GT(prod, zero), neg = FN_TK_LT(prod, zero);            \
        const fn_tv t = FN_TK_SEL(pos, FN_TINY_MIN(sv * etap, smax),                   \
                                  FN_TK_SEL(neg, FN_TINY_MAX(sv * etam, smin), sv));   \
        S[q][c] = t;                                                                   \
        if ((V) == FN_T_IRPROP_MINUS) {                                                \
            /* neg: no step, g' <- 0 (then g' = 0 also means "no step") */             \
            const fn_tv ge = FN_TK_SEL(neg, zero, gv);                                 \
            const fn_tv cs = (fn_tv)((fn_tm)t | (~(fn_tm)ge & signbit));               \
            W[q][c] = FN_TK_SEL(FN_TK_NZ(ge), wv + cs, wv);                            \
            GP[q][c] = ge;                                                             \
        } else {                                                                       \
            const fn_tv cs = (fn_tv)((fn_tm)t | (~(fn_tm)gv & signbit));               \
            const fn_tv dw = FN_TK_SEL(FN_TK_NZ(gv), cs, mzero);                       \
            const fn_tv dwv = DW[q][c];                                                \
            if ((V) == FN_T_RPROP_MINUS) {                                             \
                W[q][c] = wv + dw; DW[q][c] = dw; GP[q][c] = gv;                       \
            } else if ((V) == FN_T_RPROP_PLUS) {                                       \
                W[q][c] = FN_TK_SEL(neg, wv - dwv, wv + dw);                           \
                DW[q][c] = FN_TK_SEL(neg, -dwv, dw);                                   \
                GP[q][c] = FN_TK_SEL(neg, zero, gv);                                   \
            } else {                                                                   \
                const fn_tk rose = FN_TK_GT(sse[q], last[q]);                          \
                W[q][c] = FN_TK_SEL(neg, FN_TK_SEL(rose, wv - dwv, wv), wv + dw);      \
                DW[q][c] = FN_TK_SEL(neg, zero, dw);                                   \
                GP[q][c] = FN_TK_SEL(neg, zero, gv);                                   \
            }                                                                          \
        }                                                                              \
    }

/* Group q's state (weights, RPROP state, last error) as it is now, for the
 * lanes of the bit set `lanes`, into memory. Whole vectors go through `snap`
 * first: indexing the arrays by a variable lane would keep them out of
 * registers. */
#define FN_TINY_SAVE_LANES(q, lanes)                                                   \
    do {                                                                               \
        FN_TINY_UNROLL for (int c_ = 0; c_ < TNW; c_++) {                              \
            FN_TSTORE(snap + (0 * TNW + c_) * FN_TL, W[q][c_]);                        \
            FN_TSTORE(snap + (1 * TNW + c_) * FN_TL, G[q][c_]);                        \
            FN_TSTORE(snap + (2 * TNW + c_) * FN_TL, GP[q][c_]);                       \
            FN_TSTORE(snap + (3 * TNW + c_) * FN_TL, S[q][c_]);                        \
            FN_TSTORE(snap + (4 * TNW + c_) * FN_TL, DW[q][c_]);                       \
        }                                                                              \
        FN_TSTORE(snap + 5 * TNW * FN_TL, last[q]);                                    \
        const ptrdiff_t o_ = off[q];                                                   \
        double *dst_[5] = {w + o_, g + o_, g_prev + o_, step + o_, dw_prev + o_};      \
        for (int k_ = 0; k_ < FN_TL; k_++) {                                           \
            if (!((lanes) >> k_ & 1)) continue;                                        \
            for (int a_ = 0; a_ < 5; a_++)                                             \
                for (int c_ = 0; c_ < TNW; c_++)                                       \
                    dst_[a_][c_ * FN_TL + k_] = snap[(a_ * TNW + c_) * FN_TL + k_];    \
            last_error[grps[q] * FN_TL + k_] = snap[5 * TNW * FN_TL + k_];             \
        }                                                                              \
    } while (0)

/* Epochs [e0, e1) of the errors held in sbuf (FN_TINY_CHUNK epochs of FN_TINY_Q
 * groups) into their rows of sse_out. */
#define FN_TINY_FLUSH(e0, e1)                                                          \
    FN_TINY_UNROLL for (int q_ = 0; q_ < FN_TINY_Q; q_++)                              \
        for (int k_ = 0; k_ < FN_TL; k_++)                                             \
            for (ptrdiff_t e_ = (e0); e_ < (e1); e_++)                                 \
                sse_out[(grps[q_] * FN_TL + k_) * ld + e_] =                           \
                    sbuf[(q_ * FN_TINY_CHUNK + e_ - (e0)) * FN_TL + k_]

/* Groups grps[0 .. FN_TINY_Q) side by side (independent streams of work that
 * hide each other's latencies); a group repeated for the last few (the
 * streams then compute and write the same). HA, OA: the hidden and output
 * activations (constants).
 * Every lane runs every epoch; a lane that is frozen (status != 0 when the
 * call starts, or stopped during it) computes on, but its state in memory is
 * the one it had when it froze: lanes never mix, so the others are
 * unaffected. That keeps masks out of the epoch (lane status is a bit set,
 * handled in scalar code once per epoch). */
FN_TINY_TARGET static inline __attribute__((always_inline)) void
FN_TINY_CAT(fn_tiny_run, TI, TH, TO, FN_TINY_SC)(
    const int HA, const int OA, const int V, const ptrdiff_t *grps, ptrdiff_t n,
    const double *XB, const double *T, const fn_trials_state *state, const fn_trials_rule *rule,
    const fn_trials_epochs *run, double *snap)
{
    FN_TRIALS_UNPACK(state, rule, run);
    (void)n_groups; (void)variant;
    const int Q = FN_TINY_Q;
    const fn_tv zero = FN_TSPLAT(0.0);
    const fn_tv smax = FN_TSPLAT(step_max), smin = FN_TSPLAT(step_min);
    const fn_tv etap = FN_TSPLAT(eta_plus), etam = FN_TSPLAT(eta_minus);
    const fn_tv mzero = FN_TSPLAT(-0.0), scale = FN_TSPLAT(sse_scale);
    const fn_tv hi = FN_TSPLAT(1.0 - r_c), lo = FN_TSPLAT(r_c), near = FN_TSPLAT(analog);
    const fn_tm signbit = (fn_tm){0} + INT64_MIN;
    const unsigned full = (1u << FN_TL) - 1;
    /* Each epoch's errors (times sse_scale) wait here, whole vectors, for their
     * scattered places in sse_out: lane k's is row k. */
    double sbuf[FN_TINY_Q * FN_TINY_CHUNK * FN_TL];
    ptrdiff_t off[FN_TINY_Q];
    unsigned live[FN_TINY_Q], any = 0;     /* lanes that train (status 0) */
    fn_tvr W[FN_TINY_Q][TNW], G[FN_TINY_Q][TNW], GP[FN_TINY_Q][TNW], S[FN_TINY_Q][TNW];
    fn_tvr DW[FN_TINY_Q][TNW], last[FN_TINY_Q], sse[FN_TINY_Q];
    FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
        off[q] = grps[q] * TNW * FN_TL;
        live[q] = 0;
        for (int k = 0; k < FN_TL; k++)
            live[q] |= (unsigned)(status[grps[q] * FN_TL + k] == 0) << k;
        any |= live[q];
        FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
            W[q][c] = FN_TLOAD(w + off[q] + c * FN_TL);
            G[q][c] = FN_TLOAD(g + off[q] + c * FN_TL);
            GP[q][c] = FN_TLOAD(g_prev + off[q] + c * FN_TL);
            S[q][c] = FN_TLOAD(step + off[q] + c * FN_TL);
            DW[q][c] = FN_TLOAD(dw_prev + off[q] + c * FN_TL);
        }
        last[q] = FN_TLOAD(last_error + grps[q] * FN_TL);
    }
    ptrdiff_t ep = 0, ep0 = 0;
    for (; ep < n_epochs && any; ep++) {
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
            sse[q] = zero;
            FN_TINY_UNROLL for (int c = 0; c < TNW; c++) G[q][c] = zero;
        }
        /* (n >= 1: a do-while leaves no path on which G stays zero, which would
         * turn the update's masks into PHIs that GCC lowers lane by lane) */
        ptrdiff_t p = 0;
        do {
            FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
                fn_tvr A[TNU], F[TH + TO], DO[TO];
                FN_TINY_FORWARD(W[q], A, F, p);
                /* dE/dnet of the outputs (E = sum (y - t)^2), of the hidden units */
                FN_TINY_UNROLL for (int o = 0; o < TO; o++) {
                    const fn_tv res = A[TI + TH + o] - T[p * TO + o];
                    sse[q] += res * res;
                    DO[o] = F[TH + o] * (2.0 * res);
                }
                FN_TINY_UNROLL for (int h = 0; h < TH; h++) {
                    fn_tv c = zero;
                    FN_TINY_UNROLL for (int o = 0; o < TO; o++)
                        c += DO[o] * W[q][TW2 + o * TFAN + TI + h - TLO];
                    F[h] *= c;
                }
                FN_TINY_UNROLL for (int h = 0; h < TH; h++) {
                    G[q][TB1 + h] += F[h];
                    FN_TINY_UNROLL for (int i = 0; i < TI; i++)
                        G[q][h * TI + i] += F[h] * A[i];
                }
                FN_TINY_UNROLL for (int o = 0; o < TO; o++) {
                    G[q][TB2 + o] += DO[o];
                    FN_TINY_UNROLL for (int i = 0; i < TFAN; i++)
                        G[q][TW2 + o * TFAN + i] += DO[o] * A[TLO + i];
                }
            }
        } while (++p < n);
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
            FN_TSTORE(sbuf + (q * FN_TINY_CHUNK + ep - ep0) * FN_TL, sse[q] * scale);
            /* Lanes whose error is not finite stop here, un-updated. */
            const unsigned bad = ~FN_TK_BITS(FN_TK_EQ(sse[q] - sse[q], zero)) & live[q];
            if (__builtin_expect(bad != 0, 0)) {
                FN_TINY_SAVE_LANES(q, bad);
                for (int k = 0; k < FN_TL; k++)
                    if (bad >> k & 1) status[grps[q] * FN_TL + k] = ep + 1;
                live[q] &= ~bad;
            }
        }
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) { FN_TINY_UPDATE(V, q) }
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) last[q] = sse[q];
        if (check_every > 0 && (ep + 1) % check_every == 0) {
            FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
                if (!live[q]) continue;
                /* Hamey's success check at the new weights (FN_TRIALS_CORRECT) */
                fn_tk ok = FN_TK_ALL;
                ptrdiff_t pc = 0;
                do {
                    fn_tvr A[TNU], F[TH + TO];
                    FN_TINY_FORWARD(W[q], A, F, pc);
                    (void)F;
                    FN_TINY_UNROLL for (int o = 0; o < TO; o++) {
                        const fn_tv y = A[TI + TH + o];
                        const double t = T[pc * TO + o];
                        if (t == 1.0) ok &= FN_TK_GT(y, hi);
                        else if (t == 0.0) ok &= FN_TK_LT(y, lo);
                        else ok &= FN_TK_LE(FN_TABS(y - t), near);
                    }
                } while (++pc < n);
                const unsigned done = FN_TK_BITS(ok) & live[q];
                if (done) {
                    FN_TINY_SAVE_LANES(q, done);
                    for (int k = 0; k < FN_TL; k++)
                        if (done >> k & 1) status[grps[q] * FN_TL + k] = -(ep + 1);
                    live[q] &= ~done;
                }
            }
        }
        any = 0;
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) any |= live[q];
        if (ep + 1 - ep0 == FN_TINY_CHUNK) {
            FN_TINY_FLUSH(ep0, ep + 1);
            ep0 = ep + 1;
        }
    }
    FN_TINY_FLUSH(ep0, ep);
    FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
        if (live[q] == full) {
            FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
                FN_TSTORE(w + off[q] + c * FN_TL, W[q][c]);
                FN_TSTORE(g + off[q] + c * FN_TL, G[q][c]);
                FN_TSTORE(g_prev + off[q] + c * FN_TL, GP[q][c]);
                FN_TSTORE(step + off[q] + c * FN_TL, S[q][c]);
                FN_TSTORE(dw_prev + off[q] + c * FN_TL, DW[q][c]);
            }
            FN_TSTORE(last_error + grps[q] * FN_TL, last[q]);
        } else if (live[q]) {
            FN_TINY_SAVE_LANES(q, live[q]);
        }
    }
}

FN_TINY_TARGET static void
FN_TINY_CAT(fn_tiny, TI, TH, TO, FN_TINY_SC)(
    ptrdiff_t oact, ptrdiff_t n, const double *X, const double *T, const fn_trials_state *state,
    const fn_trials_rule *rule, const fn_trials_epochs *run, double *work)
{
    const ptrdiff_t n_groups = state->n_groups;
    /* The inputs broadcast once for the call: XB[(p * TI + i) * FN_TL + lane]
     * (broadcasting in the loop makes GCC shuffle them through the stack). */
    double *XB = work;
    for (ptrdiff_t j = 0; j < n * TI; j++) FN_TSTORE(XB + j * FN_TL, FN_TSPLAT(X[j]));
    double snap[(5 * TNW + 1) * FN_TL];
    /* A loop of its own for each output activation and RPROP variant (no
     * switch in the epoch: GCC would hoist the variants' common part above it,
     * and keep more of the state out of registers). */
#define FN_TINY_RUN(OA, V)                                                             \
    for (ptrdiff_t grp = 0; grp < n_groups; grp += FN_TINY_Q) {                        \
        ptrdiff_t grps[FN_TINY_Q];                                                     \
        for (int q = 0; q < FN_TINY_Q; q++) grps[q] = grp + q < n_groups ? grp + q : grp; \
        FN_TINY_CAT(fn_tiny_run, TI, TH, TO, FN_TINY_SC)(FN_T_PROBEN1, OA, V, grps, n, \
                                                         XB, T, state, rule, run, snap); \
    }
#define FN_TINY_VARIANTS(OA)                                                           \
    switch (rule->variant) {                                                           \
    case FN_T_RPROP_PLUS: FN_TINY_RUN(OA, FN_T_RPROP_PLUS) break;                      \
    case FN_T_RPROP_MINUS: FN_TINY_RUN(OA, FN_T_RPROP_MINUS) break;                    \
    case FN_T_IRPROP_MINUS: FN_TINY_RUN(OA, FN_T_IRPROP_MINUS) break;                  \
    default: FN_TINY_RUN(OA, FN_T_IRPROP_PLUS) break;                                  \
    }
    if (oact == FN_T_LINEAR) FN_TINY_VARIANTS(FN_T_LINEAR)
    else FN_TINY_VARIANTS(FN_T_PROBEN1)
#undef FN_TINY_VARIANTS
#undef FN_TINY_RUN
}

#undef FN_TINY_UPDATE
#undef FN_TINY_SAVE_LANES
#undef FN_TINY_FLUSH
#undef FN_TINY_FORWARD
#undef TI
#undef TH
#undef TO
#undef TLO
#undef TFAN
#undef TB1
#undef TW2
#undef TB2
#undef TNW
#undef TNU

#endif  /* FN_TINY_NI */
