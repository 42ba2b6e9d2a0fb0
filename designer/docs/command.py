"""``rnn-designer docs``: build the documentation site when it is out of date, then open it in
the browser (or, with ``--no-open``, print where it is).

Exit codes: 0 opened (or printed), 1 the site did not build (a page warns), 2 a layer type that
does not exist, or no site to open and none can be built here.
"""
from __future__ import annotations

import sys
import webbrowser

from designer.docs import site
from designer.docs.layer_pages import load_layers
from designer.graph import registry
from designer.graph.errors import UnknownLayerError


def _err(message: str, code: int) -> int:
    print(f"rnn-designer: {message}", file=sys.stderr)
    return code


def docs(args) -> int:
    layer = getattr(args, "layer", None)
    if layer:
        load_layers()
        try:
            registry.get(layer)
        except UnknownLayerError as e:
            return _err(str(e), 2)
    if site.can_build() and site.needs_build():
        print(f"rnn-designer: building the documentation into {site.BUILT} ...",
              file=sys.stderr, flush=True)
    elif (site.SOURCE / "conf.py").is_file() and site.needs_build():
        print(f"rnn-designer: note: the code or the pages changed since the documentation was "
              f"built; building it again needs the docs extra: {site.INSTALL}", file=sys.stderr)
    try:
        site.ensure_built()
    except site.DocsError as e:
        return _err(str(e), 1 if site.can_build() else 2)
    url = site.page(layer=layer).as_uri()
    if getattr(args, "no_open", False):
        print(url)
        return 0
    if not webbrowser.open(url):
        print(f"no web browser was found to open it; the documentation is at {url}")
        return 0
    print(f"opened {url}")
    return 0
