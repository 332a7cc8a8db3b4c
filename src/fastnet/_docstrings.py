"""Docstring sections that several public functions share, written once.

``@fill(name=text, ...)`` replaces each line ``{{name}}`` of the decorated
object's docstring by ``text``, indented like the placeholder (the way SciPy's
``doccer`` and matplotlib's ``_docstring`` share parameter descriptions), so
that ``help()``, numpydoc and Sphinx see an ordinary docstring.
"""
import re
import textwrap

__all__ = ["fill", "HTML_PAGE", "PANDAS_RAISES", "TRAIN_ONE_NET", "xor_example"]

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


#: Returns, Raises and Warns of the one-network trainers (``train``, ``train_rprop``).
TRAIN_ONE_NET = """
Returns
-------
TrainResult

Raises
------
ValueError, TypeError
    For bad shapes, non-finite data, an unknown algorithm, invalid parameters or
    a stopping rule that needs a validation set when none is given.
DivergenceError
    If the training diverges: the training error, the weights, the outputs
    or a validation/test error become non-finite, or the training error
    (of an epoch or of the returned network) exceeds ``DIVERGENCE_GROWTH``
    (1e6) times max(E_tr(1), ``DIVERGENCE_FLOOR`` = 1 %) (a
    FloatingPointError naming the epoch). No result with NaN errors is
    ever returned.
TrainingInProgressError
    If ``net`` is being trained, by another thread or by the training whose
    callback calls this (a RuntimeError).

Warns
-----
NoConvergenceWarning
    If ``stop`` is given and ``max_epochs`` is reached before it holds.
"""


def xor_example(algorithm, max_epochs, *, flops=False):
    """The Examples section of a full-batch algorithm's class: XOR trained with
    ``algorithm`` (its class name) for ``max_epochs``, the training error falling (and
    with ``flops``, the other floating-point operations counted)."""
    check = ("bool(r.train_error[-1] < r.train_error[0]), r.traversals.flops > 0\n(True, True)"
             if flops else "bool(r.train_error[-1] < r.train_error[0])\nTrue")
    return f"""
Examples
--------
>>> from fastnet import MLP, train
>>> from fastnet.algorithms import {algorithm}
>>> from fastnet.datasets import make_xor
>>> X, Y = make_xor().train                 # the four XOR patterns
>>> r = train(MLP(2, (2,), 1, output_activation="logistic"), X, Y,
...           algorithm={algorithm}(), max_epochs={max_epochs}, init_scale=0.5, seed=0)
>>> {check}
"""
