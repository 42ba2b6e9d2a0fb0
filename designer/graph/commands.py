"""``rnn-designer validate``: load a project and print its report."""
from __future__ import annotations

import json
import sys
from typing import Callable

from designer.graph import memory as M
from designer.graph import project as P
from designer.graph import validate as V


def validate(path: str, as_json: bool = False,
             deep: Callable[[P.Project], dict] | None = None,
             room: Callable[[str], tuple | None] | None = None, device: str = "auto") -> int:
    """Exit 0 when valid, 1 when the graph has errors, 2 when the file cannot be used.

    ``deep``, given a valid project, runs it for real (the smoke step: see
    ``designer.training.run.smoke``) and returns ``{"status", "message", "layer", ...}``; a
    failure is reported like a graph error and exits 1.

    ``room(device)`` gives ``(name, bytes)`` of ``cpu`` or ``cuda`` (``None``: unknown; for
    ``auto``, ``cuda`` when a GPU answers); the memory estimate is told against it, and a net
    that cannot fit gets a warning.
    """
    try:
        proj = P.load(path)
    except P.ProjectError as e:
        if as_json:
            print(json.dumps({"error": str(e), "problems": [
                {"path": p, "message": m} for p, m in e.problems]}, indent=1))
        print(f"rnn-designer: {e}", file=sys.stderr)
        return 2
    rep = V.report(proj.graph)
    rep["memory"] = _memory(proj, room, device)
    if rep["memory"] and rep["memory"]["message"]:
        rep["problems"].append({"severity": "warning", "kind": "memory", "layer": None,
                                "message": rep["memory"]["message"]})
    valid = not any(p["severity"] == "error" for p in rep["problems"])
    smoke = deep(proj) if deep is not None and valid else None
    if smoke is not None:
        rep["smoke"] = smoke
        if smoke["status"] == "failed":
            rep["problems"].append({"severity": "error", "kind": "smoke",
                                    "layer": smoke["layer"], "message": smoke["message"]})
    if as_json:
        print(json.dumps(rep, indent=1))
    else:
        print(V.format_report(rep))
    return 1 if any(p["severity"] == "error" for p in rep["problems"]) else 0


def _memory(proj: P.Project, room, device: str) -> dict | None:
    """The memory section of the report, on ``device`` (``auto``: the project's setting,
    where ``auto`` means a GPU when one answers)."""
    training = proj.training_settings()
    if device == "auto":
        device = training["device"]
    found = None
    if device == "auto":
        found = room("cuda") if room is not None else None
        device = "cuda" if found is not None else "cpu"
    if found is None and room is not None:
        found = room(device)
    return M.training_report(proj.graph, device, proj.solver_settings(), training, found)
