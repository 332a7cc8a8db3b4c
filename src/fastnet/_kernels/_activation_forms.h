/* The activation functions at one value type and vector width: a template
 * that _activations.h includes once per (type, width) pair (see there for the
 * algorithms and their accuracy). Parameters, defined by the includer:
 *   FN_AV_T   a GCC vector of the value type (double or float);
 *   FN_AV_I   the signed integer vector of as many lanes and as wide (int64 or
 *             int32: the masks of comparisons);
 *   FN_AV_U   the unsigned one (uint64 or uint32);
 *   FN_AV_W   the number of lanes;
 *   FN_AV_ID  the functions' suffix (fn_exp_8 for eight doubles, fn_exp_f16
 *             for sixteen floats, ...);
 * undefined here; and, set once per value type (and left defined):
 *   FN_AV_BITS  64 or 32: the value type, whose constants FN_AV64_* or
 *               FN_AV32_* (_activations.h) FN_AV_K names, and whose
 *               polynomials are chosen below (the one part written per type);
 *   FN_AV_S     the scalar type (double or float) of the rows;
 *   FN_AV_T1, FN_AV_ONE(f)  the one-lane vector type and the one-lane
 *               function f of the type (a row's last value when one is left).
 * Vectors go in and out by pointer (a vector argument would have another ABI
 * in each CPU clone); the functions are always inlined, so the pointers vanish.
 */
#define FN_AV_NAME(f) FN_AV_CAT(f, FN_AV_ID)
/* a where the mask m is set, else b (m: all ones or all zeros per lane) */
#define FN_AV_SEL(m, a, b) ((FN_AV_T)(((m) & (FN_AV_I)(a)) | (~(m) & (FN_AV_I)(b))))
/* c in every lane, as a vector constant (GCC then loads it whole; splatting a
 * scalar at run time costs SSE2 code two instructions per constant) */
#if FN_AV_W == 16
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c), (c), (c), (c), (c), (c), (c), \
                                  (c), (c), (c), (c), (c), (c), (c), (c)})
#elif FN_AV_W == 8
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c), (c), (c), (c), (c), (c), (c)})
#elif FN_AV_W == 4
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c), (c), (c)})
#elif FN_AV_W == 2
#define FN_AV_SPLAT(c) ((FN_AV_T){(c), (c)})
#else
#define FN_AV_SPLAT(c) ((FN_AV_T){(c)})
#endif
/* the value type's constant c: FN_AV64_c or FN_AV32_c (c pasted at once, so
 * that a macro of the same name, INT_MAX, is not expanded) */
#define FN_AV_K(c) FN_AV_KCAT(FN_AV_BITS, _##c)
/* the sign bit of every lane; every bit but it */
#define FN_AV_SIGN ((FN_AV_I){0} + FN_AV_K(INT_MIN))
#define FN_AV_MAGNITUDE ((FN_AV_I){0} + FN_AV_K(INT_MAX))

/* exp's range reduction and polynomial: x = k ln2 + r, |r| <= ln2 / 2, and
 * *p = exp(r) - 1 = r + r^2 q(r); *k as a two's complement integer (the integer
 * arithmetic is unsigned throughout: with a NaN x the bits are garbage, and a
 * signed overflow would be undefined even though the result is discarded). x must lie in
 * [FN_AV_K(EXP_MIN), FN_AV_K(EXP_MAX)] (or be NaN, which passes to *p). */
