"""The layer reference, written from the layer specs: one Markdown page per family (the
palette's categories) and a contents page, as the site's build writes them.

Every word on these pages comes from a spec (its summary and help, its ports, its parameters
with their defaults and allowed values, a recurrent layer's engines, gates and states), so a
new layer type or parameter is in the documentation with no page edited. The pages are
written for MyST (Sphinx's Markdown); text from a spec is escaped, so that a ``*`` or a ``<``
in a help text reads as it is written.
"""
from __future__ import annotations

import importlib
import json
import re

from designer.graph import registry
from designer.graph.spec import INDEX, LayerSpec

FOLDER = "layers"  # under the site's generated reference
PICTURES = "pictures"  # under FOLDER: one PNG per layer type
ENGINES_PAGE = "../../engines.md"  # the hand-written pages a section points to
CELLS_PAGE = "../../cells.md"
NOTE = ("<!-- written by the site's build from the layer specs (designer/graph); edit the "
        "specs, not this page -->")
_SPECIAL = re.compile(r"([\\`*_\[\]<>|{}#~&!$])")


def load_layers() -> None:
    """Register every layer type: the recurrent cells register theirs when their package
    (``designer.cells``), where there is one, is loaded."""
    try:
        cells = importlib.import_module("designer.cells")
    except ModuleNotFoundError:
        return  # every layer type is in designer.graph.layers
    cells.load()


def slug(text: str) -> str:
    """``Building blocks`` -> ``building-blocks``: a family's page name, a section's id."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def family_page(category: str) -> str:
    """The page of a family, under the layer reference (``recurrent``)."""
    return slug(category)


def anchor(type_id: str) -> str:
    """The id of a layer type's section on its family's page (``layer-lstm``)."""
    return "layer-" + slug(type_id)


def plain(text) -> str:
    """Text from a spec, escaped so that Markdown shows it as written."""
    return _SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def code(value) -> str:
    """A value as a project file writes it (JSON), in a code span."""
    text = json.dumps(value, ensure_ascii=False)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def families() -> dict[str, list[LayerSpec]]:
    """The layer types by family, in the palette's order."""
    load_layers()
    return registry.by_category()


def pages() -> dict[str, str]:
    """Page name (under the layer reference) -> its Markdown: ``index`` and one per family."""
    fams = families()
    out = {"index": contents_page(fams)}
    for category, specs in fams.items():
        out[family_page(category)] = family_text(category, specs)
    return out


def contents_page(fams: dict[str, list[LayerSpec]]) -> str:
    lines = ["# Layer reference", "", NOTE, "",
             f"Every layer type the palette offers, {sum(map(len, fams.values()))} in "
             f"{len(fams)} families, as the designer knows it: what it does, its ports, its "
             "parameters with their defaults and the values they take, and, for a recurrent "
             "layer, the engines it runs on. In the window, select a layer and press F1 to "
             "open its section here.", "",
             "```{toctree}", ":hidden:", ""]
    lines += [family_page(c) for c in fams]
    lines += ["```", "", "| family | layer types |", "|---|---|"]
    for category, specs in fams.items():
        page = family_page(category)
        types = ", ".join(f"[{plain(s.id)}]({page}.md#{anchor(s.id)})" for s in specs)
        lines.append(f"| [{plain(category)}]({page}.md) | {types} |")
    return "\n".join(lines) + "\n"


def family_text(category: str, specs: list[LayerSpec]) -> str:
    lines = [f"# {plain(category)} layers", "", NOTE, ""]
    lines += ["| layer | what it does |", "|---|---|"]
    lines += [f"| [{plain(s.id)}](#{anchor(s.id)}) | {plain(s.summary)} |" for s in specs]
    for spec in specs:
        lines += ["", *section(spec)]
    return "\n".join(lines) + "\n"


