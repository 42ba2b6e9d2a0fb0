"""Sphinx's settings for the rnn-designer site (``rnn-designer docs`` builds it; so does
``python -m sphinx -W docs docs/_build/html``)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for path in (str(HERE.parent), str(HERE / "_ext")):  # designer from here, then the generator
    if path not in sys.path:
        sys.path.insert(0, path)

from designer import __version__  # noqa: E402

project = "rnn-designer"
author = "the rnn-designer authors"
copyright = "the rnn-designer authors, MIT licence"
version = release = __version__

extensions = ["myst_parser", "sphinxarg.ext", "rnn_designer_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "_static"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links to a heading by its words
myst_enable_extensions = ["colon_fence"]
smartquotes = False  # a flag's "--" stays two hyphens, as it is typed
# sphinx-argparse's domain cannot resolve MyST's "any" references, and says so beside the real
# warning whenever a link is broken; the broken link itself is still an error
suppress_warnings = ["myst.domains"]

html_theme = "furo"
html_title = f"rnn-designer {release}"
html_short_title = "rnn-designer"
html_logo = "../resources/icons/app.svg"
html_favicon = "../resources/icons/app.svg"
html_static_path = ["_static"]
html_css_files = ["rnn-designer.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
