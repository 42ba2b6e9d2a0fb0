"""New, Open, Save, Save As and recent files, with a prompt before unsaved changes are lost.

Opening a file that cannot be used shows its one-sentence ``ProjectError`` in a dialog and leaves
the current document as it was; saving goes through ``Project.save`` (atomic).
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox

from designer.graph.project import SUFFIX, ProjectError

MAX_RECENT = 8
FILTER = "rnn-designer projects (*.json);;All files (*)"


class FileHandler:
    """The file commands of one window."""

    def __init__(self, window) -> None:
        self.w = window

    @property
    def doc(self):
        return self.w.doc

    # ------------------------------------------------------------------ commands --
    def confirm_discard(self) -> bool:
        """True when the document may be replaced (saved, discarded or never changed)."""
        if not self.doc.is_modified():
            return True
        answer = self.w.ask_save_changes()
        if answer == QMessageBox.Save:
            return self.save()
        return answer == QMessageBox.Discard

    def new(self) -> None:
        if self.confirm_discard():
            self.doc.new()
            self.w.view.fit()
            self.w.statusBar().showMessage("New project", 4000)

    def open(self) -> None:
        if not self.confirm_discard():
            return
        start = str(self.doc.path.parent) if self.doc.path else self._last_folder()
        path, _ = QFileDialog.getOpenFileName(self.w, "Open project", start, FILTER)
        if path:
            self.open_path(path, confirmed=True)

    def open_path(self, path: str | os.PathLike, confirmed: bool = False) -> bool:
        """Open ``path``; on failure say why in a dialog and keep the current document."""
        if not confirmed and not self.confirm_discard():
            return False
        try:
            self.doc.open(path)
        except ProjectError as e:
            self.w.alert("Cannot open the project", str(e), "\n".join(e.lines()))
            self.w.statusBar().showMessage(str(e), 10000)
            return False
        self.add_recent(path)
        self.w.view.fit()
        self.w.statusBar().showMessage(f"Opened {path}", 4000)
        return True

    def save(self) -> bool:
        if self.doc.path is None:
            return self.save_as()
        return self._save_to(self.doc.path)

    def save_as(self) -> bool:
        start = str(self.doc.path) if self.doc.path else \
            str(Path(self._last_folder()) / (self._file_stem() + SUFFIX))
        path, _ = QFileDialog.getSaveFileName(self.w, "Save project as", start, FILTER)
        if not path:
            return False
        if not path.endswith(SUFFIX):
            path += SUFFIX
        return self._save_to(path)

    def _save_to(self, path) -> bool:
        try:
            target = self.doc.save(path)
        except OSError as e:
            reason = e.strerror or str(e)
            self.w.alert("Cannot save the project", f"{path}: cannot be written ({reason})")
            return False
        self.add_recent(target)
        self.w.statusBar().showMessage(f"Saved {target}", 4000)
        return True

    def _file_stem(self) -> str:
        name = self.doc.project.name.strip().lower()
        stem = "".join(ch if ch.isalnum() else "-" for ch in name).strip("-")
        return stem or "untitled"

    def _last_folder(self) -> str:
        recent = self.recent()
        return str(Path(recent[0]).parent) if recent else str(Path.cwd())

    # -------------------------------------------------------------------- recent --
    def recent(self) -> list[str]:
        value = self.w.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path) -> None:
        path = str(Path(path).resolve())
        items = [p for p in self.recent() if p != path]
        self.w.settings.setValue("recent_files", [path] + items[:MAX_RECENT - 1])

    def clear_recent(self) -> None:
        self.w.settings.setValue("recent_files", [])

    def fill_recent_menu(self, menu) -> None:
        menu.clear()
        items = self.recent()
        for i, path in enumerate(items):
            act = menu.addAction(f"&{i + 1}  {Path(path).name}")
            act.setToolTip(path)
            act.setStatusTip(path)
            act.triggered.connect(lambda checked=False, p=path: self.open_path(p))
        if not items:
            menu.addAction("(no recent projects)").setEnabled(False)
        menu.addSeparator()
        menu.addAction("Clear the list", self.clear_recent).setEnabled(bool(items))
