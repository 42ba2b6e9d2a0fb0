"""One direction of one sLSTM level on the persistent Triton kernels (:mod:`steps`):
what the FUSED engine runs on a CUDA device, in place of its step loop.

:func:`kernel_direction` takes and returns what
:func:`designer.cells.slstm.arithmetic.slstm_direction` does (so ``slstm_layers`` runs either),
and computes the same numbers: forward is one launch for all steps, backward one launch and
one more for ``dW_hc`` (:mod:`dw_hc`); the input transform's gradient is the
kernel's ``dpre`` as it is. Nothing is read on the host, so a step with the kernels is
captured in a CUDA graph.

Ties in the stabiliser's max (``log f + m_prev == log i``) split its gradient in half between
the two, as ``torch.maximum`` does; ``cont`` and ``lengths`` run in the kernels, the backward
direction reorders its valid steps outside them (:func:`slstm_cell.reverse_valid`) as the loop
does. What the kernels cannot run (no CUDA device, no Triton, a type other than fp32 or bf16)
runs on the loop; :func:`fallback_reason` says why.

Launch shape (:func:`plan`). One program per (head, block of ``BN`` = 16 batch rows) runs
the whole sequence (:mod:`steps`); at H=512 that is 4 heads x (16 or 64 rows / 16) =
4-16 programs (8-32 at 8 heads of 64) on an H100's 132 SMs, each streaming its head's ``4d x
d`` block of ``W_hc`` (256 KB fp32 at d=128) through one SM every step. Measured so (one H100,
H=512, T=256, the whole training step in a CUDA graph, against a CUDA-graph-captured plain
PyTorch step loop; tests/benchmarks/RESULTS.md): fp32 27.7 / 30.2 ms at 4x128 (N=16 / 64,
1.8x / 2.9x the loop), 8.5 / 10.7 ms at 8x64 (5.9x / 8.2x); bf16 9.7 / 11.1 ms at 4x128
(4.1x / 5.4x), 4.1 / 5.5 ms at 8x64 (9.7x / 10.9x). ``{"precision": "tf32x3"}`` took fp32 at
4x128 to 15.9 / 18.3 ms; ``BN`` 8 (the broadcast product, twice the programs) was 2-3x slower.

So on a GPU (:func:`sm_count` > 0) a head is split over ``split`` programs
(:mod:`split`): each owns ``U = D/split`` (>= :data:`MIN_UNITS`) of its units,
their ``4U x d`` rows of ``W_hc``, and meets the head's other programs at a barrier each step.
``split`` is the largest power of two that keeps heads x batch blocks x split within the SMs
(every program resident at once: the barrier waits for all of them): 8 at 4x128 (32 programs at
N=16, 128 at N=64), 4 at 8x64 (32 / 128). Expected: a step's time falls from the time one SM
takes to stream ``4d x d`` to that of ``4U x d`` (1/8 at 4x128) plus one barrier (a few
microseconds, as the PERSIST engine's kernels pay); not measured yet. Split programs run 4 warps
and 16-deep products (``KC``), which build for sm_90 with no spill; one program a head runs 8
warps, ``JC`` = ``KC`` = 32 (at most 32 bytes spilled; 64-wide chunks spill hundreds). fp32
products run on the tensor cores in three TF32 passes (``"tf32x3"``, about fp32's accuracy) on
a GPU; the interpreter (no SMs, one program a head: its programs run one after another, and a
barrier would wait for ever) multiplies in fp32.

Where a head's whole block fits in a program's registers (``4 D x D`` of the product's type
within :data:`resident.BYTES`: heads of up to 64 units in fp32, 128 in bf16), it
is held there and so is the state, one program a head and batch block, 8 warps, and no split
(:mod:`resident`): measured so at 8 heads of 64 (one H100, the whole training
step in a CUDA graph): fp32 2.67 / 4.34 ms (N=16 / 64) where the split took 4.34 / 6.57, bf16
1.41 / 1.84 ms where it took 2.86 / 3.88. fp32 products take three TF32 passes unless torch's
``set_float32_matmul_precision`` allows TF32 (:func:`fp32_precision`).

``TUNE`` overrides any choice for the benchmark's sweeps (``--tune``): ``"resident"`` (False:
read the block from memory each step, as for wider heads), ``"split"`` (1: one program a
head), ``"precision"`` (``"ieee"``: fp32 on the FMA units; ``"tf32"``: one pass), ``"warps"``,
``"BN"`` (8 or 4 takes the broadcast product in place of ``tl.dot``), ``"JC"``, ``"KC"``;
``"grouped"`` runs the split kernels at one program a head (the interpreter's test of them).
"""
from __future__ import annotations

