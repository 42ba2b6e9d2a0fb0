"""The Export dialog: the format, what to export (a run or the design) and where."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QComboBox, QDialog, QDialogButtonBox,
                               QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QRadioButton, QSpinBox, QVBoxLayout, QWidget)

from designer.graph import registry
from designer.graph.cell import article
from designer.ui.exchange.worker import ExportRequest

FORMATS = {"onnx": "ONNX model (.onnx)", "pytorch": "PyTorch code (model.py + weights)",
           "prototxt": "Caffe / MyCaffe prototxt (train_val + solver)"}
HELP = {
    "onnx": "Runs in ONNX Runtime with dynamic T and N; each recurrent layer takes its state "
            "as optional inputs, zeros when left out ({states}) and gives it back with T for 0 "
            "(.hT, .cT...).",
    "pytorch": "A folder with a readable model.py (plain torch.nn, no rnn-designer needed) and "
               "weights.safetensors; python model.py prints a test output.",
    "prototxt": "The design as MyCaffe writes it (engine: CUDNN or CAFFE); the weights are not "
                "part of it.",
}


def state_inputs() -> str:
    """'<layer>.h0 for a ..., .h0 .c0 for a ... or ...': the state inputs of each recurrent
    layer type, as its cell names its states (the fewest states first)."""
    kinds: dict[tuple, list[str]] = {}
    for kind in registry.recurrent_kinds():
        kinds.setdefault(registry.cell(kind).states, []).append(kind)
    said = []
    for states, same in sorted(kinds.items(), key=lambda item: len(item[0])):
        who = article(same[0])
        if len(same) > 1:
            who = ", ".join([who] + same[1:-1]) + f" or {same[-1]}"
        said.append(" ".join(f".{s}0" for s in states) + f" for {who}")
    return "<layer>" + ", ".join(said)


class ExportDialog(QDialog):
    """Asks what to export; ``request()`` gives the answer as plain data."""

    def __init__(self, parent, fmt: str, latest_run: str | None, stem: str,
                 folder: str, steps: int = 75) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        self.stem, self.folder = stem, folder
        self.format = QComboBox()
        for key, text in FORMATS.items():
            self.format.addItem(text, key)
        self.format.setCurrentIndex(list(FORMATS).index(fmt))
        self.help = QLabel(wordWrap=True, textFormat=Qt.PlainText)
        self.help.setMinimumWidth(420)

        self.latest = QRadioButton(f"The latest run: {Path(latest_run).name}" if latest_run
                                   else "The latest run (none yet: press Train first)")
        self.latest.setEnabled(latest_run is not None)
        self.latest.setToolTip(latest_run or "")
        self.latest_run = latest_run
        self.other = QRadioButton("Another run folder:")
        self.run_edit = QLineEdit(placeholderText="a folder written by Train")
        browse_run = QPushButton("Browse\u2026")
        browse_run.clicked.connect(self._browse_run)
        self.design = QRadioButton("The design as drawn (weights not trained)")
        self.sources = QButtonGroup(self)
        for b in (self.latest, self.other, self.design):
            self.sources.addButton(b)
        (self.latest if latest_run else self.design).setChecked(True)
        run_row = QHBoxLayout()
        run_row.addWidget(self.other)
        run_row.addWidget(self.run_edit, 1)
        run_row.addWidget(browse_run)

        self.unrolled = QCheckBox("Unrolled: the per-step net of the Caffe engine")
        self.steps = QSpinBox(minimum=1, maximum=100000, value=steps, enabled=False)
        self.steps.setSuffix(" steps")
        self.unrolled.toggled.connect(self.steps.setEnabled)
        unrolled_row = QHBoxLayout()
        unrolled_row.addWidget(self.unrolled)
        unrolled_row.addWidget(self.steps)
        unrolled_row.addStretch(1)
        self.unrolled_box = QWidget()
        self.unrolled_box.setLayout(unrolled_row)
        unrolled_row.setContentsMargins(0, 0, 0, 0)

        self.out = QLineEdit()
        browse_out = QPushButton("Browse\u2026")
        browse_out.clicked.connect(self._browse_out)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out, 1)
        out_row.addWidget(browse_out)

        form = QFormLayout()
        form.addRow("Format:", self.format)
        form.addRow("", self.help)
        source = QVBoxLayout()
        source.addWidget(self.latest)
        source.addLayout(run_row)
        source.addWidget(self.design)
        form.addRow("Export:", source)
        form.addRow("", self.unrolled_box)
        form.addRow("Write to:", out_row)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addLayout(form)
        box.addWidget(buttons)
        self.format.currentIndexChanged.connect(self._format_changed)
        self._format_changed()

    def fmt(self) -> str:
        return self.format.currentData()

    def _default_out(self) -> str:
        name = {"onnx": f"{self.stem}.onnx", "pytorch": f"{self.stem}-pytorch",
                "prototxt": f"{self.stem}-caffe"}[self.fmt()]
        return str(Path(self.folder) / name)

    def _format_changed(self) -> None:
        fmt = self.fmt()
        self.help.setText(HELP[fmt].format(states=state_inputs()))
        self.unrolled_box.setVisible(fmt == "onnx")
        self.out.setText(self._default_out())
        for b in (self.latest, self.other, self.design):
            b.setEnabled(fmt != "prototxt" or b is self.design)
        self.latest.setEnabled(self.latest.isEnabled() and self.latest_run is not None)
        if fmt == "prototxt":
            self.design.setChecked(True)
        self.adjustSize()

    def _browse_run(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Run folder", self.folder)
        if folder:
            self.run_edit.setText(folder)
            self.other.setChecked(True)

    def _browse_out(self) -> None:
        if self.fmt() == "onnx":
            path, _ = QFileDialog.getSaveFileName(self, "Export ONNX", self.out.text(),
                                                  "ONNX models (*.onnx)")
        else:
            path = QFileDialog.getExistingDirectory(self, "Export into folder", self.folder)
        if path:
            self.out.setText(path)

    def request(self) -> ExportRequest:
        run = self.latest_run if self.latest.isChecked() else \
            self.run_edit.text().strip() if self.other.isChecked() else None
        onnx = self.fmt() == "onnx"
        return ExportRequest(self.fmt(), self.out.text().strip(), run or None,
                             unrolled=onnx and self.unrolled.isChecked(),
                             steps=self.steps.value() if onnx and self.unrolled.isChecked()
                             else None)
