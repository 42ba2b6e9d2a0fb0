"""What a project file must be before it becomes a graph: the JSON schema, and the checks of
its structure, layers, settings and links.

Each check returns every problem it finds as a ``(json_path, message)`` pair, the message a
sentence a user can act on ("unknown key 'nmae' (did you mean 'name'?)"); ``project.from_dict``
raises them together as one ``ProjectError``.
"""
from __future__ import annotations

import difflib
from typing import Any

import jsonschema
import networkx as nx

from designer.graph import registry, settings
from designer.graph.errors import GraphError, ParamError
from designer.graph.model import Graph

SCHEMA_VERSION = 1

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
        # sizes fixed by what made the project, until its data is readable: {"F": 3}
        "dims": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        "training": _section_schema(settings.TRAINING),
        # what `rnn-designer search` varies: "layer.param" or "solver.param" -> a range
        "search": {"type": "object", "additionalProperties": {
            "type": "object", "minProperties": 1,
            "properties": {
                "int": {"type": "array", "items": {"type": "integer"},
                        "minItems": 2, "maxItems": 2},
                "float": {"type": "array", "items": {"type": "number"},
                          "minItems": 2, "maxItems": 2},
                "choice": {"type": "array", "minItems": 1},
                "log": {"type": "boolean"},
                "step": {"type": "number", "exclusiveMinimum": 0},
            },
            "additionalProperties": False,
            "oneOf": [{"required": ["int"]}, {"required": ["float"]},
                      {"required": ["choice"]}],
        }},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


# ---------------------------------------------------------------------------------- checks --
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


def structure_problems(data: Any) -> list[tuple[str, str]]:
    """The schema version, then everything the JSON schema finds wrong with ``data``."""
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


def layer_problems(layers: list) -> list[tuple[str, str]]:
    """Bad or repeated layer names, unknown layer types, unknown parameters and bad values."""
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


def settings_problems(data: dict) -> list[tuple[str, str]]:
    """Solver and training settings whose values are not allowed."""
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


def link_problems(links: list, specs: dict) -> list[tuple[str, str]]:
    """Link ends naming no layer or port, inputs fed twice, and cycles.

    ``specs`` maps each layer's name to its `LayerSpec`.
    """
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
