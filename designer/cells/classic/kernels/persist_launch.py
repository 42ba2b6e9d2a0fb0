"""Build and launch the PERSIST engine's CUDA kernels (sources: persist_cu.SOURCE, fp32 FMAs;
persist_tc.SOURCE, bf16 on tensor cores).

The kernels are compiled at first use by NVRTC, the run-time compiler that ships with PyTorch's
CUDA builds (no nvcc needed), once per layer shape, and launched on PyTorch's current stream
through the driver API (so a CUDA graph captures them like any other kernel). ``plan`` picks the
compile-time constants; ``why_not`` says why a shape cannot run (the engine then uses cuDNN).
"""
from __future__ import annotations

import ctypes
import json
import math
import os
import threading
import warnings

import torch

from designer.cells.classic.kernels import persist_bf16 as persist_tc
from designer.cells.classic.kernels.persist_fp32 import SOURCE

THREADS = 512
MAX_WEIGHTS_PER_THREAD = 64    # registers a thread gives to its slice of W_hh
_cache: dict = {}
_failed: dict = {}     # what could not be built, and why
_fit: dict = {}        # (device index, hidden, units) -> cluster plans' clusters a GPU holds at once
# overrides of the plans' choices ("U", "GBAR", "TC", "TC_U", "TC_THREADS", "TC_ROWS",
# "TC_SPLIT"), for the benchmarks' A/B runs; also from $RNN_DESIGNER_PERSIST_TUNE (JSON)
TUNE: dict = json.loads(os.environ.get("RNN_DESIGNER_PERSIST_TUNE") or "{}")
TC_THREADS = (256, 512)
MAX_CLUSTER = 16       # blocks a cluster (16 is Hopper's non-portable size)
_NON_PORTABLE_CLUSTER = 14   # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
_lock = threading.Lock()


def _round4(n: int) -> int:
    return 4 * math.ceil(n / 4)


