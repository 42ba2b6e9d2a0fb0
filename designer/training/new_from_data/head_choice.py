"""Which head ``init`` puts over MiniRocket's features, by cross-validation on the training
sequences: the InnerProduct solved in closed form (ridge, `designer.training.run.ridge`) or
BatchNorm -> InnerProduct learned by Adam (the recipe of `designs`).

The features of every training sequence (train and validation: the test split is never
looked at) are computed once, by the MiniRocket layer the project draws; the sequences are
dealt into folds per class, as a search deals them; each fold is predicted by both heads
learned on the others. The head with the higher accuracy over the held-out sequences wins;
on a tie, the one with the lower cross-entropy, each head's scores taken at the temperature
that suits them best (Adam's after 2,000 steps are far too confident, the closed form's are
calibrated already: compared raw, the closed form would win every tie on calibration alone),
and the closed form wins what is left (it takes no steps). A set with a class of fewer than
``FEWEST_TO_COMPARE`` training sequences gets the closed form without asking, MiniRocket's own
head: its folds would train on one or two sequences of that class and tell the heads apart by
a sequence or two (measured on UCR sets cut to 2 a class, RESULTS.md). Sets of
``CROSS_VALIDATE_BELOW`` training sequences or more keep Adam's head without asking: there a
held-out tenth costs little and the closed form's eigendecomposition grows with the square of
the sequences.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from designer.engines.net.hydra import Hydra
from designer.engines.net.layers import difference
from designer.engines.net.rocket import MiniRocket

from designer.graph.layers.hydra import HYDRA
from designer.graph.layers.sequences import FEWEST_TO_COMPARE
from designer.training.data.classes import deal_folds
from designer.training.run.ridge import TEMPERATURES, RidgeError, solve
from designer.training.new_from_data import designs

CROSS_VALIDATE_BELOW = 500
FOLDS = 3
FIT_SEQUENCES = 16       # MiniRocket's biases come from a batch of this many, as in a run
CHUNK = 64               # sequences a feature pass reads at once


@dataclass
class Choice:
    """The head chosen and what each head scored over the folds."""

    head: str                      # "ridge" or "adam"
    folds: int = 0
    scores: dict | None = None     # head -> (accuracy, cross-entropy)
    asked: bool = False            # the user named the head: nothing was cross-validated

    def words(self) -> str:
        """One line for ``init``'s report."""
        said = {"ridge": "the InnerProduct solved in closed form (ridge)",
                "adam": "BatchNorm -> InnerProduct learned by Adam"}[self.head]
        if self.asked:
            return f"{said}, as asked"
        if not self.scores and self.head == "ridge":
            return (f"{said}: a class has fewer than {FEWEST_TO_COMPARE} training sequences, too "
                    "few for folds to tell the heads apart")
        if not self.scores:
            return ("Adam's head (its training set is large enough not to cross-validate "
                    "the closed form)")
        (a_acc, a_loss), (r_acc, r_loss) = self.scores["adam"], self.scores["ridge"]
        return (f"{said}: over {self.folds} folds of the training sequences, ridge "
                f"{r_acc:.1%} ({r_loss:.3f} nats) against Adam {a_acc:.1%} "
                f"({a_loss:.3f} nats; each at its best temperature)")


