"""The training loop: a plain generator that reads top to bottom and yields plain records.

    for record in train(project, RunOptions(out="runs/x"), token):
        print(record)            # {"kind": "train", "step": 10, "loss": 3.2, ...}

Each step: check the stop/pause token -> set the learning rate -> take a batch -> one
optimisation step (``designer.engines.step.TrainStep``: eager, or replayed from a CUDA graph)
-> every ``log_interval`` steps, read the losses back and yield a record -> validate, sample and
checkpoint on their intervals. Only plain data (numbers, strings) leaves the loop, never live
tensors, so a Qt worker can pass the records across threads as they are.

In a data-parallel run (``RunOptions.world``, `designer.training.run.distributed`) every process
runs this same loop on its own share of each batch, and they agree on every decision (stop,
skip, validate, save) at the same step; rank 0 alone writes the run folder, samples and
inspects, so its records are the run's.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import torch

from designer.engines.build import BuildError, Net, detach_state
from designer.engines.step import TrainStep, make_optimizer, set_lr
from designer.graph.project import Project
from designer.graph.validate import LOSS_TYPES

from ..data import FILE_PARAMS, DataError, open_source
from ..readout.decode import Sampler
from ..readout.inspect import probe_record
from ..readout.probe import DEFAULT_STEPS, held_out_probe
from . import checkpoint as C
from .control import StopToken, WeightsTap
from .distributed import World
from .divergence import DivergenceWatch
from .errors import TrainingError
from .first_step import first_step_notes
from .fits import check_fits
from .resume import restore
from .rundir import RunDir
from .schedule import learning_rate
from .step_records import batch_tokens, streak, summarise
from .validation import evaluate, to_device


@dataclass
class RunOptions:
    """What a run is asked to do beyond the project's own settings."""

    out: str | Path | None = None        # the run folder (default: runs/<project>-<time>)
    resume: bool = False                 # continue from the run folder's last checkpoint
    steps: int | None = None             # stop at this step (default: the solver's max_steps)
    device: str | None = None            # auto, cpu or cuda (default: the project's)
    engine: str | None = None            # run every LSTM/GRU/RNN on cudnn or caffe
    seed: int | None = None
    corpus: str | Path | None = None     # train on this file instead of the data layer's
    time_limit: float | None = None      # seconds
    download_progress: Callable | None = None
    world: World | None = None           # this process's place in a data-parallel run
    extra_meta: dict = field(default_factory=dict)
    tap: WeightsTap | None = None        # hands out copies of the weights when asked
    probe_steps: int = DEFAULT_STEPS     # the held-out snippet inspected at evals (0: none)


