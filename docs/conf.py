"""Sphinx configuration of fastnet's documentation.

Build (warnings are errors)::

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API pages under ``docs/api/`` (one per module, and one per function, class
and exception in ``docs/api/generated/``) are written at every build from the
modules' ``__all__`` by ``_ext/fastnet_docs.py``; they are not committed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

import fastnet  # noqa: E402  (the installed package, built extensions included)
import fastnet_docs  # noqa: E402

project = "fastnet"
author = "the fastnet developers"
copyright = "the fastnet developers"
version = release = fastnet.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "fastnet_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
# Single backticks in docstrings name Python objects (linked when they resolve).
default_role = "py:obj"

# -- API pages --------------------------------------------------------------------
fastnet_docs.write_api_pages(os.path.dirname(os.path.abspath(__file__)))

autosummary_generate = False   # fastnet_docs writes the object pages
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
# Signatures show the aliases of fastnet._typing by name, not NumPy's ArrayLike union
# spelled out (~600 characters per argument).
autodoc_type_aliases = fastnet_docs.TYPE_ALIASES

numpydoc_show_class_members = False      # the class template lists members with autodoc
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
# No cross-links from parameter types: numpydoc's default links point into the
# Python and NumPy inventories, which would need intersphinx (network) at build time.
numpydoc_xref_param_type = False

# -- Markdown (MyST) -------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- HTML -----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fastnet {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_static_path = []
