/* Tiny networks in the lanes: one hidden layer of a few units (XOR 2-2-1,
 * encoders), whole epochs compiled for one shape.
 *
 * Their layers are too short for the generic lanes kernel (_trials.h) to pay:
 * per epoch it spends more on loop control, the layer table and round trips
 * through the work rows than on arithmetic. Here the sizes are constants: every
 * loop unrolled, a group's weights, RPROP state and gradient in local arrays
 * (registers where they fit), one example at a time, forward, backward and
 * gradient fused. Every sum runs in the generic kernel's order (forward sums in
 * source order then the bias; dE/da of a hidden unit over the output units in
 * order; the gradient over the examples in order), and the rule and the check
 * are the lane forms of _rules.h, so a lane's arithmetic is the generic
 * kernel's.
 *
 * Not an ordinary header: its first part (guarded) holds what every shape
 * shares; the rest is a template that _trials.h includes once per shape of
 * FN_TINY_SHAPES, after defining the parameters:
 *   FN_TINY_NI, FN_TINY_NH, FN_TINY_NO   inputs, hidden units, outputs;
 *   FN_TINY_SC           1: the outputs read the inputs too (shortcuts), 0: not.
 * The template defines fn_tiny_<NI>_<NH>_<NO>_<SC> (the entry) and its helpers,
 * and undefines its own macros at its end (the parameters are the includer's).
 */
#ifndef FASTNET_TINY_H
#define FASTNET_TINY_H

#include "_lanes.h"

/* The specialised shapes (n_in, n_hidden, n_out, shortcut) and activation
 * pairs (hidden, output): Proben1's networks (x/(1+|x|) hidden units, linear or
 * x/(1+|x|) outputs), the timing study's default (tanh hidden, logistic
 * outputs), Hamey's (logistic throughout) and relu hidden units with linear or
 * logistic outputs (scikit-learn's). Each pair is compiled apart (its
 * activations known to the compiler); any other pair trains in the generic
 * kernel: a pair chosen per call would compile every activation into every
 * unit of the unrolled epoch (half this module's build time). */
#ifdef FN_LANES_F32
/* float32 (_trials32): the shape without shortcuts and the pairs of Proben1's units, the
 * timing study's default network and Hamey's; the others train in the generic kernel.
 * Every shape and pair made the float instance's module compile in 49 s, these in 32
 * (the install's minute on two cores holds both value types). */
#define FN_TINY_SHAPES(X) X(2, 2, 1, 0)
#define FN_TINY_PAIRS(X) X(PROBEN1, LINEAR) X(TANH, LOGISTIC) X(LOGISTIC, LOGISTIC)
#else
#define FN_TINY_SHAPES(X) X(2, 2, 1, 1) X(2, 2, 1, 0)
#define FN_TINY_PAIRS(X) X(PROBEN1, LINEAR) X(PROBEN1, PROBEN1) X(TANH, LOGISTIC) \
    X(LOGISTIC, LOGISTIC) X(RELU, LINEAR) X(RELU, LOGISTIC)
#endif

/* The pairs and RPROP variants whose epoch loop is compiled for that variant alone
 * (no switch around the update: 4-8 % of a 1000 x 200 XOR 2-2-1 call with Proben1's network, the
 * form of Proben1's and timing studies' many trials); every other variant of every
 * pair switches around its update, which keeps the module's compile time (each
 * specialised loop costs about a second of it). */
#ifdef FN_LANES_F32
/* (float32: the timing study's default network with iRPROP- in place of Proben1's rprop+) */
#define FN_TINY_FIXED(X) X(PROBEN1, LINEAR, IRPROP_MINUS) X(TANH, LOGISTIC, IRPROP_MINUS)
#else
#define FN_TINY_FIXED(X) X(PROBEN1, LINEAR, IRPROP_MINUS) X(PROBEN1, LINEAR, RPROP_PLUS)
#endif

/* The pairs and fixed variants compiled at x86-64-v3 and in the baseline (every other
 * CPU): the timing study's default network, Hamey's and Proben1's units (XOR as
 * Proben1 trains it), each a build's second of compile per level; the others train
 * in the generic kernel there. */
#ifdef FN_LANES_F32
#define FN_TINY_PAIRS_NARROW(X) FN_TINY_PAIRS(X)     /* (float32's lists are short already) */
#define FN_TINY_FIXED_NARROW(X) FN_TINY_FIXED(X)
#else
#define FN_TINY_PAIRS_NARROW(X) X(PROBEN1, LINEAR) X(TANH, LOGISTIC) X(LOGISTIC, LOGISTIC)
#define FN_TINY_FIXED_NARROW(X) X(PROBEN1, LINEAR, RPROP_PLUS) X(TANH, LOGISTIC, IRPROP_MINUS)
#endif

/* The pairs whose queue of trials (timing studies: fn_trials_queue) has a tiny
 * kernel: the study's default network (tanh hidden, logistic outputs) and
 * Hamey's (logistic throughout); the others queue in the generic kernel. */
#define FN_TINY_QUEUE_PAIRS(X) X(TANH, LOGISTIC) X(LOGISTIC, LOGISTIC)

#define FN_TINY_UNROLL _Pragma("GCC unroll 256")

/* Groups that a tiny kernel runs side by side, as independent streams of
 * work (interleaved per example). Two: a group's weights and gradients fill
 * most of the 32 registers, so the second one's state lives on the stack, but
 * its work fills the gaps of the first one's chains (XOR 2-2-1 on this
 * build's Zen 4-class CPU, 1000 trials x 200 epochs: 0.95 ms a call against
 * 0.98 for one, about as fast as three). */
#ifndef FN_TINY_Q
#ifdef FN_LANES_F32
/* (float32: three; a group is one vector of 16 lanes, its state half a double group's
 * registers: 2-3 % of the timing study's default XOR 2-2-1 call, 1000 x 200, against two) */
#define FN_TINY_Q 3
#else
#define FN_TINY_Q 2
#endif
#endif
/* Examples whose forward passes a tiny kernel with exp-based units runs before
 * their backward passes. */
#ifndef FN_TINY_AHEAD
#define FN_TINY_AHEAD 4
#endif
/* Epochs whose errors a tiny kernel keeps before writing them to their rows. */
#define FN_TINY_CHUNK 16

/* Groups side by side in the kernels of x86-64-v3 and the baseline: their 16
 * vector registers (AVX2, SSE2; NEON has 32 of 16 bytes) hold no group's state,
 * which lives on the stack whatever Q is. */
#ifndef FN_TINY_Q_NARROW
#define FN_TINY_Q_NARROW 2
#endif

/* The errors' comparisons (fn_te: FN_TL doubles) at a level's width VB (16 or
 * 32 bytes), as FN_TCMP (_lanes.h) compares values: FN_TECMP(VB, OP, a, b) an
 * error mask (fn_tem). */