def plan(hidden: int, batch: int, sms: int, smem_limit: int, units: int | None = None,
         group_barriers: bool = True) -> dict | None:
    """The grid and the compile-time constants for a level, or None when W_hh is too big to
    stay in the registers of ``sms`` blocks.

    ``U`` units a block (its 4U rows of W_hh forward, its U columns backward): the largest
    power of two (4 to 64) with hidden * U * 4 / THREADS <= 64 registers of weights a thread.
    The remaining SMs split the batch (at least 4 sequences a block); a block runs its
    sequences in chunks of NBC. ``APRE``: backward phase A's inputs are prefetched into shared
    memory (where rows are 16-byte aligned and they fit). ``GBAR``: the blocks of one batch
    block synchronise among themselves (their own counter), not the whole grid.
    """
    if units is None:
        units = 64
        while units > 4 and hidden * units * 4 > MAX_WEIGHTS_PER_THREAD * THREADS:
            units //= 2
    unit_blocks = math.ceil(hidden / units)
    if unit_blocks > sms or hidden * units * 4 > MAX_WEIGHTS_PER_THREAD * THREADS:
        return None
    batch_blocks = max(1, min(math.ceil(batch / 4), sms // unit_blocks))
    per_block = math.ceil(batch / batch_blocks)
    batch_blocks = math.ceil(batch / per_block)
    ks, rs = THREADS // (4 * units), THREADS // units
    kw, rw = _round4(math.ceil(hidden / ks)), _round4(math.ceil(4 * hidden / rs))
    nbc = 16 if per_block > 8 else (8 if per_block > 4 else 4)
    while True:
        smem_f = 4 * nbc * (ks * (kw + 4) + THREADS + 5 * units)
        smem_b = 4 * nbc * (rs * (rw + 4) + THREADS)
        if max(smem_f, smem_b) <= smem_limit or nbc == 4:
            break
        nbc //= 2
    if max(smem_f, smem_b) > smem_limit:
        return None
    apre = int(hidden % 4 == 0 and smem_b + 4 * 9 * per_block * units <= smem_limit)
    smem_b += apre * 4 * 9 * per_block * units
    return {"grid": (unit_blocks, batch_blocks), "NB": per_block, "U": units, "NBC": nbc,
            "KW": kw, "RW": rw, "APRE": apre, "GBAR": int(group_barriers), "smem_fwd": smem_f,
            "smem_bwd": smem_b, "TC": 0, "threads": THREADS}


def plan_tc(hidden: int, batch: int, sms: int, smem_limit: int, units: int = 16,
            threads: int | None = None, group_barriers: bool = True,
            rows: int = 4, split: int | None = None, cluster: bool = False) -> dict | None:
    """The plan of the bf16 tensor-core kernels (persist_tc), or None where they cannot run.

    ``units`` a block (a multiple of 16), ``threads`` a block (the fewest of TC_THREADS that
    keep the weight fragments within MAX_WEIGHTS_PER_THREAD registers when not given), at
    least ``rows`` sequences a batch block. Forward, warp w holds m-tile w % MT of the block's
    4U rows and k-group w / MT; backward, m-tile w % (U/16) of its units and a k-group of the 4H
    gate rows, over the sequences in chunks of NBC (a multiple of 8) that fit shared memory.
    ``split``: accumulators a tile, each taking every split-th k-tile (shorter mma chains; by
    default 2 where a thread may have 255 registers, 1 at 512 threads, where it has 128).
    ``cluster``: the unit blocks of a batch block form a thread-block cluster (at most
    MAX_CLUSTER, units dividing hidden) and exchange h and dz through each other's shared
    memory, double-buffered, whole, with the cluster's barrier; None where that cannot be.
    """
    if hidden % 16 or units % 16:
        return None
    unit_blocks = math.ceil(hidden / units)
    if cluster and (hidden % units or unit_blocks > MAX_CLUSTER):
        return None
    if unit_blocks > sms:
        return None

    def regs(t):   # weight registers a thread, forward and backward
        warps = t // 32
        if warps % (units // 4) or warps % (units // 16):
            return None
        kf = math.ceil(hidden / 16 / (warps // (units // 4)))
        kb = math.ceil(hidden / 4 / (warps // (units // 16)))
        return 4 * max(kf, kb)
    fits = [t for t in ((threads,) if threads else TC_THREADS)
            if regs(t) is not None and regs(t) <= MAX_WEIGHTS_PER_THREAD]
    if not fits:
        return None
    t = fits[0]
    warps = t // 32
    batch_blocks = max(1, min(math.ceil(batch / rows), sms // unit_blocks))
    per_block = math.ceil(batch / batch_blocks)
    batch_blocks = math.ceil(batch / per_block)
    nbp = 8 * math.ceil(per_block / 8)
    bufs = 2 if cluster else 1
    smem_f = bufs * 2 * nbp * (hidden + 8) + 4 * (warps // (units // 4)) * nbp * (4 * units + 4)
    nbc = nbp
    while True:
        smem_b = bufs * 2 * nbc * (4 * hidden + 8) + \
            4 * (warps // (units // 16)) * nbc * (units + 4)
        if smem_b <= smem_limit or nbc == 8 or cluster:
            break
        nbc = 8 * math.ceil(nbc / 16)
    if max(smem_f, smem_b) > smem_limit:
        return None
    return {"grid": (unit_blocks, batch_blocks), "NB": per_block, "U": units, "NBC": nbc,
            "GBAR": int(group_barriers), "smem_fwd": smem_f, "smem_bwd": smem_b, "TC": 1,
            "threads": t, "weight_regs": regs(t), "SPLIT": split or (2 if t <= 256 else 1),
            "CLUSTER": unit_blocks if cluster else 0}


def _device_limits(device: torch.device) -> tuple[int, int, str]:
    props = torch.cuda.get_device_properties(device)
    smem = getattr(props, "shared_memory_per_block_optin", 48 * 1024)
    return props.multi_processor_count, smem, f"{props.major}{props.minor}"


def _nvrtc(defines: dict, arch: str, text: str = SOURCE) -> bytes:
    from torch.cuda import _utils
    lib = _utils._get_gpu_rtc_library()
    prog = ctypes.c_void_p()
    src = text.encode()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"persist.cu", 0, None, None):
        raise RuntimeError("NVRTC could not create the program")
    opts = [f"--gpu-architecture=sm_{arch}".encode()] + \
        [f"-DP_{k}={v}".encode() for k, v in defines.items()]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    try:
        if lib.nvrtcCompileProgram(prog, len(opts), arr):
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(prog, log)
            raise RuntimeError("NVRTC could not compile the persistent kernels:\n"
                               + log.value.decode(errors="replace"))
        size = ctypes.c_size_t()
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetCUBIN(prog, cubin)
        return cubin.raw
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _occupancy(kernel, smem: int, threads: int) -> int:
    from torch.cuda import _utils
    libcuda = _utils._get_gpu_runtime_library()
    n = ctypes.c_int()
    _utils._check_cuda(libcuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(n), kernel.func, threads, ctypes.c_size_t(smem)))
    return n.value


def compile_constants(cfg: dict, hidden: int) -> dict:
    """The source's compile-time constants (``-DP_<name>=<value>``) for a plan."""
    names = ("U", "NBC", "GBAR", "SPLIT", "CLUSTER") if cfg.get("TC") else ("U", "NBC", "KW", "RW", "APRE", "GBAR")
    return {"THREADS": cfg.get("threads", THREADS), "H": hidden, "NB": cfg["NB"],
            **{k: cfg[k] for k in names}}


def source(cfg: dict) -> str:
    return persist_tc.SOURCE if cfg.get("TC") else SOURCE


def kernels(cfg: dict, hidden: int, device: torch.device):
    """(forward, backward, barriers-only) kernels for this plan, compiled and loaded once per
    shape."""
    sms, _, arch = _device_limits(device)
    defines = compile_constants(cfg, hidden)
    tc = "_tc" if cfg.get("TC") else ""
    key = (tuple(defines.items()), tc, arch, device.index)
    with _lock:
        if key not in _cache:
            from torch.cuda import _utils
            cubin = _nvrtc(defines, arch, source(cfg))
            with torch.cuda.device(device):
                k = _utils._cuda_load_module(cubin, ["persist_fwd" + tc, "persist_bwd" + tc,
                                                     "persist_barriers"])
            fwd, bwd = k["persist_fwd" + tc], k["persist_bwd" + tc]
            fwd.set_shared_memory_config(cfg["smem_fwd"])
            bwd.set_shared_memory_config(cfg["smem_bwd"])
            blocks = cfg["grid"][0] * cfg["grid"][1]
            if cfg.get("CLUSTER"):   # clusters run whenever one fits: no residency needed
                _cluster_ready((fwd, bwd), cfg, hidden, device)
                blocks = 0
            for kern, smem in ((fwd, cfg["smem_fwd"]), (bwd, cfg["smem_bwd"])):
                if blocks and _occupancy(kern, smem, defines["THREADS"]) * sms < blocks:
                    raise RuntimeError(f"the {blocks} blocks of the persistent kernel cannot "
                                       f"all be resident on {sms} SMs")
            _cache[key] = (fwd, bwd, k["persist_barriers"])
        return _cache[key]


class _LaunchConfig(ctypes.Structure):   # the driver's CUlaunchConfig
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared_mem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("num_attrs", ctypes.c_uint)]


def clusters_at_once(kerns, cfg: dict) -> int:
    """How many of the plan's clusters the GPU runs at once, forward and backward (the
    driver's cuOccupancyMaxActiveClusters: a cluster needs its blocks' SMs in one GPC)."""
    from torch.cuda import _utils
    libcuda = _utils._get_gpu_runtime_library()
    fits = []
    for k, smem in zip(kerns, (cfg["smem_fwd"], cfg["smem_bwd"])):
        conf = _LaunchConfig((ctypes.c_uint * 3)(*cfg["grid"], 1),
                             (ctypes.c_uint * 3)(cfg["threads"], 1, 1), smem, None, None, 0)
        n = ctypes.c_int()
        _utils._check_cuda(libcuda.cuOccupancyMaxActiveClusters(
            ctypes.byref(n), k.func, ctypes.byref(conf)))
        fits.append(n.value)
    return min(fits)


def _cluster_ready(kerns, cfg: dict, hidden: int, device: torch.device) -> None:
    """Allow clusters over 8 blocks, ask how many clusters fit at once (``_fit``: the next
    plan for this layer sizes its batch blocks to that), and launch the backward once with no
    steps and no sequences (it zeroes its shared memory and meets its cluster), so that a GPU
    that cannot schedule such a cluster says so here, not in the middle of training."""
    from torch.cuda import _utils
    libcuda = _utils._get_gpu_runtime_library()
    for k in kerns:
        if cfg["CLUSTER"] > 8:
            _utils._check_cuda(libcuda.cuFuncSetAttribute(
                k.func, _NON_PORTABLE_CLUSTER, ctypes.c_int(1)))
    if (device.index, hidden, cfg["U"]) not in _fit:
        _fit[(device.index, hidden, cfg["U"])] = clusters_at_once(kerns, cfg)
    with torch.cuda.device(device):
        if torch.cuda.is_current_stream_capturing():   # a graph being captured: no trial
            return
        dummy = torch.zeros(2 * hidden * hidden + 64, device=device)   # W_hh is read
        kerns[1](grid=(*cfg["grid"], 1), block=(cfg["threads"], 1, 1),
                 args=[dummy] * 7 + [dummy, 0, 0], shared_mem=cfg["smem_bwd"])
        torch.cuda.synchronize(device)


def barrier_counters(cfg: dict, device: torch.device) -> torch.Tensor:
    """Zeroed arrival counters for one launch: one per batch block, 128 bytes apart."""
    return torch.zeros(32 * cfg["grid"][1], device=device, dtype=torch.int32)


def forward(pre, w_hh, hs, cs, acts, cfg):
    """Run the recurrence: hs[0], cs[0] hold the initial state; fills hs[1:], cs[1:], acts.
    Tensor-core plans take pre, w_hh and hs in bf16 (cs and acts fp32), the others all fp32."""
    steps, batch, four_h = pre.shape
    hidden = four_h // 4
    fwd = kernels(cfg, hidden, pre.device)[0]
    bar = barrier_counters(cfg, pre.device)
    args = [pre, w_hh, hs, cs, acts, bar, steps, batch] + ([] if cfg.get("TC") else [cfg["NB"]])
    fwd(grid=(*cfg["grid"], 1), block=(cfg.get("threads", THREADS), 1, 1), args=args,
        shared_mem=cfg["smem_fwd"])


def backward(dy, acts, cs, w_hh, dz, dh, dc, cfg):
    """dh, dc: in, the gradient on the last state; out, on the first. Fills dz. Tensor-core
    plans take dy, w_hh and dz in bf16."""
    steps, batch, hidden = dy.shape
    bwd = kernels(cfg, hidden, dy.device)[1]
    bar = barrier_counters(cfg, dy.device)
    args = [dy, acts, cs, w_hh, dz, dh, dc, bar, steps, batch] + \
        ([] if cfg.get("TC") else [cfg["NB"]])
    bwd(grid=(*cfg["grid"], 1), block=(cfg.get("threads", THREADS), 1, 1), args=args,
        shared_mem=cfg["smem_bwd"])


def available() -> bool:
    """PyTorch was built with CUDA and its NVRTC library loads."""
    if "nvrtc" not in _failed:
        try:
            from torch.cuda import _utils
            _utils._get_gpu_rtc_library()
            _failed["nvrtc"] = None if torch.version.cuda else "PyTorch has no CUDA"
        except Exception as e:  # noqa: BLE001 - no NVRTC: the Triton kernels or cuDNN
            _failed["nvrtc"] = str(e)
    return _failed["nvrtc"] is None


def plan_for(hidden: int, batch: int, device: torch.device, bf16: bool = False) -> dict | None:
    """The plan for a level: in bf16, the tensor-core kernels' where they can run (sm_80 and
    newer, H a multiple of 16), else the fp32 kernels' (bf16 then runs cast to fp32)."""
    sms, smem, arch = _device_limits(device)
    if bf16 and int(arch) >= 80 and TUNE.get("TC", 1) and \
            (hidden, batch, device.index, 1) not in _failed:
        # 32 units a block where the weights fit (half the blocks of a batch block to wait
        # for, twice the batch blocks, half the bytes each block stages a step), else 16
        for units in (TUNE["TC_U"],) if "TC_U" in TUNE else (32, 16):
            # clusters only when asked: the H200 runs 7 clusters of 16 at once, and sized to
            # that, N=64's wider batch blocks made the step slower (1.08x cuDNN against 1.27x;
            # N=16 1.42x against 1.38x, within the noise)
            for cluster in (True, False) if TUNE.get("TC_CLUSTER", 0) else (False,):
                if cluster and (hidden, batch, device.index, "cluster") in _failed:
                    continue
                rows = TUNE.get("TC_ROWS", 4)
                fit = _fit.get((device.index, hidden, units)) if cluster else None
                if fit == 0:
                    continue
                if fit:   # as many batch blocks as clusters run at once, not waves of them
                    rows = max(rows, math.ceil(batch / fit))
                cfg = plan_tc(hidden, batch, sms, smem, units, TUNE.get("TC_THREADS"),
                              bool(TUNE.get("GBAR", 1)), rows, TUNE.get("TC_SPLIT"), cluster)
                if cfg is not None:
                    return cfg
    return plan(hidden, batch, sms, smem, TUNE.get("U"), bool(TUNE.get("GBAR", 1)))


def ready(hidden: int, batch: int, device: torch.device, bf16: bool = False) -> dict | None:
    """The plan for this shape with its kernels built, or None (and one warning saying why)
    where they cannot be. Tensor-core kernels that do not build give way to the fp32 ones."""
    cfg = plan_for(hidden, batch, device, bf16)
    if cfg is None:
        return None
    try:
        kernels(cfg, hidden, device)
    except Exception as e:  # noqa: BLE001 - said once, then the shape runs elsewhere
        if cfg.get("CLUSTER"):   # the same kernels without clusters
            _failed[(hidden, batch, device.index, "cluster")] = str(e)
            return ready(hidden, batch, device, bf16)
        key = (hidden, batch, device.index, cfg["TC"])
        if key not in _failed:
            _failed[key] = str(e)
            kind = "tensor-core " if cfg["TC"] else ""
            warnings.warn(f"The persistent {kind}CUDA kernels for {hidden} units could not be "
                          f"built ({str(e).splitlines()[0]}).", RuntimeWarning, stacklevel=2)
        return ready(hidden, batch, device) if cfg["TC"] else None
    fit = _fit.get((device.index, hidden, cfg["U"])) if cfg.get("CLUSTER") else None
    if fit is not None and cfg["grid"][1] > fit:   # learnt while building: plan again
        return ready(hidden, batch, device, bf16)
    return cfg
