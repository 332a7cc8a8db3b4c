"""Which names :func:`fastnet.export.to_c` accepts, and why it refuses the others.

The exported file defines ``NAME``, ``NAME_r``, ``NAME_batch``, the arrays
``NAME_W<j>``/``NAME_b<j>`` (and ``NAME_units`` for large networks), the macros
``NAME_N_INPUTS``/``NAME_N_OUTPUTS``/``NAME_N_UNITS`` (upper case), and locals
``NAME_x``, ``NAME_i``, ...: everything it declares carries the user's name as a
prefix, so no user name meets one of the file's own identifiers. What is left to
refuse is what the C language or the two headers the file includes own:

* anything but an ASCII identifier of at most :data:`C_NAME_MAX` characters;
* keywords of C99 to C23 (and ``asm``/``fortran``, common extensions, C99 J.5);
* names beginning with ``_``: reserved to the implementation at file scope
  (C99 7.1.3), and ``_X``/``__x`` for any use (``_Pragma``, ``__func__``);
* identifiers of ``<math.h>`` and ``<stddef.h>`` -- C99 to C23, POSIX/XSI, and
  the GNU and TS 18661 additions that glibc declares (``exp``, ``y0``,
  ``isnan``, ``NAN``, ``M_PI``, ``size_t``, ``expf32``, ...), with their
  ``f``/``l``/``fN``/``fNx``/``dN`` forms;
* macros GCC and Clang predefine outside strict ISO mode (``unix``, ``linux``).
"""
from __future__ import annotations

import re

__all__ = ["C_KEYWORDS", "C_NAME_MAX", "C_NAME_SUFFIXES", "check_c_name"]

#: Reserved words of C99, C11 and C23, refused as function names.
C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex "
    "_Generic _Imaginary _Noreturn _Static_assert _Thread_local bool true false nullptr "
    "alignas alignof static_assert thread_local typeof typeof_unqual constexpr _BitInt "
    "_Decimal32 _Decimal64 _Decimal128".split())

# Common extensions that are keywords in GCC's and Clang's default (GNU) modes (C99 J.5.9-10).
_EXTENSION_KEYWORDS = frozenset({"asm", "fortran"})

# Macros GCC and Clang predefine in their GNU modes (the default), not under -std=c99.
_PREDEFINED_MACROS = frozenset({"unix", "linux", "i386", "sun", "sparc", "mips", "vax"})

#: What the exported file appends to ``name`` for its functions, macros (upper case) and locals.
C_NAME_SUFFIXES = ("", "_r", "_batch", "_units", "_N_INPUTS", "_N_OUTPUTS", "_N_UNITS",
                   "_x", "_y", "_u", "_i", "_k", "_z", "_p", "_n", "_top", "_sum")

#: The longest ``name`` accepted: every identifier the file defines (the longest is
#: ``NAME_N_OUTPUTS``) then stays within the 63 initial characters C99 keeps significant.
C_NAME_MAX = 63 - len("_N_OUTPUTS")

# <math.h> functions and function-like macros (C99, C11, C23, POSIX/XSI, GNU, TS 18661);
# each also with the suffixes below (expf, expl, expf32, expf64x, ...).
_MATH_FUNCTIONS = (
    "acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp "
    "ilogb ldexp log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf "
    "erfc lgamma tgamma ceil floor nearbyint rint lrint llrint round lround llround trunc fmod "
    "remainder remquo copysign nan nextafter nexttoward fdim fmax fmin fma "
    "fpclassify isfinite isinf isnan isnormal signbit isgreater isgreaterequal isless "
    "islessequal islessgreater isunordered "
    # C23
    "acospi asinpi atanpi atan2pi cospi sinpi tanpi exp10 exp10m1 exp2m1 log10p1 log2p1 logp1 "
    "compoundn pown powr rootn rsqrt fmaximum fminimum fmaximum_mag fminimum_mag fmaximum_num "
    "fminimum_num fmaximum_mag_num fminimum_mag_num nextup nextdown canonicalize fromfp "
    "ufromfp fromfpx ufromfpx roundeven llogb getpayload setpayload setpayloadsig totalorder "
    "totalordermag iscanonical iseqsig issignaling issubnormal iszero quantize samequantum "
    "quantum llquantexp encodedec decodedec encodebin decodebin "
    # POSIX/XSI, BSD and GNU
    "j0 j1 jn y0 y1 yn gamma drem finite scalb significand sincos pow10 fmaxmag fminmag "
    "lgamma_r gamma_r").split()

