"""Benchmark: validate a generated 2,000-layer graph; re-infer after one change at its top.

python tests/benchmarks/bench_graph.py [--layers 2000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

from designer.graph import project as P
from designer.graph import validate as V

CYCLE = [("LSTM", {"num_output": 64, "engine": "CAFFE"}), ("Dropout", {"dropout_ratio": 0.1}),
         ("InnerProduct", {"num_output": 64, "axis": 2}), ("TanH", {})]


def generated(n: int) -> dict:
    layers = [{"name": "data", "type": "CharText",
               "params": {"corpus": "not-needed.txt", "seq_len": 75, "batch_size": 25},
               "pos": [0, 0]},
              {"name": "embed", "type": "Embed", "params": {"num_output": 64, "input_dim": 65},
               "pos": [0, 110]}]
    links = [{"from": "data.data", "to": "embed.x"}]
    prev = "embed"
    for i in range(n - 2):
        kind, params = CYCLE[i % len(CYCLE)]
        name = f"l{i}"
        layers.append({"name": name, "type": kind, "params": params, "pos": [0, 220 + 110 * i]})
        links.append({"from": f"{prev}.y", "to": f"{name}.x"})
        prev = name
    return {"schema_version": 1, "name": "big", "description": "",
            "graph": {"layers": layers, "links": links}, "solver": {}, "training": {}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    text = P.dumps(generated(a.layers)).encode()
    loads, reports, changes = [], [], []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        proj = P.loads(text)
        t1 = time.perf_counter()
        rep = V.report(proj.graph)
        t2 = time.perf_counter()
        proj.graph.set_param("embed", "num_output", 32 + len(changes) % 2)
        t3 = time.perf_counter()
        loads.append(t1 - t0), reports.append(t2 - t1), changes.append(t3 - t2)
        assert len(rep["layers"]) == a.layers and not any(
            p["severity"] == "error" for p in rep["problems"])
    med = statistics.median
    print(json.dumps({"layers": a.layers, "load_and_infer_ms": round(med(loads) * 1e3, 1),
                      "report_ms": round(med(reports) * 1e3, 1),
                      "reinfer_after_top_change_ms": round(med(changes) * 1e3, 1)}))


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
