"""``rnn-designer train PROJECT --nproc N``: start N training processes on this machine, see
them through, and say in one sentence how it went.

The workers are ``python -m designer train ...`` with torchrun's environment (``RANK``,
``LOCAL_RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``), so a worker cannot tell this
launcher from torchrun. As torchrun's agent does, the launcher hosts the rendezvous store
itself, on a port the system picks, so there is no port to race for.

Rank 0 speaks for the run: it gets this process's stdin, stdout and stderr (the progress bar,
the records, ``--jsonl`` lines, commands). The other ranks' stderr goes to a log the launcher
reads if they fail. A worker that fails writes its one sentence to a file (`Voice`) instead of
printing it; when one fails, the launcher gives the others a few seconds to end by themselves
(a shared error ends all of them at once; a lost peer is noticed at the next step), stops the
rest, and prints one sentence: what failed, and the last checkpoint, which atomic writes keep
intact whatever happened. A worker that neither fails nor goes on (stopped by SIGSTOP, frozen
whole) is seen by its silence: each worker touches ``rank-R.alive`` every second from a thread
of its own (`Heartbeat`), and one silent for ``--hang-timeout`` seconds is ended as failed.

Ctrl-C reaches every worker (they share the terminal's process group; the launcher forwards it
too, for a launcher signalled alone): they agree to stop after the step and save. A second
Ctrl-C aborts.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from designer.graph.atomic import atomic_write_text

ERRORS_ENV = "RNN_DESIGNER_WORKER_ERRORS"
GRACE_S = 5.0       # after a failure, how long the others get to end by themselves
POLL_S = 0.05
BEAT_S = 1.0        # how often a worker says it is alive
HANG_S = 60.0       # the silence after which a worker counts as hung (--hang-timeout)
STARTUP_S = 300.0   # the silence allowed before a worker's first beat (importing torch)
INTERRUPTED = 130   # the exit code of a command ended by Ctrl-C (the shell's convention)


class Voice:
    """How a training process tells the user that it failed.

    Alone, it prints ``rnn-designer: <sentence>`` on stderr. One of several prints only what
    is its own (rank 0 speaks for errors all ranks share), prefixed with its rank. Under the
    ``--nproc`` launcher (``RNN_DESIGNER_WORKER_ERRORS`` names a folder) it prints nothing
    and writes the sentence to ``rank-R.json`` there, for the launcher's one sentence.
    """

    def __init__(self, rank: int = 0, size: int = 1, folder: str | None = None) -> None:
        self.rank, self.size, self.folder = rank, size, folder
        self.failed_alone = False

    @classmethod
    def from_env(cls, environ=None) -> "Voice":
        env = os.environ if environ is None else environ
        try:
            rank, size = int(env.get("RANK", "0")), int(env.get("WORLD_SIZE", "1"))
        except ValueError:
            rank, size = 0, 1
        return cls(rank, size, env.get(ERRORS_ENV) or None)

    def fail(self, message: str, code: int, shared: bool = False,
             lost_peer: bool = False) -> int:
        """Tell the failure; returns ``code`` (the exit code)."""
        self.failed_alone = self.size > 1 and not shared
        if self.folder:
            report = {"rank": self.rank, "message": message, "code": code, "shared": shared,
                      "lost_peer": lost_peer, "time": time.time()}
            try:
                atomic_write_text(Path(self.folder) / f"rank-{self.rank}.json",
                                  json.dumps(report))
                return code
            except OSError:
                pass  # the launcher has gone: say it here
        if shared and self.rank != 0:
            return code
        prefix = f"rank {self.rank} of {self.size}: " if self.failed_alone else ""
        print(f"rnn-designer: {prefix}{message}", file=sys.stderr)
        return code


class Heartbeat:
    """A worker's sign of life for the launcher: a daemon thread touches ``rank-R.alive`` in
    the launcher's folder every `BEAT_S` seconds, whatever the training thread is doing.

    A process stopped (SIGSTOP) or frozen whole falls silent; one that only waits for the
    others in a collective goes on beating (the process group's own timeout covers that).
    Under torchrun (no folder) it does nothing.
    """

    def __init__(self, folder: str | None, rank: int) -> None:
        self.path = Path(folder) / f"rank-{rank}.alive" if folder else None
        self._done = threading.Event()

    @classmethod
    def from_env(cls, environ=None) -> "Heartbeat":
        env = os.environ if environ is None else environ
        return cls(env.get(ERRORS_ENV) or None, int(env.get("RANK", "0") or 0))

    def __enter__(self) -> "Heartbeat":
        if self.path is not None:
            threading.Thread(target=self._beat, name="heartbeat", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()

    def _beat(self) -> None:
        while not self._done.is_set():
            try:
                self.path.touch()
            except OSError:  # the launcher has gone and its folder with it
                return
            self._done.wait(BEAT_S)


def lost_peer(error: BaseException) -> bool:
    """Whether an error only means that another process went away (not the cause)."""
    import torch.distributed as dist
    if isinstance(error, getattr(dist, "DistError", ())):
        return True
    text = str(error).lower()
    return any(words in text for words in (
        "connection closed by peer", "connection reset", "broken pipe", "connection refused",
        "nccl communicator was aborted", "process group watchdog", "socket timeout"))


def leave_now(code: int) -> None:
    """End a worker at once: one that failed on its own (the others may be stuck in a
    collective, so leaving the process group politely could wait forever), or one that has
    left the group and has nothing more to do."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# ------------------------------------------------------------------------ the launcher --
def launch(args, project) -> int:
    """Start ``args.nproc`` workers for ``rnn-designer train`` and see them through."""
    import torch

    from designer.training.run.errors import TrainingError
    from designer.training.run.rundir import check_folder, default_path
    n = args.nproc
    device = args.device or project.training_settings()["device"]
    cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    if cuda:
        have = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if have == 0:
            return _err("the CUDA device was asked for, but no CUDA GPU is available (use "
                        "--device cpu)")
        if n > have:
            return _err(f"--nproc {n} asks for {n} GPUs, but this machine has {have} (use "
                        f"--nproc {have}, or --device cpu to train {n} processes on the CPU)")
    out = args.resume or args.out or str(default_path(project))
    try:  # before any worker starts: a folder that cannot take the run is said at once
        check_folder(Path(out), bool(args.resume))
    except TrainingError as e:
        return _err(str(e), e.code)
    store = _store()
    folder = Path(tempfile.mkdtemp(prefix="rnn-designer-workers-"))
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(store.port),
           "WORLD_SIZE": str(n), "LOCAL_WORLD_SIZE": str(n), "GROUP_RANK": "0",
           "TORCHELASTIC_USE_AGENT_STORE": "True", ERRORS_ENV: str(folder)}
    if "OMP_NUM_THREADS" not in os.environ:  # N processes share the cores
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // n))
    command = [sys.executable, "-m", "designer", "train", *worker_argv(args, out)]
    workers: list[subprocess.Popen] = []
    supervisor = _Supervisor(workers, getattr(args, "hang_timeout", None) or HANG_S)
    try:
        for rank in range(n):
            log = None if rank == 0 else open(folder / f"rank-{rank}.log", "wb")
            workers.append(subprocess.Popen(
                command, env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)},
                stdin=None if rank == 0 else subprocess.DEVNULL,
                stdout=None if rank == 0 else subprocess.DEVNULL, stderr=log))
            if log is not None:
                log.close()
        supervisor.watch(folder)
        message, code = outcome(workers, folder, out, supervisor)
    finally:
        supervisor.end()
        del store
        shutil.rmtree(folder, ignore_errors=True)
    if message:
        print(f"rnn-designer: {message}", file=sys.stderr)
    return code


