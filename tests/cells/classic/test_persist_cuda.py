"""The PERSIST engine's CUDA C++ kernels: their launch plan, when they are chosen, and that the
source builds for every plan shape (with nvcc, where this machine has one). Their numbers are
checked on a GPU by tests/benchmarks/gpu_persist.sh (bench_persist.py --check: outputs, states
and every gradient against cuDNN)."""
import ctypes
import re
import shutil
import subprocess
import warnings

import pytest
import torch

from designer.cells.classic.kernels import persist_launch as persist_cuda

from designer.cells.classic.engines import persist
from designer.cells.classic.kernels.persist_fp32 import SOURCE
from designer.cells.classic.kernels.persist_bf16 import SOURCE as TC_SOURCE

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
    monkeypatch.setattr(persist_cuda, "ready", lambda hidden, batch, device, bf16=False: cfg)
    assert persist.kernel_for(512, 64, gpu) == "cuda"
    assert persist.kernel_for(512, 64, torch.device("cpu")) != "cuda"
    monkeypatch.setitem(persist.TUNE, "kernel", "triton")
    assert persist.kernel_for(512, 64, gpu) == ("triton" if persist.kernels else None)
    persist.TUNE.clear()
    monkeypatch.setattr(persist_cuda, "ready", lambda hidden, batch, device, bf16=False: None)
    assert persist.kernel_for(512, 64, gpu) == ("triton" if persist.kernels else None)


def test_a_kernel_that_does_not_build_is_said_once_and_the_shape_runs_elsewhere(monkeypatch):
    monkeypatch.setattr(persist_cuda, "plan_for",
                        lambda h, n, d, bf16=False: persist_cuda.plan(h, n, **H100))

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
    regs, _ = build_for_hopper(tmp_path, cfg, hidden)
    assert len(regs) == 3 and max(regs) <= 65536 // persist_cuda.THREADS  # one block an SM


