"""How much memory training a net takes, worked out from its inferred shapes and counts.

>>> est = estimate(graph, Setup(device="cuda", engine="caffe", solver={"type": "Adam"}))
>>> est.total, est.parts()        # bytes; weights, gradients, optimizer, activations, ...

Training holds, at its peak:

- the **weights** (float32), their **gradients** and the **optimizer state** (Adam and AdamW
  keep two moments per weight; SGD with momentum and RMSProp one; SGD without momentum none);
- the **activations** autograd keeps from the forward pass for the backward pass: what each layer
  keeps differs by engine and device (``designer.graph.memory_layers``), and a tensor kept by
  several layers counts once;
- the **data batch** on the device, and what the backward pass needs at once on top
  (the gradients flowing through the largest layer, the libraries' workspaces).

On the CPU the gradients are freed between steps (so the peak is the larger of the forward
pass's end and the optimizer step); on a GPU with a fused optimizer they stay. The figure is
what torch allocates for tensors; the process itself (the CUDA context, torch's libraries) comes
on top, given as ``runtime`` and counted when deciding whether a net fits.

Pure Python: the device's memory is asked of ``designer.monitor`` by the callers.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from designer.graph import dims as D
from designer.graph import registry
from designer.graph.memory_layers import Context, rule
from designer.graph.shapes import resolve_params

GIB, MIB = 1 << 30, 1 << 20
INDEX_BYTES = 8  # ids and labels are int64
OPTIMIZER_MOMENTS = {"Adam": 2, "AdamW": 2, "RMSProp": 1}
FUSED = ("Adam", "AdamW", "SGD")  # fused on CUDA: gradients kept, no temporaries
CUDA_LIBRARIES = 96 * MIB  # cuBLAS, cuBLASLt and cuDNN workspaces from torch's allocator
CUDA_GRAPH_STREAM = 64 * MIB  # the same again for the side stream a CUDA graph is captured on
# bf16 on the unrolled engine: the bf16 GEMMs' cuBLASLt workspaces on both streams and the
# fused step kernels' buffers; measured 100-160 MiB on an H200 whatever the net's size
# (tests/benchmarks/RESULTS.md, "Memory"), so counted as one constant
UNROLLED_BF16 = 128 * MIB
# fp32 on the unrolled engine, the step captured: its peak comes as the forward ends, with every
# blob alive, before the backward has asked for all the workspaces above; measured by phase
# on one H100 it held 18-63 MiB less than those constants (RESULTS.md, "the peaks by phase").
# One cuBLAS workspace of Hopper's size less, fitted to the fp32 unrolled rows of the H100
# and H200 tables (1.01-1.26 before, 0.85-1.11 after), not derived
UNROLLED_FP32_CAPTURED = -32 * MIB
RUNTIME = {"cpu": 400 * MIB, "cuda": 600 * MIB}  # the process: torch's libraries, CUDA context


@dataclass(frozen=True)
class Setup:
    """What a run trains with: where, on which engine, in which precision, with which solver.

    Attributes
    ----------
    device
        ``cpu`` or ``cuda``.
    engine
        ``None`` keeps each recurrent layer's engine; ``cudnn`` or ``caffe`` runs all on one.
    precision
        ``fp32``, or ``bf16`` (autocast; on CUDA only, as the trainer does).
    solver
        The solver settings (``type`` and ``momentum`` are read).
    cuda_graphs
        Whether the step may be captured in a CUDA graph (a second stream's workspaces).
    """

    device: str = "cpu"
    engine: str | None = None
    precision: str = "fp32"
    solver: dict = field(default_factory=lambda: {"type": "Adam"})
    cuda_graphs: bool = True


@dataclass
class MemoryEstimate:
    """Bytes a training step holds at its peak, by what holds them."""

    device: str
    engine: str | None
    precision: str
    optimizer: str
    weights: int
    gradients: int
    optimizer_state: int
    activations: int
    batch: int
    backward: int
    step: int     # the optimizer step's temporaries
    layers: dict  # layer name -> activation bytes it alone keeps (its share)
    gradients_kept: bool  # gradients stay allocated through the forward pass (fused, CUDA)
    buckets: int = 0  # a data-parallel process: DDP's gradient buckets, kept all along

    @property
    def total(self) -> int:
        """The allocator's peak: what the tensors of a training step take at most."""
        fixed = self.weights + self.optimizer_state + self.batch + self.buckets
        if self.gradients_kept:
            return fixed + self.gradients + max(self.activations + self.backward, self.step)
        return fixed + max(self.activations + self.backward, self.gradients + self.step)

    @property
    def runtime(self) -> int:
        """The process around the tensors (torch's libraries; on a GPU, the CUDA context)."""
        return RUNTIME["cuda" if self.device == "cuda" else "cpu"]

    @property
    def needed(self) -> int:
        """What the device must have free: the tensors' peak and the process around them."""
        return self.total + self.runtime

    def parts(self) -> dict:
        out = {"weights": self.weights, "gradients": self.gradients,
               "optimizer": self.optimizer_state, "activations": self.activations,
               "batch": self.batch, "backward": self.backward}
        if self.buckets:
            out["DDP buckets"] = self.buckets
        return out

    def to_json(self) -> dict:
        out = asdict(self)
        out.update(total=self.total, runtime=self.runtime, needed=self.needed)
        return out


def estimate(graph, setup: Setup | None = None) -> MemoryEstimate | None:
    """The memory training ``graph`` takes with ``setup``, or ``None`` while a shape or a
    count is unknown (an error, or data that cannot be read yet)."""
    setup = setup or Setup()
    gpu = setup.device == "cuda"
    act_bytes = 2 if gpu and setup.precision == "bf16" else 4
    params = graph.total_params()
    if params is None or not D.known(params) or graph.errors():
        return None
    kept: dict[tuple, int] = {}     # (layer, output index) -> bytes of that tensor
    owners: dict[tuple, str] = {}   # who keeps it first (for the per-layer shares)
    layers: dict[str, int] = {}
    batch = backward = copies = largest = 0
    for name in graph.topological_order():
        layer, info = graph.layer(name), graph.info(name)
        shapes = _bound(info.inputs), _bound(info.outputs)
        if shapes[0] is None or shapes[1] is None:
            return None
        if layer.spec.is_source:
            batch += sum(_bytes(t, 4) for t in shapes[1])
        ctx = Context(layer.type, resolve_params(layer.spec, layer.params, graph.dims),
                      shapes[0], shapes[1],
                      "cuda" if gpu else "cpu", _engine(layer, setup), act_bytes)
        k = rule(ctx, info.params or 0)
        share = k.extra
        for i in k.inputs:
            link = graph.link_into(name, layer.spec.inputs[i].name)
            if link is None or shapes[0][i] is None:
                continue
            src = graph.layer(link.src)
            key = (link.src, src.spec.output_index(link.src_port))
            if key not in kept and not src.spec.is_source:
                kept[key] = _bytes(shapes[0][i], _out_bytes(src.type, act_bytes))
                owners[key] = name
                share += kept[key]
        for j in k.outputs:
            key = (name, j)
            if key not in kept:
                kept[key] = _bytes(shapes[1][j], _out_bytes(layer.type, act_bytes))
                share += kept[key]
        layers[name] = share
        backward = max(backward, k.backward, k.forward)
        largest = max(largest, info.params or 0)
        copies += k.weight_copies
    activations = sum(layers.values())
    weights = 4 * params
    solver = setup.solver or {}
    kind = solver.get("type", "Adam")
    moments = OPTIMIZER_MOMENTS.get(kind, 1 if solver.get("momentum", 0.9) > 0 else 0)
    kept_grads = gpu and kind in FUSED
    backward += copies
    if gpu:
        captured = setup.cuda_graphs and kept_grads and not _capture_blocked(graph, setup)
        backward += CUDA_LIBRARIES + (CUDA_GRAPH_STREAM if captured else 0)
        if act_bytes < 4 and _any_unrolled(graph, setup):
            backward += UNROLLED_BF16
        elif captured and _any_unrolled(graph, setup):
            backward += UNROLLED_FP32_CAPTURED
    # the optimizer's temporaries: none when fused; on the CPU one tensor at a time (the
    # largest layer's, at most); torch's foreach kernels on a GPU, all at once
    step = 0 if kept_grads else 4 * (params if gpu else largest) if moments else 0
    return MemoryEstimate("cuda" if gpu else "cpu", setup.engine, setup.precision, kind,
                          weights, weights, moments * weights, activations, batch, backward,
                          step, layers, kept_grads)


def _any_unrolled(graph, setup: Setup) -> bool:
    """Whether a recurrent layer runs on the unrolled (CAFFE) engine."""
    return any(registry.cell(layer.type) is not None and _engine(layer, setup) == "CAFFE"
               for layer in graph.layers())


def _capture_blocked(graph, setup: Setup) -> bool:
    """A cuDNN-engine (or parallel-scan) layer with a ``cont`` input finds its resets on the
    host, so the step is not captured in a CUDA graph (as ``Net.capture_blockers`` says)."""
    return any(_engine(layer, setup) in ("AUTO", "CUDNN", "PERSIST", "SCAN", "CHUNK") and
               graph.link_into(layer.name, "cont")
               for layer in graph.layers() if registry.cell(layer.type) is not None)


def _bound(tensors) -> list | None:
    """``(shape, dtype)`` per tensor with every dim a number; ``None`` if one is not."""
    out = []
    for t in tensors:
        if t is None:
            out.append(None)
            continue
        if not D.all_known(t.shape):
            return None
        out.append((tuple(t.shape), t.dtype))
    return out


def _bytes(t, float_bytes: int) -> int:
    if t is None:
        return 0
    n = 1
    for d in t[0]:
        n *= d
    return n * (INDEX_BYTES if t[1] == "index" else float_bytes)


def _out_bytes(type_id: str, act_bytes: int) -> int:
    """Bytes per value of what a layer outputs (autocast: GEMMs and cuDNN give bf16: a
    recurrent layer whose cell runs on cuDNN among them)."""
    if act_bytes >= 4:
        return 4
    cell = registry.cell(type_id)
    if type_id in ("InnerProduct", "Conv1D") or (cell is not None and "CUDNN" in cell.engines):
        return act_bytes
    return 4


def _engine(layer, setup: Setup) -> str:
    """The engine a recurrent layer runs on in ``setup`` ("" for any other layer); a cell
    whose engine is no parameter runs on its one engine."""
    cell = registry.cell(layer.type)
    if cell is None:
        return ""
    if not layer.spec.has_param("engine"):
        return cell.engines[0]
    if setup.engine is not None:
        return registry.engine_for(layer.type, setup.engine)
    return layer.get("engine")


# ------------------------------------------------------------------------------ words --
def size_text(n_bytes: float) -> str:
    """``1.4 GiB``, ``612 MiB``, ``3.1 TiB``."""
    for unit, div in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB)):
        if n_bytes >= div:
            v = n_bytes / div
            return f"{v:,.1f} {unit}" if v < 100 else f"{v:,.0f} {unit}"
    return f"{n_bytes / 1024:,.0f} KiB"


