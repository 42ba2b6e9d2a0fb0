"""The ``MiniRocket`` module an exported ``model.py`` holds for its MiniRocket layers.

torch.nn has no MiniRocket, so the export writes one: the same buffers as the designer's
layer (:mod:`designer.engines.net.rocket`: ``dilations``, ``counts``, ``masks``, ``biases``,
``length``, ``fitted``, and the 84 kernels, not saved), loaded from ``weights.safetensors``, and the same
forward: per dilation one ``conv1d`` in full fp32, then, for each kernel, the share of the
steps that count whose response exceeds each bias (counted from the sorted responses, which
gives the counts the designer's comparisons give). The fitting stays in rnn-designer: a layer
that has not been fitted is refused before this is written (``ModelSource.check_fitted``).
"""
from __future__ import annotations

MODULE = '''

class MiniRocket(nn.Module):
    """MiniRocket's features (Dempster, Schmidt and Webb, 2021): x, (T, N, C) or (N, T, C)
    when batch-first, to (N, F) proportions. At each dilation d, 84 kernels of 9 taps (-1, and
    2 at three of them) sum over their channels (masks); each feature is the share of the
    steps that count at which one kernel's response exceeds one bias. A sequence is read
    zero-padded to the steps it was fitted on (length), its steps from its length on zeroed;
    every step counts, and for every other kernel only those whose window lies inside.
    Nothing here is learned: rnn-designer
    fitted the buffers to training data, and load() reads them."""

    def __init__(self, channels, num_features, max_dilations, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        kernels = -torch.ones(84, 9)
        twos = [(a, b, c) for a in range(9) for b in range(a + 1, 9) for c in range(b + 1, 9)]
        for k, taps in enumerate(twos):
            kernels[k, list(taps)] = 2.0
        self.register_buffer("kernels", kernels, persistent=False)
        self.register_buffer("dilations", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("counts", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("masks", torch.zeros(max_dilations, 84, channels))
        self.register_buffer("biases", torch.zeros(num_features))
        self.register_buffer("length", torch.zeros((), dtype=torch.int64))
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))

    def forward(self, x, lengths=None):
        x = fitted_series(x, lengths, int(self.length), self.batch_first)  # (N, C, T)
        n = x.shape[0]
        steps = x.shape[2]
        at = torch.arange(steps, device=x.device)
        plan = [(d, per) for d, per in zip(self.dilations.tolist(), self.counts.tolist())
                if per > 0]
        out, start = [], 0
        for j, (d, per) in enumerate(plan):
            w = self.kernels.unsqueeze(1) * self.masks[j].unsqueeze(2)  # (84, C, 9)
            with torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled,
                                            allow_tf32=False):  # no rounding across a bias
                c = torch.nn.functional.conv1d(x, w, padding=4 * d, dilation=d)
            inner = (at >= 4 * d) & (at < steps - 4 * d)
            inside = (torch.arange(84, device=x.device) + j) % 2 == 1
            keep = (inner | ~inside.unsqueeze(1)).unsqueeze(0)  # (1, 84, T)
            c = c.masked_fill(~keep, float("-inf")).sort(2).values
            b = self.biases[start:start + 84 * per].view(1, 84, per).expand(n, -1, -1)
            below = torch.searchsorted(c, b.contiguous(), right=True)  # steps <= each bias
            total = keep.sum(2, keepdim=True).clamp(min=1)
            out.append(((steps - below).float() / total).reshape(n, -1))
            start += 84 * per
        return torch.cat(out, 1)
'''


FITTED_SERIES = '''

def fitted_series(x, lengths, length, batch_first):
    """x, (T, N, C) or (N, T, C) when batch-first, as MiniRocket and Hydra read it: (N, C, T)
    in fp32, the steps from each sequence's length on zeroed, and zero steps after the end up
    to the ``length`` it was fitted on."""
    x = (x.permute(0, 2, 1) if batch_first else x.permute(1, 2, 0)).float()
    if lengths is not None:
        valid = torch.arange(x.shape[2], device=x.device) < \\
            lengths.to(x.device).long().unsqueeze(1)
        x = torch.where(valid.unsqueeze(1), x, 0.0)
    if x.shape[2] < length:
        x = torch.nn.functional.pad(x, (0, length - x.shape[2]))
    return x
'''


def rocket_source() -> str:
    """The helper's text: the ``MiniRocket`` class."""
    return MODULE


def mini_rocket(writer, name, var, layer, module, p, x, comment) -> str:
    """Write a MiniRocket layer into ``writer`` (a ``pytorch_code`` writer): its attribute and
    buffers; returns the expression of its call."""
    writer.helpers |= {"fitted_series", "mini_rocket"}
    used = ", ".join(str(d) for d, _ in module.plan())
    about = (f"{comment}: {module.channels} channels -> {module.num_features} features, at "
             f"dilations {used}; fitted by rnn-designer, nothing learned")
    first = ", batch_first=True" if p["batch_first"] else ""
    make = f"MiniRocket({module.channels}, {module.num_features}, {module.max_dilations}{first})"
    writer.init += [about, f"self.{var} = {make}"]
    for key, value in module.state_dict().items():
        writer.weights[f"{var}.{key}"] = value
    return f"self.{var}({x}, {writer._in(name, 1)})"
