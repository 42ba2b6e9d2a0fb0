"""One run in progress: what `designer.training.run.loop.train` sets up (data, net, optimizer,
run folder) and the named steps it takes (one optimisation step, the train record, validation,
a checkpoint, a sample, the end). Each step that has something to say yields plain records."""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from designer.engines.net.build import BuildError, Net, detach_state
from designer.engines.net.remembered import fit_from, fitted_state, unfitted
from designer.engines.train_step.step import TrainStep, make_optimizer, set_lr
from designer.graph.project import Project
from designer.graph.settings import adam_l2_note

from designer.training.data import FILE_PARAMS, DataError, open_source
from designer.training.readout.decode import Sampler
from designer.training.readout.inspect import probe_record
from designer.training.readout.probe import held_out_probe
from designer.training.run import checkpoint as C, final
from designer.training.run.distributed import World
from designer.training.run.divergence import DivergenceWatch
from designer.training.run.errors import TrainingError
from designer.training.run.first_step import first_step_notes
from designer.training.run.heads import ClosedFormHeads
from designer.training.run.fits import check_fits
from designer.training.run.options import RunOptions, resolve_device
from designer.training.run.readiness import check_trainable, data_meta, pin_classes
from designer.training.run.resume import restore
from designer.training.run.rundir import RunDir
from designer.training.run.schedule import learning_rate
from designer.training.run.step_records import batch_tokens, streak, summarise
from designer.training.run.validation import evaluate, to_device

ENDED_BY = {"stop": "stopped", "time_limit": "time_limit"}  # a control action -> the reason


