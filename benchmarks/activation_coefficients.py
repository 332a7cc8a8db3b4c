#!/usr/bin/env python
"""How the constants of src/fastnet/_kernels/_activation_forms.h were made (needs mpmath).

* tanh for |x| < 0.55: tanh(a) = a + a s P(s) / Q(s), s = a^2, with P/Q the [3/4] Pade
  approximant (in s) of (tanh(a)/a - 1)/s, from the [3/4] Pade approximant of tanh(a)/a
  (Lambert's continued fraction); prints P and Q (lowest degree first, Q(0) = 1) and the
  largest error relative to tanh on [0, 0.55] with the coefficients rounded to double.
* exp: Q(r) = (exp(r) - 1 - r) / r^2 on |r| <= ln2/2 as the degree-9 Chebyshev fit
  (mpmath.chebyfit, near minimax), rounded to double, with the largest error of
  1 + r + r^2 Q(r) relative to exp(r) (1.6e-17; the Taylor series needs degree 11 for
  that), and Cody & Waite's two-part ln2.

    pip install mpmath && python benchmarks/activation_coefficients.py
"""
import mpmath as mp


def main():
    mp.mp.dps = 50
    series = mp.taylor(mp.tanh, 0, 41)
    over_a = [series[2 * k + 1] for k in range(20)]          # tanh(a)/a in powers of s
    p, q = mp.pade(over_a, 3, 4)
    p = [c / q[0] for c in p]
    q = [c / q[0] for c in q]
    # (P/Q - 1)/s = (P - Q)/(s Q): P - Q has no constant term
    num = [(p[i + 1] if i + 1 < len(p) else 0) - q[i + 1] for i in range(len(q) - 1)]
    num_d, den_d = [float(c) for c in num], [float(c) for c in q]
    worst = 0
    for i in range(1, 4001):
        a = mp.mpf("0.55") * i / 4000
        s = a * a
        ratio = (sum(mp.mpf(c) * s ** k for k, c in enumerate(num_d))
                 / sum(mp.mpf(c) * s ** k for k, c in enumerate(den_d)))
        worst = max(worst, abs((a + a * s * ratio) / mp.tanh(a) - 1))
    print("tanh, |x| < 0.55: P =", [repr(c) for c in num_d])
    print("                  Q =", [repr(c) for c in den_d])
    print(f"   largest error relative to tanh on [0, 0.55]: {mp.nstr(worst, 3)}")
    half = mp.log(2) / 2

    def q_exact(r):
        if abs(r) < mp.mpf("1e-12"):
            return mp.mpf(1) / 2 + r / 6 + r * r / 24
        return (mp.exp(r) - 1 - r) / (r * r)

    # (fitted on a hair more than the range, so that its ends are covered)
    fit = mp.chebyfit(q_exact, [-half * mp.mpf("1.0001"), half * mp.mpf("1.0001")], 10)
    q_d = [float(c) for c in fit[::-1]]                   # lowest degree first
    worst = max(abs((1 + r + r * r * sum(mp.mpf(c) * r ** k for k, c in enumerate(q_d)))
                    / mp.exp(r) - 1)
                for r in (half * i / 20000 for i in range(-20000, 20001)))
    print("exp: Q(r), lowest degree first:", [repr(c) for c in q_d])
    print(f"   largest error of 1 + r + r^2 Q(r) relative to exp(r): {mp.nstr(worst, 3)}")
    high = mp.mpf("6.93147180369123816490e-01")
    print(f"ln2 = {float(mp.log(2))!r}; the high part {float(high)!r} has 32 significant bits, "
          f"the low part ln2 - high = {float(mp.log(2) - high)!r}")


if __name__ == "__main__":
    main()
