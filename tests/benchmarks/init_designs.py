"""Rewrite a classifier project made by ``rnn-designer init`` into another design, for the
quality benchmark (tests/benchmarks/gpu_init_quality.sh): init's design against the one it
wrote before.

    python tests/benchmarks/init_designs.py PROJECT.json plain-lstm    # rewrites it in place

Designs:
- ``init``: init's own (an LSTM-FCN, designer/training/new_from_data/designs.py), as it is.
- ``plain-lstm``: what init wrote before it: LSTM 100 (128 from 2,000 training sequences) ->
  SequenceLast -> InnerProduct, sequences longer than 60 steps read in frames that make them
  about 40 steps long, 80 epochs but at least 500 steps (at most 3,000, within the same CPU
  budget), the same solver.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from designer.graph import project as P  # noqa: E402
from designer.graph import registry  # noqa: E402
from designer.graph.layout import layered_positions  # noqa: E402
from designer.graph.model import Graph  # noqa: E402
from designer.training.data.classes import ClassesSource  # noqa: E402
from designer.training.new_from_data import designs  # noqa: E402
from designer.training.new_from_data.init import BUDGET_MS  # noqa: E402


def plain_lstm(project, folder: Path) -> None:
    old = project.graph
    params = {p.name: p.default for p in registry.get("SequenceClasses").params}
    params.update(old.layer("data").params)
    file = Path(params["file"])
    file = file if file.is_absolute() else folder / file
    source = ClassesSource(file, {**params, "file": str(file), "frame": 1}, 0)
    longest = int(source.lengths.max())
    params["frame"] = math.ceil(longest / 40) if longest > 60 else 1
    source = ClassesSource(file, {**params, "file": str(file)}, 0)
    n_train, batch = source.split_size("train"), params["batch_size"]
    hidden = 100 if n_train < 2000 else 128
    t = int(source.lengths.mean())
    ms = designs.lstm_ms(t, batch, hidden, len(source.features) * params["frame"])
    steps = min(max(80 * max(1, n_train // batch), 500), int(BUDGET_MS / ms), 3000)
    steps = max(100, steps // 10 * 10)
    g = Graph()
    g.add_layer("SequenceClasses", "data", {k: v for k, v in old.layer("data").params.items()}
                | ({"frame": params["frame"]} if params["frame"] > 1 else {}))
    if params["frame"] == 1:
        g.layer("data").params.pop("frame", None)
    for kind, name, p in (("LSTM", "lstm1", {"num_output": hidden}),
                          ("SequenceLast", "last", {}),
                          ("InnerProduct", "ip1", {"num_output": source.num_classes}),
                          ("SoftmaxWithLoss", "loss", {}), ("Accuracy", "accuracy", {})):
        g.add_layer(kind, name, p)
    for a, b in (("data.data", "lstm1.x"), ("lstm1.y", "last.x"), ("data.lengths", "last.lengths"),
                 ("last.y", "ip1.x"), ("ip1.y", "loss.logits"), ("ip1.y", "accuracy.logits"),
                 ("data.label", "loss.label"), ("data.label", "accuracy.label")):
        g.connect(*a.split("."), *b.split("."))
    for name, pos in layered_positions(g).items():
        g.move_layer(name, pos)
    project.graph = g
    project.solver["max_steps"] = steps
    project.training.update(eval_interval=max(10, steps // 12 // 10 * 10),
                            checkpoint_interval=max(100, steps // 2))


def main() -> None:
    path, design = Path(sys.argv[1]), sys.argv[2]
    project = P.load(path)
    if design == "plain-lstm":
        plain_lstm(project, path.resolve().parent)
    elif design != "init":
        raise SystemExit(f"unknown design {design!r}: init or plain-lstm")
    errors = project.graph.errors()
    if errors:
        raise SystemExit(f"{path}: the {design} design is not valid: {errors[0]}")
    project.save(path)


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
