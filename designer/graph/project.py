"""Project files: versioned JSON holding the graph, its canvas positions, solver and training
settings (the data source and the engine choices live in the layers' parameters).

Loading checks everything and reports each problem with its JSON path; it never raises anything
but :class:`ProjectError`. Saving is atomic, and saving a loaded file gives the same bytes.
"""
from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import networkx as nx

from . import registry, settings
from .atomic import atomic_write_text
from .errors import GraphError, ParamError
from .model import Graph

SCHEMA_VERSION = 1
SUFFIX = ".json"

_JSON_TYPES = {"int": "integer", "float": "number", "bool": "boolean", "choice": None,
               "str": "string", "ints": "array", "dim": ["integer", "string"]}


def _section_schema(specs) -> dict:
    props = {}
    for p in specs:
        t = _JSON_TYPES[p.kind]
        props[p.name] = {"type": t} if t else {"enum": list(p.choices)}
    return {"type": "object", "properties": props, "additionalProperties": False}


SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["schema_version", "graph"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"type": "integer"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "graph": {
            "type": "object",
            "required": ["layers", "links"],
            "additionalProperties": False,
            "properties": {
                "layers": {"type": "array", "items": {
                    "type": "object",
                    "required": ["name", "type"],
                    "additionalProperties": False,
                    "properties": {
                        "name": {"type": "string"},
                        "type": {"type": "string"},
                        "params": {"type": "object"},
                        "pos": {"type": "array", "items": {"type": "number"},
                                "minItems": 2, "maxItems": 2},
                    },
                }},
                "links": {"type": "array", "items": {
                    "type": "object",
                    "required": ["from", "to"],
                    "additionalProperties": False,
                    "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                }},
            },
        },
        "solver": _section_schema(settings.SOLVER),
        "training": _section_schema(settings.TRAINING),
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


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
        }

    def to_json(self) -> str:
        return dumps(self.to_dict())

    def save(self, path: str | os.PathLike | None = None) -> Path:
        """Write the project atomically (to ``path``, or where it was loaded from)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("no file to save to")
        atomic_write_text(target, self.to_json())
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
    problems = _structure_problems(data)
    if problems:
        raise ProjectError(file, problems)
    layers = data["graph"]["layers"]
    links = data["graph"]["links"]
    problems = _layer_problems(layers) + _settings_problems(data)
    ports = {}
    if not problems:
        ports = {layer["name"]: registry.get(layer["type"]) for layer in layers}
        problems = _link_problems(links, ports)
    if problems:
        raise ProjectError(file, problems)
    graph = Graph(project_dir=project_dir)
    try:
        with graph.bulk():
            _build(graph, layers, links)
    except GraphError as e:  # everything was checked above; keep the promise anyway
        raise ProjectError(file, [("$.graph", str(e))]) from None
    return Project(graph, data.get("name", "untitled"), data.get("description", ""),
                   dict(data.get("solver", {})), dict(data.get("training", {})))


def _build(graph: Graph, layers: list, links: list) -> None:
    for layer in layers:
        graph.add_layer(layer["type"], layer["name"], layer.get("params", {}),
                        layer.get("pos", (0, 0)))
    for link in links:
        src, sp = link["from"].split(".", 1)
        dst, dp = link["to"].split(".", 1)
        graph.connect(src, sp, dst, dp)


def _jpath(parts) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _describe(error: jsonschema.ValidationError) -> str:
    v = error.validator
    if v == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        near = difflib.get_close_matches(extra[0], allowed, n=1) if extra else []
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        return f"unknown key '{extra[0]}'{hint}" if extra else error.message
    if v == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"missing required key '{missing[0]}'" if missing else error.message
    if v == "type":
        want = error.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        return f"must be {_article(want)} {want}, not {_json_type(error.instance)}"
    if v == "enum":
        return "must be one of " + ", ".join(map(str, error.validator_value)) + \
            f", not {error.instance!r}"
    if v in ("minItems", "maxItems"):
        return "must be a pair of numbers [x, y]"
    return error.message


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _structure_problems(data: Any) -> list[tuple[str, str]]:
    if not isinstance(data, dict):
        return [("$", f"must be a JSON object holding a project, not {_json_type(data)}")]
    version = data.get("schema_version")
    if "schema_version" not in data:
        return [("$", "missing required key 'schema_version' (is this an rnn-designer project?)")]
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        return [("$.schema_version", f"the file was written by a newer rnn-designer (schema "
                                     f"{version}; this version reads up to {SCHEMA_VERSION})")]
    if isinstance(version, int) and not isinstance(version, bool) and version < 1:
        return [("$.schema_version", f"must be at least 1, not {version}")]
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [(_jpath(e.absolute_path), _describe(e)) for e in errors]


def _layer_problems(layers: list) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    probe = Graph()
    for i, layer in enumerate(layers):
        at = f"$.graph.layers[{i}]"
        name = layer["name"]
        try:
            probe._check_name(name)
        except GraphError as e:
            problems.append((f"{at}.name", str(e)))
        if name in seen:
            problems.append((f"{at}.name", f"duplicate layer name '{name}' (also "
                                           f"$.graph.layers[{seen[name]}])"))
        seen.setdefault(name, i)
        try:
            spec = registry.get(layer["type"])
        except GraphError as e:
            problems.append((f"{at}.type", str(e)))
            continue
        for key, value in layer.get("params", {}).items():
            if not spec.has_param(key):
                near = difflib.get_close_matches(key, [p.name for p in spec.params], n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                problems.append((f"{at}.params.{key}",
                                 f"{spec.id} layer '{name}' has no parameter '{key}'{hint}"))
                continue
            try:
                spec.param(key).check(value)
            except ParamError as e:
                problems.append((f"{at}.params.{key}", f"{name}: {key} must be {e.allowed}, "
                                                       f"not {value!r}"))
    return problems


def _settings_problems(data: dict) -> list[tuple[str, str]]:
    problems = []
    for section, specs in settings.SECTIONS.items():
        for p in specs:
            if p.name in data.get(section, {}):
                try:
                    p.check(data[section][p.name])
                except ParamError as e:
                    problems.append((f"$.{section}.{p.name}", f"must be {e.allowed}, not "
                                                              f"{e.value!r}"))
    return problems


def _link_problems(links: list, specs: dict) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    fed: dict[tuple, int] = {}
    g = nx.DiGraph()
    for i, link in enumerate(links):
        at = f"$.graph.links[{i}]"
        ends = []
        for key, side in (("from", "outputs"), ("to", "inputs")):
            text = link[key]
            layer, _, port = text.partition(".")
            if not port:
                problems.append((f"{at}.{key}", f"'{text}' must name a layer and a port, as "
                                                "'embed.y'"))
                break
            if layer not in specs:
                problems.append((f"{at}.{key}", f"names a layer '{layer}' that is not in "
                                                "$.graph.layers"))
                break
            names = [p.name for p in getattr(specs[layer], side)]
            if port not in names:
                kind = "output" if side == "outputs" else "input"
                problems.append((f"{at}.{key}", f"{layer} ({specs[layer].id}) has no {kind} "
                                                f"'{port}' (it has {', '.join(names) or 'none'})"))
                break
            ends.append((layer, port))
        if len(ends) != 2:
            continue
        (src, _), (dst, dport) = ends
        if (dst, dport) in fed:
            problems.append((f"{at}.to", f"{dst}.{dport} is already fed by "
                                         f"$.graph.links[{fed[(dst, dport)]}]"))
            continue
        fed[(dst, dport)] = i
        g.add_edge(src, dst, index=i)
    if not problems:
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            loop = " -> ".join([e[0] for e in cycle] + [cycle[0][0]])
            first = g.edges[cycle[0][0], cycle[0][1]]["index"]
            problems.append((f"$.graph.links[{first}]", f"the links form a cycle: {loop}"))
    return problems


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