typedef double fn_te32 __attribute__((vector_size(32)));
typedef int64_t fn_te32m __attribute__((vector_size(32)));
typedef double fn_te16 __attribute__((vector_size(16)));
typedef int64_t fn_te16m __attribute__((vector_size(16)));
#define FN_TECMP(VB, OP, a, b) __extension__({                                          \
    const fn_te fn_tecmp_a_ = (a), fn_tecmp_b_ = (b);                                   \
    fn_tem fn_tecmp_m_;                                                                 \
    if ((VB) == 32)                                                                     \
        FN_TCMP_PIECES(fn_te32, fn_te32m, OP, fn_tecmp_a_, fn_tecmp_b_, fn_tecmp_m_)   \
    else FN_TCMP_PIECES(fn_te16, fn_te16m, OP, fn_tecmp_a_, fn_tecmp_b_, fn_tecmp_m_)  \
    fn_tecmp_m_; })

#define FN_TINY_CAT_(a, b, c, d, e) a##_##b##_##c##_##d##_##e
#define FN_TINY_CAT(a, b, c, d, e) FN_TINY_CAT_(a, b, c, d, e)
#define FN_TINY_CAT6_(a, b, c, d, e, f) a##_##b##_##c##_##d##_##e##_##f
#define FN_TINY_CAT6(a, b, c, d, e, f) FN_TINY_CAT6_(a, b, c, d, e, f)


/* The lanes' errors (fn_te, doubles at both value types) compared: FN_TINY_ECMP(a,
 * b, P) the lanes where predicate P (_CMP_GT_OQ, _CMP_EQ_OQ) holds, as bits;
 * FN_TINY_EMAX(a, b) a where a > b, else b (NaN: b, as maxpd); FN_GM_EBITS(k)
 * an error mask's lanes as bits. For doubles they are the value type's own. */
#if defined(FN_KM_AVAILABLE) && defined(FN_LANES_F32)
#define FN_TINY_ECMP(a, b, P) __extension__({                                          \
    const fn_te a_ = (a), b_ = (b);                                                    \
    __m512d a0_, a1_, b0_, b1_;                                                        \
    memcpy(&a0_, &a_, 64); memcpy(&a1_, (const char *)&a_ + 64, 64);                   \
    memcpy(&b0_, &b_, 64); memcpy(&b1_, (const char *)&b_ + 64, 64);                   \
    (unsigned)_mm512_kunpackb(_mm512_cmp_pd_mask(a1_, b1_, P),                         \
                              _mm512_cmp_pd_mask(a0_, b0_, P)); })
#define FN_TINY_EMAX(a, b) __extension__({ const fn_te a_ = (a), b_ = (b);            \
    FN_TESEL(a_ > b_, a_, b_); })
#elif defined(FN_KM_AVAILABLE)
#define FN_TINY_ECMP(a, b, P) FN_KM_BITS(FN_KM_CMP_(a, b, P))
#define FN_TINY_EMAX(a, b) FN_KM_MAX(a, b)
#else
#define FN_TINY_ECMP(a, b, P) ((P) == _CMP_GT_OQ ? fn_gm_ebits_(a > b) : fn_gm_ebits_(a == b))
#define FN_TINY_EMAX(a, b) __extension__({ const fn_te a_ = (a), b_ = (b);            \
    FN_TESEL(a_ > b_, a_, b_); })
#ifndef _CMP_GT_OQ
#define _CMP_GT_OQ 0x1e
#define _CMP_EQ_OQ 0x00
#endif
#endif
/* FN_TINY_EGT(a, b): a > b of errors as a mask of FN_TK (RPROP's "the error rose"). */
#if !defined(FN_LANES_F32)
#define FN_TINY_EGT(a, b) FN_TK(GT)(a, b)
#elif defined(FN_KM_AVAILABLE)
#define FN_TINY_EGT(a, b) ((FN_TK(T))FN_TINY_ECMP(a, b, _CMP_GT_OQ))
#else
#define FN_TINY_EGT(a, b) FN_TM_OF((a) > (b))
#endif
#ifdef FN_LANES_F32
#define FN_GM_EBITS(k) __extension__({ fn_tem k_ = (k); fn_gm_ebits(&k_); })
#else
#define FN_GM_EBITS(k) FN_GM_BITS(k)
#endif
#define fn_gm_ebits_(k) FN_GM_EBITS(k)

FN_INLINE unsigned
fn_gm_ebits(const fn_tem *k)
{
    unsigned b = 0;
    for (int i = 0; i < FN_TL; i++) b |= (unsigned)((*k)[i] != 0) << i;
    return b;
}

/* The canonical layer table of a one-hidden-layer network (network.py's
 * layout): hidden units from the inputs, outputs from [lo, n_in + n_h) with lo 0
 * (shortcuts) or n_in. Returns 1 and the sizes if `layers` is one. */
static int
fn_tiny_shape(const ptrdiff_t *layers, ptrdiff_t n_layers, ptrdiff_t n_in, ptrdiff_t n_w,
              ptrdiff_t n_out, int *ni, int *nh, int *no, int *sc)
{
    if (n_layers != 2) return 0;
    const ptrdiff_t *h = layers, *o = layers + FN_L_NCOLS;
    const ptrdiff_t H = h[FN_L_SIZE], lo = o[FN_L_SRC_LO];
    if (h[FN_L_START] != n_in || h[FN_L_SRC_LO] != 0 || h[FN_L_SRC_HI] != n_in
        || h[FN_L_W_OFF] != 0 || h[FN_L_B_OFF] != H * n_in) return 0;
    if (o[FN_L_START] != n_in + H || o[FN_L_SIZE] != n_out || (lo != 0 && lo != n_in)
        || o[FN_L_SRC_HI] != n_in + H || o[FN_L_W_OFF] != H * n_in + H
        || o[FN_L_B_OFF] != o[FN_L_W_OFF] + n_out * (n_in + H - lo)
        || n_w != o[FN_L_B_OFF] + n_out) return 0;
    *ni = (int)n_in; *nh = (int)H; *no = (int)n_out; *sc = lo == 0;
    return 1;
}

#ifdef FN_KM_AVAILABLE
typedef long long fn_tiny_idx __attribute__((vector_size(8 * sizeof(long long))));
typedef double fn_tiny_d8 __attribute__((vector_size(8 * sizeof(double))));
typedef double fn_tiny_d8u __attribute__((vector_size(8 * sizeof(double)), aligned(8)));

/* dst[k * ld + j] = src[j * 8 + k] for j, k < 8: eight vectors of eight lanes
 * (lane k of vector j: row k's value j) into their eight rows, in three rounds of
 * two-vector shuffles, not 64 single loads and stores. The rows are streamed to
 * memory (stores that bypass the cache) where they fill whole cache lines: a
 * timing study's history is written once and not read in the call (XOR 2-2-1
 * 1000 x 200: 1.6 MB), and its writes would otherwise first read each line
 * (ordered by the fence at the end of the kernel call, fn_tiny). */
