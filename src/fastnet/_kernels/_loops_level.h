/* The single-network loops of one CPU level: a template that _loops.h includes
 * twice, after defining
 *   FN_LV(name)   the name of this level's function (name_v3, name_v0);
 *   FN_LV_ATTR    its target attribute (x86-64-v3, or none: the baseline).
 * _loops.h's dispatchers (fn_loops_forward, ...) call the level of _cpu.h
 * (x86-64-v4 takes the v3 forms: an AVX-512 form was measured slower on these
 * short loops). Not guarded: its parameters are the includer's.
 */

/* Z[r, u] = sum_s A[r, s] W[u, s]   (W is (n_out, n_src), row-major).
 * Four rows per pass: four independent dot products share each weight load. */
FN_LV_ATTR static void
FN_LV(fn_loops_forward)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                 const double *A, ptrdiff_t lda, const double *W,
                 double *Z, ptrdiff_t ldz)
{
    ptrdiff_t r = 0, u, s;
    const ptrdiff_t n_vec = n_src >= FASTNET_VECTOR_DOT_MIN ? n_src - n_src % 4 : 0;
    for (; r + 4 <= nb; r += 4) {
        const double *a0 = A + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        u = 0;
        /* Long dot products: two units per pass share each input load. */
        for (; n_vec && u + 2 <= n_out; u += 2) {
            const double *w = W + u * n_src, *x = w + n_src;
            fn_v4d v0 = {0.0, 0.0, 0.0, 0.0}, v1 = v0, v2 = v0, v3 = v0;
            fn_v4d y0 = v0, y1 = v0, y2 = v0, y3 = v0;
            double c[8];
            int i;
            for (s = 0; s < n_vec; s += 4) {
                const fn_v4d ws = fn_load4(w + s), xs = fn_load4(x + s);
                const fn_v4d b0 = fn_load4(a0 + s), b1 = fn_load4(a1 + s);
                const fn_v4d b2 = fn_load4(a2 + s), b3 = fn_load4(a3 + s);
                v0 += b0 * ws; v1 += b1 * ws; v2 += b2 * ws; v3 += b3 * ws;
                y0 += b0 * xs; y1 += b1 * xs; y2 += b2 * xs; y3 += b3 * xs;
            }
            c[0] = fn_hsum4(v0); c[1] = fn_hsum4(v1); c[2] = fn_hsum4(v2); c[3] = fn_hsum4(v3);
            c[4] = fn_hsum4(y0); c[5] = fn_hsum4(y1); c[6] = fn_hsum4(y2); c[7] = fn_hsum4(y3);
            for (s = n_vec; s < n_src; s++) {
                c[0] += a0[s] * w[s]; c[1] += a1[s] * w[s]; c[2] += a2[s] * w[s]; c[3] += a3[s] * w[s];
                c[4] += a0[s] * x[s]; c[5] += a1[s] * x[s]; c[6] += a2[s] * x[s]; c[7] += a3[s] * x[s];
            }
            for (i = 0; i < 4; i++) {
                Z[(r + i) * ldz + u] = c[i];
                Z[(r + i) * ldz + u + 1] = c[4 + i];
            }
        }
        /* Short dot products: two units per pass give eight independent chains,
         * enough to hide the add latency. */
        for (; !n_vec && u + 2 <= n_out; u += 2) {
            const double *w = W + u * n_src, *x = w + n_src;
            double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
            double e0 = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
            for (s = 0; s < n_src; s++) {
                const double ws = w[s], xs = x[s];
                const double b0 = a0[s], b1 = a1[s], b2 = a2[s], b3 = a3[s];
                c0 += b0 * ws; c1 += b1 * ws; c2 += b2 * ws; c3 += b3 * ws;
                e0 += b0 * xs; e1 += b1 * xs; e2 += b2 * xs; e3 += b3 * xs;
            }
            Z[r * ldz + u] = c0; Z[(r + 1) * ldz + u] = c1;
            Z[(r + 2) * ldz + u] = c2; Z[(r + 3) * ldz + u] = c3;
            Z[r * ldz + u + 1] = e0; Z[(r + 1) * ldz + u + 1] = e1;
            Z[(r + 2) * ldz + u + 1] = e2; Z[(r + 3) * ldz + u + 1] = e3;
        }
        for (; u < n_out; u++) {
            const double *w = W + u * n_src;
            double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
            if (n_vec) {
                fn_v4d v0 = {0.0, 0.0, 0.0, 0.0}, v1 = v0, v2 = v0, v3 = v0;
                for (s = 0; s < n_vec; s += 4) {
                    const fn_v4d ws = fn_load4(w + s);
                    v0 += fn_load4(a0 + s) * ws;
                    v1 += fn_load4(a1 + s) * ws;
                    v2 += fn_load4(a2 + s) * ws;
                    v3 += fn_load4(a3 + s) * ws;
                }
                c0 = fn_hsum4(v0); c1 = fn_hsum4(v1); c2 = fn_hsum4(v2); c3 = fn_hsum4(v3);
            }
            for (s = n_vec; s < n_src; s++) {
                const double ws = w[s];
                c0 += a0[s] * ws;
                c1 += a1[s] * ws;
                c2 += a2[s] * ws;
                c3 += a3[s] * ws;
            }
            Z[r * ldz + u] = c0;
            Z[(r + 1) * ldz + u] = c1;
            Z[(r + 2) * ldz + u] = c2;
            Z[(r + 3) * ldz + u] = c3;
        }
    }
    for (; r < nb; r++) {
        const double *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const double *w = W + u * n_src;
            double c = 0.0;
            if (n_vec) {
                fn_v4d v = {0.0, 0.0, 0.0, 0.0};
                for (s = 0; s < n_vec; s += 4)
                    v += fn_load4(a + s) * fn_load4(w + s);
                c = fn_hsum4(v);
            }
            for (s = n_vec; s < n_src; s++)
                c += a[s] * w[s];
            Z[r * ldz + u] = c;
        }
    }
}

