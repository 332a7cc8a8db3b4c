/* A template compiled once per value type (float64, then float32), the way
 * _levels.h compiles one once per CPU level and FANN compiles one source as
 * float and double. The includer names the template, then includes this file
 * (not guarded: once per template):
 *   FN_VALUE_FILE   the template, a header name in quotes.
 * The template sees
 *   FN_REAL         the value type (double, float);
 *   FN_VT_BITS      its width in bits (64, 32): FN_AV_K-style constant names
 *                   and the activation forms (_activations.h) of the type;
 *   FN_VT(name)     the type's name of a function or type: name itself for
 *                   double (the float64 symbols keep the names they had), and
 *                   name##_f32 for float. FN_VT expands its argument first, so
 *                   it nests with _levels.h: FN_LV(FN_VT(fn_x)) is fn_x_v3 and
 *                   fn_x_f32_v3 (FN_LV pastes through FN_LEVEL_CAT).
 * Sums that Proben1's measures report (squared error, misclassifications) are
 * accumulated in double at both types: a float32 sum over 10^5 examples would
 * drift by about N * 2^-24 relative. Every macro named here is undefined at
 * the end. */
#define FN_VT_CAT_(a, b) a##b
#define FN_VT_CAT(a, b) FN_VT_CAT_(a, b)

#define FN_REAL double
#define FN_VT_BITS 64
#define FN_VT(name) name
#include FN_VALUE_FILE
#undef FN_REAL
#undef FN_VT_BITS
#undef FN_VT

#define FN_REAL float
#define FN_VT_BITS 32
#define FN_VT(name) FN_VT_CAT(name, _f32)
#include FN_VALUE_FILE
#undef FN_REAL
#undef FN_VT_BITS
#undef FN_VT

#undef FN_VALUE_FILE
