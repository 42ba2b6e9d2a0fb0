"""Generation: stateful sampling, one step per new symbol.

The recurrent state is carried forward, so each new character costs one time step (MyCaffe's
output window re-runs the whole 75-character window for every character instead). Temperature
scales the logits (0 picks the most likely symbol), top-k keeps only the k most likely, and a
seed makes the result repeatable. Symbols are handed to a callback as they are made.
"""
from __future__ import annotations

from typing import Callable

import torch

from designer.engines.build import Net


def score(logits: torch.Tensor, symbol: int, k: int = 5) -> tuple[float, list]:
    """How surprising ``symbol`` is under ``logits`` (nats, at temperature 1: the model's own
    belief, whatever temperature drew it) and the ``k`` likeliest symbols as ``(id, p)``."""
    logp = torch.log_softmax(logits.float().cpu(), 0)
    p, ids = logp.exp().topk(min(k, logp.numel()))
    return float(-logp[symbol]), [(int(i), float(q)) for i, q in zip(ids, p)]


def pick(logits: torch.Tensor, temperature: float, top_k: int, gen: torch.Generator) -> int:
    """One symbol from a vector of logits."""
    if temperature < 0:
        raise ValueError("the temperature must be 0 or more")
    logits = logits.float().cpu()
    if temperature == 0:
        return int(torch.argmax(logits))
    logits = logits / temperature
    if 0 < top_k < logits.numel():
        kth = torch.topk(logits, top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, 0)
    return int(torch.multinomial(probs, 1, generator=gen))


class Sampler:
    """Feeds symbols through a net one step at a time, keeping its recurrent state.

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
        out = self.net({f"{self.data}.data": x}, self.state, want=(self.logits_at[0],))
        self.state = out.state
        return out.blobs[self.logits_at].reshape(len(ids), -1)[-1]

    @torch.no_grad()
    def sample(self, prime: list[int], n: int, temperature: float = 1.0, top_k: int = 0,
               seed: int | None = None, on_symbol: Callable[[int], object] | None = None,
               stop: Callable[[], bool] | None = None,
               on_logits: Callable[[int, torch.Tensor], object] | None = None) -> list[int]:
        """Generate ``n`` symbols after ``prime``; ``on_symbol`` gets each as it is made, and
        ``on_logits`` each with the logits it was drawn from (before ``on_symbol``)."""
        if not prime:
            raise ValueError("generation needs at least one symbol to start from")
        was_training = self.net.training
        self.net.eval()
        gen = torch.Generator()
        gen.manual_seed(seed if seed is not None else torch.seed() % 2**63)
        self.reset()
        try:
            logits = self.feed(list(prime))
            out: list[int] = []
            for _ in range(n):
                if stop is not None and stop():
                    break
                s = pick(logits, temperature, top_k, gen)
                out.append(s)
                if on_logits is not None:
                    on_logits(s, logits)
                if on_symbol is not None:
                    on_symbol(s)
                logits = self.feed([s])
            return out
        finally:
            self.net.train(was_training)


@torch.no_grad()
def sample_window(net: Net, prime: list[int], n: int, window: int, temperature: float = 1.0,
                  top_k: int = 0, seed: int = 0, device="cpu") -> list[int]:
    """The MyCaffe way, kept for comparison: re-run the last ``window`` symbols for every new
    one, with the state reset each time."""
    net.eval()
    data, at = net.sources[0], net.logits_source()
    gen = torch.Generator().manual_seed(seed)
    seq = list(prime)
    out = []
    for _ in range(n):
        x = torch.tensor(seq[-window:], dtype=torch.long, device=device).view(-1, 1)
        logits = net({f"{data}.data": x}, None, want=(at[0],)).blobs[at]
        s = pick(logits.reshape(x.shape[0], -1)[-1], temperature, top_k, gen)
        seq.append(s)
        out.append(s)
    return out
