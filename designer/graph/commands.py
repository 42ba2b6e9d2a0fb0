"""``rnn-designer validate``: load a project and print its report."""
from __future__ import annotations

import json
import sys

from . import project as P
from . import validate as V


def validate(path: str, as_json: bool = False) -> int:
    """Exit 0 when valid, 1 when the graph has errors, 2 when the file cannot be used."""
    try:
        proj = P.load(path)
    except P.ProjectError as e:
        if as_json:
            print(json.dumps({"error": str(e), "problems": [
                {"path": p, "message": m} for p, m in e.problems]}, indent=1))
        print(f"rnn-designer: {e}", file=sys.stderr)
        return 2
    rep = V.report(proj.graph)
    if as_json:
        print(json.dumps(rep, indent=1))
    else:
        print(V.format_report(rep))
    return 1 if any(p["severity"] == "error" for p in rep["problems"]) else 0
