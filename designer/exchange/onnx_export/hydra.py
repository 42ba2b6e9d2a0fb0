"""Hydra as ONNX nodes, built from the layer's fitted buffers as constants
(:mod:`designer.engines.net.hydra` computes the same).

The input is read as MiniRocket's converter reads it (:func:`rocket.fitted_series`: (N, C, T),
the steps from each sequence's length on zeroed, zero steps up to the fitted length). Its
first difference is the input from step 1 on less the input up to its last step (two
``Slice`` and a ``Sub``). Then, per dilation d and view (the series, then its difference): the
groups' channel sums (a ``MatMul`` by that view's rows of ``mix``, (N, g, T)), one grouped
``Conv`` of the groups' kernels (group g, pads 4d, dilation d), a ``Reshape`` to (N, g, k, T),
and the competition: ``ArgMax`` over each group's kernels (the first kernel where responses
tie, as torch's ``max`` picks: a zero-padded stretch gives all-equal responses), ``Equal``
against the kernels' indices, and a ``ReduceSum`` over the steps of the responses where each
kernel wins (the soft counts); ``ArgMin`` the same way, counting ones (the hard counts). The
features are joined in the module's order, their positive parts' square roots taken
(``Relu``, ``Sqrt``) and zeros appended up to ``num_features``. T and N stay dynamic; the
competition holds (N, g, k, T) values per dilation and view: N x T x F / 2 over them all.
"""
from __future__ import annotations

import numpy as np

from designer.graph.layers.hydra import TAPS

from designer.exchange.onnx_export.rocket import fitted_series

INT64_MAX = np.iinfo(np.int64).max


def _difference(b, name, x, at_least_one: bool):
    """(N, C, T - 1): ``x[t+1] - x[t]`` along the steps; one zero step when ``x`` has one
    step and ``at_least_one`` (the module reads a one-step series' difference as zeros)."""
    axis = b.ints(f"{name}/axis_t", [2])
    later = b.op("Slice", [x, b.ints(f"{name}/from1", [1]), b.ints(f"{name}/end", [INT64_MAX]),
                           axis], f"{name}/later")
    earlier = b.op("Slice", [x, b.ints(f"{name}/start", [0]), b.ints(f"{name}/stop", [-1]),
                             axis], f"{name}/earlier")
    diff = b.op("Sub", [later, earlier], f"{name}/diff")
    if not at_least_one:
        return diff
    short = b.op("Max", [b.op("Sub", [b.ints(f"{name}/one_step", [1]),
                                      b.shape_slice(diff, 2, 3, f"{name}/diff_steps")],
                              f"{name}/diff_short_by"),
                         b.ints(f"{name}/no_step", [0])], f"{name}/diff_extra")
    pads = b.op("Concat", [b.ints(f"{name}/diff_pads_head", [0] * 5), short],
                f"{name}/diff_pads", axis=0)
    return b.op("Pad", [diff, pads], f"{name}/diff_padded")


def _compete(b, at, z, kernels, wins):
    """(N, g, k) per kernel of each group: the sum over the steps of its responses where it
    responds most (``ArgMax``), and the count of the steps where it responds least
    (``ArgMin``), the first kernel taking a tie; ``z`` is (N, g, k, T)."""
    axis_t = b.ints(f"{at}/axis_t", [3])
    top = b.op("ArgMax", [z], f"{at}/at_top", axis=2, keepdims=1, select_last_index=0)
    is_top = b.op("Equal", [top, kernels], f"{at}/is_top")  # (N, g, k, T)
    most = b.op("ReduceSum", [b.op("Where", [is_top, z, wins[0]], f"{at}/top_won"), axis_t],
                f"{at}/most", keepdims=0)
    low = b.op("ArgMin", [z], f"{at}/at_low", axis=2, keepdims=1, select_last_index=0)
    is_low = b.op("Equal", [low, kernels], f"{at}/is_low")
    least = b.op("ReduceSum", [b.op("Where", [is_low, wins[1], wins[0]], f"{at}/low_won"),
                               axis_t], f"{at}/least", keepdims=0)
    return most, least


def hydra(b, name, module, p, ins, shapes):
    """Hydra's (N, F) features, ordered dilation by dilation, then view, then the maxima's
    before the minima's, group by group, as the module orders them."""
    x = fitted_series(b, name, module, p, ins)
    views = (x, _difference(b, name, x, module.steps() < 2))
    used, g = module.plan()
    k = module.kernels
    weights = module.weights.detach().cpu().float().numpy()  # (rows k, 9)
    mix = module.mix.detach().cpu().float().numpy()  # (rows, C)
    kernels = b.const(f"{name}/kernel_index", np.arange(k, dtype=np.int64).reshape(1, 1, k, 1))
    wins = (b.const(f"{name}/zero_f", np.float32(0.0)), b.const(f"{name}/one_f", np.float32(1.0)))
    split = b.ints(f"{name}/groups_kernels", [0, g, k, -1])
    flat = b.ints(f"{name}/flat", [0, -1])
    parts, row = [], 0
    for d in used:
        for view, x_v in zip(("series", "diff"), views):
            at = f"{name}/d{d}_{view}"
            summed = b.op("MatMul", [b.const(f"{name}.mix_d{d}_{view}", mix[row:row + g]), x_v],
                          f"{at}/sums")  # (N, g, T)
            w = weights[row * k:(row + g) * k].reshape(g * k, 1, TAPS)
            z = b.op("Conv", [summed, b.const(f"{name}.weights_d{d}_{view}", w)],
                     f"{at}/responses", kernel_shape=[TAPS], dilations=[d],
                     pads=[4 * d, 4 * d], group=g)  # (N, g k, T)
            z = b.op("Reshape", [z, split], f"{at}/by_group")
            for count in _compete(b, at, z, kernels, wins):
                parts.append(b.op("Reshape", [count, flat], f"{count}_flat"))
            row += g
    made = b.op("Concat", parts, f"{name}/made", axis=1)
    roots = b.op("Sqrt", [b.op("Relu", [made], f"{name}/positive")],
                 name if module.num_features == row * k * 2 else f"{name}/roots")
    rest = module.num_features - row * k * 2
    if rest == 0:
        return [roots]
    return [b.op("Pad", [roots, b.ints(f"{name}/zeros", [0, 0, 0, rest])], name)]