def choose_head(source, seed: int = 0) -> Choice:
    """Cross-validate the two heads over MiniRocket's features of ``source``'s training and
    validation sequences (see the module doc), on one thread: the heads' steps are small, and
    on a busy machine more threads wait on each other (measured: 6 ms a step on one of two
    busy cores, 180 ms on both)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _choose(source, seed)
    finally:
        torch.set_num_threads(threads)


def _choose(source, seed: int) -> Choice:
    members = np.concatenate([source.parts["train"], source.parts["val"]])
    if len(members) >= CROSS_VALIDATE_BELOW:
        return Choice("adam")
    labels = source.label_ids[members]
    if np.bincount(labels, minlength=source.num_classes).min() < FEWEST_TO_COMPARE:
        return Choice("ridge")
    folds = min(FOLDS, len(members))
    dealt = deal_folds(list(labels), list(range(len(members))), folds)
    if folds < 2 or any(not d for d in dealt):
        return Choice("ridge")
    x = _features(source, members, seed)
    y = torch.from_numpy(labels)
    splits = []
    for held in dealt:
        test = np.asarray(sorted(held))
        train = np.setdiff1d(np.arange(len(members)), test)
        if len(np.unique(labels[train])) >= 2:
            splits.append((train, test))
    if not splits:
        return Choice("ridge")
    held = {"ridge": [], "adam": []}  # each head's logits of every held-out sequence
    adams = _adam([x[t] for t, _ in splits], [y[t] for t, _ in splits], source.num_classes,
                  seed)
    for (train, test), adam in zip(splits, adams):
        ridge = _ridge(x[train], y[train], source.num_classes)
        for head, predict in (("ridge", ridge), ("adam", adam)):
            held[head].append(predict(x[test]).double())
    truth = torch.cat([y[test] for _, test in splits])
    mean = {h: _scores(torch.cat(logits), truth) for h, logits in held.items()}
    (r_acc, r_loss), (a_acc, a_loss) = mean["ridge"], mean["adam"]
    ridge = r_acc > a_acc or (r_acc == a_acc and r_loss <= a_loss)
    return Choice("ridge" if ridge else "adam", len(splits), mean)


def _scores(logits: torch.Tensor, truth: torch.Tensor) -> tuple[float, float]:
    """Accuracy, and the cross-entropy at the temperature that suits the logits best: how
    far ahead each head ranks the right class, whatever the scale of its scores."""
    accuracy = float((logits.argmax(1) == truth).double().mean())
    loss = min(float(F.cross_entropy(logits * t, truth)) for t in TEMPERATURES)
    return accuracy, loss


def _features(source, members: np.ndarray, seed: int) -> torch.Tensor:
    """The joined features (N, 2 x 9,996 + 8,192) of ``members`` that `designs` draws:
    MiniRocket's of the series and of its first difference, and Hydra's, fitted from a batch
    of them, as a run fits them from its first training batch."""
    rng = np.random.default_rng(seed)
    channels = source._padded.shape[2]
    same = lambda x, n: x  # noqa: E731
    views = [(MiniRocket(channels, designs.ROCKET_FEATURES, 32, 0, False), same),
             (MiniRocket(channels, designs.ROCKET_FEATURES, 32, 0, False),
              lambda x, n: difference(x, n, False)),
             (Hydra(channels, **HYDRA.defaults()), same)]
    first = source.batch(np.sort(rng.permutation(members)[:FIT_SEQUENCES]))
    for layer, view in views:
        layer.fit(view(first["data"], first["lengths"]), first["lengths"])
    out = []
    with torch.no_grad():
        for i in range(0, len(members), CHUNK):
            batch = source.batch(members[i:i + CHUNK])
            x, n = batch["data"], batch["lengths"]
            out.append(torch.cat([layer(view(x, n), n) for layer, view in views], 1))
    return torch.cat(out)


def _ridge(x: torch.Tensor, y: torch.Tensor, classes: int):
    try:
        head = solve(x, y, classes)
    except RidgeError:
        return lambda z: torch.zeros(len(z), classes)
    w, b = head.weight.float(), head.bias.float()
    return lambda z: z @ w.T + b


def _adam(xs: list, ys: list, classes: int, seed: int) -> list:
    """BatchNorm -> InnerProduct (weights from zero) learned by Adam as `designs` draws and
    ``init`` sets its solver (``ROCKET_STEPS`` steps of ``ROCKET_BATCH`` at ``ROCKET_LR``,
    each model's gradient clipped to 5), one model a fold (``xs[i]``, ``ys[i]``), all of them
    in the same tensors: each step is one set of small operations for every fold. Returns a
    predictor a fold."""
    k, f = len(xs), xs[0].shape[1]
    torch.manual_seed(seed)
    gamma = torch.ones(k, 1, f, requires_grad=True)
    beta = torch.zeros(k, 1, f, requires_grad=True)
    weight = torch.zeros(k, f, classes, requires_grad=True)
    bias = torch.zeros(k, 1, classes, requires_grad=True)
    params = [gamma, beta, weight, bias]
    running = [torch.zeros(k, 1, f), torch.ones(k, 1, f)]
    opt = torch.optim.Adam(params, lr=designs.ROCKET_LR)
    batch = min(designs.ROCKET_BATCH, min(len(x) for x in xs))
    gens = [torch.Generator().manual_seed(seed + i) for i in range(k)]
    orders = [torch.randperm(len(x), generator=g) for x, g in zip(xs, gens)]
    at = [0] * k
    for _ in range(designs.ROCKET_STEPS):
        picks = []
        for i in range(k):
            if at[i] + batch > len(xs[i]):
                orders[i], at[i] = torch.randperm(len(xs[i]), generator=gens[i]), 0
            picks.append(orders[i][at[i]:at[i] + batch])
            at[i] += batch
        xb = torch.stack([x[p] for x, p in zip(xs, picks)])          # (k, b, f)
        yb = torch.stack([y[p] for y, p in zip(ys, picks)])          # (k, b)
        mean = xb.mean(1, keepdim=True)
        centred = xb - mean
        var = centred.square().mean(1, keepdim=True)  # (torch.var over axis 1: 5x slower)
        with torch.no_grad():  # BatchNorm's running statistics, momentum 0.1
            running[0].mul_(0.9).add_(0.1 * mean)
            running[1].mul_(0.9).add_(0.1 * var * batch / max(batch - 1, 1))
        logits = (centred * torch.rsqrt(var + 1e-5) * gamma + beta) @ weight + bias
        loss = F.cross_entropy(logits.reshape(-1, classes), yb.reshape(-1)) * k
        opt.zero_grad(set_to_none=True)
        loss.backward()
        with torch.no_grad():  # each fold's model clipped by its own gradient norm
            norms = sum(p.grad.reshape(k, -1).pow(2).sum(1) for p in params).sqrt()
            scale = (5.0 / (norms + 1e-6)).clamp(max=1.0)
            for p in params:
                p.grad.mul_(scale.view(k, *([1] * (p.dim() - 1))))
        opt.step()

    def predictor(i: int):
        def predict(z: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                norm = (z - running[0][i]) / torch.sqrt(running[1][i] + 1e-5)
                return (norm * gamma[i] + beta[i]) @ weight[i] + bias[i]
        return predict
    return [predictor(i) for i in range(k)]
