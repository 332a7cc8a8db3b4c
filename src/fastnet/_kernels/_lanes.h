/* Many trials of one topology side by side in the lanes of a vector: the
 * layout, the vector and mask operations, the CPU levels, the trials' state.
 * The kernels built on it: the lane forms of _rules.h (the per-weight rules and
 * Hamey's check, instances below), _lanes_pass.h (forward and backward passes of a block of examples),
 * _tiny.h (whole epochs of tiny networks), _trials.h (the epoch loop, the
 * entry points).
 *
 * Timing studies train hundreds of tiny networks (XOR 2-2-1, encoders, 4+2
 * Proben1 nets) whose layers fill no vector on their own: one vector operation
 * applies the same weight of FN_TL trials instead. Lane by lane the arithmetic
 * is that of one network, and no lane reads another.
 *
 * Layout. Trials are grouped FN_TL at a time. Every per-weight quantity of a
 * group (weights, gradient, the rule's state arrays) is a
 * (n_w, FN_TL) row-major block: the FN_TL values of weight c are contiguous. The
 * training inputs X (n, n_in) and targets T (n, n_out) are shared by all trials.
 * The layer table is the single-network one (_constants.h: start, size, src_lo,
 * src_hi, w_off, b_off, act per layer), so W_j's row u, column s-src_lo is
 * weight w_off + u * (src_hi - src_lo) + (s - src_lo).
 *
 * Each lane carries a status: 0 trains; anything else is frozen (its state is
 * not changed; padding lanes and finished trials). A lane whose epoch error is
 * not finite gets status k (its k-th epoch of this call, weights left as they
 * were before that epoch's update); one that passes the success check after
 * its k-th epoch gets -k; one whose weights reach the call's w_limit after k
 * epochs gets FN_STATUS_BEYOND + k (fn_trials_epochs). A group whose lanes are all frozen stops early.
 *
 * Every sum runs in a fixed order written in the code (no reassociation
 * flags): one machine reproduces a run bit for bit. The sums are ordered
 * differently from the single-network kernels, so a trial agrees with
 * train_rprop to rounding, not bit for bit.
 *
 * Compiled once per CPU level of _cpu.h (x86-64-v4 runs each operation of a group,
 * 8 doubles or 16 floats, as one AVX-512 instruction, v3 as two AVX2 ones, the
 * baseline as four SSE2 ones), which chooses one, FASTNET_SIMD included; and once
 * per value type, in its own module (_trials, _trials32: below).
 *
 * Vectors go to and from functions by pointer, never by value: a vector
 * argument or result would have a different ABI in each clone (GCC's -Wpsabi),
 * and the functions are static inline, so the pointers vanish when inlined.
 */
#ifndef FASTNET_LANES_H
#define FASTNET_LANES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "_constants.h"
#include "_rules.h"
#include "_activations.h"
#include "_cpu.h"

/* The value type of the lanes, fn_real: double, or float where the includer
 * defines FN_LANES_F32 before the first inclusion (the module _trials32: the
 * same sources compiled again for float, as FANN compiles one source as float
 * and double). A group is one 64-byte vector of lanes: FN_TL = 8 doubles or 16
 * floats (one AVX-512 register; two AVX2 ones at x86-64-v3, four SSE2 ones at
 * the baseline). fn_rint is the integer of the value's width (the masks'
 * lanes). The trials' errors (their sums of squared errors, the last epoch's
 * error of irprop+, the records of a queue) are doubles at both types, fn_te
 * (FN_TL doubles): a float32 trial's error is summed in double, as Proben1's
 * measures need (it must not drift with the number of examples). */
/* The float32 lanes train with subnormal results flushed to zero (_ftz.h: for the
 * call, restored after it; per thread), as XLA's CPU backend computes (the encoder
 * 10-5-10 at epoch 200: 320 against 165 ns per trial-epoch). float64 keeps IEEE's
 * gradual underflow. */