def resolve_device(name: str) -> torch.device:
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` -> a device, or a ``TrainingError``."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise TrainingError("the CUDA device was asked for, but no CUDA GPU is available "
                                "(use --device cpu)", 2)
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise TrainingError(f"there is no GPU {dev.index}: this machine has "
                                f"{torch.cuda.device_count()}", 2)
        return dev
    return torch.device(name)


def train(project: Project, opts: RunOptions, token: StopToken | None = None
          ) -> Iterator[dict]:
    """Train ``project``; yields plain records until the run ends (see the module doc)."""
    token = token or StopToken()
    world = opts.world or World()  # this process's share of a data-parallel run, or all of it
    solver, cfg = project.solver_settings(), project.training_settings()
    graph = project.graph
    errors = graph.errors()
    if errors:  # a design that cannot train is bad input, like a broken file
        raise TrainingError(f"the net is not valid: {errors[0]}", 2)
    if not graph.sources():
        raise TrainingError("the net has no data layer to train on", 2)
    if not any(layer.type in LOSS_TYPES for layer in graph.layers()):
        raise TrainingError(f"the net has no loss layer ({', '.join(LOSS_TYPES)}), so there "
                            "is nothing to minimise", 2)
    data_layer = graph.sources()[0]
    if opts.corpus is not None:  # train on another file: V follows it
        graph.set_param(data_layer, FILE_PARAMS[graph.layer(data_layer).type],
                        str(Path(opts.corpus).resolve()))
    device = world.device or resolve_device(opts.device or cfg["device"])
    seed = cfg["seed"] if opts.seed is None else opts.seed
    ck = None

    # ---- data, net, optimizer (every rank, agreeing on any failure) ----------------------
    with world.together(local_first=True):  # a corpus downloads once per machine
        # each rank on its own device, before anything is built; rank 0 says a refusal
        memory = check_fits(graph, device, opts.engine, solver, cfg, world.size,
                            world.local_size)
        if opts.resume:
            try:
                ck = C.load(opts.out, "last")
            except C.CheckpointError as e:
                raise TrainingError(str(e), 2) from None
            seed = ck.meta.get("seed", seed)
        try:
            source = open_source(graph.layer(data_layer), _project_dir(project), opts.corpus,
                                 opts.download_progress, seed)
            world.shard(source)  # each rank its own rows of every batch
        except DataError as e:
            raise TrainingError(str(e), 2) from None
        if "V" in graph.dims and source.num_classes != graph.dims["V"] and \
                source.kind == "text":
            raise TrainingError(f"{source.path} has {source.num_classes} distinct characters, "
                                f"but the net was sized for V = {graph.dims['V']}", 2)
        _pin_classes(graph, source)
        torch.manual_seed(seed)
        try:
            net = Net(graph, opts.engine).to(device)
        except BuildError as e:
            raise TrainingError(str(e), 1) from None
        if hasattr(source, "target_scale"):
            net.set_unit_scale(source.target_scale)
    probe = held_out_probe(source, opts.probe_steps, quiet=True) \
        if opts.probe_steps and world.is_main else None  # rank 0 reports what it shows
    world.seed_ranks(seed)  # the same weights everywhere; each rank its own dropout
    with world.together():  # after the data proved usable; rank 0 writes it
        run = RunDir.create(opts.out, project, resume=opts.resume, writer=world.is_main)
    run = RunDir(world.share(str(run.path)), writer=world.is_main)
    opt = make_optimizer(net.parameters(), solver, device)
    step, best, carry, notes = 0, math.inf, None, list(source.notes)
    if ck is not None:  # every rank, whatever number of them made the checkpoint
        back = restore(ck, graph, net, opt, source, world, seed, device)
        step, best, carry, notes = back.step, back.best, back.carry, notes + back.notes
        run.truncate_metrics(step)
    autocast = torch.bfloat16 if cfg["precision"] == "bf16" and device.type == "cuda" else None
    step_fn = TrainStep(net, opt, solver["clip_gradients"], cfg["cuda_graphs"], autocast,
                        world.data_parallel())  # with several ranks, DDP: rank 0's weights
    if source.carries_state and carry is None:
        carry = net.initial_state(source.batch_size, device)
    stop_at = opts.steps or solver["max_steps"]
    device_name = world.device_name(_device_name(device))
    meta_base = {"project": project.to_dict(), "engines": dict(net.engines), "seed": seed,
                 "device": str(device), "device_name": device_name, "world_size": world.size,
                 "data": _data_meta(source), **opts.extra_meta}

    def save(pointers, extra) -> dict:
        state = {"optimizer": opt.state_dict(), "data": source.state_dict(),
                 "carry": world.global_carry(carry), **world.rng_states()}
        meta = {**meta_base, "best_val_loss": None if math.isinf(best) else best, **extra}
        if world.is_main:  # the weights and the optimizer are the same on every rank
            C.save(run.path, step, net.state_dict(), state, meta, pointers)
        return {"kind": "checkpoint", "step": step,
                "path": str(C.checkpoint_folder(run.path, step)), "pointers": list(pointers)}

    yield {"kind": "start", "step": step, "steps": stop_at, "device": str(device),
           "device_name": device_name, "world_size": world.size,
           "devices": world.gather(str(device)), "run_dir": str(run.path),
           "engines": dict(net.engines), "params": sum(p.numel() for p in net.parameters()),
           "data": source.describe(), "notes": notes, "seed": seed,
           "resumed": ck is not None, "memory": None if memory is None else memory.total,
           "vocab": source.vocab, "num_classes": source.num_classes,
           "targets": list(getattr(source, "targets", ())) or None,
           "probe": None if probe is None else probe.to_dict()}
    for note in notes:
        yield {"kind": "note", "step": step, "message": note}

    # ---- the loop ------------------------------------------------------------------------
    sampler = Sampler(net, device) if source.kind == "text" and world.is_main else None
    pending, nan_streak, reason = [], 0, "finished"
    diverging = DivergenceWatch(cfg["divergence_factor"], cfg["divergence_steps"])
    if ck is not None:  # a resumed run remembers the best loss it had reached
        diverging.best = min((r["loss"] for r in run.read_metrics() if r.get("kind") == "train"
                              and isinstance(r.get("loss"), (int, float))), default=math.inf)
    evals_without_best = 0
    t_start = t_log = time.perf_counter()
    first_step = step   # the notes after the first step: first_step_notes
    steps_since_log = tokens_since_log = 0
    while step < stop_at:
        time_up = bool(opts.time_limit) and time.perf_counter() - t_start >= opts.time_limit
        action = world.control(token, time_up)  # every rank does the same
        if action == "pause":
            yield {"kind": "paused", "step": step}
            action = world.wait_while_paused(token)
            if action == "run":
                yield {"kind": "resumed", "step": step}
                t_log = time.perf_counter()
        if action == "stop":
            reason = "stopped"
            break
        if action == "time_limit":
            reason = "time_limit"
            break
        lr = learning_rate(step, solver)
        set_lr(opt, lr)
        batch = source.next_batch("train")
        feeds = to_device(batch, data_layer, device)
        t_step = time.perf_counter()
        try:
            out = step_fn(feeds, carry)
        except torch.cuda.OutOfMemoryError:
            del feeds, batch
            _free_cuda()
            raise TrainingError(
                f"the GPU ran out of memory at batch size {source.batch_size} and sequence "
                f"length {source.seq_len}; lower the data layer's batch_size (or seq_len) and "
                "train again", 1) from None
        if carry is not None:
            carry = out.state if out.state is not None else detach_state(carry)
        step += 1
        if step == first_step + 1:
            for note in first_step_notes(net, time.perf_counter() - t_step, device):
                yield {"kind": "note", "step": step, "message": note}
        if opts.tap is not None and opts.tap.due(step):
            yield {"kind": "weights", "step": step, "weights": _weights_copy(net)}
        pending.append((out, lr))
        steps_since_log += 1
        tokens_since_log += batch_tokens(batch) * world.size

        if step % cfg["log_interval"] == 0 or step == stop_at:
            record, nan_streak = summarise(net, pending, step, nan_streak, t_log,
                                           steps_since_log, tokens_since_log, device)
            record["time"] = time.perf_counter() - t_start
            record["epoch"] = getattr(source, "epoch", None)
            record["world_size"] = world.size
            if step_fn.graph_note and step == cfg["log_interval"]:
                yield {"kind": "note", "step": step, "message": f"CUDA graph {step_fn.graph_note}"}
            run.log(record)
            yield record
            warning = diverging.update(step, record["loss"])
            if warning:
                warning["time"] = record["time"]
                run.log(warning)
                yield warning
            pending, steps_since_log, tokens_since_log = [], 0, 0
            t_log = time.perf_counter()
            if nan_streak >= cfg["nan_patience"]:
                reason = "nan"
                yield {"kind": "error", "step": step, "time": record["time"], "message": (
                    f"the loss was not a finite number for {nan_streak} steps in a row; the "
                    "run stopped and its last good checkpoint is kept (try a lower base_lr or "
                    "gradient clipping)")}
                break

        if step % cfg["eval_interval"] == 0 or step == stop_at:
            result = evaluate(net, source, cfg["eval_batches"], device, data_layer,
                              world=world)
            seen = probe_record(net, probe, step)  # rank 0's, which alone has a probe
            if result and seen is not None:
                result["gate_saturation"] = seen.pop("gate_saturation")
            if result:
                is_best = result["val_loss"] < best
                if is_best:
                    best, evals_without_best = result["val_loss"], 0
                else:
                    evals_without_best += 1
                record = {"kind": "val", "step": step, **result, "best": is_best,
                          "best_val_loss": best, "time": time.perf_counter() - t_start}
                run.log(record)
                yield record
                if seen is not None and seen.get("text") is not None:
                    yield seen
                if is_best:
                    yield save(("best",), result)
                if cfg["patience"] and evals_without_best >= cfg["patience"]:
                    reason = "early_stop"
                    break
            t_log = time.perf_counter()

        if step % cfg["checkpoint_interval"] == 0 and step < stop_at:
            if streak(pending, nan_streak) == 0:  # never checkpoint in a run of bad steps
                yield save(("last",), {})
            t_log = time.perf_counter()

        if sampler and cfg["sample_interval"] and step % cfg["sample_interval"] == 0:
            yield _sample(sampler, source, cfg, step)
            t_log = time.perf_counter()

    # ---- the end ------------------------------------------------------------------------
    if reason != "nan" and step > (ck.step if ck else 0):
        yield save(("last",), {})
    yield {"kind": "done", "step": step, "reason": reason,
           "best_val_loss": None if math.isinf(best) else best,
           "time": time.perf_counter() - t_start, "run_dir": str(run.path)}


# --------------------------------------------------------------------------------- helpers --
def _weights_copy(net: Net) -> dict:
    """The net's tensors as numpy arrays of their own (the loop goes on changing its own)."""
    return {k: v.detach().to("cpu", copy=True).numpy() for k, v in net.state_dict().items()}


def _sample(sampler: Sampler, source, cfg: dict, step: int) -> dict:
    """A sample record: the text, and per character its surprise and the top guesses."""
    prime = "\n" if "\n" in source.vocab else source.vocab[0]
    surprise, top = [], []

    def scored(_, nats: float, guesses: list) -> None:
        surprise.append(round(nats, 5))
        top.append([[j, round(p, 5)] for j, p in guesses])

    ids = sampler.sample(source.encode(prime), cfg["sample_length"],
                         cfg["sample_temperature"], 0, seed=step, on_scored=scored)
    return {"kind": "sample", "step": step, "text": source.decode(ids), "surprise": surprise,
            "top": top}


def _data_meta(source) -> dict:
    meta = {"kind": source.kind, "path": str(Path(source.path).resolve()),
            "num_classes": source.num_classes,
            "vocab": source.vocab}
    if source.kind == "audio":
        meta["codec"] = source.codec
    if hasattr(source, "run_meta"):
        meta.update(source.run_meta())
    return meta


def _project_dir(project: Project):
    """Where the project's relative data paths are found: the graph's folder (which may be
    another than the project file's, for a snapshot run in a child process)."""
    return project.graph.project_dir or (project.path and project.path.parent)


def _pin_classes(graph, source) -> None:
    """Fix K to the classes the data holds (a large CSV's are counted only now)."""
    if source.kind != "classes":
        return
    bound = graph.dims.get("K")
    if bound is not None and bound != source.num_classes:
        raise TrainingError(f"{source.path} gives {source.num_classes} classes, but the net "
                            f"was sized for K = {bound}", 2)
    if bound is None:
        graph.pin_dims({"K": source.num_classes})


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