def build_for_hopper(tmp_path, cfg, hidden):
    """nvcc's register counts of the plan's kernels, and its report (ptxas -v)."""
    src = tmp_path / "persist.cu"
    src.write_text(persist_cuda.source(cfg))
    defines = persist_cuda.compile_constants(cfg, hidden)
    done = subprocess.run([NVCC, "-cubin", "-arch=sm_90", "-Xptxas", "-v", "-o",
                           str(tmp_path / "persist.cubin"), str(src)] +
                          [f"-DP_{k}={v}" for k, v in defines.items()],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [int(r) for r in re.findall(r"Used (\d+) registers", done.stderr)], done.stderr


@pytest.mark.parametrize("hidden, batch, units", [(512, 64, 16), (512, 16, 16), (512, 256, 16),
                                                  (512, 64, 32), (1024, 64, 16), (256, 33, 16),
                                                  (128, 5, 16), (64, 1, 16), (1024, 128, 16)])
def test_a_tensor_core_plan_keeps_every_block_resident_and_covers_every_unit_and_sequence(
        hidden, batch, units):
    cfg = persist_cuda.plan_tc(hidden, batch, **H100, units=units)
    unit_blocks, batch_blocks = cfg["grid"]
    warps = cfg["threads"] // 32
    assert unit_blocks * batch_blocks <= H100["sms"] and cfg["TC"] == 1
    assert unit_blocks * units >= hidden > (unit_blocks - 1) * units
    assert batch_blocks * cfg["NB"] >= batch > (batch_blocks - 1) * cfg["NB"]
    # whole warps a 16-row tile, forward (4U rows) and backward (U units)
    assert warps % (units // 4) == 0 and warps % (units // 16) == 0
    assert cfg["weight_regs"] <= persist_cuda.MAX_WEIGHTS_PER_THREAD
    # the weight fragments: 4 registers (8 bf16) a thread per 16 x 16 tile, every tile held
    k_groups_f, k_groups_b = warps // (units // 4), warps // (units // 16)
    assert k_groups_f * cfg["weight_regs"] // 4 >= hidden // 16
    assert k_groups_b * cfg["weight_regs"] // 4 >= 4 * hidden // 16
    assert cfg["NBC"] % 8 == 0 and cfg["NBC"] <= 8 * -(-cfg["NB"] // 8)
    assert max(cfg["smem_fwd"], cfg["smem_bwd"]) <= H100["smem_limit"]


def test_tensor_core_plans_need_sixteen_wide_tiles_and_registers_for_the_weights():
    assert persist_cuda.plan_tc(200, 64, **H100) is None        # H not a multiple of 16
    assert persist_cuda.plan_tc(512, 64, **H100, units=8) is None
    assert persist_cuda.plan_tc(4096, 64, **H100) is None       # 256 unit blocks > 132 SMs
    assert persist_cuda.plan_tc(2048, 64, **H100) is None       # 256 weight registers a thread
    assert persist_cuda.plan_tc(1024, 300, **H100) is None      # 150 sequences: no shared memory
    assert persist_cuda.plan_tc(512, 64, **H100)["threads"] == 256
    assert persist_cuda.plan_tc(1024, 64, **H100)["threads"] == 512


def test_bf16_runs_on_the_tensor_core_kernels_where_the_gpu_has_them(monkeypatch):
    gpu = torch.device("cuda")
    monkeypatch.setattr(persist_cuda, "_device_limits", lambda d: (132, 227 * 1024, "90"))
    cfg = persist_cuda.plan_for(512, 64, gpu, bf16=True)
    assert cfg["TC"] == 1 and cfg["U"] == 32 and cfg["grid"] == (16, 8)
    assert persist_cuda.plan_for(1024, 64, gpu, bf16=True)["U"] == 16   # 32 would not fit
    assert persist_cuda.plan_for(512, 64, gpu)["TC"] == 0
    assert persist_cuda.plan_for(200, 64, gpu, bf16=True)["TC"] == 0   # the fp32 kernels
    monkeypatch.setitem(persist_cuda.TUNE, "TC", 0)
    assert persist_cuda.plan_for(512, 64, gpu, bf16=True)["TC"] == 0
    monkeypatch.setitem(persist_cuda.TUNE, "TC", 1)
    monkeypatch.setattr(persist_cuda, "_device_limits", lambda d: (108, 163 * 1024, "75"))
    assert persist_cuda.plan_for(512, 64, gpu, bf16=True)["TC"] == 0   # no bf16 mma before sm_80


@pytest.mark.skipif(NVCC is None, reason="no nvcc on this machine (NVRTC builds on the GPU)")
@pytest.mark.parametrize("hidden, batch, units, cluster", [
    (512, 64, 16, False), (512, 16, 16, False), (512, 64, 32, False), (1024, 64, 16, False),
    (128, 5, 16, False), (512, 64, 32, True), (256, 33, 16, True)])
def test_the_tensor_core_source_builds_for_hopper_without_spilling(tmp_path, hidden, batch,
                                                                    units, cluster):
    cfg = persist_cuda.plan_tc(hidden, batch, **H100, units=units, cluster=cluster)
    assert cfg["CLUSTER"] == (cfg["grid"][0] if cluster else 0)
    assert persist_cuda.source(cfg) == TC_SOURCE
    regs, report = build_for_hopper(tmp_path, cfg, hidden)
    assert "persist_fwd_tc" in report and "persist_bwd_tc" in report
    assert len(regs) == 3 and max(regs) <= min(255, 65536 // cfg["threads"])
    assert re.findall(r"(\d+) bytes spill stores", report) == ["0"] * 3


def test_tensor_core_kernels_that_do_not_build_give_way_to_the_fp32_ones(monkeypatch):
    monkeypatch.setattr(persist_cuda, "_device_limits", lambda d: (132, 227 * 1024, "90"))
    monkeypatch.setattr(persist_cuda, "_failed", {})
    built = []

    def build(cfg, hidden, device):
        if cfg["TC"]:
            raise RuntimeError("NVRTC could not compile the persistent kernels:\nmma: error")
        built.append(cfg)
    monkeypatch.setattr(persist_cuda, "kernels", build)
    gpu = torch.device("cuda", 0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert persist_cuda.ready(512, 64, gpu, bf16=True)["TC"] == 0
        assert persist_cuda.ready(512, 64, gpu, bf16=True)["TC"] == 0
    assert len(seen) == 1 and "tensor-core" in str(seen[0].message)
    assert persist_cuda.plan_for(512, 64, gpu, bf16=True)["TC"] == 0   # what the layer runs


def test_cluster_mode_needs_whole_unit_blocks_and_a_cluster_of_at_most_sixteen():
    assert persist_cuda.plan_tc(512, 64, **H100, units=32, cluster=True)["CLUSTER"] == 16
    assert persist_cuda.plan_tc(1024, 64, **H100, units=16, cluster=True) is None   # 64 blocks
    assert persist_cuda.plan_tc(528, 64, **H100, units=32, cluster=True) is None    # 528 % 32
    # the batch block's dz is held whole, twice: wide batch blocks do not fit
    assert persist_cuda.plan_tc(512, 256, **H100, units=32, cluster=True) is None
    cfg = persist_cuda.plan_tc(512, 16, **H100, units=32, cluster=True)
    assert cfg["NBC"] == 8 and cfg["smem_bwd"] == 2 * 2 * 8 * (4 * 512 + 8) + 4 * 8 * 8 * 36


def test_a_layer_says_which_persistent_kernels_ran_it(monkeypatch):
    monkeypatch.setattr(persist_cuda, "_device_limits", lambda d: (132, 227 * 1024, "90"))
    gpu = torch.device("cuda", 0)
    assert persist.described(persist_cuda.plan_for(512, 64, gpu, True), True) == \
        "CUDA kernels, bf16 on tensor cores"
    assert persist.described(persist_cuda.plan_for(200, 64, gpu, True), True) == \
        "CUDA kernels, fp32 (bf16 cast)"
    assert persist.described(persist_cuda.plan_for(512, 64, gpu), False) == "CUDA kernels, fp32"
    assert persist.described(None, True) == "Triton kernels"


def test_cluster_plans_size_their_batch_blocks_to_the_clusters_the_gpu_runs_at_once(monkeypatch):
    monkeypatch.setattr(persist_cuda, "_device_limits", lambda d: (132, 227 * 1024, "90"))
    monkeypatch.setattr(persist_cuda, "_fit", {})
    monkeypatch.setattr(persist_cuda, "_failed", {})
    monkeypatch.setitem(persist_cuda.TUNE, "TC_CLUSTER", 1)
    built = []

    def build(cfg, hidden, device):   # what building learns from the driver: 4 at once
        built.append(cfg["grid"])
        if cfg["CLUSTER"]:
            persist_cuda._fit.setdefault((device.index, hidden, cfg["U"]), 4)
    monkeypatch.setattr(persist_cuda, "kernels", build)
    gpu = torch.device("cuda", 0)
    cfg = persist_cuda.ready(512, 64, gpu, bf16=True)
    assert built == [(16, 8), (16, 4)]   # 8 batch blocks would run in two waves
    assert cfg["CLUSTER"] == 16 and cfg["NB"] == 16
    assert persist_cuda.plan_for(512, 64, gpu, bf16=True) == cfg   # what the layer runs
    assert persist_cuda.ready(512, 16, gpu, bf16=True)["grid"] == (16, 4)   # 4 fit: as planned
    persist_cuda._fit[(0, 512, 32)] = 0   # no cluster of 16 fits: the kernels without
    assert persist_cuda.plan_for(512, 64, gpu, bf16=True)["CLUSTER"] == 0


def test_the_launch_configuration_has_the_drivers_layout():
    cfg = persist_cuda._LaunchConfig
    assert ctypes.sizeof(cfg) == 56
    assert (cfg.shared_mem.offset, cfg.stream.offset, cfg.attrs.offset, cfg.num_attrs.offset) \
        == (24, 32, 40, 48)
