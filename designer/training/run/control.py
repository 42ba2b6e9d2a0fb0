"""Stop and pause tokens the training loop checks every step (thread-safe, Qt-free), and the
commands that drive one from another process."""
from __future__ import annotations

import threading
from typing import TextIO


class StopToken:
    """Asks a running loop to pause, resume or stop; the loop checks it between steps.

    Examples
    --------
    >>> token = StopToken()
    >>> token.pause(); token.paused
    True
    >>> token.stop(); token.stopped, token.paused
    (True, False)
    """

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()

    def stop(self) -> None:
        """Stop at the next step boundary (a paused loop wakes up to stop)."""
        self._stop.set()
        self._running.set()

    def pause(self) -> None:
        if not self._stop.is_set():
            self._running.clear()

    def resume(self) -> None:
        self._running.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def wait_while_paused(self, timeout: float | None = None) -> bool:
        """Block while paused; True once running (or stopped), False on timeout."""
        return self._running.wait(timeout)


COMMANDS = ("pause", "resume", "stop")


def read_commands(token: StopToken, stream: TextIO) -> threading.Thread:
    """Drive ``token`` from ``pause``, ``resume`` and ``stop`` lines read from ``stream`` (a
    parent's pipe) in a daemon thread; the end of the stream stops the run, since whoever
    drove it has gone. Other lines are ignored."""
    def read() -> None:
        try:
            for line in stream:
                command = line.strip().lower()
                if command in COMMANDS:
                    getattr(token, command)()
        except (OSError, ValueError):
            pass
        token.stop()

    thread = threading.Thread(target=read, name="commands", daemon=True)
    thread.start()
    return thread


class WeightsTap:
    """Asks a running loop for a copy of its weights at a given step (thread-safe, Qt-free).

    The window's Inspect view arms it with :meth:`request`; the loop calls :meth:`due` after
    every step (a single attribute read while nothing is asked) and, when it returns True,
    yields a ``weights`` record (plain numpy copies) and the tap is disarmed until the next
    request. Nothing is copied while nobody asks.
    """

    def __init__(self) -> None:
        self._at: int | None = None
        self._lock = threading.Lock()

    def request(self, at_step: int = 0) -> None:
        """Deliver the weights after step ``at_step`` (or the first step after it)."""
        with self._lock:
            self._at = int(at_step)

    def cancel(self) -> None:
        with self._lock:
            self._at = None

    @property
    def armed(self) -> bool:
        return self._at is not None

    def due(self, step: int) -> bool:
        """True (once) when the weights are asked for and ``step`` has been reached."""
        if self._at is None or step < self._at:
            return False
        with self._lock:
            if self._at is None or step < self._at:
                return False
            self._at = None
            return True
