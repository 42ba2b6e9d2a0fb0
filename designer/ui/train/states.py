"""The states of a training run (idle, starting, running, paused, stopping) and what the window
shows of them: which of Train, Pause, Resume and Stop can be pressed (and why Train cannot),
the banner above the canvas, and the status bar's progress bar and status line.

The `TrainingController` keeps the state; these functions only show it.
"""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QProgressBar

from designer.training.run.record_format import SEP
from designer.ui.runs.run import device_text, engines_text

IDLE, STARTING, RUNNING, PAUSED, STOPPING = "idle", "starting", "running", "paused", "stopping"


def status_widgets() -> tuple[QProgressBar, QLabel]:
    """The status bar's progress bar and status line, hidden until a run starts."""
    progress = QProgressBar()
    progress.setMaximumWidth(160)
    progress.setTextVisible(False)
    progress.hide()
    status = QLabel()
    status.hide()
    return progress, status


def show_in_status_bar(progress: QProgressBar, status: QLabel, state: str) -> None:
    """Show the progress bar and status line while a run is busy, and say what it does."""
    busy = state != IDLE
    progress.setVisible(busy)
    status.setVisible(busy)
    where = status.text().split(SEP)[0]
    if state == STARTING:
        progress.setRange(0, 0)  # busy until the run reports its steps
        status.setText("Starting: loading torch and the data\u2026")
    elif state == PAUSED:  # the paused record then says the step it paused at
        status.setText(where + SEP + "pausing after this step\u2026")
    elif state == STOPPING:
        status.setText(where + SEP + "stopping after this step and saving a checkpoint\u2026")


def refusal(window) -> str:
    """Why the window's net cannot train now (its first error, the smoke step's failure, or
    memory it cannot have on the chosen device), or ''."""
    errors = window.doc.graph.errors()
    if errors:
        return f"The net cannot train yet: {errors[0]}"
    memory = getattr(window, "memory", None)
    if memory is not None and memory.message:
        return sentence(memory.message)
    smoke = getattr(window, "smoke", None)
    if smoke is not None and smoke.result is not None and smoke.result["status"] == "failed":
        return f"The net cannot train yet: {smoke.result['message']}"
    return ""


def update_actions(window, state: str, closing: bool) -> None:
    """Enable and show the window's Train, Pause, Resume and Stop actions for ``state``; the
    smoke step holds while a run is busy."""
    a, s = window.act, state
    why = refusal(window) if s == IDLE else ""
    a.train.setEnabled(s == IDLE and not closing and not why)
    a.train.setToolTip(why or "Train a snapshot of the net in the background (F5)")
    smoke = getattr(window, "smoke", None)
    if smoke is not None:
        smoke.hold(s != IDLE)
    a.pause.setVisible(s != PAUSED)
    a.pause.setEnabled(s in (STARTING, RUNNING))
    a.resume.setVisible(s == PAUSED)
    a.resume.setEnabled(s == PAUSED)
    a.stop.setEnabled(s in (STARTING, RUNNING, PAUSED))


def banner_text(run, state: str, started_at: str) -> str | None:
    """The line above the canvas while ``run`` trains (its snapshot is not the net drawn), or
    ``None`` when no run trains."""
    if state == IDLE or run is None:
        return None
    where = ""
    if run.device:
        where = f" on {device_text(run.device, run.device_name)} ({engines_text(run.engines)})"
    verb = {PAUSED: "Paused", STOPPING: "Stopping"}.get(state, "Training")
    return (f"{verb} run #{run.number}{where}: a snapshot of this net taken at "
            f"{started_at}. Edits you make now apply to the next run, not this one.")


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and a full stop at the end."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
