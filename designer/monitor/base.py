"""What every monitor shares: a name, a fallback reason, and a thread-safe poll/close pair."""
from __future__ import annotations

import threading

from designer.monitor.sample import Sample


class Monitor:
    """Polls one device; made by `designer.monitor.open_monitor`.

    Subclasses implement ``_poll`` and ``_close``; this class serialises them with a lock, so
    the panel's timer may poll from one thread while another thread closes.

    Attributes
    ----------
    kind : str
        ``"nvml"`` or ``"cpu"``; what the panel should plot.
    device : str
        The device name for a label, e.g. ``"NVIDIA H200"`` or ``"CPU (16 cores)"``.
    index : int | None
        The NVML index of the GPU; ``None`` for the CPU.
    reason : str | None
        A sentence for the user when something is off: why the monitor fell back to the CPU,
        or that the GPU stopped answering. ``None`` while all is well.
    """

    kind = ""

    def __init__(self, device: str, index: int | None = None, reason: str | None = None) -> None:
        self.device = device
        self.index = index
        self.reason = reason
        self._lock = threading.Lock()
        self._closed = False

    def poll(self) -> Sample:
        """Take one sample now; a device problem blanks fields and sets `reason`, never raises.

        On a healthy GPU this takes well under a millisecond, fine for a GUI timer. NVML may
        stall for seconds while a GPU is failing, so a panel that must never freeze can poll
        from a worker thread; samples are immutable and safe to hand across.

        Raises
        ------
        ValueError
            When called after `close`.
        """
        with self._lock:
            if self._closed:
                raise ValueError(f"poll() on a closed {self.kind} monitor ({self.device})")
            return self._poll()

    def close(self) -> None:
        """Release the device (balances NVML's init); calling it again does nothing."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<{type(self).__name__} {self.device!r} index={self.index} {state}>"

    def _poll(self) -> Sample:
        raise NotImplementedError

    def _close(self) -> None:
        pass