/* G[u, s] += sum_r Delta[r, u] A[r, s]   (G is (n_out, n_src)) */
FN_LV_ATTR static void
FN_LV(fn_loops_gradient)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                  const double *Delta, ptrdiff_t ldd,
                  const double *A, ptrdiff_t lda, double *G)
{
    ptrdiff_t r = 0, u, s;
    for (; r + 4 <= nb; r += 4) {
        const double *a0 = A + r * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        /* Two units per pass: each loaded input serves both. */
        for (u = 0; u + 2 <= n_out; u += 2) {
            const double *d = Delta + r * ldd + u;
            const double d00 = d[0], d10 = d[ldd], d20 = d[2 * ldd], d30 = d[3 * ldd];
            const double d01 = d[1], d11 = d[ldd + 1], d21 = d[2 * ldd + 1], d31 = d[3 * ldd + 1];
            double *g0 = G + u * n_src, *g1 = g0 + n_src;
            for (s = 0; s < n_src; s++) {
                const double x0 = a0[s], x1 = a1[s], x2 = a2[s], x3 = a3[s];
                g0[s] += (d00 * x0 + d10 * x1) + (d20 * x2 + d30 * x3);
                g1[s] += (d01 * x0 + d11 * x1) + (d21 * x2 + d31 * x3);
            }
        }
        for (; u < n_out; u++) {
            const double d0 = Delta[r * ldd + u], d1 = Delta[(r + 1) * ldd + u];
            const double d2 = Delta[(r + 2) * ldd + u], d3 = Delta[(r + 3) * ldd + u];
            double *g = G + u * n_src;
            for (s = 0; s < n_src; s++)
                g[s] += (d0 * a0[s] + d1 * a1[s]) + (d2 * a2[s] + d3 * a3[s]);
        }
    }
    for (; r < nb; r++) {
        const double *a = A + r * lda;
        for (u = 0; u < n_out; u++) {
            const double d = Delta[r * ldd + u];
            double *g = G + u * n_src;
            for (s = 0; s < n_src; s++)
                g[s] += d * a[s];
        }
    }
}

/* dA[r, s] += sum_u Delta[r, u] W[u, s]   (rows of W have stride ldw) */
FN_LV_ATTR static void
FN_LV(fn_loops_backprop)(ptrdiff_t nb, ptrdiff_t n_out, ptrdiff_t n_src,
                  const double *Delta, ptrdiff_t ldd,
                  const double *W, ptrdiff_t ldw, double *dA,
                  ptrdiff_t ldda)
{
    ptrdiff_t r, u, s;
    for (r = 0; r < nb; r++) {
        double *out = dA + r * ldda;
        for (u = 0; u < n_out; u++) {
            const double d = Delta[r * ldd + u];
            const double *w = W + u * ldw;
            for (s = 0; s < n_src; s++)
                out[s] += d * w[s];
        }
    }
}

/* Proben1 units: z <- f(z + b) with f(x) = x / (1 + |x|); D <- f'(x) = 1 / (1 + |x|)^2
 * (D may be NULL; b NULL: the biases are in z already). nb rows of `size` units;
 * rows have strides ldz and ldd. */
