"""``rnn-designer bench``: time training steps of a project on each engine, in one run.

Every engine trains the same net (the project's graph with every recurrent layer switched to
that engine, or to its cell's own fused engine) on the same fixed random batch with Adam and
gradient clipping, as the bare PyTorch baselines do, so the figures compare directly.

A layer's module reports the kernels that ran it by declaring ``reports_kernels``, the words
its layers are named under ("PERSIST layers"), and saying in ``ran`` what ran its last call and
in ``fallback`` why that was not its kernels (:func:`kernels_ran`).
"""
from __future__ import annotations

import contextlib
import gc
import time

import torch

from designer.graph import settings
from designer.graph.model import Graph

from designer.engines.net.build import Net, count_parameters
from designer.engines.train_step.step import TrainStep, make_optimizer


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def random_feeds(graph: Graph, device: torch.device, seed: int = 0) -> dict:
    """A batch for every data layer, shaped as the graph says, with a reset at step 0 and
    sequence lengths from 1 to T."""
    g = torch.Generator().manual_seed(seed)
    feeds = {}
    for src in graph.sources():
        spec = graph.layer(src).spec
        outputs = graph.info(src).outputs
        for port, info in zip(spec.outputs, outputs):
            shape = tuple(info.shape)
            if port.name == "lengths":
                steps = graph.dims.get("T")
                if not isinstance(steps, int):  # the time axis of the source's sequences
                    steps = max(o.shape[1 - o.batch] for o in outputs
                                if o.rank >= 2 and o.batch in (0, 1))
                t = torch.randint(1, int(steps) + 1, shape, generator=g)
            elif info.dtype == "index":
                t = torch.randint(0, int(graph.dims.get("V", 2)), shape, generator=g)
            elif port.name == "cont":
                t = torch.ones(shape)
                t[0] = 0
            else:
                t = torch.rand(shape, generator=g)
            feeds[f"{src}.{port.name}"] = t.to(device)
    return feeds


@contextlib.contextmanager
def precision(mode: str):
    """fp32 (TF32 off), tf32, or bf16 autocast."""
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield torch.bfloat16 if mode == "bf16" else None
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def saved_activation_mib(net, feeds: dict) -> float:
    """MiB of tensors one forward pass keeps for the backward pass (each storage once).

    On the CPU, where there is no allocator peak to read, this is the engine-dependent part of
    a training step's memory (the weights, gradients and optimizer state are the same size on
    both engines, up to the cuDNN engine's second bias).

    The hook packs a detached alias: packing a saved output as itself ties the tensor to its
    own ``grad_fn`` in a cycle through C++ that Python's collector cannot see, and the whole
    graph (every saved tensor) would outlive this call, counted in the next measurement's
    peak."""
    seen: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        seen[st.data_ptr()] = st.nbytes()
        return t.detach()  # the same storage (kept while the graph lives), no grad_fn

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = net(feeds)
        net.loss(out)
    return sum(seen.values()) / 2**20


def allocated_peak(fn) -> int:
    """Bytes of the tensors that ``fn()`` holds at most at once on the CPU, over what was
    allocated before it ran, read from the profiler's allocation events.

    The CPU has no allocator peak to read, and the process's resident memory also holds what
    glibc keeps of blocks torch has freed: this is the CPU's counterpart of
    ``torch.cuda.max_memory_allocated``. Blocks allocated before ``fn`` and freed during it
    are not subtracted (the profiler never saw their size)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                profile_memory=True) as prof:
        fn()
    events = []

    def walk(e):
        if type(e.extra_fields).__name__.endswith("Allocation"):
            events.append((e.start_time_ns, e.extra_fields.alloc_size))
        for child in e.children:
            walk(child)
    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root)
    now = peak = 0
    for _, size in sorted(events):
        now += size
        peak = max(peak, now)
    return peak


def kernels_ran(net: torch.nn.Module, fallbacks: bool = True) -> dict[str, list[str]]:
    """What ran each kind of layer that reports its kernels, by the words it is reported under
    (in order); without ``fallbacks``, only the layers that ran on their kernels."""
    ran: dict[str, set] = {}
    for m in net.modules():
        words = getattr(m, "reports_kernels", "")
        if words and getattr(m, "ran", None) and (fallbacks or not m.fallback):
            ran.setdefault(words, set()).add(m.ran)
    return {words: sorted(ran[words]) for words in sorted(ran)}


def bench_engine(graph: Graph, engine: str, device: torch.device, steps: int = 20,
                 warmup: int = 3, graphs: bool = True, mode: str = "fp32",
                 seed: int = 0) -> dict:
    """Time ``steps`` training steps of ``graph`` on ``engine``; returns one result row."""
    torch.manual_seed(seed)
    _sync(device)
    gc.collect()  # what an earlier call left in reference cycles is not this call's peak
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    net = Net(graph, engine).to(device)
    _sync(device)
    build_s = time.perf_counter() - t0
    solver = settings.effective("solver", {"type": "Adam", "base_lr": 0.002})
    opt = make_optimizer(net.parameters(), solver, device)
    with precision(mode) as autocast:
        step = TrainStep(net, opt, clip=5.0, graphs=graphs, autocast=autocast)
        feeds = random_feeds(graph, device, seed)
        t1 = time.perf_counter()
        out = step(feeds)
        _sync(device)
        first_s = time.perf_counter() - t1
        for _ in range(max(warmup - 1, 0)):
            out = step(feeds)
        _sync(device)
        t2 = time.perf_counter()
        for _ in range(steps):
            out = step(feeds)
        _sync(device)
        dt = (time.perf_counter() - t2) / steps
        ran = sorted({r for rs in kernels_ran(net).values() for r in rs})
        chose = [d for m in net.modules() if getattr(m, "engine_name", "") == "AUTO"
                 for d in m.decisions]
    tokens = 1
    for src in graph.sources():
        tokens = max(tokens, _tokens(graph, src))
    row = {
        "engine": engine, "device": str(device), "mode": mode,
        "params": count_parameters(net), "build_ms": build_s * 1e3,
        "first_step_ms": first_s * 1e3, "ms_step": dt * 1e3, "tokens_s": tokens / dt,
        "peak_mib": torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else None,
        "activations_mib": saved_activation_mib(net, feeds),
        "loss": out.loss.item(), "cuda_graph": step.captured,
        "note": step.graph_note,
    }
    if ran:
        row["kernels"] = "; ".join(ran)   # what ran the layers that report it, timed
    if chose:
        row["auto"] = chose               # which engine each AUTO layer chose, and why
    del net, opt, step
    return row


def _tokens(graph: Graph, src: str) -> int:
    """Symbols per batch: T x N for sequences (the data output's element count)."""
    shape = graph.info(src).outputs[0].shape
    n = 1
    for d in shape[:2]:
        n *= int(d)
    return n


def bench(graph: Graph, engines: list[str], device: torch.device, steps: int, warmup: int,
          graphs: bool, mode: str = "fp32") -> dict:
    rows = [bench_engine(graph, e, device, steps, warmup, graphs, mode) for e in engines]
    base = rows[0]["ms_step"]
    for r in rows:
        r["ratio_vs_first"] = r["ms_step"] / base
    return {"device": _device_name(device), "torch": torch.__version__, "rows": rows,
            "dims": dict(graph.dims)}


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({torch.get_num_threads()} threads)"
