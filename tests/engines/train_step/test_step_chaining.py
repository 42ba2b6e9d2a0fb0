"""How the unrolled engine's fused step kernels are launched: the tiles the autotuner may pick,
and programmatic dependent launch between consecutive steps (Hopper and newer only). Their
numbers are checked on a GPU by tests/benchmarks/gpu_round5.sh (bf16 against cuDNN, PDL off and
on)."""
from types import SimpleNamespace

import pytest
import torch

triton_lstm = pytest.importorskip("designer.cells.classic.kernels.lstm")
if triton_lstm.triton is None:
    pytest.skip("Triton is not installed", allow_module_level=True)


def _gpu_tensor(index=0):
    return SimpleNamespace(is_cuda=True, device=torch.device("cuda", index))


@pytest.fixture
def capability(monkeypatch):
    caps = {}
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda dev: caps[dev])
    monkeypatch.setattr(triton_lstm, "_PDL", {})
    monkeypatch.delenv("RNN_DESIGNER_PDL", raising=False)
    return caps


def test_a_chained_step_on_hopper_launches_as_a_programmatic_dependent(capability):
    capability[0] = (9, 0)
    assert triton_lstm.chain_launch(_gpu_tensor(), True) == {"GDC": True, "launch_pdl": True}


def test_the_first_step_older_gpus_and_the_cpu_launch_plainly(capability):
    capability[0], capability[1] = (9, 0), (8, 0)
    assert triton_lstm.chain_launch(_gpu_tensor(), False) == {"GDC": False}
    assert triton_lstm.chain_launch(_gpu_tensor(1), True) == {"GDC": False}
    assert triton_lstm.chain_launch(torch.zeros(1), True) == {"GDC": False}


def test_the_environment_can_turn_it_off_for_comparisons(capability, monkeypatch):
    capability[0] = (9, 0)
    monkeypatch.setenv("RNN_DESIGNER_PDL", "0")
    assert triton_lstm.chain_launch(_gpu_tensor(), True) == {"GDC": False}


def test_every_step_tile_is_one_tl_dot_accepts():
    for bn, bh, bk, warps in triton_lstm.STEP_TILES:
        for size in (bn, bh, bk):
            assert size >= 16 and size & (size - 1) == 0
        assert warps in (2, 4, 8)
    assert any(bh == 16 for _, bh, _, _ in triton_lstm.STEP_TILES)   # small batches


def test_the_step_kernels_keep_their_autotuning_on_disk_where_triton_can():
    import inspect

    from designer.cells.classic.kernels import gru as triton_gru
    kernels = (triton_lstm._step_fwd, triton_lstm._step_bwd, triton_gru._gru_step_fwd,
               triton_gru._gru_step_bwd, triton_gru._rnn_step_fwd, triton_gru._rnn_step_bwd)
    import os
    can = "cache_results" in inspect.signature(triton_lstm.triton.autotune).parameters and \
        os.environ.get("TRITON_INTERPRET") != "1"   # the interpreter caches nothing
    for k in kernels:
        assert len(k.configs) == len(triton_lstm.STEP_TILES)
        assert k.keys == ["N", "H", "IEEE"]
        if can:
            assert k.cache_results
