"""The notes after a run's first step: the PERSIST layers' kernels, the FUSED sLSTM layers',
and a slow first step."""
import torch

from designer.training.run.first_step import SLOW_FIRST_STEP_S, first_step_notes


class Persist(torch.nn.Module):
    engine_name, reports_kernels = "PERSIST", "PERSIST layers"

    def __init__(self, ran, fallback=None):
        super().__init__()
        self.ran, self.fallback = ran, fallback


def net_of(*layers):
    net = torch.nn.Sequential(*layers, torch.nn.Linear(2, 2))
    return net


def test_the_persist_layers_kernels_are_named_once_each():
    net = net_of(Persist("CUDA kernels, bf16 on tensor cores"),
                 Persist("CUDA kernels, bf16 on tensor cores"), Persist("Triton kernels"))
    notes = first_step_notes(net, 0.2, torch.device("cuda"))
    assert notes == ["PERSIST layers run on CUDA kernels, bf16 on tensor cores; Triton kernels"]


def test_a_fallback_is_not_said_twice_and_other_engines_say_nothing():
    net = net_of(Persist("cuDNN (the layer runs on the CPU)", "the layer runs on the CPU"))
    assert first_step_notes(net, 0.2, torch.device("cpu")) == []
    assert first_step_notes(net_of(), 0.2, torch.device("cuda")) == []


class SLSTM(torch.nn.Module):
    engine_name, kind, reports_kernels = "FUSED", "sLSTM", "sLSTM layers (FUSED)"

    def __init__(self, ran, fallback=None):
        super().__init__()
        self.ran, self.fallback = ran, fallback


def test_the_fused_slstm_layers_say_when_they_run_on_the_persistent_kernels():
    notes = first_step_notes(net_of(SLSTM("the persistent Triton kernels"),
                                    SLSTM("the step loop (the layer runs on the CPU)",
                                          "the layer runs on the CPU")),
                             0.2, torch.device("cuda"))
    assert notes == ["sLSTM layers (FUSED) run on the persistent Triton kernels"]
    assert first_step_notes(net_of(SLSTM("the step loop (the layer runs on the CPU)",
                                         "the layer runs on the CPU")),
                            0.2, torch.device("cpu")) == []


def test_a_slow_first_step_on_a_gpu_says_why():
    slow = SLOW_FIRST_STEP_S + 18.4
    (note,) = first_step_notes(net_of(), slow, torch.device("cuda"))
    assert note.startswith(f"the first step took {slow:.1f} s: it compiled the GPU kernels")
    assert "later runs" in note
    assert first_step_notes(net_of(), slow, torch.device("cpu")) == []   # CPU: nothing compiled


def test_the_loop_says_them_once_after_the_first_step(tmp_path, monkeypatch):
    from designer.training.run import session
    from tests.training.run.test_loop import run_all, tiny_project
    seen = []

    def notes(net, seconds, device):
        seen.append(seconds)
        return ["first step noted"]
    monkeypatch.setattr(session, "first_step_notes", notes)
    recs = run_all(tiny_project(tmp_path), out=tmp_path / "run", steps=4)
    said = [r for r in recs if r["kind"] == "note" and r["message"] == "first step noted"]
    assert len(seen) == 1 and seen[0] > 0
    assert len(said) == 1 and said[0]["step"] == 1
