"""Sphinx helpers for fastnet's documentation.

* :func:`write_api_pages` writes one reStructuredText page per public module
  (``docs/api/<module>.rst``) from the module's ``__all__``: functions, classes
  and exceptions go into autosummary tables, each with a page of its own
  (``docs/api/generated/``); constants are documented in place from their
  ``#:`` comments. An object that
  several modules export gets one page, under its first module in `API_GROUPS`
  (the top-level ``fastnet`` first); later modules link to it.
* Signatures name the type aliases of ``fastnet._typing`` (`TYPE_ALIASES`, used as
  ``autodoc_type_aliases``) instead of spelling out NumPy's ``ArrayLike`` union, and
  :func:`readable_signature` tidies what autodoc leaves (alias wrappers, ``~`` prefixes
  of signatures that the Python domain cannot parse); the build warns about a signature
  that still spells a union out.
* The ``fastnet-cli`` directive prints the ``--help`` text of a ``fastnet``
  subcommand, taken from :func:`fastnet.cli.build_parser`; the build warns
  about every subcommand that no page shows.

Both warn (and so fail a ``-W`` build) when the package grows something the
documentation does not cover: a public module missing from `API_GROUPS`, a
constant without a ``#:`` comment, a subcommand without a help block.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import re
import types
from pathlib import Path

from docutils import nodes
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.inspect import object_description

logger = logging.getLogger(__name__)

#: The API reference: (section title, modules), in the order of the index page.
API_GROUPS = (
    ("Networks and training", ("fastnet", "fastnet.network", "fastnet.training", "fastnet.algorithms",
                               "fastnet.rprop",
                               "fastnet.backprop", "fastnet.gradients", "fastnet.stopping",
                               "fastnet.measures", "fastnet.traversal",
                               "fastnet.exceptions")),
    ("Data, experiments and reports", ("fastnet.datasets", "fastnet.experiment", "fastnet.report",
                                       "fastnet.reproduction")),
    ("Statistics and pictures", ("fastnet.stats", "fastnet.plots", "fastnet.study",
                                 "fastnet.suite")),
    ("Embedding and the command line", ("fastnet.sklearn", "fastnet.export", "fastnet.demo",
                                        "fastnet.cli")),
)

#: Type aliases shown by name in signatures (``autodoc_type_aliases``): the annotation
#: ``X: ArrayLike`` stays ``ArrayLike`` instead of NumPy's union of ~600 characters.
TYPE_ALIASES = {"ArrayLike": "ArrayLike", "Seed": "Seed", "PathLike": "PathLike"}
#: Text that only an expanded alias puts in a signature.
EXPANDED_ALIAS = re.compile(r"_SupportsArray|_NestedSequence|_Buffer|TypeAliasForwardRef|SeedSequence")

#: Constants whose value is longer than this are shown without it (their keys, for mappings).
MAX_VALUE_CHARS = 100

_KINDS = (("Functions", "function"), ("Classes", "class"),
          ("Exceptions and warnings", "exception"), ("Constants", "data"),
          ("Submodules", "module"))


def _kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


def _public_modules(package="fastnet"):
    """Every importable public module of the package (no part of its name starts with _)."""
    pkg = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def _attr_doc(module, name):
    """The ``#:`` comment of ``module.name``, looked up where the value is defined:
    the module itself, then the other modules of the package, private ones included."""
    pkg = importlib.import_module(module.__name__.split(".")[0])
    candidates = [module.__name__] + [
        i.name for i in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
        if i.name != module.__name__]
    value = getattr(module, name)
    for modname in candidates:
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:  # no Python source (a compiled kernel)
            continue
        if ("", name) in docs and getattr(importlib.import_module(modname), name, None) is value:
            return list(docs[("", name)])
    return None


def _data_block(module, name):
    """A ``py:data`` directive for the constant ``module.name``."""
    value = getattr(module, name)
    lines = [f".. py:data:: {name}"]
    shown = object_description(value)
    if len(shown) <= MAX_VALUE_CHARS:
        lines.append(f"   :value: {shown}")
    lines.append("")
    if name == "__version__":
        doc = ["The version of the installed fastnet (``fastnet --version`` prints it)."]
    else:
        doc = _attr_doc(module, name)
    if not doc or not any(line.strip() for line in doc):
        logger.warning("%s.%s is in __all__ but has no #: comment to document it",
                       module.__name__, name, type="fastnet", subtype="api")
        doc = []
    lines += ["   " + line if line.strip() else "" for line in doc]
    if len(shown) > MAX_VALUE_CHARS and hasattr(value, "keys"):
        keys = ", ".join(f"``{k}``" if isinstance(k, str) else f"``{k!r}``" for k in value.keys())
        lines += ["", f"   Keys: {keys}."]
    lines.append("")
    return lines


def _object_page(fullname, kind):
    """reStructuredText of the page of one function, class or exception."""
    modname, name = fullname.rsplit(".", 1)
    title = f"``{fullname}``"
    lines = [title, "=" * len(title), "", f".. currentmodule:: {modname}", ""]
    if kind == "function":
        lines.append(f".. autofunction:: {name}")
    else:
        lines += [f".. autoclass:: {name}", "   :members:", "   :show-inheritance:"]
    return "\n".join(lines) + "\n"


def _module_page(modname, owner):
    """reStructuredText of the API page of ``modname``; ``owner[id(obj)]`` is the
    full name an object is documented under. Returns the text and the names of
    the object pages this module owns."""
    module = importlib.import_module(modname)
    names = list(getattr(module, "__all__", ()))
    if not names:
        logger.warning("%s has no __all__: its API page is empty", modname,
                       type="fastnet", subtype="api")
    title = f"``{modname}``"
    out = [title, "=" * len(title), "", f".. automodule:: {modname}", "",
           f".. currentmodule:: {modname}", ""]
    by_kind = {kind: [] for _, kind in _KINDS}
    for name in names:
        by_kind[_kind(getattr(module, name))].append(name)
    owned = []
    for heading, kind in _KINDS:
        items = by_kind[kind]
        if not items:
            continue
        out += [heading, "-" * len(heading), ""]
        if kind == "data":
            for name in items:
                out += _data_block(module, name)
            continue
        if kind == "module":
            out += [f"* :mod:`{module.__name__}.{name}`" for name in items] + [""]
            continue
        out += [".. autosummary::", "   :nosignatures:", ""]
        for name in items:
            full = owner[id(getattr(module, name))]
            if full == f"{modname}.{name}":
                owned.append(full)
                out.append(f"   {name}")
            else:   # documented under another module: link there
                out.append(f"   ~{full}")
        out.append("")
    if owned:
        out += [".. toctree::", "   :hidden:", ""] + [f"   generated/{o}" for o in owned] + [""]
    return "\n".join(out), owned


def write_api_pages(srcdir):
    """Write ``<srcdir>/api/``: the API index, one page per module of `API_GROUPS`
    and, in ``api/generated/``, one page per function, class and exception.

    Files are rewritten only when their text changes, so that Sphinx does not
    re-read unchanged pages; pages of objects that no longer exist are removed.
    """
    listed = [m for _, mods in API_GROUPS for m in mods]
    for missing in sorted(set(_public_modules()) - set(listed)):
        logger.warning("public module %s is not in the API reference (API_GROUPS in %s)",
                       missing, Path(__file__).name, type="fastnet", subtype="api")
    owner, kinds = {}, {}
    for modname in listed:
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if _kind(obj) in ("function", "class", "exception"):
                full = owner.setdefault(id(obj), f"{modname}.{name}")
                kinds[full] = _kind(obj)
    pages = {}
    index = ["API reference", "=============", "",
             "Every public module, with the names of its ``__all__``. An object that several",
             "modules export (``fastnet.MLP`` is also ``fastnet.network.MLP``) is documented",
             "once, under the first module below, and linked from the others.", ""]
    for heading, mods in API_GROUPS:
        index += [heading, "-" * len(heading), "", ".. toctree::", "   :maxdepth: 1", ""]
        index += [f"   {m}" for m in mods] + [""]
        for m in mods:
            text, owned = _module_page(m, owner)
            pages[f"{m}.rst"] = text
            for full in owned:
                pages[f"generated/{full}.rst"] = _object_page(full, kinds[full])
    pages["index.rst"] = "\n".join(index)
    target = Path(srcdir) / "api"
    (target / "generated").mkdir(parents=True, exist_ok=True)
    for fname, text in pages.items():
        path = target / fname
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for stale in list(target.glob("*.rst")) + list(target.glob("generated/*.rst")):
        if str(stale.relative_to(target)) not in pages:
            stale.unlink()


# ------------------------------------------------------------------ the command line

def _commands(parser, path=()):
    """(path, parser) of the ``fastnet`` command and every subcommand, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