def section(spec: LayerSpec) -> list[str]:
    """A layer type's section: its words, picture, ports, parameters and engines."""
    lines = [f"({anchor(spec.id)})=", f"## {plain(spec.id)}", "", f"**{plain(spec.summary)}**"]
    if spec.help and spec.help != spec.summary:
        lines += ["", plain(spec.help)]
    lines += ["", f"```{{figure}} {PICTURES}/{spec.id}.png", f":alt: {spec.id} on the canvas",
              ":scale: 50", "", f"{plain(picture_caption(spec))}", "```"]  # drawn at 2x
    lines += ["", *ports(spec)]
    if spec.params:
        lines += ["", *parameters(spec)]
    lines += engines(spec)
    if spec.generation is not None:
        g = spec.generation
        lines += ["", f"**Generation.** A model trained on it writes at temperature "
                      f"{g.temperature:g} by default" + (f", top-k {g.top_k}" if g.top_k else "")
                  + (f": {plain(g.why)}." if g.why else ".")]
    if spec.caffe_type:
        lines += ["", f"**In Caffe and MyCaffe** its type is `{spec.caffe_type}`."]
    return lines


def picture_caption(spec: LayerSpec) -> str:
    if spec.inputs:
        return (f"{spec.id} as the canvas draws it, in a small net that feeds it: each card "
                "shows its layer's name, type and output shape, each link the shape it "
                "carries.")
    return f"{spec.id} as the canvas draws it, with the shapes of what it gives."


def ports(spec: LayerSpec) -> list[str]:
    if not spec.inputs and not spec.outputs:
        return ["It has no ports."]
    rows = ["**Ports**", "", "| | port | what it carries |", "|---|---|---|"]
    for side, items in (("in", spec.inputs), ("out", spec.outputs)):
        for p in items:
            kind = "ids" if p.dtype == INDEX else ""
            optional = "optional" if p.optional and "optional" not in p.help else ""
            notes = "; ".join(n for n in (optional, kind) if n)
            rows.append(f"| {side} | `{p.name}` | {plain(p.help)}"
                        + (f" ({notes})" if notes else "") + " |")
    return rows


def parameters(spec: LayerSpec) -> list[str]:
    rows = ["**Parameters**", "", "| parameter | default | values | what it does |",
            "|---|---|---|---|"]
    for p in spec.params:
        rows.append(f"| `{p.name}` | {code(p.default)} | {plain(p.allowed())} | "
                    f"{plain(p.help)} |")
    return rows


def engines(spec: LayerSpec) -> list[str]:
    """A recurrent layer's engines (and, where its spec declares its cell, the cell's gates,
    states and unit node); nothing for another layer."""
    cell = getattr(spec, "cell", None)
    if cell is not None:
        lines = ["", "**Engines:** " + _engine_list(cell.engines, cell.layout)
                 + f" ([how they differ]({ENGINES_PAGE}))."]
        if cell.fused:
            lines[-1] += (f" When a run asks every recurrent layer for an engine other than "
                          f"`CAFFE`, it runs on `{cell.fused}`.")
        facts = [f"its gates are {plain_list([f'`{g}`' for g in cell.gates])}",
                 f"it carries {plain_list([f'`{x}`' for x in cell.states])} from step to step"]
        if cell.unit:
            facts.append(f"each step of its unrolled net ends in the unit node `{cell.unit}`")
        lines += ["", "**Cell:** " + "; ".join(facts) + f" ([the cells]({CELLS_PAGE}))."]
        return lines
    if spec.has_param("engine"):
        param = spec.param("engine")
        choices = (param.default,) + tuple(c for c in param.choices if c != param.default)
        return ["", "**Engines:** " + _engine_list(choices, lambda e: e)
                + f" ([how they differ]({ENGINES_PAGE}); [the cells]({CELLS_PAGE}))."]
    return []


def _engine_list(names, layout) -> str:
    items = []
    for i, name in enumerate(names):
        notes = ["the default"] if i == 0 else []
        if layout(name) != name:
            notes.append(f"it holds `{layout(name)}`'s tensors")
        items.append(f"`{name}`" + (f" ({'; '.join(notes)})" if notes else ""))
    return plain_list(items)


def plain_list(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
