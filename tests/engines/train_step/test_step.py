"""One training step: it learns, clips, and skips non-finite updates."""
import pytest
import torch

from designer.engines.measure.bench import random_feeds
from designer.engines.net.build import Net
from designer.engines.train_step.step import TrainStep, make_optimizer, set_lr
from designer.graph import settings


@pytest.mark.parametrize("solver", ["SGD", "Adam", "AdamW", "RMSProp"])
@pytest.mark.parametrize("engine", ["cudnn", "caffe"])
def test_repeated_steps_on_one_batch_lower_the_loss(every_layer, solver, engine):
    g = every_layer()
    torch.manual_seed(0)
    net = Net(g, engine)
    lr = 0.5 if solver == "SGD" else 0.01
    opt = make_optimizer(net.parameters(),
                         settings.effective("solver", {"type": solver, "base_lr": lr}),
                         torch.device("cpu"))
    step = TrainStep(net, opt, clip=5.0)
    feeds = random_feeds(g, torch.device("cpu"))
    losses = [step(feeds).loss.item() for _ in range(30)]
    assert losses[-1] < 0.8 * losses[0]


def test_a_non_finite_loss_skips_the_update(every_layer):
    g = every_layer()
    net = Net(g)
    opt = make_optimizer(net.parameters(), settings.defaults("solver"), torch.device("cpu"))
    step = TrainStep(net, opt, clip=1.0)
    feeds = random_feeds(g, torch.device("cpu"))
    step(feeds)
    with torch.no_grad():
        net.layers["ip1"].linear.bias[0] = float("nan")
    # the learned weights (a BatchNorm's running statistics follow each batch in the forward
    # pass, as torch's do, unless the batch holds non-finite values)
    before = {k: v.clone() for k, v in net.named_parameters()}
    out = step(feeds)
    assert not torch.isfinite(out.loss) and out.skipped.item() == 1.0
    after = dict(net.named_parameters())
    assert all(torch.equal(before[k], after[k]) or torch.isnan(before[k]).any() for k in before)


def test_gradient_norm_is_reported_and_clipped(every_layer):
    g = every_layer()
    net = Net(g)
    opt = make_optimizer(net.parameters(), settings.effective("solver", {"type": "SGD"}),
                         torch.device("cpu"))
    set_lr(opt, 0.0)
    out = TrainStep(net, opt, clip=1e-3)(random_feeds(g, torch.device("cpu")))
    assert out.grad_norm.item() > 1e-3
    total = torch.sqrt(sum((p.grad ** 2).sum() for p in net.parameters() if p.grad is not None))
    assert total.item() == pytest.approx(1e-3, rel=1e-3)