FN_AV_INLINE void
FN_AV_NAME(fn_exp_reduced)(const FN_AV_T *px, FN_AV_T *pp, FN_AV_U *pk)
{
    const FN_AV_T x = *px;
    /* k = round(x / ln2), as a value and as an integer */
    FN_AV_T kd = x * FN_AV_SPLAT(FN_AV_K(LOG2E)) + FN_AV_SPLAT(FN_AV_K(SHIFTER));
    *pk = (FN_AV_U)kd - (FN_AV_U)FN_AV_SPLAT(FN_AV_K(SHIFTER));
    kd -= FN_AV_SPLAT(FN_AV_K(SHIFTER));
    /* r = x - k ln2 in two steps: the first is exact */
    FN_AV_T r = x - kd * FN_AV_SPLAT(FN_AV_K(LN2_HI));
    r = r - kd * FN_AV_SPLAT(FN_AV_K(LN2_LO));
#define FN_AV_C(c) FN_AV_SPLAT(c)
    const FN_AV_T r2 = r * r;
#if FN_AV_BITS == 32
    /* q(r) = (exp(r) - 1 - r) / r^2 on |r| <= ln2 / 2: float's polynomial has
     * degree 4, the Chebyshev fit that puts 1 + r + r^2 q within 1.1e-8 of
     * exp(r) (0.18 ulp of float; benchmarks/activation_coefficients.py), by
     * Estrin's scheme: a chain of three multiply-adds */
    const FN_AV_T q01 = FN_AV_C(0.16666576f) * r + FN_AV_C(0.5f);
    const FN_AV_T q23 = FN_AV_C(0.008363179f) * r + FN_AV_C(0.041666556f);
    const FN_AV_T q = (FN_AV_C(0.0013926184f) * r2 + q23) * r2 + q01;
#else
    /* q(r) = (exp(r) - 1 - r) / r^2 on |r| <= ln2 / 2: a polynomial of degree 9,
     * the Chebyshev fit (near minimax; benchmarks/activation_coefficients.py) that
     * puts 1 + r + r^2 q within 1.6e-17 of exp(r) (the Taylor series needs degree
     * 11 for that). By Estrin's scheme: pairs, then pairs of pairs (a chain of
     * four multiply-adds, not nine: the tiny kernels wait on it) */
    const FN_AV_T r4 = r2 * r2;
    const FN_AV_T q01 = FN_AV_C(0.16666666666666669) * r + FN_AV_C(0.5000000000000001);
    const FN_AV_T q23 = FN_AV_C(0.008333333333330062) * r + FN_AV_C(0.04166666666662413);
    const FN_AV_T q45 = FN_AV_C(0.00019841269863053618) * r + FN_AV_C(0.0013888888917213717);
    const FN_AV_T q67 = FN_AV_C(2.7557268459997064e-06) * r + FN_AV_C(2.4801521295954376e-05);
    const FN_AV_T q89 = FN_AV_C(2.510038549551032e-08) * r + FN_AV_C(2.7620088445409746e-07);
    const FN_AV_T q03 = q23 * r2 + q01, q47 = q67 * r2 + q45;
    const FN_AV_T q = (q89 * r4 + q47) * r4 + q03;
#endif
    *pp = r + r2 * q;
}

/* 2^k for integers k (two's complement, unsigned) in the normal exponents
 * (double's [-1022, 1023], float's [-126, 127]). */
#define FN_AV_POW2(k) ((FN_AV_T)(((k) + FN_AV_K(BIAS)) << FN_AV_K(MANT)))

/* *y = exp(*x) for x <= 0 (or NaN): the result may be subnormal or 0.
 * Here k <= 0, so 2^k = 2^(k + 55) 2^-55 with k + 55 >= -1021 a normal
 * exponent (for float 2^(k + 26) 2^-26, k + 26 >= -124; FN_AV_K(LIFT) is
 * the 55 or the 26): (1 + p) 2^(k + 55) is exact (1 + p >= 0.7) and the one rounding
 * is the last product's, as in fn_exp's two-step scaling (bit for bit the
 * same result, in 4 operations instead of 11: logistic's exp). The first
 * product is taken as p S + S, a multiply-add: S (1 + p) rounds as 1 + p does. */
FN_AV_INLINE void
FN_AV_NAME(fn_exp_nonpositive)(const FN_AV_T *px, FN_AV_T *py)
{
    FN_AV_T x = *px, p;
    FN_AV_U k;
    /* (comparisons are false for NaN, which passes to the polynomial) */
    x = FN_AV_SEL(x < FN_AV_SPLAT(FN_AV_K(EXP_MIN)), FN_AV_SPLAT(FN_AV_K(EXP_MIN)), x);
    FN_AV_NAME(fn_exp_reduced)(&x, &p, &k);
    const FN_AV_T s = FN_AV_POW2(k + FN_AV_K(LIFT));
    *py = (p * s + s) * FN_AV_SPLAT(FN_AV_K(UNLIFT));
}

