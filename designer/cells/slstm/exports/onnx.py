"""The sLSTM in ONNX: one ``Scan`` per level and direction, or the unrolled net's nodes.

ONNX has no sLSTM operator, so the export writes the recurrence as the FUSED engine runs it:
the input transform once over all steps, then a ``Scan`` whose body is one step: the heads'
recurrent blocks as one batched ``MatMul`` ((heads, N, d) x (heads, d, 4d)), the sum with the
step's input transform and the unit (:func:`unit`: log i = i~, log f = -softplus(-f~) or f~,
m = max(log f + m_prev, log i), log i where n_prev = 0; i' = exp(log i - m), f' = exp(log f +
m_prev - m); c = f' c + i' tanh(z~), n = f' n + i', h = sigmoid(o~) c / n). The state is four
tensors, h, c, n and m, each ``(num_layers * directions, N, H)``. T and N stay dynamic.

``lengths`` feed the Scan a valid flag per step: a padded step keeps the state and outputs
zero. The backward direction reads each sequence's valid steps reversed (``ReverseSequence``,
which leaves the padding in place) or, without lengths, runs the Scan backwards. The unrolled
export (``--unrolled``) writes the HEAD_INNER_PRODUCT and SLSTM_UNIT nodes with the same ops.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from designer.exchange.onnx_export.ops import OnnxBuilder, tensor
from designer.exchange.onnx_export.recurrent import FUSED, NODES, UnrolledLayer
from designer.exchange.onnx_export.scan import step_outputs, valid_steps

STATES = ("h", "c", "n", "m")


def head_matmul(b: OnnxBuilder, hint: str, h: str, w_t: str, heads: int, d: int,
                out_shape: list) -> str:
    """R h for h (..., H) and ``w_t`` (heads, d, 4d), each head's block transposed: the
    result reshaped to ``out_shape`` (its last axis 4H, gate blocks [i, f, z, o])."""
    hh = b.op("Reshape", [h, b.ints(f"{hint}/heads_shape", [-1, heads, d])], f"{hint}/hh")
    hh = b.op("Transpose", [hh], f"{hint}/by_head", perm=[1, 0, 2])
    out = b.op("MatMul", [hh, w_t], f"{hint}/rh")  # (heads, M, 4d)
    out = b.op("Reshape", [out, b.ints(f"{hint}/gd", [heads, -1, 4, d])], f"{hint}/rh4")
    out = b.op("Transpose", [out], f"{hint}/by_gate", perm=[1, 2, 0, 3])
    return b.op("Reshape", [out, b.ints(f"{hint}/out_shape", out_shape)], hint)


def unit(b: OnnxBuilder, hint: str, pre: str, c: str, n: str, m: str, hidden: int,
         exp_forget: bool) -> tuple[str, str, str, str]:
    """One step of the cell from its pre-activations: (h, c, n, m)."""
    i_t, f_t, z_t, o_t = b.op("Split", [pre, b.ints(f"{hint}/blocks", [hidden] * 4)],
                              f"{hint}/gate", outputs=4, axis=-1)
    log_f = f_t if exp_forget else b.op(
        "Neg", [b.op("Softplus", [b.op("Neg", [f_t], f"{hint}/neg_f")], f"{hint}/sp")],
        f"{hint}/log_f")
    zero = b.const(f"{hint}/zero", np.float32(0.0))
    fresh = b.op("Equal", [n, zero], f"{hint}/fresh")
    log_fm = b.op("Add", [log_f, m], f"{hint}/log_f_m")
    m_new = b.op("Where", [fresh, i_t, b.op("Max", [log_fm, i_t], f"{hint}/max")],
                 f"{hint}/m")
    i_p = b.op("Exp", [b.op("Sub", [i_t, m_new], f"{hint}/i_in")], f"{hint}/i")
    f_p = b.op("Where", [fresh, zero, b.op("Exp", [b.op("Sub", [log_fm, m_new],
                                                        f"{hint}/f_in")], f"{hint}/f_exp")],
               f"{hint}/f")
    c_new = b.op("Add", [b.op("Mul", [f_p, c], f"{hint}/fc"),
                         b.op("Mul", [i_p, b.op("Tanh", [z_t], f"{hint}/z")], f"{hint}/iz")],
                 f"{hint}/c")
    n_new = b.op("Add", [b.op("Mul", [f_p, n], f"{hint}/fn"), i_p], f"{hint}/n")
    h = b.op("Mul", [b.op("Sigmoid", [o_t], f"{hint}/o"),
                     b.op("Div", [c_new, n_new], f"{hint}/c_over_n")], f"{hint}/h")
    return h, c_new, n_new, m_new


@NODES.register("HEAD_INNER_PRODUCT")
def _head_inner_product(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    """The heads' recurrent blocks on the step's h: (1, N, H) -> (1, N, 4H)."""
    w = layer.array(node.params["weights"][0])
    w_t = layer.weight(node.params["weights"][0], "heads", lambda a: a.transpose(0, 2, 1).copy())
    return [head_matmul(layer.b, hint, bot[0], w_t, w.shape[0], w.shape[2],
                        [1, -1, w.shape[1] * w.shape[0]])]


@NODES.register("SLSTM_UNIT")
def unrolled_unit(layer: UnrolledLayer, node, hint: str, bottoms: list) -> list:
    """The unrolled SLSTM_UNIT node: (c, n, m, gates, cont) -> [c, n, m, h]."""
    b, hidden, exp_forget = layer.b, layer.hidden, node.params["forget_gate"] == "exp"
    c, n, m, pre, cont = bottoms
    keep = b.op("Unsqueeze", [cont, b.ints(f"{hint}/axes", [-1])], f"{hint}/cont")
    c, n, m = (b.op("Mul", [v, keep], f"{hint}/{s}_conted") for v, s in
               ((c, "c"), (n, "n"), (m, "m")))
    h, c, n, m = unit(b, hint, pre, c, n, m, hidden, exp_forget)
    return [c, n, m, h]


def _body(b: OnnxBuilder, hint: str, w_t: str, heads: int, hidden: int, exp_forget: bool,
          masked: bool):
    """The Scan body: states h, c, n, m (N, H), scan inputs xw_t (N, 4H) and, with lengths,
    valid_t (N, 1) -> the new states and h as the step's output."""
    inner = OnnxBuilder()
    inner._used = b._used  # one namespace with the outer graph
    names = [inner.fresh(f"{hint}/{s}_in") for s in STATES]
    xw_t = inner.fresh(f"{hint}/xw_t")
    valid_t = inner.fresh(f"{hint}/valid_t") if masked else None
    rh = head_matmul(inner, f"{hint}/rec", names[0], w_t, heads, hidden // heads,
                     [-1, 4 * hidden])
    pre = inner.op("Add", [rh, xw_t], f"{hint}/pre")
    new = unit(inner, f"{hint}/unit", pre, *names[1:], hidden, exp_forget)
    outs = step_outputs(inner, hint, new, new[0], names, valid_t, STATES)

    def value(name, width=hidden, elem=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, elem, ["N", width])
    ins = [value(v) for v in names] + [value(xw_t, 4 * hidden)]
    if masked:
        ins.append(value(valid_t, 1, TensorProto.BOOL))
    return helper.make_graph(inner.nodes, hint.replace("/", "_") + "_step", ins,
                             [value(v) for v in outs], initializer=inner.initializers)


