"""Training records as a person reads them: one formatter that the window's Output log, its
status bar and the ``rnn-designer train`` command line all share.

The loop yields plain records (``{"kind": "train", "step": 50, "loss": 1.93, ...}``); the
`RecordFormatter` turns each into a `Told`: the lines a log shows (each with a tone: plain,
muted, a heading, strong, a warning, an error), the status line a window shows beside its
progress bar, a passing message, and the short fields of a progress bar. There is one handler
per record kind, registered in a table as Keras registers callbacks (``on_train``,
``on_val``...); a kind nobody handles says nothing. Plain data in, text out: no Qt, no torch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

PLAIN, MUTED, HEADING, STRONG, WARNING, ERROR = (
    "plain", "muted", "heading", "strong", "warning", "error")

ENGINE_LABELS = {"CUDNN": "cuDNN", "CAFFE": "unrolled", "PERSIST": "persistent",
                 "AUTO": "auto", "SCAN": "parallel scan", "CHUNK": "chunkwise",
                 "FUSED": "fused"}

HANDLERS: dict = {}   # record kind -> the RecordFormatter method that reads it


def on(kind: str):
    """Register the decorated method as the reader of records of ``kind``."""
    def register(method):
        HANDLERS[kind] = method
        return method
    return register


@dataclass(frozen=True)
class Line:
    """One line of a log; ``scored``: the text comes with each character's surprise and the
    model's top guesses there (``{"surprise": [...], "top": [...]}``), for a log that can
    colour it."""
    text: str
    tone: str = PLAIN
    scored: dict | None = None
    detail: bool = False   # it details the line above (a log may indent it)


@dataclass
class Told:
    """What one record tells.

    Attributes
    ----------
    lines
        What a log shows of it, in order (none: a log says nothing).
    status
        The status line beside a progress bar (``None``: leave the line as it is).
    message
        A passing message (a status bar's), or ``None``.
    fields
        Short values for a progress bar's tail (``loss``, ``acc``, ``rmse``, ``tok_s``).
    progress
        A training-progress line a log shows only now and then (the ``train`` records).
    begins
        ``(step, steps)`` when the run's steps begin (a progress bar opens there).
    ends
        The run has ended (a progress bar closes).
    detail
        Only a full log wants it (checkpoints saved, the held-out snippet scored); a
        terminal leaves it out.
    """
    lines: list = field(default_factory=list)
    status: str | None = None
    message: str | None = None
    fields: dict = field(default_factory=dict)
    progress: bool = False
    begins: tuple | None = None
    ends: bool = False
    detail: bool = False


def engines_text(engines: dict) -> str:
    """``{"lstm1": "CUDNN"}`` -> ``"cuDNN"``; mixed engines are named per layer."""
    if not engines:
        return "no recurrent layer"
    names = {ENGINE_LABELS.get(e, e) for e in engines.values()}
    if len(names) == 1:
        return names.pop()
    return ", ".join(f"{k} {ENGINE_LABELS.get(v, v)}" for k, v in engines.items())


def device_text(device: str | None, name: str | None = None) -> str:
    """A device as a person names it: ``CPU``, ``2 x CPU``, ``H200``, ``CUDA:1``."""
    if not device:
        return "?"
    if device == "cpu":  # "2 x CPU" for a run on two processes
        return name.split(" (")[0] if name and " x CPU" in name else "CPU"
    if name:
        return name.replace("NVIDIA ", "")
    return device.upper()


def loss_text(nats: float | None, data: str | None = None) -> str:
    """A cross-entropy in nats and bits; a regression loss (a forecaster's) as it is."""
    if nats is None or not math.isfinite(nats):
        return "not a number"
    if data == "series":
        return f"{nats:.4g}"
    return f"{nats:.4f} nats ({nats / math.log(2):.3f} bits)"


def duration_text(seconds: float) -> str:
    """``42 s``, ``12 min``, ``2.5 h``."""
    seconds = max(0, int(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds // 60} min"
    return f"{seconds / 3600:.1f} h"


def mean_surprise(surprise: list) -> float | None:
    """The mean of the finite values of a per-character surprise (``None``: none)."""
    values = [s for s in surprise if s is not None and math.isfinite(s)]
    return sum(values) / len(values) if values else None


class RecordFormatter:
    """Reads one run's records (see the module's docstring).

    Parameters
    ----------
    number
        The run's number in a window's session (``#2``): lines about the run carry it.
    data
        The run's data kind (``text``, ``series``...): a forecaster's loss is no
        cross-entropy.
    steps
        The run's last step, for ``step 50/6,000`` and the time left (a start record
        sets it).
    device
        Where the run trains, as `device_text` says it (a start record sets it).
    title
        What the command line's first line calls the run (its project file).
    """

    def __init__(self, number: int | None = None, data: str | None = None,
                 steps: int | None = None, device: str | None = None,
                 title: str | None = None) -> None:
        self.number, self.data, self.steps = number, data, steps
        self.device, self.title = device, title

    def read(self, rec: dict) -> Told:
        """What ``rec`` tells (nothing, for a kind no handler reads)."""
        handler = HANDLERS.get(rec.get("kind"))
        return handler(self, rec) if handler is not None else Told()

    # --------------------------------------------------------------------- the parts --
    @property
    def tag(self) -> str:
        """``#2 `` before a line about run 2 (nothing on the command line)."""
        return f"#{self.number} " if self.number is not None else ""

    @property
    def run_name(self) -> str:
        return f"Run #{self.number}" if self.number is not None else "The run"

    def loss(self, nats: float | None) -> str:
        return loss_text(nats, self.data)

    def where(self, step: int) -> str:
        """``Run #2: step 50/6,000``."""
        return f"{self.run_name}: step {step:,}/{self.steps or 0:,}"

    # ------------------------------------------------------------------- the handlers --
    @on("start")
    def on_start(self, rec: dict) -> Told:
        self.steps = rec.get("steps", self.steps)
        self.device = device_text(rec.get("device"), rec.get("device_name"))
        resumed = " (resumed)" if rec.get("resumed") else ""
        memory = ""
        if rec.get("memory"):
            from designer.graph.memory import size_text
            memory = f", about {size_text(rec['memory'])} of memory"
        what = f"training {self.title} on " if self.title else ""
        lines = [Line(f"{what}{rec['device_name']}, {engines_text(rec.get('engines') or {})}, "
                      f"{rec['params']:,} parameters, {rec['steps']:,} steps{resumed}{memory}",
                      MUTED, detail=True),
                 Line(f"data: {rec['data']}", MUTED, detail=True),
                 Line(f"run folder: {rec['run_dir']}", MUTED, detail=True)]
        return Told(lines, status=first_steps_text(rec.get("device") or ""),
                    begins=(rec.get("step", 0), rec["steps"]))

    @on("note")
    def on_note(self, rec: dict) -> Told:
        return Told([Line(f"note: {rec['message']}", MUTED, detail=True)])

    @on("train")
    def on_train(self, rec: dict) -> Told:
        fields = {"loss": f"{rec['loss']:.3f}"}
        extra = ""
        if rec.get("rmse") is not None:
            fields["rmse"] = f"{rec['rmse']:.3g}"
            extra = f", RMSE {rec['rmse']:.4g}"
        elif rec.get("accuracy") is not None:
            fields["acc"] = f"{rec['accuracy']:.1%}"
            extra = f", accuracy {rec['accuracy']:.1%}"
        fields["tok_s"] = f"{rec['tokens_per_s']:,.0f}"
        line = Line(f"{self.tag}step {rec['step']:,}: loss {self.loss(rec['loss'])}{extra}, "
                    f"{rec['tokens_per_s']:,.0f} tokens/s, {rec['ms_per_step']:.0f} ms/step")
        status = [self.where(rec["step"]), f"loss {rec['loss']:.3f}",
                  f"{rec['tokens_per_s']:,.0f} tokens/s"]
        if self.steps and rec.get("ms_per_step"):
            left = (self.steps - rec["step"]) * rec["ms_per_step"] / 1e3
            status.append(f"{duration_text(left)} left")
        return Told([line], status=SEP.join(status), fields=fields, progress=True)

    @on("val")
    def on_val(self, rec: dict) -> Told:
        extra = ""
        if rec.get("val_rmse") is not None:
            extra = f", RMSE {rec['val_rmse']:.4g}"
        elif rec.get("val_accuracy") is not None:
            extra = f", accuracy {rec['val_accuracy']:.2%}"
        best = bool(rec.get("best"))
        return Told([Line(f"{self.tag}step {rec['step']:,}: validation loss "
                          f"{self.loss(rec['val_loss'])}{extra}{'  (best)' * best}",
                          STRONG if best else PLAIN)])

    @on("sample")
    def on_sample(self, rec: dict) -> Told:
        mean = mean_surprise(rec.get("surprise") or [])
        how = f" (the model's own surprise: {mean:.2f} nats a character)" if mean else ""
        scored = {"surprise": rec["surprise"], "top": rec.get("top") or []} \
            if rec.get("surprise") else None
        return Told([Line(f"\u2014 sample at step {rec['step']:,}{how} \u2014", HEADING),
                     Line(rec["text"], PLAIN, scored), Line("\u2014" * 12, HEADING)])

    @on("probe")
    def on_probe(self, rec: dict) -> Told:
        if not (rec.get("surprise") and rec.get("text")):
            return Told()  # a probe of a sequence run: nothing to read in a log
        return Told([Line(f"\u2014 held-out snippet at step {rec['step']:,}: mean surprise "
                          f"{loss_text(rec['loss'])} \u2014", HEADING),
                     Line(rec["text"], PLAIN, {"surprise": rec["surprise"],
                                               "top": rec.get("top") or []})], detail=True)

    @on("checkpoint")
    def on_checkpoint(self, rec: dict) -> Told:
        return Told([Line(f"checkpoint at step {rec['step']:,} "
                          f"({', '.join(rec['pointers'])})", MUTED, detail=True)],
                    detail=True)

    @on("final")
    def on_final(self, rec: dict) -> Told:
        """The final model trained again on every training sequence: its start, its steps and
        its end."""
        if rec["stage"] == "progress":
            return Told(status=f"{self.run_name}: the final model, on every training sequence: "
                               f"step {rec['step']:,}/{rec['steps']:,}")
        done = rec["stage"] == "done"
        return Told([Line(f"{self.tag}{rec['message']}", STRONG if done else HEADING)],
                    status=f"{self.run_name}: {rec['message']}")

    @on("paused")
    def on_paused(self, rec: dict) -> Told:
        return Told([Line(f"{self.tag}paused at step {rec['step']:,}", MUTED)],
                    status=f"{self.where(rec['step'])}{SEP}paused")

    @on("resumed")
    def on_resumed(self, rec: dict) -> Told:
        return Told([Line(f"{self.tag}resumed at step {rec['step']:,}", MUTED)],
                    status=f"{self.where(rec['step'])}{SEP}resumed")

    @on("warning")
    def on_warning(self, rec: dict) -> Told:
        return Told([Line(f"{self.tag}step {rec['step']:,}: warning: {rec['message']}",
                          WARNING)], message=f"{self.run_name}: {rec['message']}")

    @on("error")
    def on_error(self, rec: dict) -> Told:
        return Told([Line(f"{self.tag}{rec['message']}", ERROR)],
                    message=f"Training stopped: {rec['message']}")

    @on("done")
    def on_done(self, rec: dict) -> Told:
        best = rec.get("best_val_loss")
        best_text = f", best validation loss {self.loss(best)}" if best is not None else ""
        reason = rec["reason"].replace("_", " ")
        head = f"\u25a0 {self.run_name} {reason}" if self.number is not None else reason
        return Told([Line(f"{head} at step {rec['step']:,} after {rec['time']:.1f} s"
                          f"{best_text}", HEADING),
                     Line(f"checkpoints in {rec['run_dir']}"
                          + (f"  ({self.device})" if self.device else ""), MUTED, detail=True)],
                    ends=True)


SEP = "  \u00b7  "


def first_steps_text(device: str) -> str:
    """The status line from a run's start to its first logged step: on a GPU the first step
    compiles and times the kernels for the run's shapes (the log says after it how long)."""
    if device.startswith("cuda"):
        return ("Running the first step: the first run of these shapes on this GPU compiles "
                "and times its kernels, which can take a minute\u2026")
    return "Running the first steps\u2026"


