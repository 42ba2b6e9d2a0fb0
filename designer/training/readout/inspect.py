"""See inside the recurrence: per time step gates, states, surprise and gradient flow.

    model = load_trained("runs/char-rnn")                        # or a live Net
    probe = text_probe("ROMEO: What light", model.vocab)
    result = inspect(model.net, probe)
    result.layers[0].gates["f"]       # (steps, hidden): the forget gate of every unit, per step
    result.surprise                   # (steps,): -ln p(character t | the characters before it)
    result.grad_norm                  # (steps,): |dL/dh_t|, how far back the error reaches

A sequence classifier's inspection also holds ``leaning`` (steps, classes): the class
probabilities after each step; a forecaster's ``forecast`` (horizon, targets) in units
(:mod:`designer.training.readout.sequences`).

Every recurrent layer is read through its unrolled net's per-step nodes
(:func:`designer.engines.measure.trace.trace_recurrent`); a layer that trains on the CUDNN engine is
read the same way after its weights are converted, so the numbers are the same whichever
engine the run used (tested). ``parity=True`` also measures, per step, how far apart the two
engines are for these weights and this input (:func:`designer.engines.measure.step_parity.step_parity`).

Everything returned is numpy or plain Python: it crosses threads and goes into JSON as is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from designer.engines.measure.step_parity import step_parity
from designer.engines.measure.trace import caffe_weights, describe, reading_of, trace_recurrent

from designer.training.readout.probe import InspectError, Probe
from designer.training.readout.sequences import leaning as class_leaning
from designer.training.readout.sequences import outputs as sequence_outputs

HIGH, LOW = 0.95, 0.05   # a sigmoid gate above HIGH or below LOW is saturated (tanh: |v| > HIGH)
TOP = 5


@dataclass
class LevelInspection:
    """One level of one recurrent layer over the probe.

    Attributes
    ----------
    name : str
        ``lstm1`` for a single-level layer, ``lstm1/L0``, ``lstm1/L1``... for stacked levels.
    layer, level, kind, engine
        The layer's name, the 0-based level, its type and the engine it trains on.
    gates : dict
        Gate name -> ``(T, H)`` activations (or ``(T, heads)``, per head), the gates its
        cell's reading names (:class:`designer.engines.measure.trace.Reading`).
    c : ndarray or None
        ``(T, H)`` cell state, or ``(T, heads)`` the norm of each head's matrix memory, for
        a cell that keeps one.
    h : ndarray
        ``(T, H)`` hidden state.
    grad_norm, grad_norm_last : ndarray or None
        ``(T,)`` norms of the gradient reaching ``h_t``: of the mean loss over the probe, and
        of the last prediction's loss alone.
    saturation : dict
        Per gate, the fractions of values ``low`` (below 0.05; tanh gates: below -0.95) and
        ``high`` (above 0.95), and ``all`` (either, over every gate of the level).
    n : ndarray or None
        ``(T, H)`` normaliser, for a cell that keeps one: the input gates' running weight,
        c / n the average.
    """

    name: str
    layer: str
    level: int
    kind: str
    engine: str
    gates: dict
    c: np.ndarray | None
    h: np.ndarray
    grad_norm: np.ndarray | None = None
    grad_norm_last: np.ndarray | None = None
    saturation: dict = field(default_factory=dict)
    n: np.ndarray | None = None

    @property
    def hidden(self) -> int:
        return int(self.h.shape[1])

    def quantities(self) -> dict:
        """Every ``(T, H)`` array of the level by name: the gates, then c (and the
        normaliser) and h."""
        out = dict(self.gates)
        if self.c is not None:
            out["c"] = self.c
        if self.n is not None:
            out["normaliser"] = self.n
        out["h"] = self.h
        return out


@dataclass
class Inspection:
    """What a net did on a probe, step by step (see the module's docstring).

    ``surprise[t]`` is -ln p(symbol t | the symbols before it), in nats (NaN at t = 0, which
    nothing predicts); ``top_ids[t]``/``top_p[t]`` are the five symbols the net found likeliest
    at that point. For MNIST they are ``None`` and ``prediction`` holds the digit's top five
    (and a sequence classifier's top five classes at the sequence's end); ``leaning[t]`` are
    a classifier's class probabilities after step t, ``forecast`` a forecaster's forecast in
    the target's units. For these the gradient is that of the one loss at the end
    (``grad_norm_last`` is ``None``).
    """

    probe: Probe
    layers: list
    loss: float
    surprise: np.ndarray | None = None
    top_ids: np.ndarray | None = None
    top_p: np.ndarray | None = None
    prediction: list | None = None
    grad_norm: np.ndarray | None = None
    grad_norm_last: np.ndarray | None = None
    parity: dict = field(default_factory=dict)
    step: int | None = None
    leaning: np.ndarray | None = None
    forecast: np.ndarray | None = None

    @property
    def steps(self) -> int:
        return self.probe.steps

    def level(self, name: str) -> LevelInspection:
        for lv in self.layers:
            if lv.name == name:
                return lv
        raise KeyError(name)


# ------------------------------------------------------------------------------ running --
def inspect(net, probe: Probe, grads: bool = True, parity: bool = False) -> Inspection:
    """Run ``net`` on ``probe`` and read every recurrent step (see the module's docstring).

    Parameters
    ----------
    net
        A built `designer.engines.net.build.Net` with a data layer and a SoftmaxWithLoss layer
        (a forecaster: EuclideanLoss or L1Loss) (on any device; it is put in eval mode for
        the call and back after).
    probe
        The input (:mod:`designer.training.readout.probe`).
    grads
        Also compute the gradient norms per step (a backward pass through the steps).
    parity
        Also compare the two engines per step for every recurrent layer.

    Raises
    ------
    InspectError
        The net has no recurrent layer or no loss to read predictions from.
    """
    if not net.recurrent:
        raise InspectError("the net has no recurrent layer to inspect")
    if not net.losses:
        raise InspectError("the net has no SoftmaxWithLoss layer to read predictions from")
    sequence = probe.kind in ("classes", "series")
    if not sequence and net.losses[0] in net.regressions:
        raise InspectError("the net has no SoftmaxWithLoss layer to read predictions from")
    device = next(net.parameters()).device
    traced: dict = {}
    inputs: dict = {}
    ys: dict = {}

    def run(name, module, x, cont, state):
        y, new_state, steps = trace_recurrent(module, x, cont, state)
        traced[name] = steps
        inputs[name] = (module, x, cont, state)
        ys[name] = (y, bool(describe(module)["batch_first"]))
        return y, new_state

    was_training = net.training
    net.eval()
    try:
        with torch.enable_grad() if grads else torch.no_grad():
            at = net.logits_source()
            out = net(probe.feeds(net.sources[0], device), None, want=(at[0],), recurrent=run)
            if sequence:
                result = sequence_outputs(net, probe, out.blobs[at], _log_probs)
            else:
                result = _predictions(probe, _log_probs(net, out.blobs[at]))
            losses = result.pop("losses")
            result["loss"] = float(losses.detach().mean()) if losses.numel() else math.nan
            norms = _grad_norms(traced, losses) if grads and losses.numel() else {}
        if probe.kind == "classes":
            with torch.no_grad():
                result["leaning"] = class_leaning(net, probe, ys, at, _log_probs)
        if sequence:  # one loss, at the end: the gradient of "the last" is the same
            norms = {k: (v[0], None) for k, v in norms.items()}
    finally:
        net.train(was_training)
    levels = []
    for name, steps in traced.items():
        for lv in steps.levels:
            key = (name, lv.level)
            full = name if len(steps.levels) == 1 else f"{name}/L{lv.level}"
            gates = {g: _numpy(v) for g, v in lv.gates.items()}
            levels.append(LevelInspection(
                full, name, lv.level, steps.kind, steps.engine, gates,
                None if lv.c is None else _numpy(lv.c), _numpy([h[0] for h in lv.h]),
                *norms.get(key, (None, None)),
                saturation=saturation(gates, reading_of(steps.kind).tanh),
                n=None if lv.n is None else _numpy(lv.n)))
    total = [None if any(n[i] is None for n in norms.values()) else
             np.sqrt(sum(n[i] ** 2 for n in norms.values())) for i in (0, 1)] if norms \
        else (None, None)
    report = {}
    if parity:
        for name, (module, x, cont, state) in inputs.items():
            report[name] = layer_parity(module, x, cont, state)
    return Inspection(probe, levels, grad_norm=total[0], grad_norm_last=total[1],
                      parity=report, **result)


def layer_parity(module, x, cont=None, state=None) -> dict:
    """Per-step differences between the engines for this layer's weights and input."""
    info = describe(module)
    if info["batch_first"]:
        x = x.transpose(0, 1)
        cont = None if cont is None else cont.transpose(0, 1)
    weights = {k: v.detach() for k, v in caffe_weights(module).items()}
    with torch.enable_grad():
        return step_parity(info["kind"], weights, x.detach(), cont, state, info["params"])


def _log_probs(net, logits: torch.Tensor) -> torch.Tensor:
    """The logits as (rows, V) log-probabilities, rows in time order for one sequence."""
    axis = getattr(net.layers[net.losses[0]], "axis", -1)
    axis = axis if axis >= 0 else axis + logits.dim()
    x = logits.movedim(axis, -1)
    return F.log_softmax(x.reshape(-1, x.shape[-1]).float(), dim=-1)


def _predictions(probe: Probe, logp: torch.Tensor) -> dict:
    """Losses (kept in the graph), surprise and the top guesses."""
    k = min(TOP, logp.shape[-1])
    if probe.kind == "mnist":
        if probe.target is None:
            raise InspectError("an MNIST probe needs the digit it shows")
        losses = -logp[0, probe.target].reshape(1)
        p, ids = logp[0].detach().exp().topk(k)
        return {"losses": losses, "prediction": [(int(i), float(v)) for i, v in zip(ids, p)]}
    t_ = probe.steps
    if logp.shape[0] != t_:
        raise InspectError(f"the net makes {logp.shape[0]} predictions for {t_} steps; "
                           "inspection reads one prediction per step")
    target = torch.as_tensor(probe.data[1:], dtype=torch.long, device=logp.device)
    losses = -logp[:-1].gather(1, target.view(-1, 1)).view(-1)
    surprise = np.full(t_, np.nan, dtype=np.float64)
    surprise[1:] = losses.detach().double().cpu().numpy()
    p, ids = logp[:-1].detach().exp().topk(k, dim=1)
    top_ids = np.full((t_, k), -1, dtype=np.int64)
    top_p = np.full((t_, k), np.nan, dtype=np.float32)
    top_ids[1:], top_p[1:] = ids.cpu().numpy(), p.cpu().numpy()
    return {"losses": losses, "surprise": surprise, "top_ids": top_ids, "top_p": top_p}


def _grad_norms(traced: dict, losses: torch.Tensor) -> dict:
    """(layer, level) -> (|dL/dh_t| per step for the mean loss, and for the last loss)."""
    blobs, keys = [], []
    for name, steps in traced.items():
        for lv in steps.levels:
            keys.append((name, lv.level, len(lv.h)))
            blobs.extend(lv.h)
    out = {}
    for which, loss in enumerate((losses.mean(), losses[-1])):
        grads = torch.autograd.grad(loss, blobs, retain_graph=which == 0, allow_unused=True)
        i = 0
        for name, level, t_ in keys:
            norms = np.array([0.0 if g is None else float(g.double().norm())
                              for g in grads[i:i + t_]])
            out.setdefault((name, level), []).append(norms)
            i += t_
    return {k: tuple(v) for k, v in out.items()}


def _numpy(values: list) -> np.ndarray:
    """Per-step (N, H) tensors -> (T, H) float32 for the first sequence."""
    return torch.stack([v[0] for v in values]).detach().float().cpu().numpy()


def probe_record(net, probe: Probe | None, step: int) -> dict | None:
    """What the training loop reports at a validation: a ``probe`` record with the gate
    saturation on the probe and, for text, the surprise of every character and the net's top
    guesses there (``None`` without a probe, or when the net cannot be read)."""
    if probe is None:
        return None
    try:
        seen = inspect(net, probe, grads=False)
    except Exception:  # noqa: BLE001 - a net inspection cannot read must not stop training
        return None
    record = {"kind": "probe", "step": step, "loss": seen.loss,
              "gate_saturation": gate_saturation(seen)}
    if probe.kind == "text":
        record.update(text=probe.text, labels=list(probe.labels),
                      surprise=[None if np.isnan(v) else round(float(v), 5)
                                for v in seen.surprise],
                      top=top_guesses(seen))
    return record


def top_guesses(seen: Inspection, digits: int = 5) -> list | None:
    """Per step the top guesses as ``[[symbol, p], ...]`` lists (``[]`` at step 0), or None."""
    if seen.top_ids is None:
        return None
    return [[] if t == 0 else [[int(i), round(float(p), digits)]
                               for i, p in zip(seen.top_ids[t], seen.top_p[t])]
            for t in range(seen.steps)]


def gate_saturation(seen: Inspection, digits: int = 6) -> dict:
    """Per level the saturated fraction of each gate (either end) and of all of them: what a
    validation record keeps, ``{"lstm1/L0": {"i": 0.02, ..., "all": 0.05}}``."""
    return {lv.name: {g: round(s if g == "all" else s["low"] + s["high"], digits)
                      for g, s in lv.saturation.items()}
            for lv in seen.layers if lv.saturation}


def saturation(gates: dict, tanh: tuple = ()) -> dict:
    """Per gate the fractions below LOW (the ``tanh`` gates, in [-1, 1]: below -HIGH) and
    above HIGH, and ``all``: the fraction of every gate value of the level that is saturated
    either way."""
    out, hit, count = {}, 0, 0
    for name, a in gates.items():
        low = float((a < -HIGH).mean()) if name in tanh else float((a < LOW).mean())
        high = float((a > HIGH).mean())
        out[name] = {"low": low, "high": high}
        hit += (low + high) * a.size
        count += a.size
    if count:
        out["all"] = hit / count
    return out
