/* The register-tiled layer products and the one place that chooses them.
 *
 * Compiled into one extension module only, fastnet._kernels._simd (_simd.pyx),
 * which holds the choice and hands the products to the other modules
 * (_types.pxd's gemm_* call its simd_gemm through Cython's cimport, a function
 * pointer exported as a capsule). Any other module including this header would
 * get a second, undecided copy of the state, so it refuses to compile there.
 *
 * Why our own products: the layers of small nets are skinny (1-64 units), where
 * a general BLAS spends much of its time packing and on edge cases, and the
 * OpenBLAS that SciPy ships is often held to its AVX2 kernels (OPENBLAS_CORETYPE).
 * Register-tiled products over one block of rows (the block is sized to stay in
 * L2, its rows start on cache lines) take the benchmark cases' case E from 1.56
 * to 0.77 ms per epoch and G from 4.36 to 2.10 on an AMD EPYC (Zen 5), and beat
 * OpenBLAS's own AVX-512 kernels on wide layers too.
 *
 * The tiles are written once, in _tiles.h, and instantiated here for AVX2 + FMA
 * (fn256_*: 4 doubles or 8 floats per vector, 16 registers) and AVX-512
 * (fn512_*: 8 doubles or 16 floats, 32 registers, mask registers), each under
 * its own target attribute and for both value types (_values.h: fn512_gemm,
 * fn512_gemm_f32), so the module stays portable (no -march flags) and the CPU
 * decides at run time. Levels:
 *   0  none: the loops of _loops.h and BLAS (simd_gemm declines every product);
 *   1  AVX2 + FMA: fn256_gemm, fn256_gemm_f32;
 *   2  AVX-512F/DQ: fn512_gemm, fn512_gemm_f32.
 * The level is _cpu.h's, decided when the module is imported (x86-64-v4: AVX-512,
 * x86-64-v3: AVX2; FASTNET_SIMD=avx2 or FASTNET_SIMD=none in the environment caps
 * it, as it caps every kernel family; the tests run every level so).
 * Building with -DFASTNET_NO_SIMD_TILES (e.g. through FASTNET_CFLAGS) leaves the
 * tiles out, as do compilers other than GCC >= 10 on x86-64: the level is then 0.
 */
#ifndef FASTNET_SIMD_H
#define FASTNET_SIMD_H

#ifndef FASTNET_SIMD_MODULE
#error "_simd.h holds the SIMD dispatch state: only _simd.pyx includes it (cimport fastnet._kernels._simd instead)"
#endif

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "_cpu.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && (__GNUC__ >= 10) \
    && !defined(FASTNET_NO_SIMD_TILES)
#define FASTNET_SIMD_TILES 1
#else
#define FASTNET_SIMD_TILES 0
#endif

#define FN_SIMD_NONE 0
#define FN_SIMD_AVX2 1
#define FN_SIMD_AVX512 2

#if FASTNET_SIMD_TILES
#include <immintrin.h>

/* Inputs per packed chunk of W^T in the forward products (both sets). */
#define FN_KC 128

/* A chunk of W^T for the forward products (plain C, for every instruction set),
 * fn_pack_wt over double and fn_pack_wt_f32 over float:
 * pack[k * ldp + j] = W[(j0 + j) * ldw + k0 + k] for j < w, k < kc. */
#define FN_PACK_WT(NAME, T)                                                                 \
__attribute__((unused)) static inline void                                                  \
NAME(const T *W, ptrdiff_t ldw, ptrdiff_t j0, ptrdiff_t w, ptrdiff_t k0, ptrdiff_t kc,      \
     T *pack, ptrdiff_t ldp)                                                                \
{                                                                                           \
    ptrdiff_t j, k;                                                                         \
    for (j = 0; j < w; j++) {                                                               \
        const T *wrow = W + (j0 + j) * ldw + k0;                                            \
        for (k = 0; k < kc; k++)                                                            \
            pack[k * ldp + j] = wrow[k];                                                    \
    }                                                                                       \
}
FN_PACK_WT(fn_pack_wt, double)
FN_PACK_WT(fn_pack_wt_f32, float)
#undef FN_PACK_WT

/* Each instruction set: its parameters (_tiles.h lists them), then _tiles.h
 * once per value type through _values.h (fn256_gemm and fn256_gemm_f32, ...).
 * The masked loads and stores are written with _tiles.h's FN_MM (the
 * intrinsic of the value type: _pd, _ps). */

/* AVX2 + FMA: fn256_*. No mask registers: a mask is a vector of lane flags (64-
 * or 32-bit) for vmaskmovpd / vmaskmovps. 16 ymm registers; forward products of
 * fewer than one vector of units decline (the loops' dot products serve them). */
#define FN_BITS 256
#define FN_TARGET "avx2,fma"
#define FN_MASK_T_64 __m256i
#define FN_MASK_T_32 __m256i
#define FN_MASK_64(w) _mm256_cmpgt_epi64(_mm256_set1_epi64x(w), _mm256_set_epi64x(3, 2, 1, 0))
#define FN_MASK_32(w) _mm256_cmpgt_epi32(_mm256_set1_epi32(w), \
                                         _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0))
#define FN_LOADM(p, m) FN_MM(maskload)((p), (m))
#define FN_STOREM(p, m, v) FN_MM(maskstore)((p), (m), (v))
/* Tile shapes (why: docs/cython.md): rows x vectors, 2 x FN_NARROW_VECS for C
 * of one or two rows. */
