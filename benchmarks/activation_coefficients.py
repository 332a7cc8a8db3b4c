#!/usr/bin/env python
"""How the constants of src/fastnet/_kernels/_activation_forms.h were made (needs mpmath).

The template has one polynomial set per value type (float64, float32); each is made here
and printed with its largest error, the coefficients rounded to the type.

* tanh for |x| < 0.55: tanh(a) = a + a s P(s) / Q(s), s = a^2, with P/Q the [m/n] Pade
  approximant (in s) of (tanh(a)/a - 1)/s, from the [m/n] Pade approximant of tanh(a)/a
  (Lambert's continued fraction); prints P and Q (lowest degree first, Q(0) = 1) and the
  largest error relative to tanh on [0, 0.55]. float64: [3/4] (4.7e-18); float32: [2/2]
  (2.6e-9, 0.04 ulp of float; [1/2] gives 7.5e-8, more than an ulp).
* exp: Q(r) = (exp(r) - 1 - r) / r^2 on |r| <= ln2/2 as the Chebyshev fit of degree d
  (mpmath.chebyfit, near minimax), with the largest error of 1 + r + r^2 Q(r) relative to
  exp(r). float64: d = 9 (1.6e-17; the Taylor series needs degree 11 for that);
  float32: d = 4 (1.1e-8, 0.18 ulp of float; d = 3 gives 4e-7, d = 5 7e-10, which left
  the worst errors of the float32 functions where they were).
* Cody & Waite's two-part ln2: float64's high part has 32 significant bits, float32's
  (0x3f317200, fdlibm's expf) 15, so that k ln2_hi is exact for every k of the range.

    pip install mpmath && python benchmarks/activation_coefficients.py
"""
import mpmath as mp
import numpy as np

TYPES = {"float64": dict(pade=(3, 4), exp_degree=9, ln2_hi="6.93147180369123816490e-01"),
         "float32": dict(pade=(2, 2), exp_degree=4, ln2_hi="0.693145751953125")}


def rounded(c, dtype):
    """c rounded to the type, as a float (and its shortest repr in the type)."""
    v = np.dtype(dtype).type(float(c))
    return float(v), (repr(float(v)) if dtype == "float64" else str(v))


def tanh_pade(m, n, dtype):
    """P and Q of tanh(a) = a + a s P(s)/Q(s), rounded to dtype, and their largest error."""
    series = mp.taylor(mp.tanh, 0, 41)
    over_a = [series[2 * k + 1] for k in range(20)]          # tanh(a)/a in powers of s
    p, q = mp.pade(over_a, m, n)
    p = [c / q[0] for c in p]
    q = [c / q[0] for c in q]
    # (P/Q - 1)/s = (P - Q)/(s Q): P - Q has no constant term
    num = [(p[i + 1] if i + 1 < len(p) else 0) - (q[i + 1] if i + 1 < len(q) else 0)
           for i in range(max(len(p), len(q)) - 1)]
    num_d = [rounded(c, dtype) for c in num]
    den_d = [rounded(c, dtype) for c in q]
    worst = 0
    for i in range(1, 4001):
        a = mp.mpf("0.55") * i / 4000
        s = a * a
        ratio = (sum(mp.mpf(c) * s ** k for k, (c, _) in enumerate(num_d))
                 / sum(mp.mpf(c) * s ** k for k, (c, _) in enumerate(den_d)))
        worst = max(worst, abs((a + a * s * ratio) / mp.tanh(a) - 1))
    return [r for _, r in num_d], [r for _, r in den_d], worst


def exp_fit(degree, dtype):
    """Q(r), lowest degree first, rounded to dtype, and the largest error of 1 + r + r^2 Q."""
    half = mp.log(2) / 2

    def q_exact(r):
        if abs(r) < mp.mpf("1e-12"):
            return mp.mpf(1) / 2 + r / 6 + r * r / 24
        return (mp.exp(r) - 1 - r) / (r * r)

    # (fitted on a hair more than the range, so that its ends are covered)
    fit = mp.chebyfit(q_exact, [-half * mp.mpf("1.0001"), half * mp.mpf("1.0001")], degree + 1)
    q_d = [rounded(c, dtype) for c in fit[::-1]]
    worst = max(abs((1 + r + r * r * sum(mp.mpf(c) * r ** k for k, (c, _) in enumerate(q_d)))
                    / mp.exp(r) - 1)
                for r in (half * i / 20000 for i in range(-20000, 20001)))
    return [r for _, r in q_d], worst


def main():
    mp.mp.dps = 50
    for dtype, t in TYPES.items():
        print(f"--- {dtype}")
        num, den, worst = tanh_pade(*t["pade"], dtype)
        print(f"tanh, |x| < 0.55, [{t['pade'][0]}/{t['pade'][1]}]: P =", num)
        print("                  Q =", den)
        print(f"   largest error relative to tanh on [0, 0.55]: {mp.nstr(worst, 3)}")
        q, worst = exp_fit(t["exp_degree"], dtype)
        print(f"exp: Q(r) of degree {t['exp_degree']}, lowest degree first:", q)
        print(f"   largest error of 1 + r + r^2 Q(r) relative to exp(r): {mp.nstr(worst, 3)}")
        high = mp.mpf(rounded(mp.mpf(t["ln2_hi"]), dtype)[0])      # (the type's value, exactly)
        bits = 53 if dtype == "float64" else 24
        _, e = mp.frexp(high)
        man = int(high * 2 ** (bits - e))
        sig = bits - (len(bin(man)) - len(bin(man).rstrip("0")))
        print(f"ln2 = {float(mp.log(2))!r}; the high part {t['ln2_hi']} has {sig} significant bits, "
              f"the low part ln2 - high = {rounded(mp.log(2) - high, dtype)[1]}")


if __name__ == "__main__":
    main()
