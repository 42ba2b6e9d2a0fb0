"""``rnn-designer search`` as a child process whose JSON lines come back as plain dicts.

The window starts ``python -m designer search PROJECT --json --trials N ...`` with `QProcess`,
in a session of its own, so that Stop can do what Ctrl-C does in a terminal: a SIGINT to the
search and the trainers it started (they finish or give up the trial at hand and the study
stays resumable); a second Stop kills them. A search that cannot start, or ends with an
error, is told in one sentence: its own last line on stderr (``rnn-designer: ...``), never a
traceback.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from collections import deque
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

PREFIX = "rnn-designer: "
NOTE = PREFIX + "note: "  # a remark on stderr (shown in the log), never why a search failed


def search_command(project: str | Path, trials: int, device: str | None = None,
                   gpus: str | None = None, per_gpu: int | None = None,
                   workers: int | None = None, steps: int | None = None,
                   objectives: list | None = None, launcher: list | None = None,
                   refit_seeds: int | None = None,
                   refit_top: int | None = None) -> list[str]:
    """The command line of a search (``launcher``: what runs ``designer``, by default this
    Python with ``-m designer``)."""
    cmd = list(launcher or [sys.executable, "-m", "designer"])
    cmd += ["search", str(project), "--json", "--trials", str(int(trials))]
    for flag, value in (("--device", device), ("--gpus", gpus), ("--per-gpu", per_gpu),
                        ("--workers", workers), ("--steps", steps),
                        ("--refit-seeds", refit_seeds), ("--refit-top", refit_top)):
        if value not in (None, ""):
            cmd += [flag, str(value)]
    if objectives:
        cmd += ["--objective", ",".join(objectives)]
    return cmd


def error_sentence(stderr: str, code: int) -> str:
    """One sentence for a search that ended with ``code``: its own ``rnn-designer:`` line,
    else the last line of a traceback (the exception), else the exit code."""
    lines = [line.strip() for line in stderr.splitlines()
             if line.strip() and not line.startswith(NOTE)]
    said = [line for line in lines if line.startswith(PREFIX)]
    if said:
        return said[-1][len(PREFIX):]
    if lines and any(line.startswith("Traceback") for line in lines):
        return f"the search stopped with an error: {lines[-1]}"
    if lines:
        return lines[-1]
    return f"the search ended with exit code {code}"


class SearchProcess(QObject):
    """One search at a time.

    Signals
    -------
    event(dict)
        A JSON line (``kind`` study, trial, best...).
    note(str)
        A line on stdout that is not JSON (shown in the log as it is).
    failed(str)
        The search could not start, or ended with an error: one sentence.
    ended(int)
        The process has ended (its exit code; -1 when it never started), after every line.
    """

    event = Signal(object)
    note = Signal(str)
    failed = Signal(str)
    ended = Signal(int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.proc: QProcess | None = None
        self.stops = 0
        self._out = b""
        self._err: deque[str] = deque(maxlen=60)
        self._err_part = b""

    def running(self) -> bool:
        return self.proc is not None and self.proc.state() != QProcess.NotRunning

    def start(self, command: list[str], cwd: str | Path | None = None) -> None:
        """Start ``command`` (refused while a search runs)."""
        if self.running():
            raise RuntimeError("a search is already running")
        self.stops, self._out, self._err_part = 0, b"", b""
        self._err.clear()
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        here = str(Path(__file__).resolve().parents[3])  # the designer package's folder
        env.insert("PYTHONPATH", os.pathsep.join(filter(None, [here, env.value("PYTHONPATH")])))
        env.insert("PYTHONUNBUFFERED", "1")
        proc.setProcessEnvironment(env)
        if cwd is not None:
            proc.setWorkingDirectory(str(cwd))
        if hasattr(os, "killpg"):
            flags = QProcess.UnixProcessFlag
            proc.setUnixProcessParameters(flags.CreateNewSession | flags.ResetSignalHandlers)
        proc.readyReadStandardOutput.connect(self._read_out)
        proc.readyReadStandardError.connect(self._read_err)
        proc.finished.connect(self._finished)
        proc.errorOccurred.connect(self._error)
        self.proc = proc
        proc.start(command[0], command[1:])

    def stop(self) -> bool:
        """Ask the search to stop (SIGINT, as Ctrl-C); a second call kills it. False when
        nothing runs."""
        if not self.running():
            return False
        self.stops += 1
        pid = int(self.proc.processId())
        if self.stops == 1 and pid > 0 and hasattr(os, "killpg"):
            try:
                os.killpg(pid, signal.SIGINT)
                return True
            except OSError:
                pass
        if pid > 0 and hasattr(os, "killpg"):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.kill()
        return True

    def wait(self, ms: int = 30000) -> bool:
        return self.proc is None or self.proc.waitForFinished(ms)

    # ----------------------------------------------------------------------------- lines --
    def _read_out(self) -> None:
        self._out += bytes(self.proc.readAllStandardOutput())
        *lines, self._out = self._out.split(b"\n")
        for raw in lines:
            self._line(raw)

    def _line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            event = json.loads(text)
        except ValueError:
            self.note.emit(text)
            return
        if isinstance(event, dict) and "kind" in event:
            self.event.emit(event)
        else:
            self.note.emit(text)

    def _read_err(self) -> None:
        self._err_part += bytes(self.proc.readAllStandardError())
        *lines, self._err_part = self._err_part.split(b"\n")
        for raw in lines:
            text = raw.decode("utf-8", "replace")
            self._err.append(text)
            if text.startswith(NOTE):
                self.note.emit(text[len(PREFIX):])

    def _finished(self, code: int, status) -> None:
        self._read_out()
        self._read_err()
        if self._out.strip():
            self._line(self._out)
        self._out = b""
        if self._err_part:
            self._err.append(self._err_part.decode("utf-8", "replace"))
        crashed = status == QProcess.CrashExit
        if not self.stops and (code != 0 or crashed):
            self.failed.emit(error_sentence("\n".join(self._err), code))
        self.ended.emit(-1 if crashed and self.stops else code)

    def _error(self, error) -> None:
        if error == QProcess.FailedToStart:
            program = self.proc.program()
            self.failed.emit(f"the search could not be started ({program}: "
                             f"{self.proc.errorString()})")
            self.ended.emit(-1)
