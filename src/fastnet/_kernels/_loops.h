/* Plain-loop layer products and activations for narrow layers (few units),
 * where BLAS wastes its width and its call overhead dominates. (On CPUs with
 * AVX-512 or AVX2 most products go to the register-tiled kernels of _tiles.h,
 * instantiated per instruction set in _simd.h, instead; these loops then serve
 * blocks of few rows, narrow forward products on AVX2, and other CPUs.)
 *
 * Row-major throughout, as in _types.pxd. Each function is written once over
 * the value type (float64, float32: _values.h) and compiled per level
 * (_loops_level.h): for x86-64-v3 (AVX2 + FMA) and the portable baseline;
 * _cpu.h's level picks one (FASTNET_SIMD=none: the baseline). (An x86-64-v4 / AVX-512
 * clone was measured slower on these short loops: 0.0198 vs 0.0169 ms per
 * epoch on benchmark case A, cancer1 4+2.) So the build stays portable (no -march=native) yet uses wide vectors.
 * Results can therefore differ in the last bits between CPU generations (FMA
 * rounding), exactly as with OpenBLAS; on one machine a run is bit-for-bit
 * reproducible.
 *
 * No reassociation flags are used: every sum runs in a fixed order written in
 * the code, so the compiler vectorises only element-wise loops.
 */
#ifndef FASTNET_LOOPS_H
#define FASTNET_LOOPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "_activations.h"
#include "_cpu.h"


/* Four doubles, or eight floats, as one value (GCC vector extension): AVX2
 * registers in the x86-64-v3 form, pairs of SSE2 registers in the portable one. */
typedef double fn_v4d __attribute__((vector_size(32)));
typedef float fn_v8f __attribute__((vector_size(32)));

/* The sum of the lanes, in a fixed order. Macros, not functions: a function
 * taking a vector would have a different ABI in each level's form. */
#define fn_hsum4(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))
#define fn_hsum8(v) ((((v)[0] + (v)[1]) + ((v)[2] + (v)[3])) + (((v)[4] + (v)[5]) + ((v)[6] + (v)[7])))

/* Dot products at least this long use one vector of partial sums (lane j adds
 * the terms s = j mod lanes; a fixed order); shorter ones sum in index order. */
#define FASTNET_VECTOR_DOT_MIN 16

/* The levels of _cpu.h, which decides among them. */
#define FN_LOOPS_LEVELS FN_CPU_LEVELS
#define FN_LOOPS_V4 FN_CPU_V4_ATTR
#define FN_LOOPS_V3 FN_CPU_V3_ATTR
/* Whether the loops run their x86-64-v3 forms (on v3 and v4 CPUs, unless
 * FASTNET_SIMD=none). */
#define FN_LOOPS_V3_FORMS (FN_CPU_LEVELS && fn_cpu_level() >= FN_CPU_V3)

/* The level this process runs at: 2 x86-64-v4, 1 x86-64-v3, 0 the baseline
 * (_cpu.h: the CPU's, capped by FASTNET_SIMD). */
__attribute__((unused)) static int
fn_loops_level(void)
{
    return fn_cpu_level();
}

/* The loops of each value type (_loops_level.h, which compiles them per level)
 * and their dispatchers: fn_loops_forward(...) over double, fn_loops_forward_f32
 * over float, and so on for each loop:
 *   fn_loops_forward, _gradient, _backprop   the three products of a layer;
 *   fn_loops_proben1, _linear, _activate, _activate_at, _softmax   the units;
 *   fn_loops_deltas_bias, _output_deltas (the squared error, in double)
 *   fn_loops_load_rows, _all_finite          the inputs and their check. */
#define FN_VALUE_FILE "_loops_level.h"
#include "_values.h"

#endif /* FASTNET_LOOPS_H */