#include "_ftz.h"
#ifdef FN_LANES_F32
#define FN_FTZ_BEGIN const unsigned long fn_csr_ = fn_ftz_begin(1);
#define FN_FTZ_END fn_ftz_end(fn_csr_);
#else
#define FN_FTZ_BEGIN
#define FN_FTZ_END
#endif

#ifdef FN_LANES_F32
typedef float fn_real;
typedef int32_t fn_rint;
#define FN_TL 16
#define FN_RINT_MAX INT32_MAX
#define FN_RINT_MIN INT32_MIN
#else
typedef double fn_real;
typedef int64_t fn_rint;
#define FN_TL 8
#define FN_RINT_MAX INT64_MAX
#define FN_RINT_MIN INT64_MIN
#endif

/* Examples per block: the block's activations and dE/dnet stay in cache
 * between the forward/backward passes and the gradient pass. */
#ifndef FN_TBLOCK
#define FN_TBLOCK 32
#endif

#define FN_INLINE static inline __attribute__((always_inline))

/* Alignment lowered to a value's: the work buffers come from NumPy, which
 * aligns to 16 bytes, and a fn_tv* dereference must not assume 64. */
typedef fn_real fn_tv
    __attribute__((vector_size(FN_TL * sizeof(fn_real)), aligned(sizeof(fn_real))));
typedef fn_rint fn_tm __attribute__((vector_size(FN_TL * sizeof(fn_real))));
/* The same vector with its natural alignment, for local arrays that the
 * compiler may keep in registers. */
typedef fn_real fn_tvr __attribute__((vector_size(FN_TL * sizeof(fn_real))));
/* The lanes' errors (doubles at both value types) and their masks; FN_TE(v)
 * a vector of values as errors, FN_TM_OF(k) an error mask as a value mask (both
 * nothing for doubles). */
typedef double fn_te __attribute__((vector_size(FN_TL * sizeof(double))));
typedef int64_t fn_tem __attribute__((vector_size(FN_TL * sizeof(double))));
/* (fn_te with the alignment of a double, as fn_tv: the form of loads, stores and locals
 * that fn_tv had for the errors when they were values, so that the float64 kernels
 * compile as before) */
typedef double fn_teu __attribute__((vector_size(FN_TL * sizeof(double)), aligned(8)));
#define FN_TE(v) __builtin_convertvector((v), fn_te)
#define FN_TM_OF(k) __builtin_convertvector((k), fn_tm)
#define FN_TEM_OF(k) __builtin_convertvector((k), fn_tem)
#define FN_TESEL(m, a, b) ((fn_teu)(((m) & (fn_tem)(a)) | (~(m) & (fn_tem)(b))))
#define FN_TESPLAT(x) ((double)(x) - (fn_teu){0})

/* Loads and stores go through memcpy (no alignment needed). */
#define FN_TLOAD(p) __extension__({ fn_tv v_; memcpy(&v_, (p), sizeof v_); v_; })
#define FN_TSTORE(p, v) __extension__({ fn_tv s_ = (v); memcpy((p), &s_, sizeof s_); })
#define FN_TELOAD(p) __extension__({ fn_teu v_; memcpy(&v_, (p), sizeof v_); v_; })
#define FN_TESTORE(p, v) __extension__({ fn_teu s_ = (v); memcpy((p), &s_, sizeof s_); })
#define FN_TSEL(m, a, b) ((fn_tv)(((m) & (fn_tm)(a)) | (~(m) & (fn_tm)(b))))
/* x - 0 is x exactly, -0.0 included (x + 0 would turn -0.0 into +0.0); a double
 * x rounded to the value type first. */
