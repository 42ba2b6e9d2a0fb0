"""File > New from Data...: the menu entry, and opening the project the dialog made."""
from __future__ import annotations

from PySide6.QtGui import QAction


def add_to_file_menu(w, menu, actions, before: QAction) -> None:
    """Put New from Data... into ``menu`` before ``before`` (as ``actions.new_from_data``)."""
    act = QAction("New from &Data\u2026", w)
    act.setShortcut("Ctrl+Shift+N")
    act.setStatusTip("Make a project from a CSV table, a .npy array or a .ts file of "
                     "labelled sequences: a net sized from what the file holds")
    act.triggered.connect(lambda checked=False: new_from_data(w))
    menu.insertAction(before, act)
    actions.new_from_data = act


def new_from_data(w, path=None):
    """Show the dialog (after the unsaved-changes question); the project it makes opens in
    ``w``. Returns the dialog (``None`` when the user kept the current project)."""
    from designer.ui.sequences.new_from_data import NewFromDataDialog
    if not w.files.confirm_discard():
        return None
    dialog = NewFromDataDialog(w.files._last_folder(), w)
    dialog.accepted.connect(lambda: _open_created(w, dialog))
    dialog.finished.connect(dialog.deleteLater)
    w.new_from_data_dialog = dialog
    if path is not None:
        dialog.set_data_path(path)
    dialog.open()
    return dialog


def _open_created(w, dialog) -> None:
    created = dialog.created
    if not created or not w.files.open_path(created["path"], confirmed=True):
        return
    log = w.training.output
    log.note(f"New project from data: {created['path']}")
    for line in created["lines"]:
        log.note(f"   {line}")
    w.statusBar().showMessage(f"Made {created['path']} from the data: "
                              + "; ".join(created["lines"][:2]), 15000)
