"""The smoke step: the net run forward and backward once on a tiny real batch, on the CPU.

What the designer calls valid should train. Shapes, dtypes, value ranges and batch axes catch
most mistakes before anything runs; the smoke step catches the rest, before Train is pressed:
it builds the model, takes a real batch from the data layer (T and N cut down to a few), runs
forward and backward, and checks that the loss is a finite number. Whatever goes wrong becomes
one sentence about the layer that raised it, with the traceback kept for a "Details" disclosure.

>>> result = smoke_step(project)
>>> result.status, result.message        # ("failed", "ip1: ...") or ("ok", "...")

Nets above ``MAX_LAYERS`` layers or ``MAX_PARAMS`` parameters are skipped (the result says so):
the step must stay quick enough to repeat after every edit. So is a net whose weights, gradients
and tiny batch would not fit the CPU's free memory (``designer.graph.memory``): the step never
tries to build it.
"""
from __future__ import annotations

import math
import re
import time
import traceback
from dataclasses import asdict, dataclass

from designer.graph.errors import DataWarning
from designer.graph.project import Project, from_dict

MAX_LAYERS = 400
MAX_PARAMS = 50_000_000
TINY_T, TINY_N = 3, 2

_sources: dict[tuple, object] = {}  # the last few tiny sources opened, by what they read


@dataclass
class SmokeResult:
    """What the smoke step found.

    Attributes
    ----------
    status : str
        ``ok``, ``failed`` or ``skipped``.
    message : str
        One sentence: what failed and where, why it was skipped, or what ran.
    layer : str or None
        The layer that raised (``None``: the net as a whole).
    details : str
        The traceback, for a "Details" disclosure (empty unless it failed unexpectedly).
    seconds : float
        How long the step took.
    """

    status: str
    message: str = ""
    layer: str | None = None
    details: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def to_dict(self) -> dict:
        return asdict(self)


def smoke_step(project: Project, engine: str | None = None) -> SmokeResult:
    """Run the net forward and backward once on a tiny real batch (CPU, no download).

    Parameters
    ----------
    project
        The project; its graph is not changed (a shrunken copy runs).
    engine
        ``None`` keeps each recurrent layer's engine; ``cudnn`` or ``caffe`` overrides them.
    """
    import torch
    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny batch gains nothing from threads, and loses much
    try:                      # when they contend with other work
        result = _run(project, engine)
    finally:
        torch.set_num_threads(threads)
    result.seconds = time.perf_counter() - t0
    return result


def smoke_dict(project: Project) -> dict:
    """``smoke_step(project).to_dict()``: what ``validate --deep`` reports."""
    return smoke_step(project).to_dict()


def _run(project: Project, engine: str | None) -> SmokeResult:
    graph = project.graph
    if graph.errors():
        return SmokeResult("skipped", "the net has errors to mend first")
    too_big = _too_big(project, engine, weights_only=True)  # before anything is copied
    if too_big:
        return SmokeResult("skipped", too_big)
    if len(graph) > MAX_LAYERS:
        return SmokeResult("skipped", f"the smoke step is skipped for nets of over "
                           f"{MAX_LAYERS} layers (this one has {len(graph):,})")
    params = graph.total_params()
    if params is not None and params > MAX_PARAMS:
        return SmokeResult("skipped", f"the smoke step is skipped for nets of over "
                           f"{MAX_PARAMS // 1_000_000} M parameters (this one has "
                           f"{params / 1e6:,.1f} M)")
    sources = graph.sources()
    if not sources:
        return SmokeResult("skipped", "the net has no data layer to take a batch from")
    data = sources[0]
    unreadable = [p for p in graph.problems() if isinstance(p, DataWarning) and p.layer == data]
    if unreadable:
        return SmokeResult("skipped", f"the data cannot be read yet ({unreadable[0]})")
    small = _shrunk(project, data)
    too_big = _too_big(small, engine)
    if too_big:
        return SmokeResult("skipped", too_big)
    from designer.engines.net.build import BuildError, Net  # torch: only when the step runs
    try:
        source = _tiny_source(small, data)
    except Exception as e:  # noqa: BLE001 - a reader's failure is the data layer's problem
        return _failure(e, data, small.graph, "reading a batch")
    batch = source.next_batch("train")
    import torch
    torch.manual_seed(0)
    try:
        net = Net(small.graph, engine)
    except BuildError as e:
        layer = _named_layer(str(e), small.graph)
        return SmokeResult("failed", str(e), layer)
    except Exception as e:  # noqa: BLE001
        return _failure(e, None, small.graph, "building the model")
    feeds = {f"{data}.{k}": v for k, v in batch.items()}
    current = {"layer": None}
    hooks = [m.register_forward_pre_hook(_marker(current, n)) for n, m in net.layers.items()]
    try:
        net.train()
        out = net(feeds, None)
        current["layer"] = None
        loss = net.loss(out) if net.losses else None
        if loss is None:
            return SmokeResult("ok", "the net ran forward on a real batch (it has no loss "
                                     "to run backward from)")
        value = float(loss.detach())
        loss.backward()
    except Exception as e:  # noqa: BLE001 - every failure becomes a sentence
        return _failure(e, current["layer"], small.graph,
                        "the forward pass" if current["layer"] else "the backward pass")
    finally:
        for h in hooks:
            h.remove()
    if not math.isfinite(value):
        return SmokeResult("failed", f"{net.losses[0]}: the loss on a real batch is {value} "
                           "before any training; look at the fillers and the scale of the data",
                           net.losses[0])
    t, n = _tn(batch)
    return SmokeResult("ok", f"the net ran forward and backward on a real batch of {n} x {t} "
                             f"(loss {value:.3f})")


