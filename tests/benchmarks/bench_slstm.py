"""The sLSTM's FUSED engine against the peers: the time of a whole training step.

    python tests/benchmarks/bench_slstm.py                          # H100/H200: the issue's rows
    python tests/benchmarks/bench_slstm.py --check                  # GPU: kernels, loop vs float64
    python tests/benchmarks/bench_slstm.py --device cpu --small     # a quick run on the CPU

One sLSTM layer of H = 512 (E = H inputs), T = 256, batch 16 and 64, fp32 and bf16 (TF32 off);
a step is forward, a linear head back to E, the mean squared error against a fixed target,
backward and an Adam update. Rows, each in its own process (a peer that fails to build or
crashes is a row with its reason, not an abort):

- ``persist``: our FUSED engine (:class:`designer.cells.slstm.engines.fused.FusedSLSTM`) as it runs on a
  GPU, on its persistent Triton kernels (one launch a level forward, one backward), eager;
- ``persist+graph``: the same step captured in one CUDA graph (as the training loop captures it);
- ``fused``, ``fused+graph``: the FUSED engine with its kernels switched off: its step loop
  (one batched product over the heads a step), what it ran before the kernels;
- ``torch loop+graph``: a plain-PyTorch step loop written from the paper's equations here
  (dense (H x 4H) recurrent matrix masked block-diagonal, one matmul a step), captured in one
  CUDA graph: the issue's baseline where no peer runs;
- ``flashrnn/<backend>``: FlashRNN's sLSTM (``pip install flashrnn``; its Triton kernels need
  heads of <= 64 units, so it is also timed, with ours, at 8 heads of 64);
- ``xlstm/cuda``: the ``xlstm`` package's ``sLSTMCell`` on its CUDA kernels (compiled at first
  use with nvcc and ninja), an ``nn.Linear`` giving it the input transform.

Prints one table: ms per step and each row's time over ours (``persist+graph``, else
``fused+graph``) of the same configuration (> 1: ours is faster). Exits 1 when one of our own
rows fails (a ``persist`` row whose kernels did not run fails). ``--tune '{"BN": 8}'`` overrides
the kernels' block sizes and choices (:data:`designer.cells.slstm.kernels.launch.TUNE`: ``"split"``,
the programs a head is spread over, 1 for one a head; ``"precision"``: ``"ieee"`` for fp32
products on the FMA units). ``--check`` compares the kernels (as planned, and at one program a
head where the plan splits) and the step loop, each with the step loop in float64, at the
benchmark's sizes (outputs, final states, every gradient) and exits 1 where fp32 kernels are
off by more than 1e-4 or bf16 kernels by more than twice the bf16 loop.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

OURS = ("persist", "persist+graph", "fused", "fused+graph")


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--small", action="store_true", help="H=32, T=16, batch 2: a smoke run")
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", default="16,64")
    p.add_argument("--dtype", default="float32,bfloat16")
    p.add_argument("--heads", default="4,8")
    p.add_argument("--rows", default="persist,persist+graph,fused,fused+graph,torch loop+graph,"
                   "flashrnn/triton_fused,flashrnn/cuda_fused")
    p.add_argument("--tune", default="{}", help="JSON: the kernels' block sizes (slstm_kernel)")
    p.add_argument("--check", action="store_true", help="the kernels against the loop, GPU")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: one row as JSON
    return p.parse_args()


def paper_loop(x, w_x, b, r, mask, heads):
    """The sLSTM step by step in plain PyTorch: one dense recurrent matmul a step (``r``,
    H x 4H, masked block-diagonal), gates [i, f, z, o], the stabilised update."""
    import torch
    import torch.nn.functional as F
    t_, n, _ = x.shape
    h_size = r.shape[0]
    xw = F.linear(x, w_x, b)
    rm = r * mask
    h = c = nn_ = m = x.new_zeros(n, h_size)
    outs = []
    for t in range(t_):
        i_t, f_t, z_t, o_t = (xw[t] + h @ rm).chunk(4, -1)
        log_f = F.logsigmoid(f_t)
        m_new = torch.where(nn_ == 0, i_t, torch.maximum(log_f + m, i_t))
        i_p, f_p = torch.exp(i_t - m_new), torch.exp(log_f + m - m_new)
        c = f_p * c + i_p * torch.tanh(z_t)
        nn_ = f_p * nn_ + i_p
        h, m = torch.sigmoid(o_t) * c / nn_, m_new
        outs.append(h)
    return torch.stack(outs)


def one(cfg: dict) -> dict:
    import torch
    import torch.nn.functional as F
    from torch import nn
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev, dt = cfg["device"], getattr(torch, cfg["dtype"])
    row, n, t_, h, heads = cfg["row"], cfg["batch"], cfg["seq"], cfg["hidden"], cfg["heads"]
    d = h // heads
    torch.manual_seed(0)
    x = torch.randn(t_, n, h, device=dev, dtype=dt)
    target = torch.randn(t_, n, h, device=dev)
    head = nn.Linear(h, h).to(dev, dt)
    graph = row.endswith("+graph")
    layer = None
    if row.startswith(("fused", "persist")):
        from designer.cells.slstm.kernels import launch as slstm_kernel
        from designer.cells.slstm.engines.fused import FusedSLSTM, fill_slstm
        slstm_kernel.TUNE.update(cfg.get("tune", {}))
        layer = FusedSLSTM(h, h, heads).to(dev)
        fill_slstm(layer, "uniform", 0.0)
        layer = layer.to(dt)
        layer.kernels = row.startswith("persist")
        run, params = (lambda: layer(x)[0]), list(layer.parameters())
    elif row.startswith("torch loop"):
        w_x = nn.Parameter(torch.randn(4 * h, h, device=dev, dtype=dt) / h ** 0.5)
        b = nn.Parameter(torch.zeros(4 * h, device=dev, dtype=dt))
        r = nn.Parameter(torch.randn(h, 4 * h, device=dev, dtype=dt) / d ** 0.5)
        head_of = torch.arange(h, device=dev) // d
        mask = (head_of.view(h, 1) == head_of.repeat(4).view(1, 4 * h)).to(dt)
        run, params = (lambda: paper_loop(x, w_x, b, r, mask, heads)), [w_x, b, r]
    elif row.startswith("xlstm"):   # the xlstm package's sLSTMCell on its CUDA kernels
        from xlstm.blocks.slstm.cell import sLSTMCell, sLSTMCellConfig
        cell = sLSTMCell(sLSTMCellConfig(hidden_size=h, num_heads=heads, batch_size=n,
                                         backend=row.split("/", 1)[1], dtype=cfg["dtype"],
                                         dtype_b="float32")).to(dev)
        lin = nn.Linear(h, 4 * h).to(dev, dt)
        xb = x.transpose(0, 1).contiguous()

        def run():
            out, _ = cell(lin(xb))   # (N, heads, T, d)
            return out.permute(2, 0, 1, 3).reshape(t_, n, h)
        params = list(lin.parameters()) + list(cell.parameters())
    else:
        from flashrnn import flashrnn
        backend = row.split("/", 1)[1]
        lin = nn.Linear(h, 4 * h).to(dev, dt)
        rr = nn.Parameter(torch.randn(4, heads, d, d, device=dev, dtype=dt) / d ** 0.5)
        bb = nn.Parameter(torch.zeros(4, heads, d, device=dev, dtype=dt))
        xb = x.transpose(0, 1).contiguous()

        def run():
            wx = lin(xb).view(n, t_, 4, heads, d)
            out, _ = flashrnn(wx, rr, bb, function="slstm", backend=backend,
                              dtype=cfg["dtype"])
            out = out if out.numel() == n * t_ * h else out[0]
            return out.reshape(n, t_, h).transpose(0, 1)
        params = list(lin.parameters()) + [rr, bb]
    params += list(head.parameters())
    opt = torch.optim.Adam(params, lr=1e-4, capturable=graph)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = F.mse_loss(head(run()).float(), target)
        loss.backward()
        opt.step()
        return loss
    cuda = dev == "cuda"
    if cuda:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
    else:
        step()
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        go = g.replay
    else:
        go = step
    for _ in range(2):
        go()
    if cuda:
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(cfg["iters"]):
            go()
        e.record()
        torch.cuda.synchronize()
        ms = s.elapsed_time(e) / cfg["iters"]
    else:
        t0 = time.perf_counter()
        for _ in range(cfg["iters"]):
            go()
        ms = (time.perf_counter() - t0) * 1e3 / cfg["iters"]
    if not all(torch.isfinite(p).all() for p in params):
        raise RuntimeError("the weights are not finite after the steps")
    if row.startswith("persist") and layer.fallback:
        raise RuntimeError(f"the kernels did not run: {layer.fallback}")
    return {**cfg, "ms": round(ms, 3), **({"ran": layer.ran} if layer is not None else {})}


NAMES = ["y", "h", "c", "n", "m", "dx", "dh0", "dc0", "dn0", "dm0", "dW_xc", "db_c", "dW_hc"]


def _grads(layer, x, s0, wy, kernels: bool, bf16: bool) -> list:
    """One forward and backward of ``layer``: the outputs, final states and every gradient."""
    import torch
    layer.kernels = kernels
    layer.zero_grad()
    for v in (x, *s0):
        v.grad = None
    with torch.autocast(x.device.type, torch.bfloat16, enabled=bf16):
        y, fin = layer(x, None, s0)
    loss = (y.to(wy.dtype) * wy).sum() + sum((f.to(wy.dtype) ** 2).sum() for f in fin)
    loss.backward()
    if kernels and layer.fallback:
        raise RuntimeError(f"the kernels did not run: {layer.fallback}")
    return [v.detach().double() for v in (y, *fin, x.grad, *(s.grad for s in s0),
                                          *(p.grad for p in layer.parameters()))]


def check(a) -> int:
    """The kernels and the step loop, each against the step loop in float64 on the same
    weights and inputs, on the GPU (or the CPU under TRITON_INTERPRET=1): the largest
    difference of each output, final state and gradient over the reference's largest value.
    The kernels run their plan (a head's block held in registers where it fits, else split over
    programs where the GPU has the SMs) and each other way that plan can take: one program a
    head, and not held in registers. Fails where fp32 kernels are off by more than 1e-4, or
    bf16 kernels more than twice the bf16 loop (on any quantity, beyond 1e-3)."""
    import copy

    import torch

    from designer.cells.slstm.kernels import launch as slstm_kernel
    from designer.cells.slstm.engines.fused import FusedSLSTM, fill_slstm
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev, bad = torch.device(a.device), False
    for dtype in a.dtype.split(","):
        for n in (int(v) for v in a.batch.split(",")):
            for heads in (int(v) for v in a.heads.split(",")):
                torch.manual_seed(0)
                layer = FusedSLSTM(a.hidden, a.hidden, heads).to(dev)
                fill_slstm(layer, "uniform", 0.0)
                x = torch.randn(a.seq, n, a.hidden, device=dev)
                s0 = [torch.randn(1, n, a.hidden, device=dev) * 0.5 for _ in range(4)]
                s0[2] = s0[2].abs() + 1.0
                wy = torch.randn(a.seq, n, a.hidden, device=dev)
                leaves = [v.clone().requires_grad_() for v in (x, *s0)]
                wide = [v.double().requires_grad_() for v in (x, *s0)]
                ref = _grads(copy.deepcopy(layer).double(), wide[0], wide[1:], wy.double(),
                             False, False)
                bf16 = dtype == "bfloat16"
                runs = {"loop": _grads(layer, leaves[0], leaves[1:], wy, False, bf16)}
                for tune in ({}, {"split": 1}, {"resident": False}):
                    slstm_kernel.TUNE.clear()
                    slstm_kernel.TUNE.update({**json.loads(a.tune), **tune})
                    cfg = slstm_kernel.plan(a.hidden // heads, n, heads,
                                            slstm_kernel.sm_count(dev), not bf16)
                    name = "kernels " + ("resident" if cfg["resident"] else
                                         f"split {cfg['split']}")
                    if name not in runs:
                        runs[name] = _grads(layer, leaves[0], leaves[1:], wy, True, bf16)
                slstm_kernel.TUNE.clear()
                errs = {k: {q: float((u - r).abs().max() / r.abs().max().clamp_min(1e-30))
                            for q, u, r in zip(NAMES, v, ref)} for k, v in runs.items()}
                loop = errs["loop"]
                for k, e in errs.items():
                    worst = max(e, key=e.get)
                    off = False
                    if k != "loop":
                        off = e[worst] > 1e-4 if not bf16 else \
                            any(e[q] > 2 * max(loop[q], 1e-3) for q in e)
                    bad |= off
                    print(json.dumps({"dtype": dtype, "batch": n, "heads": heads, "run": k,
                                      "worst": worst, "rel": float(f"{e[worst]:.2e}"),
                                      "ok": not off,
                                      "errs": {q: float(f"{v:.2e}") for q, v in e.items()}}),
                          flush=True)
    return 1 if bad else 0


def main() -> int:
    a = parse()
    if a.one:
        print(json.dumps(one(json.loads(a.one))), flush=True)
        return 0
    if a.small:
        a.hidden, a.seq, a.batch, a.iters = 32, 16, "2", 2
    if a.check:
        return check(a)
    rows_wanted = [r for r in a.rows.split(",") if r]
    if a.device != "cuda":   # no CUDA graphs, no Triton: the loops alone
        rows_wanted = list(dict.fromkeys(r.removesuffix("+graph") for r in rows_wanted
                                         if not r.startswith(("flashrnn", "persist"))))
    results, failed = [], False
    for dtype in a.dtype.split(","):
        for n in (int(v) for v in a.batch.split(",")):
            for heads in (int(v) for v in a.heads.split(",")):
                if a.hidden % heads:
                    continue
                for row in rows_wanted:
                    if row.startswith("flashrnn") and a.hidden // heads > 64:
                        results.append({"row": row, "dtype": dtype, "batch": n, "heads": heads,
                                        "error": "FlashRNN's Triton kernels need heads of "
                                                 "<= 64 units"})
                        continue
                    cfg = {"row": row, "device": a.device, "dtype": dtype, "batch": n,
                           "seq": a.seq, "hidden": a.hidden, "heads": heads, "iters": a.iters,
                           "tune": json.loads(a.tune)}
                    cmd = [sys.executable, __file__, "--one", json.dumps(cfg)]
                    try:
                        r = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                           timeout=a.timeout)
                        lines = [v for v in r.stdout.splitlines() if v.startswith("{")]
                        res = json.loads(lines[-1]) if lines else {
                            **cfg, "error": (r.stderr.strip().splitlines() or ["?"])[-1][:160]}
                    except subprocess.TimeoutExpired:
                        res = {**cfg, "error": f"timeout after {a.timeout} s"}
                    failed |= row in OURS and "error" in res
                    results.append(res)
                    print(json.dumps(res), file=sys.stderr, flush=True)
    mine = "fused" if a.device != "cuda" else \
        "persist+graph" if "persist+graph" in rows_wanted else "fused+graph"
    ours = {(r["dtype"], r["batch"], r["heads"]): r["ms"] for r in results
            if r["row"] == mine and "ms" in r}
    print(f"sLSTM training step, H={a.hidden}, T={a.seq}, device {a.device}; "
          f"'x ours' = the row's ms / ours ({mine}), > 1: ours is faster")
    print(f"{'row':<22} {'dtype':<9} {'N':>3} {'heads':>9} {'ms/step':>9} {'x ours':>7}")
    for r in results:
        key = (r["dtype"], r["batch"], r["heads"])
        size = f"{r['heads']}x{a.hidden // r['heads']}"
        if "ms" in r:
            ratio = f"{r['ms'] / ours[key]:.2f}" if key in ours else "-"
            print(f"{r['row']:<22} {r['dtype']:<9} {r['batch']:>3} {size:>9} {r['ms']:>9.3f} "
                  f"{ratio:>7}")
        else:
            print(f"{r['row']:<22} {r['dtype']:<9} {r['batch']:>3} {size:>9}  {r['error']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
