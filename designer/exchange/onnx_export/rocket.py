"""MiniRocket as ONNX nodes, built from the layer's fitted buffers as constants
(:mod:`designer.engines.net.rocket` computes the same).

The input goes to ONNX's (N, C, T) by a Transpose; with ``lengths``, the steps from each
sequence's length on are zeroed (``Range`` over the steps, ``Less`` than each length,
``Where``); a ``Pad`` adds zero steps up to the steps the layer was fitted on, as the module
reads a shorter batch (:func:`fitted_series`, which Hydra's converter shares). Then, per
dilation d the layer uses, one ``Conv`` whose weights are the 84 kernels times their channel
masks (pads 4d, dilation d) gives every kernel's response at every step, (N, 84, T); a
``Where`` puts -inf at the steps that do not count, a ``Greater`` against that dilation's
biases and a ``ReduceSum`` over the steps count those above each bias, and a ``Div`` by the
number of steps that count (at least 1) makes the proportions.
The steps that count: for kernel k at dilation row j with (k + j) odd, those whose window
lies inside the padded sequence (4d <= t < T - 4d); for the others every step (booleans
chosen per kernel by ``And``/``Or``: ONNX Runtime's ``Where`` picks no booleans). T and N stay
dynamic. The comparison holds (N, 84, T, biases at d) booleans per dilation: N x T x F over
them all.
"""
from __future__ import annotations

import numpy as np

from designer.graph.layers.rocket import KERNELS, TAPS


def fitted_series(b, name, module, p, ins):
    """The input as a layer of fixed features reads it (``FittedFeatures._series``): (N, C, T')
    with the steps from each sequence's length on zeroed (when ``lengths`` is given) and zero
    steps after the end up to the steps the layer was fitted on (T' = max(T, fitted))."""
    x = b.op("Transpose", [ins[0]], f"{name}/nct", perm=[0, 2, 1] if p["batch_first"]
             else [1, 2, 0])
    if ins[1] is not None:  # the steps from each sequence's length on are zeros
        given = b.shape_slice(x, 2, 3, f"{name}/given_steps")
        at_given = b.op("Range", [b.const(f"{name}/zero", np.int64(0)),
                                  b.op("Squeeze", [given], f"{name}/given_T"),
                                  b.const(f"{name}/one", np.int64(1))], f"{name}/at_given")
        end = b.op("Unsqueeze", [ins[1], b.ints(f"{name}/axis1", [1])], f"{name}/end")
        valid = b.op("Unsqueeze", [b.op("Less", [at_given, end], f"{name}/valid_nt"),
                                   b.ints(f"{name}/axis_c", [1])], f"{name}/valid")
        x = b.op("Where", [valid, x, b.const(f"{name}/zero_x", np.float32(0.0))],
                 f"{name}/masked")
    # zero steps after the end up to the steps it was fitted on
    fit = b.const(f"{name}/fit_steps", np.array([module.steps()], np.int64))
    extra = b.op("Max", [b.op("Sub", [fit, b.shape_slice(x, 2, 3, f"{name}/in_steps")],
                              f"{name}/short_by"),
                         b.const(f"{name}/none", np.array([0], np.int64))], f"{name}/extra")
    pads = b.op("Concat", [b.const(f"{name}/pads_head", np.zeros(5, np.int64)), extra],
                f"{name}/pads", axis=0)
    return b.op("Pad", [x, pads], f"{name}/padded")


def mini_rocket(b, name, module, p, ins, shapes):
    """MiniRocket's (N, F) proportions, features ordered dilation by dilation, then kernel,
    then bias, as the module orders them."""
    x = fitted_series(b, name, module, p, ins)
    steps = b.shape_slice(x, 2, 3, f"{name}/steps")  # (1,)
    at = b.op("Range", [b.const(f"{name}/zero_at", np.int64(0)),
                        b.op("Squeeze", [steps], f"{name}/T"),
                        b.const(f"{name}/one_at", np.int64(1))], f"{name}/at")  # (T,)
    every = b.op("Unsqueeze", [b.op("Less", [at, steps], f"{name}/every_t"),
                               b.ints(f"{name}/axis_0k", [0, 1])], f"{name}/every")
    lowest = b.const(f"{name}/minus_inf", np.float32(-np.inf))
    one = b.const(f"{name}/at_least", np.float32(1.0))
    steps_axis = b.ints(f"{name}/steps_axis", [2])
    kernels = module.kernels.detach().cpu().float().numpy()  # (84, 9)
    masks = module.masks.detach().cpu().float().numpy()  # (rows, 84, C)
    biases = module.biases.detach().cpu().float().numpy()
    parts, start = [], 0
    for j, (d, per) in enumerate(module.plan()):
        at_d = f"{name}/d{d}"
        w = kernels[:, None, :] * masks[j][:, :, None]  # (84, C, 9)
        c = b.op("Conv", [x, b.const(f"{name}.kernels_d{d}", w)], f"{at_d}/responses",
                 kernel_shape=[TAPS], dilations=[d], pads=[4 * d, 4 * d])  # (N, 84, T)
        pad = b.const(f"{at_d}/pad", np.int64(4 * d))
        inner = b.op("And", [b.op("GreaterOrEqual", [at, pad], f"{at_d}/after_start"),
                             b.op("Less", [at, b.op("Sub", [steps, pad], f"{at_d}/last")],
                                  f"{at_d}/before_end")], f"{at_d}/inner_nt")
        inner = b.op("Unsqueeze", [inner, b.ints(f"{at_d}/axis_k", [0, 1])], f"{at_d}/inner")
        inside = ((np.arange(KERNELS) + j) % 2 == 1).reshape(1, KERNELS, 1)
        keep = b.op("Or", [b.op("And", [b.const(f"{at_d}/inside", inside), inner],
                                f"{at_d}/counted_inner"),
                           b.op("And", [b.const(f"{at_d}/whole", ~inside), every],
                                f"{at_d}/counted_every")], f"{at_d}/counted")  # (1, 84, T)
        c = b.op("Where", [keep, c, lowest], f"{at_d}/kept")
        total = b.op("ReduceSum", [b.op("Cast", [keep], f"{at_d}/counted_f", to=1),
                                   steps_axis], f"{at_d}/total_raw", keepdims=1)
        total = b.op("Max", [total, one], f"{at_d}/total")  # (1, 84, 1)
        bias = biases[start:start + KERNELS * per].reshape(KERNELS, 1, per)
        over = b.op("Greater", [b.op("Unsqueeze", [c, b.ints(f"{at_d}/axis_b", [3])],
                                     f"{at_d}/responses_b"),
                                b.const(f"{name}.biases_d{d}", bias)], f"{at_d}/over")
        count = b.op("ReduceSum", [b.op("Cast", [over], f"{at_d}/over_f", to=1), steps_axis],
                     f"{at_d}/above", keepdims=0)  # (N, 84, per)
        share = b.op("Div", [count, total], f"{at_d}/share")
        parts.append(b.op("Reshape", [share, b.ints(f"{at_d}/flat", [0, -1])],
                          f"{at_d}/features"))
        start += KERNELS * per
    return [b.op("Concat", parts, name, axis=1)]
