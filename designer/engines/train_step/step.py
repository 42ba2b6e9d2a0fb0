"""One training step (forward, loss, backward, gradient clipping, optimizer step), eager or
captured whole in a CUDA graph.

On CUDA, with static shapes and a fused optimizer (Adam, AdamW, SGD), the first step is captured
once and every later step replays it: the hundreds of small kernels of an unrolled net then cost
no Python or launch overhead. A non-finite loss or gradient norm skips the update on the device
(the fused optimizers' ``found_inf``), so no step needs the host to look at the loss. When capture
is impossible (a layer that must read data on the host, a shape change, an optimizer that cannot
skip on the device) the step runs eagerly and ``graph_note`` says why. A step that carries no
recurrent state (called with ``state=None``: a classifier's) tells its cuDNN-layout layers so
while it runs (``discarding_state``), and they then honour padded ``lengths`` on the device
rather than packing them on the host, so such a step is captured too.

Data-parallel runs hand the step a ``data_parallel`` object (see
``designer.training.run.distributed.DataParallel``): the forward pass then goes through DDP, which
averages the gradients across the processes during the backward pass (so clipping sees the
global gradient norm), and the step's loss, non-finite flag and metrics are averaged with one
small all-reduce, so every process skips the same steps. Both happen inside the CUDA graph when
the step is captured.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import nn

from designer.engines.net.build import Net, detach_state
from designer.engines.tensors.recurrent_state import CaptureUnsupported

FUSED = ("Adam", "AdamW", "SGD")


def make_optimizer(params, solver: dict, device: torch.device) -> torch.optim.Optimizer:
    """The project's solver as a torch optimizer (fused, with a tensor learning rate, on CUDA)."""
    params = list(params)
    kind, lr = solver["type"], solver["base_lr"]
    wd, m1, m2 = solver["weight_decay"], solver["momentum"], solver["momentum2"]
    cuda = device.type == "cuda"
    fused = True if cuda and kind in FUSED else None
    lr_arg = torch.tensor(lr, device=device) if fused else lr
    cap = bool(fused)  # a fused Adam with capturable=True can be replayed in a CUDA graph
    if kind == "Adam":
        return torch.optim.Adam(params, lr=lr_arg, betas=(m1, m2), weight_decay=wd, fused=fused,
                                capturable=cap)
    if kind == "AdamW":
        return torch.optim.AdamW(params, lr=lr_arg, betas=(m1, m2), weight_decay=wd,
                                 fused=fused, capturable=cap)
    if kind == "SGD":
        return torch.optim.SGD(params, lr=lr_arg, momentum=m1, weight_decay=wd, fused=fused)
    if kind == "RMSProp":
        return torch.optim.RMSprop(params, lr=lr, alpha=solver["rms_decay"], weight_decay=wd)
    raise ValueError(f"unknown solver type '{kind}'")


def set_lr(opt: torch.optim.Optimizer, lr: float) -> None:
    for group in opt.param_groups:
        if isinstance(group["lr"], torch.Tensor):
            group["lr"].fill_(lr)
        else:
            group["lr"] = lr


def tell_auto(net: nn.Module, captured: bool) -> None:
    """Tell the layers that time their engines (AUTO's, which keep ``step_captured``)
    whether the training step is replayed from a CUDA graph, so that they time their
    candidates the way the step will run them."""
    for m in net.modules():
        if hasattr(m, "step_captured"):
            m.step_captured = captured


@contextmanager
def discarding_state(layers: list, discarded: bool):
    """While the block runs, tell the recurrent ``layers`` that keep ``state_discarded`` (the
    cuDNN-layout ones) whether the step throws their final state away (then padded ``lengths``
    run on the device, see the classic cells' ``masked``); afterwards they pack again, as
    validation, generation and inspection, which run the same modules between steps,
    expect."""
    for m in layers:
        m.state_discarded = discarded
    try:
        yield
    finally:
        for m in layers:
            m.state_discarded = False


