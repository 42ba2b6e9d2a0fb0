"""Validation: every problem of a design, as typed errors with sentences for users.

Per layer: unconnected required inputs, shapes that disagree (naming both layers and the dims),
parameter values out of range. Whole net: data that cannot be read (a warning: shapes that depend
on it stay symbolic), a net with no data layer or no loss. Cycles and duplicate names cannot enter
the model (``Graph.connect`` and ``Graph.add_layer`` refuse them); project files that hold them
are refused when loaded, with the JSON path.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import DataWarning, GraphError, GraphWarning
from designer.graph.hints import explain
from designer.graph.lint import lint
from designer.graph.memory import report_lines as memory_lines

LOSS_TYPES = ("SoftmaxWithLoss", "EuclideanLoss", "L1Loss")
REGRESSION_LOSSES = ("EuclideanLoss", "L1Loss")


def collect(graph) -> list[GraphError]:
    """Errors first (in layer order), then warnings; each error that one change can mend is
    told on the layer to change, with its fix (``designer.graph.hints``).

    The result is kept until the graph next changes (``Graph.version``).
    """
    cached = getattr(graph, "_problems_cache", None)
    if cached is not None and cached[0] == graph.version:
        return list(cached[1])
    errors: list[GraphError] = []
    for name in graph.topological_order():
        errors.extend(graph.info(name).problems)
    settled = graph._deferred is None  # inside bulk(), layers may not be inferred yet
    if settled:
        errors = explain(graph, errors)
    warnings: list[GraphError] = list(graph._dim_notes)
    if len(graph):
        if not graph.sources():
            warnings.append(DataWarning("the net has no data layer, so it cannot be trained"))
        if not any(layer.type in LOSS_TYPES for layer in graph.layers()):
            warnings.append(DataWarning("the net has no loss layer, so it cannot be trained"))
    if settled:
        warnings.extend(lint(graph))
        graph._problems_cache = (graph.version, errors + warnings)
    return errors + warnings


def severity(problem: GraphError) -> str:
    return "warning" if isinstance(problem, GraphWarning) else "error"


def problem_json(problem: GraphError) -> dict:
    out = {"severity": severity(problem), "kind": problem.kind, "layer": problem.layer,
           "message": str(problem)}
    fix = getattr(problem, "fix", None)
    if fix is not None:
        out["fix"] = {"kind": fix.kind, "layer": fix.layer, "text": fix.text}
        if fix.kind in ("set", "pick_data"):
            out["fix"].update(param=fix.param, value=fix.value)
    return out


def report(graph) -> dict:
    """The validation report ``rnn-designer validate --json`` prints."""
    rows = []
    for name in graph.topological_order():
        layer, info = graph.layer(name), graph.info(name)
        rows.append({
            "name": name,
            "type": layer.type,
            "inputs": [None if t is None else t.to_json() for t in info.inputs],
            "outputs": [None if t is None else t.to_json() for t in info.outputs],
            "params": info.params,
            "flops": info.flops,
        })
    flops = [r["flops"] for r in rows]
    total_flops = sum(flops) if all(D.known(f) for f in flops) else None
    return {
        "layers": rows,
        "total_params": graph.total_params(),
        "total_flops": total_flops,
        "dims": dict(graph.dims),
        "problems": [problem_json(p) for p in graph.problems()],
    }


def _shape_text(shape, missing: str = "?") -> str:
    if shape is None:
        return missing
    return D.shape_str(shape)


def _count_text(n) -> str:
    if n is None:
        return "?"
    return f"{n:,}" if D.known(n) else str(n)


def format_report(rep: dict) -> str:
    """The plain-text table ``rnn-designer validate`` prints."""
    head = ("layer", "type", "inputs", "outputs", "params", "FLOPs/sample")
    rows = [head]
    for r in rep["layers"]:
        rows.append((
            r["name"], r["type"],
            " ".join(_shape_text(s, "-") for s in r["inputs"]) or "-",
            " ".join(_shape_text(s) for s in r["outputs"]) or "-",
            _count_text(r["params"]), _count_text(r["flops"]),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    right = {4, 5}
    lines = []
    for k, row in enumerate(rows):
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in
                 enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    dims = " ".join(f"{k}={v}" for k, v in rep["dims"].items())
    lines.append("")
    lines.append(f"total: {_count_text(rep['total_params'])} parameters, "
                 f"{_count_text(rep['total_flops'])} forward FLOPs per sample"
                 + (f"  ({dims})" if dims else ""))
    if rep.get("memory"):
        lines.extend(memory_lines(rep["memory"]))
    for p in rep["problems"]:
        lines.append(f"{p['severity']}: {p['message']}")
    smoke = rep.get("smoke")
    if smoke is not None and smoke["status"] != "failed":
        lines.append(f"smoke step: {smoke['message']} ({smoke['seconds']:.2f} s)"
                     if smoke["status"] == "ok" else f"smoke step skipped: {smoke['message']}")
    errors = sum(p["severity"] == "error" for p in rep["problems"])
    lines.append("valid" if not errors else f"{errors} error{'s' if errors > 1 else ''}")
    return "\n".join(lines)
