"""Digests of the ONNX files every example project exports (and the Char-RNN with its LSTM
layers retyped to each recurrent cell, fused and unrolled): the nodes (type, inputs, outputs,
attributes) and the initializers (name, type, dims, bytes), so that a change that should not
change an export can be checked against the digests taken before it.

    python tests/exchange/onnx_digests.py > tests/exchange/data/onnx_digests.json
"""
from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "projects"
CELLS = ("GRU", "RNN", "LSTMSimple", "MinGRU", "MinLSTM", "mLSTM", "sLSTM")
UNROLLED_STEPS = 3


def digest(path: Path) -> dict:
    """The nodes' and the initializers' digests of the ONNX file ``path``."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(path))
    nodes = hashlib.sha256()
    for node in model.graph.node:
        attrs = sorted((a.name, onnx.helper.get_attribute_value(a)) for a in node.attribute)
        nodes.update(repr((node.op_type, list(node.input), list(node.output),
                           [(k, v if not hasattr(v, "SerializeToString") else
                             hashlib.sha256(v.SerializeToString()).hexdigest())
                            for k, v in attrs])).encode())
    inits = hashlib.sha256()
    for t in sorted(model.graph.initializer, key=lambda t: t.name):
        a = numpy_helper.to_array(t)
        inits.update(repr((t.name, str(a.dtype), a.shape)).encode() + a.tobytes())
    return {"nodes": nodes.hexdigest()[:16], "node_count": len(model.graph.node),
            "initializers": inits.hexdigest()[:16],
            "initializer_count": len(model.graph.initializer)}


def variants():
    """(name, project, unrolled) for every export digested."""
    from designer.graph import project as P
    from designer.graph.retype import replace_layer
    for file in sorted(PROJECTS.glob("*.json")):
        yield file.stem, P.load(file), False
    base = PROJECTS / "char-rnn-shakespeare.json"
    for cell in CELLS:
        project = P.load(base)
        g = project.graph
        with g.bulk():
            for layer in [lay.name for lay in g.layers() if lay.type == "LSTM"]:
                replace_layer(g, layer, cell)
                if cell == "LSTMSimple":  # one level, no dropout between levels
                    continue
        for unrolled in (False, True):
            yield f"char-rnn-{cell}", project, unrolled


def digests() -> dict:
    from designer.exchange.commands import export_source
    from designer.exchange.source import ModelSource
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, project, unrolled in variants():
            key = f"{name}{' unrolled' if unrolled else ''}"
            file = Path(tmp) / f"{key.replace(' ', '-')}.onnx"
            try:
                export_source(ModelSource(project, project.path), "onnx", file, unrolled,
                              UNROLLED_STEPS if unrolled else None)
            except Exception as e:  # noqa: BLE001 - a variant that cannot export says why
                out[key] = {"error": str(e).splitlines()[0]}
                continue
            out[key] = digest(file)
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    try:
        from designer.cells import load
        load()
    except ImportError:  # before the cells had a folder each
        pass
    json.dump(digests(), sys.stdout, indent=1, sort_keys=True)
    print()
