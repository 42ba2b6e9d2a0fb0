"""The runs under the charts: one row per run with its colour, engines, device, progress,
median tokens/s and best validation loss; tick a run to show or hide its curves."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QGuiApplication, QIcon, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTreeWidget, QTreeWidgetItem

from designer.training.run.final import short
from designer.ui.runs.run import Run, device_text, engines_text
from designer.ui.runs.run_list import RunList

COLUMNS = ("Run", "Engines", "Device", "Step", "Tokens/s", "Best val loss", "State",
           "Trained on")
STATES = {"starting": "starting", "running": "training", "paused": "paused",
          "final": "final model",
          "stopping": "stopping", "finished": "finished", "stopped": "stopped",
          "early_stop": "stopped early", "nan": "stopped: NaN", "time_limit": "time limit",
          "failed": "failed", "loaded": "from folder", "ended": "ended"}


def swatch(color: str) -> QIcon:
    pix = QPixmap(12, 12)
    pix.fill(QColor(color))
    return QIcon(pix)


class RunsTable(QTreeWidget):
    """The runs of the session (and added folders), newest last."""

    def __init__(self, runs: RunList, parent=None) -> None:
        super().__init__(parent)
        self.runs = runs
        self.rows: dict[int, QTreeWidgetItem] = {}
        self.setColumnCount(len(COLUMNS))
        self.setHeaderLabels(COLUMNS)
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setContextMenuPolicy(Qt.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        head = self.header()
        head.setStretchLastSection(False)
        head.setSectionResizeMode(0, QHeaderView.Stretch)
        for i in range(1, len(COLUMNS)):
            head.setSectionResizeMode(i, QHeaderView.ResizeToContents)
        for i in (3, 4, 5):
            self.headerItem().setTextAlignment(i, Qt.AlignRight | Qt.AlignVCenter)
        self.headerItem().setToolTip(4, "Median tokens (time steps x batch) per second, the "
                                        "first record (warm-up) left out")
        self.headerItem().setToolTip(7, "Labelled sequences: the training sequences the run's "
                                        "model saw (a final model is trained again on all of "
                                        "them once validation has chosen its steps)")
        self.itemChanged.connect(self._ticked)
        runs.added.connect(self._added)
        runs.removed.connect(self._removed)
        runs.changed.connect(self.update_run)
        for run in runs:
            self._added(run)

    def run_at(self, item: QTreeWidgetItem) -> Run | None:
        for run in self.runs:
            if self.rows.get(id(run)) is item:
                return run
        return None

    def _added(self, run: Run) -> None:
        item = QTreeWidgetItem()
        item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
        item.setCheckState(0, Qt.Checked if run.visible else Qt.Unchecked)
        item.setIcon(0, swatch(self.runs.color(run)))
        for i in (3, 4, 5):
            item.setTextAlignment(i, Qt.AlignRight | Qt.AlignVCenter)
        self.rows[id(run)] = item
        self.addTopLevelItem(item)
        self.update_run(run)
        self.scrollToItem(item)

    def _removed(self, run: Run) -> None:
        item = self.rows.pop(id(run), None)
        if item is not None:
            self.takeTopLevelItem(self.indexOfTopLevelItem(item))

    def update_run(self, run: Run) -> None:
        item = self.rows.get(id(run))
        if item is None:
            return
        self.blockSignals(True)
        rate = run.tokens_per_s()
        best = run.best_val_loss
        values = (f"#{run.number} {run.name}", engines_text(run.engines) if run.engines else
                  "\u2013", device_text(run.device, run.device_name),
                  f"{run.step:,}" + (f" / {run.steps:,}" if run.steps and run.state not in
                                     ("loaded",) else ""),
                  f"{rate:,.0f}" if rate is not None else "\u2013",
                  f"{best:.4f}" if best is not None and math.isfinite(best) else "\u2013",
                  STATES.get(run.state, run.state)
                  + (" \u00b7 \u26a0 diverged" if any(e[0] == "diverging" for e in run.events)
                     else ""),
                  short(run.trained_on) or "\u2013")
        for i, text in enumerate(values):
            if item.text(i) != text:
                item.setText(i, text)
        item.setToolTip(0, f"{run.label}\n{run.run_dir or ''}")
        item.setCheckState(0, Qt.Checked if run.visible else Qt.Unchecked)
        self.blockSignals(False)

    def _ticked(self, item: QTreeWidgetItem, column: int) -> None:
        run = self.run_at(item)
        if run is not None and column == 0:
            self.runs.set_visible(run, item.checkState(0) == Qt.Checked)

    def _menu(self, pos) -> None:
        item = self.itemAt(pos)
        run = self.run_at(item) if item is not None else None
        if run is None:
            return
        menu = QMenu(self)
        if run.run_dir is not None:
            folder = str(run.run_dir)
            menu.addAction("Open Run Folder",
                           lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(folder)))
            menu.addAction("Copy Folder Path",
                           lambda: QGuiApplication.clipboard().setText(folder))
        if run.state not in ("starting", "running", "paused", "stopping"):
            if run.run_dir is not None and (run.run_dir / "last.json").is_file():
                menu.addSeparator()
                menu.addAction("Continue Training\u2026",
                               lambda: self.runs.continue_requested.emit(run))
            menu.addSeparator()
            menu.addAction("Remove from Charts", lambda: self.runs.remove(run))
        menu.exec(self.viewport().mapToGlobal(pos))
