"""Docstring sections that several public functions share, written once.

``@fill(name=text, ...)`` replaces each line ``{{name}}`` of the decorated
object's docstring by ``text``, indented like the placeholder (the way SciPy's
``doccer`` and matplotlib's ``_docstring`` share parameter descriptions), so
that ``help()``, numpydoc and Sphinx see an ordinary docstring.
"""
import re
import textwrap

__all__ = ["fill", "HTML_PAGE", "PANDAS_RAISES"]

#: Returns and Raises of the ``to_html`` methods of reports and comparisons.
HTML_PAGE = """
Returns
-------
str
    The page (write it with UTF-8 encoding).

Raises
------
ImportError
    If `pictures` is true and matplotlib is not installed.
"""


def fill(**fragments):
    """Decorator: put ``fragments`` into the docstring's ``{{name}}`` lines."""
    def decorate(obj):
        doc = obj.__doc__
        if doc is None:   # python -OO strips docstrings
            return obj
        for name, text in fragments.items():
            body = textwrap.dedent(text).strip("\n")
            doc, n = re.subn(rf"^( *)\{{\{{{name}\}}\}}$",
                             lambda m, body=body: textwrap.indent(body, m.group(1)),
                             doc, flags=re.M)
            if n == 0:
                raise ValueError(f"{obj.__qualname__}: no {{{{{name}}}}} line in the docstring")
        left = re.search(r"^ *\{\{\w+\}\}$", doc, flags=re.M)
        if left:
            raise ValueError(f"{obj.__qualname__}: unfilled {left.group().strip()}")
        obj.__doc__ = doc
        return obj
    return decorate


#: Raises of the ``to_dataframe`` methods (pandas is optional).
PANDAS_RAISES = """
Raises
------
ImportError
    If pandas is not installed.
"""
