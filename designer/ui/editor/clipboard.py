"""Copy and paste: selected layers, with the links among them, as project-style JSON."""
from __future__ import annotations

import json

from PySide6.QtCore import QMimeData

from designer.graph import registry
from designer.graph.errors import GraphError
from designer.graph.model import Link
from designer.ui.editor import mime


def to_mime(graph, names: list[str]) -> QMimeData:
    """The layers ``names`` and the links among them, as clipboard data."""
    chosen = set(names)
    layers = [{"name": n, "type": graph.layer(n).type, "params": dict(graph.layer(n).params),
               "pos": list(graph.layer(n).pos)} for n in names]
    links = [{"from": f"{k.src}.{k.src_port}", "to": f"{k.dst}.{k.dst_port}"}
             for k in graph.links() if k.src in chosen and k.dst in chosen]
    text = json.dumps({"layers": layers, "links": links}, indent=1)
    data = QMimeData()
    data.setData(mime.LAYERS, text.encode("utf-8"))
    data.setText(text)
    return data


def from_mime(data: QMimeData) -> tuple[list[dict], list[Link]] | None:
    """Layers and links from clipboard data, or ``None`` when it holds none we can use."""
    if data is None or not data.hasFormat(mime.LAYERS):
        return None
    try:
        doc = json.loads(bytes(data.data(mime.LAYERS)).decode("utf-8"))
        layers = [{"name": str(d["name"]), "type": registry.get(d["type"]).id,
                   "params": dict(d.get("params", {})),
                   "pos": (float(d["pos"][0]), float(d["pos"][1]))} for d in doc["layers"]]
        links = []
        for k in doc["links"]:
            src, sp = k["from"].split(".", 1)
            dst, dp = k["to"].split(".", 1)
            links.append(Link(src, sp, dst, dp))
    except (ValueError, KeyError, TypeError, IndexError, GraphError):
        return None
    return layers, links
