"""What a search varies: a project's ``search`` section (or a ``--space`` file of the same
form), checked against the project, and suggested for an Optuna trial.

    {"solver.base_lr": {"float": [1e-4, 1e-2], "log": true},
     "lstm1.num_output": {"int": [16, 128], "step": 16},
     "rnn1.type": {"choice": [two recurrent layer types]},
     "pool.method": {"choice": ["last", "mean", "attention"]},
     "features.inputs": {"choice": ["a", "b", "both"]}}

A key names a layer and one of its parameters, or ``solver.X`` / ``training.X`` for a setting;
``LAYER.type`` retypes the layer, a SequencePool's ``method`` may also be ``last`` (it becomes
a SequenceLast), and ``LAYER.inputs`` on a layer of two inputs (a Concat) keeps one branch
(named by its port or by the layer feeding it) or ``both``. Each range must suit the
parameter (its kind, minimum and maximum); every problem is one sentence naming the key.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from designer.graph import registry, settings
from designer.graph.errors import GraphError, ParamError
from designer.graph.project import Project
from designer.graph.spec import ParamSpec

RANGES = ("int", "float", "choice")
KEYS = set(RANGES) | {"log", "step"}
BOTH = "both"
POOL_LAST = "last"  # a SequencePool's extra method: the layer becomes a SequenceLast
STEPS_KEY = "solver.max_steps"  # what --steps fixes for every trial


class SpaceError(Exception):
    """A space that cannot be searched; ``problems`` holds one sentence per problem, each
    naming its key, and ``str()`` the first (with the file, when there is one)."""

    def __init__(self, problems: list[str], file: str | os.PathLike | None = None):
        self.problems, self.file = problems, None if file is None else str(file)
        where = f"{self.file}: " if self.file else ""
        more = len(problems) - 1
        tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        super().__init__(f"{where}{problems[0]}{tail}")

    def lines(self) -> list[str]:
        where = f"{self.file}: " if self.file else ""
        return [where + p for p in self.problems]


@dataclass(frozen=True)
class Dimension:
    """One searched value: ``key`` (``layer.param``), what it sets and its range.

    ``role`` is ``param`` (a layer's parameter), ``setting`` (``target`` is ``solver`` or
    ``training``), ``type`` (the layer's type), ``inputs`` (which of a join's inputs stay) or
    ``residual`` (a convolution block made residual: designer.search.residual).
    """

    key: str
    target: str
    param: str
    role: str
    kind: str                 # int, float or choice
    low: Any = None
    high: Any = None
    log: bool = False
    step: float | None = None
    choices: tuple = ()

    def suggest(self, trial) -> Any:
        """The trial's value (Optuna names the parameter by the key)."""
        if self.kind == "int":
            return trial.suggest_int(self.key, self.low, self.high, step=int(self.step or 1),
                                     log=self.log)
        if self.kind == "float":
            return trial.suggest_float(self.key, self.low, self.high, step=self.step,
                                       log=self.log)
        return trial.suggest_categorical(self.key, list(self.choices))

    def describe(self) -> str:
        if self.kind == "choice":
            return " | ".join(json.dumps(c) for c in self.choices)
        text = f"{self.low:g} .. {self.high:g}" if self.kind == "float" else \
            f"{self.low} .. {self.high}"
        return text + (" (log)" if self.log else "") + (f" step {self.step:g}"
                                                        if self.step else "")


