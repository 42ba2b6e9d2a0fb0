"""The export job: builds the net (torch) and writes the files in a worker thread."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot

from designer.ui.runs.worker import failure


@dataclass
class ExportRequest:
    """Plain data only: the format, where to write, and what to export.

    ``run_dir`` names a run folder (its trained weights); without it, ``project`` (a
    ``Project.to_dict()`` snapshot, with ``path`` for finding its data) is exported as drawn.
    """

    fmt: str
    out: str
    run_dir: str | None = None
    project: dict | None = None
    path: str | None = None
    unrolled: bool = False
    steps: int | None = None


class ExportWorker(QObject):
    """Runs one export; ``done({"files", "notes"})`` or ``failed({"message", ...})``."""

    done = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, request: ExportRequest) -> None:
        super().__init__()
        self.request = request

    @Slot()
    def run(self) -> None:
        try:
            self.done.emit(self._export())
        except Exception as e:  # noqa: BLE001 - reported in the window, never raised there
            from designer.exchange.errors import ExchangeError
            self.failed.emit(failure(e, isinstance(e, ExchangeError)))
        finally:
            self.finished.emit()

    def _export(self) -> dict:
        from pathlib import Path

        from designer.exchange.commands import export_source
        from designer.exchange.source import ModelSource, load_source
        from designer.graph import project as P
        r = self.request
        if r.run_dir:
            source = load_source(r.run_dir)
        else:
            folder = Path(r.path).parent if r.path else None
            project = P.from_dict(r.project, file=r.path, project_dir=folder)
            project.path = Path(r.path) if r.path else None
            source = ModelSource(project, Path(r.path or project.name), notes=[
                "the design as drawn: the weights are freshly initialised, not trained"])
        files, notes = export_source(source, r.fmt, r.out, r.unrolled, r.steps)
        return {"files": [str(f) for f in files], "notes": list(notes)}