def _help_text(path):
    from fastnet.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"   # argparse wraps to the terminal width: fix it
    try:
        commands = dict(_commands(build_parser()))
        if tuple(path) not in commands:
            return None
        return commands[tuple(path)].format_help().rstrip()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


class CliHelp(SphinxDirective):
    """``.. fastnet-cli:: datasets list``: the ``--help`` text of that subcommand
    (no argument: of ``fastnet`` itself)."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = False

    def run(self):
        path = tuple(self.arguments[0].split()) if self.arguments else ()
        text = _help_text(path)
        if text is None:
            logger.warning("fastnet-cli: no subcommand %r", " ".join(path),
                           location=self.get_location(), type="fastnet", subtype="cli")
            return []
        if not hasattr(self.env, "fastnet_cli_shown"):
            self.env.fastnet_cli_shown = {}
        self.env.fastnet_cli_shown.setdefault(self.env.docname, set()).add(path)
        self.env.note_dependency(__file__)
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def _check_cli_coverage(app, env):
    from fastnet.cli import build_parser

    shown = set().union(*getattr(env, "fastnet_cli_shown", {}).values())
    for path, _ in _commands(build_parser()):
        if path not in shown:
            logger.warning("the subcommand `fastnet %s` has no fastnet-cli block in the docs",
                           " ".join(path), type="fastnet", subtype="cli")


def _merge(app, env, docnames, other):
    if not hasattr(env, "fastnet_cli_shown"):
        env.fastnet_cli_shown = {}
    for docname, paths in getattr(other, "fastnet_cli_shown", {}).items():
        if docname in docnames:
            env.fastnet_cli_shown[docname] = paths


def _purge(app, env, docname):
    getattr(env, "fastnet_cli_shown", {}).pop(docname, None)


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out members that other libraries add to fastnet's classes (scikit-learn's
    ``set_fit_request`` and friends): their docstrings point into those libraries' docs."""
    module = getattr(obj, "__module__", None)
    if callable(obj) and isinstance(module, str) and not module.startswith("fastnet"):
        return True
    return None