@dataclass(frozen=True)
class Space:
    """The checked dimensions of a search, in the order they were given."""

    dims: tuple
    source: dict  # the section as given: stored with the study, compared on every resume

    def __len__(self) -> int:
        return len(self.dims)

    def suggest(self, trial) -> dict:
        """``{key: value}`` for an Optuna trial (a retried trial gets its earlier values)."""
        return {d.key: d.suggest(trial) for d in self.dims}

    def dimension(self, key: str) -> Dimension:
        return next(d for d in self.dims if d.key == key)

    def values(self, key: str, held: Any) -> tuple:
        """What a trial can set ``key`` to: its choices, its bounds, or ``held`` (the
        project's own value) where the space leaves it alone."""
        if key not in {d.key for d in self.dims}:
            return (held,)
        d = self.dimension(key)
        return d.choices if d.kind == "choice" else (d.low, d.high)

    def trained_for(self, steps: int | None) -> Space:
        """The space a search with ``--steps`` (every trial trained ``steps`` steps) can vary:
        ``solver.max_steps`` left out, as no trial would train what it suggests. The section
        kept with the study stays as given, so the study goes on with or without ``--steps``."""
        if not steps:
            return self
        return Space(tuple(d for d in self.dims if d.key != STEPS_KEY), self.source)

    def steps_note(self, steps: int | None) -> str | None:
        """What `trained_for` leaves out, said once when a search starts (``None``: nothing)."""
        if not steps or STEPS_KEY not in {d.key for d in self.dims}:
            return None
        return (f"--steps {steps} trains every trial {steps} steps, so {STEPS_KEY} is left "
                "out of this search (the trials, and Use Best, keep the steps trained)")

    def adam_l2_note(self, solver: dict) -> str | None:
        """`settings.adam_l2_note` for the strongest weight decay a trial can pair with
        Adam (``solver``: the project's effective settings), said once when a search starts."""
        if "Adam" not in self.values("solver.type", solver.get("type")):
            return None
        decays = [v for v in self.values("solver.weight_decay", solver.get("weight_decay"))
                  if isinstance(v, (int, float))]
        note = settings.adam_l2_note(dict(solver, type="Adam",
                                          weight_decay=max(decays, default=0.0)))
        return note and "the space pairs Adam with weight decay; at its largest, " + note