FN_TINY_TARGET FN_INLINE void
fn_tiny_transpose8(const double *src, ptrdiff_t ss, double *dst, ptrdiff_t ld)
{
    fn_tiny_d8 r[8], t[8];
    for (int j = 0; j < 8; j++) {
        fn_tiny_d8u v;
        memcpy(&v, src + j * ss, sizeof v);
        r[j] = v;
    }
    /* pairs of elements, then pairs of pairs, then halves */
    for (int j = 0; j < 8; j += 2) {
        t[j] = __builtin_shuffle(r[j], r[j + 1], (fn_tiny_idx){0, 8, 2, 10, 4, 12, 6, 14});
        t[j + 1] = __builtin_shuffle(r[j], r[j + 1], (fn_tiny_idx){1, 9, 3, 11, 5, 13, 7, 15});
    }
    for (int j = 0; j < 8; j += 4)
        for (int i = 0; i < 2; i++) {
            r[j + i] = __builtin_shuffle(t[j + i], t[j + i + 2],
                                         (fn_tiny_idx){0, 1, 8, 9, 4, 5, 12, 13});
            r[j + i + 2] = __builtin_shuffle(t[j + i], t[j + i + 2],
                                             (fn_tiny_idx){2, 3, 10, 11, 6, 7, 14, 15});
        }
    for (int i = 0; i < 4; i++) {
        t[i] = __builtin_shuffle(r[i], r[i + 4], (fn_tiny_idx){0, 1, 2, 3, 8, 9, 10, 11});
        t[i + 4] = __builtin_shuffle(r[i], r[i + 4], (fn_tiny_idx){4, 5, 6, 7, 12, 13, 14, 15});
    }
    if ((((uintptr_t)dst | (uintptr_t)ld * sizeof(double)) & 63) == 0)
        for (int k = 0; k < 8; k++) _mm512_stream_pd(dst + k * ld, (__m512d)t[k]);
    else
        for (int k = 0; k < 8; k++) {
            const fn_tiny_d8u v = t[k];
            memcpy(dst + k * ld, &v, sizeof v);
        }
}
#endif

#endif /* FASTNET_TINY_H */

#ifdef FN_TINY_NI   /* the template, for one shape */

/* The level's forms: FN_TINY_LEVEL (the includer's) 4 for x86-64-v4 (AVX-512 mask
 * registers where the build has them), 3 for x86-64-v3, 0 for the baseline (every
 * CPU); FN_TK(op) the lane masks' operations, FN_TY_RPROP and FN_TY_CORRECT the rule
 * and check of that set, FN_TY_VB its vector bytes, FN_TY_Q its groups side by side,
 * FN_TY_E*: comparisons of the errors. */
#if FN_TINY_LEVEL == 4
#define FN_TY_ATTR FN_TINY_TARGET
#define FN_TY_SUFFIX v4
#define FN_TY_VB 64
#define FN_TY_Q FN_TINY_Q
#define FN_TY_PAIRS FN_TINY_PAIRS
#define FN_TY_FIXED FN_TINY_FIXED
#ifdef FN_KM_AVAILABLE
#define FN_TK(op) FN_KM_##op
#define FN_TY_RPROP fn_lanes_rprop_km
#define FN_TY_CORRECT fn_lanes_correct_km
#else
#define FN_TK(op) FN_GM_##op
#define FN_TY_RPROP fn_lanes_rprop_gm
#define FN_TY_CORRECT fn_lanes_correct_gm
#endif
#define FN_TY_ETM(OP, a, b) ((a) OP (b))
#define FN_TY_ECMP(a, b, P) FN_TINY_ECMP(a, b, P)
#define FN_TY_EMAX(a, b) FN_TINY_EMAX(a, b)
#define FN_TY_EGT(a, b) FN_TINY_EGT(a, b)
#define FN_TY_OPAQUE(v) FN_TINY_OPAQUE(v)
#else
#if FN_TINY_LEVEL == 3
#define FN_TY_ATTR FN_TINY_V3_TARGET
#define FN_TY_SUFFIX v3
#define FN_TY_VB 32
#define FN_TK(op) FN_GM3_##op
#define FN_TY_RPROP fn_lanes_rprop_gm3
#define FN_TY_CORRECT fn_lanes_correct_gm3
/* (the outputs rounded before the residual, as at x86-64-v4: an empty asm on each
 * ymm half hides the product from GCC's contraction into an FMA) */
#define FN_TY_OPAQUE(v) do {                                                            \
        fn_tp32 h0_, h1_;                                                               \
        memcpy(&h0_, &(v), 32);                                                         \
        memcpy(&h1_, (char *)&(v) + 32, 32);                                            \
        __asm__("" : "+x"(h0_));                                                        \
        __asm__("" : "+x"(h1_));                                                        \
        memcpy(&(v), &h0_, 32);                                                         \
        memcpy((char *)&(v) + 32, &h1_, 32);                                            \
    } while (0)
#else
#define FN_TY_ATTR FN_TINY_V0_TARGET
#define FN_TY_SUFFIX v0
#define FN_TY_VB 16
#define FN_TK(op) FN_GM0_##op
#define FN_TY_RPROP fn_lanes_rprop_gm0
#define FN_TY_CORRECT fn_lanes_correct_gm0
#define FN_TY_OPAQUE(v) FN_TINY_OPAQUE_V0(v)
#endif
#define FN_TY_Q FN_TINY_Q_NARROW
#define FN_TY_PAIRS FN_TINY_PAIRS_NARROW
#define FN_TY_FIXED FN_TINY_FIXED_NARROW
#define FN_TY_ETM(OP, a, b) FN_TECMP(FN_TY_VB, OP, a, b)
#define FN_TY_ECMP(a, b, P) ((P) == _CMP_GT_OQ ? FN_GM_EBITS(FN_TY_ETM(>, a, b))             \
                                               : FN_GM_EBITS(FN_TY_ETM(==, a, b)))
#define FN_TY_EMAX(a, b) __extension__({ const fn_te a_ = (a), b_ = (b);                 \
    FN_TESEL(FN_TY_ETM(>, a_, b_), a_, b_); })
#ifdef FN_LANES_F32
#define FN_TY_EGT(a, b) FN_TM_OF(FN_TY_ETM(>, a, b))
#else
#define FN_TY_EGT(a, b) FN_TK(GT)(a, b)
#endif
#endif

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
#define FN_TINY_NAME(f) FN_TINY_CAT6(f, TI, TH, TO, FN_TINY_SC, FN_TY_SUFFIX)

/* Epochs [e0, e1) of the errors held in sbuf (FN_TINY_CHUNK epochs of FN_TY_Q
 * groups, whole vectors: lane k's is row k) into their rows of sse_out; *top
 * raised to the largest of them (NaN not counted). Whole vectors throughout:
 * the maximum over vectors, the rows written 8 epochs at a time by a
 * transpose. Value by value (a chain of scalar maxima, 64 loads and stores per
 * 8 x 8) this took 8 % of XOR 2-2-1's kernel time, and inlined into the epoch
 * loop it cost GCC registers there. */
FN_TY_ATTR static __attribute__((noinline)) void
FN_TINY_NAME(fn_tiny_flush)(const double *sbuf, ptrdiff_t e0, ptrdiff_t e1, const ptrdiff_t *grps,
              double *sse_out, ptrdiff_t ld, double *top)
{
    fn_te m = FN_TESPLAT(*top);
    FN_TINY_UNROLL for (int q = 0; q < FN_TY_Q; q++)
        for (ptrdiff_t e = e0; e < e1; e++) {
            const fn_teu v = FN_TELOAD(sbuf + (q * FN_TINY_CHUNK + e - e0) * FN_TL);
            m = FN_TY_EMAX(v, m);              /* (NaN: m) */
        }
    double t = *top;
    for (int k = 0; k < FN_TL; k++)
        if (m[k] > t) t = m[k];
    *top = t;
    FN_TINY_UNROLL for (int q = 0; q < FN_TY_Q; q++) {
        const double *src = sbuf + q * FN_TINY_CHUNK * FN_TL;
        double *dst = sse_out + grps[q] * FN_TL * ld;
        ptrdiff_t e = e0;
#if FN_TINY_LEVEL == 4 && defined(FN_KM_AVAILABLE)
        for (; e + 8 <= e1; e += 8, src += 8 * FN_TL)
            for (int h = 0; h < FN_TL; h += 8)      /* (float32: two halves of 8 lanes) */
                fn_tiny_transpose8(src + h, FN_TL, dst + h * ld + e, ld);
#endif
        for (; e < e1; e++, src += FN_TL)
            for (int k = 0; k < FN_TL; k++) dst[k * ld + e] = src[k];
    }
}

