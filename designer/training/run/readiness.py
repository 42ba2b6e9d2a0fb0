"""What a run checks and fixes before it trains, and what it records of its data: a design
that cannot train is refused in one sentence, the classes the data holds are pinned, and the
data's facts are written into each checkpoint's meta."""
from __future__ import annotations

from pathlib import Path

from designer.graph.validate import LOSS_TYPES

from designer.training.run.errors import TrainingError


def check_trainable(graph) -> None:
    """Refuse a design that cannot train (bad input, like a broken file) in one sentence."""
    errors = graph.errors()
    if errors:
        raise TrainingError(f"the net is not valid: {errors[0]}", 2)
    if not graph.sources():
        raise TrainingError("the net has no data layer to train on", 2)
    if not any(layer.type in LOSS_TYPES for layer in graph.layers()):
        raise TrainingError(f"the net has no loss layer ({', '.join(LOSS_TYPES)}), so there "
                            "is nothing to minimise", 2)


def pin_classes(graph, source) -> None:
    """Fix K to the classes the data holds (a large CSV's are counted only now)."""
    if source.kind != "classes":
        return
    bound = graph.dims.get("K")
    if bound is not None and bound != source.num_classes:
        raise TrainingError(f"{source.path} gives {source.num_classes} classes, but the net "
                            f"was sized for K = {bound}", 2)
    if bound is None:
        graph.pin_dims({"K": source.num_classes})


def data_meta(source) -> dict:
    """What a run's checkpoints record of its data: kind, file, classes, vocabulary, the
    source's own facts."""
    meta = {"kind": source.kind, "path": str(Path(source.path).resolve()),
            "num_classes": source.num_classes,
            "vocab": source.vocab}
    if source.kind == "audio":
        meta["codec"] = source.codec
    if hasattr(source, "run_meta"):
        meta.update(source.run_meta())
    return meta
