"""``rnn-designer train``, ``generate``, ``init``, ``evaluate`` and ``predict``."""
from __future__ import annotations

import json
import math
import signal
import sys
from pathlib import Path

from designer.graph import project as P
from designer.graph.memory import size_text

from . import checkpoint as C
from .control import StopToken
from .data import DataError
from .loop import RunOptions, TrainingError, train as run_training


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
    try:
        project = P.load(args.project)
    except P.ProjectError as e:
        return _err(str(e))
    if args.resume and args.out and Path(args.out) != Path(args.resume):
        return _err("give the run folder once: --resume RUN_DIR continues that folder")
    if args.steps is not None and args.steps < 1:
        return _err("--steps must be at least 1")
    download = _Download(args.quiet)
    opts = RunOptions(out=args.resume or args.out, resume=bool(args.resume), steps=args.steps,
                      device=args.device, engine=args.engine, seed=args.seed,
                      corpus=args.corpus, time_limit=args.time_limit,
                      download_progress=download)
    token = StopToken()
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum, frame):  # first Ctrl-C: stop cleanly; second: give up
        token.stop()
        signal.signal(signal.SIGINT, previous)
        print("\nstopping after this step (Ctrl-C again to abort)", file=sys.stderr)

    signal.signal(signal.SIGINT, on_interrupt)
    bar = None
    code = 0
    run_dir = None
    try:
        for rec in run_training(project, opts, token):
            kind = rec["kind"]
            if kind == "start":
                run_dir = rec["run_dir"]
                download.close()
                memory = f", about {size_text(rec['memory'])} of memory" \
                    if rec.get("memory") else ""
                print(f"training {project.path} on {rec['device_name']}: "
                      f"{rec['params']:,} parameters, engines "
                      f"{', '.join(f'{k}={v}' for k, v in rec['engines'].items()) or 'none'}"
                      f"{memory}")
                print(f"data: {rec['data']}")
                print(f"run folder: {rec['run_dir']}")
                bar = _bar(total=rec["steps"], initial=rec["step"], unit="step",
                           disable=args.quiet)
            elif kind == "train":
                bar.update(rec["step"] - bar.n)
                shown = {"loss": f"{rec['loss']:.3f}"}
                if "rmse" in rec:
                    shown["rmse"] = f"{rec['rmse']:.3g}"
                elif "accuracy" in rec:
                    shown["acc"] = f"{rec['accuracy']:.1%}"
                bar.set_postfix(**shown, tok_s=f"{rec['tokens_per_s']:,.0f}", refresh=False)
            elif kind == "val":
                best = "  (best)" if rec["best"] else ""
                if "val_rmse" in rec:
                    bar.write(f"step {rec['step']}: validation loss {rec['val_loss']:.4g}, "
                              f"RMSE {rec['val_rmse']:.4g}{best}")
                    continue
                extra = f", accuracy {rec['val_accuracy']:.2%}" if "val_accuracy" in rec else ""
                bits = rec["val_loss"] / math.log(2)
                bar.write(f"step {rec['step']}: validation loss {rec['val_loss']:.4f} nats "
                          f"({bits:.3f} bits){extra}{best}")
            elif kind == "sample":
                bar.write(f"--- sample at step {rec['step']} ---\n{rec['text']}\n---")
            elif kind == "note":
                (bar.write if bar else print)(f"note: {rec['message']}")
            elif kind == "warning":
                (bar.write if bar else print)(f"warning: {rec['message']}")
            elif kind == "error":
                (bar.write if bar else print)(f"rnn-designer: {rec['message']}")
                code = 1
            elif kind == "done":
                if bar is not None:
                    bar.close()
                best = rec["best_val_loss"]
                best_text = f", best validation loss {best:.4f}" if best is not None else ""
                print(f"{rec['reason']} at step {rec['step']} after {rec['time']:.1f} s"
                      f"{best_text}; checkpoints in {rec['run_dir']}")
    except TrainingError as e:
        if bar is not None:
            bar.close()
        return _err(str(e), e.code)
    except DataError as e:
        return _err(str(e), 2)
    except Exception as e:  # noqa: BLE001 - not foreseen: a sentence here, the trace on disk
        if bar is not None:
            bar.close()
        return _err(unforeseen(e, run_dir), 1)
    finally:
        download.close()
        signal.signal(signal.SIGINT, previous)
    return code


def unforeseen(error: BaseException, run_dir: str | None) -> str:
    """One sentence for an error the trainer did not foresee; the traceback goes to
    ``RUN_DIR/error.log`` (when the run folder exists) for a bug report."""
    import traceback

    from designer.graph.atomic import atomic_write_bytes
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    where = ""
    if run_dir is not None and Path(run_dir).is_dir():
        log = Path(run_dir) / "error.log"
        try:
            atomic_write_bytes(log, "".join(traceback.format_exception(error)).encode())
            where = f"; the details are in {log}"
        except OSError:
            pass
    return (f"training stopped on an unexpected {type(error).__name__}"
            f"{': ' + text if text else ''}{where}")


def generate(args) -> int:
    from .generate import GenerateError
    from .generate_command import generate_from_run
    try:
        return generate_from_run(args)
    except (C.CheckpointError, GenerateError) as e:
        return _err(str(e))
    except DataError as e:
        return _err(str(e))


def init(args) -> int:
    from .init import InitError, init_project
    try:
        path, lines = init_project(args.data, args.task, args.target, args.out, args.horizon)
    except (InitError, DataError) as e:
        return _err(str(e))
    for line in lines:
        print(line)
    print(f"wrote {path}; train it with: rnn-designer train {path}")
    return 0


def evaluate(args) -> int:
    from .evaluate import evaluate_run, format_report
    from .generate import GenerateError
    try:
        report = evaluate_run(args.run_dir, args.data, args.checkpoint, args.device)
    except (C.CheckpointError, GenerateError, DataError) as e:
        return _err(str(e))
    print(json.dumps(report, indent=1) if args.json else format_report(report))
    return 0


def predict(args) -> int:
    from .generate import GenerateError
    from .predict_sequences import predict_file
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
    from .generate import GenerateError
    from .inspect import InspectError
    from .inspect_run import inspect_command
    from .probe import ProbeError
    try:
        return inspect_command(args)
    except KeyError as e:  # an unknown --layer: the message names the choices
        return _err(str(e.args[0]))
    except (C.CheckpointError, GenerateError, InspectError, ProbeError, DataError) as e:
        return _err(str(e))
