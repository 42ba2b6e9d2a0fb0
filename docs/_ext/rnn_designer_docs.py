"""The pages of the site that are written from the code, each time the site is built.

- ``reference/commands.md``: every command and option, from ``designer.cli.build_parser``
  (sphinx-argparse draws it; the page holds a digest of the parsers' help, so that the page is
  read again whenever a command or flag changes);
- ``reference/layers/``: the layer reference, one page per family, from the layer specs
  (:mod:`designer.docs.layer_pages`), with a picture of each layer as the canvas draws it
  (:mod:`designer.docs.showcase` makes a small net around it, the window's own scene draws it
  offscreen). A picture is drawn again only when the layer's spec or the code that draws it
  changed; drawn pictures are kept in the user's cache;
- ``layer/TYPE.html`` in the built site: a page that leads to TYPE's section, which the
  window's Help > Documentation (F1) opens for the selected layer.

A file is written only when its text changed, so that Sphinx reads again only what changed.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from designer.docs import layer_pages, showcase
from designer.docs.site import GENERATED, LAYER_LINKS

DRAWING_CODE = ("graph", "cells", "docs/showcase.py", "ui/editor", "ui/look",
                "ui/exchange/picture.py")


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("build-finished", write_layer_links)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def generate(app) -> None:
    root = Path(app.srcdir) / GENERATED
    write(root / "commands.md", commands_page())
    folder = root / layer_pages.FOLDER
    texts = layer_pages.pages()
    for page, text in texts.items():
        write(folder / f"{page}.md", text)
    for old in folder.glob("*.md"):
        if old.stem not in texts:  # a family no longer there
            old.unlink()
    draw_pictures(folder / layer_pages.PICTURES)


def write(path: Path, text: str | bytes) -> None:
    """Write ``path`` only when its content changes."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# -- the command reference ------------------------------------------------------------------
def commands_page() -> str:
    from designer.cli import build_parser
    return "\n".join([
        "# Command reference", "",
        f"<!-- written by the site's build from designer/cli.py's parsers "
        f"(help digest {parser_digest(build_parser())}) -->", "",
        "Every command of `rnn-designer` with every option, as `rnn-designer COMMAND --help` "
        "prints it. [Commands](../commands.md) says what each command is for, with examples.",
        "", "```{argparse}", ":module: designer.cli", ":func: build_parser",
        ":prog: rnn-designer", "```", ""])


def parser_digest(parser: argparse.ArgumentParser) -> str:
    """A digest of the help of ``parser`` and of every subcommand's."""
    h = hashlib.sha256(parser.format_help().encode())
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                h.update(name.encode() + sub.format_help().encode())
    return h.hexdigest()[:16]


# -- the layer pictures ---------------------------------------------------------------------
def draw_pictures(folder: Path) -> None:
    """A PNG per layer type in ``folder``: from the cache when the layer and the code that
    draws it are as they were, else drawn (and cached)."""
    from designer.graph import registry
    from designer.graph.datasets import cache_dir
    cache = cache_dir() / "docs-pictures"
    code = code_digest()
    wanted = {}
    for spec in registry.all_specs():
        key = hashlib.sha256((code + repr(spec_facts(spec))).encode()).hexdigest()[:24]
        wanted[spec.id] = cache / f"{spec.id}-{key}.png"
    missing = [t for t, p in wanted.items() if not p.is_file()]
    if missing:
        draw(missing, wanted)
    for type_id, cached in wanted.items():
        write(folder / f"{type_id}.png", cached.read_bytes())
    for old in folder.glob("*.png"):
        if old.stem not in wanted:
            old.unlink()


def spec_facts(spec) -> tuple:
    """What a layer's picture is drawn from, in a stable form (not its functions)."""
    return (spec.id, spec.category, spec.inputs, spec.outputs, spec.params)


def code_digest() -> str:
    """A digest of the code that makes and draws the pictures."""
    base = Path(layer_pages.__file__).resolve().parents[1]  # designer/
    h = hashlib.sha256()
    for part in DRAWING_CODE:
        path = base / part
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else []
        for f in files:
            h.update(str(f.relative_to(base)).encode() + f.read_bytes())
    return h.hexdigest()


def draw(type_ids: list[str], into: dict[str, Path]) -> None:
    """Draw each layer type's picture into its cache file."""
    if "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # no window is shown
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication([])  # noqa: F841 - the scene needs one
    from designer.ui.exchange.picture import save_net_picture
    with tempfile.TemporaryDirectory(prefix="rnn-designer-samples-") as tmp:
        samples = Path(tmp)
        showcase.write_samples(samples)
        for type_id in type_ids:
            target = into[type_id]
            target.parent.mkdir(parents=True, exist_ok=True)
            for stale in target.parent.glob(f"{type_id}-*.png"):
                stale.unlink()
            save_net_picture(showcase.net_for(type_id, samples), target)


# -- the links to a layer's section ---------------------------------------------------------
def write_layer_links(app, exception) -> None:
    """``layer/TYPE.html``: a page that sends the browser to TYPE's section (a file URL with a
    ``#section`` is not passed on by every desktop)."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / LAYER_LINKS
    if out.is_dir():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for category, specs in layer_pages.families().items():
        for spec in specs:
            target = (f"../{GENERATED}/{layer_pages.FOLDER}/"
                      f"{layer_pages.family_page(category)}.html#{layer_pages.anchor(spec.id)}")
            (out / f"{spec.id}.html").write_text(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                f"<title>{spec.id}</title>"
                f"<meta http-equiv=\"refresh\" content=\"0; url={target}\"></head>"
                f"<body><a href=\"{target}\">{spec.id}</a></body></html>\n", encoding="utf-8")
