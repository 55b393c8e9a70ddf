"""Sphinx configuration of sparkjet's documentation: the guide, the glossary, the tutorials, the
internals (MyST Markdown) and the API reference generated from the docstrings (autodoc).

Built by ``make docs`` (``.ci/docs``) with warnings as errors; the build fetches nothing: no
intersphinx inventories, no web fonts, no math from a CDN.
"""

import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS))

project = "sparkjet"
author = "the sparkjet developers"
copyright = "the sparkjet developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_design",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]

# MyST: anchors for headings (links such as guide/streams.md#watermarks), definition lists for the
# glossary, ```{directive} fences.
myst_heading_anchors = 3
myst_enable_extensions = ["deflist", "colon_fence"]

# The reference: members in the order the source defines them, Google-style Args/Returns,
# signatures with their type hints (unqualified), no private names.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_default_options = {"members": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
python_use_unqualified_type_names = True
add_module_names = False

html_theme = "pydata_sphinx_theme"
html_title = "sparkjet"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
}
html_context = {"default_mode": "light"}
# Pages without sub-pages need no section navigation.
html_sidebars = {"index": [], "glossary": []}
