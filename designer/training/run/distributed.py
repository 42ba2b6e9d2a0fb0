"""Data-parallel training on torch.distributed: several processes (one per GPU with NCCL, or
several on the CPU with gloo) train the same net, each on its own share of every batch.

The processes are started by ``rnn-designer train --nproc N`` (`designer.training.run.launch`)
or by ``torchrun ... -m designer train``. Each reads its place from torchrun's environment
(``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``); :func:`joined`
sets up the process group and gives the training loop a :class:`World`. For one process the
loop gets ``World()``, whose every method does nothing, so the loop reads the same either way.

What crosses between the processes, and how:

* gradients: DDP (``DistributedDataParallel`` with a static graph) averages them in buckets
  during the backward pass; the whole step, all-reduce included, is one CUDA graph when it is
  captured;
* each step's loss, non-finite flag and accuracy: one small all-reduce inside the step
  (:class:`DataParallel`), so every rank logs the global mean and skips the same steps;
* everything the host decides (stop, pause, the time limit, validation sums, errors while
  setting up, the checkpoint's random and recurrent state): over a CPU (gloo) group, so it
  never waits on the GPU.
"""
from __future__ import annotations

import inspect
import os
from contextlib import contextmanager, nullcontext
from typing import Iterator, Mapping

import numpy as np
import torch
import torch.distributed as dist

from designer.engines.net.build import BuildError

from designer.training.data.errors import DataError
from designer.training.run import checkpoint as C
from designer.training.run.errors import TrainingError

FORESEEN = (TrainingError, DataError, C.CheckpointError, BuildError)


