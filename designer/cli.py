"""The ``rnn-designer`` command: argument parsing only; the work is done by the packages.

``rnn-designer [PROJECT]`` opens the designer window; the subcommands run headless. Heavy
packages (torch, Qt) are imported only by the commands that need them.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from designer import __version__
from designer.search.arguments import add_search

COMMANDS = ("gui", "validate", "parity", "unroll", "bench", "train", "generate", "export",
            "import", "init", "evaluate", "predict", "inspect", "search", "docs")
DEFAULT_PROJECT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "projects", "char-rnn-shakespeare.json")


class UserError(Exception):
    """A problem to report in one sentence, with the exit code to leave with."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def build_parser() -> argparse.ArgumentParser:
    from designer.training.new_from_data import designs  # the nets init draws
    p = argparse.ArgumentParser(
        prog="rnn-designer",
        description="Design, train and compare recurrent networks. Without a command, opens "
                    "the designer window on PROJECT (default: the Char-RNN example).",
    )
    p.add_argument("--version", action="version", version=f"rnn-designer {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    g = sub.add_parser("gui", help="open the designer window (the default command)")
    g.add_argument("project", nargs="?", help="a project file (default: the Char-RNN example)")
    g.add_argument("--screenshot", metavar="FILE.png",
                   help="render the window to a PNG and exit (works offscreen)")
    g.add_argument("--unrolled", metavar="LAYER", help="with --screenshot: show the unrolled "
                   "net of this recurrent layer")
    g.add_argument("--train-steps", type=int, metavar="N", help="with --screenshot: train N "
                   "steps through the worker thread first")
    g.add_argument("--inspect", metavar="RUN_DIR", help="open the Inspect view on this run "
                   "folder (its gates, states, surprise and gradients, step by step)")
    g.add_argument("--device", choices=("auto", "cpu", "cuda"), help="the training device")

    v = sub.add_parser("validate", help="check a project and print every layer's shapes, "
                       "parameters and FLOPs")
    v.add_argument("project")
    v.add_argument("--json", action="store_true", help="print JSON for machines")
    v.add_argument("--deep", action="store_true", help="also run the net forward and backward "
                   "on a tiny real batch (the smoke step the window runs before Train)")
    v.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="the device to estimate training memory for (default: the project's; "
                   "auto: a GPU when one answers)")
    add_table_limit(v)

    pa = sub.add_parser("parity", help="compare the cuDNN and unrolled engines on every "
                        "recurrent layer (exit 1 above tolerance)")
    pa.add_argument("project")
    pa.add_argument("--json", action="store_true")
    pa.add_argument("--steps", type=int, default=None, help="sequence length to test "
                    "(default: the project's, at most 20)")
    pa.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                    help="the type both engines run in (default float32, tolerance 1e-5; "
                    "float64: tolerance 1e-10, where only a difference of the functions shows)")

    u = sub.add_parser("unroll", help="show the unrolled (Caffe) net of a recurrent layer")
    u.add_argument("project")
    u.add_argument("--layer", required=True, help="the recurrent layer to expand")
    u.add_argument("--steps", type=int, default=None, help="time steps (default: the "
                   "project's sequence length)")
    u.add_argument("--json", action="store_true")

    b = sub.add_parser("bench", help="time training steps on each engine")
    b.add_argument("project")
    b.add_argument("--engines", default="cudnn,caffe", help="comma-separated, in order: "
                   "auto, cudnn, caffe, persist (auto says which engine each layer chose)")
    b.add_argument("--device", choices=("cpu", "cuda"), default=None)
    b.add_argument("--steps", type=int, default=20)
    b.add_argument("--warmup", type=int, default=3)
    b.add_argument("--seq", type=int, help="override the sequence length T")
    b.add_argument("--batch", type=int, help="override the batch size N")
    b.add_argument("--no-cuda-graphs", action="store_true", help="run every step eagerly")
    b.add_argument("--precision", choices=("fp32", "tf32", "bf16"), default="fp32",
                   help="fp32 (TF32 off, the default), tf32, or bf16 autocast")
    b.add_argument("--json", action="store_true")

    t = sub.add_parser("train", help="train a project headless")
    t.add_argument("project")
    t.add_argument("--steps", type=int)
    t.add_argument("--device", choices=("auto", "cpu", "cuda"))
    t.add_argument("--engine", choices=("auto", "cudnn", "caffe", "persist"), help="run every "
                   "recurrent layer on this engine (auto: the fastest, timed on a GPU at the "
                   "first step, cuDNN on the CPU; persist: LSTMs only; others on cuDNN)")
    t.add_argument("--out", metavar="RUN_DIR", help="where metrics and checkpoints go")
    t.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last "
                   "checkpoint")
    t.add_argument("--seed", type=int)
    t.add_argument("--corpus", metavar="FILE", help="train on this file instead")
    t.add_argument("--time-limit", type=float, metavar="SECONDS", help="stop after this long")
    t.add_argument("--refit", choices=("auto", "on", "off"), help="labelled sequences: once "
                   "validation has chosen the steps, train the final model again on every "
                   "training sequence (train + validation) and score that one: auto (where "
                   "the file holds fewer than 500; the project's setting by default), on, or "
                   "off (the validated model is the run's)")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--nproc", type=int, default=1, metavar="N", help="train data-parallel on "
                   "N processes of this machine: one per GPU (NCCL), or N on the CPU (gloo); "
                   "each takes the data layer's batch_size, so a step sees N times as much")
    t.add_argument("--hang-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="with --nproc: end the run when one process shows no sign of life "
                   "for this long (stopped or frozen; default 60)")
    t.add_argument("--jsonl", action="store_true", help="print every record as one JSON line "
                   "on stdout (for programs)")
    t.add_argument("--stdin-commands", action="store_true", help="take pause, resume and stop "
                   "commands, one a line, on stdin; the end of stdin stops the run")
    t.add_argument("--project-dir", metavar="DIR", help="look for the project's relative data "
                   "paths in DIR (default: the project file's folder)")
    add_table_limit(t)

    gen = sub.add_parser("generate", help="generate text (or audio) from a trained run")
    gen.add_argument("run_dir", metavar="RUN_DIR")
    gen.add_argument("--prime", default="", help="text: what the model continues (default: "
                     "a newline)")
    gen.add_argument("-n", type=int, default=500, help="characters per stream (or, with "
                     "--wav and no --seconds, samples)")
    gen.add_argument("--streams", type=int, default=1, metavar="K", help="write K samples at "
                     "once, as one batch (text: printed one after another; audio: "
                     "OUT-1.wav ... OUT-K.wav)")
    gen.add_argument("--temperature", type=float, default=None, help="default: the data's "
                     "own, 0.8 for text and 1.0 for audio (0: always the most likely symbol)")
    gen.add_argument("--top-k", type=int, default=None, help="sample among the K most likely "
                     "symbols only (default 0: all)")
    gen.add_argument("--seed", type=int, default=None, help="the same seed writes the same on "
                     "the same device")
    gen.add_argument("--seconds", type=float, help="audio: seconds to generate")
    gen.add_argument("--wav", metavar="OUT.wav", help="audio: write the result here")
    add_checkpoint(gen)
    gen.add_argument("--device", default="auto", metavar="auto|cpu|cuda[:N]",
                     help="auto (default): the device the run trained on, when this machine "
                     "has it, else the CPU")
    gen.add_argument("--no-cuda-graphs", action="store_true", help="run every step eagerly "
                     "on a GPU")

    ex = sub.add_parser("export", help="write a project or a trained run as ONNX, standalone "
                        "PyTorch code or a Caffe/MyCaffe prototxt")
    ex.add_argument("source", metavar="PROJECT_OR_RUN_DIR")
    ex.add_argument("--format", required=True, choices=("onnx", "pytorch", "prototxt"))
    ex.add_argument("--out", required=True, metavar="PATH", help="onnx: the .onnx file; "
                    "pytorch: a folder; prototxt: a folder (or the net's .prototxt file)")
    ex.add_argument("--unrolled", action="store_true", help="onnx: write the recurrent layers "
                    "as their unrolled per-step net (fixes the number of steps)")
    ex.add_argument("--steps", type=int, help="with --unrolled: the steps to unroll over "
                    "(default: the project's sequence length)")
    add_checkpoint(ex)

    im = sub.add_parser("import", help="read an ONNX model (with its weights) or a "
                        "Caffe/MyCaffe train_val.prototxt (and solver) into a project")
    im.add_argument("file", metavar="FILE.onnx|FILE.prototxt")
    im.add_argument("--run", metavar="RUN_DIR", help="onnx: also write the model's weights as "
                    "a run folder (what generate, evaluate, inspect, export and train --resume "
                    "read)")
    im.add_argument("--solver", metavar="FILE", help="the solver.prototxt to read the solver "
                    "settings from")
    im.add_argument("--data", metavar="FILE", help="what feeds the net's input: a text file or "
                    "corpus name (default tinyshakespeare), a .wav file, or (onnx) labelled "
                    "sequences")
    im.add_argument("--normalize", action="store_true", help="onnx, a model from elsewhere: "
                    "z-score its input features by the data's statistics (by default they are "
                    "read as they are, as the model was given them)")
    im.add_argument("--out", required=True, metavar="PROJECT.json")

    i = sub.add_parser("init", help="write a ready-to-train project for a data file (a CSV "
                       "or .npy series to forecast, or labelled sequences in .ts or CSV)")
    i.add_argument("--data", required=True, metavar="FILE")
    i.add_argument("--task", choices=("classify", "forecast"), help="default: guessed from "
                   "the file")
    i.add_argument("--target", metavar="COLUMN", help="forecast: the column(s) to forecast, "
                   "separated by commas; classify (CSV): the label column")
    i.add_argument("--horizon", type=int, metavar="STEPS", help="forecast: how many steps "
                   "ahead (default 1)")
    nets = designs.NET_WORDS
    i.add_argument("--net", choices=tuple(nets), default=next(iter(nets)),
                   help="classify: " + "; ".join(f"{net}, {words}" for net, words in
                                                  nets.items()) + " (default: %(default)s)")
    i.add_argument("--head", choices=("auto", "ridge", "adam"), default="auto",
                   help="classify with MiniRocket: auto (default): the head cross-validation "
                   "on the training sequences prefers; ridge: an InnerProduct solved in "
                   "closed form; adam: BatchNorm -> InnerProduct learned by Adam")
    i.add_argument("--out", metavar="PROJECT.json", help="default: the file's name with "
                   ".json, in the working folder")
    add_table_limit(i)

    e = sub.add_parser("evaluate", help="score a forecasting or classification run (or the "
                       "ensemble of several) on its test split")
    e.add_argument("run_dir", metavar="RUN_DIR", nargs="+", help="a run folder; several "
                   "(runs of one task and data, as search --refit-seeds trains) are scored "
                   "as one ensemble: their class probabilities or forecasts averaged, each "
                   "run's own score beside it")
    e.add_argument("--data", metavar="FILE", help="score every window or sequence of this "
                   "file instead")
    add_checkpoint(e)
    e.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    e.add_argument("--json", action="store_true")
    add_table_limit(e)

    pr = sub.add_parser("predict", help="classify the sequences of a file, or forecast the "
                        "next values of a series, with a trained run (or the ensemble of "
                        "several)")
    pr.add_argument("run_dir", metavar="RUN_DIR", nargs="+", help="a run folder; several "
                    "(runs of one task and data) predict as one ensemble: their class "
                    "probabilities or forecasts averaged")
    pr.add_argument("--input", required=True, metavar="FILE")
    pr.add_argument("--out", metavar="FILE.csv", help="write the CSV here (default: print it)")
    add_checkpoint(pr)
    pr.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    add_table_limit(pr)

    ins = sub.add_parser("inspect", help="show what a trained run's recurrent layers do on an "
                         "input, step by step: gates, states, surprise and gradient flow")
    ins.add_argument("run_dir", metavar="RUN_DIR")
    ins.add_argument("--text", help="text runs: the text to read (default: a piece of the "
                     "held-out data); a classifier: the test sequence's number (from 0) or "
                     "'class NAME'; a forecaster: the window's number or the time its "
                     "forecast starts (default: the first of the test split)")
    ins.add_argument("--steps", type=int, default=None, help="length of the held-out piece "
                     "read when no --text is given (default 100)")
    ins.add_argument("--layer", metavar="NAME", help="only this recurrent layer (lstm1) or "
                     "level (lstm1/L1)")
    ins.add_argument("--parity", action="store_true", help="also the per-step difference "
                     "between the engines for these weights")
    add_checkpoint(ins)
    ins.add_argument("--device", choices=("auto", "cpu", "cuda"), default="cpu")
    ins.add_argument("--json", action="store_true", help="print JSON for machines")
    add_table_limit(ins)

    add_table_limit(add_search(sub))

    d = sub.add_parser("docs", help="open the documentation in the browser, built first when "
                       "the code or its pages changed")
    d.add_argument("--layer", metavar="TYPE", help="open it at this layer type's section of the "
                   "layer reference (e.g. Conv1D)")
    d.add_argument("--no-open", action="store_true", help="print where the documentation is "
                   "instead of opening it")
    return p


