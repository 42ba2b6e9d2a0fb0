"""A net with a convolution over time ahead of its LSTM trains on the CPU: data -> Conv1D ->
LSTM -> SequenceLast -> InnerProduct -> loss, through the trainer as the window runs it."""
import math

import pytest

from designer.training.run.loop import RunOptions, train
from tests.exchange.test_conv1d import conv_project


@pytest.mark.parametrize("case", ["causal", "valid_stride"])
def test_data_conv_lstm_last_ip_loss_trains_a_few_steps(tmp_path, case):
    project = conv_project(tmp_path, case)
    project.solver = {"type": "Adam", "base_lr": 0.02, "max_steps": 12}
    project.training = {"log_interval": 1, "eval_interval": 6, "eval_batches": 1,
                        "checkpoint_interval": 6, "sample_interval": 0, "device": "cpu"}
    records = list(train(project, RunOptions(out=tmp_path / "run", steps=12, device="cpu")))
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert len(losses) == 12 and all(math.isfinite(x) for x in losses)
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3, losses
    assert any(r["kind"] == "checkpoint" for r in records)
