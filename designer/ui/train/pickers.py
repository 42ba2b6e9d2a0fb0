"""The training toolbar's pickers: which device a run trains on, and which engine its
recurrent layers use.

The GPUs come from NVML (``designer.monitor.list_devices``), not torch, so the window opens
without importing torch; whether ``cuda:N`` really works is checked by the training loop,
whose error then appears in the window.
"""
from __future__ import annotations

import html
import math
import os
from dataclasses import dataclass
from typing import Mapping

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (QComboBox, QStyle, QStyleOptionComboBox, QStylePainter,
                               QToolTip)

from designer.graph import registry


@dataclass(frozen=True)
class DeviceChoice:
    """One entry of the device picker.

    Attributes
    ----------
    device
        What the trainer gets: ``auto``, ``cpu`` or ``cuda:N`` (CUDA's numbering).
    label
        What the picker shows.
    monitor
        The NVML index (or UUID) of the GPU to watch; ``None`` for the default choice, ``"cpu"``
        for the CPU; a tuple of them for every GPU.
    processes
        How many training processes: 1, or one per GPU for "All GPUs" (data-parallel).
    """

    device: str
    label: str
    monitor: int | str | tuple | None = None
    processes: int = 1


def device_choices(devices: list, environ: Mapping[str, str] | None = None) -> list[DeviceChoice]:
    """Auto, CPU, each GPU CUDA will see, numbered as CUDA numbers them, and, when there are
    several, "All GPUs (N)": one training process per GPU, data-parallel.

    ``devices`` are NVML's `DeviceInfo` records. With ``CUDA_VISIBLE_DEVICES`` set, only the
    GPUs it names are listed, in its order (``"2,0"`` makes GPU 2 ``cuda:0``); CUDA ignores the
    entries after the first it cannot match, and so does this.
    """
    environ = os.environ if environ is None else environ
    out = [DeviceChoice("auto", "Auto (GPU if present)", None), DeviceChoice("cpu", "CPU", "cpu")]
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        picked = list(devices)
    else:
        picked = []
        for entry in (e.strip() for e in visible.split(",")):
            match = next((d for d in devices if (entry.isdigit() and d.index == int(entry)) or
                          (entry.startswith(("GPU-", "MIG-")) and d.uuid and
                           d.uuid.startswith(entry))), None)
            if match is None:
                break
            picked.append(match)
    for i, d in enumerate(picked):
        size = f" ({d.memory_total_mib / 1024:.0f} GiB)" if d.memory_total_mib else ""
        out.append(DeviceChoice(f"cuda:{i}", f"GPU {i}: {d.name}{size}", d.index))
    if len(picked) > 1:
        out.append(DeviceChoice("cuda", f"All GPUs ({len(picked)})",
                                tuple(d.index for d in picked), len(picked)))
    return out


class CompactPicker(QComboBox):
    """A combo box as wide as ``longest`` reads, whatever it lists (a GPU's name can be long,
    and the pickers share the toolbar with everything else): its list opens as wide as its
    longest entry, and a longer entry picked is shown elided."""

    def __init__(self, longest: str, parent=None) -> None:
        super().__init__(parent)
        metrics = self.fontMetrics()  # Qt counts the length in widths of an "X"
        self.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(math.ceil(metrics.horizontalAdvance(longest) /
                                                metrics.horizontalAdvance("X")))

    def tip(self) -> str:
        """The tool-tip: the entry picked in full first, when it is shown elided."""
        field = self.style().subControlRect(QStyle.CC_ComboBox, self._option(),
                                            QStyle.SC_ComboBoxEditField, self)
        text = self.currentText()
        if self.fontMetrics().horizontalAdvance(text) <= field.width() - 2:
            return self.toolTip()
        return f"<b>{html.escape(text)}</b><br>{html.escape(self.toolTip())}"

    def event(self, e) -> bool:
        if e.type() == QEvent.ToolTip:
            QToolTip.showText(e.globalPos(), self.tip(), self)
            return True
        return super().event(e)

    def _option(self) -> QStyleOptionComboBox:
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        return opt

    def paintEvent(self, event) -> None:
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.CC_ComboBox, opt)
        field = self.style().subControlRect(QStyle.CC_ComboBox, opt,
                                            QStyle.SC_ComboBoxEditField, self)
        opt.currentText = self.fontMetrics().elidedText(opt.currentText, Qt.ElideRight,
                                                        field.width() - 2)
        painter.drawControl(QStyle.CE_ComboBoxLabel, opt)


