/* The tiny kernels of one CPU level (FN_TINY_LEVEL, the includer's: 4, 3 or 0),
 * one per shape of FN_TINY_SHAPES: _tiny.h's template included once per shape.
 * Not guarded (once per level). */
#define FN_TINY_NI 2
#define FN_TINY_NH 2
#define FN_TINY_NO 1
#ifndef FN_LANES_F32      /* (float32: the shape without shortcuts alone; see _tiny.h) */
#define FN_TINY_SC 1
#include "_tiny.h"
#undef FN_TINY_SC
#endif
#define FN_TINY_SC 0
#include "_tiny.h"
#undef FN_TINY_NI
#undef FN_TINY_NH
#undef FN_TINY_NO
#undef FN_TINY_SC
