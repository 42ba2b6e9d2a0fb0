"""Stateful generation: K streams written at once, one symbol per step, the recurrent state
carried from step to step (MyCaffe's output window re-runs the whole window for every symbol).

One step of all streams is: pick each stream's next symbol from the last logits (temperature,
top-k, seeded Gumbel noise: :mod:`.sampling`), feed those symbols through the net, keep the new
state and logits. Every tensor a step touches is a static buffer, so on a GPU the step is
captured in a CUDA graph (:mod:`designer.engines.train_step.cuda_graphs`) and replayed: a few microseconds of
launch per step instead of a Python walk over the net. The symbols stay on the device and are
read back once per chunk of steps, not once per symbol. On the CPU, and wherever capture fails,
the very same step runs eagerly; both ways give the same symbols for the same noise.

>>> dec = StreamDecoder(net, streams=4, device="cuda", temperature=1.0, seed=1)
>>> dec.prime([12, 7])
>>> ids = dec.run(8000)          # (8000, 4) int64 numpy array
"""
from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np
import torch

from designer.engines.train_step import cuda_graphs as graphs
from designer.engines.net.build import Net

from designer.training.readout.sampling import draw, gumbel_noise

CHUNK = {"cpu": 32, "cuda": 512}   # steps between two reads of the symbols by the host
STEPS_PER_GRAPH = 8                # steps captured in one graph (one replay)
NOISE_BUDGET = 1 << 24             # elements of Gumbel noise drawn ahead (64 MiB of float32)
TOP = 5                            # likeliest symbols kept per step when scoring


@contextlib.contextmanager
def evaluating(net: Net):
    """``net`` in eval mode (no dropout) for the block, then back to what it was."""
    was = net.training
    net.eval()
    try:
        yield
    finally:
        net.train(was)


