"""The AUTO engine, the default of LSTM, GRU and RNN layers: the fastest engine that can run the
layer, chosen by timing them on the layer's real shapes.

AUTO holds exactly the cuDNN engine's parameters, as PERSIST does, so checkpoints, resume,
weight conversion, exports (ONNX, PyTorch code, the prototxt's ``engine: CUDNN``), parity, the
unrolled view, inspection and the memory estimate treat it as CUDNN, and switching between the
engines it picks from needs no conversion.

**The choice.** On a GPU, the first training call of each input shape (T, N, E) times one
training step of the layer alone on every candidate (``auto_timing``: forward and backward,
warmed up, captured in a CUDA graph where the training step is, synchronised, the median of
several runs taken in turns)
and keeps the fastest; cuDNN unless another is more than 1% faster. The choice is kept per GPU
name, shape and precision in the user cache folder, so the next run does not time again, and
the run's log says which engine runs and why (``lstm1: AUTO chose PERSIST (1.61x CUDNN at batch
16, timed 7 steps each)``). A call without gradients (validation, generation) or inside a CUDA
graph capture never times: it runs the choice made for its shape, else cuDNN. On the CPU AUTO
runs CUDNN (torch's fused kernel) untimed; padded ``lengths`` run on CUDNN too (PERSIST does not
take packed sequences).

**The candidates.** The engines the layer's cell runs on that hold AUTO's tensors, as its
facts declare (:mod:`designer.cells.classic.spec`): CUDNN, which runs every call, and for an
LSTM PERSIST, wherever its kernels can run the layer (one direction, fp32 or bf16, CUDA C++ or
Triton kernels that build for the shape); a GRU and an RNN have CUDNN alone. The unrolled
engine (CAFFE) is not a candidate: its parameters are another layout (one bias, its own
tensors, ``convert.py``), so running it on these tensors would convert the weights in every
step, inside the timed step and the real one, and its speed comes from its per-step kernels
being replayed in the whole step's CUDA graph with the layers around it, which a layer timed
alone does not show; on the benchmark's rows it was at best level with cuDNN (RESULTS.md). A
user who wants it picks CAFFE.
"""
from __future__ import annotations

import torch

from designer.cells.classic.engines import auto_timing as timing
from designer.cells.classic.engines import persist
from designer.cells.classic.engines.persist import PersistRecurrent
from designer.cells.classic.engines.cudnn import CudnnRecurrent
from designer.cells.classic.spec import CELLS
from designer.engines.tensors.recurrent_state import zero_state
from designer.graph.cell import article

TIMER: timing.Timer | None = None   # None: CUDA events on a GPU, the host's clock elsewhere
TIME_ON_CPU = False                 # time on the CPU too (the tests, with a TIMER of their own)


def precision_of(x: torch.Tensor) -> str:
    """``bf16`` (a bf16 input or bf16 autocast), ``tf32`` (fp32 with TF32 allowed), or the
    input's type: what the timings depend on besides the shapes."""
    if persist._bf16(x):
        return "bf16"
    if x.dtype == torch.float32:
        tf32 = torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32
        return "tf32" if x.is_cuda and tf32 else "fp32"
    return str(x.dtype).replace("torch.", "")


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


