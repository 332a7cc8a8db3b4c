/* fastnet's vector exp, tanh and logistic (src/fastnet/_kernels/_activations.h)
 * against SLEEF's (the 1.0-ulp functions, Sleef_*d8_u10avx512f and
 * Sleef_*d4_u10avx2) and the C library, one core: nanoseconds per value over a
 * 4096-value row in the cache (median of 15 rounds, the contestants taking
 * turns), and the largest distance in ulp from libm (logistic: from its exact
 * value, in long double) over a dense sweep.
 *
 *     apt-get install libsleef-dev        # Debian's SLEEF 3.5 (optional: -DNO_SLEEF)
 *     gcc -O3 -fno-math-errno -I src/fastnet/_kernels benchmarks/vector_math.c \
 *         -lsleef -lm -o /tmp/vector_math && /tmp/vector_math
 *
 * The comparison behind docs/performance.md's choice of our own kernels.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "_activations.h"
#ifndef NO_SLEEF
#include <immintrin.h>
#include <sleef.h>
/* (sleef.h declares its AVX2 and AVX-512 functions only when the whole file is built
 * for them) */
#ifndef __AVX512F__
__m512d Sleef_expd8_u10avx512f(__m512d) __attribute__((target("avx512f")));
__m512d Sleef_tanhd8_u10avx512f(__m512d) __attribute__((target("avx512f")));
#endif
#ifndef __AVX2__
__m256d Sleef_expd4_u10avx2(__m256d) __attribute__((target("avx2,fma")));
__m256d Sleef_tanhd4_u10avx2(__m256d) __attribute__((target("avx2,fma")));
#endif
#endif

#define N 4096
#define ROUNDS 15
#define REPS 200

enum { F_EXP, F_TANH, F_LOGISTIC, F_COUNT };
static const char *NAMES[F_COUNT] = {"exp", "tanh", "logistic"};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define V4 __attribute__((target("arch=x86-64-v4")))
#define V3 __attribute__((target("arch=x86-64-v3")))

V4 static void ours8(int f, const double *x, double *y, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i += 8) {
        fn_av8 s, r;
        memcpy(&s, x + i, sizeof s);
        if (f == F_EXP) fn_exp_8(&s, &r);
        else if (f == F_TANH) fn_tanh_8(&s, &r);
        else fn_logistic_8(&s, &r);
        memcpy(y + i, &r, sizeof r);
    }
}

V3 static void ours4(int f, const double *x, double *y, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i += 4) {
        fn_av4 s, r;
        memcpy(&s, x + i, sizeof s);
        if (f == F_EXP) fn_exp_4(&s, &r);
        else if (f == F_TANH) fn_tanh_4(&s, &r);
        else fn_logistic_4(&s, &r);
        memcpy(y + i, &r, sizeof r);
    }
}

#ifndef NO_SLEEF
V4 static void sleef8(int f, const double *x, double *y, ptrdiff_t n)
{
    const __m512d one = _mm512_set1_pd(1.0);
    for (ptrdiff_t i = 0; i < n; i += 8) {
        __m512d s = _mm512_loadu_pd(x + i), r;
        if (f == F_EXP) r = Sleef_expd8_u10avx512f(s);
        else if (f == F_TANH) r = Sleef_tanhd8_u10avx512f(s);
        else r = _mm512_div_pd(one, _mm512_add_pd(one, Sleef_expd8_u10avx512f(
                 _mm512_sub_pd(_mm512_setzero_pd(), s))));
        _mm512_storeu_pd(y + i, r);
    }
}

V3 static void sleef4(int f, const double *x, double *y, ptrdiff_t n)
{
    const __m256d one = _mm256_set1_pd(1.0);
    for (ptrdiff_t i = 0; i < n; i += 4) {
        __m256d s = _mm256_loadu_pd(x + i), r;
        if (f == F_EXP) r = Sleef_expd4_u10avx2(s);
        else if (f == F_TANH) r = Sleef_tanhd4_u10avx2(s);
        else r = _mm256_div_pd(one, _mm256_add_pd(one, Sleef_expd4_u10avx2(
                 _mm256_sub_pd(_mm256_setzero_pd(), s))));
        _mm256_storeu_pd(y + i, r);
    }
}
#endif

static void libm1(int f, const double *x, double *y, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] = f == F_EXP ? exp(x[i]) : f == F_TANH ? tanh(x[i]) : 1.0 / (1.0 + exp(-x[i]));
}

typedef void (*fn_t)(int, const double *, double *, ptrdiff_t);

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ulps(double a, double b)
{
    if (isnan(a) && isnan(b)) return 0;
    if (a == b) return 0;
    if (isinf(a) || isinf(b) || isnan(a) || isnan(b)) return INFINITY;
    int64_t i, j;
    memcpy(&i, &a, 8);
    memcpy(&j, &b, 8);
    if (i < 0) i = INT64_MIN - i;
    if (j < 0) j = INT64_MIN - j;
    return i > j ? (double)(i - j) : (double)(j - i);
}

int main(void)
{
    fn_t fns[] = {ours8, ours4,
#ifndef NO_SLEEF
                  sleef8, sleef4,
#endif
                  libm1};
    const char *names[] = {"fastnet avx512", "fastnet avx2",
#ifndef NO_SLEEF
                           "sleef u10 avx512", "sleef u10 avx2",
#endif
                           "libm"};
    const int nf = sizeof fns / sizeof fns[0];
    static double x[N], y[N], ref[N];
    for (int i = 0; i < N; i++) x[i] = -6.0 + 12.0 * (i + 0.5) / N;
    printf("ns per value, %d-value rows in cache, median of %d rounds (taking turns);"
           " max ulp from libm (logistic: from"
           " its exact value) over 2e6 values\n", N, ROUNDS);
    for (int f = 0; f < F_COUNT; f++) {
        double t[8][ROUNDS];
        for (int r = 0; r < ROUNDS; r++)
            for (int k = 0; k < nf; k++) {
                const double t0 = now();
                for (int rep = 0; rep < REPS; rep++) fns[k](f, x, y, N);
                t[k][r] = (now() - t0) / REPS / N * 1e9;
            }
        for (int k = 0; k < nf; k++) {
            qsort(t[k], ROUNDS, sizeof(double), cmp);
            /* accuracy over a dense sweep of the function's range */
            const double lo = f == F_TANH ? -25.0 : -750.0, hi = f == F_TANH ? 25.0 : 712.0;
            double worst = 0;
            for (int block = 0; block < 500; block++) {
                static double xs[N];
                for (int i = 0; i < N; i++)
                    xs[i] = lo + (hi - lo) * ((double)block * N + i + 0.5) / (500.0 * N);
                fns[k](f, xs, y, N);
                if (f == F_LOGISTIC)   /* the exact value (long double): the formula */
                    for (int i = 0; i < N; i++)     /* with libm's exp loses for x < 0 */
                        ref[i] = (double)(1.0L / (1.0L + expl(-(long double)xs[i])));
                else
                    libm1(f, xs, ref, N);
                for (int i = 0; i < N; i++) {
                    const double u = ulps(y[i], ref[i]);
                    if (u > worst) worst = u;
                }
            }
            printf("%-9s %-18s %7.3f ns  max %g ulp\n", NAMES[f], names[k], t[k][ROUNDS / 2],
                   worst);
        }
    }
    return 0;
}