def launched(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process was started as one of several (torchrun or ``--nproc``)."""
    env = os.environ if environ is None else environ
    try:
        return int(env.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        return False


class World:
    """This process's place in a run: ``rank`` of ``size`` processes.

    ``World()`` is a run of one process; :func:`join` makes the others. ``device`` is the
    device this rank trains on (``None`` for one process: the loop picks it);
    ``local_size`` how many of the run's processes share this machine.
    """

    def __init__(self, rank: int = 0, size: int = 1, local_rank: int = 0,
                 device: torch.device | None = None, control=None,
                 local_size: int | None = None) -> None:
        self.rank, self.size, self.local_rank = rank, size, local_rank
        self.local_size = size if local_size is None else local_size
        self.device = device
        self._control = control  # the gloo group for what the host decides

    def __repr__(self) -> str:
        return f"<World rank {self.rank} of {self.size} on {self.device}>"

    @property
    def is_main(self) -> bool:
        """Rank 0: the one that logs, writes the run folder and samples."""
        return self.rank == 0

    # ------------------------------------------------------------------- set-up --
    def rank_seed(self, seed: int, *salt: int) -> int:
        """A seed for this rank, reproducible from the run's seed (and ``salt``)."""
        words = np.random.SeedSequence([int(seed) % 2**64, self.rank, *salt]).generate_state(2)
        return (int(words[0]) << 32 | int(words[1])) % 2**63

    def seed_ranks(self, seed: int) -> None:
        """Give each rank its own random stream (its dropout masks) from the run's seed;
        alone, the run's own stream goes on as it is."""
        if self.size > 1:
            torch.manual_seed(self.rank_seed(seed))

    def shard(self, source) -> None:
        """Have ``source`` serve this rank's share of every batch."""
        if self.size > 1:
            source.shard(self.rank, self.size)

    def data_parallel(self) -> "DataParallel | None":
        """The hooks `TrainStep` needs to train data-parallel (``None`` alone)."""
        return DataParallel(self.size) if self.size > 1 else None

    def device_name(self, name: str) -> str:
        """What the run trains on, for labels: ``name`` alone, ``"2 x NVIDIA H200"`` for
        several ranks."""
        if self.size == 1:
            return name
        names = self.gather(name)
        kinds = list(dict.fromkeys(names))
        return ", ".join(f"{names.count(k)} x {k}" for k in kinds)

    @contextmanager
    def together(self, local_first: bool = False) -> Iterator[None]:
        """Run the block on every rank and agree on how it went.

        If it failed on any rank it fails on all of them, with the first failing rank's
        sentence, as a ``shared`` `TrainingError` (a rank whose own error was not foreseen
        raises it as it is, traceback and all). With ``local_first`` the first process of each
        machine runs the block before the others (a corpus downloads once per machine).
        """
        if self.size == 1:
            yield
            return
        failure = None
        if local_first and self.local_rank != 0:
            self.barrier()
        try:
            yield
        except Exception as e:  # noqa: BLE001 - every failure is agreed on, then raised
            failure = e
        if local_first and self.local_rank == 0:
            self.barrier()
        reports = self.gather(None if failure is None else _report(failure))
        failed = [(rank, report) for rank, report in enumerate(reports) if report is not None]
        if not failed:
            return
        if failure is not None and not isinstance(failure, FORESEEN):
            raise failure
        rank, (message, code) = failed[0]
        if rank != 0:
            message = f"rank {rank} of {self.size}: {message}"
        raise TrainingError(message, code, shared=True) from None

    # ------------------------------------------------------------- every step --
    def control(self, token, time_up: bool) -> str:
        """What every rank does next: ``"run"``, ``"pause"``, ``"stop"`` or
        ``"time_limit"``; a stop, pause or time limit on any rank holds for all."""
        stop, pause, time_up = self._any((token.stopped, token.paused, time_up))
        return "stop" if stop else "time_limit" if time_up else "pause" if pause else "run"

    def wait_while_paused(self, token) -> str:
        """Wait, all together, until no rank is paused; ``"run"`` or ``"stop"``."""
        if self.size == 1:
            token.wait_while_paused()
            return "stop" if token.stopped else "run"
        while True:  # a heartbeat four times a second keeps the ranks in step
            token.wait_while_paused(0.25)
            stop, pause = self._any((token.stopped, token.paused))
            if stop or not pause:
                return "stop" if stop else "run"

    def sum(self, values: list[float]) -> list[float]:
        """Each value summed over the ranks (validation losses and counts)."""
        if self.size == 1:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t, group=self._control)
        return t.tolist()

    def share(self, value):
        """Rank 0's ``value`` on every rank (plain data)."""
        if self.size == 1:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0, group=self._control)
        return box[0]

    def gather(self, value) -> list:
        """Every rank's ``value`` (plain data or CPU tensors), in rank order."""
        if self.size == 1:
            return [value]
        out = [None] * self.size
        dist.all_gather_object(out, value, group=self._control)
        return out

    def barrier(self) -> None:
        if self.size > 1:
            dist.barrier(group=self._control)

    def _any(self, flags) -> list[bool]:
        if self.size == 1:
            return [bool(f) for f in flags]
        t = torch.tensor([int(bool(f)) for f in flags], dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self._control)
        return [bool(v) for v in t.tolist()]

    # -------------------------------------------------------------- checkpoints --
    def rng_states(self) -> dict:
        """The random state for a checkpoint: ``{"rng": ...}`` (rank 0's, which a single
        process resumes from) and, for several ranks, ``"rng_ranks"``: every rank's."""
        if self.size == 1:
            return {"rng": C.rng_state()}
        mine = {"torch": torch.get_rng_state()}
        if self.device is not None and self.device.type == "cuda":
            mine["cuda"] = [torch.cuda.get_rng_state(self.device)]
        states = self.gather(mine)
        return {"rng": states[0], "rng_ranks": states}

    def restore_rng(self, state: dict, seed: int, step: int) -> str | None:
        """Resume the random state of a checkpoint; a note when the checkpoint was made by
        another number of processes and each rank's stream starts afresh from the seed."""
        ranks = state.get("rng_ranks") or [state["rng"]]
        if len(ranks) == self.size:
            mine = ranks[self.rank]
            if self.size == 1:
                C.set_rng_state(mine)
                return None
            torch.set_rng_state(mine["torch"].to(dtype=torch.uint8, device="cpu"))
            if "cuda" in mine and self.device is not None and self.device.type == "cuda":
                torch.cuda.set_rng_state(mine["cuda"][0].to(dtype=torch.uint8, device="cpu"),
                                         self.device)
            return None
        if self.size == 1:  # one process goes on with rank 0's stream
            C.set_rng_state(ranks[0])
            return None
        torch.manual_seed(self.rank_seed(seed, step))
        return (f"the checkpoint was made by {_processes(len(ranks))} and this run has "
                f"{self.size}: each process's random stream (dropout) starts afresh from the "
                "seed")

    def global_carry(self, carry: dict | None) -> dict | None:
        """The carried recurrent state of every rank, on the CPU, joined along the batch
        axis (axis 1 of each ``(levels, N, H)`` tensor) in rank order."""
        if carry is None:
            return None
        local = {k: tuple(t.detach().cpu() for t in v) for k, v in carry.items()}
        if self.size == 1:
            return local
        everyone = self.gather(local)
        return {k: tuple(torch.cat([e[k][i] for e in everyone], dim=1) for i in range(len(v)))
                for k, v in local.items()}

    def local_carry(self, saved: dict | None, batch: int, device) -> dict | None:
        """This rank's part of a checkpoint's carried state, or ``None`` when the state was
        carried for another number of streams (the streams were cut anew: start from
        zeros)."""
        if not saved:
            return None
        whole = batch * self.size
        if any(t.shape[1] != whole for v in saved.values() for t in v):
            return None
        part = slice(self.rank * batch, (self.rank + 1) * batch)
        return {k: tuple(t[:, part].contiguous().to(device) for t in v)
                for k, v in saved.items()}

    # ------------------------------------------------------------------ the end --
    def close(self, together: bool = False) -> None:
        """Leave the process group; ``together`` (every rank ended the same way) first waits
        for the others, so that none tears its connections down while another still uses
        them."""
        if self.size > 1 and dist.is_initialized():
            if together:
                try:
                    self.barrier()
                except Exception:  # noqa: BLE001 - a peer already gone: leave all the same
                    pass
            dist.destroy_process_group()