def worker_argv(args, out: str) -> list[str]:
    """The ``train`` arguments every worker gets: the user's, with the run folder named."""
    argv = [str(args.project)]
    if getattr(args, "project_dir", None):
        argv += ["--project-dir", str(args.project_dir)]
    argv += ["--resume", out] if args.resume else ["--out", out]
    for flag, value in (("--steps", args.steps), ("--device", args.device),
                        ("--engine", args.engine), ("--seed", args.seed),
                        ("--corpus", args.corpus), ("--time-limit", args.time_limit),
                        ("--refit", getattr(args, "refit", None)),
                        ("--max-table-gb", getattr(args, "max_table_gb", None))):
        if value is not None:
            argv += [flag, str(value)]
    for flag, on in (("--quiet", args.quiet), ("--jsonl", args.jsonl),
                     ("--stdin-commands", args.stdin_commands)):
        if on:
            argv.append(flag)
    return argv


def _store():
    """The rendezvous store the workers meet at, on a port the system picks."""
    from datetime import timedelta

    from torch.distributed import TCPStore
    return TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                    timeout=timedelta(minutes=10))


class _Supervisor:
    """Waits for the workers; forwards Ctrl-C; stops the rest when one fails.

    ``ended_at`` holds when each worker was seen to end; ``stopped``, the ranks it killed.
    """

    def __init__(self, workers: list, hang_s: float = HANG_S) -> None:
        self.workers = workers
        self.aborted = False
        self.ended_at: dict[int, float] = {}
        self.stopped: set[int] = set()
        self.hang_s = hang_s
        self.hung: dict[int, float] = {}  # rank -> the seconds it had been silent
        self._since = time.time()
        self._first: float | None = None
        self._previous = {}
        for name in (signal.SIGINT, signal.SIGTERM):
            self._previous[name] = signal.getsignal(name)
            signal.signal(name, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        now = time.monotonic()
        if self._first is not None and now - self._first > 1.0:
            self.aborted = True  # the second Ctrl-C: the workers abort
        self._first = self._first or now
        for w in self.workers:
            _signal(w, signal.SIGINT)

    def watch(self, folder: Path) -> None:
        """Until every worker has ended; a failure (an exit or an error file) gives the
        others ``GRACE_S`` to end by themselves, then they are killed."""
        deadline = None
        while len(self.ended_at) < len(self.workers):
            for rank, w in enumerate(self.workers):
                if rank not in self.ended_at and w.poll() is not None:
                    self.ended_at[rank] = time.monotonic()
            self._end_the_silent(folder)
            failed = any(w.returncode not in (None, 0, *self.interrupted())
                         for w in self.workers) or any(folder.glob("rank-*.json"))
            if deadline is None and (failed or self.aborted):
                deadline = time.monotonic() + GRACE_S
            if deadline is not None and time.monotonic() > deadline:
                for rank, w in enumerate(self.workers):
                    if w.poll() is None:
                        self.stopped.add(rank)
                        w.kill()
                        w.wait()
                continue
            time.sleep(POLL_S)

    def interrupted(self) -> tuple:
        """The exit code of a worker that stopped on Ctrl-C, once the launcher heard one."""
        return (INTERRUPTED,) if self._first is not None else ()

    def _end_the_silent(self, folder: Path) -> None:
        """Kill a worker that has not beaten for ``hang_s`` (SIGKILL ends a stopped one)."""
        now = time.time()
        for rank, w in enumerate(self.workers):
            if rank in self.ended_at or rank in self.hung or w.poll() is not None:
                continue
            try:
                silent = now - (folder / f"rank-{rank}.alive").stat().st_mtime
                limit = self.hang_s
            except OSError:  # no beat yet: still starting
                silent, limit = now - self._since, max(self.hang_s, STARTUP_S)
            if silent > limit:
                self.hung[rank] = silent
                w.kill()

    def end(self) -> None:
        for w in self.workers:
            if w.poll() is None:
                w.kill()
                w.wait()
        for name, handler in self._previous.items():
            signal.signal(name, handler)


def _signal(worker, sig) -> None:
    if worker.poll() is None:
        try:
            worker.send_signal(sig)
        except (OSError, ValueError):
            pass


def outcome(workers: list, folder: Path, out: str, supervisor: _Supervisor
            ) -> tuple[str | None, int]:
    """The sentence to print (or ``None``) and the exit code, once every worker has ended."""
    codes = [w.returncode for w in workers]
    if all(c == 0 for c in codes):
        return None, 0
    if supervisor.aborted or set(codes) <= {0, *supervisor.interrupted()}:
        return None, INTERRUPTED  # Ctrl-C: rank 0 said where the run can go on from
    n = len(workers)
    reports = {}
    for rank in range(n):
        try:
            reports[rank] = json.loads((folder / f"rank-{rank}.json").read_text())
        except (OSError, ValueError):
            continue
    if not reports and len(set(codes)) == 1 and codes[0] > 0:
        return None, codes[0]  # they agreed to stop (a loss that stayed NaN): rank 0 said so
    own = [r for r in reports.values() if not r["lost_peer"]]
    if supervisor.hung:  # the cause: whatever the others said after it fell silent
        rank, silent = min(supervisor.hung.items())
        cause = (f"rank {rank} of {n} stopped answering (no sign of life for {silent:.0f} s: "
                 "the process was stopped or frozen), so it was ended")
        code = 1
    elif own:
        first = min(own, key=lambda r: r["time"])
        if first["shared"]:  # every rank failed with it together
            return first["message"], int(first["code"])
        rank, code = first["rank"], int(first["code"])
        cause = f"rank {rank} of {n} failed: {first['message']}"
    else:  # nothing said by the one that went first: how it ended
        ended = [r for r, c in enumerate(codes) if c and r not in supervisor.stopped]
        rank = min(ended or [r for r, c in enumerate(codes) if c],
                   key=lambda r: (r in reports, supervisor.ended_at.get(r, 0.0)))
        code = codes[rank]
        if code < 0:
            said = _last_line(folder / f"rank-{rank}.log") \
                if -code in (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS) else ""  # its own
            cause = f"rank {rank} of {n} was killed ({_signal_name(-code)}" + \
                (f": {said})" if said else ")")
        else:
            said = reports[rank]["message"] if rank in reports else \
                _last_line(folder / f"rank-{rank}.log")
            cause = f"rank {rank} of {n} ended with exit code {code}" + \
                (f" ({said})" if said else "")
        code = code if code > 0 else 1
    others = "the other process was" if n == 2 else "the other processes were"
    return f"{cause}; {others} stopped, and {last_checkpoint(out)}", code


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [line for line in lines if line]
    return lines[-1].removeprefix("rnn-designer: ")[:300] if lines else ""


def last_checkpoint(out: str) -> str:
    """Where a run that ended early can go on from: its last checkpoint and the command."""
    try:
        step = json.loads((Path(out) / "last.json").read_text())["step"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"no checkpoint had been written to {out} yet"
    return f"the last checkpoint, step {step:,}, is intact in {out} (continue with --resume {out})"


def _err(message: str, code: int = 2) -> int:
    print(f"rnn-designer: {message}", file=sys.stderr)
    return code
