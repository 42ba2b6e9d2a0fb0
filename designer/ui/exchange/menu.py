"""File > Import (ONNX or prototxt) and File > Export (ONNX, PyTorch code, prototxt, picture)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from designer.ui.look import theme

from designer.ui.exchange.dialog import ExportDialog
from designer.ui.exchange.picture import save_picture
from designer.ui.exchange.worker import ExportRequest, ExportWorker

IMPORT_FILTER = ("Models (*.onnx *.prototxt *.pt *.txt);;ONNX models (*.onnx);;"
                 "Caffe / MyCaffe nets (*.prototxt *.pt *.txt);;All files (*)")
PICTURE_FILTER = "PNG image (*.png);;SVG drawing (*.svg)"


def add_to_file_menu(w, menu, actions) -> None:
    """Add Import and the Export menu to ``menu``, and ``w.exchange`` to the window."""
    w.exchange = ExchangeActions(w)
    act = QAction("&Import\u2026", w)
    act.setStatusTip("Read an ONNX model (as a project and a run folder with its weights) or "
                     "a Caffe or MyCaffe train_val.prototxt (and the solver beside it)")
    act.triggered.connect(lambda checked=False: w.exchange.import_dialog())
    menu.addAction(act)
    actions.import_model = act
    sub = menu.addMenu("&Export")
    for key, text, tip in (
            ("onnx", "&ONNX Model\u2026", "A trained run as ONNX, for ONNX Runtime"),
            ("pytorch", "&PyTorch Code\u2026", "A standalone model.py and its weights"),
            ("prototxt", "Caffe / MyCaffe &Prototxt\u2026", "train_val.prototxt and "
                                                            "solver.prototxt")):
        a = sub.addAction(text)
        a.setStatusTip(tip)
        a.triggered.connect(lambda checked=False, k=key: w.exchange.export(k))
        setattr(actions, f"export_{key}", a)
    sub.addSeparator()
    pic = sub.addAction("Picture (PNG or SVG)\u2026")
    pic.setStatusTip("The canvas, or the unrolled view in front, as a PNG or SVG picture")
    pic.triggered.connect(lambda checked=False: w.exchange.picture_dialog())
    actions.export_picture = pic
    actions.export_menu = sub


class ExchangeActions:
    """What the import and export entries do in one window."""

    def __init__(self, window) -> None:
        self.w = window
        self.job = None
        self.last: dict | None = None  # the last export's result, for the tests and the log

    # ----------------------------------------------------------------------- import --
    def import_dialog(self) -> None:
        if not self.w.files.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self.w, "Import a model",
                                              self.w.files._last_folder(), IMPORT_FILTER)
        if not path:
            return
        if Path(path).suffix.lower() == ".onnx":
            self.import_onnx(path)
        else:
            self.import_path(path, confirmed=True)

    def import_onnx(self, path, out=None, data=None, ask_data: bool = True) -> dict | None:
        """Import an ONNX model as a saved project and its run folder (see :mod:`onnx_in`)."""
        from designer.ui.exchange.onnx_in import import_onnx_model
        return import_onnx_model(self.w, path, out, data, ask_data)

    def import_path(self, path, solver=None, data=None, confirmed: bool = False) -> bool:
        """Import ``path`` as a new, unsaved project; on failure say why and keep the
        document as it was."""
        from designer.exchange.caffe.importer import import_prototxt
        from designer.exchange.errors import ExchangeError
        if not confirmed and not self.w.files.confirm_discard():
            return False
        path = Path(path)
        if solver is None and (path.parent / "solver.prototxt").is_file():
            solver = path.parent / "solver.prototxt"
        try:
            result = import_prototxt(path, solver, data, project_dir=path.parent)
        except ExchangeError as e:
            self.w.alert("Cannot import the net", str(e))
            return False
        self.w.doc.replace(result.project)
        self.w.view.fit()
        what = f"{path.name}" + (f" and {Path(solver).name}" if solver else "")
        self.w.statusBar().showMessage(f"Imported {what}: save it to keep it", 10000)
        if result.notes:
            self.inform(f"Imported {what}", "The net was imported. What differs from the "
                        "file:\n\n" + "\n\n".join(f"\u2022 {n}" for n in result.notes))
        return True

    def inform(self, title: str, text: str) -> None:
        """A non-blocking note (tests replace this)."""
        box = QMessageBox(QMessageBox.Information, title, text, QMessageBox.Ok, self.w)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.setModal(False)
        box.show()

    # ----------------------------------------------------------------------- export --
    def latest_run(self) -> str | None:
        run = self.w.training.runs.latest()
        if run is None or run.run_dir is None:
            return None
        folder = Path(run.run_dir)
        return str(folder) if (folder / "last.json").is_file() else None

    def _stem(self) -> str:
        return self.w.files._file_stem()

    def export(self, fmt: str) -> None:
        folder = str(self.w.doc.path.parent) if self.w.doc.path else self.w.files._last_folder()
        steps = self.w.doc.graph.dims.get("T")
        dialog = ExportDialog(self.w, fmt, self.latest_run(), self._stem(), folder,
                              steps if isinstance(steps, int) else 75)
        if dialog.exec() == ExportDialog.Accepted:
            self.start(dialog.request())

    def start(self, request: ExportRequest):
        """Export in a worker thread; returns the job (``None`` if one is running)."""
        from designer.ui.runs.worker import Job
        if self.job is not None:
            self.w.statusBar().showMessage("An export is already running", 5000)
            return None
        if not request.out:
            self.w.alert("Cannot export", "Say where to write the export")
            return None
        if request.run_dir is None:
            request.project = self.w.doc.project.to_dict()
            request.path = str(self.w.doc.path) if self.w.doc.path else None
        worker = ExportWorker(request)
        worker.done.connect(self._done)
        worker.failed.connect(self._failed)
        self.job = Job(worker, "export", self.w)
        self.job.done.connect(self._ended)
        self.w.statusBar().showMessage(f"Exporting to {request.out}\u2026")
        QApplication.setOverrideCursor(Qt.BusyCursor)
        self.job.start()
        return self.job

    def _done(self, result: dict) -> None:
        self.last = result
        files = "\n".join(result["files"])
        self.w.statusBar().showMessage(f"Exported {Path(result['files'][0]).name}", 8000)
        notes = "".join(f"\n\n\u2022 {n}" for n in result["notes"])
        self.inform("Exported", f"Wrote:\n{files}{notes}")

    def _failed(self, info: dict) -> None:
        self.last = {"error": info["message"]}
        self.w.alert("Cannot export", info["message"], info.get("details", ""))

    def _ended(self) -> None:
        QApplication.restoreOverrideCursor()
        self.job = None

    # ---------------------------------------------------------------------- picture --
    def current_scene(self) -> tuple[object, str]:
        """The scene in front (the canvas or an unrolled view) and a name for its file."""
        tab = self.w.tabs.currentWidget()
        for name, view in self.w.unrolled.items():
            if view is tab:
                return view.scene, f"{self._stem()}-unrolled-{name}"
        return self.w.scene, self._stem()

    def picture_dialog(self) -> None:
        scene, stem = self.current_scene()
        folder = str(self.w.doc.path.parent) if self.w.doc.path else self.w.files._last_folder()
        path, chosen = QFileDialog.getSaveFileName(self.w, "Export picture",
                                                   str(Path(folder) / f"{stem}.png"),
                                                   PICTURE_FILTER)
        if path:
            if not Path(path).suffix:
                path += ".svg" if "SVG" in chosen else ".png"
            self.save_picture(path)

    def save_picture(self, path) -> bool:
        scene, _ = self.current_scene()
        try:
            save_picture(scene, path, theme.colors.canvas)
        except OSError as e:
            self.w.alert("Cannot export the picture", f"{path}: cannot be written ({e})")
            return False
        self.w.statusBar().showMessage(f"Saved the picture {path}", 6000)
        return True