#define FN_TSPLAT(x) ((fn_real)(x) - (fn_tv){0})
/* |x|, the sign bit cleared (one AND; 1 + |x| is the same as with a select). */
#define FN_TABS(x) ((fn_tv)((fn_tm)(x) & ((fn_tm){0} + FN_RINT_MAX)))
/* sqrt of each lane (one instruction a vector with -fno-math-errno). */
#ifdef FN_LANES_F32
#define FN_TSQRT1 sqrtf
#else
#define FN_TSQRT1 sqrt
#endif
#define FN_TSQRT(x) __extension__({ const fn_tv q_ = (x); fn_tvr r_;                    \
    for (int k_ = 0; k_ < FN_TL; k_++) { r_[k_] = FN_TSQRT1(q_[k_]); } r_; })
/* A step t >= +0 with the sign of -g: t | (~g & sign), by bits. */
#define FN_TNEGSIGN(t, g) ((fn_tv)((fn_tm)(t) | (~(fn_tm)(g) & ((fn_tm){0} + FN_RINT_MIN))))

/* Lane masks, two representations with the same operations, FN_<set>_<op>:
 *   T         the mask type;
 *   LT, GT, LE, EQ (a, b)   ordered comparisons (false with NaN);
 *   NZ(a)     a != 0 (false with NaN);
 *   SEL(k, a, b)   a where k, else b;
 *   MIN(a, b), MAX(a, b)   a where a < b (a > b), else b (as x86's minpd, maxpd);
 *   ALL       every lane;  BITS(k)  the lanes as bits of an unsigned;
 * and the value operations of the rules' template (_rules.h): V (fn_tvr),
 *   SPLAT, ABS, SQRT, NEG_SIGN_TIMES(g, t) (-sign(g) t by bits: -0.0 where g
 *   is 0 or NaN, as the scalar -0.0 t for a finite t) and STEP_UNLESS(k, w, g, t)
 *   (w moved by it where g, zeroed where k, is not 0: one select).
 * FN_GM: GCC's generic vectors (masks: all-ones lanes), for every CPU level. */
#define FN_GM_V fn_tvr
#define FN_GM_T fn_tm
#define FN_GM_LT(a, b) ((a) < (b))
#define FN_GM_GT(a, b) ((a) > (b))
#define FN_GM_LE(a, b) ((a) <= (b))
#define FN_GM_EQ(a, b) ((a) == (b))
#define FN_GM_NZ(a) (FN_TABS(a) > 0.0)
#define FN_GM_SEL(k, a, b) FN_TSEL(k, a, b)
#define FN_GM_MIN(a, b) FN_TSEL((a) < (b), (a), (b))
#define FN_GM_MAX(a, b) FN_TSEL((a) > (b), (a), (b))
#define FN_GM_ALL ((fn_tm){0} - 1)
#define FN_GM_BITS(k) __extension__({ fn_tm k_ = (k); fn_gm_bits(&k_); })
#define FN_GM_SPLAT(x) FN_TSPLAT(x)
#define FN_GM_ABS(x) FN_TABS(x)
#define FN_GM_SQRT(x) FN_TSQRT(x)
/* RPROP's two sign steps of an operation set S, written once for both sets:
 * -sign(g) t (-0.0 where g is 0 or NaN), and w where k, else w + that. */
#define FN_SET_NEG_SIGN_TIMES(S, g, t) S##_SEL(S##_NZ(g), FN_TNEGSIGN(t, g), FN_TSPLAT(-0.0))
#define FN_SET_STEP_UNLESS(S, k, w, g, t) __extension__({                               \
    const fn_tv z_ = S##_SEL(k, FN_TSPLAT(0.0), g);                                      \
    S##_SEL(S##_NZ(z_), (w) + FN_TNEGSIGN(t, z_), w); })
#define FN_GM_NEG_SIGN_TIMES(g, t) FN_SET_NEG_SIGN_TIMES(FN_GM, g, t)
#define FN_GM_STEP_UNLESS(k, w, g, t) FN_SET_STEP_UNLESS(FN_GM, k, w, g, t)

FN_INLINE unsigned
fn_gm_bits(const fn_tm *k)
{
    unsigned b = 0;
    for (int i = 0; i < FN_TL; i++) b |= (unsigned)((*k)[i] != 0) << i;
    return b;
}

