"""The mLSTM in ONNX: one ``Scan`` per level, or the unrolled net's MLSTM_UNIT nodes.

ONNX has no mLSTM operator, and the chunkwise-parallel form needs a loop over chunks anyway, so
the export writes the recurrent form (:func:`designer.cells.mlstm.arithmetic.mlstm_unit`), which
computes the same function: the input transform once over all steps, blocks [q, k, v, o, i~,
f~], then a ``Scan`` whose body is one step (:func:`unit`: per head, log f = -softplus(-f~) or
f~, m = max(log f + m_prev, i~), f' = exp(log f + m_prev - m), i' = exp(i~ - m); C = f' C + i'
v k^T, n = f' n + i' k with k divided by sqrt(d); h = sigmoid(o~) (C q) / max(|n.q|, exp(-m))).
The state is three tensors, each ``(num_layers, N, values)``: C (H*H/NH values: per head d x d,
rows the value's index), n (H) and m (NH). T and N stay dynamic.

``lengths`` feed the Scan a valid flag per step: a padded step keeps (C, n, m) and outputs
zero. The mLSTM runs forwards only, so there is no backward direction to write. The unrolled
export (``--unrolled``) writes each step's MLSTM_UNIT with the same ops, its ``cont`` zeroing
the state it finds.
"""
from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper

from designer.exchange.onnx_export.ops import OnnxBuilder, tensor
from designer.exchange.onnx_export.recurrent import FUSED, NODES, UnrolledLayer
from designer.exchange.onnx_export.scan import step_outputs, valid_steps

STATES = ("C", "n", "m")


def unit(b: OnnxBuilder, hint: str, xw: str, c: str, n: str, m: str, hidden: int, heads: int,
         exp_forget: bool, norm: str = "head") -> tuple[str, str, str, str]:
    """One step of the cell on (N, ...) tensors from its input transform ``xw`` (N, 4H + 2NH)
    and the state it finds: (C, n, m, h); ``norm`` the layer's cell_norm."""
    d = hidden // heads
    q, k, v, o, ig, fg = b.op("Split", [xw, b.ints(f"{hint}/blocks",
                                                   [hidden] * 4 + [heads] * 2)],
                              f"{hint}/block", outputs=6, axis=-1)
    by_head = b.ints(f"{hint}/by_head", [-1, heads, d])
    q, k, v = (b.op("Reshape", [t, by_head], f"{hint}/{s}_heads")
               for t, s in ((q, "q"), (k, "k"), (v, "v")))
    k = b.op("Div", [k, b.const(f"{hint}/sqrt_d", np.float32(math.sqrt(d)))], f"{hint}/k")
    log_f = fg if exp_forget else b.op(
        "Neg", [b.op("Softplus", [b.op("Neg", [fg], f"{hint}/neg_f")], f"{hint}/sp")],
        f"{hint}/log_f")
    log_fm = b.op("Add", [log_f, m], f"{hint}/log_f_m")
    m_new = b.op("Max", [log_fm, ig], f"{hint}/m")
    f_p = b.op("Exp", [b.op("Sub", [log_fm, m_new], f"{hint}/f_in")], f"{hint}/f")
    i_p = b.op("Exp", [b.op("Sub", [ig, m_new], f"{hint}/i_in")], f"{hint}/i")
    last = b.ints(f"{hint}/last", [-1])
    last2 = b.ints(f"{hint}/last2", [-2, -1])
    f1, i1 = (b.op("Unsqueeze", [g, last], f"{hint}/{s}_d") for g, s in ((f_p, "f"), (i_p, "i")))
    f2, i2 = (b.op("Unsqueeze", [g, last2], f"{hint}/{s}_dd") for g, s in
              ((f_p, "f"), (i_p, "i")))
    vk = b.op("Mul", [b.op("Unsqueeze", [v, last], f"{hint}/v_col"),
                      b.op("Unsqueeze", [k, b.ints(f"{hint}/row", [-2])], f"{hint}/k_row")],
              f"{hint}/vk")  # (N, NH, d, d)
    c4 = b.op("Reshape", [c, b.ints(f"{hint}/c_shape", [-1, heads, d, d])], f"{hint}/c_heads")
    c_new = b.op("Add", [b.op("Mul", [f2, c4], f"{hint}/fc"),
                         b.op("Mul", [i2, vk], f"{hint}/ivk")], f"{hint}/c")
    n3 = b.op("Reshape", [n, by_head], f"{hint}/n_heads")
    n_new = b.op("Add", [b.op("Mul", [f1, n3], f"{hint}/fn"),
                         b.op("Mul", [i1, k], f"{hint}/ik")], f"{hint}/n")
    num = b.op("Squeeze", [b.op("MatMul", [c_new, b.op("Unsqueeze", [q, last], f"{hint}/q_col")],
                                f"{hint}/cq"), last], f"{hint}/num")
    nq = b.op("Abs", [b.op("ReduceSum", [b.op("Mul", [n_new, q], f"{hint}/nq_terms"), last],
                           f"{hint}/nq_sum", keepdims=0)], f"{hint}/nq")
    den = b.op("Max", [nq, b.op("Exp", [b.op("Neg", [m_new], f"{hint}/neg_m")],
                                f"{hint}/floor")], f"{hint}/den")
    read = b.op("Div", [num, b.op("Unsqueeze", [den, last], f"{hint}/den_d")], f"{hint}/read")
    if norm == "head":  # each head's d values to zero mean and unit variance
        from designer.cells.mlstm.arithmetic import NORM_EPS  # (torch: imported when written)
        read = b.op("LayerNormalization", [read, b.const(f"{hint}/norm_scale",
                                                         np.ones(d, np.float32))],
                    f"{hint}/read_norm", axis=-1, epsilon=float(NORM_EPS))
    h = b.op("Mul", [b.op("Sigmoid", [o], f"{hint}/o"),
                     b.op("Reshape", [read, b.ints(f"{hint}/h_shape", [-1, hidden])],
                          f"{hint}/read_flat")], f"{hint}/h")
    c_flat = b.op("Reshape", [c_new, b.ints(f"{hint}/c_flat", [-1, heads * d * d])],
                  f"{hint}/c_out")
    n_flat = b.op("Reshape", [n_new, b.ints(f"{hint}/n_flat", [-1, hidden])], f"{hint}/n_out")
    return c_flat, n_flat, m_new, h


