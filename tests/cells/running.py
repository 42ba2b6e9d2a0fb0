"""What the cells' engine tests run a layer or a net on: a batch of the tiny char nets'
symbols, and the bytes a layer keeps for its backward pass."""
import torch

from tests.engines.probes import saved_bytes


def char_feeds(seed: int = 0, steps: int = 10, batch: int = 4, vocab: int = 12) -> dict:
    """Symbols, targets and sequence starts for a tiny char net, one sequence starting anew
    mid-way (at step 6 of sequence 2)."""
    gen = torch.Generator().manual_seed(seed)
    data = torch.randint(0, vocab, (steps, batch), generator=gen)
    cont = torch.ones(steps, batch)
    cont[0] = 0
    cont[6, 2] = 0
    return {"data.data": data, "data.cont": cont, "data.label": data.roll(-1, 0)}


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest difference between ``a`` and ``b``, relative to ``b``'s largest value."""
    return ((a.double() - b.double()).abs().max() / b.double().abs().max()).item()


def kept_bytes(layer: torch.nn.Module, x: torch.Tensor) -> int:
    """The bytes ``layer(x)`` saves for its backward pass beyond its parameters and ``x``."""
    return saved_bytes(lambda: layer(x), *layer.parameters(), x)
