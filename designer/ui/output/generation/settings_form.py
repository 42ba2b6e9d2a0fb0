"""The Generate panel's settings: what to write, how, and where.

Each kind of data shows its own rows (a prime and a length in characters for text, seconds for
audio, a number of digits for MNIST) and keeps its own temperature and top-k: they start from
the data layer's defaults (``LayerSpec.generation``: 0.8 for text, 1.0 for audio) and then
remember what the user last chose for that kind.
"""
from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QLineEdit, QSpinBox,
                               QWidget)

from designer.graph import registry
from designer.ui.runs.run import DATA_KINDS

MAX_STREAMS = 8


def kind_defaults() -> dict:
    """``{"text": GenerationDefaults, "audio": ...}`` from the data layers' specs."""
    out = {}
    for type_id, kind in DATA_KINDS.items():
        spec = registry.get(type_id)
        if spec.generation is not None:
            out[kind] = spec.generation
    return out


def spin(low: int, high: int, value: int, suffix: str) -> QSpinBox:
    s = QSpinBox()
    s.setRange(low, high)
    s.setValue(value)
    s.setSuffix(suffix)
    s.setGroupSeparatorShown(True)
    return s


class SettingsForm(QWidget):
    """The rows of the settings, shown per kind of data (``set_kind``)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.kind = "text"
        self.defaults = kind_defaults()
        self.temperatures = {k: d.temperature for k, d in self.defaults.items()}
        self.top_ks = {k: d.top_k for k, d in self.defaults.items()}
        self.prime = QLineEdit()
        self.prime.setPlaceholderText("a newline")
        self.prime.setToolTip("The text the model continues (characters it saw in training)")
        self.length = spin(1, 1_000_000, 500, " characters")
        self.seconds = QDoubleSpinBox()
        self.seconds.setRange(0.05, 600)
        self.seconds.setValue(2.0)
        self.seconds.setSuffix(" s")
        self.count = spin(1, 64, 16, " digits")
        self.streams = spin(1, MAX_STREAMS, 1, "")
        self.streams.setToolTip("Samples written at once, as one batch, shown side by side")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 5.0)
        self.temperature.setSingleStep(0.05)
        self.temperature.setValue(self.temperatures.get("text", 1.0))
        self.temperature.valueChanged.connect(self._remember)
        self.top_k = spin(0, 100_000, 0, "")
        self.top_k.setSpecialValueText("off")
        self.top_k.setToolTip("Sample only among the k most likely symbols (off: all)")
        self.top_k.valueChanged.connect(self._remember)
        self.seed = spin(-1, 2**31 - 1, -1, "")
        self.seed.setSpecialValueText("random")
        self.seed.setToolTip("The same seed gives the same result on the same device")
        self.device = QComboBox()
        self.device.addItem("As trained", "auto")
        self.device.addItem("CPU", "cpu")
        self.device.setToolTip("As trained: the device the run trained on (its GPU), when "
                               "this machine has it, else the CPU. CPU: leave the GPU to a "
                               "run that is training")
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        for label, w in (("Prime", self.prime), ("Length", self.length),
                         ("Length", self.seconds), ("Show", self.count),
                         ("Streams", self.streams), ("Temperature", self.temperature),
                         ("Top-k", self.top_k), ("Seed", self.seed), ("Device", self.device)):
            self.form.addRow(label, w)

    def set_kind(self, kind: str) -> None:
        """Show the rows of ``kind`` (text, audio, mnist, series or classes) and its
        temperature and top-k."""
        self.kind = kind
        writes = (self.streams, self.temperature, self.top_k, self.seed, self.device)
        rows = {"text": (self.prime, self.length, *writes),
                "audio": (self.seconds, *writes),
                "mnist": (self.count, self.seed),
                "series": (self.device,), "classes": (self.device,)}[kind]
        for w in (self.prime, self.length, self.seconds, self.count, *writes):
            self.form.setRowVisible(w, w in rows)
        d = self.defaults.get(kind)
        if d is None:
            return
        for box, value in ((self.temperature, self.temperatures[kind]),
                           (self.top_k, self.top_ks[kind])):
            box.blockSignals(True)
            box.setValue(value)
            box.blockSignals(False)
        self.temperature.setToolTip(
            f"Below 1: safer, more repetitive; above 1: wilder; 0: always the most likely "
            f"symbol. For {kind}, {d.temperature:g} by default: {d.why}")

    def _remember(self, *_) -> None:
        if self.kind in self.temperatures:
            self.temperatures[self.kind] = self.temperature.value()
            self.top_ks[self.kind] = self.top_k.value()

    def set_trained_on(self, device: str | None) -> None:
        """Name the device the picked run trained on in the first choice."""
        self.device.setItemText(0, f"As trained ({device})" if device else "As trained")

    def job(self) -> dict:
        """The settings every text or audio job carries (plain data for the worker)."""
        seed = None if self.seed.value() < 0 else self.seed.value()
        return {"seed": seed, "temperature": self.temperature.value(),
                "top_k": self.top_k.value(), "streams": self.streams.value(),
                "device": self.device.currentData()}
