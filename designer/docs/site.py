"""Where the documentation is, whether it must be built again, building it, and the page to open.

In a checkout the sources are ``docs/`` and the site is built into ``docs/_build/html`` (what
Sphinx keeps between builds beside it, in ``docs/_build/doctrees``); the
packaged app holds the built site at the same place beside the ``designer`` package, with no
sources and no Sphinx, and opens it as it is. A build treats every warning as an error (a
broken link, a page missing from the contents, a generated page that fails), so what is opened
was built whole.
"""
from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout, or the app's folder
SOURCE = ROOT / "docs"
BUILT = SOURCE / "_build" / "html"
GENERATED = "reference"  # under the sources: the pages the build writes from the code
LAYER_LINKS = "layer"  # under the site: layer/TYPE.html leads to that layer's section
STAMP = ".rnn-designer-built"  # written in the site after a whole build
PACKAGES = ("sphinx", "myst_parser", "furo", "sphinxarg")  # the docs extra
INSTALL = "pip install -e '.[docs]'"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Sphinx colours its warnings on a terminal


class DocsError(Exception):
    """Why the documentation cannot be built or opened, in one sentence."""


def can_build(source: Path | None = None) -> bool:
    """Whether the sources are here and the packages that build them are installed."""
    source = source or SOURCE
    return (source / "conf.py").is_file() and all(
        importlib.util.find_spec(name) is not None for name in PACKAGES)


def inputs(source: Path | None = None) -> list[Path]:
    """The files the site is made from: its sources, the code its references are generated
    from (``designer``) and the screenshots its pages show."""
    source = source or SOURCE
    skip = {source / "_build", source / GENERATED}
    found = [p for p in source.rglob("*") if p.is_file()
             and not any(s == p or s in p.parents for s in skip)]
    found += (ROOT / "designer").rglob("*.py")
    shots = ROOT / "resources" / "screenshots"
    if shots.is_dir():
        found += shots.iterdir()
    return found


def needs_build(source: Path | None = None, out: Path | None = None) -> bool:
    """True when the site has not been built, or a file it is made from changed since."""
    source, out = source or SOURCE, out or BUILT
    stamp = out / STAMP
    if not (out / "index.html").is_file() or not stamp.is_file():
        return True
    built = stamp.stat().st_mtime
    return any(p.stat().st_mtime > built for p in inputs(source))


def build(source: Path | None = None, out: Path | None = None, fresh: bool = False) -> Path:
    """Build the site from ``source`` into ``out`` (only what changed, unless ``fresh``) and
    return its ``index.html``; :class:`DocsError` when a page fails or warns."""
    source, out = source or SOURCE, out or BUILT
    try:
        from sphinx.application import Sphinx
        from sphinx.util.docutils import docutils_namespace, patch_docutils
    except ImportError:
        raise DocsError(f"building the documentation needs Sphinx and its extensions, the "
                        f"docs extra: {INSTALL}") from None
    said = io.StringIO()
    (out / STAMP).unlink(missing_ok=True)
    with patch_docutils(source), docutils_namespace():  # as sphinx-build: a build of its own
        app = Sphinx(str(source), str(source), str(out), str(out.parent / "doctrees"), "html",
                     status=None, warning=said, freshenv=fresh, warningiserror=True,
                     keep_going=True)
        app.build()
    warnings = [line for line in _ANSI.sub("", said.getvalue()).splitlines() if line.strip()]
    warnings.sort(key=lambda line: not line.startswith(str(source)))  # a page's own first
    if app.statuscode or warnings:
        first = warnings[0] if warnings else f"Sphinx ended with status {app.statuscode}"
        more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
        raise DocsError(f"the documentation in {source} did not build: {first}{more}")
    (out / STAMP).write_text("built whole, every warning an error\n", encoding="utf-8")
    return out / "index.html"


def ensure_built(source: Path | None = None, out: Path | None = None) -> Path:
    """The site's ``index.html``, built first when the sources or the code changed and the
    packages to build it are here; :class:`DocsError` when there is none to open."""
    source, out = source or SOURCE, out or BUILT
    index = out / "index.html"
    if can_build(source):
        return build(source, out) if needs_build(source, out) else index
    if index.is_file():
        return index  # the packaged app: its site as it was built
    if not (source / "conf.py").is_file():
        raise DocsError(f"the documentation is not here: neither its built pages ({out}) nor "
                        f"its sources ({source})")
    raise DocsError(f"the documentation is not built yet, and building it needs Sphinx and "
                    f"its extensions, the docs extra: {INSTALL}")


def page(out: Path | None = None, layer: str | None = None) -> Path:
    """The page to open: the home page, or the one that leads to ``layer``'s section of the
    layer reference (the reference's contents when the site does not know the type)."""
    out = out or BUILT
    if layer is None:
        return out / "index.html"
    link = out / LAYER_LINKS / f"{layer}.html"
    return link if link.is_file() else out / GENERATED / "layers" / "index.html"


def up_to_date(source: Path | None = None, out: Path | None = None) -> bool:
    """Whether the site can be opened as it is (built and current, or shipped built)."""
    source, out = source or SOURCE, out or BUILT
    if not (out / "index.html").is_file():
        return False
    return not can_build(source) or not needs_build(source, out)