/* The forward pass of example p with weights W into A (units) and F (f'(net)
 * of the hidden then output units), activations HA and OA (constants); as
 * fn_trials_forward_rows, sum by sum. The inputs come broadcast from XB. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_forward)(const int HA, const int OA, const fn_tvr *W, fn_tvr *A, fn_tvr *F,
                              const fn_real *XB, ptrdiff_t p)
{
    FN_TINY_UNROLL for (int i = 0; i < TI; i++) A[i] = FN_TLOAD(XB + (p * TI + i) * FN_TL);
    FN_TINY_UNROLL for (int u = 0; u < TH; u++) {
        fn_tvr s = FN_TSPLAT(0.0);
        FN_TINY_UNROLL for (int i = 0; i < TI; i++) s += W[u * TI + i] * A[i];
        s += W[TB1 + u];
        fn_lanes_activate(FN_TY_VB, HA, &s, &A[TI + u], &F[u]);
    }
    FN_TINY_UNROLL for (int o = 0; o < TO; o++) {
        fn_tvr s = FN_TSPLAT(0.0);
        FN_TINY_UNROLL for (int i = 0; i < TFAN; i++) s += W[TW2 + o * TFAN + i] * A[TLO + i];
        s += W[TB2 + o];
        fn_lanes_activate(FN_TY_VB, OA, &s, &A[TI + TH + o], &F[TH + o]);
        FN_TY_OPAQUE(A[TI + TH + o]);
    }
}

/* A group's registers: weights, gradient, RPROP state (TNW each), last and
 * this epoch's error. */
typedef struct {
    fn_tvr W[TNW], G[TNW], GP[TNW], S[TNW], DW[TNW];
    fn_te last, sse;
} FN_TINY_NAME(fn_tiny_group);

/* Group grp's state (g, as it is now) for the lanes of the bit set `lanes`,
 * into memory. Whole vectors go through `snap` first: indexing the arrays by a
 * variable lane would keep them out of registers. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_save)(const FN_TINY_NAME(fn_tiny_group) *g, unsigned lanes, ptrdiff_t grp,
                           const fn_trials_state *st, fn_real *snap)
{
    FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
        FN_TSTORE(snap + (0 * TNW + c) * FN_TL, g->W[c]);
        FN_TSTORE(snap + (1 * TNW + c) * FN_TL, g->G[c]);
        FN_TSTORE(snap + (2 * TNW + c) * FN_TL, g->GP[c]);
        FN_TSTORE(snap + (3 * TNW + c) * FN_TL, g->S[c]);
        FN_TSTORE(snap + (4 * TNW + c) * FN_TL, g->DW[c]);
    }
    double last[FN_TL];
    FN_TESTORE(last, g->last);
    const ptrdiff_t o = grp * TNW * FN_TL;
    fn_real *dst[5] = {st->w + o, st->g + o, st->g_prev + o, st->step + o, st->dw_prev + o};
    for (int k = 0; k < FN_TL; k++) {
        if (!(lanes >> k & 1)) continue;
        for (int a = 0; a < 5; a++)
            for (int c = 0; c < TNW; c++) dst[a][c * FN_TL + k] = snap[(a * TNW + c) * FN_TL + k];
        st->last_error[grp * FN_TL + k] = last[k];
    }
}

/* Example p's share of the epoch's error and gradient (into g->sse, g->G) of a
 * group, from its forward pass A, F (F is overwritten). */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_backward)(FN_TINY_NAME(fn_tiny_group) *g, ptrdiff_t p, const fn_real *T,
                               const fn_tvr *A, fn_tvr *F)
{
    fn_tvr DO[TO];
    /* dE/dnet of the outputs (E = sum (y - t)^2), of the hidden units */
    FN_TINY_UNROLL for (int o = 0; o < TO; o++) {
        const fn_tv res = A[TI + TH + o] - T[p * TO + o];
        const fn_teu re = FN_TE(res);
        g->sse += re * re;
        DO[o] = F[TH + o] * (2.0 * res);
    }
    FN_TINY_UNROLL for (int h = 0; h < TH; h++) {
        fn_tvr c = FN_TSPLAT(0.0);
        FN_TINY_UNROLL for (int o = 0; o < TO; o++) c += DO[o] * g->W[TW2 + o * TFAN + TI + h - TLO];
        F[h] *= c;
    }
    FN_TINY_UNROLL for (int h = 0; h < TH; h++) {
        g->G[TB1 + h] += F[h];
        FN_TINY_UNROLL for (int i = 0; i < TI; i++) g->G[h * TI + i] += F[h] * A[i];
    }
    FN_TINY_UNROLL for (int o = 0; o < TO; o++) {
        g->G[TB2 + o] += DO[o];
        FN_TINY_UNROLL for (int i = 0; i < TFAN; i++) g->G[TW2 + o * TFAN + i] += DO[o] * A[TLO + i];
    }
}

/* Example p's share of the epoch's error and gradient of a group at its weights. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_gradient)(const int HA, const int OA, FN_TINY_NAME(fn_tiny_group) *g,
                               ptrdiff_t p, const fn_real *XB, const fn_real *T)
{
    fn_tvr A[TNU], F[TH + TO];
    FN_TINY_NAME(fn_tiny_forward)(HA, OA, g->W, A, F, XB, p);
    FN_TINY_NAME(fn_tiny_backward)(g, p, T, A, F);
}

/* Hamey's success check of a group at its weights: the lanes that pass. */
FN_TY_ATTR FN_INLINE unsigned
FN_TINY_NAME(fn_tiny_check)(const int HA, const int OA, const FN_TINY_NAME(fn_tiny_group) *g,
                              ptrdiff_t n, const fn_real *XB, const fn_real *T, double r_c,
                              double analog)
{
    FN_TK(T) ok = FN_TK(ALL);
    ptrdiff_t p = 0;
    do {
        fn_tvr A[TNU], F[TH + TO];
        FN_TINY_NAME(fn_tiny_forward)(HA, OA, g->W, A, F, XB, p);
        FN_TINY_UNROLL for (int o = 0; o < TO; o++) FN_TY_CORRECT(&ok, &A[TI + TH + o], T[p * TO + o], r_c, analog);
    } while (++p < n);
    return FN_TK(BITS)(ok);
}

