"""What a MiniRocket or Hydra layer holds: the rules :mod:`designer.graph.memory_layers` applies
to them.

It keeps nothing for the backward pass: no gradient flows through it, so autograd saves none
of its tensors (``tests/engines/net/test_mini_rocket.py`` checks it with
``torch.autograd.graph.saved_tensors_hooks``). It holds its own buffers: a channel mask per
dilation and kernel, a bias per feature, the plan (dilations, features per dilation) and the
steps it was fitted on.

Its forward pass runs one dilation at a time (``designer.engines.net.rocket.MiniRocket.forward``)
and holds at once, at the dilation that needs most:

- its input as (N, C, T) fp32 (a copy where the padded steps are zeroed);
- which steps count for each kernel, (84, T), a byte each (the same for every sequence), and
  while the responses are masked its negation too;
- the kernels' responses, (N, 84, T) fp32: while the uncounted steps are masked out, the
  responses, their masked copy and the last dilation's masked responses (still named until
  the new ones replace them); then the masked ones alone, with what counting the steps above
  each bias takes: the comparisons, a byte and a float each, at most ``ROCKET_CHUNK`` of them
  at once (whole sequences: one at least), or, past ``ROCKET_SORT_ABOVE`` biases a kernel,
  the responses sorted (fp32 values, int64 indices);
- the features made so far, (N, F) fp32, copied once when they are joined.

Checked against the storages the ops allocate on the CPU (the same test). Not counted: on the
device it runs on, it also keeps the features of the sequences it has read, F x 4 bytes each,
up to 256 MiB (``designer.graph.layers.rocket.REMEMBER_BYTES``), which a training set fills in
its first pass: a size of the data, not of a step.
"""
from __future__ import annotations

from designer.graph.layers import hydra as H
from designer.graph.layers.rocket import CHUNK as ROCKET_CHUNK
from designer.graph.layers.rocket import KERNELS, dilations, features
from designer.graph.layers.rocket import SORT_ABOVE as ROCKET_SORT_ABOVE


def rocket_bytes(ctx) -> tuple[int, int]:
    """(bytes of the buffers the layer alone holds, bytes its forward holds at once) for the
    bound shapes and parameters of ``ctx`` (a ``memory_layers.Context``)."""
    x, p = ctx.inputs[0][0], ctx.params
    t, n, c = (x[1], x[0], x[2]) if p["batch_first"] else x
    f, rows = features(p["num_features"]), p["max_dilations"]
    buffers = 4 * (rows * KERNELS * c + f) + 2 * 8 * rows + 8 + 1  # and length, fitted
    steps = KERNELS * t  # one sequence's responses
    _, per = dilations(t, p["num_features"], rows)

    def counting(k: int) -> int:
        if k > ROCKET_SORT_ABOVE:
            return (4 + 8) * n * steps
        return 5 * min(n, max(1, ROCKET_CHUNK // (steps * k))) * steps * k

    # masking: the responses and their masked copy, the last dilation's masked responses
    # while the next are made, and the counted steps with their negation; counting: the
    # masked responses, the counted steps and the comparisons (or the sort)
    masking = (3 if len(per) > 1 else 2) * 4 * n * steps + 2 * steps
    held = max(masking, 4 * n * steps + steps + max(counting(k) for k in per))
    # the input as (N, C, T); the features made so far, or all of them and their join
    forward = 4 * n * c * t + max(held + 4 * n * f, 2 * 4 * n * f)
    return buffers, forward


def hydra_bytes(ctx) -> tuple[int, int]:
    """Hydra's (bytes of its buffers, bytes its forward holds at once): its kernels (F / 2 x
    9), its channel sums (F / (2 x kernels) x C) and dilations; in its forward, at the
    (dilation, view) of most groups, the input as (N, C, T) fp32 and its difference, the
    groups' channel sums (N, g, T), the responses (N, g x kernels, T), each group's largest
    and smallest response with their kernels (fp32 values, int64 indices, N x g x T each),
    the features made so far and their join (N, F twice)."""
    x, p = ctx.inputs[0][0], ctx.params
    t, n, c = (x[1], x[0], x[2]) if p["batch_first"] else x
    f, k = p["num_features"], p["kernels"]
    rows = f // (H.COUNTS * k)
    buffers = 4 * (rows * k * H.TAPS + rows * c) + 8 * p["max_dilations"] + 8 + 1
    g = H.groups(f, k, len(H.steps_dilations(t, p)))
    series = 4 * n * c * (2 * t - 1)
    held = 4 * n * g * t * (1 + k) + 2 * (4 + 8) * n * g * t + 2 * 4 * n * g * k
    return buffers, series + held + 2 * 4 * n * f
