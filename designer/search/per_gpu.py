"""How many trials share a GPU when ``--per-gpu`` is left at ``auto``.

A trial of a small net (a head over remembered features, a recurrent layer of a few dozen
units) keeps an H200 a few percent busy: its time goes to launching kernels from Python,
one step after another. Several workers on one GPU then finish the study in a fraction of the time: on one
H200, 50 trials of init's closed-form classifier on ACSF1 cut to 5 sequences a class took 89 s
with one worker and 46 s with four; on ArrowHead cut to 5, its Adam head's 387 s with one
worker became 145 s with four (init's design with Hydra's features by then; RESULTS.md). A
net that fills the GPU gains nothing from sharing
it and could run out of memory, so the count is also bound by memory: what the design as drawn
needs (`designer.graph.memory.estimate`), twice over for the larger designs the space may
draw, against the GPU's free memory (NVML). And by the CPU: each worker launches from its own
cores, at least ``CORES_A_WORKER`` of them.
"""
from __future__ import annotations

import os

AUTO_MOST = 4        # workers a GPU takes at most when left to auto
CORES_A_WORKER = 2   # a worker's Python thread and its data loading
SPACE_MARGIN = 2     # a design the space draws may need twice what the drawn one needs
USABLE = 0.8         # of a GPU's free memory, the share the workers may plan on


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def auto_per_gpu(project, gpus: list[int], steps: int | None = None) -> int:
    """Workers per GPU for ``project`` searched on the GPUs CUDA numbers ``gpus``: up to
    `AUTO_MOST`, as the cores and the GPUs' free memory allow; 1 when either is unknown.
    ``steps``: the labelled sequences' padded length where the search has read them."""
    from designer.graph.memory import Setup, estimate
    from designer.monitor.capacity import gpu_capacity
    by_cores = max(1, cores() // (CORES_A_WORKER * max(1, len(gpus))))
    setup = Setup(device="cuda", solver=project.solver_settings())
    try:
        need = estimate(project.graph, setup) or \
            estimate(_steps_pinned(project, steps), setup)
    except Exception:  # noqa: BLE001 - an estimate that cannot be made: no sharing
        need = None
    if need is None or not gpus:
        return 1
    free = [getattr(gpu_capacity(g), "free", None) for g in gpus]
    if any(f is None for f in free):
        return 1
    by_memory = int(USABLE * min(free) // (SPACE_MARGIN * need.needed))
    return max(1, min(AUTO_MOST, by_cores, by_memory))


def _steps_pinned(project, steps: int | None):
    """A fresh copy of ``project``'s graph with T pinned to its labelled sequences' padded
    length (``steps``, or read here), where the file does not say it (a ``.ts`` without
    ``@seriesLength``)."""
    from designer.graph import project as P
    from designer.search.folds import FOLDED, data_folder
    from designer.training.data import open_source
    graph = project.graph
    data = [n for n in graph.sources() if graph.layer(n).type == FOLDED]
    if "T" in graph.dims or not data or project.path is None:
        return graph
    if steps is None:
        steps = open_source(graph.layer(data[0]), data_folder(project), seed=0).seq_len
    copy = P.load(project.path).graph
    copy.pin_dims({"T": int(steps)})
    return copy