/* Comparisons at a CPU level's own width. GCC (12 at least) lowers a comparison
 * of vectors wider than the target has (a group's 64 bytes in AVX2 or SSE2 code)
 * lane by lane, into scalar compares, where it splits arithmetic into the
 * target's vectors: the lanes then spent most of their time at x86-64-v3 and in
 * the baseline on those scalar compares and on moving lanes between registers.
 * FN_TCMP(VB, OP, a, b) is a OP b, compared VB bytes at a time (a constant: 64
 * the whole group, the x86-64-v4 form; 32 AVX2; 16 SSE2 and NEON): the same
 * mask, in vector compares at every level. VB is each level's FN_LV_VB
 * (_levels.h); every level's code names its own (FN_LV_GM). */
typedef fn_real fn_tp32 __attribute__((vector_size(32)));
typedef fn_rint fn_tp32m __attribute__((vector_size(32)));
typedef fn_real fn_tp16 __attribute__((vector_size(16)));
typedef fn_rint fn_tp16m __attribute__((vector_size(16)));
/* (the macros' locals have names of their own: an argument named like one of them
 * would otherwise be read in its own initialiser; FN_TCMP_PIECES compares the whole of
 * a and b, of any size: _tiny.h's FN_TECMP compares the lanes' errors with it) */
#define FN_TCMP_PIECES(PT, MT, OP, a, b, m)                                             \
    _Pragma("GCC unroll 8")                                                             \
    for (int fn_tp_i_ = 0; fn_tp_i_ < (int)(sizeof(a) / sizeof(PT)); fn_tp_i_++) {      \
        PT fn_tp_x_, fn_tp_y_;                                                          \
        memcpy(&fn_tp_x_, (const char *)&(a) + fn_tp_i_ * sizeof(PT), sizeof(PT));      \
        memcpy(&fn_tp_y_, (const char *)&(b) + fn_tp_i_ * sizeof(PT), sizeof(PT));      \
        const MT fn_tp_r_ = fn_tp_x_ OP fn_tp_y_;                                       \
        memcpy((char *)&(m) + fn_tp_i_ * sizeof(PT), &fn_tp_r_, sizeof(PT));            \
    }
#define FN_TCMP(VB, OP, a, b) __extension__({                                           \
    const fn_tvr fn_tcmp_a_ = (a), fn_tcmp_b_ = (b);                                    \
    fn_tm fn_tcmp_m_;                                                                   \
    if ((VB) >= (int)sizeof(fn_tv)) fn_tcmp_m_ = fn_tcmp_a_ OP fn_tcmp_b_;              \
    else if ((VB) == 32)                                                                \
        FN_TCMP_PIECES(fn_tp32, fn_tp32m, OP, fn_tcmp_a_, fn_tcmp_b_, fn_tcmp_m_)       \
    else FN_TCMP_PIECES(fn_tp16, fn_tp16m, OP, fn_tcmp_a_, fn_tcmp_b_, fn_tcmp_m_)      \
    fn_tcmp_m_; })

/* FN_GM3, FN_GM0: the operations of FN_GM with comparisons at AVX2's width (32
 * bytes: x86-64-v3) and at SSE2's and NEON's (16: the baseline); the rest is
 * FN_GM's. (FN_GM's own, whole-vector comparisons are x86-64-v4's.) */
