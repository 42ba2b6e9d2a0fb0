"""The PERSIST engine: an LSTM layer whose recurrence runs in one persistent kernel per level.

The layer holds exactly the cuDNN engine's parameters (``torch.nn.LSTM``'s, gate order i, f, g,
o), so checkpoints, weight conversion to and from the unrolled net, exports and inspection treat
it as a cuDNN layer. Only the way it runs differs: for each level, the input transform of all
steps is one GEMM, the recurrence is one launch of a persistent kernel (the recurrent weights
stay on the chip for the whole sequence, one barrier per step), and backward is one
launch of its backward kernel followed by GEMMs over all steps for the weight and input
gradients. Dropout between levels is applied as the cuDNN engine applies it.

Two sets of kernels run it: the CUDA C++ ones (``persist_launch``, compiled by NVRTC at first
use; the weights live in registers), wherever they can be built and W_hh fits the GPU's register
files (up to about 1,000 units on an H100/H200); else the Triton ones (``persist_triton``; the
weights are read through L1 each step), which also run on the CPU under Triton's interpreter
for the tests. Where neither can run (no CUDA device, a GRU or RNN, a bidirectional layer,
padded ``lengths``, a type other than fp32/bf16), the layer runs on the cuDNN engine and says
why once (``fallback``, and a warning).
"""
from __future__ import annotations

import math
import os
import warnings

import torch
from torch import nn

from designer.cells.classic.engines.cudnn import CudnnRecurrent

from designer.cells.classic.kernels import persist_launch as persist_cuda

try:
    from designer.cells.classic.kernels import persist_triton as kernels
    from designer.cells.classic.kernels.persist_triton import triton
except Exception:  # noqa: BLE001
    kernels, triton = None, None

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # Triton's CPU interpreter (tests)
BATCH_BLOCK = 32     # batch rows a program handles at once


