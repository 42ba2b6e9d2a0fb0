"""The Inspect view's words: a level's name, a sequence run's answer for the status line, and
the sentence for a run that cannot be inspected."""
from __future__ import annotations

import numpy as np

ENGINES = {"CUDNN": "cuDNN", "CAFFE": "unrolled", "PERSIST": "persistent",
           "AUTO": "auto", "SCAN": "parallel scan", "CHUNK": "chunkwise", "FUSED": "fused"}


def cannot_inspect(number: int, message: str) -> str:
    """One sentence: the run cannot be inspected, and why."""
    why = message.strip().rstrip(".")
    return f"Run #{number} cannot be inspected: {why[:1].lower() + why[1:]}."


def answer(seen) -> str:
    """A sequence run's answer for the status line ("" for other runs)."""
    probe = seen.probe
    if probe.kind == "classes" and seen.prediction:
        classes = probe.info.get("classes") or []
        said, p = seen.prediction[0]
        said = classes[said] if said < len(classes) else said
        where = None
        if seen.leaning is not None:
            differ = np.nonzero(seen.leaning.argmax(1) != seen.prediction[0][0])[0]
            where = int(differ[-1]) + 1 if len(differ) else 0
        settled = f", settled from step {where} on" if where else ""
        return f" \u00b7 the net says {said} ({p:.0%}){settled}"
    if probe.kind == "series" and seen.forecast is not None:
        truth = np.asarray(probe.info["truth"], np.float64)
        known = np.asarray(probe.info["known"], bool)
        if known.any():
            err = float(np.sqrt(np.mean((seen.forecast - truth)[known] ** 2)))
            return f" \u00b7 forecast RMSE {err:.4g} against the truth after the window"
    return ""


def level_name(lv, seen) -> str:
    """A level as the level picker and the captions name it: its layer, kind, size, engine."""
    count = sum(1 for other in seen.layers if other.layer == lv.layer)
    engine = ENGINES.get(lv.engine, lv.engine)
    where = f"{lv.layer} ({lv.kind} {lv.hidden}, {engine})"
    return where if count == 1 else f"{lv.layer} level {lv.level + 1} of {count} " \
                                    f"({lv.kind} {lv.hidden}, {engine})"