#define FN_GM3_V fn_tvr
#define FN_GM3_T fn_tm
#define FN_GM3_LT(a, b) FN_TCMP(32, <, a, b)
#define FN_GM3_GT(a, b) FN_TCMP(32, >, a, b)
#define FN_GM3_LE(a, b) FN_TCMP(32, <=, a, b)
#define FN_GM3_EQ(a, b) FN_TCMP(32, ==, a, b)
#define FN_GM3_NZ(a) FN_TCMP(32, >, FN_TABS(a), FN_TSPLAT(0.0))
#define FN_GM3_SEL(k, a, b) FN_TSEL(k, a, b)
#define FN_GM3_MIN(a, b) FN_TSEL(FN_GM3_LT(a, b), (a), (b))
#define FN_GM3_MAX(a, b) FN_TSEL(FN_GM3_GT(a, b), (a), (b))
#define FN_GM3_ALL FN_GM_ALL
#define FN_GM3_BITS(k) FN_GM_BITS(k)
#define FN_GM3_SPLAT(x) FN_TSPLAT(x)
#define FN_GM3_ABS(x) FN_TABS(x)
#define FN_GM3_SQRT(x) FN_TSQRT(x)
#define FN_GM3_NEG_SIGN_TIMES(g, t) FN_SET_NEG_SIGN_TIMES(FN_GM3, g, t)
#define FN_GM3_STEP_UNLESS(k, w, g, t) FN_SET_STEP_UNLESS(FN_GM3, k, w, g, t)
#define FN_GM0_V fn_tvr
#define FN_GM0_T fn_tm
#define FN_GM0_LT(a, b) FN_TCMP(16, <, a, b)
#define FN_GM0_GT(a, b) FN_TCMP(16, >, a, b)
#define FN_GM0_LE(a, b) FN_TCMP(16, <=, a, b)
#define FN_GM0_EQ(a, b) FN_TCMP(16, ==, a, b)
#define FN_GM0_NZ(a) FN_TCMP(16, >, FN_TABS(a), FN_TSPLAT(0.0))
#define FN_GM0_SEL(k, a, b) FN_TSEL(k, a, b)
#define FN_GM0_MIN(a, b) FN_TSEL(FN_GM0_LT(a, b), (a), (b))
#define FN_GM0_MAX(a, b) FN_TSEL(FN_GM0_GT(a, b), (a), (b))
#define FN_GM0_ALL FN_GM_ALL
#define FN_GM0_BITS(k) FN_GM_BITS(k)
#define FN_GM0_SPLAT(x) FN_TSPLAT(x)
#define FN_GM0_ABS(x) FN_TABS(x)
#define FN_GM0_SQRT(x) FN_TSQRT(x)
#define FN_GM0_NEG_SIGN_TIMES(g, t) FN_SET_NEG_SIGN_TIMES(FN_GM0, g, t)
#define FN_GM0_STEP_UNLESS(k, w, g, t) FN_SET_STEP_UNLESS(FN_GM0, k, w, g, t)

/* The kernels of _trials.h are compiled once per level of _cpu.h (x86-64-v4
 * runs each group's operation as one AVX-512 instruction, v3 as two AVX2 ones,
 * the baseline as four SSE2 ones), and _cpu.h's fn_cpu_level chooses. */
#if FN_CPU_LEVELS
/* The tiny-network kernels (_tiny.h) are built for each level: x86-64-v4 with
 * AVX-512's mask registers (FN_KM below), x86-64-v3 and the baseline with generic
 * vectors whose comparisons run at the level's width (FN_GM3, FN_GM0). */
/* FASTNET_TINY_O2 (setup.py's -O3 builds define it): the tiny kernels at -O2. Their
 * loops are unrolled by pragmas and their vectors explicit, so -O3's passes add
 * nothing but 5 s of compile (measured equally fast). Only there: in a build at
 * -O1 (the sanitizer build) -O2 would contract their products into FMAs that the
 * generic kernel, at -O1, does not, and they must agree bit for bit. */
#ifdef FASTNET_TINY_O2
#define FN_TINY_TARGET __attribute__((target("arch=x86-64-v4"), optimize("O2"), unused))
#define FN_TINY_V3_TARGET __attribute__((target("arch=x86-64-v3"), optimize("O2"), unused))
#define FN_TINY_V0_TARGET __attribute__((optimize("O2"), unused))
#else
#define FN_TINY_TARGET FN_CPU_V4_ATTR
#define FN_TINY_V3_TARGET FN_CPU_V3_ATTR
#define FN_TINY_V0_TARGET __attribute__((unused))
#endif
#define FN_TINY_X86_V4 1
/* The outputs are rounded before the residual y - t, as in the generic kernel
 * (which stores them): without this, GCC fuses x * q - t of an x/(1+|x|)
 * output into one FMA. An empty asm on the (zmm) register hides the product. */