# Object-like macros, types and objects of <math.h> and <stddef.h>.
_HEADER_NAMES = frozenset((
    "HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN SNAN SNANF SNANL MAXFLOAT FP_INFINITE FP_NAN "
    "FP_NORMAL FP_SUBNORMAL FP_ZERO FP_FAST_FMA FP_FAST_FMAF FP_FAST_FMAL FP_ILOGB0 FP_ILOGBNAN "
    "FP_LLOGB0 FP_LLOGBNAN FP_INT_UPWARD FP_INT_DOWNWARD FP_INT_TOWARDZERO FP_INT_TONEAREST "
    "FP_INT_TONEARESTFROMZERO MATH_ERRNO MATH_ERREXCEPT math_errhandling float_t double_t "
    "signgam size_t ptrdiff_t wchar_t max_align_t nullptr_t NULL offsetof unreachable").split())

# The type suffixes of <math.h>: float, long double, TS 18661-3 / C23 interchange types.
_SUFFIX = r"(?:f|l|f16|f32|f64|f128|f32x|f64x|f128x|d32|d64|d128|d64x|d128x)?"
_MATH_NAME = re.compile(
    "(?:" + "|".join(sorted(_MATH_FUNCTIONS, key=len, reverse=True)) + ")" + _SUFFIX
    # lgammaf_r, lgammaf32_r; HUGE_VAL_F32, SNANF64X; M_PI, M_PIl, M_SQRT1_2f128
    + r"|(?:lgamma|gamma)" + _SUFFIX + "_r"
    + r"|HUGE_VAL_F\d+X?|SNANF\d+X?|FP_FAST_FMA\w*"
    + r"|M_(?:E|LOG2E|LOG10E|LN2|LN10|PI|PI_2|PI_4|1_PI|2_PI|2_SQRTPI|SQRT2|SQRT1_2)" + _SUFFIX
    # C23 / TS 18661 narrowing arithmetic: fadd, daddl, f32addf64, f32xsqrtf128, ...
    + r"|(?:f|d|f\d+x?|d\d+x?)(?:add|sub|mul|div|fma|sqrt)" + _SUFFIX)

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def reason_refused(identifier):
    """Why ``identifier`` cannot be defined by the exported file, or None."""
    if identifier in C_KEYWORDS or identifier in _EXTENSION_KEYWORDS:
        return "is a C keyword"
    if identifier.startswith("_"):
        return ("begins with '_': such names are reserved to the C implementation at file "
                "scope (C99 7.1.3)")
    if identifier in _HEADER_NAMES or _MATH_NAME.fullmatch(identifier):
        return ("is an identifier of <math.h> or <stddef.h>, which the exported file includes")
    if identifier == "main":
        return "is the program's entry point (C99 5.1.2.2.1)"
    if identifier in _PREDEFINED_MACROS:
        return "is a macro that GCC and Clang predefine outside strict ISO mode"
    return None


def check_c_name(name):
    """Refuse a ``name`` that :func:`fastnet.export.to_c` cannot use, saying why.

    Parameters
    ----------
    name : str
        The name of the exported function.

    Returns
    -------
    name : str
        The name, unchanged.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If ``name`` is not an ASCII C identifier of at most ``C_NAME_MAX``
        characters, or it (or an identifier derived from it) is reserved.
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string (a C identifier), got {type(name).__name__}.")
    if not _C_IDENTIFIER.fullmatch(name) or len(name) > C_NAME_MAX:
        raise ValueError(f"`name` must be a C identifier: ASCII letters, digits and '_', not "
                         f"starting with a digit, at most {C_NAME_MAX} characters, got {name!r}.")
    for suffix in C_NAME_SUFFIXES:
        derived = (name.upper() if suffix.isupper() else name) + suffix
        why = reason_refused(derived)
        if why is not None:
            which = "" if derived == name else f" (it makes the identifier {derived!r})"
            raise ValueError(f"`name` {why}{which}: choose another name, got {name!r}.")
    return name