@NODES.register("MLSTM_UNIT")
def unrolled_unit(layer: UnrolledLayer, node, hint: str, bottoms: list) -> list:
    """The unrolled MLSTM_UNIT node: (C, n, m, xw, cont), each (1, N, ...) -> [C, n, m, h]."""
    b, hidden, heads = layer.b, layer.hidden, layer.module.heads
    exp_forget, norm = node.params["forget_gate"] == "exp", node.params["norm"]
    c, n, m, xw, cont = bottoms
    axis0 = b.ints(f"{hint}/axis0", [0])
    keep = b.op("Unsqueeze", [b.op("Squeeze", [cont, axis0], f"{hint}/cont_n"),
                              b.ints(f"{hint}/axes", [-1])], f"{hint}/cont")
    c, n, m = (b.op("Mul", [b.op("Squeeze", [v, axis0], f"{hint}/{s}_n"), keep],
                    f"{hint}/{s}_conted") for v, s in ((c, "C"), (n, "n"), (m, "m")))
    xw = b.op("Squeeze", [xw, axis0], f"{hint}/xw")
    outs = unit(b, hint, xw, c, n, m, hidden, heads, exp_forget, norm)
    return [b.op("Unsqueeze", [v, axis0], f"{hint}/{s}_step")
            for v, s in zip(outs, STATES + ("h",))]


def _body(b: OnnxBuilder, hint: str, hidden: int, heads: int, exp_forget: bool,
          masked: bool, norm: str = "head"):
    """The Scan body: states C, n, m (N, ...), scan inputs xw_t (N, 4H + 2NH) and, with
    lengths, valid_t (N, 1) -> the new states and h as the step's output."""
    inner = OnnxBuilder()
    inner._used = b._used  # one namespace with the outer graph
    names = [inner.fresh(f"{hint}/{s}_in") for s in STATES]
    xw_t = inner.fresh(f"{hint}/xw_t")
    valid_t = inner.fresh(f"{hint}/valid_t") if masked else None
    *new, y = unit(inner, f"{hint}/unit", xw_t, *names, hidden, heads, exp_forget, norm)
    outs = step_outputs(inner, hint, new, y, names, valid_t, STATES)
    widths = (hidden * hidden // heads, hidden, heads, hidden)

    def value(name, width, elem=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, elem, ["N", width])
    ins = [value(v, w) for v, w in zip(names, widths)] + [
        value(xw_t, 4 * hidden + 2 * heads)]
    if masked:
        ins.append(value(valid_t, 1, TensorProto.BOOL))
    return helper.make_graph(inner.nodes, hint.replace("/", "_") + "_step", ins,
                             [value(v, w) for v, w in zip(outs, widths)],
                             initializer=inner.initializers)


@FUSED.register("mLSTM")
def scan(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """The layer over time-major ``x`` (T, N, E) as Scan ops; returns (y, [C, n, m])."""
    h, levels, heads = module.hidden, module.levels, module.heads
    weights = {k: tensor(v) for k, v in module.named_parameters()}
    exp_forget = module.forget == "exp"
    inits = [[s] if levels == 1 else b.op(
        "Split", [s, b.ints(f"{name}/levels_{j}", [1] * levels)], f"{name}/{STATES[j]}0",
        outputs=levels, axis=0) for j, s in enumerate(states)]
    axis0 = b.ints(f"{name}/axis0", [0])
    valid = None if lengths is None else valid_steps(b, name, x, lengths)
    finals: list[list[str]] = [[] for _ in STATES]
    for k in range(levels):
        hint = f"{name}/l{k}" if levels > 1 else name
        w = b.const(f"{name}.W_xc_l{k}", weights[f"W_xc_l{k}"].T.copy())
        xw = b.op("Add", [b.op("MatMul", [x, w], f"{hint}/xw_mm"),
                          b.const(f"{name}.b_c_l{k}", weights[f"b_c_l{k}"])], f"{hint}/xw")
        starts = [b.op("Squeeze", [inits[j][k], axis0], f"{hint}/{s}0")
                  for j, s in enumerate(STATES)]
        scanned = [xw] + ([valid] if valid is not None else [])
        *lasts, x = b.op("Scan", starts + scanned, f"{hint}/scan", outputs=4,
                         num_scan_inputs=len(scanned),
                         body=_body(b, hint, h, heads, exp_forget, valid is not None,
                                    module.norm))
        for j, last in enumerate(lasts):
            finals[j].append(b.op("Unsqueeze", [last, axis0], f"{hint}/final_{STATES[j]}"))
    return x, [f[0] if levels == 1 else b.op("Concat", f, f"{name}/final_{STATES[j]}", axis=0)
               for j, f in enumerate(finals)]
