"""A training run in child processes (data-parallel, "All GPUs"), wrapped like the worker
thread of a one-process run, so the controller treats the two alike.

The window starts ``python -m designer train SNAPSHOT --nproc N --jsonl --stdin-commands`` in a
process group of its own: the launcher and its N workers. Rank 0 prints each record as a JSON
line, which comes back here as the same plain dict the loop yields in a one-process run; pause,
resume and stop go to rank 0 as lines on its stdin (`ProcessControl`, which looks like the
loop's `StopToken`). A failure is the launcher's one sentence on stderr. Nothing here imports
torch: the window stays light, and a crash of a worker cannot take it down.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from designer.graph.atomic import atomic_write_text

from designer.ui.runs.worker import TrainRequest, failure

KILL_AFTER_S = 60  # a run asked to stop that has not ended by then is killed


class ProcessControl:
    """Pause, resume and stop for a run in child processes (thread-safe; the methods of the
    loop's `StopToken`). A command given before the processes start is sent when they do."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._pending: list[str] = []
        self.stopped = self.paused = False

    def attach(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._proc = proc
            pending, self._pending = self._pending, []
        for command in pending:
            self._send(command)

    def pause(self) -> None:
        if not self.stopped:
            self.paused = True
            self._send("pause")

    def resume(self) -> None:
        self.paused = False
        self._send("resume")

    def stop(self) -> None:
        self.stopped, self.paused = True, False
        self._send("stop")

    def kill(self) -> None:
        """The last resort: end the whole process group at once."""
        with self._lock:
            proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        except OSError:
            pass

    def _send(self, command: str) -> None:
        with self._lock:
            if self._proc is None:
                self._pending.append(command)
                return
            try:
                self._proc.stdin.write(command + "\n")
                self._proc.stdin.flush()
            except (OSError, ValueError):
                pass  # the processes have ended: nothing to drive


class ProcessTrainWorker(QObject):
    """Runs one data-parallel run in child processes; lives in its own thread (a `Job`).

    Signals, as `designer.ui.worker.TrainWorker`: ``record(dict)``, ``download(int, int)``,
    ``failed(dict)``, ``finished()``.
    """

    record = Signal(object)
    download = Signal(int, int)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, request: TrainRequest, control: ProcessControl) -> None:
        super().__init__()
        self.request = request
        self.control = control

    @Slot()
    def run(self) -> None:
        try:
            self._train()
        except Exception as e:  # noqa: BLE001 - everything is reported, nothing escapes
            self.failed.emit(failure(e, False))
        finally:
            self.finished.emit()

    def command(self) -> list[str]:
        """The command line of the launcher (the snapshot is written in the run folder)."""
        r = self.request
        out = Path(r.out)
        command = [sys.executable, "-m", "designer", "train", str(out / "project.json"),
                   "--resume" if r.resume else "--out", str(out), "--nproc", str(r.processes),
                   "--jsonl", "--stdin-commands", "--quiet", "--device", r.device or "auto"]
        if r.path:
            command += ["--project-dir", str(Path(r.path).parent)]
        for flag, value in (("--steps", r.steps), ("--engine", r.engine),
                            ("--corpus", r.corpus)):
            if value is not None:
                command += [flag, str(value)]
        return command

    def _train(self) -> None:
        out = Path(self.request.out)
        if not self.request.resume:  # a continued run trains on the snapshot it has
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(out / "project.json", json.dumps(self.request.project, indent=1))
        env = dict(os.environ)
        here = str(Path(__file__).resolve().parents[3])  # the designer package's folder
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        proc = subprocess.Popen(self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, bufsize=1, env=env,
                                start_new_session=hasattr(os, "setsid"))
        self.control.attach(proc)
        errors: deque[str] = deque(maxlen=40)
        reader = threading.Thread(target=_collect, args=(proc.stderr, errors), daemon=True)
        reader.start()
        done = False
        for line in proc.stdout:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # not a record (a library printing on stdout)
            if not isinstance(rec, dict) or "kind" not in rec:
                continue
            if rec["kind"] == "download":
                self.download.emit(int(rec["done"]), int(rec["total"]))
                continue
            done = done or rec["kind"] == "done"
            self.record.emit(rec)
        proc.wait()
        reader.join(timeout=5)
        if proc.returncode == 0 or (done and proc.returncode == 1):
            return  # finished, stopped, or a NaN stop its records already told
        said = [line for line in errors if line.startswith("rnn-designer: ")]
        message = said[-1].removeprefix("rnn-designer: ") if said else (
            f"the training processes ended with exit code {proc.returncode}")
        self.failed.emit({"message": message, "details": "\n".join(errors),
                          "code": proc.returncode})


def _collect(stream, lines: deque) -> None:
    for line in stream:
        if line.strip():
            lines.append(line.rstrip("\n"))