class DevicePicker(CompactPicker):
    """Auto, CPU and the GPUs; follows the project's ``device`` setting until the user picks.

    Signals
    -------
    picked(DeviceChoice)
        The choice changed (the device panel watches the new device).
    """

    picked = Signal(object)

    def __init__(self, choices: list[DeviceChoice] | None = None, parent=None) -> None:
        super().__init__("Auto (GPU if present)", parent)
        self.setToolTip("The device the next run trains on. The GPUs are those the NVIDIA "
                        "driver lists; Auto trains on the first GPU when there is one. All "
                        "GPUs trains data-parallel, one process per GPU, each on the data "
                        "layer's batch_size (so a step sees N times as much).")
        self.set_choices(choices if choices is not None else device_choices([]))
        self.currentIndexChanged.connect(lambda i: self.picked.emit(self.choice()))

    def set_choices(self, choices: list[DeviceChoice]) -> None:
        self.blockSignals(True)
        self.clear()
        for c in choices:
            self.addItem(c.label, c)
        self.blockSignals(False)

    def choice(self) -> DeviceChoice:
        return self.currentData()

    def device(self) -> str:
        return self.choice().device

    def processes(self) -> int:
        """1, or the number of GPUs for "All GPUs"."""
        return self.choice().processes

    def select(self, device: str) -> bool:
        """Pick ``auto``, ``cpu``, ``cuda`` (the first GPU), ``cuda:N`` or ``all`` (every GPU,
        data-parallel); False if absent."""
        if device == "all":
            for i in range(self.count()):
                if self.itemData(i).processes > 1:
                    self.setCurrentIndex(i)
                    return True
            return False
        if device == "cuda":
            device = "cuda:0"
        for i in range(self.count()):
            if self.itemData(i).device == device and self.itemData(i).processes == 1:
                self.setCurrentIndex(i)
                return True
        return False

    def follow_project(self, setting: str) -> None:
        """Show the project's ``device`` setting (a GPU it asks for but NVML does not list
        falls back to Auto, and the trainer says so if CUDA is truly missing)."""
        if not self.select(setting):
            self.select("auto")


def _listed(kinds: list[str]) -> str:
    return "/".join(kinds)


def _own_engines(kinds: list[str], engine: str) -> str:
    """Where the layers of ``kinds`` that have their own fused engine run when every recurrent
    layer is asked for ``engine``: 'A and B on the parallel scan, the C on its chunkwise form'
    (the cells' own words, ``CellSpec.fused_words``)."""
    by_words: dict[str, list[str]] = {}
    for kind in kinds:
        cell = registry.cell(kind)
        if cell.runs_on(engine) == cell.fused != engine:
            by_words.setdefault(cell.fused_words or "its own engine", []).append(kind)
    return ", ".join((" and ".join(group) if len(group) > 1 else f"the {group[0]}") + f" on {w}"
                     for w, group in by_words.items())


def engine_choices() -> tuple:
    """``(value, label, tool-tip)`` per choice of the engine picker, the tool-tips naming the
    registered cells: which run on the engine picked, and which on their own."""
    kinds = list(registry.engine_kinds())  # a cell without an engine parameter stays unrolled
    torch_nn = [k for k in kinds if "CUDNN" in registry.cell(k).engines]
    persist = [k for k in torch_nn if "PERSIST" in registry.cell(k).engines]
    on_cudnn = " and ".join(k for k in torch_nn if k not in persist)
    on_cudnn = f"{on_cudnn} layers, and any layer" if on_cudnn else "any layer"
    return (
        (None, "Engines as drawn", "Each recurrent layer runs on the engine set in its "
         "properties"),
        ("auto", "All AUTO (fastest, timed)", f"Every {_listed(torch_nn)} runs on the engine "
         "that trains it fastest: on a GPU the first step times cuDNN and the persistent "
         "kernel on the layer's shapes and keeps the faster (remembered for this GPU and these "
         "shapes; the log says which and why); on the CPU, cuDNN's fused kernel. "
         f"{_own_engines(kinds, 'AUTO')}"),
        ("cudnn", "All cuDNN (fused)", f"Every {_listed(torch_nn)} runs on the fused cuDNN "
         f"kernel (torch.nn's); {_own_engines(kinds, 'CUDNN')}"),
        ("caffe", "All unrolled (Caffe)", f"Every {_listed(kinds)} runs as Caffe's unrolled "
         "net: one small layer per time step"),
        ("persist", f"All persistent ({_listed(persist)}, experimental)", f"Every "
         f"{_listed(persist)} runs its recurrence in one persistent kernel per level, the "
         "recurrent weights held on the chip, one barrier a step (CUDA GPUs, bf16 on tensor "
         f"cores; faster than cuDNN up to batch 64); {on_cudnn} the kernel cannot run, run on "
         f"cuDNN and the log says why ({_own_engines(kinds, 'PERSIST')})"),
    )


class EnginePicker(CompactPicker):
    """Run every recurrent layer on one engine, or leave each as drawn (the default).

    Switching here changes only the next run, not the project: train once on each engine and
    the two curves land side by side in the charts.
    """

    def __init__(self, parent=None) -> None:
        super().__init__("All unrolled (Caffe)", parent)
        for value, label, tip in engine_choices():
            self.addItem(label, value)
            self.setItemData(self.count() - 1, tip, 3)  # Qt.ToolTipRole
        self.setToolTip("The engine of the recurrent layers in the next run; pick each layer's "
                        "own in the Properties panel")

    def engine(self) -> str | None:
        return self.currentData()

    def select(self, engine: str | None) -> None:
        for i in range(self.count()):
            if self.itemData(i) == engine:
                self.setCurrentIndex(i)