/* One epoch's error and gradient (into sse, G) of the FN_TY_Q groups gr at
 * their weights: with exp-based units the forward passes of FN_TINY_AHEAD
 * examples first (independent chains of dependent operations, which the CPU
 * overlaps), then their backward passes, in example order (the sums' order);
 * the rest one by one. With CHECK (a constant), Hamey's check of the outputs
 * of those forward passes (the weights' own) clears in ok[q] the lanes where
 * one is wrong (thresholds r_c, analog). */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_epoch)(const int HA, const int OA, const int CHECK,
                            FN_TINY_NAME(fn_tiny_group) *gr, FN_TK(T) *ok, ptrdiff_t n,
                            const fn_real *XB, const fn_real *T, double r_c, double analog)
{
    const int Q = FN_TY_Q;
    const fn_tv zero = FN_TSPLAT(0.0);
    const int ahead = HA == FN_ACT_TANH || HA == FN_ACT_LOGISTIC || OA == FN_ACT_TANH
        || OA == FN_ACT_LOGISTIC;
    FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
        gr[q].sse = FN_TESPLAT(0.0);
        FN_TINY_UNROLL for (int c = 0; c < TNW; c++) gr[q].G[c] = zero;
        if (CHECK) ok[q] = FN_TK(ALL);
    }
    /* (n >= 1: a do-while leaves no path on which G stays zero, which would
     * turn the update's masks into PHIs that GCC lowers lane by lane) */
    ptrdiff_t p = 0;
    if (ahead) {
        for (; p + FN_TINY_AHEAD <= n; p += FN_TINY_AHEAD) {
            fn_tvr A[FN_TINY_AHEAD][FN_TY_Q][TNU], F[FN_TINY_AHEAD][FN_TY_Q][TH + TO];
            FN_TINY_UNROLL for (int j = 0; j < FN_TINY_AHEAD; j++)
                FN_TINY_UNROLL for (int q = 0; q < Q; q++)
                    FN_TINY_NAME(fn_tiny_forward)(HA, OA, gr[q].W, A[j][q], F[j][q], XB, p + j);
            if (CHECK)
                FN_TINY_UNROLL for (int j = 0; j < FN_TINY_AHEAD; j++)
                    FN_TINY_UNROLL for (int q = 0; q < Q; q++)
                        FN_TINY_UNROLL for (int o = 0; o < TO; o++)
                            FN_TY_CORRECT(&ok[q], &A[j][q][TI + TH + o], T[(p + j) * TO + o],
                                            r_c, analog);
            FN_TINY_UNROLL for (int j = 0; j < FN_TINY_AHEAD; j++)
                FN_TINY_UNROLL for (int q = 0; q < Q; q++)
                    FN_TINY_NAME(fn_tiny_backward)(&gr[q], p + j, T, A[j][q], F[j][q]);
        }
    }
    /* the rest one by one (with Proben1's units, ahead is a constant 0: the
     * do-while as it always ran) */
    if (!ahead || p < n) {
        do {
            FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
                if (CHECK) {
                    fn_tvr A[TNU], F[TH + TO];
                    FN_TINY_NAME(fn_tiny_forward)(HA, OA, gr[q].W, A, F, XB, p);
                    FN_TINY_UNROLL for (int o = 0; o < TO; o++)
                        FN_TY_CORRECT(&ok[q], &A[TI + TH + o], T[p * TO + o], r_c, analog);
                    FN_TINY_NAME(fn_tiny_backward)(&gr[q], p, T, A, F);
                } else {
                    FN_TINY_NAME(fn_tiny_gradient)(HA, OA, &gr[q], p, XB, T);
                }
            }
        } while (++p < n);
    }
}

/* RPROP's update (variant V: a switch around the update alone, unless V is a
 * constant) of the FN_TY_Q groups gr, each from its epoch's error and
 * gradient; then each group's last error is this epoch's. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_update)(const int V, FN_TINY_NAME(fn_tiny_group) *gr,
                             const fn_lanes_steps *k)
{
    const int Q = FN_TY_Q;
#define FN_TINY_UPDATE(VV)                                                              \
    FN_TINY_UNROLL for (int q = 0; q < Q; q++) {                                        \
        const FN_TK(T) rose = FN_TY_EGT(gr[q].sse, gr[q].last);                      \
        FN_TINY_UNROLL for (int c = 0; c < TNW; c++)                                    \
            FN_TY_RPROP(VV, &gr[q].W[c], &gr[q].G[c], &gr[q].GP[c], &gr[q].S[c],      \
                          &gr[q].DW[c], &rose, k);                                      \
        gr[q].last = gr[q].sse;                                                         \
    }
    switch (V) {
    case FN_RPROP_PLUS: FN_TINY_UPDATE(FN_RPROP_PLUS); break;
    case FN_RPROP_MINUS: FN_TINY_UPDATE(FN_RPROP_MINUS); break;
    case FN_IRPROP_MINUS: FN_TINY_UPDATE(FN_IRPROP_MINUS); break;
    default: FN_TINY_UPDATE(FN_IRPROP_PLUS); break;
    }
#undef FN_TINY_UPDATE
}

/* Group grps[q]'s state from memory into gr[q] (off[q]: its offset), and the
 * lanes that train (status 0) as bits into live[q]; returns their union. */
FN_TY_ATTR FN_INLINE unsigned
FN_TINY_NAME(fn_tiny_load)(FN_TINY_NAME(fn_tiny_group) *gr, const ptrdiff_t *grps,
                           const fn_trials_state *st, ptrdiff_t *off, unsigned *live)
{
    unsigned any = 0;
    FN_TINY_UNROLL for (int q = 0; q < FN_TY_Q; q++) {
        off[q] = grps[q] * TNW * FN_TL;
        live[q] = 0;
        for (int l = 0; l < FN_TL; l++)
            live[q] |= (unsigned)(st->status[grps[q] * FN_TL + l] == 0) << l;
        any |= live[q];
        FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
            gr[q].W[c] = FN_TLOAD(st->w + off[q] + c * FN_TL);
            gr[q].G[c] = FN_TLOAD(st->g + off[q] + c * FN_TL);
            gr[q].GP[c] = FN_TLOAD(st->g_prev + off[q] + c * FN_TL);
            gr[q].S[c] = FN_TLOAD(st->step + off[q] + c * FN_TL);
            gr[q].DW[c] = FN_TLOAD(st->dw_prev + off[q] + c * FN_TL);
        }
        gr[q].last = FN_TELOAD(st->last_error + grps[q] * FN_TL);
    }
    return any;
}

