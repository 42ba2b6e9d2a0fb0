"""How the AUTO engine times the engines that can run a recurrent layer, and where it keeps
what it chose.

A candidate is one training step of the layer alone on its real shapes: forward, then the
backward to the input and every weight (``torch.autograd.grad``, so nothing lands in ``.grad``).
Each candidate runs :data:`WARMUP` times first (kernels compiled, cuDNN plans made, the
allocator grown), then the candidates take turns, :data:`REPEATS` rounds, each run timed on its
own and synchronised (CUDA events on a GPU), so a drift of the clocks during the timing hits every
engine alike; each candidate's time is the median of its runs. Where the training step is
replayed from a CUDA graph, every candidate's step is captured too, so that Python and launch
overheads, which the real step does not pay, do not decide; where one cannot be captured, or the
training step runs eagerly, all run eagerly.

The choice is kept per device name, layer shape, precision and way of stepping in
``engine-auto.json`` in the user cache folder (``~/.cache/rnn-designer``, or
``$XDG_CACHE_HOME/rnn-designer``), written atomically, so a later run on the same GPU and shapes
does not time again.
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Callable

import torch

from designer.graph.atomic import atomic_write_text
from designer.graph.datasets import cache_dir

from designer.engines.train_step.cuda_graphs import can_capture, capture

WARMUP = 3      # untimed runs of each candidate (the capture's warm-ups on a GPU)
REPEATS = 7     # timed runs of each candidate; its time is their median
MARGIN = 0.01   # another engine is chosen over cuDNN only when it is more than 1% faster
CACHE_FILE = "engine-auto.json"
VERSION = 1     # of the timing and the candidates: a change here times every shape again

Timer = Callable[[str, Callable[[], object]], float]  # (engine, run once) -> seconds


def cuda_timer(engine: str, run: Callable[[], object]) -> float:
    """Seconds ``run`` takes on the current CUDA stream (events, synchronised before and after)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def clock_timer(engine: str, run: Callable[[], object]) -> float:
    """Seconds ``run`` takes by the host's clock (for a CPU)."""
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def captured(runs: dict[str, Callable[[], object]], device: torch.device,
             warmup: int = WARMUP) -> tuple[dict[str, Callable[[], object]], bool]:
    """Every candidate's step captured in a CUDA graph (its replay), warmed up ``warmup``
    times; ``(runs, False)`` unchanged where the device cannot capture or one capture fails."""
    if not can_capture(device):
        return runs, False
    try:
        return {name: capture(run, device, warmups=warmup) for name, run in runs.items()}, True
    except RuntimeError:
        return runs, False


def time_engines(runs: dict[str, Callable[[], object]], timer: Timer, warmup: int = WARMUP,
                 repeats: int = REPEATS) -> dict[str, float]:
    """The median seconds of each candidate's run: ``warmup`` untimed runs each, then
    ``repeats`` rounds in which every candidate runs once, timed by ``timer``."""
    for run in runs.values():
        for _ in range(warmup):
            run()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            samples[name].append(timer(name, run))
    return {name: statistics.median(s) for name, s in samples.items()}


def pick(seconds: dict[str, float], baseline: str = "CUDNN", margin: float = MARGIN) -> str:
    """The fastest engine; ``baseline`` unless another beats it by more than ``margin``."""
    best = min(seconds, key=seconds.get)
    if baseline in seconds and seconds[best] * (1 + margin) >= seconds[baseline]:
        return baseline
    return best


def why(choice: str, seconds: dict[str, float], batch: int, repeats: int,
        baseline: str = "CUDNN", margin: float = MARGIN) -> str:
    """What the log says in brackets: ``1.61x CUDNN at batch 16, timed 7 steps each``, or for
    cuDNN kept ``PERSIST 0.87x at batch 256, ...`` (a speed: the other's time / this one's)."""
    if choice != baseline and baseline in seconds:
        speed = f"{seconds[baseline] / seconds[choice]:.2f}x {baseline}"
    else:
        speed = ", ".join(f"{e} {seconds[choice] / seconds[e]:.2f}x" for e in seconds
                          if e != choice)
        if any(seconds[e] < seconds[choice] for e in seconds):
            speed += f", less than the {margin:.0%} that moves it off {baseline}"
    return f"{speed} at batch {batch}, timed {repeats} steps each"


# ------------------------------------------------------------------------------ cache --
def cache_file() -> Path:
    return cache_dir() / CACHE_FILE


def cache_key(device: str, kind: str, levels: int, input_size: int, hidden: int,
              steps: int, batch: int, precision: str, dropout: bool,
              captured: bool = True) -> str:
    """One line per device name, layer shape, precision (fp32, tf32 or bf16) and way of
    stepping (captured in a CUDA graph, or eager)."""
    return (f"v{VERSION} torch {torch.__version__} | {device} | {kind} {levels}x{hidden} "
            f"E={input_size} T={steps} N={batch} | {precision}" + (" dropout" if dropout else "")
            + ("" if captured else " eager"))


def read_cache(path: Path | None = None) -> dict:
    """The kept choices; an unreadable or foreign file reads as none (it is rewritten)."""
    path = path or cache_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cached(key: str, path: Path | None = None) -> dict | None:
    """The record kept for ``key`` (``{"engine", "seconds", "batch", "repeats"}``), or None."""
    rec = read_cache(path).get(key)
    if not (isinstance(rec, dict) and isinstance(rec.get("seconds"), dict)):
        return None
    seconds = rec["seconds"]
    if rec.get("engine") not in seconds or not isinstance(rec.get("repeats", 1), int) or \
            not all(isinstance(v, (int, float)) and v > 0 for v in seconds.values()):
        return None   # not a record this module wrote: timed again
    return rec


def remember(key: str, record: dict, path: Path | None = None) -> None:
    """Keep ``record`` for ``key``, the file replaced atomically (readers never see half of it;
    a folder that cannot be written only means the next run times again)."""
    path = path or cache_file()
    data = read_cache(path)
    data[key] = record
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass
