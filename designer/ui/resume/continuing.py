"""Continue a run folder where its last checkpoint left it.

The run trains on, in the same folder, through the same headless loop as ``train --resume``
(``RunOptions.resume``): the checkpoint's weights (converted when the engine picked in the
toolbar is not the one it was trained on), its optimizer, random state and data position;
``metrics.jsonl`` is cut back to the checkpoint's step. The run's own ``project.json`` is what
trains, not the window's project; only JSON is read here (no torch in the GUI thread).
"""
from __future__ import annotations

import json
from pathlib import Path

from designer.ui.runs.run import Run, RunError, last_checkpoint
from designer.ui.runs.worker import TrainRequest

ACTIVE = ("starting", "running", "paused", "stopping")


def default_until(meta: dict, project: dict) -> int:
    """Where a continued run stops by default: its ``max_steps``, or as many steps again."""
    step = int(meta.get("step", 0))
    max_steps = int((project.get("solver") or {}).get("max_steps", 2000))
    return max_steps if step < max_steps else step + max_steps


def continue_run(controller, folder, until: int | None = None) -> Run | None:
    """Train the run in ``folder`` on from its last checkpoint until step ``until`` (default:
    `default_until`). Returns the run, or ``None`` (and says why) when it cannot go on."""
    w = controller.w
    folder = Path(folder).resolve()
    if controller.job is not None:
        w.show_message("A run is already training; stop it before continuing another")
        return None
    meta = last_checkpoint(folder)
    project = _read(folder / "project.json") or (meta or {}).get("project")
    if meta is None or not isinstance(project, dict):
        why = (f"{folder} holds no run to continue (no last checkpoint)" if meta is None else
               f"{folder} holds no project.json to continue with")
        w.alert("Cannot continue the run", why)
        return None
    run = next((r for r in controller.runs if r.run_dir is not None
                and Path(r.run_dir).resolve() == folder), None)
    if run is not None and run.state in ACTIVE:
        w.show_message(f"Run #{run.number} is training already")
        return None
    if run is None:
        try:
            run = controller.runs.add_folder(folder)
        except RunError as e:
            w.alert("Cannot continue the run", str(e))
            return None
    step = int(meta.get("step", 0))
    until = until if until is not None else default_until(meta, project)
    if until <= step:
        w.show_message(f"Run #{run.number} is at step {step:,} already; give a later step")
        return None
    data = (meta.get("data") or {}).get("path")
    picked = controller.device_picker.choice()  # "All GPUs": data-parallel again
    request = TrainRequest(project, str(folder / "project.json"), str(folder), until,
                           picked.device, controller.engine_picker.engine(), resume=True,
                           corpus=data if data and Path(data).exists() else None,
                           processes=picked.processes)
    run.state, run.steps = "starting", until
    controller.runs.changed.emit(run)
    return controller.launch(run, request)


def open_run(controller) -> Run | None:
    """File > Open Run...: pick a run folder, say where it stands, and continue it."""
    from PySide6.QtWidgets import QFileDialog

    from designer.ui.runs.run_list import runs_root
    folder = QFileDialog.getExistingDirectory(controller.w, "Open a run to continue",
                                              str(runs_root()))
    if not folder:
        return None
    return ask_and_continue(controller, folder)


def ask_and_continue(controller, folder, ask=None) -> Run | None:
    """Ask until which step (``ask(window, folder, meta, project, default, controller)`` ->
    int or ``None``; by default the `ContinueDialog`), then continue."""
    if ask is None:
        from designer.ui.resume.dialog import ask_until as ask
    meta = last_checkpoint(folder)
    project = _read(Path(folder) / "project.json") or (meta or {}).get("project")
    if meta is None or not isinstance(project, dict):
        return continue_run(controller, folder)  # says why it cannot
    until = ask(controller.w, Path(folder), meta, project, default_until(meta, project),
                controller)
    return None if until is None else continue_run(controller, folder, until)


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