def add_checkpoint(command) -> None:
    """``--checkpoint``: which of a run's models the command reads."""
    command.add_argument("--checkpoint", choices=("best", "last", "validated"), default="best",
                         help="best (default): the run's model, its final model trained on "
                         "every training sequence where it trained one, else the checkpoint "
                         "of the lowest validation loss; validated: that checkpoint always; "
                         "last: the last step's")


def add_table_limit(command) -> None:
    """``--max-table-gb``: for the commands that read data tables."""
    command.add_argument("--max-table-gb", type=float, metavar="GB", help="read a CSV table "
                         "of up to GB gigabytes (a larger one is refused at once; without "
                         "it, a few GB)")


def parse(argv: list[str]) -> argparse.Namespace:
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["gui"] + argv
    args = build_parser().parse_args(argv)
    args.argv = list(argv)  # as typed: a command that stops short says how to go on
    return args


def run(args: argparse.Namespace) -> int:
    gb = getattr(args, "max_table_gb", None)
    if gb is None:
        return command(args)
    if not gb > 0:
        raise UserError(f"--max-table-gb must be above 0 (it is {gb:g})")
    from designer.training.data.csv_reader import GB, size_limit_of
    with size_limit_of(round(gb * GB)):
        return command(args)


def command(args: argparse.Namespace) -> int:
    """Run the command ``args`` name."""
    cmd = args.command
    if cmd == "validate":
        from designer.graph.commands import validate
        deep = None
        if args.deep:
            from designer.training.run.smoke import smoke_dict as deep
        from designer.monitor.capacity import named_capacity
        return validate(args.project, as_json=args.json, deep=deep, room=named_capacity,
                        device=args.device)
    if cmd in ("parity", "unroll", "bench"):
        from designer.engines.measure import commands
        return getattr(commands, cmd)(args)
    if cmd in ("export", "import"):
        from designer.exchange import commands as exchange
        return exchange.export(args) if cmd == "export" else exchange.import_(args)
    if cmd == "search":
        from designer.search.command import search
        return search(args)
    if cmd == "docs":
        from designer.docs.command import docs
        return docs(args)
    if cmd in ("train", "generate", "init", "evaluate", "predict", "inspect"):
        from designer.training import commands
        return getattr(commands, cmd)(args)
    from designer.ui.shell.app import main as gui_main
    return gui_main(args, DEFAULT_PROJECT)


def hear_ctrl_c() -> None:
    """Let Ctrl-C (SIGINT) reach the command, even when whoever started it ignored SIGINT.

    A script's background job (``cmd &`` without job control) starts with SIGINT ignored,
    and Python then installs no KeyboardInterrupt of its own: the command would run on through
    every Ctrl-C and every ``kill -INT``. Every command here promises that Ctrl-C stops it.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    hear_ctrl_c()
    from designer.cells import CellLoadError, load
    try:
        load()  # the recurrent cells register their layers (and, when needed, their engines)
    except CellLoadError as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return 2
    try:
        return run(args)
    except KeyboardInterrupt as e:  # every command ended by Ctrl-C: 130, the shell's code
        said = str(e)  # how to go on, when the command has something to go on from
        print(f"rnn-designer: interrupted{'; ' + said if said else ''}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of the output stopped early (| head): not an error
        sys.stderr.close()
        return 0
    except UserError as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return e.code
