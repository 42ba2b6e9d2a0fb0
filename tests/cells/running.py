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


def assert_state_carries_step_by_step(m) -> None:
    """A cell's module ``m`` (E=3 inputs) fed one step at a time, its state carried, gives what
    it gives over the whole sequence at once, a restart included (as generation runs it)."""
    m.reset_parameters("uniform", 0.0)
    x = torch.randn(7, 2, 3)
    cont = torch.ones(7, 2)
    cont[4, 1] = 0
    with torch.no_grad():
        whole, (h_whole,) = m(x, cont)
        state, ys = None, []
        for t in range(7):
            y, state = m(x[t:t + 1], cont[t:t + 1], state)
            ys.append(y)
    assert torch.allclose(torch.cat(ys), whole, atol=1e-6)
    assert torch.allclose(state[0], h_whole, atol=1e-6)
