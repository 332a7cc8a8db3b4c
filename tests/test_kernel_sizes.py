"""The function-size bar of the package (100 lines) applied to its kernels: the C headers
(``src/fastnet/_kernels/*.h``) and the Cython sources (``*.pyx``, ``*.pxi``), read by a small
brace- and indent-based parser (issue 47).

A C function counts from the first line of its signature to its closing brace, its
leading comment not counted (as a Python function counts from ``def`` to its last line,
its docstring not counted); a Cython function from ``def``/``cdef``/``cpdef`` to its
last indented line, without its docstring.
"""
import re
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parent.parent / "src" / "fastnet" / "_kernels"
MAX_FUNCTION = 100

# Kernel functions over the bar, (file, function) -> lines: none since issue 47 split
# the last three (fn_tiny_run, fn_tiny_queue_run, fn_trials_online); one listed would
# have to shrink, never grow.
KNOWN_LONG_KERNEL_FUNCTIONS = {}

_C_BLANKED = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL)


def _blank_comments(text):
    """C text with its comments and literals blanked, newlines kept (the lines still count)."""
    def blank(match):
        s = match.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]
    return _C_BLANKED.sub(blank, text)


def _c_name(head):
    """The name a C signature defines (``FN_X(name)(...)``, a macro naming it: ``name``)."""
    head = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", head)
    m = re.search(r"\b([A-Za-z_]\w*)\s*\(\s*(?:([A-Za-z_]\w*)\s*\)\s*\()?", head)
    return (m.group(2) or m.group(1)) if m else "?"


def c_functions(text):
    """(name, first line, lines) of every function a C source defines: a brace opened at
    depth 0 after a signature (text ending in ``)``; not a struct, union, enum or an
    initializer), counted to its closing brace. Preprocessor lines at depth 0 are skipped."""
    found, depth, start, sig, in_macro = [], 0, None, [], False
    for i, line in enumerate(_blank_comments(text).split("\n"), 1):
        if in_macro or (depth == 0 and line.lstrip().startswith("#")):
            in_macro = line.rstrip().endswith("\\")
            continue
        for j, ch in enumerate(line):
            if ch == "{":
                if depth == 0:
                    head = " ".join(s for _, s in sig) + " " + line[:j]
                    start = None
                    if (re.search(r"\)\s*$", head)
                            and not re.search(r"=\s*$|\b(struct|union|enum)\b[^()]*$", head)):
                        start = (_c_name(head), sig[0][0] if sig else i)
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    found.append((start[0], start[1], i - start[1] + 1))
                    start = None
        if depth == 0:
            stripped = line.strip()
            sig = [] if not stripped or stripped.endswith((";", "}")) else sig + [(i, stripped)]
    if depth != 0:      # (braces split across #if branches would land here: parse by hand)
        raise ValueError(f"unbalanced braces: depth {depth} at the end")
    return found


_DEF = re.compile(r"^(\s*)(?:cpdef|cdef|def)\s+([^=:(]*?)\b([A-Za-z_]\w*)\s*\(")
_NOT_A_FUNCTION = re.compile(r"\s*cdef\s+(extern|class|struct|enum|union|packed|ctypedef)\b")


def _docstring_lines(lines, first, last):
    """Lines of the docstring opening the body lines[first:last + 1] (0 without one)."""
    while first <= last and not lines[first].strip():
        first += 1
    text = lines[first].strip() if first <= last else ""
    if not text.startswith(('"""', "'''")):
        return 0
    quote = text[:3]
    if len(text) > 3 and quote in text[3:]:
        return 1
    return next(e for e in range(first + 1, last + 1) if quote in lines[e]) - first + 1


def pyx_functions(text):
    """(name, first line, lines) of every function a Cython source defines (a
    ``def``/``cdef``/``cpdef`` whose signature ends in ``:``), to its last indented line,
    its docstring not counted; declarations (no ``:``) and ``cdef extern`` blocks skipped."""
    lines, found = text.split("\n"), []
    for i, line in enumerate(lines):
        m = _DEF.match(line)
        if not m or _NOT_A_FUNCTION.match(line):
            continue
        indent, depth, k = len(m.group(1)), 0, i
        while True:                         # the signature ends where its parentheses close
            code = lines[k].split("#")[0]
            depth += code.count("(") - code.count(")")
            if depth <= 0 or k + 1 == len(lines):
                break
            k += 1
        if not lines[k].split("#")[0].rstrip().endswith(":"):
            continue
        last = k
        for j in range(k + 1, len(lines)):
            if lines[j].strip():
                if len(lines[j]) - len(lines[j].lstrip()) <= indent:
                    break
                last = j
        found.append((m.group(3), i + 1, last - i + 1 - _docstring_lines(lines, k + 1, last)))
    return found


def _kernel_functions():
    for path in sorted(KERNELS.glob("*.h")):
        yield from ((path.name, *f) for f in c_functions(path.read_text(encoding="utf-8")))
    for path in sorted([*KERNELS.glob("*.pyx"), *KERNELS.glob("*.pxi")]):
        yield from ((path.name, *f) for f in pyx_functions(path.read_text(encoding="utf-8")))


FUNCTIONS = list(_kernel_functions())


def test_the_parser_finds_the_kernels_functions():
    names = {(file, name) for file, name, _, _ in FUNCTIONS}
    for known in [("_trials.h", "fn_trials_queue_run"), ("_tiny.h", "fn_tiny_run"),
                  ("_trials_body.pxi", "trials_queue"), ("_per_weight.pyx", "train_epochs"),
                  ("_trials_online.pxi", "trials_online"), ("_trials_online_level.h", "fn_trials_online"),
                  ("_orders.h", "fn_permutation")]:
        assert known in names
    assert len(FUNCTIONS) > 150


C_SAMPLE = """\
/* A leading comment { not code } */
#define FN_TWICE(x) \\
    { (x) + (x) }
static const int table[2] = {1, 2};
typedef struct { int a; } pair;
static inline int
FN_NAME(fn_add)(int a,
                int b)
{
    const char *s = "}";   /* } */
    if (a) { return a + b; }
    return b;
}
int fn_one(void) { return 1; }
"""

PYX_SAMPLE = '''\
cdef extern from "x.h" nogil:
    int fn_one()

cdef inline double twice(double x) nogil:
    """Twice x.

    Two lines of docstring more.
    """
    return 2 * x


def run(double[:, ::1] a,
        int n):
    cdef int i
    for i in range(n):
        a[i, 0] = twice(a[i, 0])
    # a comment

    return n
'''


def test_the_parser_counts_as_documented():
    assert c_functions(C_SAMPLE) == [("fn_add", 6, 8), ("fn_one", 14, 1)]
    assert pyx_functions(PYX_SAMPLE) == [("twice", 4, 2), ("run", 12, 8)]


@pytest.mark.parametrize("kind", ["C", "Cython"])
def test_no_kernel_function_over_the_bar(kind):
    files = {"C": (".h",), "Cython": (".pyx", ".pxi")}[kind]
    over = {(file, name): n for file, name, _, n in FUNCTIONS
            if file.endswith(files) and n > MAX_FUNCTION}
    grown = {k: n for k, n in over.items() if n > KNOWN_LONG_KERNEL_FUNCTIONS.get(k, MAX_FUNCTION)}
    assert not grown, (f"kernel functions over {MAX_FUNCTION} lines (or longer than listed in "
                       f"KNOWN_LONG_KERNEL_FUNCTIONS): {grown}")