class DataParallel:
    """What `designer.engines.train_step.step.TrainStep` runs data-parallel with.

    ``wrap`` puts the forward module in DDP, built on the step's side stream (DDP takes hold
    of the gradient accumulators, which must not belong to the default stream when the step
    is captured); with a static graph, since every step uses the same parameters, which also
    lets parameters that get no gradient be. ``agree`` averages a step's loss and metrics
    and ORs its non-finite flag across the ranks, in one all-reduce.
    """

    capture_warmup = 11  # DDP logs timings, syncing the host, in its first ten iterations

    def __init__(self, size: int) -> None:
        self.size = size

    def wrap(self, module: torch.nn.Module, stream=None) -> torch.nn.Module:
        from torch.nn.parallel import DistributedDataParallel
        # the buffers (none that training changes) are the same everywhere: no sync per step
        known = inspect.signature(DistributedDataParallel).parameters
        quiet = {"forward_sync_buffers": False} if "forward_sync_buffers" in known else \
            {"broadcast_buffers": False}
        with torch.cuda.stream(stream) if stream is not None else nullcontext():
            ddp = DistributedDataParallel(module, static_graph=True, **quiet)
        if stream is not None:  # DDP broadcast rank 0's weights on it
            torch.cuda.current_stream().wait_stream(stream)
        return ddp

    def agree(self, loss: torch.Tensor, bad: torch.Tensor, metrics: dict):
        values = torch.cat([x.float().reshape(1) for x in (loss, bad, *metrics.values())])
        dist.all_reduce(values)
        mean = values / self.size
        return (mean[0], values[1] > 0,
                {name: mean[2 + i] for i, name in enumerate(metrics)})


# ------------------------------------------------------------------------- joining --
def join(device_name: str, environ: Mapping[str, str] | None = None) -> World:
    """Join the run this process was started into (see the module's docstring).

    Parameters
    ----------
    device_name
        ``auto``, ``cpu`` or ``cuda``: on CUDA each rank takes the GPU of its
        ``LOCAL_RANK`` and the ranks talk over NCCL; on the CPU, over gloo.

    Raises
    ------
    TrainingError
        No GPU for this rank, or the others could not be reached (one sentence, code 2).
    """
    env = os.environ if environ is None else environ
    try:
        rank, size = int(env["RANK"]), int(env["WORLD_SIZE"])
        local_rank = int(env.get("LOCAL_RANK", rank))
        local_size = int(env.get("LOCAL_WORLD_SIZE", size))
    except (KeyError, ValueError):
        raise TrainingError("this process was started as one of several, but RANK or "
                            "WORLD_SIZE is missing from its environment (start it with "
                            "torchrun or rnn-designer train --nproc)", 2) from None
    cuda = device_name.startswith("cuda") or (device_name == "auto" and
                                              torch.cuda.is_available())
    if cuda:
        if not torch.cuda.is_available():
            raise TrainingError("the CUDA device was asked for, but no CUDA GPU is available "
                                "(use --device cpu)", 2)
        count = torch.cuda.device_count()
        if local_rank >= count:
            raise TrainingError(f"process {rank} needs GPU {local_rank} of this machine, "
                                f"which has {count}; start at most {count} processes per "
                                f"machine (or use --device cpu)", 2)
        if not dist.is_nccl_available():
            raise TrainingError("this PyTorch has no NCCL, so it cannot train on several "
                                "GPUs (use --device cpu)", 2)
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    backend = "nccl" if cuda else "gloo"
    extra = {}
    if cuda and "device_id" in inspect.signature(dist.init_process_group).parameters:
        extra["device_id"] = device
    try:
        dist.init_process_group(backend, init_method="env://", **extra)
        control = dist.new_group(backend="gloo") if cuda else None
    except (RuntimeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TrainingError(f"process {rank} of {size} could not reach the others ({first})",
                            2) from None
    return World(rank, size, local_rank, device, control, local_size)


@contextmanager
def joined(device_name: str, environ: Mapping[str, str] | None = None) -> Iterator[World]:
    """:func:`join`, and leave the process group at the end of the block."""
    world = join(device_name, environ)
    try:
        yield world
    except BaseException:
        world.close()
        raise
    world.close(together=True)


def _processes(n: int) -> str:
    return f"{n} process{'es' if n != 1 else ''}"


def _report(error: BaseException) -> tuple[str, int]:
    """A failure as plain data other ranks can hear: its sentence and exit code."""
    if isinstance(error, TrainingError):
        return str(error), error.code
    if isinstance(error, (DataError, C.CheckpointError)):
        return str(error), 2
    if isinstance(error, BuildError):
        return str(error), 1
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"an unexpected {type(error).__name__}{': ' + text if text else ''}", 1