#define FN_TINY_OPAQUE(v) __asm__("" : "+v"(v))
#include <immintrin.h>
/* FN_KM: AVX-512 mask registers, for the tiny kernels (x86-64-v4): a comparison
 * gives a mask register, a select is one blend (or a masked operation), min and
 * max one instruction each, where GCC's generic vectors take all-ones lanes in
 * a vector register and bit operations on them. FN_KM_I(op): the intrinsic of
 * the value type (_pd for doubles, _ps for floats). */
#ifdef FN_LANES_F32
#define FN_KM_I(op) _mm512_##op##_ps
#define FN_KM_CMPI _mm512_cmp_ps_mask
#define FN_KM_R __m512
#define FN_KM_T __mmask16
#else
#define FN_KM_I(op) _mm512_##op##_pd
#define FN_KM_CMPI _mm512_cmp_pd_mask
#define FN_KM_R __m512d
#define FN_KM_T __mmask8
#endif
#define FN_KM_AVAILABLE 1
#define FN_KM_V fn_tvr
#define FN_KM_CMP_(a, b, p) FN_KM_CMPI((FN_KM_R)(a), (FN_KM_R)(b), (p))
#define FN_KM_LT(a, b) FN_KM_CMP_(a, b, _CMP_LT_OQ)
#define FN_KM_GT(a, b) FN_KM_CMP_(a, b, _CMP_GT_OQ)
#define FN_KM_LE(a, b) FN_KM_CMP_(a, b, _CMP_LE_OQ)
#define FN_KM_EQ(a, b) FN_KM_CMP_(a, b, _CMP_EQ_OQ)
#define FN_KM_NZ(a) FN_KM_CMP_(a, FN_TSPLAT(0.0), _CMP_NEQ_OQ)       /* NaN: no */
#define FN_KM_SEL(k, a, b) ((fn_tv)FN_KM_I(mask_blend)((k), (FN_KM_R)(b), (FN_KM_R)(a)))
#define FN_KM_MIN(a, b) ((fn_tv)FN_KM_I(min)((FN_KM_R)(a), (FN_KM_R)(b)))
#define FN_KM_MAX(a, b) ((fn_tv)FN_KM_I(max)((FN_KM_R)(a), (FN_KM_R)(b)))
#define FN_KM_ALL ((FN_KM_T)((1u << FN_TL) - 1))
#define FN_KM_BITS(k) ((unsigned)(k))
#define FN_KM_SPLAT(x) FN_TSPLAT(x)
#define FN_KM_ABS(x) FN_TABS(x)
#define FN_KM_SQRT(x) FN_TSQRT(x)
#define FN_KM_NEG_SIGN_TIMES(g, t) FN_SET_NEG_SIGN_TIMES(FN_KM, g, t)
#define FN_KM_STEP_UNLESS(k, w, g, t) FN_SET_STEP_UNLESS(FN_KM, k, w, g, t)
#elif defined(__GNUC__)
#define FN_TINY_TARGET __attribute__((unused))
#define FN_TINY_V3_TARGET __attribute__((unused))
#define FN_TINY_V0_TARGET __attribute__((unused))
#define FN_TINY_OPAQUE(v) ((void)0)    /* (no contraction guard here) */
#else
#define FN_TINY_TARGET
#define FN_TINY_V3_TARGET
#define FN_TINY_V0_TARGET
#define FN_TINY_OPAQUE(v) ((void)0)
#endif
/* The baseline tiny kernels' guard against contraction (FN_TINY_OPAQUE): SSE2 has
 * no multiply-add to fuse into; NEON has, so there an empty asm on each 16-byte
 * piece of the vector hides the product. */
