"""Validation: the mean loss (and accuracy, or RMSE) of a net over held-out batches, the same
fixed batches at every evaluation. In a data-parallel run each rank scores its own share of
every batch and the sums are added up over the ranks, so every rank gets the figure one process
would get over the whole batches.
"""
from __future__ import annotations

import math

import torch

from designer.engines.net.build import Net

from designer.training.run.distributed import World


def to_device(batch: dict, data_layer: str, device: torch.device) -> dict:
    return {f"{data_layer}.{k}": v.to(device, non_blocking=True) for k, v in batch.items()}


def evaluate(net: Net, source, batches: int, device: torch.device, data_layer: str,
             split: str = "val", world: World | None = None) -> dict:
    """Mean loss (and accuracy, or the RMSE in the target's units) over a fixed set of
    held-out batches (in a data-parallel run, over every rank's share of them)."""
    if split not in source.splits:
        return {}
    net.eval()
    loss_sum, acc_sum, sq_sum, weight = 0.0, 0.0, 0.0, 0
    state = None
    try:
        with torch.no_grad():
            for batch in source.eval_batches(batches, split):
                if batch["label"].numel() == 0:  # a final batch shared out to none here
                    continue
                feeds = to_device(batch, data_layer, device)
                if source.carries_state and state is None:
                    state = net.initial_state(batch["data"].shape[1], device)
                out = net(feeds, state)
                if source.carries_state:
                    state = out.state
                w = batch["label"].numel()
                loss_sum += float(net.loss(out)) * w
                if net.metrics:
                    acc_sum += float(out.blobs[(net.metrics[0], 0)]) * w
                if net.regressions:
                    sq_sum += float(net.squared_error(out, net.regressions[0])) * w
                weight += w
    finally:
        net.train()
    if world is not None:
        loss_sum, acc_sum, sq_sum, weight = world.sum([loss_sum, acc_sum, sq_sum, weight])
    if not weight:
        return {}
    result = {"val_loss": loss_sum / weight}
    if net.metrics:
        result["val_accuracy"] = acc_sum / weight
    if net.regressions:
        result["val_rmse"] = math.sqrt(sq_sum / weight)
    return result