def _too_big(project: Project, engine: str | None, weights_only: bool = False) -> str:
    """Why the step would not fit the CPU's free memory ('' when it would): its weights and
    gradients alone, or (on the shrunk copy) everything the tiny batch's step holds."""
    from designer.graph.memory import Setup, estimate, size_text
    from designer.monitor.capacity import cpu_capacity
    est = estimate(project.graph, Setup("cpu", engine, "fp32", {"type": "SGD", "momentum": 0}))
    room = cpu_capacity()
    if est is None or room is None:
        return ""
    free = room.free if room.free is not None else room.total
    need = est.weights + est.gradients if weights_only else est.total
    if need <= free:
        return ""
    return (f"building this net and running a tiny batch needs "
            f"{'at least' if weights_only else 'about'} {size_text(need)}, but the CPU has "
            f"{size_text(free)} free")


def _shrunk(project: Project, data: str) -> Project:
    """A copy of the project whose data layer serves a tiny batch, when the net allows it."""
    copy = _copy(project)
    layer = copy.graph.layer(data)
    small = {}
    for key, tiny in (("seq_len", TINY_T), ("batch_size", TINY_N)):
        if layer.spec.has_param(key) and layer.get(key) > tiny:
            small[key] = tiny
    if not small:
        return copy
    for key, value in small.items():
        copy.graph.set_param(data, key, value)
    if copy.graph.errors():  # sizes written into the net (a Reshape to 75): keep the real ones
        copy = _copy(project)
    return copy


def _copy(project: Project) -> Project:
    copy = from_dict(project.to_dict(), project_dir=_folder(project))
    copy.path = project.path
    if project.graph._pinned:  # dims fixed from outside (a checkpoint's V) stay fixed
        copy.graph.pin_dims(dict(project.graph._pinned))
    return copy


def _folder(project: Project):
    return project.path.parent if project.path else project.graph.project_dir


def _tiny_source(project: Project, data: str):
    from designer.training.data import open_source
    layer = project.graph.layer(data)
    key = (layer.type, tuple(sorted((k, repr(v)) for k, v in layer.effective_params().items())),
           str(_folder(project)))
    path_key = _stamp(project, layer)
    hit = _sources.get(key)
    if hit is not None and hit[0] == path_key:
        return hit[1]
    source = open_source(layer, _folder(project), seed=0)
    if len(_sources) >= 2:
        _sources.pop(next(iter(_sources)))
    _sources[key] = (path_key, source)
    return source


def _stamp(project: Project, layer) -> tuple:
    """The size and time of the file a data layer reads, so an edited file is read again."""
    from designer.graph import datasets
    for key in ("corpus", "file", "folder", "path"):
        if layer.spec.has_param(key):
            p = datasets.find_data(str(layer.get(key)), _folder(project))
            if p is not None and p.exists():
                st = p.stat()
                return (str(p), st.st_size, st.st_mtime_ns)
    return ()


def _marker(current: dict, name: str):
    def mark(module, args):
        current["layer"] = name
    return mark


def _tn(batch: dict) -> tuple[int, int]:
    shape = tuple(next(iter(batch.values())).shape)
    if len(shape) == 1:
        return 1, shape[0]
    return shape[0], shape[1]


def _named_layer(message: str, graph) -> str | None:
    head = message.split(":", 1)[0].strip()
    return head if head in graph else None


def _failure(error: BaseException, layer: str | None, graph, during: str) -> SmokeResult:
    details = "".join(traceback.format_exception(error))
    return SmokeResult("failed", sentence(error, layer, graph, during), layer, details)


def sentence(error: BaseException, layer: str | None, graph, during: str = "") -> str:
    """One sentence for a user about ``error``, raised by ``layer`` (or by the net)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    kind = graph.layer(layer).type if layer and layer in graph else ""
    who = f"{layer} ({kind})" if layer else "the net"
    if type(error).__name__ in ("DataError",):
        return text
    m = re.search(r"Target (-?\d+) is out of bounds", text)
    if m and layer:
        classes = _classes(graph, layer)
        have = f"only {classes} class scores" if classes else "fewer class scores"
        return (f"{layer}: a label on a real batch is {m.group(1)}, but it gets {have}; give "
                "the layer feeding its logits V outputs")
    if "index out of range in self" in text and layer:
        rows = graph.layer(layer).get("input_dim") if kind == "Embed" else None
        if isinstance(rows, str):  # already V: the data has more symbols than V says
            return (f"{layer}: an id on a real batch is beyond its input_dim ({rows} = "
                    f"{graph.dims.get(rows, '?')}): the data holds more distinct symbols than "
                    "the net was sized for")
        return (f"{layer}: an id on a real batch is beyond its input_dim ({rows}); set "
                "input_dim to V")
    m = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)",
                  text)
    if m and layer:
        return (f"{layer}: gets {m.group(2)} values per row on a real batch, but its weights "
                f"were built for {m.group(3)}")
    m = re.search(r"shape '\[(.*?)\]' is invalid for input of size (\d+)", text)
    if m and layer:
        return f"{layer}: cannot reshape {m.group(2)} values into [{m.group(1)}] on a real batch"
    if isinstance(error, MemoryError) or "out of memory" in text or "can't allocate" in text:
        return f"{who} ran out of memory on a tiny batch: the net is too large for this machine"
    where = f" during {during}" if during else ""
    return f"{who} failed on a real batch{where}: {text}"


def _classes(graph, layer: str):
    info = graph.info(layer)
    spec = graph.layer(layer).spec
    try:
        logits = info.inputs[spec.input_index("logits")]
        axis = graph.layer(layer).get("axis")
        return logits.shape[axis]
    except (KeyError, IndexError, AttributeError):
        return None
