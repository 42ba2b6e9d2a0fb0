"""What the cells' engine tests run a layer or a net on: a batch of the tiny char nets'
symbols, and the bytes a layer keeps for its backward pass."""
import torch


def char_feeds(seed: int = 0, steps: int = 10, batch: int = 4, vocab: int = 12) -> dict:
    """Symbols, targets and sequence starts for a tiny char net, one sequence starting anew
    mid-way (at step 6 of sequence 2)."""
    gen = torch.Generator().manual_seed(seed)
    data = torch.randint(0, vocab, (steps, batch), generator=gen)
    cont = torch.ones(steps, batch)
    cont[0] = 0
    cont[6, 2] = 0
    return {"data.data": data, "data.cont": cont, "data.label": data.roll(-1, 0)}


def kept_bytes(layer: torch.nn.Module, x: torch.Tensor) -> int:
    """The bytes ``layer(x)`` saves for its backward pass beyond its parameters and ``x``."""
    skip = {p.untyped_storage().data_ptr() for p in layer.parameters()}
    skip.add(x.untyped_storage().data_ptr())
    seen = {}

    def pack(t):
        if t.untyped_storage().data_ptr() not in skip:
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x)
    return sum(seen.values())