FN_LV_ATTR static void
FN_LV(fn_loops_proben1)(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                 const double *b, double *D, ptrdiff_t ldd)
{
    ptrdiff_t r, u;
    for (r = 0; r < nb; r++) {
        double *z = Z + r * ldz;
        if (D) {
            double *d = D + r * ldd;
            for (u = 0; u < size; u++) {
                const double x = b ? z[u] + b[u] : z[u];
                const double t = 1.0 / (1.0 + fabs(x));
                z[u] = x * t;
                d[u] = t * t;
            }
        } else {
            for (u = 0; u < size; u++) {
                const double x = b ? z[u] + b[u] : z[u];
                z[u] = x / (1.0 + fabs(x));
            }
        }
    }
}

/* Linear units: z <- z + b (b NULL: the biases are in z already); D <- 1 (D may
 * be NULL). The arrays never overlap (restrict), so b stays in registers. */
FN_LV_ATTR static void
FN_LV(fn_loops_linear)(ptrdiff_t nb, ptrdiff_t size, double *Z, ptrdiff_t ldz,
                const double *b, double *D, ptrdiff_t ldd)
{
    ptrdiff_t r, u;
    for (r = 0; r < nb; r++) {
        if (b) {
            double *__restrict z = Z + r * ldz;
            const double *__restrict bb = b;
            for (u = 0; u < size; u++)
                z[u] += bb[u];
        }
        if (D) {
            double *__restrict d = D + r * ldd;
            for (u = 0; u < size; u++)
                d[u] = 1.0;
        }
    }
}

/* Layer deltas and bias gradient in one pass: for hidden layers (D != NULL)
 * Delta <- Delta * D (dE/da times f'(net)); then gb[u] += sum_r Delta[r, u],
 * four rows per step ((r0 + r1) + (r2 + r3), a fixed order): a chain of one add
 * per row would make narrow layers wait on the add latency. */
FN_LV_ATTR static void
FN_LV(fn_loops_deltas_bias)(ptrdiff_t nb, ptrdiff_t size, double *Delta, ptrdiff_t ldd,
                     const double *D, double *gb)
{
    ptrdiff_t r, u;
    if (D) {
        for (r = 0; r < nb; r++) {
            double *__restrict dl = Delta + r * ldd;
            const double *__restrict d = D + r * ldd;
            for (u = 0; u < size; u++)
                dl[u] *= d[u];
        }
    }
    for (r = 0; r + 4 <= nb; r += 4) {
        const double *__restrict d0 = Delta + r * ldd, *__restrict d1 = d0 + ldd;
        const double *__restrict d2 = d1 + ldd, *__restrict d3 = d2 + ldd;
        double *__restrict g = gb;
        for (u = 0; u < size; u++)
            g[u] += (d0[u] + d1[u]) + (d2[u] + d3[u]);
    }
    for (; r < nb; r++) {
        const double *__restrict dl = Delta + r * ldd;
        double *__restrict g = gb;
        for (u = 0; u < size; u++)
            g[u] += dl[u];
    }
}

/* Output deltas 2 (y - t) f'(net) of nb rows (n_out outputs each); returns the
 * rows' summed squared error, added in row order. */
FN_LV_ATTR static double
FN_LV(fn_loops_output_deltas)(ptrdiff_t nb, ptrdiff_t n_out, const double *Y, ptrdiff_t ldy,
                       const double *T, ptrdiff_t ldt, const double *D, double *Delta,
                       ptrdiff_t ldd)
{
    ptrdiff_t r, k;
    double sse = 0.0;
    for (r = 0; r < nb; r++) {
        const double *y = Y + r * ldy, *t = T + r * ldt, *d = D + r * ldd;
        double *dl = Delta + r * ldd;
        double row = 0.0;
        for (k = 0; k < n_out; k++) {
            const double e = y[k] - t[k];
            row += e * e;
            dl[k] = 2.0 * e * d[k];
        }
        sse += row;
    }
    return sse;
}

/* Copy nb rows of n values (X contiguous) into the first columns of the rows of
 * A (stride lda); returns 1 when every value is finite, 0 otherwise. */
FN_LV_ATTR static int
FN_LV(fn_loops_load_rows)(ptrdiff_t nb, ptrdiff_t n, const double *X, double *A, ptrdiff_t lda)
{
    uint64_t nonfinite = 0;
    ptrdiff_t r, c;
    for (r = 0; r < nb; r++) {
        const double *__restrict x = X + r * n;
        double *__restrict a = A + r * lda;
        for (c = 0; c < n; c++) {
            nonfinite |= fn_loops_nonfinite(x + c);
            a[c] = x[c];
        }
    }
    return nonfinite == 0;
}

/* Whether the n values of X are all finite. */
FN_LV_ATTR static int
FN_LV(fn_loops_all_finite)(ptrdiff_t n, const double *X)
{
    uint64_t nonfinite = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        nonfinite |= fn_loops_nonfinite(X + i);
    return nonfinite == 0;
}

