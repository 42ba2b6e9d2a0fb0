"""Project files: versioned JSON holding the graph, its canvas positions, solver and training
settings (the data source and the engine choices live in the layers' parameters).

Loading checks everything (the checks and the JSON schema are in ``project_checks``) and reports
each problem with its JSON path; it never raises anything but :class:`ProjectError`. Saving is
atomic, and saving a loaded file gives the same bytes.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from designer.graph import registry, settings
from designer.graph.atomic import atomic_write_text
from designer.graph.errors import GraphError
from designer.graph.model import Graph
from designer.graph.project_checks import (SCHEMA_VERSION, layer_problems, link_problems,
                                           settings_problems, structure_problems)

SUFFIX = ".json"


class ProjectError(Exception):
    """A project file that cannot be used. ``str()`` is one sentence naming the file.

    ``problems`` holds every ``(json_path, message)`` found.
    """

    def __init__(self, file: str | os.PathLike | None, problems: list[tuple[str, str]]):
        self.file = str(file) if file is not None else "project"
        self.problems = problems
        path, msg = problems[0]
        where = f"{path}: " if path else ""
        more = len(problems) - 1
        tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        super().__init__(f"{self.file}: {where}{msg}{tail}")

    def lines(self) -> list[str]:
        return [f"{self.file}: {p + ': ' if p else ''}{m}" for p, m in self.problems]


@dataclass
class Project:
    """A loaded (or new) project: the graph plus its name, description and settings."""

    graph: Graph
    name: str = "untitled"
    description: str = ""
    solver: dict = field(default_factory=dict)    # explicitly set solver settings
    training: dict = field(default_factory=dict)  # explicitly set training settings
    path: Path | None = None
    # what `rnn-designer search` varies: {"lstm1.num_output": {"int": [32, 256]}, ...}
    search: dict = field(default_factory=dict)
    # sizes the data cannot tell yet, fixed by what made the project (an imported model's F)
    dims: dict = field(default_factory=dict)

    def solver_settings(self) -> dict:
        return settings.effective("solver", self.solver)

    def training_settings(self) -> dict:
        return settings.effective("training", self.training)

    def to_dict(self) -> dict:
        g = self.graph
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "description": self.description,
            "graph": {
                "layers": [
                    {"name": layer.name, "type": layer.type, "params": dict(layer.params),
                     "pos": [_num(p) for p in layer.pos]}
                    for layer in g.layers()
                ],
                "links": [{"from": f"{link.src}.{link.src_port}",
                           "to": f"{link.dst}.{link.dst_port}"} for link in g.links()],
            },
            "solver": dict(self.solver),
            "training": dict(self.training),
            **({"search": {k: dict(v) for k, v in self.search.items()}} if self.search else {}),
            **({"dims": dict(self.dims)} if self.dims else {}),
        }

    def to_json(self) -> str:
        return dumps(self.to_dict())

    def save(self, path: str | os.PathLike | None = None, replace: bool = True) -> Path:
        """Write the project atomically (to ``path``, or where it was loaded from); with
        ``replace`` off, raise ``FileExistsError`` rather than write over a file there."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("no file to save to")
        atomic_write_text(target, self.to_json(), replace)
        self.path = target
        return target


def _num(x: float):
    x = float(x)
    return int(x) if x.is_integer() else round(x, 2)


# --------------------------------------------------------------------------------- loading --
def load(path: str | os.PathLike) -> Project:
    """Read and check a project file; raises :class:`ProjectError` with a clear message."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise ProjectError(path, [("", "is a folder, not a project file")]) from None
    except FileNotFoundError:
        raise ProjectError(path, [("", "does not exist")]) from None
    except OSError as e:
        raise ProjectError(path, [("", f"cannot be read ({e.strerror or e})")]) from None
    project = loads(raw, file=path, project_dir=path.parent)
    project.path = path
    return project


def loads(raw: bytes | str, file: str | os.PathLike | None = None,
          project_dir: str | os.PathLike | None = None) -> Project:
    """Parse and check project JSON given as bytes or text."""
    if isinstance(raw, bytes):
        if not raw.strip():
            raise ProjectError(file, [("", "is empty, not a project file")])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProjectError(file, [("", "is not a project file (it is not UTF-8 text)")]) \
                from None
    else:
        text = raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProjectError(file, [("", f"is not valid JSON (line {e.lineno}, column {e.colno}: "
                                       f"{e.msg})")]) from None
    except RecursionError:
        raise ProjectError(file, [("", "is nested too deeply to be a project file")]) from None
    return from_dict(data, file=file, project_dir=project_dir)


def from_dict(data: Any, file=None, project_dir=None) -> Project:
    """Build a project from parsed JSON, checking structure, values and links."""
    problems = structure_problems(data)
    if problems:
        raise ProjectError(file, problems)
    layers = data["graph"]["layers"]
    links = data["graph"]["links"]
    problems = layer_problems(layers) + settings_problems(data)
    ports = {}
    if not problems:
        ports = {layer["name"]: registry.get(layer["type"]) for layer in layers}
        problems = link_problems(links, ports)
    if problems:
        raise ProjectError(file, problems)
    graph = Graph(project_dir=project_dir)
    try:
        with graph.bulk():
            _build(graph, layers, links)
    except GraphError as e:  # everything was checked above; keep the promise anyway
        raise ProjectError(file, [("$.graph", str(e))]) from None
    dims = dict(data.get("dims", {}))
    if dims:
        graph.pin_dims(dims)
    return Project(graph, data.get("name", "untitled"), data.get("description", ""),
                   dict(data.get("solver", {})), dict(data.get("training", {})),
                   search={k: dict(v) for k, v in data.get("search", {}).items()}, dims=dims)


def _build(graph: Graph, layers: list, links: list) -> None:
    for layer in layers:
        graph.add_layer(layer["type"], layer["name"], layer.get("params", {}),
                        layer.get("pos", (0, 0)))
    for link in links:
        src, sp = link["from"].split(".", 1)
        dst, dp = link["to"].split(".", 1)
        graph.connect(src, sp, dst, dp)


# --------------------------------------------------------------------------------- writing --
def dumps(data: Any) -> str:
    """Canonical JSON text: two-space indent, short objects and lists on one line."""
    return _dump(data, 0) + "\n"


def _dump(obj: Any, level: int) -> str:
    pad, inner = "  " * level, "  " * (level + 1)
    flat = json.dumps(obj, ensure_ascii=False)
    if not isinstance(obj, (dict, list)) or not obj:
        return flat
    scalars = all(not isinstance(v, (dict, list)) or not v
                  for v in (obj.values() if isinstance(obj, dict) else obj))
    if scalars and len(flat) + len(inner) <= 100:
        return flat
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, level + 1)}"
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [inner + _dump(v, level + 1) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def new_project(name: str = "untitled") -> Project:
    return Project(Graph(), name)