import functools
import math
import os

import torch

from designer.cells.slstm.arithmetic import reverse_valid

try:
    from designer.cells.slstm.kernels import steps as kernels
    from designer.cells.slstm.kernels import resident as resident_kernels
    from designer.cells.slstm.kernels import split as split_kernels
    from designer.cells.slstm.kernels.steps import triton
    from designer.cells.slstm.kernels.dw_hc import dw_hc
except Exception:  # noqa: BLE001
    kernels, resident_kernels, split_kernels, triton, dw_hc = None, None, None, None, None

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"  # Triton's CPU interpreter (tests)
RAN = "the persistent Triton kernels"
TUNE: dict = {}   # overrides of plan()'s choices (tests/benchmarks/bench_slstm.py --tune)
MIN_UNITS = 16    # the fewest units of a head a program of a split head owns


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


def sm_count(device: torch.device) -> int:
    """The streaming multiprocessors of a CUDA ``device``; 0 elsewhere or under the
    interpreter (where a launch's programs run one after another: no split)."""
    if INTERPRET or device.type != "cuda":
        return 0
    return _sms(device.index if device.index is not None else torch.cuda.current_device())


@functools.cache
def _sms(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def fp32_precision() -> str:
    """How fp32 products run on the tensor cores, as torch's own matrix products do
    (``torch.set_float32_matmul_precision``): three TF32 passes (about fp32's accuracy) at
    "highest", the default; one TF32 pass where "high" or "medium" allows TF32."""
    return "tf32x3" if torch.get_float32_matmul_precision() == "highest" else "tf32"


def plan(d: int, batch: int, heads: int = 1, sms: int = 0, fp32: bool = True) -> dict:
    """Block sizes, the grid's batch blocks and the split of a head for ``heads`` heads of
    ``d`` units and ``batch`` rows on a GPU of ``sms`` SMs (0: the interpreter or a CPU).

    ``split`` is the programs a head's units are spread over (``U = D / split`` units each, at
    least :data:`MIN_UNITS`): the largest power of two that keeps the launch to one program an
    SM at most (heads x batch blocks x split <= sms; they meet at barriers, so all must be
    resident), 1 without SMs. ``resident``: the head's block fits a program's registers
    (:func:`resident.fits`), which then holds it and the state for the whole
    sequence, one program a head and batch block, 8 warps, no split. fp32 products run on the
    tensor cores (:func:`fp32_precision`) on a GPU, in fp32 ("ieee") on the interpreter.
    """
    width = _pow2(d)
    dot = width >= 16                       # tl.dot takes blocks of 16 and more
    bn = 16 if dot else min(16, _pow2(batch))
    cfg = {"D": width, "BN": bn, "JC": min(width, 32), "KC": min(width, 32),
           "warps": 8 if width >= 32 else 4,
           "precision": fp32_precision() if sms and fp32 else "ieee"}
    cfg.update({k: v for k, v in TUNE.items() if k != "split"})
    cfg["blocks"] = math.ceil(batch / cfg["BN"])
    cfg["resident"] = bool(TUNE.get("resident", not cfg.get("grouped") and cfg["BN"] >= 16 and
                                    dot and resident_kernels is not None and
                                    resident_kernels.fits(width, 4 if fp32 else 2)))
    if cfg["resident"]:   # the head's block and state in registers: one program a head
        cfg.update({"split": 1, "JC": width, "KC": width, "DOT": True,
                    "warps": TUNE.get("warps", 8)})
        return cfg
    split = 1
    if sms and not INTERPRET:
        split = _pow2(max(1, TUNE.get("split", width // MIN_UNITS)) + 1) // 2   # a power of 2
        while split > 1 and (width // split < MIN_UNITS or
                             heads * cfg["blocks"] * split > sms):
            split //= 2
    cfg["split"] = split
    if split > 1:   # a program's [BN, U] blocks are small: 4 warps, products 16 deep
        cfg["JC"] = min(cfg["JC"], width // split)
        cfg.update({k: v for k, v in (("warps", 4), ("KC", 16)) if k not in TUNE})
    cfg["DOT"] = dot and min(cfg["BN"], cfg["JC"], cfg["KC"]) >= 16
    return cfg


def _meta(cfg: dict, exp_forget: bool, keep, lens) -> dict:
    meta = {"EXP_FORGET": exp_forget, "HAS_KEEP": keep is not None,
            "HAS_LENS": lens is not None, "D": cfg["D"], "BN": cfg["BN"],
            "PREC": cfg["precision"], "num_warps": cfg["warps"]}
    if cfg["resident"]:   # whole blocks: no chunks, always tl.dot
        return meta
    split = {"S": cfg["split"]} if cfg["split"] > 1 or cfg.get("grouped") else {}
    return {**split, **meta, "JC": cfg["JC"], "KC": cfg["KC"], "DOT": cfg["DOT"]}


def _launch(name: str, cfg: dict, heads: int, dev: torch.device):
    """The kernel ``name`` ("_forward", "_backward") on its grid: one program a head and batch
    block, or ``split`` of them a head (:mod:`split`), or one a head and batch
    block holding its block in registers (:mod:`resident`)."""
    if cfg["resident"]:
        return getattr(resident_kernels, name + "_resident")[(heads, cfg["blocks"])]
    if cfg["split"] == 1 and not cfg.get("grouped"):
        return getattr(kernels, name)[(heads, cfg["blocks"])]
    return getattr(split_kernels, name + "_split")[(heads * cfg["split"], cfg["blocks"])]


def _barriers(cfg: dict, heads: int, dev: torch.device) -> tuple:
    """The split kernels' barrier counters (one a head and batch block, zero); none else."""
    if cfg["resident"] or (cfg["split"] == 1 and not cfg.get("grouped")):
        return ()
    return (torch.zeros(heads * cfg["blocks"], device=dev, dtype=torch.int32),)


class _Direction(torch.autograd.Function):
    """(xw, W_hc, h0, c0, n0, m0, keep, lengths, exp_forget) -> (y, h_T, c_T, n_T, m_T) on the
    kernels; xw (T, N, 4H), W_hc (heads, 4d, d), the state (N, H) each, keep (T, N) fp32 or
    None, lengths (N) int64 or None."""

    @staticmethod
    def forward(ctx, xw, w_hc, h0, c0, n0, m0, keep, lens, exp_forget):
        steps, batch, four_h = xw.shape
        hidden, (heads, _, d) = four_h // 4, w_hc.shape
        dev = xw.device
        low = torch.bfloat16 if xw.dtype == torch.bfloat16 else torch.float32
        cfg = plan(d, batch, heads, sm_count(dev), low == torch.float32)
        xw, w = xw.contiguous(), w_hc.to(low).contiguous()
        states = []
        for s0 in (h0, c0, n0, m0):
            buf = torch.empty(steps + 1, batch, hidden, device=dev, dtype=torch.float32)
            buf[0] = s0
            states.append(buf)
        pre = torch.empty(steps, batch, four_h, device=dev, dtype=torch.float32)
        y = torch.empty(steps, batch, hidden, device=dev, dtype=xw.dtype)
        _launch("_forward", cfg, heads, dev)(
            xw, w, *states, pre, y, states[0] if keep is None else keep,
            states[0] if lens is None else lens, *_barriers(cfg, heads, dev),
            steps, batch, hidden, d, **_meta(cfg, exp_forget, keep, lens))
        ctx.save_for_backward(w, pre, keep, lens, *states)
        ctx.cfg, ctx.exp_forget = cfg, exp_forget
        ctx.types = (xw.dtype, w_hc.dtype, h0.dtype)
        return (y, *(s[steps].to(h0.dtype, copy=True) for s in states))

    @staticmethod
    def backward(ctx, dy, dh, dc, dn, dm):
        w, pre, keep, lens, hs, cs, ns, ms = ctx.saved_tensors
        steps, batch, four_h = pre.shape
        hidden, (heads, _, d) = four_h // 4, w.shape
        dev, cfg = pre.device, ctx.cfg
        x_type, w_type, s_type = ctx.types
        dy = torch.zeros(steps, batch, hidden, device=dev) if dy is None else dy.contiguous()
        carries = [torch.zeros(batch, hidden, device=dev) if g is None else
                   g.to(torch.float32, copy=True).contiguous() for g in (dh, dc, dn, dm)]
        dpre = torch.empty(steps, batch, four_h, device=dev, dtype=torch.float32)
        _launch("_backward", cfg, heads, dev)(
            dy, w, pre, cs, ns, ms, dpre, *carries, hs if keep is None else keep,
            hs if lens is None else lens, *_barriers(cfg, heads, dev), steps, batch, hidden,
            d, **_meta(cfg, ctx.exp_forget, keep, lens))
        # dW_hc[k] = sum over steps and rows of dpre[k's rows]^T (keep h_{t-1})[k's units]
        d_w = dw_hc(dpre, hs, keep, heads, d, max(16, cfg["D"]), w.dtype, cfg["precision"],
                    sm_count(dev))
        return (dpre.to(x_type), d_w.to(w_type), *(g.to(s_type) for g in carries),
                None, None, None)


def kernel_direction(xw, w_hc, state, cont=None, lengths=None, reverse=False,
                     exp_forget=False):
    """:func:`designer.cells.slstm.arithmetic.slstm_direction` on the kernels: (every h_t
    (T, N, H), the final state (h, c, n, m))."""
    if reverse:
        xw = reverse_valid(xw, lengths)
    keep = None if cont is None else cont.to(xw.device, torch.float32).contiguous()
    lens = None if lengths is None else lengths.to(xw.device, torch.int64).contiguous()
    y, *final = _Direction.apply(xw, w_hc, *state, keep, lens, exp_forget)
    if reverse:
        y = reverse_valid(y, lengths)
    return y, tuple(final)


def _runs_in(x: torch.Tensor) -> torch.dtype:
    """The type the layer computes in: bf16 under CUDA's bf16 autocast, else x's."""
    if x.is_cuda and torch.is_autocast_enabled("cuda"):
        return torch.get_autocast_dtype("cuda")
    return x.dtype


def fallback_reason(x: torch.Tensor, hidden: int) -> str | None:
    """Why the kernels cannot run an sLSTM call of ``hidden`` units on ``x`` (T, N, E)
    (``None`` when they can)."""
    if not (x.is_cuda or INTERPRET):
        return "the layer runs on the CPU"
    if kernels is None or triton is None:
        return "Triton is not installed"
    if _runs_in(x) not in (torch.float32, torch.bfloat16):
        return f"the kernels run fp32 and bf16, not {str(_runs_in(x)).removeprefix('torch.')}"
    if x.shape[0] == 0 or x.shape[1] == 0:
        return "the input has no steps or no sequences"
    if x.shape[0] * x.shape[1] * 4 * hidden >= 2 ** 31:
        return "a level's pre-activations pass 2^31 values (the kernels' offsets are 32-bit)"
    return None