# ------------------------------------------------------------------------------- reading --
def read_space_file(path: str | os.PathLike) -> dict:
    """The section in a ``--space`` file: an object of ``key: range`` (or a project file, whose
    ``search`` section is taken); raises `SpaceError` naming the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpaceError(["does not exist"], path) from None
    except IsADirectoryError:
        raise SpaceError(["is a folder, not a space file"], path) from None
    except UnicodeDecodeError:
        raise SpaceError(["is not UTF-8 text"], path) from None
    except OSError as e:
        raise SpaceError([f"cannot be read ({e.strerror or e})"], path) from None
    except json.JSONDecodeError as e:
        raise SpaceError([f"is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})"],
                         path) from None
    if isinstance(data, dict) and ("schema_version" in data or set(data) == {"search"}):
        data = data.get("search", {})
    if not isinstance(data, dict):
        raise SpaceError(["must hold a JSON object of 'layer.param': range"], path)
    return data


def parse_space(section: Any, project: Project, file: str | os.PathLike | None = None
                ) -> Space:
    """Check ``section`` against ``project``; raises `SpaceError` with every problem."""
    if not isinstance(section, dict):
        raise SpaceError(["the search space must be a JSON object of 'layer.param': range"],
                         file)
    if not section:
        raise SpaceError(["the search space is empty: give the project a 'search' section "
                          "(or --space FILE) of 'layer.param': range, as "
                          "{\"lstm1.num_output\": {\"int\": [16, 128]}}"], file)
    dims, problems = [], []
    for key, entry in section.items():
        try:
            dims.append(_dimension(key, entry, project, section))
        except _Bad as e:
            problems.append(f"{key}: {e}")
    if problems:
        raise SpaceError(problems, file)
    return Space(tuple(dims), json.loads(json.dumps(section)))


class _Bad(Exception):
    """One problem with one key (the caller names the key)."""


def _dimension(key: str, entry: Any, project: Project, section: dict) -> Dimension:
    target, dot, param = str(key).partition(".")
    if not dot or not target or not param or "." in param:
        raise _Bad("must name a layer and one of its parameters, as 'lstm1.num_output' (or a "
                   "setting, as 'solver.base_lr')")
    if not isinstance(entry, dict) or not entry:
        raise _Bad("must be an object holding one range: {\"int\": [lo, hi]}, "
                   "{\"float\": [lo, hi]} or {\"choice\": [...]}")
    unknown = sorted(set(entry) - KEYS)
    if unknown:
        raise _Bad(f"has an unknown key '{unknown[0]}' (a range takes int, float or choice, "
                   "with log and step)")
    kinds = [k for k in RANGES if k in entry]
    if len(kinds) != 1:
        raise _Bad("must hold exactly one of int, float and choice")
    kind = kinds[0]
    graph = project.graph
    if target in settings.SECTIONS and target not in graph:
        specs = {p.name: p for p in settings.SECTIONS[target]}
        if param not in specs:
            raise _Bad(f"{target} has no setting '{param}' (it has {', '.join(specs)})")
        return _ranged(key, target, param, "setting", kind, entry, specs[param])
    if target not in graph:
        raise _Bad(f"there is no layer '{target}' in the project (and no setting section of "
                   "that name: solver, training)")
    layer = graph.layer(target)
    if param == "type":
        return _types(key, target, kind, entry, layer)
    if param == "inputs" and not layer.spec.has_param("inputs"):
        return _inputs(key, target, kind, entry, graph)
    if param == "residual" and not layer.spec.has_param("residual"):
        return _residual(key, target, kind, entry, graph)
    specs = _param_specs(target, layer, section)
    if param not in specs:
        hint = " (it becomes each of the types in its '.type' choice)" \
            if f"{target}.type" in section else ""
        raise _Bad(f"{target} ({layer.type}) has no parameter '{param}'{hint}")
    spec = specs[param]
    if layer.type == "SequencePool" and param == "method" and kind == "choice":
        spec = ParamSpec(spec.name, "choice", spec.default, spec.help,
                         choices=tuple(spec.choices) + (POOL_LAST,))
    return _ranged(key, target, param, "param", kind, entry, spec)


def _param_specs(target: str, layer, section: dict) -> dict:
    """The parameters of ``layer`` (and of every type its ``.type`` choice can make it)."""
    specs = {p.name: p for p in layer.spec.params}
    types = section.get(f"{target}.type", {})
    for type_id in types.get("choice", ()) if isinstance(types, dict) else ():
        try:
            for p in registry.get(type_id).params:
                specs.setdefault(p.name, p)
        except (GraphError, TypeError):
            continue  # the .type key says what is wrong with it
    return specs


def _ranged(key, target, param, role, kind, entry, spec: ParamSpec) -> Dimension:
    log, step = entry.get("log", False), entry.get("step")
    if not isinstance(log, bool):
        raise _Bad("log must be true or false")
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float))
                             or not step > 0):
        raise _Bad("step must be a number above 0")
    if kind == "choice":
        if log or step is not None:
            raise _Bad("log and step are for int and float ranges, not a choice")
        return Dimension(key, target, param, role, kind, choices=_choices(entry, spec))
    if spec.kind in ("bool", "choice", "str", "ints"):
        raise _Bad(f"{param} takes {spec.allowed()}: give it as {{\"choice\": [...]}}")
    pair = entry[kind]
    if not isinstance(pair, list) or len(pair) != 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair):
        raise _Bad(f"{kind} must be a pair of numbers [lo, hi]")
    lo, hi = pair
    if kind == "int":
        if spec.kind == "float":
            raise _Bad(f"{param} is a number, not a whole number: give {{\"float\": [lo, hi]}}")
        if not all(isinstance(v, int) for v in pair):
            raise _Bad("an int range takes whole numbers")
        if step is not None and not float(step).is_integer():
            raise _Bad("an int range's step must be a whole number")
    else:
        if spec.kind != "float":
            raise _Bad(f"{param} takes whole numbers: give {{\"int\": [lo, hi]}}")
        lo, hi = float(lo), float(hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise _Bad("the range must be finite")
    if lo > hi:
        raise _Bad(f"the range is reversed: {lo} is above {hi}")
    for end in (lo, hi):
        try:
            spec.check(end)
        except ParamError:
            raise _Bad(f"{param} must be {spec.allowed()}, so {end:g} cannot be searched") \
                from None
    if log and lo <= 0:
        raise _Bad("a log range must start above 0")
    if log and step is not None and step != 1:
        raise _Bad("a log range takes no step")
    if step is not None and kind == "int" and (hi - lo) % int(step):
        raise _Bad(f"the range {lo} .. {hi} is not a whole number of steps of {int(step)}")
    if step is not None and kind == "float" and not log:
        count = (hi - lo) / step
        if abs(count - round(count)) > 1e-9 * max(1.0, count):
            raise _Bad(f"the range {lo:g} .. {hi:g} is not a whole number of steps of "
                       f"{step:g}")
    return Dimension(key, target, param, role, kind, lo, hi, log,
                     None if step is None or (log and kind == "int") else step)


def _choices(entry: dict, spec: ParamSpec) -> tuple:
    values = entry["choice"]
    if not isinstance(values, list) or not values:
        raise _Bad("choice must be a non-empty list of values")
    seen = []
    for value in values:
        if not isinstance(value, (bool, int, float, str)):
            raise _Bad(f"a choice must be a number, text or true/false, not {json.dumps(value)}")
        if any(value == s and type(value) is type(s) for s in seen):
            raise _Bad(f"{json.dumps(value)} is given twice")
        try:
            spec.check(value)
        except ParamError:
            raise _Bad(f"{spec.name} must be {spec.allowed()}, so {json.dumps(value)} cannot "
                       "be searched") from None
        seen.append(value)
    return tuple(seen)


def _types(key, target, kind, entry, layer) -> Dimension:
    if kind != "choice" or set(entry) != {"choice"}:
        example = json.dumps({"choice": list(registry.recurrent_kinds()[:2])})
        raise _Bad(f"a layer's type is searched as {example}")
    values = entry["choice"]
    if not isinstance(values, list) or not values:
        raise _Bad("choice must be a non-empty list of layer types")
    for value in values:
        try:
            registry.get(value)
        except (GraphError, TypeError):
            raise _Bad(f"{json.dumps(value)} is not a layer type") from None
    if len(set(values)) != len(values):
        raise _Bad("a layer type is given twice")
    return Dimension(key, target, "type", "type", "choice", choices=tuple(values))


def _inputs(key, target, kind, entry, graph) -> Dimension:
    """``LAYER.inputs``: which of a two-input layer's branches stay (or both)."""
    layer = graph.layer(target)
    fed = {link.dst_port: link.src for link in graph.links_into(target)}
    ports = [p.name for p in layer.spec.inputs if not p.optional]
    if len(ports) < 2 or not all(p in fed for p in ports):
        raise _Bad(f"{target} ({layer.type}) does not join two linked inputs, so no branch "
                   "of it can be switched off")
    if layer.spec.category == "Loss":
        raise _Bad(f"{target} ({layer.type}) scores the net; its inputs are not branches to "
                   "switch off")
    if kind != "choice" or set(entry) != {"choice"}:
        raise _Bad(f"the branches of {target} are searched as {{\"choice\": "
                   f"[\"{ports[0]}\", \"{ports[1]}\", \"both\"]}}")
    names = set(ports) | {fed[p] for p in ports} | {BOTH}
    values = entry["choice"]
    if not isinstance(values, list) or not values:
        raise _Bad("choice must be a non-empty list of inputs")
    for value in values:
        if value not in names:
            raise _Bad(f"{json.dumps(value)} is none of {target}'s inputs: give "
                       f"{', '.join(ports)} (or the layers feeding them: "
                       f"{', '.join(fed[p] for p in ports)}) or both")
    if len(set(values)) != len(values):
        raise _Bad("an input is given twice")
    return Dimension(key, target, "inputs", "inputs", "choice", choices=tuple(values))


def _residual(key, target, kind, entry, graph) -> Dimension:
    """``CONV.residual``: the convolution block that starts at ``CONV`` plain or residual."""
    from designer.search.residual import block_of
    layer = graph.layer(target)
    if block_of(graph, target) is None:
        raise _Bad(f"{target} ({layer.type}) does not start a convolution block (a Conv1D "
                   "with its input linked, read only by a BatchNorm read only by a ReLU), so "
                   "it cannot be made residual")
    values = entry.get("choice") if kind == "choice" and set(entry) == {"choice"} else None
    if not isinstance(values, list) or not values or \
            any(not isinstance(v, bool) for v in values) or len(set(values)) != len(values):
        raise _Bad("a block made residual or not is searched as {\"choice\": "
                   "[false, true]}")
    return Dimension(key, target, "residual", "residual", "choice", choices=tuple(values))