/* *y = exp(*x), lane by lane (x > 710 is taken as 710: +inf; float: 89). */
FN_AV_INLINE void
FN_AV_NAME(fn_exp)(const FN_AV_T *px, FN_AV_T *py)
{
    FN_AV_T x = *px, p;
    FN_AV_U k;
    x = FN_AV_SEL(x > FN_AV_SPLAT(FN_AV_K(EXP_MAX)), FN_AV_SPLAT(FN_AV_K(EXP_MAX)), x);
    x = FN_AV_SEL(x < FN_AV_SPLAT(FN_AV_K(EXP_MIN)), FN_AV_SPLAT(FN_AV_K(EXP_MIN)), x);
    FN_AV_NAME(fn_exp_reduced)(&x, &p, &k);
    /* times 2^k = 2^k1 2^k2 (k1 = floor(k / 2), both within the normal exponents;
     * k + 2048 > 0, so a logical shift halves it: AVX2 has no 64-bit arithmetic one;
     * float: k + 256 and 128) */
    const FN_AV_U k1 = ((k + 2 * FN_AV_K(HALF_K)) >> 1) - FN_AV_K(HALF_K), k2 = k - k1;
    *py = ((FN_AV_SPLAT(1.0) + p) * FN_AV_POW2(k1)) * FN_AV_POW2(k2);
}

/* *y = tanh(*x). |x| < 0.55: |x| + |x| s P(s) / Q(s), s = x^2; else e / (e + 2) with
 * e = exp(2|x|) - 1 computed as 2^k (exp(r) - 1) + (2^k - 1) (k >= 2 there, so
 * the sum cancels little); then the sign of x. |x| is taken at most 20, where
 * tanh rounds to 1 (float: 10). Both forms are computed, and each lane takes its own. */
FN_AV_INLINE void
FN_AV_NAME(fn_tanh)(const FN_AV_T *px, FN_AV_T *py)
{
    const FN_AV_I sign = FN_AV_SIGN;
    const FN_AV_T x = *px;
    FN_AV_T a = (FN_AV_T)((FN_AV_I)x & ~sign), p;
    a = FN_AV_SEL(a > FN_AV_SPLAT(FN_AV_K(TANH_ONE)), FN_AV_SPLAT(FN_AV_K(TANH_ONE)), a);
    /* |x| >= 0.55 */
    const FN_AV_T a2 = a + a;
    FN_AV_U k;
    FN_AV_NAME(fn_exp_reduced)(&a2, &p, &k);
    const FN_AV_T s = FN_AV_POW2(k);
    const FN_AV_T e = s * p + (s - FN_AV_SPLAT(1.0));
    /* |x| < 0.55: a + a s P(s) / Q(s), s = a^2, the [3/4] Pade approximant of
     * (tanh(a)/a - 1)/s (Lambert's continued fraction; 4.7e-18 relative to tanh
     * with its coefficients rounded); float's is the [2/2] one (2.6e-9). The two
     * forms share one division: each lane's t = base + num / den. */
    const FN_AV_T a_sq = a * a;
#if FN_AV_BITS == 32
    const FN_AV_T pn = FN_AV_C(-0.014814815f) * a_sq + FN_AV_C(-0.33333334f);
    const FN_AV_T qn = (FN_AV_C(0.015873017f) * a_sq + FN_AV_C(0.44444445f)) * a_sq + FN_AV_C(1.0f);
#else
    const FN_AV_T s2 = a_sq * a_sq;
    const FN_AV_T pn = (FN_AV_C(-4.9333382666716e-07) * a_sq + FN_AV_C(-0.00029304029304029304)) * s2
        + (FN_AV_C(-0.022222222222222223) * a_sq + FN_AV_C(-0.3333333333333333));
    const FN_AV_T qn = ((FN_AV_C(4.9333382666716e-07) * a_sq + FN_AV_C(0.0003108003108003108)) * a_sq
                        + FN_AV_C(0.02564102564102564)) * s2
        + (FN_AV_C(0.4666666666666667) * a_sq + FN_AV_C(1.0));
#endif
    const FN_AV_I small = a < FN_AV_SPLAT(FN_AV_K(TANH_SMALL));
    const FN_AV_T num = FN_AV_SEL(small, (a * a_sq) * pn, e);
    const FN_AV_T den = FN_AV_SEL(small, qn, e + FN_AV_SPLAT(2.0));
    const FN_AV_T base = (FN_AV_T)(small & (FN_AV_I)a);
    const FN_AV_T t = base + num / den;
    *py = (FN_AV_T)((FN_AV_I)t | ((FN_AV_I)x & sign));
}

