"""The final model of a small set of labelled sequences: once validation has chosen the steps
(the step of the best validation loss), the same design is trained again, from the start, on
every training sequence (train + validation) for those steps, and that model is the one the run
offers: `evaluate`, `predict`, `export`, the window and an ensemble score it. Standard practice
for small sets, where holding a tenth, or half, of the sequences out of the model that is
scored costs more than the choice of steps gains.

The training setting ``refit`` says when: ``auto`` (where the training file holds fewer than
``AUTO_BELOW`` labelled sequences, train and validation together), ``on`` or ``off``. Labelled
sequences only (a ``SequenceClasses`` data layer with a validation split, not dealt into
folds); a run stopped short (by the user or a time limit) or ended by non-finite losses trains
none.

The run folder keeps it in ``final/``, an ordinary run folder of its own (its metrics, its
checkpoints: a final training cut short goes on from its last checkpoint when the run is
continued), and ``final.json`` beside ``best.json`` names its checkpoint; `checkpoint.load`
gives it for ``best``, and ``validated`` is the best checkpoint of the validated training.
The run's records say so: ``{"kind": "final", "stage": "start" | "progress" | "done", ...}``.
"""
from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from designer.graph import project as P
from designer.graph.atomic import atomic_write_text

AUTO_BELOW = 500
FOLDER = "final"
POINTER = "final.json"
ENDS = ("finished", "early_stop")
CHOICES = ("auto", "on", "off")


def wanted(setting: str, source) -> bool:
    """Whether a run with training setting ``refit`` on ``source`` trains a final model."""
    if setting == "off" or getattr(source, "kind", None) != "classes":
        return False
    if not source.split_size("val") or getattr(source, "fold", (1, 1))[1] >= 2:
        return False
    return setting == "on" or source.split_size("train") + source.split_size("val") < AUTO_BELOW