class Session:
    """A run set up and under way; ``step``, ``best`` and ``reason`` say where it stands.

    Setting up opens the data, builds the net and its optimizer on every rank (agreeing on
    any failure), creates (or reopens, to resume) the run folder, and restores a checkpoint.
    """

    def __init__(self, project: Project, opts: RunOptions, world: World) -> None:
        self.opts, self.world, self.graph = opts, world, project.graph
        check_trainable(self.graph)
        self.solver, self.cfg = project.solver_settings(), project.training_settings()
        self.data_layer = self.graph.sources()[0]
        if opts.corpus is not None:  # train on another file: V follows it
            self.graph.set_param(self.data_layer, FILE_PARAMS[self.graph.layer(
                self.data_layer).type], str(Path(opts.corpus).resolve()))
        self.device = world.device or resolve_device(opts.device or self.cfg["device"])
        self.seed = self.cfg["seed"] if opts.seed is None else opts.seed
        self.ck = None
        with world.together(local_first=True):  # a corpus downloads once per machine
            self._open_data_and_net(project)
        self.probe = held_out_probe(self.source, opts.probe_steps, quiet=True) \
            if opts.probe_steps and world.is_main else None  # rank 0 reports what it shows
        world.seed_ranks(self.seed)  # the same weights everywhere; each rank its own dropout
        if self.ck is None:
            self._fit_from_data()
        with world.together():  # after the data proved usable; rank 0 writes it
            run = RunDir.create(opts.out, project, resume=opts.resume, writer=world.is_main)
        self.run = RunDir(world.share(str(run.path)), writer=world.is_main)
        self.opt = make_optimizer(self.net.parameters(), self.solver, self.device)
        self.step, self.best, self.carry = 0, math.inf, None
        self.notes = list(self.source.notes)
        if note := adam_l2_note(self.solver):
            self.notes.append("solver: " + note)
        if self.ck is not None:  # every rank, whatever number of them made the checkpoint
            back = restore(self.ck, self.graph, self.net, self.opt, self.source, world,
                           self.seed, self.device)
            self.step, self.best, self.carry = back.step, back.best, back.carry
            self.notes += back.notes
            self.run.truncate_metrics(self.step)
        self.heads = ClosedFormHeads(self.graph, self.net, self.source, self.data_layer,
                                     self.device, world)
        if self.ck is not None:
            self.heads.restore_gradient(self.ck.state.get("gradient_heads"))
        if self.heads.only:
            self.notes.append(f"nothing else in the net learns by gradient: "
                              f"{', '.join(self.heads.names)} solved in closed form is its "
                              "training, so the run takes no steps")
        self._prepare_steps(project)

    def _open_data_and_net(self, project: Project) -> None:
        """Each rank on its own device, before anything is built; rank 0 says a refusal."""
        graph, opts, world = self.graph, self.opts, self.world
        self.memory = check_fits(graph, self.device, opts.engine, self.solver, self.cfg,
                                 world.size, world.local_size)
        if opts.resume:
            try:
                self.ck = C.load(opts.out, "last")
            except C.CheckpointError as e:
                raise TrainingError(str(e), 2) from None
            self.seed = self.ck.meta.get("seed", self.seed)
        try:
            self.source = open_source(graph.layer(self.data_layer), _project_dir(project),
                                      opts.corpus, opts.download_progress, self.seed,
                                      run_meta=opts.data_meta)
            world.shard(self.source)  # each rank its own rows of every batch
        except DataError as e:
            raise TrainingError(str(e), 2) from None
        source = self.source
        if "V" in graph.dims and source.num_classes != graph.dims["V"] and \
                source.kind == "text":
            raise TrainingError(f"{source.path} has {source.num_classes} distinct characters, "
                                f"but the net was sized for V = {graph.dims['V']}", 2)
        pin_classes(graph, source)
        torch.manual_seed(self.seed)
        try:
            self.net = Net(graph, opts.engine).to(self.device)
        except BuildError as e:
            raise TrainingError(str(e), 1) from None
        if hasattr(source, "target_scale"):
            self.net.set_unit_scale(source.target_scale)

    def _fit_from_data(self) -> None:
        """Layers fitted from data rather than trained (MiniRocket's biases) see the first
        training batch; rank 0's fit is then every rank's. A net without them draws none."""
        if not unfitted(self.net):
            return
        feeds = to_device(self.source.next_batch("train"), self.data_layer, self.device)
        if not fit_from(self.net, feeds) or self.world.size == 1:
            return
        self.net.load_state_dict(self.world.share(fitted_state(self.net)), strict=False)

    def _prepare_steps(self, project: Project) -> None:
        """The step function, the carried state, and what the steps keep between them."""
        cfg, device, world = self.cfg, self.device, self.world
        autocast = torch.bfloat16 if cfg["precision"] == "bf16" and device.type == "cuda" \
            else None
        self.step_fn = TrainStep(self.net, self.opt, self.solver["clip_gradients"],
                                 cfg["cuda_graphs"], autocast,
                                 world.data_parallel())  # with several ranks, DDP
        if self.source.carries_state and self.carry is None:
            self.carry = self.net.initial_state(self.source.batch_size, device)
        self.stop_at = 0 if self.heads.only else self.opts.steps or self.solver["max_steps"]
        self.refit = self.opts.refit or cfg["refit"]
        self.device_name = world.device_name(_device_name(device))
        self.meta_base = {"project": project.to_dict(), "engines": dict(self.net.engines),
                          "seed": self.seed, "device": str(device),
                          "device_name": self.device_name, "world_size": world.size,
                          "data": data_meta(self.source), **self.opts.extra_meta}
        self.sampler = Sampler(self.net, device) \
            if self.source.kind == "text" and world.is_main else None
        self.pending, self.nan_streak, self.reason = [], 0, "finished"
        self.diverging = DivergenceWatch(cfg["divergence_factor"], cfg["divergence_steps"])
        if self.ck is not None:  # a resumed run remembers the best loss it had reached
            self.diverging.best = min(
                (r["loss"] for r in self.run.read_metrics() if r.get("kind") == "train"
                 and isinstance(r.get("loss"), (int, float))), default=math.inf)
        self.evals_without_best = 0
        self.first_step = self.step  # the notes after the first step: first_step_notes
        self.steps_since_log = self.tokens_since_log = 0

    # ---- the named steps, in the order train() takes them -------------------------------
    def start(self) -> Iterator[dict]:
        """The start record, then the data's and the checkpoint's notes; starts the clocks."""
        source, world = self.source, self.world
        yield {"kind": "start", "step": self.step, "steps": self.stop_at,
               "device": str(self.device), "device_name": self.device_name,
               "world_size": world.size, "devices": world.gather(str(self.device)),
               "run_dir": str(self.run.path), "engines": dict(self.net.engines),
               "params": sum(p.numel() for p in self.net.parameters()),
               "data": source.describe(), "notes": self.notes, "seed": self.seed,
               "resumed": self.ck is not None,
               "memory": None if self.memory is None else self.memory.total,
               "vocab": source.vocab, "num_classes": source.num_classes,
               "targets": list(getattr(source, "targets", ())) or None,
               "split": {s: source.split_size(s) for s in ("train", "val", "test")}
               if source.kind == "classes" else None,
               "probe": None if self.probe is None else self.probe.to_dict()}
        for note in self.notes:
            yield {"kind": "note", "step": self.step, "message": note}
        self.t_start = self.t_log = time.perf_counter()

    def control(self, token) -> Iterator[dict]:
        """Stop, pause or go on (every rank the same); returns ``run``, ``stop`` or
        ``time_limit``, after waiting out a pause."""
        limit = self.opts.time_limit
        time_up = bool(limit) and time.perf_counter() - self.t_start >= limit
        action = self.world.control(token, time_up)
        if action == "pause":
            yield {"kind": "paused", "step": self.step}
            action = self.world.wait_while_paused(token)
            if action == "run":
                yield {"kind": "resumed", "step": self.step}
                self.t_log = time.perf_counter()
        return action

    def optimise(self) -> Iterator[dict]:
        """One optimisation step at the scheduled learning rate; after the first, its notes."""
        lr = learning_rate(self.step, self.solver)
        set_lr(self.opt, lr)
        batch = self.source.next_batch("train")
        feeds = to_device(batch, self.data_layer, self.device)
        t_step = time.perf_counter()
        try:
            out = self.step_fn(feeds, self.carry)
        except torch.cuda.OutOfMemoryError:
            del feeds, batch
            _free_cuda()
            raise TrainingError(
                f"the GPU ran out of memory at batch size {self.source.batch_size} and "
                f"sequence length {self.source.seq_len}; lower the data layer's batch_size "
                "(or seq_len) and train again", 1) from None
        if self.carry is not None:
            self.carry = out.state if out.state is not None else detach_state(self.carry)
        self.step += 1
        if self.step == self.first_step + 1:
            for note in first_step_notes(self.net, time.perf_counter() - t_step, self.device):
                yield {"kind": "note", "step": self.step, "message": note}
        tap = self.opts.tap
        if tap is not None and tap.due(self.step):
            yield {"kind": "weights", "step": self.step, "weights": _weights_copy(self.net)}
        self.pending.append((out, lr))
        self.steps_since_log += 1
        self.tokens_since_log += batch_tokens(batch) * self.world.size

    def due(self, interval: str, at_end: bool = True) -> bool:
        """Whether the step is on ``cfg[interval]``; the last step is always due if
        ``at_end``, never otherwise."""
        on = self.step % self.cfg[interval] == 0
        return on or self.step == self.stop_at if at_end else on and self.step < self.stop_at

    def report(self) -> Iterator[dict]:
        """The train record of the steps since the last, and a divergence warning; returns
        False when the loss has not been finite for ``nan_patience`` steps (the run ends)."""
        cfg, step = self.cfg, self.step
        record, self.nan_streak = summarise(self.net, self.pending, step, self.nan_streak,
                                            self.t_log, self.steps_since_log,
                                            self.tokens_since_log, self.device)
        record["time"] = time.perf_counter() - self.t_start
        record["epoch"] = getattr(self.source, "epoch", None)
        record["world_size"] = self.world.size
        if self.step_fn.graph_note and step == cfg["log_interval"]:
            yield {"kind": "note", "step": step, "message": f"CUDA graph {self.step_fn.graph_note}"}
        self.run.log(record)
        yield record
        warning = self.diverging.update(step, record["loss"])
        if warning:
            warning["time"] = record["time"]
            self.run.log(warning)
            yield warning
        self.pending, self.steps_since_log, self.tokens_since_log = [], 0, 0
        self.t_log = time.perf_counter()
        if self.nan_streak >= cfg["nan_patience"]:
            self.reason = "nan"
            yield {"kind": "error", "step": step, "time": record["time"], "message": (
                f"the loss was not a finite number for {self.nan_streak} steps in a row; the "
                "run stopped and its last good checkpoint is kept (try a lower base_lr or "
                "gradient clipping)")}
            return False
        return True

    def solve_only(self) -> Iterator[dict]:
        """A net whose only learning is its closed-form heads: solved, validated and kept
        at step 0."""
        yield from self.validate()
        yield self.save(("last",), {})

    def solved(self) -> Iterator[dict]:
        """A note for each closed-form head solved at this step (`heads`)."""
        for note in self.heads.solve(self.step):
            yield {"kind": "note", "step": self.step, "message": note}

    def validate(self) -> Iterator[dict]:
        """The validation record (and the probe's), a checkpoint when it is the best yet;
        returns False when ``patience`` evaluations passed without a better one. Heads
        solved in closed form are solved first and stand in while it runs."""
        yield from self.solved()
        with self.heads.scored(self.step):
            go_on = yield from self._validate()
        return go_on

    def _validate(self) -> Iterator[dict]:
        result = evaluate(self.net, self.source, self.cfg["eval_batches"], self.device,
                          self.data_layer, world=self.world)
        seen = probe_record(self.net, self.probe, self.step)  # rank 0's alone has a probe
        if result and seen is not None:
            result["gate_saturation"] = seen.pop("gate_saturation")
        go_on = True
        if result:
            is_best = result["val_loss"] < self.best
            if is_best:
                self.best, self.evals_without_best = result["val_loss"], 0
            else:
                self.evals_without_best += 1
            record = {"kind": "val", "step": self.step, **result, "best": is_best,
                      "best_val_loss": self.best, "time": time.perf_counter() - self.t_start}
            self.run.log(record)
            yield record
            if seen is not None and seen.get("text") is not None:
                yield seen
            if is_best:
                yield self.save(("best",), result)
            if self.cfg["patience"] and self.evals_without_best >= self.cfg["patience"]:
                self.reason, go_on = "early_stop", False
        if go_on:
            self.t_log = time.perf_counter()
        return go_on

    def checkpoint(self) -> Iterator[dict]:
        """The ``last`` checkpoint, unless the latest steps were not finite."""
        if streak(self.pending, self.nan_streak) == 0:  # never in a run of bad steps
            yield self.save(("last",), {})
        self.t_log = time.perf_counter()

    def sampling_due(self) -> bool:
        interval = self.cfg["sample_interval"]
        return bool(self.sampler and interval and self.step % interval == 0)

    def sample(self) -> Iterator[dict]:
        """A sample record: the text, and per character its surprise and the top guesses."""
        source, cfg = self.source, self.cfg
        prime = "\n" if "\n" in source.vocab else source.vocab[0]
        surprise, top = [], []

        def scored(_, nats: float, guesses: list) -> None:
            surprise.append(round(nats, 5))
            top.append([[j, round(p, 5)] for j, p in guesses])

        ids = self.sampler.sample(source.encode(prime), cfg["sample_length"],
                                  cfg["sample_temperature"], 0, seed=self.step,
                                  on_scored=scored)
        yield {"kind": "sample", "step": self.step, "text": source.decode(ids),
               "surprise": surprise, "top": top}
        self.t_log = time.perf_counter()

    def end(self) -> Iterator[dict]:
        """The last checkpoint (unless the run ended on bad steps or took none)."""
        if self.reason != "nan" and self.step > (self.ck.step if self.ck else 0):
            yield self.save(("last",), {})

    def trains_final(self) -> bool:
        """Whether the run, ended as it did, now trains its final model on every training
        sequence (`final`)."""
        return self.reason in final.ENDS and final.wanted(self.refit, self.source)

    def done(self) -> dict:
        """The done record."""
        return {"kind": "done", "step": self.step, "reason": self.reason,
                "best_val_loss": None if math.isinf(self.best) else self.best,
                "time": time.perf_counter() - self.t_start, "run_dir": str(self.run.path)}

    def save(self, pointers, extra) -> dict:
        """A checkpoint of the weights, optimizer, data cursors, carried state and RNG."""
        world = self.world
        state = {"optimizer": self.opt.state_dict(), "data": self.source.state_dict(),
                 "carry": world.global_carry(self.carry), **world.rng_states()}
        if self.heads:  # the solved heads are saved; the gradient's own go on from here
            state["gradient_heads"] = self.heads.gradient_state()
        meta = {**self.meta_base, "best_val_loss": None if math.isinf(self.best) else self.best,
                **extra}
        if world.is_main:  # the weights and the optimizer are the same on every rank
            with self.heads.scored(self.step):
                if self.heads:
                    meta["closed_form"] = self.heads.summary()
                C.save(self.run.path, self.step, self.net.state_dict(), state, meta, pointers)
        return {"kind": "checkpoint", "step": self.step,
                "path": str(C.checkpoint_folder(self.run.path, self.step)),
                "pointers": list(pointers)}


# --------------------------------------------------------------------------------- helpers --
def _weights_copy(net: Net) -> dict:
    """The net's tensors as numpy arrays of their own (the loop goes on changing its own)."""
    return {k: v.detach().to("cpu", copy=True).numpy() for k, v in net.state_dict().items()}


def _project_dir(project: Project):
    """Where the project's relative data paths are found: the graph's folder (which may be
    another than the project file's, for a snapshot run in a child process)."""
    return project.graph.project_dir or (project.path and project.path.parent)


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    threads = torch.get_num_threads()
    return f"CPU ({threads} thread{'s' if threads != 1 else ''})"


def _free_cuda() -> None:
    import gc
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
