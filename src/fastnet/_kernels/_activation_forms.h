/* The activation functions at one vector width: a template that
 * _activations.h includes once per width (see there for the algorithms and
 * their accuracy). Parameters, defined by the includer and undefined here:
 *   FN_AV_T   a GCC vector of doubles;
 *   FN_AV_I   the int64 vector of as many lanes (the masks of comparisons);
 *   FN_AV_U   the uint64 vector of as many lanes;
 *   FN_AV_W   the number of lanes, the functions' suffix (fn_exp_8, ...).
 * Vectors go in and out by pointer (a vector argument would have another ABI
 * in each CPU clone); the functions are always inlined, so the pointers vanish.
 */
#define FN_AV_NAME(f) FN_AV_CAT(f, FN_AV_W)
/* a where the mask m is set, else b (m: all ones or all zeros per lane) */
#define FN_AV_SEL(m, a, b) ((FN_AV_T)(((m) & (FN_AV_I)(a)) | (~(m) & (FN_AV_I)(b))))
/* c in every lane, as a vector constant (GCC then loads it whole; splatting a
 * scalar at run time costs SSE2 code two instructions per constant) */
#if FN_AV_W == 8
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c), (c), (c), (c), (c), (c), (c)})
#elif FN_AV_W == 4
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c), (c), (c)})
#elif FN_AV_W == 2
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c)})
#else
#define FN_AV_SPLAT(c) ((FN_AV_T){(c)})
#endif

/* exp's range reduction and polynomial: x = k ln2 + r, |r| <= ln2 / 2, and
 * *p = exp(r) - 1 = r + r^2 q(r); *k as a two's complement integer (the integer
 * arithmetic is unsigned throughout: with a NaN x the bits are garbage, and a
 * signed overflow would be undefined even though the result is discarded). x must lie in
 * [FN_AV_EXP_MIN, FN_AV_EXP_MAX] (or be NaN, which passes to *p). */
FN_AV_INLINE void
FN_AV_NAME(fn_exp_reduced)(const FN_AV_T *px, FN_AV_T *pp, FN_AV_U *pk)
{
    const FN_AV_T x = *px;
    /* k = round(x / ln2), as a double and as an integer */
    FN_AV_T kd = x * FN_AV_SPLAT(FN_AV_LOG2E) + FN_AV_SPLAT(FN_AV_SHIFTER);
    *pk = (FN_AV_U)kd - (FN_AV_U)FN_AV_SPLAT(FN_AV_SHIFTER);
    kd -= FN_AV_SPLAT(FN_AV_SHIFTER);
    /* r = x - k ln2 in two steps: the first is exact */
    FN_AV_T r = x - kd * FN_AV_SPLAT(FN_AV_LN2_HI);
    r = r - kd * FN_AV_SPLAT(FN_AV_LN2_LO);
    /* q(r) = (exp(r) - 1 - r) / r^2 on |r| <= ln2 / 2: a polynomial of degree 9,
     * the Chebyshev fit (near minimax; benchmarks/activation_coefficients.py) that
     * puts 1 + r + r^2 q within 1.6e-17 of exp(r) (the Taylor series needs degree
     * 11 for that). By Estrin's scheme: pairs, then pairs of pairs (a chain of
     * four multiply-adds, not nine: the tiny kernels wait on it) */
#define FN_AV_C(c) FN_AV_SPLAT(c)
    const FN_AV_T r2 = r * r, r4 = r2 * r2;
    const FN_AV_T q01 = FN_AV_C(0.16666666666666669) * r + FN_AV_C(0.5000000000000001);
    const FN_AV_T q23 = FN_AV_C(0.008333333333330062) * r + FN_AV_C(0.04166666666662413);
    const FN_AV_T q45 = FN_AV_C(0.00019841269863053618) * r + FN_AV_C(0.0013888888917213717);
    const FN_AV_T q67 = FN_AV_C(2.7557268459997064e-06) * r + FN_AV_C(2.4801521295954376e-05);
    const FN_AV_T q89 = FN_AV_C(2.510038549551032e-08) * r + FN_AV_C(2.7620088445409746e-07);
    const FN_AV_T q03 = q23 * r2 + q01, q47 = q67 * r2 + q45;
    const FN_AV_T q = (q89 * r4 + q47) * r4 + q03;
    *pp = r + r2 * q;
}

/* 2^k for integers k (two's complement, unsigned) in the normal exponents
 * [-1022, 1023]. */
#define FN_AV_POW2(k) ((FN_AV_T)(((k) + 1023) << 52))