class AutoRecurrent(PersistRecurrent):
    """An LSTM, GRU or RNN with the cuDNN engine's parameters, run by whichever of the engines
    its cell runs on with these tensors timed fastest on its shapes (see the module doc)."""

    engine_name = "AUTO"
    # how a candidate runs a call to be timed: a method's name (a stand-in may replace it)
    RUNS = {"CUDNN": "_cudnn", "PERSIST": "_persistent"}
    # why a candidate cannot run a call (``None``: it can); the baseline runs every call
    CANNOT = {"PERSIST": lambda m, x: persist.fallback_reason(m, x)}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cell = CELLS[self.kind]
        # the engine whose tensors AUTO holds runs every call; the others that hold them too
        # (the cell's facts say which) are timed against it
        self.baseline = cell.layout(self.engine_name)
        self.candidates = tuple(e for e in cell.engines if e != self.engine_name
                                and cell.layout(e) == self.baseline)
        self.choices: dict[tuple, str] = {}   # (T, N, E, precision, device) -> engine
        self.decisions: list[str] = []        # what the log says, one sentence a choice
        self.running = self.baseline          # the engine of the current call
        # whether the training step is replayed from a CUDA graph (``TrainStep`` says): the
        # candidates are then timed captured too, else eagerly, with the launch overheads
        # the real step pays
        self.step_captured = True

    def forward(self, x, cont=None, state=None, lengths=None):
        self.running = self._choose(x, state, lengths)
        return super().forward(x, cont, state, lengths)

    def _call(self, x, state):
        if self.running != self.baseline:
            return super()._call(x, state)
        return self._cudnn(x, state)

    def _cudnn(self, x, state):
        return CudnnRecurrent._call(self, x, state)

    # ------------------------------------------------------------------------ choosing --
    def _choose(self, x, state, lengths) -> str:
        xt = x.transpose(0, 1) if self.batch_first else x
        base = self.baseline
        if lengths is not None:
            return self._decided(("lengths",), base, "padded lengths run on cuDNN's packed "
                                 "sequences, which PERSIST does not take")
        if not (xt.is_cuda or TIME_ON_CPU):
            return self._decided(("cpu",), base, "on the CPU: torch's fused kernel, untimed")
        steps, batch, size = xt.shape
        precision = precision_of(xt)
        key = (steps, batch, size, precision, str(xt.device))
        if key in self.choices:
            return self.choices[key]
        capturing = xt.is_cuda and torch.cuda.is_current_stream_capturing()
        if capturing or not (torch.is_grad_enabled() and self.training):
            return base   # only a training step times; this shape has no choice yet
        others = [e for e in self.candidates if e != base]
        if not others:
            return self._decided(key, base, f"{article(self.kind)} has no other engine that "
                                 "holds these tensors")
        cannot = {e: self.CANNOT[e](self, xt) for e in others if e in self.CANNOT}
        others = [e for e in others if cannot.get(e) is None]
        if not others:
            return self._decided(key, base, "; ".join(f"{e} cannot run it: {why}"
                                                      for e, why in cannot.items()))
        where = timing.cache_key(device_name(xt.device), self.kind, self.levels, size,
                                 self.hidden, steps, batch, precision,
                                 bool(self.rnn.dropout and self.levels > 1),
                                 self.step_captured)
        kept = timing.cached(where)
        if kept is not None and kept["engine"] in self.candidates:
            return self._decided(key, kept["engine"], timing.why(
                kept["engine"], kept["seconds"], batch, kept.get("repeats", timing.REPEATS),
                base) + ", kept from an earlier run on this GPU")
        try:
            seconds = self._time([base] + others, xt, state)
        except Exception as e:  # noqa: BLE001 - a failed timing must not fail the run
            first = (str(e).splitlines() or [type(e).__name__])[0][:160]
            return self._decided(key, base, f"timing {', '.join(others)} failed: {first}")
        choice = timing.pick(seconds, base)
        timing.remember(where, {"engine": choice, "seconds": seconds, "batch": batch,
                                "repeats": timing.REPEATS})
        return self._decided(key, choice, timing.why(choice, seconds, batch, timing.REPEATS,
                                                     base))

    def _decided(self, key: tuple, engine: str, reason: str) -> str:
        self.choices[key] = engine
        sentence = f"{self.name}: AUTO chose {engine} ({reason})"
        if sentence not in self.decisions:
            self.decisions.append(sentence)
        return engine

    # ------------------------------------------------------------------------- timing --
    def _time(self, engines, x: torch.Tensor, state) -> dict[str, float]:
        """Median seconds of one training step of this layer alone on each engine."""
        n = x.shape[1]
        st = zero_state(self.kind, self.state_layers, n, self.hidden, x) if state is None \
            else tuple(s.detach() for s in state)
        xs = x.detach().requires_grad_()
        params = [p for p in self.parameters() if p.requires_grad]
        runs = {e: self._step(e, xs, st, params) for e in engines}
        dev = x.device
        timer = TIMER or (timing.cuda_timer if dev.type == "cuda" else timing.clock_timer)
        # the timing's dropout masks and gradient seeds leave the run's random streams as
        # they were, so a run with AUTO draws the same numbers as one without
        with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
            runs, graphed = timing.captured(runs, dev) if self.step_captured else (runs, False)
            # captured: warmed up before the capture; one replay more uploads the graph
            return timing.time_engines(runs, timer, 1 if graphed else timing.WARMUP,
                                       timing.REPEATS)

    def _step(self, engine: str, xs: torch.Tensor, state: tuple, params: list):
        """One training step of the layer on ``engine``: forward, then the gradients of the
        input and every weight (taken, not accumulated into ``.grad``)."""
        dev = xs.device.type
        on, dtype = torch.is_autocast_enabled(dev), torch.get_autocast_dtype(dev)
        call = getattr(self, self.RUNS[engine])
        seed: list = []

        def run():
            # no autocast cache: each step casts its weights, as a training step does
            with torch.autocast(dev, dtype=dtype, enabled=on, cache_enabled=False):
                y, _ = call(xs, state)
            if not seed:
                seed.append(torch.randn_like(y))
            torch.autograd.grad(y, [xs] + params, seed[0])
        return run
