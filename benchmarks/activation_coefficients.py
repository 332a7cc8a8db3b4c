#!/usr/bin/env python
"""How the constants of src/fastnet/_kernels/_activation_forms.h were made (needs mpmath).

* tanh for |x| < 0.55: tanh(a) = a + a s P(s), s = a^2, with P a Chebyshev fit of degree 10
  to (tanh(sqrt s) - sqrt s) / (s sqrt s) on [0, 0.55^2], in 60-digit arithmetic; prints
  its coefficients, highest degree first, and the fit's error (of P; times s <= 0.3025 it
  is the error relative to tanh).
* exp: the Taylor coefficients 1/k!, k = 2 .. 13, rounded to double (r^2 Q(r), |r| <= ln2/2,
  truncated after r^13: below 1e-19 relative), and Cody & Waite's two-part ln2.

    pip install mpmath && python benchmarks/activation_coefficients.py
"""
import mpmath as mp


def main():
    mp.mp.dps = 60

    def p_of_s(s):
        if s == 0:
            return mp.mpf(-1) / 3
        a = mp.sqrt(s)
        return (mp.tanh(a) - a) / (s * a)

    edge = mp.mpf("0.55")
    coeffs, err = mp.chebyfit(p_of_s, [0, edge * edge], 11, error=True)
    print(f"tanh: P of degree 10 on [0, 0.55^2], fit error {mp.nstr(err, 3)}")
    for c in coeffs:
        print(f"    {float(c)!r}")
    print("exp: 1/k!, k = 2 .. 13")
    for k in range(2, 14):
        print(f"    {float(1 / mp.factorial(k))!r}")
    print(f"ln2 = {float(mp.log(2))!r}; the high part 6.93147180369123816490e-01 has 32 "
          f"significant bits, the low part ln2 - high = {float(mp.log(2) - mp.mpf('6.93147180369123816490e-01'))!r}")


if __name__ == "__main__":
    main()