def parts_text(est: MemoryEstimate) -> str:
    """``weights 12 MiB, gradients 12 MiB, optimizer 25 MiB, activations 130 MiB, ...``."""
    return ", ".join(f"{k} {size_text(v)}" for k, v in est.parts().items() if v)


def refusal(est: MemoryEstimate, capacity: int | None, where: str) -> str | None:
    """One sentence when the net cannot fit ``capacity`` bytes of ``where``, else ``None``.

    ``where`` names the device in words (``the CPU``, ``NVIDIA H200``).
    """
    if capacity is None or est.needed <= capacity:
        return None
    return (f"training this net needs about {size_text(est.needed)} ({parts_text(est)}), but "
            f"{where} has {size_text(capacity)}; make it smaller (fewer units or layers, a "
            "smaller batch_size or seq_len)")


def training_report(graph, device: str, solver: dict, training: dict,
                    room: tuple[str, int] | None = None) -> dict | None:
    """What ``validate`` says about memory: the estimate as drawn (and with every recurrent
    layer on each engine), the device's memory, and the sentence when it cannot fit.

    Parameters
    ----------
    device
        ``cpu`` or ``cuda``.
    solver, training
        The project's effective settings.
    room
        ``(name, bytes)`` of the device, e.g. ``("the CPU", 25_000_000_000)``, or ``None``.
    """
    def setup(engine):
        return Setup(device, engine, training.get("precision", "fp32"), solver,
                     bool(training.get("cuda_graphs", True)))
    est = estimate(graph, setup(None))
    if est is None:
        return None
    out = {"device": device, "estimate": est.to_json(), "engines": {}, "capacity": None,
           "where": None, "fits": True, "message": None}
    kinds = registry.engine_kinds()
    cells = [registry.cell(layer.type) for layer in graph.layers() if layer.type in kinds]
    if cells:
        engines = ("cudnn", "caffe") + (
            ("persist",) if device == "cuda" and any("PERSIST" in c.engines for c in cells)
            else ())
        for engine in engines:
            other = estimate(graph, setup(engine))
            out["engines"][engine] = None if other is None else other.total
    if room is not None:
        out["where"], out["capacity"] = room
        out["message"] = refusal(est, room[1], room[0])
        out["fits"] = out["message"] is None
    return out


def report_lines(rep: dict) -> list[str]:
    """The plain-text lines ``validate`` prints for :func:`training_report`."""
    est = rep["estimate"]
    where = "a GPU" if rep["device"] == "cuda" else "the CPU"
    precision = est["precision"] if rep["device"] == "cuda" else "fp32"
    lines = [f"memory to train on {where} ({est['optimizer']}, {precision}): about "
             f"{size_text(est['total'])}: " + ", ".join(
                 f"{k} {size_text(est[f])}" for k, f in (
                     ("weights", "weights"), ("gradients", "gradients"),
                     ("optimizer", "optimizer_state"), ("activations", "activations"),
                     ("batch", "batch"), ("backward", "backward")) if est[f])]
    extra = []
    names = {"cudnn": "all cuDNN", "caffe": "all unrolled", "persist": "all persistent"}
    for engine, total in rep["engines"].items():
        if total is not None:
            extra.append(f"{names[engine]} {size_text(total)}")
    if rep["capacity"] is not None:  # what train weighs: the tensors and the process
        extra.append(f"{size_text(est['needed'])} with the process itself; {rep['where']} has "
                     f"{size_text(rep['capacity'])}")
    if extra:
        lines.append("  " + "; ".join(extra))
    return lines
