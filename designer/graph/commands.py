"""``rnn-designer validate``: load a project and print its report."""
from __future__ import annotations

import json
import sys
from typing import Callable

from . import project as P
from . import validate as V


def validate(path: str, as_json: bool = False,
             deep: Callable[[P.Project], dict] | None = None) -> int:
    """Exit 0 when valid, 1 when the graph has errors, 2 when the file cannot be used.

    ``deep``, given a valid project, runs it for real (the smoke step: see
    ``designer.training.smoke``) and returns ``{"status", "message", "layer", ...}``; a
    failure is reported like a graph error and exits 1.
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
