"""``rnn-designer train`` and ``rnn-designer generate``."""
from __future__ import annotations

import math
import signal
import sys
from pathlib import Path

from designer.graph import project as P

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
    try:
        for rec in run_training(project, opts, token):
            kind = rec["kind"]
            if kind == "start":
                download.close()
                print(f"training {project.path} on {rec['device_name']}: "
                      f"{rec['params']:,} parameters, engines "
                      f"{', '.join(f'{k}={v}' for k, v in rec['engines'].items()) or 'none'}")
                print(f"data: {rec['data']}")
                print(f"run folder: {rec['run_dir']}")
                bar = _bar(total=rec["steps"], initial=rec["step"], unit="step",
                           disable=args.quiet)
            elif kind == "train":
                bar.update(rec["step"] - bar.n)
                bar.set_postfix(loss=f"{rec['loss']:.3f}", tok_s=f"{rec['tokens_per_s']:,.0f}",
                                refresh=False)
            elif kind == "val":
                extra = f", accuracy {rec['val_accuracy']:.2%}" if "val_accuracy" in rec else ""
                bits = rec["val_loss"] / math.log(2)
                bar.write(f"step {rec['step']}: validation loss {rec['val_loss']:.4f} nats "
                          f"({bits:.3f} bits){extra}{'  (best)' if rec['best'] else ''}")
            elif kind == "sample":
                bar.write(f"--- sample at step {rec['step']} ---\n{rec['text']}\n---")
            elif kind == "note":
                (bar.write if bar else print)(f"note: {rec['message']}")
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
    finally:
        download.close()
        signal.signal(signal.SIGINT, previous)
    return code


def generate(args) -> int:
    from .generate import GenerateError, generate_from_run
    try:
        return generate_from_run(args)
    except (C.CheckpointError, GenerateError) as e:
        return _err(str(e))
    except DataError as e:
        return _err(str(e))


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
