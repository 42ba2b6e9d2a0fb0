"""The loop's train records: the steps since the last record summarised in one device sync,
the run of non-finite steps, and what a batch counts towards tokens per second."""
from __future__ import annotations

import math
import time

import torch


def summarise(net, pending, step, nan_streak, t_log, steps, tokens, device
              ) -> tuple[dict, int]:
    """One record from the steps since the last one (a single device sync)."""
    losses = torch.stack([o.loss.float() for o, _ in pending]).tolist()
    norms = torch.stack([o.grad_norm.float() for o, _ in pending]).tolist()
    skipped = torch.stack([o.skipped.float() for o, _ in pending]).tolist()
    accs = [float(o.metrics[n]) for o, _ in pending for n in net.metrics[:1]]
    squares = [float(o.metrics[n]) for o, _ in pending for n in net.regressions[:1]]
    for s in skipped:
        nan_streak = nan_streak + 1 if s else 0
    good = [x for x, s in zip(losses, skipped) if not s and math.isfinite(x)]
    elapsed = max(time.perf_counter() - t_log, 1e-9)
    record = {"kind": "train", "step": step,
              "loss": sum(good) / len(good) if good else float("nan"),
              "lr": pending[-1][1], "tokens_per_s": tokens / elapsed,
              "ms_per_step": 1e3 * elapsed / max(steps, 1),
              "grad_norm": norms[-1] if math.isfinite(norms[-1]) else None,
              "skipped": int(sum(skipped))}
    if accs:
        record["accuracy"] = sum(accs) / len(accs)
    good_sq = [x for x in squares if math.isfinite(x)]
    if good_sq:
        record["rmse"] = math.sqrt(sum(good_sq) / len(good_sq))
    return record, nan_streak


def streak(pending, nan_streak: int) -> int:
    """Non-finite steps in a row up to now, counting those not yet summarised."""
    if not pending:
        return nan_streak
    for s in torch.stack([o.skipped.float() for o, _ in pending]).tolist():
        nan_streak = nan_streak + 1 if s else 0
    return nan_streak


def batch_tokens(batch: dict) -> int:
    """Symbols (or samples) in a batch: the valid steps of padded sequences, else T x N."""
    if "lengths" in batch:
        return int(batch["lengths"].sum())
    shape = batch["data"].shape
    return int(shape[0]) * (int(shape[1]) if len(shape) > 1 else 1)
