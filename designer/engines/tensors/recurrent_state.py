"""What every recurrent engine shares: a zero state, the check of per-sequence lengths, the
steps where some sequence restarts (and a call split there), and whether a CUDA graph is being
captured (when nothing may be read on the host).

A layer's state is what its cell declares (:attr:`designer.graph.cell.CellSpec.states`), in
that order, each ``(levels, N, size)`` with the sizes the cell gives for the layer's hidden
units.
"""
from __future__ import annotations

import torch

from designer.graph import registry


class CaptureUnsupported(RuntimeError):
    """Raised while a CUDA graph is being captured by a layer that needs the host to decide."""


def zero_state(kind: str, levels: int, n: int, hidden: int, like: torch.Tensor) -> tuple:
    """A zero state of a ``kind`` layer of ``hidden`` units: one tensor per state its cell
    declares, each ``(levels, n, size)`` like ``like``. A cell whose state sizes depend on
    more than the hidden units gives its modules an ``initial_state`` of their own."""
    cell = registry.cell(kind)
    if cell is None:
        raise ValueError(f"'{kind}' is not a recurrent layer type: it carries no state")
    return tuple(like.new_zeros(levels, n, size)
                 for size in cell.sizes({"num_output": hidden}))


def capturing(t: torch.Tensor) -> bool:
    """Whether ``t`` lives on a GPU whose current stream is being captured in a CUDA graph
    (nothing may then be read on the host)."""
    return t.is_cuda and torch.cuda.is_current_stream_capturing()


def reset_points(cont: torch.Tensor, has_state: bool, engine: str) -> list[int]:
    """The steps where some sequence restarts (step 0 only matters with a carried state),
    found on the host: an engine that splits its call there (``engine``, as the message
    names it) cannot run inside a CUDA graph capture."""
    if capturing(cont):
        raise CaptureUnsupported(f"{engine} reads reset positions on the host")
    rows = (cont == 0).any(1).nonzero().flatten().tolist()
    return [t for t in rows if t > 0 or has_state]


def between_resets(run, x: torch.Tensor, h: torch.Tensor, cont: torch.Tensor | None,
                   lengths: torch.Tensor | None, has_state: bool, engine: str) -> tuple:
    """Run ``run(x_piece, h, lengths_piece) -> (y, h)`` over the pieces of time-major ``x``
    between the steps where some sequence restarts, multiplying the state ``h`` (chains, N,
    H) by ``cont`` there: what an engine does that cannot multiply its state by ``cont``
    inside its computation (``engine`` names it, see :func:`reset_points`). A restart at a
    padded step changes nothing. Returns the output over every step and the final state."""
    t_, n = x.shape[0], x.shape[1]
    points = [] if cont is None else reset_points(cont, has_state, engine)
    ys, start = [], 0
    for p in points + [t_]:
        if p > start:
            piece = None if lengths is None else (lengths - start).clamp(0, p - start)
            y, h = run(x[start:p], h, piece)
            ys.append(y)
        if p < t_:
            keep = cont[p].to(h.dtype)
            if lengths is not None:  # a restart at a padded step changes nothing
                keep = torch.where(lengths > p, keep, 1.0)
            h = h * keep.view(1, n, 1)
        start = p
    return (ys[0] if len(ys) == 1 else torch.cat(ys, 0)), h


def check_lengths(lengths: torch.Tensor, steps: int, batch: int, name: str) -> None:
    """Raise ``ValueError`` unless ``lengths`` holds one length in [0, steps] per sequence.

    Reading the values needs the host: the check is skipped while a CUDA graph is captured.
    """
    if tuple(lengths.shape) != (batch,):
        raise ValueError(f"{name}: 'lengths' must hold one length per sequence, ({batch},), "
                         f"not {tuple(lengths.shape)}")
    if lengths.is_floating_point() or lengths.is_complex():
        raise ValueError(f"{name}: 'lengths' must hold whole numbers, not {lengths.dtype}")
    if capturing(lengths):
        return
    lo, hi = int(lengths.min()), int(lengths.max())
    if lo < 0 or hi > steps:
        bad = lo if lo < 0 else hi
        raise ValueError(f"{name}: a sequence's length is {bad}, but lengths must lie between "
                         f"0 and the {steps} steps of the batch")


def time_major(layer, x: torch.Tensor, cont: torch.Tensor | None) -> tuple:
    """A recurrent layer's input and ``cont`` as (T, N, ...), with T and N: what every
    engine's ``forward`` starts with. A bidirectional layer cannot follow ``cont`` (its
    backward half would read across a reset); that is one sentence naming it."""
    if layer.batch_first:
        x = x.transpose(0, 1)
        cont = None if cont is None else cont.transpose(0, 1)
    if cont is not None and layer.directions == 2:
        raise ValueError(f"{layer.name} is bidirectional: it cannot follow 'cont' (give "
                         "'lengths' for padded sequences)")
    return x, cont, x.shape[0], x.shape[1]
