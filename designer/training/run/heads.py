"""The InnerProducts of a run solved in closed form (``solve: ridge``; the math in `ridge`).

A run solves each one over its inputs on every training sequence, the net in evaluation mode:
for each validation and each checkpoint (so what is validated, kept as best and scored is the
solved head), once a step. While the net trains by gradient the layer trains with it, the head
the features are learned under; the solved weights stand in for it only while the net is
validated or saved, and the gradient's own weights are kept in the checkpoint's training state
so that a resumed run goes on from them. A net with nothing else to learn (a frozen MiniRocket
below the head) takes no gradient steps at all: the solve is its training (`only`).
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import torch

from designer.training.run.errors import TrainingError
from designer.training.run.ridge import RidgeError, solve
from designer.training.run.validation import to_device

CLASS_LOSS = "SoftmaxWithLoss"


class ClosedFormHeads:
    """The heads of ``net`` solved in closed form over ``source``'s training split."""

    def __init__(self, graph, net, source, data_layer: str, device, world) -> None:
        self.net, self.source, self.data_layer, self.device = net, source, data_layer, device
        self.names = [n for n in net.order if net.types[n] == "InnerProduct"
                      and graph.layer(n).get("solve") == "ridge"]
        self.solved: dict[str, tuple] = {}   # name -> (weight, bias) of the latest solve
        self.found: dict[str, dict] = {}     # name -> what the latest solve chose
        self.solved_at: int | None = None
        self.kept: dict[str, tuple] = {}     # the gradient's weights while the solved stand in
        self.depth = 0
        if not self.names:
            self.only = False
            return
        _check(graph, self.names, source, world)
        heads = {id(p) for n in self.names for p in net.layers[n].parameters()}
        self.only = not any(id(p) not in heads for p in net.parameters())

    def __bool__(self) -> bool:
        return bool(self.names)

    # --------------------------------------------------------------------- solving --
    def solve(self, step: int) -> list[str]:
        """Solve every head over the training sequences as the net reads them now (the
        solved weights then stand in while `scored`); returns a note a head the first time
        (`summary` says what each later solve chose)."""
        if not self.names or self.solved_at == step:
            return []
        first = self.solved_at is None
        start = time.perf_counter()
        inputs = {n: self.net.wiring[n][0] for n in self.names}
        want = tuple(sorted({w[0] for w in inputs.values()}))
        gathered = {n: [] for n in self.names}
        labels = []
        was = self.net.training
        self.net.eval()
        try:
            with torch.no_grad():
                for chunk in self.source.eval_chunks(None, "train"):
                    batch = self.source.batch(chunk)
                    feeds = to_device(batch, self.data_layer, self.device)
                    out = self.net(feeds, want=want)
                    for n, at in inputs.items():
                        gathered[n].append(out.blobs[at].reshape(len(chunk), -1).float())
                    labels.append(batch["label"])
        finally:
            self.net.train(was)
        y = torch.cat(labels).to(self.device)
        notes = []
        for n in self.names:
            x = torch.cat(gathered[n])
            linear = self.net.layers[n].linear
            try:
                head = solve(x, y, linear.out_features)
            except RidgeError as e:
                raise TrainingError(f"{n} cannot be solved in closed form: {e}", 2) from None
            self.solved[n] = (head.weight.to(linear.weight.dtype),
                              head.bias.to(linear.bias.dtype))
            self.found[n] = {"alpha": head.alpha, "loo_accuracy": head.loo_accuracy,
                             "sequences": int(len(y)), "inputs": int(x.shape[1]),
                             "temperature": head.temperature}
            notes.append(f"{n} solved in closed form (ridge) over {x.shape[1]:,} inputs of "
                         f"{len(y):,} training sequences: {head.describe(len(y))} "
                         f"({time.perf_counter() - start:.1f} s)")
        self.solved_at = step
        if self.only:  # nothing trains by gradient: the solved heads are the net's for good
            self._put(self.solved)
        return notes if first else []

    def summary(self) -> dict:
        """What the latest solve chose, a head: penalty, leave-one-out accuracy, sequences
        (a checkpoint's meta keeps it as ``closed_form``)."""
        return {n: dict(v) for n, v in self.found.items()}

    @contextmanager
    def scored(self, step: int):
        """The solved heads stand in for the gradient's while the block runs (solving them
        first, once a step); nested blocks share one swap."""
        if not self.names or self.only:
            if self.only:
                self.solve(step)
            yield
            return
        if self.depth == 0:
            self.solve(step)
            self.kept = {n: (self.net.layers[n].linear.weight.detach().clone(),
                             self.net.layers[n].linear.bias.detach().clone())
                         for n in self.names}
            self._put(self.solved)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                self._put(self.kept)
                self.kept = {}

    def gradient_state(self) -> dict:
        """The gradient's own head weights, for a checkpoint's training state (while they
        are swapped out, the kept ones)."""
        if not self.names or self.only:
            return {}
        if self.kept:
            return {f"{n}.{k}": t.cpu() for n, (w, b) in self.kept.items()
                    for k, t in (("weight", w), ("bias", b))}
        return {f"{n}.{k}": getattr(self.net.layers[n].linear, k).detach().cpu().clone()
                for n in self.names for k in ("weight", "bias")}

    def restore_gradient(self, state: dict | None) -> None:
        """Put back the gradient's head weights a checkpoint kept (a resumed run)."""
        for n in self.names:
            w, b = (state or {}).get(f"{n}.weight"), (state or {}).get(f"{n}.bias")
            if w is not None and b is not None and not self.only:
                self._put({n: (w, b)})

    def _put(self, weights: dict) -> None:
        with torch.no_grad():
            for n, (w, b) in weights.items():
                linear = self.net.layers[n].linear
                linear.weight.copy_(w.to(linear.weight.device))
                linear.bias.copy_(b.to(linear.bias.device))


def _check(graph, names: list[str], source, world) -> None:
    """Refuse, in one sentence, a closed-form head the run cannot solve."""
    name = names[0]
    if getattr(source, "kind", None) != "classes":
        raise TrainingError(f"{name} is solved in closed form over labelled sequences, but "
                            f"the data layer reads {source.kind} data; set its solve to "
                            "gradient", 2)
    for n in names:
        if not any(graph.layer(k.dst).type == CLASS_LOSS for k in graph.links_out_of(n)):
            raise TrainingError(f"{n} is solved in closed form for the classes of a "
                                f"{CLASS_LOSS}, and it feeds none; connect its output to the "
                                "loss or set its solve to gradient", 2)
    if world.size > 1:
        raise TrainingError(f"{name} is solved in closed form in one process; train without "
                            "--nproc", 2)