class LossForward(nn.Module):
    """The net up to its loss, as DDP wants a module: ``(feeds, state) -> (loss, metrics,
    state)``, every output a tensor in plain tuples and dicts."""

    def __init__(self, net: Net) -> None:
        super().__init__()
        self.net = net

    def forward(self, feeds: dict, state: dict | None):
        out = self.net(feeds, state)
        metrics = {n: out.blobs[(n, 0)] for n in self.net.metrics}
        metrics.update({n: self.net.squared_error(out, n) for n in self.net.regressions})
        return self.net.loss(out), metrics, out.state


@dataclass
class StepOut:
    """What a step leaves on the device: read it with ``.item()`` only when needed."""

    loss: torch.Tensor
    grad_norm: torch.Tensor
    skipped: torch.Tensor          # 1.0 where the update was skipped (non-finite)
    metrics: dict = field(default_factory=dict)
    state: dict | None = None


class TrainStep:
    """Callable ``(feeds, state) -> StepOut`` performing one optimisation step of ``net``.

    Parameters
    ----------
    net, opt
        The module and its optimizer (from :func:`make_optimizer`).
    clip
        Clip the global gradient norm to this (0: no clipping; the norm is still reported).
    graphs
        Capture the step in a CUDA graph when possible.
    autocast
        ``torch.bfloat16`` for bf16 autocast on CUDA, or ``None``.
    data_parallel
        ``None`` for one process; in a data-parallel run, an object with ``wrap(module,
        stream)`` (returns the module wrapped in DDP, built on ``stream``),
        ``agree(loss, bad, metrics)`` (averages them across the processes) and
        ``capture_warmup`` (eager passes DDP needs before a capture).
    """

    def __init__(self, net: Net, opt: torch.optim.Optimizer, clip: float = 0.0,
                 graphs: bool = True, autocast=None, data_parallel=None):
        self.net, self.opt, self.clip, self.autocast = net, opt, clip, autocast
        self.params = [p for p in net.parameters() if p.requires_grad]
        self.device = self.params[0].device if self.params else torch.device("cpu")
        cuda = self.device.type == "cuda"
        self.data_parallel = data_parallel
        # warm-up and capture share one side stream; DDP, which takes hold of the gradient
        # accumulators when it is built, is built on it too (not on the default stream)
        self._side = torch.cuda.Stream(self.device) if cuda else None
        self.forward: nn.Module = LossForward(net)
        if data_parallel is not None:
            self.forward = data_parallel.wrap(self.forward, self._side)
        self.device_skip = cuda and bool(opt.defaults.get("fused"))
        self.graph_note = ""
        self.use_graph = graphs and cuda and self.device_skip
        if graphs and cuda and not self.device_skip:
            self.graph_note = "not captured: the optimizer cannot skip a step on the device"
        self._graph = None
        tell_auto(net, self.use_graph)
        self._cudnn_layers = [m for m in net.modules() if hasattr(m, "state_discarded")]
        self._shapes = None
        self._static = None
        if self.device_skip:
            self._found = torch.zeros((), device=self.device)
            self._force_skip = torch.zeros((), device=self.device)
            opt.found_inf = self._found

    # ------------------------------------------------------------------------------ body --
    def _body(self, feeds: dict, state: dict | None) -> StepOut:
        self.opt.zero_grad(set_to_none=not self.device_skip)
        with torch.autocast(self.device.type, dtype=self.autocast,
                            enabled=self.autocast is not None), \
                discarding_state(self._cudnn_layers, state is None):
            loss, metrics, out_state = self.forward(feeds, state)
        loss.backward()
        if self.clip > 0:
            norm = nn.utils.clip_grad_norm_(self.params, self.clip, foreach=True)
        else:
            norm = nn.utils.get_total_norm([p.grad for p in self.params if p.grad is not None],
                                           foreach=True)
        loss = loss.detach()
        bad = ~(torch.isfinite(loss) & torch.isfinite(norm))
        metrics = {n: m.detach() for n, m in metrics.items()}
        if self.data_parallel is not None:  # every process: the mean loss, any bad step
            loss, bad, metrics = self.data_parallel.agree(loss, bad, metrics)
        new_state = detach_state(out_state) if state is not None else None
        if self.device_skip:
            self._found.copy_(torch.maximum(bad.float(), self._force_skip))
            self.opt.step()
            skipped = self._found.clone()
        else:
            if bad.item():
                self.opt.zero_grad(set_to_none=True)
            else:
                self.opt.step()
            skipped = bad.float()
        return StepOut(loss, norm.detach(), skipped, metrics, new_state)

    # ------------------------------------------------------------------------- capturing --
    def _capture(self, feeds: dict, state: dict | None) -> None:
        static_feeds = {k: v.clone() for k, v in feeds.items() if v is not None}
        static_state = None if state is None else {
            k: tuple(t.clone() for t in v) for k, v in state.items()}
        side = self._side
        side.wait_stream(torch.cuda.current_stream())
        self._force_skip.fill_(1.0)  # warm-up passes update nothing
        # DDP logs timings, with host syncs, in its first ten iterations: capture after them
        dp = self.data_parallel
        warmups = 3 if dp is None else max(3, dp.capture_warmup)
        with torch.cuda.stream(side):
            for _ in range(warmups):
                self._body(static_feeds, static_state)
        torch.cuda.current_stream().wait_stream(side)
        self._force_skip.fill_(0.0)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=None if dp is None else side):
            out = self._body(static_feeds, static_state)
        self._graph, self._static = graph, (static_feeds, static_state, out)

    def _shape_key(self, feeds, state):
        key = tuple((k, tuple(v.shape), v.dtype) for k, v in sorted(feeds.items())
                    if v is not None)
        if state is not None:
            key += tuple((k, tuple(tuple(t.shape) for t in v)) for k, v in sorted(state.items()))
        return key

    def __call__(self, feeds: dict, state: dict | None = None) -> StepOut:
        feeds = self.net.stage(feeds)  # MiniRocket's remembered features, outside any graph
        if not self.use_graph:
            return self._body(feeds, state)
        key = self._shape_key(feeds, state)
        if self._graph is None:
            blockers = self.net.capture_blockers(carries_state=state is not None)
            if blockers:
                tell_auto(self.net, False)
                self._give_up("not captured: " + blockers[0])
                return self._body(feeds, state)
            try:
                self._capture(feeds, state)
                self._shapes = key
            except CaptureUnsupported as e:
                self._give_up(f"not captured: {e}")
                return self._body(feeds, state)
            except RuntimeError as e:  # capture failed: run eagerly from now on
                self._give_up(f"not captured: {str(e).splitlines()[0][:160]}")
                return self._body(feeds, state)
        if key != self._shapes:
            return self._body(feeds, state)  # a batch of another shape: eager, graph kept
        static_feeds, static_state, out = self._static
        for k, v in feeds.items():
            if v is not None:
                static_feeds[k].copy_(v, non_blocking=True)
        if state is not None:
            for k, v in state.items():
                for dst, src in zip(static_state[k], v):
                    dst.copy_(src)
        self._graph.replay()
        return StepOut(out.loss.clone(), out.grad_norm.clone(), out.skipped.clone(),
                       {k: v.clone() for k, v in out.metrics.items()},
                       None if out.state is None else {
                           k: tuple(t.clone() for t in v) for k, v in out.state.items()})

    def _give_up(self, note: str) -> None:
        self.use_graph = False
        self._graph = self._static = None
        self.graph_note = note
        self._force_skip.fill_(0.0)
        torch.cuda.synchronize()

    @property
    def captured(self) -> bool:
        return self._graph is not None