/* The groups' state back into memory: whole for a group whose lanes all
 * train, through fn_tiny_save for the lanes that train of the others. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_store)(const FN_TINY_NAME(fn_tiny_group) *gr, const ptrdiff_t *grps,
                            const fn_trials_state *st, const ptrdiff_t *off,
                            const unsigned *live, fn_real *snap)
{
    const unsigned full = (1u << FN_TL) - 1;
    FN_TINY_UNROLL for (int q = 0; q < FN_TY_Q; q++) {
        if (live[q] == full) {
            FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
                FN_TSTORE(st->w + off[q] + c * FN_TL, gr[q].W[c]);
                FN_TSTORE(st->g + off[q] + c * FN_TL, gr[q].G[c]);
                FN_TSTORE(st->g_prev + off[q] + c * FN_TL, gr[q].GP[c]);
                FN_TSTORE(st->step + off[q] + c * FN_TL, gr[q].S[c]);
                FN_TSTORE(st->dw_prev + off[q] + c * FN_TL, gr[q].DW[c]);
            }
            FN_TESTORE(st->last_error + grps[q] * FN_TL, gr[q].last);
        } else if (live[q]) {
            FN_TINY_NAME(fn_tiny_save)(&gr[q], live[q], grps[q], st, snap);
        }
    }
}

/* The lanes `lanes` (bits) of group grps[q] freeze with status s: their state
 * into memory, out of live[q]. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_freeze)(const FN_TINY_NAME(fn_tiny_group) *g, unsigned lanes, ptrdiff_t grp,
                             const fn_trials_state *st, fn_real *snap, int64_t s, unsigned *live)
{
    FN_TINY_NAME(fn_tiny_save)(g, lanes, grp, st, snap);
    for (int l = 0; l < FN_TL; l++)
        if (lanes >> l & 1) st->status[grp * FN_TL + l] = s;
    *live &= ~lanes;
}

/* Groups grps[0 .. FN_TY_Q) side by side (independent streams of work that
 * hide each other's latencies); a group repeated for the last few (the
 * streams then compute and write the same). HA, OA: the hidden and output
 * activations (constants), V the RPROP variant (fn_tiny_update; an epoch loop
 * for every variant would multiply the code by four).
 * Every lane runs every epoch; a lane that is frozen (status != 0 when the
 * call starts, or stopped during it) computes on, but its state in memory is
 * the one it had when it froze: lanes never mix, so the others are
 * unaffected. That keeps masks out of the epoch (lane status is a bit set,
 * handled in scalar code once per epoch). */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_run)(const int HA, const int OA, const int V, const ptrdiff_t *grps,
                          ptrdiff_t n, const fn_real *XB, const fn_real *T,
                          const fn_trials_state *state, const fn_rule *rule,
                          const fn_trials_epochs *run, fn_real *snap)
{
    /* (local copies, read once: the stores through double pointers would
     * otherwise make the compiler reload the fields) */
    const fn_trials_state st = *state;
    const fn_trials_epochs ep_ = *run;
    /* (zeroed first, a store the compiler drops: without it GCC takes the
     * vectors in the variants' branches for unset, -Wmaybe-uninitialized) */
    fn_lanes_steps k = {0};
    fn_lanes_steps_init(&k, rule);
    const int Q = FN_TY_Q;
    const fn_teu zero = FN_TESPLAT(0.0), scale = FN_TESPLAT(ep_.sse_scale);
    /* Each epoch's errors (times sse_scale) wait here, whole vectors, for their
     * scattered places in sse_out: lane k's is row k. */
    double sbuf[FN_TY_Q * FN_TINY_CHUNK * FN_TL];
    ptrdiff_t off[FN_TY_Q];
    unsigned live[FN_TY_Q];               /* lanes that train (status 0) */
    FN_TINY_NAME(fn_tiny_group) gr[FN_TY_Q];
    unsigned any = FN_TINY_NAME(fn_tiny_load)(gr, grps, &st, off, live);
    ptrdiff_t ep = 0, ep0 = 0;
    double top = -INFINITY;                 /* the largest error written (*sse_max) */
    for (; ep < ep_.n_epochs && any; ep++) {
        FN_TINY_NAME(fn_tiny_epoch)(HA, OA, 0, gr, (FN_TK(T) *)NULL, n, XB, T, 0.0, 0.0);
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
            FN_TESTORE(sbuf + (q * FN_TINY_CHUNK + ep - ep0) * FN_TL, gr[q].sse * scale);
            /* Lanes whose error is not finite stop here, un-updated. */
            const unsigned bad = ~FN_TY_ECMP(gr[q].sse - gr[q].sse, zero, _CMP_EQ_OQ) & live[q];
            if (__builtin_expect(bad != 0, 0))
                FN_TINY_NAME(fn_tiny_freeze)(&gr[q], bad, grps[q], &st, snap, ep + 1, &live[q]);
        }
        FN_TINY_NAME(fn_tiny_update)(V, gr, &k);
        if (ep_.check_every > 0 && (ep + 1) % ep_.check_every == 0) {
            FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
                if (!live[q]) continue;
                const unsigned done = live[q] & FN_TINY_NAME(fn_tiny_check)(
                    HA, OA, &gr[q], n, XB, T, ep_.r_c, ep_.analog);
                if (done)
                    FN_TINY_NAME(fn_tiny_freeze)(&gr[q], done, grps[q], &st, snap, -(ep + 1),
                                                 &live[q]);
            }
        }
        any = 0;
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) any |= live[q];
        if (ep + 1 - ep0 == FN_TINY_CHUNK) {
            FN_TINY_NAME(fn_tiny_flush)(sbuf, ep0, ep + 1, grps, ep_.sse_out, ep_.ld, &top);
            ep0 = ep + 1;
        }
    }
    FN_TINY_NAME(fn_tiny_flush)(sbuf, ep0, ep, grps, ep_.sse_out, ep_.ld, &top);
    if (top > *ep_.sse_max) *ep_.sse_max = top;
    FN_TINY_NAME(fn_tiny_store)(gr, grps, &st, off, live, snap);
}

/* Lanes `lanes` (bits) of group g take the queue's next trials (fn_trials_take's
 * state: the initial weights and steps, zero slopes and changes, last error
 * +inf), through `snap`: the lanes that took one, as bits; trial[l] -1 for
 * the others. */
FN_TY_ATTR FN_INLINE unsigned
FN_TINY_NAME(fn_tiny_take)(FN_TINY_NAME(fn_tiny_group) *g, unsigned lanes, ptrdiff_t *trial,
                           fn_trials_queue *qu, fn_real *snap)
{
    fn_real *sw = snap, *sgp = snap + TNW * FN_TL, *sdw = sgp + TNW * FN_TL;
    fn_real *ss = sdw + TNW * FN_TL;
    double sl[FN_TL];
    FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
        FN_TSTORE(sw + c * FN_TL, g->W[c]);
        FN_TSTORE(sgp + c * FN_TL, g->GP[c]);
        FN_TSTORE(sdw + c * FN_TL, g->DW[c]);
        FN_TSTORE(ss + c * FN_TL, g->S[c]);
    }
    FN_TESTORE(sl, g->last);
    unsigned took = 0;
    for (int l = 0; l < FN_TL; l++) {
        if (!(lanes >> l & 1)) continue;
        trial[l] = fn_trials_take(qu, l, TNW, sw, sgp, sdw, ss, sl);
        if (trial[l] >= 0) took |= 1u << l;
    }
    FN_TINY_UNROLL for (int c = 0; c < TNW; c++) {
        g->W[c] = FN_TLOAD(sw + c * FN_TL);
        g->GP[c] = FN_TLOAD(sgp + c * FN_TL);
        g->DW[c] = FN_TLOAD(sdw + c * FN_TL);
        g->S[c] = FN_TLOAD(ss + c * FN_TL);
    }
    g->last = FN_TELOAD(sl);
    return took;
}

/* A queue group's record of its lanes' trials (fn_trials_queue): epochs
 * trained t, the first, largest (at epoch top_ep) and smallest error. */
typedef struct {
    fn_te t, first, top, top_ep, low;
} FN_TINY_NAME(fn_tiny_record);

