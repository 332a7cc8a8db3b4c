/* float32 training with subnormal results flushed to zero, as XLA's CPU backend
 * computes: a saturated logistic unit's output error and its gradients fall below
 * float's smallest normal (2^-126) in long runs, and every operation on a subnormal
 * then costs about a hundred cycles (a 2-20-20-2 tanh/logistic network's float32
 * epochs went from 107 to 265 us as its outputs fell to 1e-29, where float64 stayed
 * at 137). The mode is the thread's: fn_ftz_begin(1) sets it for a kernel call and
 * returns the caller's, which fn_ftz_end puts back; fn_ftz_begin(0) (float64,
 * which keeps IEEE's gradual underflow) changes nothing. x86-64: MXCSR's FTZ bit;
 * aarch64: FPCR's FZ bit; elsewhere nothing (subnormals kept). */
#ifndef FASTNET_FTZ_H
#define FASTNET_FTZ_H

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
static inline unsigned long
fn_ftz_begin(int flush)
{
    const unsigned int csr = _mm_getcsr();
    if (flush) _mm_setcsr(csr | 0x8000u);
    return csr;
}
static inline void
fn_ftz_end(unsigned long saved)
{
    _mm_setcsr((unsigned int)saved);
}
#elif defined(__aarch64__) && defined(__GNUC__)
static inline unsigned long
fn_ftz_begin(int flush)
{
    const unsigned long fpcr = __builtin_aarch64_get_fpcr64();
    if (flush) __builtin_aarch64_set_fpcr64(fpcr | (1ul << 24));
    return fpcr;
}
static inline void
fn_ftz_end(unsigned long saved)
{
    __builtin_aarch64_set_fpcr64(saved);
}
#else
static inline unsigned long
fn_ftz_begin(int flush)
{
    (void)flush;
    return 0;
}
static inline void
fn_ftz_end(unsigned long saved)
{
    (void)saved;
}
#endif

#endif /* FASTNET_FTZ_H */
