"""The process that runs a search: it starts the workers (spawn context; one or more per GPU,
or on the CPU), passes on what they report, and watches them.

- A worker that dies (killed, crashed) leaves its trial running in the storage: the runner
  fails that trial at once (by the worker's process id), queues it again with the same values
  (once: a trial whose retry kills its worker too stays failed), and starts another worker in
  its place while the study's total leaves room. Workers that die `DEATHS_IN_A_ROW` times
  each with no trial finishing in between (a worker that cannot start, every design out of
  memory) are not replaced: the search stops short and says why (`Runner.short`).
- Ctrl-C or SIGTERM is passed to the workers: each ends its trial after the current step (the
  trial fails as interrupted and is queued again); a second Ctrl-C ends them at once. The
  same command run again resumes the study.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import socket
import time
from typing import Callable

from designer.search.per_gpu import auto_per_gpu
from designer.search.study import INTERRUPTED, SearchError, counted, reap
from designer.search.worker import Plan, trial_event, work

POLL_S = 0.2
DEATHS_IN_A_ROW = 3  # per worker: deaths with no trial finishing between, before giving up


def device_slots(device: str, gpus: str | None = None, per_gpu: int | str = 1,
                 workers: int | None = None, project=None, steps: int | None = None
                 ) -> list[str]:
    """The device of every worker: ``cpu`` repeated ``workers`` times, or ``cuda:K`` for each
    GPU asked for (``gpus``: ``all`` or a count), ``per_gpu`` times, the GPUs taking turns
    (``auto``: as many as `per_gpu.auto_per_gpu` finds room for ``project``)."""
    if per_gpu != "auto":
        try:
            per_gpu = int(per_gpu)
        except (TypeError, ValueError):
            raise SearchError(f"--per-gpu takes auto or a number, not '{per_gpu}'") from None
        if per_gpu < 1:
            raise SearchError("--per-gpu must be at least 1")
    if workers is not None and workers < 1:
        raise SearchError("--workers must be at least 1")
    if device == "auto":
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        if gpus is not None:
            raise SearchError("--gpus is for --device cuda; on the CPU give --workers")
        return ["cpu"] * (workers or 1)
    import torch
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        raise SearchError("the CUDA device was asked for, but no CUDA GPU is available (use "
                          "--device cpu)")
    if workers is not None:
        raise SearchError("--workers is for --device cpu; on GPUs give --gpus and --per-gpu")
    if gpus in (None, "all"):
        use = count
    else:
        try:
            use = int(gpus)
        except ValueError:
            raise SearchError(f"--gpus takes all or a number of GPUs, not '{gpus}'") from None
        if not 1 <= use <= count:
            raise SearchError(f"--gpus {use}: this machine has {count} GPU"
                              f"{'s' if count != 1 else ''}")
    if per_gpu == "auto":
        per_gpu = auto_per_gpu(project, list(range(use)), steps) if project is not None \
            else 1
    return [f"cuda:{g}" for _ in range(per_gpu) for g in range(use)]


def cpu_threads(workers: int) -> int:
    """Each worker's share of this machine's cores (at most OMP_NUM_THREADS, when set)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    share = max(1, cores // max(1, workers))
    asked = os.environ.get("OMP_NUM_THREADS", "")
    return min(share, int(asked)) if asked.isdigit() and int(asked) > 0 else share


class Runner:
    """Start, watch and stop the workers of one search; ``show(event)`` gets every event."""

    def __init__(self, plan: Plan, slots: list[str], study, show: Callable[[dict], None]):
        self.plan, self.slots, self.study, self.show = plan, slots, study, show
        self.ctx = mp.get_context("spawn")
        self.lock, self.holder = self.ctx.Lock(), self.ctx.Value("i", 0, lock=False)
        self.events = self.ctx.Queue()
        self.procs: dict[int, mp.Process] = {}
        self.deaths = 0                 # workers died in a row, no trial finishing between
        self.gave_up: str | None = None  # why no worker replaces the dead ones any more
        self.interrupted = self.killing = False
        self.errors: list[str] = []

    def run(self) -> bool:
        """Run the search to its end; returns whether it was interrupted."""
        names = (signal.SIGINT, signal.SIGTERM)
        previous = {n: signal.getsignal(n) for n in names}
        for n in names:
            signal.signal(n, self._on_signal)
        try:
            for slot in range(min(len(self.slots), self._room())):
                self.procs[slot] = self._start(slot)
            while self.procs:
                self._drain(POLL_S)
                self._check_workers()
            self._drain(0)
        finally:
            for n, handler in previous.items():
                signal.signal(n, handler)
        return self.interrupted

    def _start(self, slot: int) -> mp.Process:
        """A worker for ``slot``, started with Ctrl-C ignored until it handles it itself."""
        process = self.ctx.Process(target=work, name=f"search-{slot}-{self.slots[slot]}",
                                   args=(self.plan, slot, self.slots[slot],
                                         (self.lock, self.holder), self.events))
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            process.start()
        finally:
            signal.signal(signal.SIGINT, previous)
        return process

    def _on_signal(self, signum, frame) -> None:
        alive = [p for p in self.procs.values() if p.is_alive()]
        if not self.interrupted:
            self.interrupted = True
            self.show({"kind": "stopping", "message": "stopping: each worker ends its trial "
                       "after the current step (Ctrl-C again to end them now)"})
            for p in alive:
                _signal(p, signal.SIGINT)
        else:
            self.killing = True
            for p in alive:
                _signal(p, signal.SIGKILL)

    def _drain(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                event = self.events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            except (EOFError, OSError):  # a worker died while writing
                return
            if event.get("kind") == "error":
                self.errors.append(event["message"])
            elif event.get("kind") == "trial":  # a worker finished a trial: it can work
                self.deaths = 0
            self.show(event)
            deadline = time.monotonic()  # take what is there, then go on watching

    def _check_workers(self) -> None:
        for slot, p in list(self.procs.items()):
            if p.exitcode is None:
                continue
            p.join()
            del self.procs[slot]
            if p.exitcode in (0, 1):  # done, or it said why it stopped
                continue
            self._drain(0)  # what it said before it died comes first
            if self.holder.value == p.pid:  # it died holding the claim: take it back
                self.holder.value = 0
                self.lock.release()
            how = _ended(p.exitcode)
            why = INTERRUPTED if self.interrupted else (
                f"its worker (process {p.pid} on {socket.gethostname()}) {how} before the "
                "trial finished")
            for t in reap(self.study, lambda t, pid=p.pid: _owned_by(t, pid), why,
                          max_retry=None if self.interrupted else 1):
                self.show(trial_event(t))
            if self.interrupted or self.gave_up or not self._room():
                continue
            self.deaths += 1
            if self.deaths >= DEATHS_IN_A_ROW * len(self.slots):
                self.gave_up = (f"its workers died {self.deaths} times in a row without "
                                f"finishing a trial (the last {how}{_hint(p.exitcode)})")
                self.show({"kind": "worker", "message": f"the worker on {self.slots[slot]} "
                           f"{how}; no other takes its place, since {self.gave_up}"})
                continue
            self.show({"kind": "worker", "message": f"the worker on {self.slots[slot]} "
                       f"{how}; another takes its place"})
            self.procs[slot] = self._start(slot)

    def short(self) -> str | None:
        """Why the search ended with trials of its total still to run (``None``: it did not;
        the time being up or Ctrl-C is no shortfall)."""
        if self.interrupted:
            return None
        left = self._room()
        if not left:
            return None
        why = self.gave_up or ("its workers stopped on the errors above" if self.errors
                               else "its workers stopped")
        count = self.plan.trials
        return (f"the search stopped with {left} of its {count} trial"
                f"{'s' if count != 1 else ''} still to run: {why}")

    def _room(self) -> int:
        """How many trials the study's total (and the time) still leaves to start."""
        if self.plan.deadline is not None and time.time() >= self.plan.deadline:
            return 0
        count, waiting = counted(self.study)
        return max(waiting, self.plan.trials - count + waiting)


def _owned_by(trial, pid: int) -> bool:
    return trial.user_attrs.get("host") == socket.gethostname() and \
        trial.user_attrs.get("pid") == pid


def _ended(code: int) -> str:
    if code < 0:
        try:
            return f"was ended by {signal.Signals(-code).name}"
        except ValueError:
            return f"was ended by signal {-code}"
    return f"exited with code {code}"


def _hint(code: int) -> str:
    """What a worker's end by SIGKILL most often means."""
    return (", as the system ends a process when memory runs out"
            if code == -signal.SIGKILL else "")


def _signal(process: mp.Process, signum: int) -> None:
    try:
        os.kill(process.pid, signum)
    except (ProcessLookupError, TypeError):
        pass