/* Lanes `lanes` of group g (record r) stop, why[l] each: into the queue. */
FN_TY_ATTR static __attribute__((noinline)) void
FN_TINY_NAME(fn_tiny_finish)(const FN_TINY_NAME(fn_tiny_group) *g,
                             const FN_TINY_NAME(fn_tiny_record) *r, unsigned lanes,
                             const ptrdiff_t *trial, const int64_t *why, fn_trials_queue *qu,
                             fn_real *snap)
{
    double t[FN_TL], first[FN_TL], top[FN_TL], top_ep[FN_TL], low[FN_TL];
    FN_TINY_UNROLL for (int c = 0; c < TNW; c++) FN_TSTORE(snap + c * FN_TL, g->W[c]);
    FN_TESTORE(t, r->t);
    FN_TESTORE(first, r->first);
    FN_TESTORE(top, r->top);
    FN_TESTORE(top_ep, r->top_ep);
    FN_TESTORE(low, r->low);
    for (int l = 0; l < FN_TL; l++) {
        if (!(lanes >> l & 1)) continue;
        const ptrdiff_t i = trial[l], e = (ptrdiff_t)t[l];
        fn_trials_finish(qu, i, e, why[l], snap, l, TNW);
        if (e > 0) {
            qu->first[i] = first[l];
            qu->top[i] = top[l];
            qu->top_epoch[i] = (int64_t)top_ep[l];
            qu->low[i] = low[l];
        }
    }
}

/* After an epoch of group g (record r, lanes live, trials trial): the lanes
 * that end (Hamey's check passed in ok, the epoch limit, a non-finite error)
 * leave into the queue (their bits returned and out of *live); the records of
 * the others take the epoch's error (sc: times sse_scale; into the history
 * and *top_all), t advances; *below: the lanes ErrorBelow stops after the update. */
FN_TY_ATTR FN_INLINE unsigned
FN_TINY_NAME(fn_tiny_queue_epoch)(FN_TINY_NAME(fn_tiny_group) *g, FN_TINY_NAME(fn_tiny_record) *r,
                                  const FN_TK(T) *ok, unsigned *live, const ptrdiff_t *trial,
                                  const fn_trials_epochs *e, fn_trials_queue *qu, fn_real *snap,
                                  double *top_all, unsigned *below)
{
    const fn_teu zero = FN_TESPLAT(0.0), one = FN_TESPLAT(1.0), scale = FN_TESPLAT(e->sse_scale);
    const fn_teu t_max = FN_TESPLAT((double)e->t_max), below_v = FN_TESPLAT(qu->below);
    const unsigned full = (1u << FN_TL) - 1;
    const fn_teu sc = g->sse * scale, tq = r->t;
    const unsigned right = e->check_every > 0 ? FN_TK(BITS)(*ok) & FN_GM_EBITS(FN_TY_ETM(>=, tq, one)) : 0;
    const unsigned ends = FN_GM_EBITS(FN_TY_ETM(>=, tq, t_max));
    const unsigned bad = ~FN_GM_EBITS(FN_TY_ETM(==, g->sse - g->sse, zero));
    const unsigned stopped = *live & (right | ends | bad);
    if (__builtin_expect(stopped != 0, 0)) {
        int64_t why[FN_TL];
        double tl[FN_TL];
        FN_TESTORE(tl, tq);
        for (int l = 0; l < FN_TL; l++)
            why[l] = fn_trials_why((ptrdiff_t)tl[l], right >> l & 1, 0, !(bad >> l & 1), e);
        FN_TINY_NAME(fn_tiny_finish)(g, r, stopped, trial, why, qu, snap);
        *live &= ~stopped;
    }
    /* the records of the lanes that train on (the others are refilled or idle) */
    const fn_tem up = FN_TY_ETM(>, sc, r->top);
    r->top_ep = FN_TESEL(up, tq + one, r->top_ep);
    r->top = FN_TESEL(up, sc, r->top);
    r->low = FN_TESEL(FN_TY_ETM(<, sc, r->low), sc, r->low);
    r->first = FN_TESEL(FN_TY_ETM(==, tq, zero), sc, r->first);
    double v[FN_TL], tl[FN_TL];
    FN_TESTORE(v, sc);
    if (qu->history != NULL || *live != full) {
        FN_TESTORE(tl, tq);
        for (int l = 0; l < FN_TL; l++) {
            if (!(*live >> l & 1)) continue;
            if (qu->history != NULL) qu->history[trial[l] * qu->ld + (ptrdiff_t)tl[l]] = v[l];
            if (v[l] > *top_all) *top_all = v[l];
        }
    } else {
        for (int l = 0; l < FN_TL; l++) if (v[l] > *top_all) *top_all = v[l];
    }
    r->t = tq + one;
    /* (ErrorBelow every epoch: the lanes below stop after the update) */
    *below = qu->below_every == 1 ? *live & FN_GM_EBITS(FN_TY_ETM(<, sc, below_v)) : 0;
    return stopped;
}

/* After the update: the lanes `below` of group g leave (ErrorBelow), and every
 * lane that left takes the queue's next trial (its record anew); returns the
 * lanes that train. */
FN_TY_ATTR FN_INLINE unsigned
FN_TINY_NAME(fn_tiny_queue_refill)(FN_TINY_NAME(fn_tiny_group) *g, FN_TINY_NAME(fn_tiny_record) *r,
                                   unsigned live, unsigned stopped, unsigned below,
                                   ptrdiff_t *trial, fn_trials_queue *qu, fn_real *snap)
{
    const fn_teu zero = FN_TESPLAT(0.0), inf = FN_TESPLAT(INFINITY), nan = FN_TESPLAT(NAN);
    if (__builtin_expect(below != 0, 0)) {
        int64_t why[FN_TL];
        double tl[FN_TL];
        FN_TESTORE(tl, r->t);
        for (int l = 0; l < FN_TL; l++) why[l] = -(int64_t)tl[l];
        FN_TINY_NAME(fn_tiny_finish)(g, r, below, trial, why, qu, snap);
        live &= ~below;
        stopped |= below;
    }
    if (__builtin_expect(stopped != 0, 0)) {
        const unsigned took = FN_TINY_NAME(fn_tiny_take)(g, stopped, trial, qu, snap);
        int64_t bits[FN_TL];
        for (int l = 0; l < FN_TL; l++) bits[l] = -(int64_t)(took >> l & 1);
        fn_tem m;
        memcpy(&m, bits, sizeof m);
        r->t = FN_TESEL(m, zero, r->t);
        r->first = FN_TESEL(m, nan, r->first);
        r->top = FN_TESEL(m, -inf, r->top);
        r->top_ep = FN_TESEL(m, zero, r->top_ep);
        r->low = FN_TESEL(m, inf, r->low);
        live |= took;
    }
    return live;
}

