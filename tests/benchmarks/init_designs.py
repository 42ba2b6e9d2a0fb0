"""Rewrite a classifier project made by ``rnn-designer init`` into another design, for the
quality benchmark (tests/benchmarks/gpu_init_quality.sh): which design should init write?

    python tests/benchmarks/init_designs.py PROJECT.json lstm-fcn    # rewrites it in place

Designs:
- ``lstm``: init's own (LSTM -> SequenceLast -> InnerProduct), left as it is.
- ``lstm-fcn``: LSTM-FCN (Karim et al., 2018): three Conv1D -> BatchNorm -> ReLU blocks
  averaged over each sequence's valid steps (SequencePool mean), beside init's LSTM read to
  its last valid step; the two joined (Concat) feed the classifier. Every layer that can is
  given the lengths, so padding changes nothing.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from designer.graph import project as P  # noqa: E402
from designer.graph.layout import layered_positions  # noqa: E402

FCN = ((128, 8), (256, 5), (128, 3))  # the convolution blocks: (filters, kernel)


def lstm_fcn(g) -> None:
    """Add the convolution branch beside init's LSTM and join the two before ip1."""
    prev, port = "data", "data"
    for i, (filters, kernel) in enumerate(FCN, 1):
        for kind, name, params in (("Conv1D", f"conv{i}", {"num_output": filters,
                                                            "kernel_size": kernel}),
                                   ("BatchNorm", f"bn{i}", {}), ("ReLU", f"relu{i}", {})):
            g.add_layer(kind, name, params)
            g.connect(prev, port, name, "x")
            if kind != "ReLU":
                g.connect("data", "lengths", name, "lengths")
            prev, port = name, "y"
    g.add_layer("SequencePool", "pool", {"method": "mean"})
    g.connect(prev, "y", "pool", "x")
    g.connect("data", "lengths", "pool", "lengths")
    g.disconnect(g.link_into("ip1", "x"))
    g.add_layer("Concat", "features", {"axis": 1})
    g.connect("pool", "y", "features", "a")
    g.connect("last", "y", "features", "b")
    g.connect("features", "y", "ip1", "x")
    for name, pos in layered_positions(g).items():
        g.move_layer(name, pos)


def main() -> None:
    path, design = Path(sys.argv[1]), sys.argv[2]
    project = P.load(path)
    if design == "lstm-fcn":
        lstm_fcn(project.graph)
    elif design != "lstm":
        raise SystemExit(f"unknown design {design!r}: lstm or lstm-fcn")
    errors = project.graph.errors()
    if errors:
        raise SystemExit(f"{path}: the {design} design is not valid: {errors[0]}")
    project.save(path)


if __name__ == "__main__":
    main()
