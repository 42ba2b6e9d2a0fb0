"""File > Import for an ONNX model: the project and its run folder are written beside each other
(the project where the user says, the run as ``NAME-run``), then the project opens in the editor
and the run in the run list, ready to generate, inspect, export or fine-tune."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog

DATA_FILTER = ("Data files (*.ts *.csv *.txt *.wav);;All files (*)")


def ask_project_file(w, model: Path) -> Path | None:
    """Where to write the imported project (its run folder goes beside it)."""
    path, _ = QFileDialog.getSaveFileName(w, "Save the imported project as",
                                          str(model.with_suffix(".json")),
                                          "rnn-designer projects (*.json)")
    if not path:
        return None
    return Path(path if path.endswith(".json") else path + ".json")


def ask_data_file(w, model: Path) -> str | None:
    """The data the imported net reads; ``None`` keeps the import's default (and its note)."""
    path, _ = QFileDialog.getOpenFileName(
        w, f"Data for {model.name} (labelled sequences, a corpus or a .wav file)",
        str(model.parent), DATA_FILTER)
    return path or None


def import_onnx_model(w, path, out=None, data=None, ask_data: bool = True) -> dict | None:
    """Import the ONNX model ``path`` as the project ``out`` (asked for when ``None``) and its
    weights as a run folder beside it, then open both; a model of another tool first asks for
    its data file. On failure say why in one sentence and write nothing; returns
    ``{"project", "run", "notes"}`` or ``None``."""
    from designer.exchange.errors import ExchangeError
    from designer.exchange.onnx_import.save import carries_design, free_run_folder, save_import
    from designer.graph.dimbind import missing_file
    path = Path(path)
    out = Path(out) if out else ask_project_file(w, path)
    if out is None:
        return None
    if ask_data and data is None and not carries_design(path):
        data = ask_data_file(w, path)
    if data is not None and Path(data).is_file():  # as the project file will find it
        data = os.path.relpath(Path(data).resolve(), out.resolve().parent)
    run = free_run_folder(out)
    QApplication.setOverrideCursor(Qt.BusyCursor)
    try:
        from designer.exchange.onnx_import import import_onnx
        result = import_onnx(path, data, out.resolve().parent)
        g = result.project.graph
        if any(missing_file(g.layer(name)) for name in g.sources()):
            result.notes.append("no run folder is written: a run needs the data this model "
                                "was trained on; import it again with its data file")
            run = None
        save_import(result, out, run, str(path), replace=True)  # the file dialog asked
    except ImportError:
        w.alert("Cannot import the model", "Importing ONNX needs the onnx package: pip "
                "install 'rnn-designer[onnx]'")
        return None
    except ExchangeError as e:
        w.alert("Cannot import the model", str(e))
        return None
    finally:
        QApplication.restoreOverrideCursor()
    if not w.files.open_path(out, confirmed=True):
        return None
    from designer.ui.runs.run import RunError
    try:
        if run is not None:
            w.training.runs.add_folder(run)
    except RunError as e:  # the run is on disk; say why it is not listed
        w.statusBar().showMessage(f"{run}: the run is not listed ({e})", 10000)
    w.statusBar().showMessage(f"Imported {path.name} as {out.name}" + (
        f" with its weights in {run.name}" if run is not None else ""), 10000)
    if result.notes:
        w.exchange.inform(f"Imported {path.name}", "The model was imported. What to know:"
                          "\n\n" + "\n\n".join(f"\u2022 {n}" for n in result.notes))
    return {"project": out, "run": run, "notes": list(result.notes)}
