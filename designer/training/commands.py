"""``rnn-designer train``, ``generate``, ``init``, ``evaluate`` and ``predict``."""
from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from designer.graph import project as P

from designer.training.data import DataError
from designer.training.run import checkpoint as C
from designer.training.run.control import StopToken, read_commands
from designer.training.run.launch import Heartbeat, Voice, last_checkpoint, launch, leave_now, lost_peer
from designer.training.run.loop import RunOptions, TrainingError
from designer.training.run.loop import train as run_training
from designer.training.run.record_format import ERROR, RecordFormatter
from designer.training.run.rundir import json_value


def _err(message: str, code: int = 2) -> int:
    print(f"rnn-designer: {message}", file=sys.stderr)
    return code


def _bar(**kw):
    from tqdm import tqdm
    return tqdm(dynamic_ncols=True, file=sys.stderr, **kw)


class _Download:
    """A progress bar for a corpus download, opened on the first callback."""

    def __init__(self, quiet: bool):
        self.bar, self.quiet = None, quiet

    def __call__(self, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.bar is None:
            self.bar = _bar(total=total or None, unit="B", unit_scale=True, desc="download")
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def train(args) -> int:
    """``rnn-designer train``: one process, the ``--nproc`` launcher, or one worker of a
    data-parallel run (started by the launcher or by torchrun)."""
    from designer.training.run import distributed
    try:
        project = load_project(args)
    except P.ProjectError as e:
        return _err(str(e))
    if args.resume and args.out and Path(args.out) != Path(args.resume):
        return _err("give the run folder once: --resume RUN_DIR continues that folder")
    if args.steps is not None and args.steps < 1:
        return _err("--steps must be at least 1")
    if args.nproc < 1:
        return _err("--nproc must be at least 1")
    if distributed.launched():
        if args.nproc > 1:
            return _err("--nproc starts the processes itself; under torchrun, leave it out")
        voice = Voice.from_env()
        device = args.device or project.training_settings()["device"]
        try:
            with Heartbeat.from_env(), distributed.joined(device) as world:
                voice.rank, voice.size = world.rank, world.size
                code = _train(args, project, world, voice)
                if voice.failed_alone:  # the others may be stuck waiting for this one
                    leave_now(code)
        except TrainingError as e:  # could not join the others
            return voice.fail(str(e), e.code)
        if world.size > 1:  # the group is left: end here, as the interpreter's teardown of
            leave_now(code)  # the backend's threads can abort a process whose work is done
        return code
    if args.nproc > 1:
        return launch(args, project)
    return _train(args, project, distributed.World(), Voice())


def load_project(args):
    """The project of ``args``; ``--project-dir`` names the folder its data paths are
    relative to (a snapshot trained away from its file)."""
    if not getattr(args, "project_dir", None):
        return P.load(args.project)
    path = Path(args.project)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise P.ProjectError(f"{path} cannot be read ({e.strerror or e})") from None
    project = P.loads(raw, file=path, project_dir=Path(args.project_dir))
    project.path = path
    return project


def _train(args, project, world, voice: Voice) -> int:
    """Run the loop in this process (alone, or as one rank of ``world``) and show what it
    yields: rank 0 prints (or, with ``--jsonl``, writes JSON lines), the others keep quiet."""
    main = world.is_main
    quiet = args.quiet or args.jsonl or not main
    download = _Download(quiet) if not args.jsonl else _JsonDownload()
    opts = RunOptions(out=args.resume or args.out, resume=bool(args.resume), steps=args.steps,
                      device=args.device, engine=args.engine, seed=args.seed,
                      corpus=args.corpus, time_limit=args.time_limit,
                      download_progress=download if main else None, world=world,
                      refit=getattr(args, "refit", None))
    token = StopToken()
    if args.stdin_commands and main:
        read_commands(token, sys.stdin)
    restore, heard = _stop_on_signals(token, say=main and not args.jsonl,
                                      several=world.size > 1)
    show = _json_record if args.jsonl else _Printer(project, quiet)
    code, run_dir = 0, None
    try:
        for rec in run_training(project, opts, token):
            if rec["kind"] == "start":
                run_dir = rec["run_dir"]
                download.close()
            if rec["kind"] == "error":
                code = 1
            if main:
                show(rec)
    except TrainingError as e:
        _close(show)
        return voice.fail(str(e), e.code, shared=e.shared)
    except DataError as e:
        _close(show)
        return voice.fail(str(e), 2)
    except Exception as e:  # noqa: BLE001 - not foreseen: a sentence here, the trace on disk
        _close(show)
        lost = lost_peer(e)  # another process went away: no trace of ours is worth keeping
        return voice.fail(unforeseen(e, None if lost else run_dir, world.rank), 1,
                          lost_peer=lost)
    finally:
        download.close()
        restore()
    if heard:  # stopped by Ctrl-C, and saved: the command ends as interrupted (exit 130)
        raise KeyboardInterrupt(last_checkpoint(run_dir) if run_dir else "")
    return code


class _Printer:
    """The records as a person reads them (the shared `RecordFormatter`): a progress bar
    for the steps and a line for everything else."""

    def __init__(self, project, quiet: bool) -> None:
        self.format = RecordFormatter(title=str(project.path))
        self.quiet, self.bar = quiet, None

    def __call__(self, rec: dict) -> None:
        if rec["kind"] == "final":  # the final model trained on every sequence: its own bar
            self._final(rec)
            return
        told = self.format.read(rec)
        if told.ends:
            self.close()
        if told.progress and self.bar is not None:
            self.bar.update(rec["step"] - self.bar.n)
            self.bar.set_postfix(**told.fields, refresh=False)
            return
        for line in () if told.detail else told.lines:
            self.write(line)
        if told.begins is not None:
            step, steps = told.begins
            self.bar = _bar(total=steps, initial=step, unit="step", disable=self.quiet)

    def write(self, line) -> None:
        text = f"rnn-designer: {line.text}" if line.tone == ERROR else line.text
        (self.bar.write if self.bar is not None else print)(text)

    def _final(self, rec: dict) -> None:
        """The final model trained again on every training sequence: its own bar."""
        if rec["stage"] == "progress":
            if self.bar is not None:
                self.bar.update(rec["step"] - self.bar.n)
                if rec.get("loss") is not None:
                    self.bar.set_postfix(loss=f"{rec['loss']:.3f}", refresh=False)
            return
        self.close()
        print(rec["message"])
        if rec["stage"] == "start":
            self.bar = _bar(total=rec["steps"], unit="step", desc="final",
                            disable=self.quiet or not rec["steps"])

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _json_record(rec: dict) -> None:
    """One record as one JSON line on stdout (``--jsonl``: for programs, the window among
    them); NaN and infinity become null."""
    print(json.dumps({k: json_value(v) for k, v in rec.items()}), flush=True)


class _JsonDownload:
    """Download progress as ``{"kind": "download", "done", "total"}`` lines, 10 a second."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last >= 0.1 or done == total:
            self.last = now
            _json_record({"kind": "download", "done": int(done), "total": int(total or 0)})

    def close(self) -> None:
        pass


def _close(show) -> None:
    if isinstance(show, _Printer):
        show.close()


def _stop_on_signals(token: StopToken, say: bool, several: bool):
    """Ctrl-C (and, for a worker of several, SIGTERM) stops after the step; another Ctrl-C
    aborts. A worker of several hears one Ctrl-C twice (from the terminal and from its
    launcher), so there a second one counts only after a second. Returns the undo, and a
    list that holds when the first signal came once one has."""
    names = [signal.SIGINT] + ([signal.SIGTERM] if several else [])
    previous = {n: signal.getsignal(n) for n in names}
    first: list[float] = []

    def on_signal(signum, frame):
        now = time.monotonic()
        if not first:
            first.append(now)
            token.stop()
            if say:
                print("\nstopping after this step (Ctrl-C again to abort)", file=sys.stderr)
        elif not several or now - first[0] > 1.0:
            restore()
            raise KeyboardInterrupt

    def restore() -> None:
        for n, handler in previous.items():
            signal.signal(n, handler)

    for n in names:
        signal.signal(n, on_signal)
    return restore, first


def unforeseen(error: BaseException, run_dir: str | None, rank: int = 0) -> str:
    """One sentence for an error the trainer did not foresee; the traceback goes to
    ``RUN_DIR/error.log`` (``error-rank-R.log`` for rank R of several), when the run folder
    exists, for a bug report."""
    import traceback

    from designer.graph.atomic import atomic_write_bytes
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    where = ""
    if run_dir is not None and Path(run_dir).is_dir():
        log = Path(run_dir) / ("error.log" if rank == 0 else f"error-rank-{rank}.log")
        try:
            atomic_write_bytes(log, "".join(traceback.format_exception(error)).encode())
            where = f"; the details are in {log}"
        except OSError:
            pass
    return (f"training stopped on an unexpected {type(error).__name__}"
            f"{': ' + text if text else ''}{where}")


def generate(args) -> int:
    from designer.training.trained.generate import GenerateError
    from designer.training.trained.generate_command import generate_from_run
    try:
        return generate_from_run(args)
    except (C.CheckpointError, GenerateError) as e:
        return _err(str(e))
    except DataError as e:
        return _err(str(e))


def init(args) -> int:
    from designer.training.new_from_data.init import InitError, init_project
    try:
        path, lines = init_project(args.data, args.task, args.target, args.out, args.horizon,
                                   net=args.net, head=getattr(args, "head", "auto"))
    except (InitError, DataError) as e:
        return _err(str(e))
    for line in lines:
        print(line)
    print(f"wrote {path}; train it with: rnn-designer train {path}")
    return 0


def evaluate(args) -> int:
    """``rnn-designer evaluate RUN [RUN2 ...]``: one run's report, or its ensemble's."""
    from designer.training.trained.ensemble import evaluate_runs, format_runs
    from designer.training.trained.generate import GenerateError
    try:
        report = evaluate_runs(args.run_dir, args.data, args.checkpoint, args.device)
    except (C.CheckpointError, GenerateError, DataError) as e:
        return _err(str(e))
    print(json.dumps(report, indent=1) if args.json else format_runs(report))
    return 0


def predict(args) -> int:
    from designer.training.trained.generate import GenerateError
    from designer.training.trained.predict_sequences import predict_file
    try:
        text, summary = predict_file(args.run_dir, args.input, args.out, args.checkpoint,
                                     args.device)
    except (C.CheckpointError, GenerateError, DataError) as e:
        return _err(str(e))
    if args.out:
        print(summary)
    else:
        sys.stdout.write(text)
    return 0


def inspect(args) -> int:
    from designer.training.readout.inspect import InspectError
    from designer.training.readout.probe import ProbeError
    from designer.training.trained.generate import GenerateError
    from designer.training.trained.inspect_run import inspect_command
    try:
        return inspect_command(args)
    except KeyError as e:  # an unknown --layer: the message names the choices
        return _err(str(e.args[0]))
    except (C.CheckpointError, GenerateError, InspectError, ProbeError, DataError) as e:
        return _err(str(e))