/* The trials of the queue qu in the lanes of FN_TY_Q groups, each lane
 * taking trial after trial (fn_trials_queue in _trials.h); Hamey's check on
 * every epoch's forward pass (run->check_every 1) or ErrorBelow every epoch
 * (qu->below_every 1), no w_limit. HA, OA, V as
 * fn_tiny_run's. The lanes' records stay in vectors; a pass whose lanes all
 * train on costs no scalar work beyond a test of its stop mask. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_queue_run)(const int HA, const int OA, const int V, ptrdiff_t n,
                                const fn_real *XB, const fn_real *T, const fn_rule *rule,
                                const fn_trials_epochs *run, fn_trials_queue *qu, fn_real *snap)
{
    fn_lanes_steps k = {0};
    fn_lanes_steps_init(&k, rule);
    const int Q = FN_TY_Q;
    const fn_trials_epochs e = *run;
    const fn_tv zero = FN_TSPLAT(0.0);
    const fn_teu ezero = FN_TESPLAT(0.0), inf = FN_TESPLAT(INFINITY), nan = FN_TESPLAT(NAN);
    const unsigned full = (1u << FN_TL) - 1;
    FN_TINY_NAME(fn_tiny_group) gr[FN_TY_Q];
    FN_TINY_NAME(fn_tiny_record) rec[FN_TY_Q];
    ptrdiff_t trial[FN_TY_Q][FN_TL];
    unsigned live[FN_TY_Q], any = 0;
    double top_all = -INFINITY;
    FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
        FN_TINY_UNROLL for (int c = 0; c < TNW; c++)
            gr[q].W[c] = gr[q].G[c] = gr[q].GP[c] = gr[q].S[c] = gr[q].DW[c] = zero;
        gr[q].last = gr[q].sse = inf;
        rec[q] = (FN_TINY_NAME(fn_tiny_record)){ezero, nan, -inf, ezero, inf};
        live[q] = FN_TINY_NAME(fn_tiny_take)(&gr[q], full, trial[q], qu, snap);
        any |= live[q];
    }
    while (any) {
        FN_TK(T) ok[FN_TY_Q];
        FN_TINY_NAME(fn_tiny_epoch)(HA, OA, 1, gr, ok, n, XB, T, e.r_c, e.analog);
        unsigned stopped[FN_TY_Q], below[FN_TY_Q];
        FN_TINY_UNROLL for (int q = 0; q < Q; q++)
            stopped[q] = FN_TINY_NAME(fn_tiny_queue_epoch)(&gr[q], &rec[q], &ok[q], &live[q],
                                                           trial[q], &e, qu, snap, &top_all,
                                                           &below[q]);
        FN_TINY_NAME(fn_tiny_update)(V, gr, &k);
        any = 0;
        FN_TINY_UNROLL for (int q = 0; q < Q; q++) {
            live[q] = FN_TINY_NAME(fn_tiny_queue_refill)(&gr[q], &rec[q], live[q], stopped[q],
                                                         below[q], trial[q], qu, snap);
            any |= live[q];
        }
    }
    if (top_all > *e.sse_max) *e.sse_max = top_all;
}

/* The queue qu's trials in the tiny kernel of the pair (hact, oact) (one of
 * FN_TINY_QUEUE_PAIRS; RPROP, check every epoch). work: n * TI vectors. */
FN_TY_ATTR static void
FN_TINY_NAME(fn_tiny_queue)(ptrdiff_t hact, ptrdiff_t oact, ptrdiff_t n, const fn_real *X,
                            const fn_real *T, const fn_rule *rule,
                            const fn_trials_epochs *run, fn_trials_queue *qu, fn_real *work)
{
    fn_real *XB = work;
    for (ptrdiff_t j = 0; j < n * TI; j++) FN_TSTORE(XB + j * FN_TL, FN_TSPLAT(X[j]));
    fn_real snap[(4 * TNW + 1) * FN_TL];
#define FN_TINY_QUEUE_CALL(h, o)                                                            \
    if (hact == FN_ACT_##h && oact == FN_ACT_##o)                                           \
        FN_TINY_NAME(fn_tiny_queue_run)(FN_ACT_##h, FN_ACT_##o, rule->code, n, XB, T, rule, \
                                        run, qu, snap);                                     \
    else
    FN_TINY_QUEUE_PAIRS(FN_TINY_QUEUE_CALL) {}
#undef FN_TINY_QUEUE_CALL
}

/* Every group, FN_TY_Q at a time, with activations HA, OA (constants) and
 * variant V. */
FN_TY_ATTR FN_INLINE void
FN_TINY_NAME(fn_tiny_groups)(const int HA, const int OA, const int V, ptrdiff_t n, const fn_real *XB,
                             const fn_real *T, const fn_trials_state *state,
                             const fn_rule *rule, const fn_trials_epochs *run, fn_real *snap)
{
    for (ptrdiff_t grp = 0; grp < state->n_groups; grp += FN_TY_Q) {
        ptrdiff_t grps[FN_TY_Q];
        for (int q = 0; q < FN_TY_Q; q++) grps[q] = grp + q < state->n_groups ? grp + q : grp;
        FN_TINY_NAME(fn_tiny_run)(HA, OA, V, grps, n, XB, T, state, rule, run, snap);
    }
}

/* Run run->n_epochs epochs of epoch-batched RPROP for every group (as
 * fn_trials_train_generic), hidden activation hact and output activation oact:
 * one of the pairs of FN_TINY_PAIRS, each with its activations compiled in
 * (fn_trials_tiny sends no other pair here). work: n * TI vectors. */
FN_TY_ATTR static void
FN_TINY_NAME(fn_tiny)(ptrdiff_t hact, ptrdiff_t oact, ptrdiff_t n, const fn_real *X,
                      const fn_real *T, const fn_trials_state *state, const fn_rule *rule,
                      const fn_trials_epochs *run, fn_real *work)
{
    /* The inputs broadcast once for the call: XB[(p * TI + i) * FN_TL + lane]
     * (broadcasting in the loop makes GCC shuffle them through the stack). */
    fn_real *XB = work;
    for (ptrdiff_t j = 0; j < n * TI; j++) FN_TSTORE(XB + j * FN_TL, FN_TSPLAT(X[j]));
    fn_real snap[(5 * TNW + 1) * FN_TL];
#define FN_TINY_FIXED_CALL(h, o, v)                                                         \
    if (hact == FN_ACT_##h && oact == FN_ACT_##o && rule->code == FN_##v)                   \
        FN_TINY_NAME(fn_tiny_groups)(FN_ACT_##h, FN_ACT_##o, FN_##v, n, XB, T, state, rule, \
                                     run, snap);                                            \
    else
#define FN_TINY_PAIR_CALL(h, o)                                                             \
    if (hact == FN_ACT_##h && oact == FN_ACT_##o)                                           \
        FN_TINY_NAME(fn_tiny_groups)(FN_ACT_##h, FN_ACT_##o, rule->code, n, XB, T, state, rule, \
                                     run, snap);                                    \
    else
    FN_TY_FIXED(FN_TINY_FIXED_CALL) FN_TY_PAIRS(FN_TINY_PAIR_CALL) {}
#undef FN_TINY_FIXED_CALL
#undef FN_TINY_PAIR_CALL
#if FN_TINY_LEVEL == 4 && defined(FN_KM_AVAILABLE)
    _mm_sfence();                           /* (the streamed rows of fn_tiny_transpose8) */
#endif
}

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
#undef FN_TINY_NAME
#undef FN_TY_ATTR
#undef FN_TY_SUFFIX
#undef FN_TY_VB
#undef FN_TY_Q
#undef FN_TY_PAIRS
#undef FN_TY_FIXED
#undef FN_TK
#undef FN_TY_RPROP
#undef FN_TY_CORRECT
#undef FN_TY_ETM
#undef FN_TY_ECMP
#undef FN_TY_EMAX
#undef FN_TY_EGT
#undef FN_TY_OPAQUE

#endif /* FN_TINY_NI */
