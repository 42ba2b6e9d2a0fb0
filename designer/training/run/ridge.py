"""A classifier's last InnerProduct solved in closed form: ridge regression of the classes on the
layer's inputs, its penalty chosen by leave-one-out, as scikit-learn's ``RidgeClassifierCV``
does behind aeon's ``MiniRocketClassifier``, the same predictions from the same features.

>>> head = solve(features, labels, classes=3)      # (N, F) float, (N,) class ids
>>> logits = features @ head.weight.T + head.bias   # (N, 3)

As that classifier: each input scaled by its deviation over the sequences (never centred
first: ``StandardScaler(with_mean=False)``), the classes coded as +1 for the class and -1 for
the others, an intercept that is not penalised, and of ``ALPHAS`` the penalty whose
leave-one-out squared error is the lowest (the first of equals). Every sequence's
leave-one-out error comes from one eigendecomposition (of the N x N Gram matrix when there are
fewer sequences than inputs, else of the F x F covariance), so all ten penalties cost about one
fit. On top, a temperature that `softmax` turns into calibrated probabilities: the one that
gives the leave-one-out scores the lowest cross-entropy. It scales every score alike, so the
predicted classes stay those of the ridge; the validation loss and an ensemble's averaged
probabilities mean what they mean for a net trained by gradient.

Everything is computed in float64 on the inputs' device, and the weights returned act on the
inputs as they come (the scaling folded in).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

ALPHAS = tuple(float(10.0 ** (-3 + 6 * i / 9)) for i in range(10))  # logspace(-3, 3, 10)
TEMPERATURES = tuple(float(10.0 ** (-2 + 4 * i / 80)) for i in range(81))  # 0.01 to 100
MOST = 12_000  # the eigendecomposition's side (sequences or inputs, the smaller) at most


class RidgeError(ValueError):
    """The inputs cannot be solved for; ``str()`` says why in one sentence."""


@dataclass
class Ridge:
    """A solved head: ``logits = x @ weight.T + bias`` on the inputs as they come."""

    weight: torch.Tensor      # (K, F)
    bias: torch.Tensor        # (K,)
    alpha: float              # the penalty leave-one-out chose
    loo_accuracy: float       # of the sequences, each predicted by the others
    loo_error: float          # the mean squared leave-one-out error at ``alpha``
    temperature: float        # folded into weight and bias

    def describe(self, sequences: int) -> str:
        """``alpha 10, leave-one-out accuracy 93.1% over 54 sequences``."""
        return (f"alpha {self.alpha:.3g}, leave-one-out accuracy {self.loo_accuracy:.1%} over "
                f"{sequences:,} sequences")


def solve(x: torch.Tensor, labels: torch.Tensor, classes: int,
          alphas: tuple = ALPHAS) -> Ridge:
    """The ridge head of ``classes`` outputs over inputs ``x`` (N, F) with class ids
    ``labels`` (N,); see the module doc. Raises `RidgeError`."""
    n, f = x.shape
    if n < 2:
        raise RidgeError(f"a closed-form head needs at least 2 training sequences, and there "
                         f"{'is' if n == 1 else 'are'} {n}")
    if min(n, f) > MOST:
        raise RidgeError(f"solving {f:,} inputs over {n:,} sequences in closed form would "
                         f"take an eigendecomposition of {min(n, f):,} x {min(n, f):,}; "
                         "train this head by gradient instead")
    x = x.detach().to(torch.float64)
    if not torch.isfinite(x).all():
        raise RidgeError("the inputs of the closed-form head hold values that are not finite "
                         "numbers")
    labels = labels.detach().to(x.device).long()
    y = torch.full((n, classes), -1.0, dtype=torch.float64, device=x.device)
    y[torch.arange(n, device=x.device), labels] = 1.0
    scale = _scale(x)
    xs = x / scale
    x_mean, y_mean = xs.mean(0), y.mean(0)
    xc, yc = xs - x_mean, y - y_mean
    loo = (_gram if n <= f else _covariance)(xc, yc)
    best = None
    for alpha in alphas:
        looe, coef = loo(alpha)
        error = float((looe ** 2).mean())
        if best is None or error < best[0]:
            best = (error, alpha, looe, coef)
    error, alpha, looe, coef = best
    scores = y - looe  # each sequence's scores from a fit without it
    accuracy = float((scores.argmax(1) == labels).double().mean())
    temperature = _temperature(scores, labels)
    weight = (coef / scale.unsqueeze(1)).T * temperature       # (K, F)
    bias = (y_mean - x_mean @ coef) * temperature
    return Ridge(weight, bias, float(alpha), accuracy, error, temperature)


def _scale(x: torch.Tensor) -> torch.Tensor:
    """Each input's deviation, 1 for an input that is constant (as StandardScaler finds it)."""
    n = x.shape[0]
    mean = x.mean(0)
    var = ((x - mean) ** 2).mean(0)
    eps = torch.finfo(torch.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scale = var.sqrt()
    return torch.where(constant | (scale < 10 * eps), torch.ones_like(scale), scale)


def _gram(xc: torch.Tensor, yc: torch.Tensor):
    """Leave-one-out errors and coefficients for each penalty, from the eigenvectors of the
    Gram matrix ``xc xc'`` (N <= F)."""
    eigvals, q = torch.linalg.eigh(xc @ xc.T)
    qt_y = q.T @ yc
    qt_1 = q.T @ torch.ones(xc.shape[0], dtype=xc.dtype, device=xc.device)

    def at(alpha: float):
        d = 1.0 / (eigvals + alpha)
        c = q @ (d.unsqueeze(1) * qt_y)
        diag = (q ** 2 * d).sum(1) - (q @ (d * qt_1)) / xc.shape[0]
        return c / diag.unsqueeze(1), xc.T @ c
    return at


def _covariance(xc: torch.Tensor, yc: torch.Tensor):
    """The same from the eigenvectors of the covariance ``xc' xc`` (N > F)."""
    eigvals, v = torch.linalg.eigh(xc.T @ xc)
    xt_y = xc.T @ yc

    def at(alpha: float):
        h_inv = (v * (1.0 / (eigvals + alpha))) @ v.T
        coef = h_inv @ xt_y
        c = yc - xc @ coef
        diag = 1 - ((xc @ h_inv) * xc).sum(1) - 1.0 / xc.shape[0]
        return c / diag.unsqueeze(1), coef
    return at


def _temperature(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Of `TEMPERATURES`, the one whose softmax of ``scores`` gives ``labels`` the lowest
    cross-entropy."""
    best, chosen = None, 1.0
    for t in TEMPERATURES:
        loss = float(torch.nn.functional.cross_entropy(scores * t, labels))
        if best is None or loss < best:
            best, chosen = loss, t
    return chosen
