"""Picking the next symbol from a model's logits, for many streams at once.

Temperature scales the logits (0 picks the most likely symbol), top-k keeps only the k most
likely, and the draw itself is the Gumbel-max trick: ``argmax(logits / T + g)`` with ``g``
standard Gumbel noise picks symbol ``i`` with probability ``softmax(logits / T)[i]``, exactly.
Unlike ``torch.multinomial`` it never asks the host to check the probabilities, so it runs
inside a CUDA graph; and since the noise is drawn ahead, a whole chunk at a time from a seeded
generator, the same seed gives the same symbols on the same device.
"""
from __future__ import annotations

import torch

from designer.engines.net.build import Net


def gumbel_noise(shape, generator: torch.Generator, device=None,
                 out: torch.Tensor | None = None) -> torch.Tensor:
    """Standard Gumbel noise (``-log E``, ``E ~ Exp(1)``) of ``shape``, into ``out`` if given."""
    if out is None:
        out = torch.empty(shape, device=device)
    out.exponential_(generator=generator)
    # exponential_ may return the smallest float but never 0; clamp anyway so log is finite
    return out.clamp_(min=torch.finfo(out.dtype).tiny).log_().neg_()


def draw(logits: torch.Tensor, temperature: float, top_k: int,
         noise: torch.Tensor | None) -> torch.Tensor:
    """The next symbol of each stream.

    Parameters
    ----------
    logits
        ``(K, V)``: one row per stream.
    temperature
        0 picks the most likely symbol (``noise`` is not used and may be ``None``).
    top_k
        Keep only the ``top_k`` most likely symbols (0, or V or more: all).
    noise
        ``(K, V)`` standard Gumbel noise (:func:`gumbel_noise`).

    Returns
    -------
    Tensor
        ``(K,)`` int64 symbol ids, on the logits' device (no host synchronisation).
    """
    if temperature < 0:
        raise ValueError("the temperature must be 0 or more")
    if temperature == 0:
        return logits.argmax(-1)
    scores = logits.float() / temperature
    if 0 < top_k < scores.shape[-1]:
        kth = torch.topk(scores, top_k, dim=-1).values[..., -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    return (scores + noise).argmax(-1)


def pick(logits: torch.Tensor, temperature: float, top_k: int, gen: torch.Generator) -> int:
    """One symbol from a vector of logits (fresh noise from ``gen``, on the CPU)."""
    row = logits.detach().float().cpu().reshape(1, -1)
    noise = None if temperature == 0 else gumbel_noise(row.shape, gen)
    return int(draw(row, temperature, top_k, noise)[0])


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
