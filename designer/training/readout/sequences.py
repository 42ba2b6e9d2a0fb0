"""What a sequence classifier or forecaster makes of the sequence it is inspected on.

A classifier's inspection holds which class it leans to as it reads (:func:`leaning`: its
head run on every step's state, the prediction it would make if the sequence ended there), a
forecaster's the forecast in the target's own units (:func:`outputs`). Which sequence or
window is read: :func:`designer.training.readout.probe.sequence_probe`.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from designer.training.readout.probe import InspectError, Probe

BUDGET = 4_000_000   # values of held states per block of the leaning pass (memory bound)


# ---------------------------------------------------------------------------- reading --
def outputs(net, probe: Probe, blob: torch.Tensor, log_probs) -> dict:
    """What the net's output says about the probe, with the loss kept in the graph (for the
    gradient through time): a classifier's top classes (``prediction``), a forecaster's
    forecast in units (``forecast``, ``(horizon, targets)``)."""
    regression = net.losses[0] in net.regressions
    if probe.kind == "classes":
        if regression:
            raise InspectError("a sequence classifier needs a SoftmaxWithLoss layer to read "
                               "its class scores from")
        logp = log_probs(net, blob)
        if logp.shape[0] != 1:
            raise InspectError(f"the net makes {logp.shape[0]} class predictions for one "
                               "sequence; inspection reads one, at the sequence's end")
        target = probe.target if probe.target is not None else int(logp[0].argmax())
        k = min(5, logp.shape[-1])
        p, ids = logp[0].detach().exp().topk(k)
        return {"losses": -logp[0, target].reshape(1),
                "prediction": [(int(i), float(v)) for i, v in zip(ids, p)]}
    if not regression:
        raise InspectError("a forecaster needs a EuclideanLoss or L1Loss layer to read its "
                           "forecast from")
    info = probe.info
    label = torch.as_tensor(np.asarray(info["label"], np.float32), device=blob.device)
    pred = blob.reshape(-1).float()
    if pred.numel() != label.numel():
        raise InspectError(f"the net forecasts {pred.numel()} values; the window has "
                           f"{label.numel()} to compare them with")
    forecast = (pred.detach().double().cpu().numpy().reshape(label.shape)
                * np.asarray(info["scale"]) + np.asarray(info["base"]))
    return {"losses": F.mse_loss(pred, label.reshape(-1)).reshape(1), "forecast": forecast}


def leaning(net, probe: Probe, ys: dict, at: tuple, log_probs) -> np.ndarray:
    """``(T, K)``: the class probabilities the net gives after each step, as if the sequence
    ended there: its head read on each step's state.

    The recurrent layers are not run again: each gives, for a batch of T copies of the
    sequence, its outputs held from step t on in copy t (copy t ends at t, its ``lengths``
    t + 1), so whatever reads the last step, with lengths or without, reads step t.
    ``ys``: recurrent layer -> ``(y, batch_first)`` from the pass over the probe.
    """
    t_ = probe.steps
    device = next(net.parameters()).device
    width = sum(int(y.shape[-1]) for y, _ in ys.values()) or 1
    block = max(1, min(t_, BUDGET // (t_ * width)))
    x = torch.as_tensor(probe.data, dtype=torch.float32, device=device)
    steps = torch.arange(t_, device=device)
    rows = []
    data_layer = net.sources[0]
    for lo in range(0, t_, block):
        ends = steps[lo:lo + block]
        n = len(ends)
        held_at = torch.minimum(steps[:, None], ends[None, :])          # (T, n)

        def held(name, module, x_in, cont, state, held_at=held_at):
            y, batch_first = ys[name]
            seq = (y[0] if batch_first else y[:, 0]).detach()           # (T, H)
            out = seq[held_at]                                           # (T, n, H)
            return (out.transpose(0, 1).contiguous() if batch_first else out), state

        feeds = {f"{data_layer}.data": x[:, None].expand(t_, n, x.shape[1]).contiguous(),
                 f"{data_layer}.lengths": ends + 1}
        blob = net(feeds, None, want=(at[0],), recurrent=held).blobs[at]
        rows.append(log_probs(net, blob).exp())
    return torch.cat(rows).float().cpu().numpy()
