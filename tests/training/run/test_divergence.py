"""A run whose loss climbs far above its best says so once, in a record, and goes on."""
import json
import math

from designer.training.run.divergence import DivergenceWatch
from tests.training.run.test_loop import run_all, tiny_project


def test_the_watch_warns_once_the_loss_has_stayed_high_for_long_enough():
    watch = DivergenceWatch(factor=5.0, steps=100)
    assert [watch.update(s, x) for s, x in [(10, 4.0), (20, 2.0), (30, 1.0)]] == [None] * 3
    assert watch.update(40, 6.0) is None              # above 5 x 1.0 from step 40 ...
    assert watch.update(130, 9.0) is None             # ... for 90 steps: not yet
    warning = watch.update(140, 8.0)                  # 100 steps: now
    assert warning["kind"] == "warning" and warning["since"] == 40
    assert "above 5 times its best (1.000) since step 40" in warning["message"]
    assert watch.update(150, 8.0) is None             # once per episode
    assert watch.update(160, 1.2) is None             # recovered ...
    assert watch.update(170, 7.0) is None and watch.update(270, 7.0) is not None  # ... again


def test_nan_and_a_zero_factor_are_left_alone():
    watch = DivergenceWatch(factor=5.0, steps=1)
    assert watch.update(1, 1.0) is None and watch.update(2, math.nan) is None
    off = DivergenceWatch(factor=0.0, steps=1)
    assert all(off.update(s, x) is None for s, x in [(1, 1.0), (2, 100.0), (3, 100.0)])


def test_a_diverging_run_warns_in_a_record_and_in_its_metrics(tmp_path, monkeypatch):
    from designer.engines.net import layers
    real = layers.SoftmaxWithLoss.forward
    calls = {"n": 0}

    def blown_up(self, logits, label):  # from the 9th training step on, a huge loss
        loss = real(self, logits, label)
        if self.training:
            calls["n"] += 1
            if calls["n"] > 8:
                return loss * 50
        return loss

    monkeypatch.setattr(layers.SoftmaxWithLoss, "forward", blown_up)
    p = tiny_project(tmp_path, training={"log_interval": 2, "eval_interval": 100,
                                         "divergence_steps": 6})
    recs = run_all(p, out=tmp_path / "run", steps=20)
    warnings = [r for r in recs if r["kind"] == "warning"]
    assert len(warnings) == 1 and warnings[0]["since"] == 10 and warnings[0]["step"] == 16
    assert recs[-1]["reason"] == "finished" and recs[-1]["step"] == 20  # it goes on
    logged = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text()
              .splitlines()]
    assert any(r["kind"] == "warning" and r["step"] == 16 for r in logged)