#if defined(__aarch64__) && defined(__GNUC__)
#define FN_TINY_OPAQUE_V0(v) do {                                                       \
        for (int o_ = 0; o_ < (int)sizeof(fn_tv); o_ += 16) {                           \
            __Float64x2_t h_;                                                           \
            memcpy(&h_, (char *)&(v) + o_, 16);                                         \
            __asm__("" : "+w"(h_));                                                     \
            memcpy((char *)&(v) + o_, &h_, 16);                                         \
        }                                                                               \
    } while (0)
#else
#define FN_TINY_OPAQUE_V0(v) ((void)0)
#endif

/* y = f(s) and f = f'(s) for activation code `act`: the form of _activations.h for
 * a group (fn_activate_8: 8 doubles; fn_activate_f16: 16 floats); with act a
 * constant, only its branch is compiled (the tiny kernels keep their arrays in
 * registers). */
FN_INLINE void
fn_lanes_activate(const int VB, ptrdiff_t act, const fn_tvr *s, fn_tvr *y, fn_tvr *f)
{
    /* (VB: the level's vector bytes, FN_LV_VB: the forms of its own width, whose
     * comparisons stay in vector registers (FN_TCMP); lane for lane the same
     * operations as the group's form, _activations.h) */
    if (VB >= (int)sizeof(fn_tv)) {
#ifdef FN_LANES_F32
        fn_activate_f16((int)act, s, y, f);
#else
        fn_activate_8((int)act, s, y, f);
#endif
        return;
    }
    _Pragma("GCC unroll 4") for (int i = 0; i < (int)sizeof(fn_tv) / VB; i++) {
        const size_t o = (size_t)i * (size_t)VB;
        if (VB == 32) {
            fn_tp32 sp, yp, fp;
            memcpy(&sp, (const char *)s + o, 32);
#ifdef FN_LANES_F32
            fn_activate_f8((int)act, &sp, &yp, &fp);
#else
            fn_activate_4((int)act, &sp, &yp, &fp);
#endif
            memcpy((char *)y + o, &yp, 32);
            memcpy((char *)f + o, &fp, 32);
        } else {
            fn_tp16 sp, yp, fp;
            memcpy(&sp, (const char *)s + o, 16);
#ifdef FN_LANES_F32
            fn_activate_f4((int)act, &sp, &yp, &fp);
#else
            fn_activate_2((int)act, &sp, &yp, &fp);
#endif
            memcpy((char *)y + o, &yp, 16);
            memcpy((char *)f + o, &fp, 16);
        }
    }
}

/* The trials' state, read and updated in place by a call: w, g and the rule's
 * three per-weight arrays g_prev, dw_prev, step: (n_groups, n_w, FN_TL)
 * blocks; last_error (the previous epoch's SSE, for irprop+) and status:
 * (n_groups, FN_TL). Which arrays a rule keeps is its line of the rules'
 * table (_rules.h; the others are neither read nor written), what it keeps in
 * them its step's (e.g. RPROP: g_prev the previous gradient, step the steps,
 * dw_prev the previous change). */
typedef struct {
    ptrdiff_t n_groups;
    fn_real *w, *g, *g_prev, *dw_prev, *step;
    double *last_error;
    int64_t *status;
} fn_trials_state;

/* What a call runs and reports: n_epochs epochs; sse_out: n_groups * FN_TL rows
 * (trial g * FN_TL + lane), row stride ld >= n_epochs: the training SSE of each
 * epoch times sse_scale (its forward pass, before its update; meaningful for the
 * epochs a lane trained); check_every > 0: the success check (r_c, analog) after
 * every check_every-th epoch of the call; t0: the epochs the trials trained
 * before the call (Adam's bias corrections, backprop's decay), t_max: backprop's
 * decay horizon; w_limit > 0: a lane with a weight of that magnitude (or NaN)
 * stops before its next epoch, with status FN_STATUS_BEYOND + the epochs it
 * trained in the call (its state as they left it; not for the tiny kernels).
 * *sse_max: raised to the largest value the call writes to sse_out (NaN not
 * counted; frozen and padding lanes included), which spares the caller a pass
 * over them (the divergence check by growth). */