def _sm_count(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


TUNE: dict = {}   # overrides of plan()'s choices (the benchmark's sweep)


def plan(hidden: int, batch: int, device: torch.device) -> dict:
    """The grid and block sizes for a level of ``hidden`` units and ``batch`` sequences.

    The grid is (unit blocks, batch blocks), at most one program per SM: they must all be
    resident at once for the barrier. On the CPU interpreter it is one program.
    """
    if INTERPRET or device.type != "cuda":
        units, sms = _pow2(max(hidden, 4)), 1
    else:
        # 16 units a program (its 64 rows of W_hh); 32 for wide batches, where the batch
        # blocks use the SMs (chosen by the sweep in bench_persist.py, RESULTS.md)
        units, sms = TUNE.get("U", 32 if batch >= 128 else 16), _sm_count(device)
    unit_blocks = math.ceil(hidden / units)
    if unit_blocks > sms:
        units = _pow2(math.ceil(hidden / sms))
        unit_blocks = math.ceil(hidden / units)
    batch_blocks = max(1, min(math.ceil(batch / 16), sms // unit_blocks))
    rows = math.ceil(batch / batch_blocks)
    bn = TUNE.get("BN", min(32, max(16, _pow2(rows))))
    rows = math.ceil(rows / bn) * bn
    cfg = {"grid": (unit_blocks, math.ceil(batch / rows)), "rows_per": rows, "U": units,
           "BN": bn, "KC": 64, "RC": 128, "STAGES": 3, "warps": 4}
    cfg.update({k: v for k, v in TUNE.items() if k not in ("U", "BN")})
    cfg["fwd_dot"] = 4 * units >= 16 and bn >= 16 and cfg["KC"] >= 16
    cfg["bwd_dot"] = units >= 16 and bn >= 16 and cfg["RC"] >= 16
    return cfg


class _CudaLevel(torch.autograd.Function):
    """One LSTM level's recurrence on the CUDA C++ kernels: (pre, W_hh, h0, c0) -> (y, h_T, c_T).
    bf16 (under autocast) runs on the tensor-core kernels where the shape allows (h and the
    pre-activations' gradient in bf16, c, the gates and the gradients on h and c in fp32); the
    rest runs the fp32 kernels, bf16 cast on the way in and out."""

    @staticmethod
    def forward(ctx, pre, w_hh, h0, c0, cfg):
        steps, batch, four_h = pre.shape
        hidden, dev, dtype = four_h // 4, pre.device, pre.dtype
        lo = torch.bfloat16 if cfg["TC"] else torch.float32   # what h and W travel in
        hs = torch.empty(steps + 1, batch, hidden, device=dev, dtype=lo)
        hs[0] = h0
        cs = torch.empty(steps + 1, batch, hidden, device=dev, dtype=torch.float32)
        cs[0] = c0
        acts = torch.empty(steps, batch, four_h, device=dev, dtype=torch.float32)
        w = w_hh.to(lo).contiguous()
        persist_cuda.forward(pre.to(lo).contiguous(), w, hs, cs, acts, cfg)
        ctx.save_for_backward(w, hs, cs, acts)
        ctx.cfg, ctx.w_dtype, ctx.dtype = cfg, w_hh.dtype, dtype
        return hs[1:].to(dtype), hs[steps].to(dtype, copy=True), cs[steps].to(dtype)

    @staticmethod
    def backward(ctx, dy, dh_last, dc_last):
        w, hs, cs, acts = ctx.saved_tensors
        steps, batch, hidden = hs.shape[0] - 1, hs.shape[1], hs.shape[2]
        dev, lo = hs.device, hs.dtype
        dy = (torch.zeros(steps, batch, hidden, device=dev, dtype=lo) if dy is None
              else dy.to(lo).contiguous())
        dh = (torch.zeros(batch, hidden, device=dev) if dh_last is None
              else dh_last.float().contiguous().clone())
        dc = (torch.zeros(batch, hidden, device=dev) if dc_last is None
              else dc_last.float().contiguous().clone())
        dz = torch.empty(steps, batch, 4 * hidden, device=dev, dtype=lo)
        persist_cuda.backward(dy, acts, cs, w, dz, dh, dc, ctx.cfg)
        mm = ctx.dtype  # bf16 under autocast: the weight gradient's GEMM in bf16 too
        d_w = dz.reshape(-1, 4 * hidden).to(mm).t().mm(hs[:-1].reshape(-1, hidden).to(mm))
        return (dz.to(ctx.dtype), d_w.to(ctx.w_dtype), dh.to(ctx.dtype), dc.to(ctx.dtype), None)


class _Level(torch.autograd.Function):
    """One LSTM level's recurrence on the Triton kernels: (pre, W_hh, h0, c0) -> (y, h_T, c_T)."""

    @staticmethod
    def forward(ctx, pre, w_hh, h0, c0):
        steps, batch, four_h = pre.shape
        hidden = four_h // 4
        cfg = plan(hidden, batch, pre.device)
        dtype = pre.dtype
        hs = torch.empty(steps + 1, batch, hidden, device=pre.device, dtype=dtype)
        hs[0] = h0
        cs = torch.empty(steps + 1, batch, hidden, device=pre.device, dtype=torch.float32)
        cs[0] = c0
        acts = torch.empty(steps, batch, four_h, device=pre.device, dtype=torch.float32)
        bar = torch.zeros(1, device=pre.device, dtype=torch.int32)
        w = w_hh.to(dtype).contiguous()
        kernels._forward[cfg["grid"]](
            pre.contiguous(), w, hs, cs, acts, bar, steps, batch, hidden, cfg["rows_per"],
            U=cfg["U"], BN=cfg["BN"], KC=cfg["KC"], DOT=cfg["fwd_dot"], STAGES=cfg["STAGES"],
            num_warps=cfg["warps"])
        ctx.save_for_backward(w, hs, cs, acts)
        ctx.cfg, ctx.w_dtype = cfg, w_hh.dtype
        y = hs[1:]
        return y, hs[steps].clone(), cs[steps].to(dtype)

    @staticmethod
    def backward(ctx, dy, dh_last, dc_last):
        w, hs, cs, acts = ctx.saved_tensors
        cfg = ctx.cfg
        steps, batch, hidden = dy.shape[0], hs.shape[1], hs.shape[2]
        dev = hs.device
        dy = torch.zeros(steps, batch, hidden, device=dev) if dy is None else dy.contiguous()
        dh = (torch.zeros(batch, hidden, device=dev) if dh_last is None
              else dh_last.float().contiguous().clone())
        dc = (torch.zeros(batch, hidden, device=dev) if dc_last is None
              else dc_last.float().contiguous().clone())
        dz = torch.empty(steps, batch, 4 * hidden, device=dev, dtype=torch.float32)
        bar = torch.zeros(1, device=dev, dtype=torch.int32)
        kernels._backward[cfg["grid"]](
            dy, acts, cs, w, dz, dh, dc, bar, steps, batch, hidden, cfg["rows_per"],
            U=cfg["U"], BN=cfg["BN"], RC=cfg["RC"], DOT=cfg["bwd_dot"], STAGES=cfg["STAGES"],
            num_warps=cfg["warps"])
        # dW_hh = sum_t dz_t^T h_{t-1}: one GEMM over all steps
        d_w = dz.reshape(-1, 4 * hidden).t().mm(hs[:-1].reshape(-1, hidden).float())
        return (dz.to(hs.dtype), d_w.to(ctx.w_dtype), dh.to(hs.dtype), dc.to(hs.dtype))


def kernel_for(hidden: int, batch: int, device: torch.device, bf16: bool = False) -> str | None:
    """Which kernels run a level: "cuda" (CUDA C++, compiled by NVRTC; in bf16 on tensor cores
    where the shape allows) where the GPU's registers hold W_hh, else "triton"; None where
    neither can."""
    choice = TUNE.get("kernel")
    if device.type == "cuda" and not INTERPRET and choice != "triton" and \
            persist_cuda.available() and persist_cuda.ready(hidden, batch, device, bf16):
        return "cuda"
    if kernels is not None and triton is not None and choice != "cuda":
        return "triton"
    return None


def _bf16(x) -> bool:
    """The layer runs in bf16: a bf16 input, or bf16 autocast on CUDA."""
    return isinstance(x, torch.Tensor) and (x.dtype == torch.bfloat16 or (
        x.is_cuda and torch.is_autocast_enabled("cuda") and
        torch.get_autocast_dtype("cuda") == torch.bfloat16))


def described(cfg: dict | None, bf16: bool) -> str:
    """The persistent kernels a layer runs on, in words: ``cfg`` the CUDA kernels' plan, None
    for the Triton kernels."""
    if cfg is None:
        return "Triton kernels"
    return "CUDA kernels, bf16 on tensor cores" if cfg["TC"] else \
        "CUDA kernels, fp32" + (" (bf16 cast)" if bf16 else "")


def fallback_reason(module: "PersistRecurrent", x) -> str | None:
    """Why the persistent kernel cannot run this call (``None`` when it can)."""
    if module.kind != "LSTM":
        return f"the persistent kernel runs LSTM layers, not {module.kind}"
    if module.directions != 1:
        return "the persistent kernel runs one direction (the layer is bidirectional)"
    if not isinstance(x, torch.Tensor):
        return "padded lengths run on cuDNN's packed sequences"
    if not (x.is_cuda or INTERPRET):
        return "the layer runs on the CPU"
    if x.dtype not in (torch.float32, torch.bfloat16) and not torch.is_autocast_enabled():
        return f"the persistent kernel runs fp32 and bf16, not {x.dtype}"
    if kernel_for(module.hidden, x.shape[1], x.device, _bf16(x)) is None:
        return ("neither NVRTC nor Triton can build the persistent kernel here"
                if not x.is_cuda or persist_cuda.plan_for(module.hidden, x.shape[1], x.device)
                else f"the recurrent weights of {module.hidden} units do not fit on this GPU's "
                     "chip, and Triton is not installed")
    return None


class PersistRecurrent(CudnnRecurrent):
    """An LSTM with the cuDNN engine's parameters, run by the persistent kernel where it can."""

    engine_name = "PERSIST"
    # the first step's notes and ``bench`` say what ran it (``ran``), under these words
    reports_kernels = "PERSIST layers"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fallback = None   # why the last call ran on cuDNN (None: it ran persistent)
        self.ran = None        # what ran the last call, in words (``described``)
        self._warned = set()

    def _call(self, x, state):
        reason = fallback_reason(self, x)
        self.fallback = reason
        if reason is not None:
            self.ran = f"cuDNN ({reason})"
            if reason not in self._warned:
                self._warned.add(reason)
                warnings.warn(f"{self.name}: engine PERSIST runs on the cuDNN engine here: "
                              f"{reason}.", RuntimeWarning, stacklevel=3)
            return super()._call(x, state)
        return self._persistent(x, state)

    def _persistent(self, x, state):
        h0s, c0s = state
        bf16 = _bf16(x)
        dtype = torch.bfloat16 if bf16 else x.dtype
        # every level has the same width and batch: one choice of kernels for all of them
        cfg = persist_cuda.plan_for(self.hidden, x.shape[1], x.device, bf16) \
            if kernel_for(self.hidden, x.shape[1], x.device, bf16) == "cuda" else None
        self.ran = described(cfg, bf16)
        hs, cs = [], []
        inp = x
        with torch.autocast(x.device.type, enabled=False):
            for k, (w_ih, w_hh, b_ih, b_hh) in enumerate(self._weights()):
                pre = torch.addmm((b_ih + b_hh).to(dtype), inp.reshape(-1, inp.shape[-1])
                                  .to(dtype), w_ih.to(dtype).t())
                pre = pre.view(inp.shape[0], inp.shape[1], -1)
                args = (pre, w_hh, h0s[k].to(dtype), c0s[k].to(dtype))
                y, h, c = _CudaLevel.apply(*args, cfg) if cfg else _Level.apply(*args)
                hs.append(h)
                cs.append(c)
                inp = y
                if k + 1 < self.levels and self.rnn.dropout and self.training:
                    inp = nn.functional.dropout(inp, self.rnn.dropout, True)
        return inp, (torch.stack(hs), torch.stack(cs))

    def _weights(self):
        for names in self._weight_names:
            yield tuple(getattr(self.rnn, n) for n in names)
