"""The parity chart under the unrolled view: for the current weights, how far the cuDNN and the
unrolled engine are apart at every step.

"The current weights" are those of the latest run of this net that has a checkpoint (the run
picked by ``weights_for``), else the net's freshly initialised ones. The layer reads a real
input (the held-out snippet of the data, through the layers below it); both engines run it
forward and backward, and the chart shows per step the largest difference in the output h_t
and in the gradient reaching the input x_t, relative to their largest values, on a log scale
with the 1e-5 tolerance the ``parity`` command uses.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from designer.ui.inspect.charts import ParityChart
from designer.ui.inspect.worker import InspectService


class ParityPanel(QWidget):
    """Measures and draws one layer's per-step parity.

    Parameters
    ----------
    doc
        The document (its project is measured when no run has weights for the layer).
    layer
        The recurrent layer's name (follows renames through `set_layer`).
    weights_for
        ``weights_for(layer) -> (run_dir, label) or None``: the run whose weights to use.
    """

    def __init__(self, doc, layer: str, weights_for=None, parent=None) -> None:
        super().__init__(parent)
        self.doc, self.layer, self.weights_for = doc, layer, weights_for
        self.service: InspectService | None = None
        self.result: dict | None = None
        self.chart = ParityChart()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.PlainText)
        self.again = QPushButton("Measure again")
        self.again.clicked.connect(self.measure)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.again)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 2, 8, 4)
        lay.addLayout(row)
        lay.addWidget(self.chart, 1)
        self.setMinimumHeight(220)

    def set_layer(self, name: str) -> None:
        self.layer = name

    def measure(self) -> None:
        """Run both engines on the current weights (in the inspection thread)."""
        if self.service is None:
            self.service = InspectService(self)
            self.service.finished.connect(self._done)
            self.service.failed.connect(self._failed)
        job = {"what": "parity", "layer": self.layer}
        source = self.weights_for(self.layer) if self.weights_for else None
        if source is not None:
            job.update(run_dir=str(source[0]), run_label=source[1])
        else:
            project = self.doc.project
            job.update(project=project.to_dict(),
                       path=str(project.path) if project.path else None)
        self.again.setEnabled(False)
        self.status.setText(f"Running {self.layer} on both engines\u2026")
        self.service.submit(job)

    def _done(self, result: dict) -> None:
        self.again.setEnabled(True)
        self.result = result
        report = result["report"]
        rel = self.chart.set_report(report, result["layer"], result["where"])
        tol = report["tolerance"]
        worst = max(rel.values())
        verdict = "within" if worst <= tol else "ABOVE"
        a, b = report["pair"]
        self.status.setText(
            f"{a} vs {b}, {result['where']}: largest relative difference {rel['output']:.1e} "
            f"in the outputs and {rel['grad_input']:.1e} in the gradients, {verdict} the "
            f"tolerance of {tol:g}.")

    def _failed(self, info: dict) -> None:
        self.again.setEnabled(True)
        self.status.setText("The parity could not be measured: " + info["message"])

    def shutdown(self) -> None:
        if self.service is not None:
            self.service.shutdown()

    def refresh_theme(self) -> None:
        self.chart.refresh_theme()