class StreamDecoder:
    """Writes ``streams`` sequences from one net at once.

    Parameters
    ----------
    net
        A built net with a data layer and a SoftmaxWithLoss layer whose logits are read.
    streams
        K, the sequences written side by side (a batch of K).
    device
        Where the net lives (default: where its parameters are).
    temperature, top_k
        How symbols are picked (see :func:`designer.training.readout.sampling.draw`).
    seed
        Seeds the noise (``None``: a fresh seed); the same seed, device and settings give the
        same symbols.
    graphs
        Capture the step in a CUDA graph on a GPU (``graph_note`` says whether it was).
    chunk
        Steps between two reads of the symbols by the host (default: 32 on a CPU, 512 on a
        GPU); also how often ``stop`` is asked.
    scored
        Also keep, per step and stream, how surprised the model was by the symbol it wrote
        (``-log p`` at temperature 1, in nats: its own belief, whatever temperature drew it)
        and its ``TOP`` likeliest symbols with their probabilities; read back with the
        symbols, for ``run``'s ``on_scores``.
    """

    def __init__(self, net: Net, streams: int = 1, device=None, temperature: float = 1.0,
                 top_k: int = 0, seed: int | None = None, graphs: bool = True,
                 chunk: int | None = None, scored: bool = False):
        if streams < 1:
            raise ValueError("generation needs at least one stream")
        if temperature < 0:
            raise ValueError("the temperature must be 0 or more")
        self.net = net
        self.device = torch.device(device) if device is not None else \
            next(net.parameters()).device
        self.streams, self.temperature, self.top_k = streams, float(temperature), int(top_k)
        self.feed_key = f"{net.sources[0]}.data"
        self.logits_at = net.logits_source()
        self.want = (self.logits_at[0],)
        self.gen = torch.Generator(device=self.device)
        if seed is None:
            self.gen.seed()
        else:
            self.gen.manual_seed(seed)
        self.chunk_wanted = chunk or CHUNK.get(self.device.type, CHUNK["cuda"])
        self.use_graph = graphs and graphs_possible(self.device)
        self.graph_note = "" if self.use_graph else "eager"
        self._replay: Callable[[], None] | None = None
        self.per_graph = STEPS_PER_GRAPH
        # static buffers, made by the first prime()
        self.logits: torch.Tensor | None = None
        self.state: dict = {}
        self.ids = self.out = self.noise = self.pos = None
        self.chunk = 0
        self.stopped = False
        self.scored = scored
        self.surprise = self.top_p = self.top_i = None

    # ---------------------------------------------------------------------------- priming --
    @torch.no_grad()
    def prime(self, ids: list[int]) -> None:
        """Feed ``ids`` to every stream from a zero state; the first symbol follows them."""
        if not ids:
            raise ValueError("generation needs at least one symbol to start from")
        x = torch.tensor(list(ids), dtype=torch.long, device=self.device)
        x = x.view(-1, 1).expand(-1, self.streams).contiguous()
        with evaluating(self.net):
            out = self.net({self.feed_key: x}, None, want=self.want)
        logits = self._last_logits(out, len(ids))
        if self.logits is None:
            self._allocate(logits, out.state)
        else:
            self.logits.copy_(logits)
            self._copy_state(out.state)

    def _allocate(self, logits: torch.Tensor, state: dict) -> None:
        k, v = logits.shape
        self.logits = logits.clone()
        self.state = {name: tuple(t.clone() for t in ts) for name, ts in state.items()}
        self.ids = torch.zeros(k, dtype=torch.long, device=self.device)
        self.pos = torch.zeros(1, dtype=torch.long, device=self.device)
        per = self.per_graph
        room = max(per, NOISE_BUDGET // max(1, k * v)) if self.temperature > 0 else \
            self.chunk_wanted
        self.chunk = max(per, min(self.chunk_wanted, room) // per * per)
        self.out = torch.zeros(self.chunk, k, dtype=torch.long, device=self.device)
        self.noise = None if self.temperature == 0 else \
            torch.zeros(self.chunk, k, v, device=self.device)
        if self.scored:
            top = min(TOP, v)
            self.surprise = torch.zeros(self.chunk, k, device=self.device)
            self.top_p = torch.zeros(self.chunk, k, top, device=self.device)
            self.top_i = torch.zeros(self.chunk, k, top, dtype=torch.long, device=self.device)

    def _last_logits(self, out, steps: int) -> torch.Tensor:
        return out.blobs[self.logits_at].reshape(steps, self.streams, -1)[-1]

    def _copy_state(self, state: dict) -> None:
        for name, tensors in state.items():
            for dst, src in zip(self.state[name], tensors):
                dst.copy_(src)

    # ------------------------------------------------------------------------------ a step --
    def _step(self) -> None:
        """One step of every stream, on static buffers only (so a CUDA graph can hold it)."""
        noise = None if self.noise is None else self.noise.index_select(0, self.pos)[0]
        self.ids.copy_(draw(self.logits, self.temperature, self.top_k, noise))
        self.out.index_copy_(0, self.pos, self.ids.view(1, -1))
        if self.scored:
            logp = torch.log_softmax(self.logits.float(), -1)
            nats = logp.gather(1, self.ids.view(-1, 1)).view(1, -1).neg()
            self.surprise.index_copy_(0, self.pos, nats)
            p, i = logp.topk(self.top_i.shape[-1], -1)
            self.top_p.index_copy_(0, self.pos, p.exp().unsqueeze(0))
            self.top_i.index_copy_(0, self.pos, i.unsqueeze(0))
        res = self.net({self.feed_key: self.ids.view(1, -1)}, self.state, want=self.want)
        self.logits.copy_(self._last_logits(res, 1))
        self._copy_state(res.state)
        self.pos.add_(1)

    def _steps(self, count: int) -> None:
        for _ in range(count):
            self._step()

    def _buffers(self) -> list[torch.Tensor]:
        scores = [self.surprise, self.top_p, self.top_i] if self.scored else []
        return [self.logits, self.ids, self.out, self.pos, *scores,
                *(t for ts in self.state.values() for t in ts)]

    def _capture(self) -> None:
        """Capture ``per_graph`` steps in a CUDA graph; on failure, say why and stay eager."""
        saved = [b.clone() for b in self._buffers()]
        try:
            self._replay = graphs.capture(lambda: self._steps(self.per_graph), self.device,
                                          reset=self.pos.zero_)
            self.graph_note = f"CUDA graph of {self.per_graph} steps"
        except RuntimeError as e:
            self._replay = None
            self.graph_note = f"not captured: {str(e).splitlines()[0][:160]}"
        finally:  # the warm-ups ran for real: put every buffer back
            for b, s in zip(self._buffers(), saved):
                b.copy_(s)
        self.use_graph = False  # tried once

    # ------------------------------------------------------------------------------- run --
    @torch.no_grad()
    def run(self, n: int, on_chunk: Callable[[np.ndarray], object] | None = None,
            stop: Callable[[], bool] | None = None,
            on_scores: Callable[[np.ndarray, np.ndarray, np.ndarray], object] | None = None
            ) -> np.ndarray:
        """The next ``n`` symbols of every stream, as an ``(n, K)`` int64 array.

        ``on_chunk`` gets each chunk's ``(c, K)`` array as soon as it is read back; ``stop``
        is asked before each chunk, and ends the run early when it says so (the array then
        holds what was written). ``run`` may be called again to continue. With ``scored``,
        ``on_scores(surprise (c, K), top_ids (c, K, TOP), top_p (c, K, TOP))`` gets each
        chunk's scores just before ``on_chunk``.
        """
        if self.logits is None:
            raise RuntimeError("prime the decoder before running it")
        pieces, done = [], 0
        self.stopped = False
        with evaluating(self.net), _on(self.device):
            if self.use_graph and n > 0:
                self._capture()
            while done < n:
                if stop is not None and stop():
                    self.stopped = True
                    break
                r = min(self.chunk, n - done)
                self.pos.zero_()
                if self.noise is not None:
                    gumbel_noise(None, self.gen, out=self.noise)
                if self._replay is not None:
                    for _ in range(r // self.per_graph):
                        self._replay()
                    self._steps(r % self.per_graph)
                else:
                    self._steps(r)
                ids = self.out[:r].to("cpu", copy=True).numpy()  # the one host sync of the chunk
                pieces.append(ids)
                done += r
                if self.scored and on_scores is not None:
                    on_scores(*(t[:r].to("cpu", copy=True).numpy()
                                for t in (self.surprise, self.top_i, self.top_p)))
                if on_chunk is not None:
                    on_chunk(ids)
        if not pieces:
            return np.zeros((0, self.streams), dtype=np.int64)
        return np.concatenate(pieces)


def graphs_possible(device: torch.device) -> bool:
    """Whether the decoder may capture its step on ``device`` (tests may say yes on a CPU)."""
    return graphs.can_capture(device)


def _on(device: torch.device):
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


class Sampler:
    """One stream, for the training loop's samples and for comparisons.

    Parameters
    ----------
    net
        A built net with a data layer and a SoftmaxWithLoss layer whose logits are read.
    device
        Where the net lives.
    """

    def __init__(self, net: Net, device: torch.device | str = "cpu"):
        self.net = net
        self.device = torch.device(device)
        self.data = net.sources[0]
        self.logits_at = net.logits_source()
        self.state: dict | None = None

    def reset(self) -> None:
        self.state = None

    @torch.no_grad()
    def feed(self, ids: list[int]) -> torch.Tensor:
        """Run ``ids`` (a prime, or the last symbol) and return the logits after the last."""
        x = torch.tensor(ids, dtype=torch.long, device=self.device).view(-1, 1)
        with evaluating(self.net):
            out = self.net({f"{self.data}.data": x}, self.state, want=(self.logits_at[0],))
        self.state = out.state
        return out.blobs[self.logits_at].reshape(len(ids), -1)[-1]

    def sample(self, prime: list[int], n: int, temperature: float = 1.0, top_k: int = 0,
               seed: int | None = None, on_symbol: Callable[[int], object] | None = None,
               stop: Callable[[], bool] | None = None,
               on_scored: Callable[[int, float, list], object] | None = None) -> list[int]:
        """Generate ``n`` symbols after ``prime``; ``on_symbol`` gets each as it is made, and
        ``on_scored(symbol, nats, [(id, p), ...])`` (before it) how surprised the model was by
        it and its likeliest symbols there."""
        dec = StreamDecoder(self.net, 1, self.device, temperature, top_k, seed, graphs=False,
                            scored=on_scored is not None)
        dec.prime(prime)
        chunk_scores: list = []

        def scores(surprise, top_i, top_p) -> None:
            chunk_scores[:] = [surprise[:, 0].tolist(), top_i[:, 0].tolist(),
                               top_p[:, 0].tolist()]

        def each(ids: np.ndarray) -> None:
            for j, s in enumerate(ids[:, 0].tolist()):
                if on_scored is not None:
                    nats, ti, tp = (c[j] for c in chunk_scores)
                    on_scored(s, nats, list(zip(ti, tp)))
                if on_symbol is not None:
                    on_symbol(s)

        want = on_symbol is not None or on_scored is not None
        out = dec.run(n, each if want else None, stop, scores if on_scored else None)
        return out[:, 0].tolist()