def chosen_step(run_dir: Path, last: int) -> int:
    """The step validation chose: the best checkpoint's (``last`` when there is none)."""
    try:
        return int(json.loads((Path(run_dir) / "best.json").read_text())["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return last


def final_fit(run, project: P.Project, opts, token, train) -> Iterator[dict]:
    """Train ``project`` again on every training sequence of ``run`` (a finished
    `Session`) for the steps its validation chose, into ``RUN/final``, with ``train`` (the
    loop's); yields the ``final`` records (and the training's own notes) and writes
    ``RUN/final.json`` when it ends. Returns how the run ends: its own reason, or the final
    training's when that was cut short."""
    from designer.training.run import checkpoint as C
    from designer.training.run.options import RunOptions
    steps = chosen_step(run.run.path, run.step)
    sequences = run.source.split_size("train") + run.source.split_size("val")
    folder = run.run.path / FOLDER
    done = _pointer(run.run.path)
    if done is not None and done.get("steps") == steps and done.get("sequences") == sequences:
        return run.reason  # trained already (a run continued after it ended)
    resume = C.has_checkpoint(folder) and _planned_steps(folder) == steps
    if folder.exists() and not resume:
        shutil.rmtree(folder)
    (run.run.path / POINTER).unlink(missing_ok=True)
    again = P.from_dict(project.to_dict(), file=project.path,
                        project_dir=run.graph.project_dir or
                        (project.path.parent if project.path else None))
    again.path = project.path
    again.graph.set_param(run.data_layer, "val_fraction", 0.0)
    again.solver = {**again.solver, "max_steps": max(steps, 1)}
    what = {"sequences": sequences, "steps": steps,
            "validated_on": {"train": run.source.split_size("train"),
                             "val": run.source.split_size("val")}}
    sub = RunOptions(out=folder, resume=resume, steps=max(steps, 1), device=str(run.device),
                     engine=opts.engine, seed=run.seed, corpus=opts.corpus, world=run.world,
                     extra_meta={**opts.extra_meta, "final": what}, probe_steps=0,
                     data_meta=opts.data_meta, refit="off")
    start = time.perf_counter()
    how = f"for {steps:,} steps, the step validation chose" if steps else \
        "(its closed-form heads solved again)"
    first = {"kind": "final", "stage": "start", "step": 0, "steps": steps,
             "sequences": sequences, "run_dir": str(folder),
             "message": f"training again on all {sequences:,} training sequences (train + "
                        f"validation) {how}"}
    run.run.log(first)
    yield first
    ended, said = None, set(run.notes)
    for rec in train(again, sub, token):
        kind = rec["kind"]
        if kind == "train":
            yield {"kind": "final", "stage": "progress", "step": rec["step"],
                   "steps": steps, "loss": rec.get("loss")}
        elif kind in ("note", "warning", "error") and rec.get("message") not in said:
            yield rec
        elif kind == "done":
            ended = rec
    if ended is None or ended.get("reason") not in ENDS:
        return ended.get("reason", "stopped") if ended else "stopped"
    ck = json.loads((folder / "last.json").read_text())
    pointer = {"checkpoint": f"{FOLDER}/{ck['checkpoint']}", "step": ck["step"],
               "steps": steps, "sequences": sequences, "val_loss": None,
               "best_val_loss": None}
    atomic_write_text(run.run.path / POINTER, json.dumps(pointer, indent=1) + "\n")
    last = {"kind": "final", "stage": "done", "step": steps, "steps": steps,
            "sequences": sequences, "run_dir": str(folder),
            "time": time.perf_counter() - start,
            "message": f"the final model, trained on all {sequences:,} training sequences, "
                       f"is the run's best: {folder}"}
    run.run.log(last)
    yield last
    return run.reason


def trained_on(meta: dict) -> dict:
    """Which training sequences a checkpoint's model saw, from its meta: ``{"sequences",
    "held", "final", "steps"}``: ``held`` the sequences validation kept out of it, ``final``
    whether it is a final model trained again on all of them; ``{}`` for other data."""
    done = meta.get("final")
    if done:
        return {"sequences": done["sequences"], "held": 0, "final": True,
                "steps": done["steps"]}
    split = (meta.get("data") or {}).get("split") or {}
    if split.get("train") is None:
        return {}
    return {"sequences": split["train"], "held": split.get("val") or 0, "final": False,
            "steps": meta.get("step")}


def words(seen: dict) -> str:
    """What ``trained_on`` found, in words: ``trained again on all 36 training sequences
    (train + validation) for 1,700 steps, the step validation chose``, ``trained on 33 of
    the 36 training sequences (3 held out to validate)``; "" when unknown."""
    if not seen:
        return ""
    if seen["final"]:
        how = f" for {seen['steps']:,} steps, the step validation chose" if seen["steps"] \
            else ""
        return (f"trained again on all {seen['sequences']:,} training sequences (train + "
                f"validation){how}")
    if not seen["held"]:
        return f"trained on all {seen['sequences']:,} training sequences"
    total = seen["sequences"] + seen["held"]
    return (f"trained on {seen['sequences']:,} of the {total:,} training sequences "
            f"({seen['held']:,} held out to validate)")


def short(seen: dict) -> str:
    """``all 36 (final model)`` or ``33 of 36``: ``trained_on`` in a table's cell."""
    if not seen:
        return ""
    if seen["final"]:
        return f"all {seen['sequences']:,} (final model)"
    if not seen["held"]:
        return f"all {seen['sequences']:,}"
    return f"{seen['sequences']:,} of {seen['sequences'] + seen['held']:,}"


def folder_trained_on(run_dir: Path, meta: dict | None) -> dict:
    """`trained_on` of a run folder's model: its final model's, when it has one (read from
    ``final.json``), else what ``meta`` (its checkpoint's) says."""
    done = _pointer(Path(run_dir))
    if done and done.get("sequences"):
        return {"sequences": done["sequences"], "held": 0, "final": True,
                "steps": done.get("steps")}
    return trained_on(meta or {})


def _pointer(run_dir: Path) -> dict | None:
    try:
        return json.loads((run_dir / POINTER).read_text())
    except (OSError, ValueError):
        return None


def _planned_steps(folder: Path) -> int | None:
    try:
        return int(json.loads((folder / "project.json").read_text())["solver"]["max_steps"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
