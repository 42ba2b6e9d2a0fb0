"""The PERSIST engine's CUDA C++ kernels: their launch plan, when they are chosen, and that the
source builds for every plan shape (with nvcc, where this machine has one). Their numbers are
checked on a GPU by tests/benchmarks/gpu_persist.sh (bench_persist.py --check: outputs, states
and every gradient against cuDNN)."""
import re
import shutil
import subprocess
import warnings

import pytest
import torch

from designer.engines import persist, persist_cuda
from designer.engines.persist_cu import SOURCE

H100 = {"sms": 132, "smem_limit": 227 * 1024}


@pytest.mark.parametrize("hidden, batch", [(512, 64), (512, 16), (512, 256), (200, 5),
                                           (1024, 64), (50, 3), (8, 1), (256, 33), (96, 4096)])
def test_a_plan_keeps_every_block_resident_and_covers_every_unit_row_and_weight(hidden, batch):
    cfg = persist_cuda.plan(hidden, batch, **H100)
    units, blocks = cfg["grid"]
    u, t = cfg["U"], persist_cuda.THREADS
    assert units * blocks <= H100["sms"]   # all resident, or the grid barrier waits forever
    assert units * u >= hidden > (units - 1) * u
    assert blocks * cfg["NB"] >= batch > (blocks - 1) * cfg["NB"]
    ks, rs = t // (4 * u), t // u          # forward k slices, backward row slices
    assert ks * cfg["KW"] >= hidden and rs * cfg["RW"] >= 4 * hidden
    assert cfg["KW"] <= persist_cuda.MAX_WEIGHTS_PER_THREAD >= cfg["RW"]
    assert cfg["KW"] % 4 == 0 and cfg["RW"] % 4 == 0 and cfg["NBC"] % 4 == 0
    assert max(cfg["smem_fwd"], cfg["smem_bwd"]) <= H100["smem_limit"]
    assert cfg["APRE"] == 0 or hidden % 4 == 0   # the prefetch copies 16-byte rows


def test_each_batch_block_synchronises_on_its_own_counter_line():
    cfg = persist_cuda.plan(512, 16, **H100)
    assert cfg["grid"] == (32, 4) and cfg["GBAR"] == 1
    bar = persist_cuda.barrier_counters(cfg, torch.device("cpu"))
    assert bar.numel() * 4 == 4 * 128 and not bar.any()   # 4 counters, 128 bytes apart
    assert "32 * blockIdx.y" in SOURCE
    assert persist_cuda.plan(512, 16, **H100, group_barriers=False)["GBAR"] == 0


def test_weights_too_big_for_the_register_files_get_no_plan():
    assert persist_cuda.plan(2048, 64, **H100) is None
    assert persist_cuda.plan(1024, 64, sms=64, smem_limit=227 * 1024) is None
    assert persist_cuda.plan(1024, 64, **H100) is not None


def test_the_cuda_kernels_are_chosen_where_they_build_else_triton(monkeypatch):
    gpu = torch.device("cuda")
    cfg = persist_cuda.plan(512, 64, **H100)
    monkeypatch.setattr(persist, "INTERPRET", False)
    monkeypatch.setattr(persist_cuda, "available", lambda: True)
    monkeypatch.setattr(persist_cuda, "ready", lambda hidden, batch, device: cfg)
    assert persist.kernel_for(512, 64, gpu) == "cuda"
    assert persist.kernel_for(512, 64, torch.device("cpu")) != "cuda"
    monkeypatch.setitem(persist.TUNE, "kernel", "triton")
    assert persist.kernel_for(512, 64, gpu) == ("triton" if persist.kernels else None)
    persist.TUNE.clear()
    monkeypatch.setattr(persist_cuda, "ready", lambda hidden, batch, device: None)
    assert persist.kernel_for(512, 64, gpu) == ("triton" if persist.kernels else None)


def test_a_kernel_that_does_not_build_is_said_once_and_the_shape_runs_elsewhere(monkeypatch):
    monkeypatch.setattr(persist_cuda, "plan_for", lambda h, n, d: persist_cuda.plan(h, n, **H100))

    def broken(cfg, hidden, device):
        raise RuntimeError("NVRTC could not compile the persistent kernels:\nline 1: error")
    monkeypatch.setattr(persist_cuda, "kernels", broken)
    monkeypatch.setattr(persist_cuda, "_failed", {})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert persist_cuda.ready(300, 8, torch.device("cuda", 0)) is None
        assert persist_cuda.ready(300, 8, torch.device("cuda", 0)) is None
    assert len(seen) == 1
    assert "300 units" in str(seen[0].message) and "NVRTC could not compile" in str(
        seen[0].message)


NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="no nvcc on this machine (NVRTC builds on the GPU)")
@pytest.mark.parametrize("hidden, batch, group", [(512, 64, True), (512, 16, True),
                                                  (1024, 64, True), (50, 3, True),
                                                  (512, 64, False)])
def test_the_source_builds_for_hopper_within_the_register_budget(tmp_path, hidden, batch,
                                                                  group):
    cfg = persist_cuda.plan(hidden, batch, **H100, group_barriers=group)
    src = tmp_path / "persist.cu"
    src.write_text(SOURCE)
    defines = persist_cuda.compile_constants(cfg, hidden)
    done = subprocess.run([NVCC, "-cubin", "-arch=sm_90", "-Xptxas", "-v", "-o",
                           str(tmp_path / "persist.cubin"), str(src)] +
                          [f"-DP_{k}={v}" for k, v in defines.items()],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    regs = [int(r) for r in re.findall(r"Used (\d+) registers", done.stderr)]
    assert len(regs) == 3 and max(regs) <= 65536 // persist_cuda.THREADS  # one block an SM