/* *y = exp(*x) for x <= 0 (or NaN): the result may be subnormal or 0.
 * Here k <= 0, so 2^k = 2^(k + 55) 2^-55 with k + 55 >= -1021 a normal
 * exponent: (1 + p) 2^(k + 55) is exact (1 + p >= 0.7) and the one rounding
 * is the last product's, as in fn_exp's two-step scaling (bit for bit the
 * same result, in 4 operations instead of 11: logistic's exp). The first
 * product is taken as p S + S, a multiply-add: S (1 + p) rounds as 1 + p does. */
FN_AV_INLINE void
FN_AV_NAME(fn_exp_nonpositive)(const FN_AV_T *px, FN_AV_T *py)
{
    FN_AV_T x = *px, p;
    FN_AV_U k;
    /* (comparisons are false for NaN, which passes to the polynomial) */
    x = FN_AV_SEL(x < FN_AV_SPLAT(FN_AV_EXP_MIN), FN_AV_SPLAT(FN_AV_EXP_MIN), x);
    FN_AV_NAME(fn_exp_reduced)(&x, &p, &k);
    const FN_AV_T s = FN_AV_POW2(k + 55);
    *py = (p * s + s) * FN_AV_SPLAT(0x1p-55);
}

/* *y = exp(*x), lane by lane (x > 710 is taken as 710: +inf). */
FN_AV_INLINE void
FN_AV_NAME(fn_exp)(const FN_AV_T *px, FN_AV_T *py)
{
    FN_AV_T x = *px, p;
    FN_AV_U k;
    x = FN_AV_SEL(x > FN_AV_SPLAT(FN_AV_EXP_MAX), FN_AV_SPLAT(FN_AV_EXP_MAX), x);
    x = FN_AV_SEL(x < FN_AV_SPLAT(FN_AV_EXP_MIN), FN_AV_SPLAT(FN_AV_EXP_MIN), x);
    FN_AV_NAME(fn_exp_reduced)(&x, &p, &k);
    /* times 2^k = 2^k1 2^k2 (k1 = floor(k / 2), both within the normal exponents;
     * k + 2048 > 0, so a logical shift halves it: AVX2 has no 64-bit arithmetic one) */
    const FN_AV_U k1 = ((k + 2048) >> 1) - 1024, k2 = k - k1;
    *py = ((FN_AV_SPLAT(1.0) + p) * FN_AV_POW2(k1)) * FN_AV_POW2(k2);
}

/* *y = tanh(*x). |x| < 0.55: |x| + |x| s P(s) / Q(s), s = x^2; else e / (e + 2) with
 * e = exp(2|x|) - 1 computed as 2^k (exp(r) - 1) + (2^k - 1) (k >= 2 there, so
 * the sum cancels little); then the sign of x. |x| is taken at most 20, where
 * tanh rounds to 1. Both forms are computed, and each lane takes its own. */
FN_AV_INLINE void
FN_AV_NAME(fn_tanh)(const FN_AV_T *px, FN_AV_T *py)
{
    const FN_AV_I sign = (FN_AV_I){0} + INT64_MIN;
    const FN_AV_T x = *px;
    FN_AV_T a = (FN_AV_T)((FN_AV_I)x & ~sign), p;
    a = FN_AV_SEL(a > FN_AV_SPLAT(FN_AV_TANH_ONE), FN_AV_SPLAT(FN_AV_TANH_ONE), a);
    /* |x| >= 0.55 */
    const FN_AV_T a2 = a + a;
    FN_AV_U k;
    FN_AV_NAME(fn_exp_reduced)(&a2, &p, &k);
    const FN_AV_T s = FN_AV_POW2(k);
    const FN_AV_T e = s * p + (s - FN_AV_SPLAT(1.0));
    /* |x| < 0.55: a + a s P(s) / Q(s), s = a^2, the [3/4] Pade approximant of
     * (tanh(a)/a - 1)/s (Lambert's continued fraction; 4.7e-18 relative to tanh
     * with its coefficients rounded). The two forms share one division: each
     * lane's t = base + num / den. */
    const FN_AV_T a_sq = a * a, s2 = a_sq * a_sq;
    const FN_AV_T pn = (FN_AV_C(-4.9333382666716e-07) * a_sq + FN_AV_C(-0.00029304029304029304)) * s2
        + (FN_AV_C(-0.022222222222222223) * a_sq + FN_AV_C(-0.3333333333333333));
    const FN_AV_T qn = ((FN_AV_C(4.9333382666716e-07) * a_sq + FN_AV_C(0.0003108003108003108)) * a_sq
                        + FN_AV_C(0.02564102564102564)) * s2
        + (FN_AV_C(0.4666666666666667) * a_sq + FN_AV_C(1.0));
    const FN_AV_I small = a < FN_AV_SPLAT(FN_AV_TANH_SMALL);
    const FN_AV_T num = FN_AV_SEL(small, (a * a_sq) * pn, e);
    const FN_AV_T den = FN_AV_SEL(small, qn, e + FN_AV_SPLAT(2.0));
    const FN_AV_T base = (FN_AV_T)(small & (FN_AV_I)a);
    const FN_AV_T t = base + num / den;
    *py = (FN_AV_T)((FN_AV_I)t | ((FN_AV_I)x & sign));
}

