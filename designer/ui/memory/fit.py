"""The training memory of the window's net on the device and engine picked in the toolbar.

`MemoryFit` re-estimates (``designer.graph.memory``, pure arithmetic over the inferred shapes,
well under a millisecond for the examples) once a burst of edits has settled, and reads the
device's memory through ``designer.monitor.capacity`` (NVML or psutil), keeping it per device.
It never imports torch.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

from designer.graph.memory import MemoryEstimate, Setup, estimate, refusal, size_text

EVENTS = ("layer_added", "layer_removed", "link_added", "link_removed", "param_changed",
          "shapes_changed", "dims_changed")
ROOM_TTL_S = 30.0  # read a device's memory again after this long (the free part moves)


class MemoryFit(QObject):
    """The estimate for the current net and device, and the sentence when it cannot fit.

    Signals
    -------
    changed()
        The estimate, the device or its memory changed.
    """

    changed = Signal()

    def __init__(self, doc, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc, self.graph = doc, None
        self.device = "cpu"          # cpu or cuda:N
        self.engine: str | None = None
        self.estimate: MemoryEstimate | None = None
        self.room = None             # designer.monitor.capacity.DeviceMemory
        self._rooms: dict[str, tuple] = {}
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.refresh)
        doc.graph_replaced.connect(self._bind)
        doc.settings_changed.connect(self.schedule)
        self._bind(doc.graph)

    # ----------------------------------------------------------------------- inputs --
    def set_target(self, device: str, engine: str | None) -> None:
        """Train on ``device`` (``auto``, ``cpu``, ``cuda:N``) with ``engine`` next."""
        if device == "auto":
            device = self._auto()
        if (device, engine) != (self.device, self.engine):
            self.device, self.engine = device, engine
            self.refresh()

    def schedule(self, *args) -> None:
        self._timer.start()

    # ---------------------------------------------------------------------- results --
    @property
    def message(self) -> str | None:
        """One sentence when the net cannot fit the device, else ``None``."""
        if self.estimate is None or self.room is None:
            return None
        return refusal(self.estimate, self.room.total, self.where)

    @property
    def where(self) -> str:
        if self.room is None:
            return "the GPU" if self.device.startswith("cuda") else "the CPU"
        return self.room.name + (f" (limited by {self.room.limit})" if self.room.limit else "")

    def short_text(self) -> str:
        """``~230 MiB to train on the CPU`` for the status bar ('' when unknown)."""
        if self.estimate is None:
            return ""
        where = "the GPU" if self.device.startswith("cuda") else "the CPU"
        if self.message:
            return (f"\u26a0 needs ~{size_text(self.estimate.needed)}, {where} has "
                    f"{size_text(self.room.total)}")
        return f"~{size_text(self.estimate.total)} to train on {where}"

    def refresh(self) -> None:
        """Estimate again now (edits call this through a short timer)."""
        self._timer.stop()
        g = self.doc.graph
        solver, training = self.doc.effective("solver"), self.doc.effective("training")
        gpu = self.device.startswith("cuda")
        setup = Setup("cuda" if gpu else "cpu", self.engine,
                      training["precision"] if gpu else "fp32", solver,
                      bool(training["cuda_graphs"]))
        self.estimate = estimate(g, setup) if len(g) else None
        self.room = self._room(self.device)
        self.changed.emit()

    # -------------------------------------------------------------------- internals --
    def _bind(self, graph) -> None:
        if self.graph is not None:
            for name in EVENTS:
                getattr(self.graph, name).disconnect(self.schedule)
        self.graph = graph
        for name in EVENTS:
            getattr(graph, name).connect(self.schedule)
        self.schedule()

    def _auto(self) -> str:
        """Auto trains on the first GPU when NVML lists one, else on the CPU."""
        room = self._room("cuda:0")
        return "cuda:0" if room is not None else "cpu"

    def _room(self, device: str):
        hit = self._rooms.get(device)
        now = time.monotonic()
        if hit is not None and now - hit[0] < ROOM_TTL_S:
            return hit[1]
        from designer.monitor.capacity import capacity
        room = capacity(device)
        self._rooms[device] = (now, room)
        return room
