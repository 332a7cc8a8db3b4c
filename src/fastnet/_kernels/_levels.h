/* A template compiled once per CPU level of _cpu.h: the includer names it and
 * how, then includes this file (not guarded: once per template):
 *   FN_LEVEL_FILE     the template, a header name in quotes;
 *   FN_LEVEL_V4       1: also the x86-64-v4 form (name##_v4), else 0;
 *   FN_LEVEL_V0_ATTR  the attributes of the baseline form (name##_v0);
 *   FN_LEVEL_V3_ATTR  optional: the x86-64-v3 form's (default FN_CPU_V3_ATTR).
 * The template sees FN_LV(name) (the level's name of a function), FN_LV_ATTR
 * (its target attributes) and FN_LV_TILE (the largest register tile's side:
 * 4, 2 in the baseline), FN_LV_VB (its vector registers' bytes: 64, 32 for
 * AVX2, 16 in the baseline: SSE2, NEON) and FN_LV_GM(name) (the lanes' rules
 * of _lanes.h with that level's comparisons: name##_gm, _gm3, _gm0). The
 * x86-64-v3 form is name##_v3. Every macro named
 * here is undefined at the end. FN_LV expands its argument first (FN_LEVEL_CAT),
 * so it nests with _values.h's FN_VT. */
#ifndef FN_LEVEL_CAT
#define FN_LEVEL_CAT_(a, b) a##b
#define FN_LEVEL_CAT(a, b) FN_LEVEL_CAT_(a, b)
#endif
#if FN_LEVEL_V4
#define FN_LV(name) FN_LEVEL_CAT(name, _v4)
#define FN_LV_ATTR FN_CPU_V4_ATTR
#define FN_LV_TILE 4
#define FN_LV_VB 64
#define FN_LV_GM(name) FN_LEVEL_CAT(name, _gm)
#include FN_LEVEL_FILE
#undef FN_LV
#undef FN_LV_ATTR
#undef FN_LV_TILE
#undef FN_LV_VB
#undef FN_LV_GM
#endif
#define FN_LV(name) FN_LEVEL_CAT(name, _v3)
#ifdef FN_LEVEL_V3_ATTR
#define FN_LV_ATTR FN_LEVEL_V3_ATTR
#else
#define FN_LV_ATTR FN_CPU_V3_ATTR
#endif
#define FN_LV_TILE 4
#define FN_LV_VB 32
#define FN_LV_GM(name) FN_LEVEL_CAT(name, _gm3)
#include FN_LEVEL_FILE
#undef FN_LV
#undef FN_LV_ATTR
#undef FN_LV_TILE
#undef FN_LV_VB
#undef FN_LV_GM
#define FN_LV(name) FN_LEVEL_CAT(name, _v0)
#define FN_LV_ATTR FN_LEVEL_V0_ATTR
#define FN_LV_TILE 2
#define FN_LV_VB 16
#define FN_LV_GM(name) FN_LEVEL_CAT(name, _gm0)
#include FN_LEVEL_FILE
#undef FN_LV
#undef FN_LV_ATTR
#undef FN_LV_TILE
#undef FN_LV_VB
#undef FN_LV_GM
#undef FN_LEVEL_FILE
#undef FN_LEVEL_V4
#undef FN_LEVEL_V0_ATTR
#undef FN_LEVEL_V3_ATTR