#define FN_TILE_ROWS 4
#define FN_TILE_VECS 3
#define FN_NARROW_VECS 5
#define FN_BROADCAST_NARROW(n, k) 0
#define FN_VALUE_FILE "_tiles.h"
#include "_values.h"

/* AVX-512F/DQ (+VL for the mask forms): fn512_*. Masks are k registers. 32 zmm
 * registers; forward products of fewer than one vector of units (8 doubles, 16
 * floats) run as dot products (_dots512.h). */
#define FN_BITS 512
#define FN_TARGET "avx512f,avx512dq,avx512vl,fma"
#define FN_MASK_T_64 __mmask8
#define FN_MASK_T_32 __mmask16
#define FN_MASK_64(w) ((__mmask8)((1u << (w)) - 1u))
#define FN_MASK_32(w) ((__mmask16)((1u << (w)) - 1u))
#define FN_LOADM(p, m) FN_MM(maskz_loadu)((m), (p))
#define FN_STOREM(p, m, v) FN_MM(mask_storeu)((p), (m), (v))
#define FN_DOTS_FILE "_dots512.h"
#define FN_TILE_ROWS 6
#define FN_TILE_VECS 4
#define FN_NARROW_VECS 8
/* Forward products of fewer units than one vector (L lanes): each row as k
 * multiply-adds of a broadcast input and a masked vector of units (the tiles of
 * gemm_nt), where that is fewer operations than the dot products: about
 * n ceil(k/L) multiply-adds per row, plus the reductions, 21 instructions for
 * each pair of units of 8 rows, and n stores. So layers of 2-7 units on few
 * sources (9-6-2: 6 units on 9 inputs; cancer1 4+2: 4 units on 9), dot
 * products for wide sources and single units. */
#define FN_BROADCAST_NARROW(n, k) \
    (8 * (k) < 8 * (n) * (((k) + FN_LANES - 1) / FN_LANES) + 21 * (((n) + 1) / 2) + 8 * (n))
#define FN_VALUE_FILE "_tiles.h"
#include "_values.h"

#endif /* FASTNET_SIMD_TILES */

/* The level in force: -1 until fn_simd_init() runs (at the import of _simd). */
static int fn_simd_state = -1;

/* Decide the level: _cpu.h's (the CPU's, capped by FASTNET_SIMD), where this
 * build has the tiles; returns it. */
static int
fn_simd_init(void)
{
    int level = FN_SIMD_NONE;
#if FASTNET_SIMD_TILES
    const int cpu = fn_cpu_level();
    level = cpu == FN_CPU_V4 ? FN_SIMD_AVX512 : cpu == FN_CPU_V3 ? FN_SIMD_AVX2 : FN_SIMD_NONE;
#endif
    fn_simd_state = level;
    return level;
}

static int
fn_simd_level(void)
{
    return fn_simd_state < 0 ? fn_simd_init() : fn_simd_state;
}

/* The highest level this build contains (the CPU may allow less). */
static int
fn_simd_compiled(void)
{
    return FASTNET_SIMD_TILES ? FN_SIMD_AVX512 : FN_SIMD_NONE;
}

/* Row-major C (m x n) = op(A) op(B) + beta C (+ bias[j] in every row, if bias)
 * (times scale[i * lds + j], if scale: 'N','N' only), beta 0 or 1, with the
 * tiles of the level in force (fn<BITS>_gemm in _tiles.h says which products
 * they take). Returns 1 when done, 0 when the caller must
 * compute the product itself (C untouched): level 0, an empty product, another
 * beta, or a combination the tiles decline. */
#if FASTNET_SIMD_TILES
#define FN_SIMD_TILES_CALL(g512, g256)                                                   \
    switch (fn_simd_state) {                                                             \
    case FN_SIMD_AVX512:                                                                 \
        return g512(ta, tb, m, n, k, A, lda, B, ldb, beta != 0.0, C, ldc, bias, scale, lds); \
    case FN_SIMD_AVX2:                                                                   \
        return g256(ta, tb, m, n, k, A, lda, B, ldb, beta != 0.0, C, ldc, bias, scale, lds); \
    }
#else
#define FN_SIMD_TILES_CALL(g512, g256)                                                   \
    (void)ta; (void)tb; (void)A; (void)lda; (void)B; (void)ldb; (void)C; (void)ldc;      \
    (void)bias; (void)scale; (void)lds;
#endif
/* fn_simd_gemm over double, fn_simd_gemm_f32 over float (the tiles' _f32 forms):
 * one definition, the value type T and the two instruction sets' tiles given. */
#define FN_SIMD_GEMM(name, T, g512, g256)                                                \
static int                                                                               \
name(char ta, char tb, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, const T *A, ptrdiff_t lda, \
     const T *B, ptrdiff_t ldb, double beta, T *C, ptrdiff_t ldc, const T *bias,         \
     const T *scale, ptrdiff_t lds)                                                      \
{                                                                                        \
    if (m < 1 || n < 1 || k < 1 || (beta != 0.0 && beta != 1.0))                        \
        return 0;                                                                        \
    FN_SIMD_TILES_CALL(g512, g256)                                                       \
    return 0;                                                                            \
}
FN_SIMD_GEMM(fn_simd_gemm, double, fn512_gemm, fn256_gemm)
FN_SIMD_GEMM(fn_simd_gemm_f32, float, fn512_gemm_f32, fn256_gemm_f32)
#undef FN_SIMD_GEMM
#undef FN_SIMD_TILES_CALL

#endif /* FASTNET_SIMD_H */
