"""The sLSTM's persistent kernels (the FUSED engine on a GPU): the step loop's numbers, every
gradient, restarts, padded lengths and the backward direction included. Without CUDA the
engine runs its loop and says why; the kernels are checked here under Triton's CPU
interpreter (each launch's programs one after another: they share nothing, so the GPU computes
the same), in one subprocess."""
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

from designer.cells.slstm.kernels import launch as slstm_kernel
from designer.cells.slstm.engines.fused import FusedSLSTM, fill_slstm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_on_the_cpu_the_fused_engine_runs_its_loop_and_says_why_without_warning():
    m = FusedSLSTM(3, 8, 2)
    fill_slstm(m, "uniform", 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the loop is the CPU's engine: nothing to warn of
        y, _ = m(torch.randn(4, 2, 3))
    assert y.shape == (4, 2, 8)
    assert m.fallback == "the layer runs on the CPU"
    assert m.ran == "the step loop (the layer runs on the CPU)"
    m.kernels = False
    m(torch.randn(4, 2, 3))
    assert m.fallback == "the kernels are switched off"


def test_what_the_kernels_cannot_run_is_named(monkeypatch):
    monkeypatch.setattr(slstm_kernel, "INTERPRET", True)   # as if on a device
    reason = slstm_kernel.fallback_reason
    x = torch.zeros(3, 2, 1)
    if slstm_kernel.kernels is None:
        assert reason(x, 8) == "Triton is not installed"
        return
    assert reason(x, 8) is None and reason(x.bfloat16(), 8) is None
    assert reason(x.double(), 8) == "the kernels run fp32 and bf16, not float64"
    assert "2^31" in reason(torch.empty(2 ** 16, 2 ** 10, 1, device="meta"), 8192)


@pytest.mark.parametrize("d, batch", [(128, 64), (64, 16), (20, 17), (8, 1), (8, 33), (1, 5)])
def test_a_launch_covers_every_row_and_unit(d, batch):
    cfg = slstm_kernel.plan(d, batch)
    assert cfg["D"] >= d and cfg["D"] & (cfg["D"] - 1) == 0
    assert cfg["blocks"] * cfg["BN"] >= batch and (cfg["blocks"] - 1) * cfg["BN"] < batch
    assert cfg["D"] % cfg["JC"] == 0 and cfg["D"] % cfg["KC"] == 0
    assert cfg["DOT"] == (d > 8)  # tl.dot needs blocks of 16: heads of 8 take the product
    assert cfg["split"] == 1 and cfg["precision"] == "ieee"   # no SMs: the interpreter's plan


@pytest.mark.parametrize("heads, d, batch, sms, split", [
    (4, 128, 16, 132, 8),     # 4 heads x 1 batch block x 8: 32 programs of 16 units
    (4, 128, 64, 132, 8),     # x 4 batch blocks: 128 programs, one an SM
    (8, 64, 16, 132, 4),      # 64 units: 4 programs of 16 at most
    (8, 64, 64, 132, 4),
    (8, 64, 256, 132, 1),     # 8 x 16 batch blocks already fill the SMs
    (4, 128, 256, 132, 2),
    (4, 128, 16, 20, 4),      # a small GPU: never more programs than SMs
    (40, 128, 16, 20, 1),     # more heads than SMs: no split
    (2, 20, 17, 132, 2),      # 20 units padded to 32: the second program's 4 real ones
    (2, 8, 17, 132, 1)])      # heads narrower than 2 x 16 units are not split
def test_a_head_is_split_over_programs_to_fill_the_gpu_one_program_an_sm(heads, d, batch, sms,
                                                                        split, monkeypatch):
    monkeypatch.setattr(slstm_kernel, "TUNE", {"resident": False})   # as for wider heads
    cfg = slstm_kernel.plan(d, batch, heads, sms)
    assert cfg["split"] == split
    assert heads * cfg["blocks"] * cfg["split"] <= max(sms, heads * cfg["blocks"])
    units = cfg["D"] // cfg["split"]
    assert cfg["split"] == 1 or (units >= slstm_kernel.MIN_UNITS and units % cfg["JC"] == 0)
    assert cfg["precision"] == "tf32x3"   # fp32 on the GPU: on the tensor cores, 3 passes
    assert slstm_kernel.plan(d, batch, heads, sms, fp32=False)["precision"] == "ieee"


@pytest.mark.parametrize("d, fp32, sms, resident", [
    (64, True, 132, True),      # 4 gates x 64 x 64 fp32: 64 KB
    (64, False, 132, True),
    (128, False, 132, True),    # bf16: 128 KB
    (128, True, 132, False),    # fp32: 256 KB, split over programs instead
    (20, True, 0, True),        # padded to 32; under the interpreter too
    (8, True, 132, False)])     # heads of 8 take the broadcast product, not tl.dot
def test_a_head_whose_block_fits_is_held_in_registers_by_one_program(d, fp32, sms, resident):
    cfg = slstm_kernel.plan(d, 64, max(1, 512 // d), sms, fp32=fp32)
    assert cfg["resident"] == resident
    if resident:
        assert cfg["split"] == 1 and cfg["BN"] == 16 and cfg["warps"] == 8 and cfg["DOT"]
    else:
        assert cfg["split"] > 1 or d == 8


@pytest.mark.parametrize("tune", [{"resident": False}, {"BN": 8}, {"grouped": True}])
def test_what_keeps_a_head_out_of_registers(tune, monkeypatch):
    monkeypatch.setattr(slstm_kernel, "TUNE", tune)
    assert not slstm_kernel.plan(64, 16, 8, 132)["resident"]


def test_fp32_products_follow_torchs_matmul_precision():
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert slstm_kernel.plan(64, 16, 8, 132)["precision"] == "tf32x3"
        torch.set_float32_matmul_precision("high")   # TF32 allowed: one pass
        assert slstm_kernel.plan(64, 16, 8, 132)["precision"] == "tf32"
        assert slstm_kernel.plan(128, 16, 4, 132)["precision"] == "tf32"
        assert slstm_kernel.plan(64, 16, 8, 0)["precision"] == "ieee"   # the interpreter
    finally:
        torch.set_float32_matmul_precision(old)


def test_the_split_is_a_tune_choice_and_never_under_the_interpreter(monkeypatch):
    monkeypatch.setattr(slstm_kernel, "TUNE", {"split": 1})
    assert slstm_kernel.plan(128, 16, 4, 132)["split"] == 1
    slstm_kernel.TUNE.update(split=3)                  # a power of two, at most
    assert slstm_kernel.plan(128, 16, 4, 132)["split"] == 2
    slstm_kernel.TUNE.update(split=64)                 # never fewer than 16 units a program
    assert slstm_kernel.plan(128, 16, 4, 132)["split"] == 8
    slstm_kernel.TUNE.update(split=8, precision="ieee")
    assert slstm_kernel.plan(128, 64, 8, 132)["split"] == 4   # nor more programs than SMs
    assert slstm_kernel.plan(128, 64, 8, 132)["precision"] == "ieee"
    monkeypatch.setattr(slstm_kernel, "INTERPRET", True)   # programs one after another
    assert slstm_kernel.plan(128, 16, 4, 132)["split"] == 1
    assert slstm_kernel.sm_count(torch.device("cuda")) == 0


INTERPRETED = textwrap.dedent("""
    import json, sys, torch
    from designer.cells.slstm.kernels import launch as slstm_kernel
    from designer.cells.slstm.engines.fused import FusedSLSTM, fill_slstm
    from designer.cells.slstm.arithmetic import slstm_direction, slstm_layers

    def rel(a, b):
        return float((a.detach().double() - b.detach().double()).abs().max() /
                     b.detach().double().abs().max().clamp_min(1e-30))

    def layer(e, h, heads, levels, both, t, n, cont, lens, forget, tune):
        slstm_kernel.TUNE.clear()
        slstm_kernel.TUNE.update(tune)
        torch.manual_seed(h + n + t)
        m = FusedSLSTM(e, h, heads, levels, bidirectional=both, forget_gate=forget)
        fill_slstm(m, "uniform", 0.1)
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(2.0)   # gates off their midpoints: the stabiliser switches branch
        chains = levels * (2 if both else 1)
        x = torch.randn(t, n, e, requires_grad=True)
        s0 = [torch.randn(chains, n, h) * 0.5 for _ in range(4)]
        s0[2] = s0[2].abs() + 1.0
        s0[1][0, 0] = s0[2][0, 0] = s0[3][0, 0] = 0.0   # a sequence starting from scratch
        s0 = [s.requires_grad_() for s in s0]
        keep = None
        if cont:
            keep = torch.ones(t, n)
            keep[t // 2, ::2] = 0
            keep[1, -1] = 0
        lengths = None
        if lens:
            lengths = torch.randint(0, t + 1, (n,))
            lengths[0] = t
            if n > 2:
                lengths[1] = 0
        wy = torch.randn(t, n, h * (2 if both else 1))

        def run(fn):
            x.grad = None
            for s in s0:
                s.grad = None
            m.zero_grad()
            y, fin = fn()
            loss = (y * wy).sum() + sum((f * f * (k + 1)).sum() for k, f in enumerate(fin))
            loss.backward()
            return [y, *fin, x.grad, *(s.grad for s in s0)] + [p.grad for p in m.parameters()]
        got = run(lambda: m(x, keep, s0, lengths))
        ran = m.ran
        want = run(lambda: slstm_layers(m._parameters, x, s0, levels, 2 if both else 1, keep,
                                        lengths, exp_forget=forget == "exp"))
        names = ["output", "h_T", "c_T", "n_T", "m_T", "grad x", "grad h0", "grad c0",
                 "grad n0", "grad m0"] + ["grad " + k for k, _ in m.named_parameters()]
        diffs = {k: rel(a, b) for k, a, b in zip(names, got, want)}
        return {"ran": ran, "diffs": diffs}

    def tie():
        # exp forget gate, m0 = 0, h0 = 0: log f + m_prev == log i exactly where f~ == i~
        torch.manual_seed(1)
        t, n, heads, d = 3, 17, 2, 16
        xw = torch.randn(t, n, 4 * heads * d)
        xw[0, :, heads * d:2 * heads * d] = xw[0, :, :heads * d]
        xw.requires_grad_()
        w = (torch.randn(heads, 4 * d, d) / d ** 0.5).requires_grad_()
        s0 = [torch.zeros(n, heads * d), torch.randn(n, heads * d), torch.ones(n, heads * d),
              torch.zeros(n, heads * d)]
        s0 = [s.requires_grad_() for s in s0]
        out = []
        for fn in (slstm_kernel.kernel_direction, slstm_direction):
            xw.grad = w.grad = None
            for s in s0:
                s.grad = None
            y, fin = fn(xw, w, s0, exp_forget=True)
            (y.sum() + sum(f.sum() for f in fin)).backward()
            out.append([y, *fin, xw.grad, w.grad, *(s.grad for s in s0)])
        return max(rel(a, b) for a, b in zip(*out))

    def bf16():
        # the dtypes' path; the broadcast product (BN 8): Triton 3.9's interpreter multiplies
        # bf16 blocks in tl.dot wrongly, the GPU does not
        slstm_kernel.TUNE.clear()
        slstm_kernel.TUNE.update({"BN": 8})
        torch.manual_seed(2)
        t, n, heads, d = 5, 9, 2, 32
        xw = torch.randn(t, n, 4 * heads * d).bfloat16().requires_grad_()
        w = (torch.randn(heads, 4 * d, d) / d ** 0.5).requires_grad_()
        s0 = [torch.zeros(n, heads * d) for _ in range(4)]
        y, fin = slstm_kernel.kernel_direction(xw, w, s0)
        y.float().sum().backward()
        y0, _ = slstm_direction(xw.detach().float(), w.detach().bfloat16().float(), s0)
        return {"rel": rel(y.float(), y0), "types": [str(v.dtype) for v in (y, *fin, xw.grad,
                                                                              w.grad)]}

    def dw():
        # dW_hc's kernel against the einsum: shares of the rows (one partial), restarts
        from designer.cells.slstm.kernels.dw_hc import dw_hc
        torch.manual_seed(3)
        t, n, heads, d = 20, 13, 3, 20
        dpre = torch.randn(t, n, 4 * heads * d)
        hs = torch.randn(t + 1, n, heads * d)
        keep = (torch.rand(t, n) > 0.2).float()
        worst = 0.0
        for k, sms in ((keep, 132), (keep, 0), (None, 7)):
            h = hs[:-1] if k is None else hs[:-1] * k.unsqueeze(-1)
            want = torch.einsum("rgkj,rkl->kgjl", dpre.view(-1, 4, heads, d),
                                h.reshape(-1, heads, d)).reshape(heads, 4 * d, d)
            got = dw_hc(dpre, hs, k, heads, d, 32, torch.float32, "ieee", sms)
            worst = max(worst, rel(got, want))
        return worst

    out = {"layers": [layer(*c) for c in json.loads(sys.argv[1])], "tie": tie(),
           "bf16": bf16(), "dw": dw()}
    print(json.dumps(out))
""")

# (E, H, heads, levels, bidirectional, T, N, cont, lengths, forget gate, block overrides):
# heads of 8 units (the broadcast product), 32 (tl.dot; and in chunks of 16 units) and 20
# (tl.dot on masked units); 1, 2 and 4 heads; batch 1 and 17 (masked rows); restarts, padded
# lengths (one sequence of none), the backward direction, stacked levels; both forget gates
SIZES = [[5, 16, 2, 2, False, 7, 3, True, False, "sigmoid", {}],
         [6, 32, 1, 1, False, 5, 17, False, True, "exp", {}],
         [4, 80, 4, 1, True, 6, 1, False, True, "sigmoid", {}],
         [3, 64, 2, 2, True, 5, 17, False, True, "exp", {"JC": 16, "KC": 16,
                                                          "resident": False}],
         [4, 40, 2, 1, False, 6, 17, True, True, "sigmoid", {}],
         [4, 8, 1, 1, False, 4, 1, False, False, "exp", {}],
         # heads of 64 in registers (triton_slstm_resident); and heads that fit read back from
         # memory (triton_slstm), as wider heads are
         [3, 128, 2, 1, False, 4, 17, True, True, "sigmoid", {}],
         [5, 96, 2, 1, False, 1, 1, False, False, "exp", {}],   # one step (generation's)
         [6, 32, 1, 1, False, 5, 17, False, True, "exp", {"resident": False}],
         [4, 40, 2, 1, False, 6, 17, True, True, "sigmoid", {"resident": False}],
         # the split kernels (triton_slstm_split) at one program a head: their indexing,
         # loads and barrier; more programs a head wait for each other, on a GPU only
         [4, 40, 2, 1, False, 6, 17, True, True, "sigmoid", {"grouped": True}],
         [4, 80, 4, 1, True, 6, 2, False, True, "exp", {"grouped": True}],
         [3, 32, 1, 2, False, 5, 3, False, False, "exp", {"grouped": True, "JC": 16}]]


def test_the_kernels_compute_the_step_loops_numbers_under_the_interpreter():
    pytest.importorskip("triton")
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", INTERPRETED,
                           json.dumps(SIZES)], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for size, row in zip(SIZES, out["layers"]):
        assert row["ran"] == slstm_kernel.RAN, (size, row["ran"])   # the kernels, not the loop
        assert len(row["diffs"]) >= 13, row   # outputs, four states, x, four states, weights
        worst = max(row["diffs"], key=row["diffs"].get)
        assert row["diffs"][worst] < 1e-5, (size, worst, row["diffs"][worst])
    assert out["tie"] < 1e-5   # a tie in the stabiliser's max: half its gradient to each side
    assert out["dw"] < 1e-5, out["dw"]
    assert out["bf16"]["rel"] < 3e-2, out["bf16"]
    assert out["bf16"]["types"] == ["torch.bfloat16"] + ["torch.float32"] * 4 + \
        ["torch.bfloat16", "torch.float32"]


def hopper_build(kernel, cfg, dtype, masks, extra=None):
    """Triton's build of one kernel for sm_90 (no GPU needed) and ptxas' report on it
    (``extra``: more constants)."""
    import tempfile

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas
    from triton.compiler import ASTSource
    const = {"EXP_FORGET": False, "HAS_KEEP": masks, "HAS_LENS": masks, "D": cfg["D"],
             "BN": cfg["BN"], "JC": cfg["JC"], "KC": cfg["KC"], "DOT": cfg["DOT"],
             "PREC": cfg["precision"], "S": cfg["split"], **(extra or {})}
    const = {k: v for k, v in const.items() if k in kernel.arg_names}
    types = {"T": "i32", "N": "i32", "H": "i32", "d": "i32", "R": "i32", "per": "i32",
             "LENS": "*i64", "BAR": "*i32",
             "XW": dtype,
             "Y": dtype, "DY": dtype, "W": dtype}
    sig = {a: "constexpr" if a in const else types.get(a, "*fp32") for a in kernel.arg_names}
    src = ASTSource(fn=kernel, signature=sig, constexprs={
        (kernel.arg_names.index(k),): v for k, v in const.items()})
    built = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                           options={"num_warps": cfg["warps"]})
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "k.ptx")
        with open(ptx, "w") as f:
            f.write(built.asm["ptx"])
        done = subprocess.run([get_ptxas(90).path, "-arch=sm_90a", "-v", ptx, "-o",
                               os.path.join(tmp, "k.cubin")], capture_output=True, text=True,
                              check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


@pytest.mark.parametrize("d, dtype, masks, sms, tune", [
    (128, "*fp32", True, 0, {}), (64, "*bf16", False, 0, {}),       # one program a head
    (128, "*fp32", True, 132, {"split": 1}),                         # the same, tf32x3
    (128, "*fp32", True, 132, {}), (64, "*bf16", False, 132, {}),    # split over 8 and 4
    (128, "*fp32", True, 132, {"precision": "ieee"}),
    (64, "*fp32", True, 132, {"resident": True}), (64, "*bf16", False, 132, {"resident": True})])
def test_the_kernels_build_for_hopper_without_a_gpu_and_hardly_spill(d, dtype, masks, sms,
                                                                     tune, monkeypatch):
    pytest.importorskip("triton.backends.nvidia.compiler")
    from designer.cells.slstm.kernels import split as triton_slstm_split
    from designer.cells.slstm.kernels import resident as triton_slstm_resident
    from designer.cells.slstm.kernels import steps as triton_slstm
    monkeypatch.setattr(slstm_kernel, "TUNE", {"resident": False, **tune})
    cfg = slstm_kernel.plan(d, 64, 512 // d, sms, fp32=dtype == "*fp32")
    kernels = (triton_slstm._forward, triton_slstm._backward) if cfg["split"] == 1 else \
        (triton_slstm_split._forward_split, triton_slstm_split._backward_split)
    if cfg["resident"]:   # the head's block and state in registers, 8 warps
        kernels = (triton_slstm_resident._forward_resident,
                   triton_slstm_resident._backward_resident)
    else:
        assert (cfg["split"] > 1) == (sms > 0 and "split" not in tune)
    for kernel in kernels:
        report = hopper_build(kernel, cfg, dtype, masks)
        spilled = [int(v) for v in re.findall(r"(\d+) bytes spill stores", report)]
        assert spilled and max(spilled) <= 64, report   # a few registers' worth, in L1


def test_the_recurrent_weights_gradient_builds_for_hopper_without_spilling():
    pytest.importorskip("triton.backends.nvidia.compiler")
    import triton.language as tl

    from designer.cells.slstm.kernels import dw_hc as triton_slstm_dw
    cfg = slstm_kernel.plan(64, 64, 8, 132)
    for low, prec in ((tl.float32, "tf32x3"), (tl.bfloat16, "ieee")):
        report = hopper_build(triton_slstm_dw._dw_part, {**cfg, "warps": 4, "precision": prec},
                              "*fp32", True, {"BR": triton_slstm_dw.ROWS, "LOW": low})
        assert re.findall(r"(\d+) bytes spill stores", report) == ["0"], report
