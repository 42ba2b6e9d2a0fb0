"""The CPU's tensors' peak by phase of a short training run: each training step and the
validation pass, as ``bench_memory.py`` runs them (3 steps, validation after the last).

Used to tell where a GPU run's peak lies (RESULTS.md, "Why the unrolled MinLSTM holds less on
the GPU"). Command::

    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_memory_phases.py MinLSTM caffe
    RNN_DESIGNER_DATA=../shared/data python tests/benchmarks/bench_memory_phases.py \
        projects/char-rnn-shakespeare.json caffe

The first argument is a project file, or a cell that ``bench_memory.py --cells`` puts in the
Char-RNN. One JSON line: the peaks in MiB over what was allocated before each phase. With a
third argument ``cuda``, the allocator's peaks on the GPU instead (``max_memory_allocated``),
each over what was allocated when the model was about to be built, as ``bench_memory.py``
counts its single peak, with the estimate and its parts beside them.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_memory

from designer.engines.train_step import step as step_module
from designer.engines.measure.bench import allocated_peak
from designer.graph import project as P
from designer.training.run import loop, session

MIB = 2 ** 20


def _gpu_timed(fn, into: list, base: dict):
    import torch

    def wrapper(*args, **kwargs):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        r = fn(*args, **kwargs)
        torch.cuda.synchronize()
        into.append(round((torch.cuda.max_memory_allocated() - base["allocated"]) / MIB, 2))
        return r
    return wrapper


def _timed(fn, into: list):
    def wrapper(*args, **kwargs):
        out = {}

        def run():
            out["r"] = fn(*args, **kwargs)
        into.append(round(allocated_peak(run) / MIB, 2))
        return out["r"]
    return wrapper


def main() -> None:
    what, engine = sys.argv[1], sys.argv[2]
    folder = tempfile.TemporaryDirectory()
    path = what if what.endswith(".json") else next(
        p for p in bench_memory.cell_projects(Path(folder.name))
        if p.endswith(f"char-rnn-{what.lower()}.json"))
    device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    project = P.load(path)
    peaks = {"train steps": [], "validation": []}
    if device == "cuda":
        import gc

        import torch

        from designer.graph.memory import Setup, estimate
        bench_memory.warm_up()
        est = estimate(project.graph, Setup(device, engine, "fp32", project.solver_settings(),
                                            project.training_settings()["cuda_graphs"]))
        peaks.update(estimate=round(est.total / MIB, 2),
                     parts={k: round(v / MIB, 2) for k, v in est.parts().items()})
        base, real_net = {}, session.Net

        def net_marking_the_start(*args, **kwargs):
            gc.collect()
            torch.cuda.synchronize()
            base["allocated"] = torch.cuda.memory_allocated()
            return real_net(*args, **kwargs)
        session.Net = net_marking_the_start
        session.evaluate = _gpu_timed(session.evaluate, peaks["validation"], base)
        step_module.TrainStep.__call__ = _gpu_timed(step_module.TrainStep.__call__,
                                                    peaks["train steps"], base)
    else:
        session.evaluate = _timed(session.evaluate, peaks["validation"])
        step_module.TrainStep.__call__ = _timed(step_module.TrainStep.__call__,
                                                peaks["train steps"])
    with tempfile.TemporaryDirectory() as tmp:
        opts = loop.RunOptions(out=Path(tmp) / "run", steps=3, device=device, engine=engine,
                               seed=1)
        project.training.update(log_interval=1, eval_interval=3, eval_batches=2,
                                checkpoint_interval=3, sample_interval=0)
        for rec in loop.train(project, opts):
            if rec["kind"] == "error":
                raise RuntimeError(rec["message"])
    print(json.dumps({"project": Path(path).stem, "engine": engine, **peaks}))


if __name__ == "__main__":
    from designer.cells import load as load_cells
    load_cells()  # the recurrent cells register their layers
    main()