/* *y = 1 / (1 + exp(-*x)), as e / (1 + e) with e = exp(x) for x < 0: exp
 * of -|x| is at most 1, so 1 + e rounds no more than for x >= 0.
 * float: e rounded to float is up to 2^-23 of e off where e lies just above
 * a power of two and y just below it: 2 ulp of y before 1 + e and the
 * quotient round (an exhaustive check found 2.3 ulp). So e is kept as a
 * pair e_hi + e_lo, exactly 2^k (1 + p) (1 + p split by Fast2Sum, |p| < 1),
 * and so is D = 1 + e (Fast2Sum again, e <= 1); the quotient q = N / d_hi of
 * the high parts (N = e or 1) is then corrected by its residual,
 * y = q + (N - q d_hi + N_lo - q d_lo) / D, with 1 / D taken as 1 - q for
 * x < 0 and q for x >= 0 (float's precision is plenty for a correction of a
 * few ulp). Where the level has FMA, N - q d_hi is one fused multiply-add and
 * exact; in the baseline it rounds once (every input: 1.52 ulp at most, not 1.08). */
FN_AV_INLINE void
FN_AV_NAME(fn_logistic)(const FN_AV_T *px, FN_AV_T *py)
{
    const FN_AV_I sign = FN_AV_SIGN;
    const FN_AV_T x = *px;
    const FN_AV_T m = (FN_AV_T)((FN_AV_I)x | sign);      /* -|x| */
    const FN_AV_T one = FN_AV_SPLAT(1.0);
#if FN_AV_BITS == 32
    FN_AV_T mm = FN_AV_SEL(m < FN_AV_SPLAT(FN_AV_K(EXP_MIN)), FN_AV_SPLAT(FN_AV_K(EXP_MIN)), m), p;
    FN_AV_U k;
    FN_AV_NAME(fn_exp_reduced)(&mm, &p, &k);
    const FN_AV_T s = FN_AV_POW2(k + FN_AV_K(LIFT)), zero = FN_AV_SPLAT(0.0);
    const FN_AV_T n_hi = one + p, n_lo = (one - n_hi) + p;
    const FN_AV_T e_hi = (s * n_hi) * FN_AV_SPLAT(FN_AV_K(UNLIFT));
    const FN_AV_T e_lo = (s * n_lo) * FN_AV_SPLAT(FN_AV_K(UNLIFT));
    const FN_AV_T d_hi = one + e_hi, d_lo = ((one - d_hi) + e_hi) + e_lo;
    const FN_AV_I neg = x < zero;
    const FN_AV_T num_hi = FN_AV_SEL(neg, e_hi, one), num_lo = FN_AV_SEL(neg, e_lo, zero);
    const FN_AV_T q = num_hi / d_hi;
    const FN_AV_T r = num_hi - q * d_hi;
    const FN_AV_T inv = FN_AV_SEL(neg, one - q, q);
    *py = q + ((r + num_lo) - q * d_lo) * inv;
#else
    FN_AV_T e;
    FN_AV_NAME(fn_exp_nonpositive)(&m, &e);
    *py = FN_AV_SEL(x < FN_AV_SPLAT(0.0), e, one) / (one + e);
#endif
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
        const FN_AV_T den = 1.0 + (FN_AV_T)((FN_AV_I)x & FN_AV_MAGNITUDE);
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
FN_AV_NAME(fn_activate_row)(int code, ptrdiff_t n, FN_AV_S *z, const FN_AV_S *b, FN_AV_S *d)
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
        FN_AV_T1 s1 = {b ? z[u] + b[u] : z[u]}, y1, f1;
        FN_AV_ONE(fn_activate)(code, &s1, &y1, d ? &f1 : NULL);
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
FN_AV_NAME(fn_activate_rows_each)(int code, ptrdiff_t nb, ptrdiff_t size, FN_AV_S *Z, ptrdiff_t ldz,
                             const FN_AV_S *b, FN_AV_S *D, ptrdiff_t ldd)
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

/* The cases of a switch over a narrow layer's width n < FN_AV_W: OP(C) with C the
 * width, a constant (each copy loop then a fixed number of moves). */
#if FN_AV_W > 8
#define FN_AV_WIDTHS(OP) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) \
    OP(11) OP(12) OP(13) OP(14) OP(15)
#elif FN_AV_W > 4
#define FN_AV_WIDTHS(OP) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7)
#elif FN_AV_W > 2
#define FN_AV_WIDTHS(OP) OP(1) OP(2) OP(3)
#else
#define FN_AV_WIDTHS(OP) OP(1)
#endif

/* fn_activate_rows_each for the exp-based units (logistic, tanh; `code` a variable):
 * layers narrower than a vector are packed end to end into a buffer, ROWS rows at a
 * time, activated there as one row and copied back: 2-3 times faster per value than
 * the value-by-value walk across the rows, whose vectors are built one value at a time
 * (8 tanh units in float32: 0.70 against 1.50 ns per value). The copies are switched
 * on the width, the activation is not (one copy of its code). */
FN_AV_INLINE void
FN_AV_NAME(fn_activate_rows_packed)(int code, ptrdiff_t nb, ptrdiff_t size, FN_AV_S *Z,
                                    ptrdiff_t ldz, const FN_AV_S *b, FN_AV_S *D, ptrdiff_t ldd)
{
    enum { ROWS = 64 };
    FN_AV_S in[ROWS * FN_AV_W], der[ROWS * FN_AV_W];
    if (size >= FN_AV_W || nb == 1) {
        FN_AV_NAME(fn_activate_rows_each)(code, nb, size, Z, ldz, b, D, ldd);
        return;
    }
    for (ptrdiff_t r0 = 0; r0 < nb; r0 += ROWS) {
        const ptrdiff_t n = nb - r0 < ROWS ? nb - r0 : ROWS;
        FN_AV_S *z0 = Z + r0 * ldz, *d0 = D ? D + r0 * ldd : NULL;
#define FN_AV_PACK(C)                                                                   \
        case C:                                                                         \
            if (b)                                                                      \
                for (ptrdiff_t r = 0; r < n; r++)                                       \
                    for (int k = 0; k < C; k++) in[r * C + k] = z0[r * ldz + k] + b[k]; \
            else                                                                        \
                for (ptrdiff_t r = 0; r < n; r++)                                       \
                    for (int k = 0; k < C; k++) in[r * C + k] = z0[r * ldz + k];        \
            break;
        switch (size) { FN_AV_WIDTHS(FN_AV_PACK) default: break; }
#undef FN_AV_PACK
        FN_AV_NAME(fn_activate_row)(code, n * size, in, NULL, D ? der : NULL);
#define FN_AV_UNPACK(C)                                                                 \
        case C:                                                                         \
            for (ptrdiff_t r = 0; r < n; r++)                                           \
                for (int k = 0; k < C; k++) z0[r * ldz + k] = in[r * C + k];            \
            if (d0)                                                                     \
                for (ptrdiff_t r = 0; r < n; r++)                                       \
                    for (int k = 0; k < C; k++) d0[r * ldd + k] = der[r * C + k];       \
            break;
        switch (size) { FN_AV_WIDTHS(FN_AV_UNPACK) default: break; }
#undef FN_AV_UNPACK
    }
}
#undef FN_AV_WIDTHS

/* fn_activate_rows_each for the activation `code` (_constants.h; not softmax;
 * anything else: linear), f' into D unless D is NULL. The cheap activations
 * run with `code` and D's presence constants, a loop each (relu's pass 0.7 of
 * the time of the shared loop, whose f' went through memory); logistic and
 * tanh share the loop with `code` a variable (measured: a loop of their own
 * spilled constants, 7 % slower). */
FN_AV_INLINE void
FN_AV_NAME(fn_activate_rows)(int code, ptrdiff_t nb, ptrdiff_t size, FN_AV_S *Z, ptrdiff_t ldz,
                             const FN_AV_S *b, FN_AV_S *D, ptrdiff_t ldd)
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
FN_AV_NAME(fn_exp_row)(ptrdiff_t n, FN_AV_S *z)
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
#undef FN_AV_K
#undef FN_AV_SIGN
#undef FN_AV_MAGNITUDE
#undef FN_AV_SEL
#undef FN_AV_SPLAT
#undef FN_AV_POW2
#undef FN_AV_C
#undef FN_AV_U
#undef FN_AV_T
#undef FN_AV_I
#undef FN_AV_W
#undef FN_AV_ID