@FUSED.register("sLSTM")
def scan(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """The layer over time-major ``x`` (T, N, E) as Scan ops; returns (y, [h, c, n, m])."""
    h, dirs, levels, heads = module.hidden, module.directions, module.levels, module.heads
    weights = {k: tensor(v) for k, v in module.named_parameters()}
    exp_forget = module.forget_gate == "exp"
    chains = levels * dirs
    inits = [[s] if chains == 1 else b.op(
        "Split", [s, b.ints(f"{name}/chains_{j}", [1] * chains)], f"{name}/{STATES[j]}0",
        outputs=chains, axis=0) for j, s in enumerate(states)]
    axis0 = b.ints(f"{name}/axis0", [0])
    valid = None if lengths is None else valid_steps(b, name, x, lengths)
    finals: list[list[str]] = [[] for _ in STATES]
    for k in range(levels):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            hint = f"{name}/l{k}{sfx}" if chains > 1 else name
            w = b.const(f"{name}.W_xc_l{k}{sfx}", weights[f"W_xc_l{k}{sfx}"].T.copy())
            xw = b.op("Add", [b.op("MatMul", [x, w], f"{hint}/xw_mm"),
                              b.const(f"{name}.b_c_l{k}{sfx}", weights[f"b_c_l{k}{sfx}"])],
                      f"{hint}/xw")
            w_t = b.const(f"{name}.W_hc_l{k}{sfx}",
                          weights[f"W_hc_l{k}{sfx}"].transpose(0, 2, 1).copy())
            starts = [b.op("Squeeze", [inits[j][k * dirs + d], axis0], f"{hint}/{s}0")
                      for j, s in enumerate(STATES)]
            backwards = d == 1 and lengths is None
            if d == 1 and lengths is not None:
                xw = b.op("ReverseSequence", [xw, lengths], f"{hint}/xw_reversed",
                          batch_axis=1, time_axis=0)
            scanned = [xw] + ([valid] if valid is not None else [])
            extra = {"scan_input_directions": [1] * len(scanned),
                     "scan_output_directions": [1]} if backwards else {}
            *lasts, hs = b.op("Scan", starts + scanned, f"{hint}/scan", outputs=5,
                              num_scan_inputs=len(scanned),
                              body=_body(b, hint, w_t, heads, h, exp_forget,
                                         valid is not None), **extra)
            if d == 1 and lengths is not None:
                hs = b.op("ReverseSequence", [hs, lengths], f"{hint}/h_reversed",
                          batch_axis=1, time_axis=0)
            outs.append(hs)
            for j, last in enumerate(lasts):
                finals[j].append(b.op("Unsqueeze", [last, axis0], f"{hint}/final_{STATES[j]}"))
        x = outs[0] if dirs == 1 else b.op("Concat", outs, f"{name}/l{k}/both", axis=-1)
    return x, [f[0] if chains == 1 else b.op("Concat", f, f"{name}/final_{STATES[j]}", axis=0)
               for j, f in enumerate(finals)]