/* *y = 1 / (1 + exp(-*x)), as e / (1 + e) with e = exp(x) for x < 0: exp
 * of -|x| is at most 1, so 1 + e rounds no more than for x >= 0. */
FN_AV_INLINE void
FN_AV_NAME(fn_logistic)(const FN_AV_T *px, FN_AV_T *py)
{
    const FN_AV_I sign = (FN_AV_I){0} + INT64_MIN;
    const FN_AV_T x = *px;
    const FN_AV_T m = (FN_AV_T)((FN_AV_I)x | sign);      /* -|x| */
    FN_AV_T e;
    FN_AV_NAME(fn_exp_nonpositive)(&m, &e);
    const FN_AV_T one = FN_AV_SPLAT(1.0);
    *py = FN_AV_SEL(x < FN_AV_SPLAT(0.0), e, one) / (one + e);
}

/* *y = f(*s) for the activation `code` (_constants.h; not softmax) and, unless
 * d is NULL, *d = f'(*s). With `code` a constant only its branch is compiled.
 * relu: s < 0 (not s > 0) selects 0, so a NaN net input passes; f'(0) = 0
 * (the subgradient PyTorch and scikit-learn take). proben1 without the
 * derivative divides, x / (1 + |x|), with it multiplies by q = 1 / (1 + |x|)
 * (then f' = q^2). */
FN_AV_INLINE void
FN_AV_NAME(fn_activate)(int code, const FN_AV_T *ps, FN_AV_T *y, FN_AV_T *d)
{
    const FN_AV_T x = *ps;
    if (code == FN_ACT_PROBEN1) {
        const FN_AV_T den = 1.0 + (FN_AV_T)((FN_AV_I)x & ((FN_AV_I){0} + INT64_MAX));
        if (d) {
            const FN_AV_T q = 1.0 / den;
            *y = x * q;
            *d = q * q;
        } else {
            *y = x / den;
        }
    } else if (code == FN_ACT_LOGISTIC) {
        FN_AV_NAME(fn_logistic)(ps, y);
        if (d) *d = *y * (1.0 - *y);
    } else if (code == FN_ACT_TANH) {
        FN_AV_NAME(fn_tanh)(ps, y);
        if (d) *d = 1.0 - *y * *y;
    } else if (code == FN_ACT_RELU) {
        const FN_AV_T zero = FN_AV_SPLAT(0.0);
        *y = FN_AV_SEL(x < zero, zero, x);
        if (d) *d = FN_AV_SEL(x > zero, FN_AV_SPLAT(1.0), zero);
    } else {
        *y = x;
        if (d) *d = FN_AV_SPLAT(1.0);
    }
}

/* n values of one row: z[u] <- f(z[u] + b[u]) (b NULL: the biases are in z
 * already), d[u] <- f'(..) unless d is NULL; whole vectors, then one vector
 * over the tail, the rest of it padded with zeros (every value's result is
 * the one it would get anywhere in a row). */
FN_AV_INLINE void
FN_AV_NAME(fn_activate_row)(int code, ptrdiff_t n, double *z, const double *b, double *d)
{
    ptrdiff_t u = 0;
    FN_AV_T s, y, f;
    for (; u + FN_AV_W <= n; u += FN_AV_W) {
        __builtin_memcpy(&s, z + u, sizeof s);
        if (b) { FN_AV_T c; __builtin_memcpy(&c, b + u, sizeof c); s += c; }
        FN_AV_NAME(fn_activate)(code, &s, &y, d ? &f : NULL);
        __builtin_memcpy(z + u, &y, sizeof y);
        if (d) __builtin_memcpy(d + u, &f, sizeof f);
    }
#if FN_AV_W > 1
    if (u + 1 == n) {                      /* one value left: the scalar form */
        fn_av1 s1 = {b ? z[u] + b[u] : z[u]}, y1, f1;
        fn_activate_1(code, &s1, &y1, d ? &f1 : NULL);
        z[u] = y1[0];
        if (d) d[u] = f1[0];
        return;
    }
#endif
    if (u < n) {
        const ptrdiff_t m = n - u;
        s = (FN_AV_T){0};
        for (ptrdiff_t i = 0; i < m; i++) s[i] = b ? z[u + i] + b[u + i] : z[u + i];
        FN_AV_NAME(fn_activate)(code, &s, &y, d ? &f : NULL);
        for (ptrdiff_t i = 0; i < m; i++) z[u + i] = y[i];
        if (d) for (ptrdiff_t i = 0; i < m; i++) d[u + i] = f[i];
    }
}

