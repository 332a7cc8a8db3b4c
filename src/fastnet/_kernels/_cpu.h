/* The one CPU dispatcher: the level every kernel family runs at.
 *
 *   FN_CPU_BASE  0  the x86-64 baseline (SSE2), and every other CPU or compiler;
 *   FN_CPU_V3    1  x86-64-v3 (AVX2, FMA, ...): 4-lane vectors;
 *   FN_CPU_V4    2  x86-64-v4 (AVX-512 F/BW/CD/DQ/VL): 8-lane vectors, mask registers.
 *
 * The CPU sets it; FASTNET_SIMD=avx2 in the environment caps it at FN_CPU_V3 and
 * FASTNET_SIMD=none at FN_CPU_BASE (the tests run every level so). Each module
 * that includes this header decides once, at its first call, by this one rule:
 * the register tiles (_simd.h), the single-network loops (_loops.h), the lanes
 * and the tiny kernels (_trials.h) all run at the same level.
 *
 * FN_CPU_LEVELS is 1 where the compiler builds code for a level by a target
 * attribute (GCC >= 12 on x86-64 Linux; -DFASTNET_NO_CLONES turns it off):
 * FN_CPU_V3_ATTR and FN_CPU_V4_ATTR. Elsewhere only the baseline is built and
 * the level is FN_CPU_BASE.
 */
#ifndef FASTNET_CPU_H
#define FASTNET_CPU_H

#include <stdlib.h>
#include <string.h>

#define FN_CPU_BASE 0
#define FN_CPU_V3 1
#define FN_CPU_V4 2

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && (__GNUC__ >= 12) && !defined(FASTNET_NO_CLONES)
#define FN_CPU_LEVELS 1
#define FN_CPU_V4_ATTR __attribute__((target("arch=x86-64-v4"), unused))
#define FN_CPU_V3_ATTR __attribute__((target("arch=x86-64-v3"), unused))
#else
#define FN_CPU_LEVELS 0
#define FN_CPU_V4_ATTR __attribute__((unused))
#define FN_CPU_V3_ATTR __attribute__((unused))
#endif

/* -1 until decided. */
static int fn_cpu_state = -1;

/* The level this process runs at (see the top). */
__attribute__((unused)) static int
fn_cpu_level(void)
{
    if (fn_cpu_state < 0) {
        int level = FN_CPU_BASE;
#if FN_CPU_LEVELS
        /* (libgcc's checks include the OS saving the vector registers: XCR0) */
        __builtin_cpu_init();
        if (__builtin_cpu_supports("x86-64-v3")) {
            level = FN_CPU_V3;
            if (__builtin_cpu_supports("x86-64-v4")) level = FN_CPU_V4;
        }
#endif
        const char *cap = getenv("FASTNET_SIMD");
        if (cap != NULL && strcmp(cap, "avx2") == 0 && level > FN_CPU_V3)
            level = FN_CPU_V3;
        else if (cap != NULL && strcmp(cap, "none") == 0)
            level = FN_CPU_BASE;
        fn_cpu_state = level;
    }
    return fn_cpu_state;
}

#endif /* FASTNET_CPU_H */