def _public_bases(app, name, obj, options, bases):
    """Show only informative base classes: a private helper base (``_FrozenResult``) has
    no page to link to, and ``object`` goes without saying."""
    bases[:] = [b for b in bases
                if b is not object and not getattr(b, "__name__", "").startswith("_")]


def _drop_empty_bases(app, doctree):
    """Remove the "Bases:" line autodoc writes even when `_public_bases` left no base to
    show (a class on ``object`` or on a private helper alone)."""
    for para in list(doctree.findall(nodes.paragraph)):
        if para.astext().strip() == "Bases:":
            para.parent.remove(para)


def readable_signature(text):
    """``text`` (a signature or return annotation from autodoc) as a reader wants it.

    Autodoc writes ``ArrayLike | None`` as ``TypeAliasForwardRef('ArrayLike') | None``,
    and a signature whose default is not Python (``<preset or default>``) reaches the
    page as raw text, with the ``~`` that was to shorten ``~fastnet.network.MLP`` to
    ``MLP`` left in: both become the short names.
    """
    if text is None:
        return None
    text = re.sub(r"TypeAliasForwardRef\('([\w.]+)'\)", r"\1", text)
    text = re.sub(r"<class '(?:\w+\.)*(\w+)'>", r"\1", text)      # dtype=<class 'numpy.float64'>
    return re.sub(r"~(?:\w+\.)*(\w+)", r"\1", text)


def _process_signature(app, what, name, obj, options, signature, return_annotation):
    signature, return_annotation = readable_signature(signature), readable_signature(return_annotation)
    text = f"{signature or ''} -> {return_annotation or ''}"
    if EXPANDED_ALIAS.search(text):
        logger.warning(f"the signature of {name} spells a type alias out: {text[:200]}... "
                       "(add the alias to TYPE_ALIASES in docs/_ext/fastnet_docs.py)")
    return signature, return_annotation


def setup(app):
    app.connect("autodoc-process-signature", _process_signature)
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("doctree-read", _drop_empty_bases)
    app.add_directive("fastnet-cli", CliHelp)
    app.connect("env-check-consistency", _check_cli_coverage)
    app.connect("env-merge-info", _merge)
    app.connect("env-purge-doc", _purge)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
