"""Capturing a piece of work in a CUDA graph, the way the training step does (``step.py``):
warm up on a side stream, capture once, then replay.

The work (``body``) must read and write only tensors that outlive the graph (static buffers);
whatever it allocates lives in the graph's private memory pool and is rewritten by each replay.
"""
from __future__ import annotations

from typing import Callable

import torch


def can_capture(device: torch.device) -> bool:
    """Whether work on ``device`` can be captured in a CUDA graph."""
    return device.type == "cuda" and torch.cuda.is_available()


def capture(body: Callable[[], object], device: torch.device, warmups: int = 2,
            reset: Callable[[], object] | None = None) -> Callable[[], None]:
    """Capture ``body`` in a CUDA graph on ``device``; returns the graph's ``replay``.

    Parameters
    ----------
    body
        The work: kernels on static buffers, no host synchronisation.
    device
        A CUDA device.
    warmups
        Times ``body`` runs (for real) on a side stream first, so that lazy initialisation
        (cuDNN plans, Triton compilation, allocator growth) happens outside the capture.
    reset
        Called before each warm-up and before the capture (e.g. to rewind a step counter).
        The caller restores whatever else the warm-ups changed.

    Raises
    ------
    RuntimeError
        Capture failed (a host synchronisation in ``body``, an operation CUDA graphs do not
        support); the device has been synchronised and can be used eagerly.
    """
    with torch.cuda.device(device):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmups):
                if reset is not None:
                    reset()
                body()
        torch.cuda.current_stream().wait_stream(side)
        if reset is not None:
            reset()
        graph = torch.cuda.CUDAGraph()
        try:
            # thread_local: a training run in another thread may allocate meanwhile
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                body()
        except Exception as e:  # noqa: BLE001 - whatever broke the capture, run eagerly
            torch.cuda.synchronize()
            if isinstance(e, RuntimeError):
                raise
            raise RuntimeError(f"{type(e).__name__}: {e}") from e
        return graph.replay
