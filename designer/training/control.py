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
