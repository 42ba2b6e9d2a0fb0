"""The ``pick_data`` Fix: a file dialog for the data layer that has no file yet (an imported
model's), whose answer becomes an ordinary ``set`` Fix, one undoable step."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

FILTER = "Data files (*.ts *.csv *.txt *.npy *.wav);;All files (*)"


def picked_fix(parent, fix, project_dir: Path | None):
    """Ask for the file ``fix`` wants; the ``set`` Fix that puts it into the data layer, or
    ``None`` when the dialog is cancelled. A file under the project's folder is kept relative."""
    project_dir = Path(project_dir) if project_dir else None
    start = str(project_dir or Path.home())
    path, _ = QFileDialog.getOpenFileName(parent, f"Pick the data file of {fix.layer}", start,
                                          FILTER)
    if not path:
        return None
    value = path
    if project_dir is not None and Path(path).resolve().is_relative_to(project_dir.resolve()):
        value = os.path.relpath(Path(path).resolve(), project_dir.resolve())
    return dataclasses.replace(fix, kind="set", value=value,
                               text=f"set {fix.layer}'s {fix.param} to {Path(path).name}")