/* nb rows of `size` units (rows have strides ldz and ldd; D may be NULL; b
 * NULL: the biases are in Z already), as fn_activate_row row by row, `code`
 * as given (fn_activate_rows passes constants where that pays). Layers
 * narrower than a vector (Proben1's 4+2, XOR's 2) are taken across the rows
 * instead, a whole vector of values at a time in row order, so that no lane
 * computes padding. */
FN_AV_INLINE void
FN_AV_NAME(fn_activate_rows_each)(int code, ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                             const double *b, double *D, ptrdiff_t ldd)
{
    if (size >= FN_AV_W || nb == 1) {
        for (ptrdiff_t r = 0; r < nb; r++)
            FN_AV_NAME(fn_activate_row)(code, size, Z + r * ldz, b, D ? D + r * ldd : NULL);
        return;
    }
    const ptrdiff_t total = nb * size;
    ptrdiff_t r = 0, u = 0;                /* the next value to write */
    for (ptrdiff_t i0 = 0; i0 < total; i0 += FN_AV_W) {
        const ptrdiff_t m = total - i0 < FN_AV_W ? total - i0 : FN_AV_W;
        FN_AV_T s = FN_AV_SPLAT(0.0), y, f;
        ptrdiff_t rr = r, uu = u;
        for (ptrdiff_t i = 0; i < m; i++) {
            s[i] = b ? Z[rr * ldz + uu] + b[uu] : Z[rr * ldz + uu];
            if (++uu == size) { uu = 0; rr++; }
        }
        FN_AV_NAME(fn_activate)(code, &s, &y, D ? &f : NULL);
        for (ptrdiff_t i = 0; i < m; i++) {
            Z[r * ldz + u] = y[i];
            if (D) D[r * ldd + u] = f[i];
            if (++u == size) { u = 0; r++; }
        }
    }
}

/* fn_activate_rows_each for the activation `code` (_constants.h; not softmax;
 * anything else: linear), f' into D unless D is NULL. The cheap activations
 * run with `code` and D's presence constants, a loop each (relu's pass 0.7 of
 * the time of the shared loop, whose f' went through memory); logistic and
 * tanh share the loop with `code` a variable (measured: a loop of their own
 * spilled constants, 7 % slower). */
FN_AV_INLINE void
FN_AV_NAME(fn_activate_rows)(int code, ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                             const double *b, double *D, ptrdiff_t ldd)
{
#define FN_AV_ROWS_CASE(c)                                                              \
    if (D) FN_AV_NAME(fn_activate_rows_each)(c, nb, size, Z, ldz, b, D, ldd);          \
    else FN_AV_NAME(fn_activate_rows_each)(c, nb, size, Z, ldz, b, NULL, ldd);         \
    break;
    switch (code) {
    case FN_ACT_PROBEN1: FN_AV_ROWS_CASE(FN_ACT_PROBEN1)
    case FN_ACT_RELU: FN_AV_ROWS_CASE(FN_ACT_RELU)
    case FN_ACT_LOGISTIC: case FN_ACT_TANH:
        FN_AV_NAME(fn_activate_rows_each)(code, nb, size, Z, ldz, b, D, ldd);
        break;
    default: FN_AV_ROWS_CASE(FN_ACT_LINEAR)
    }
#undef FN_AV_ROWS_CASE
}

/* n values of exp in place (softmax rows), as fn_activate_row. */
FN_AV_INLINE void
FN_AV_NAME(fn_exp_row)(ptrdiff_t n, double *z)
{
    ptrdiff_t u = 0;
    FN_AV_T s, y;
    for (; u + FN_AV_W <= n; u += FN_AV_W) {
        __builtin_memcpy(&s, z + u, sizeof s);
        FN_AV_NAME(fn_exp)(&s, &y);
        __builtin_memcpy(z + u, &y, sizeof y);
    }
    if (u < n) {
        s = (FN_AV_T){0};
        for (ptrdiff_t i = 0; i < n - u; i++) s[i] = z[u + i];
        FN_AV_NAME(fn_exp)(&s, &y);
        for (ptrdiff_t i = 0; i < n - u; i++) z[u + i] = y[i];
    }
}

#undef FN_AV_NAME
#undef FN_AV_SEL
#undef FN_AV_SPLAT
#undef FN_AV_POW2
#undef FN_AV_C
#undef FN_AV_U
#undef FN_AV_T
#undef FN_AV_I
#undef FN_AV_W