typedef struct {
    ptrdiff_t n_epochs, ld, check_every;
    double *sse_out;
    double sse_scale, r_c, analog;
    ptrdiff_t t0, t_max;
    double w_limit;
    double *sse_max;
} fn_trials_epochs;

/* The status of a lane that stopped at w_limit: this plus its epochs. */
#define FN_STATUS_BEYOND ((int64_t)1 << 40)

/* RPROP's parameters in every lane (a kernel's local copy: kept in
 * registers once the functions using it are inlined). */
typedef struct {
    fn_tvr eta_plus, eta_minus, step_min, step_max;
} fn_lanes_steps;

FN_INLINE void
fn_lanes_steps_init(fn_lanes_steps *k, const fn_rule *rule)
{
    k->eta_plus = FN_TSPLAT(rule->rprop_plus.eta_plus);
    k->eta_minus = FN_TSPLAT(rule->rprop_plus.eta_minus);
    k->step_min = FN_TSPLAT(rule->rprop_plus.delta_min);
    k->step_max = FN_TSPLAT(rule->rprop_plus.delta_max);
}

/* The lane forms of the rules and Hamey's check (_rules.h), once per mask
 * representation: fn_lanes_step_gm (any rule of the table), fn_lanes_rprop_gm,
 * fn_lanes_correct_gm, ... (generic vectors, every CPU level) and, where the
 * tiny kernels have AVX-512, the same with _km (mask registers). */
#define FN_R_SET FN_GM
#define FN_R_STEPS fn_lanes_steps
#define FN_R_PREFIX fn_lanes_
#define FN_R_SUFFIX _gm
#define FN_R_ATTR FN_INLINE
#define FN_R_REAL fn_real
#include "_rules.h"
/* (the same rules with the comparisons of x86-64-v3 and of the baseline,
 * fn_lanes_<rule>_gm3 and _gm0, on fn_lanes_ctx_gm) */
#define FN_R_SET FN_GM3
#define FN_R_STEPS fn_lanes_steps
#define FN_R_PREFIX fn_lanes_
#define FN_R_SUFFIX _gm3
#define FN_R_SHARE _gm
#define FN_R_ATTR FN_INLINE
#define FN_R_REAL fn_real
#include "_rules.h"
#define FN_R_SET FN_GM0
#define FN_R_STEPS fn_lanes_steps
#define FN_R_PREFIX fn_lanes_
#define FN_R_SUFFIX _gm0
#define FN_R_SHARE _gm
#define FN_R_ATTR FN_INLINE
#define FN_R_REAL fn_real
#include "_rules.h"
/* Rule R's step (fn_lanes_step_gm) with the comparisons of a level's vector
 * bytes VB (a constant: FN_LV_VB). */
FN_INLINE void
fn_lanes_step_at(const int VB, const int R, fn_tvr *w, const fn_tvr *g, fn_tvr *gp, fn_tvr *st,
                 fn_tvr *dw, const fn_lanes_ctx_gm *c)
{
    if (VB >= (int)sizeof(fn_tv)) fn_lanes_step_gm(R, w, g, gp, st, dw, c);
    else if (VB == 32) fn_lanes_step_gm3(R, w, g, gp, st, dw, c);
    else fn_lanes_step_gm0(R, w, g, gp, st, dw, c);
}
#ifdef FN_KM_AVAILABLE
#define FN_R_SET FN_KM
#define FN_R_STEPS fn_lanes_steps
#define FN_R_PREFIX fn_lanes_
#define FN_R_SUFFIX _km
#define FN_R_ATTR FN_TINY_TARGET FN_INLINE
#define FN_R_REAL fn_real
#include "_rules.h"
#endif

#endif /* FASTNET_LANES_H */
