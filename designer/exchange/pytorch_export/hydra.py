"""The ``Hydra`` module an exported ``model.py`` holds for its Hydra layers.

torch.nn has no Hydra, so the export writes one: the same buffers as the designer's layer
(:mod:`designer.engines.net.hydra`: ``weights``, ``mix``, ``dilations``, ``length``,
``fitted``), loaded from ``weights.safetensors``, and the same forward: per dilation and view
the groups' channel sums, one grouped ``conv1d`` in full fp32, then, for each group at each
step, the response of the kernel that responds most added to its feature and one to the count
of the kernel that responds least. The fitting stays in rnn-designer: a layer that has not
been fitted is refused before this is written (``ModelSource.check_fitted``).
"""
from __future__ import annotations

MODULE = '''

class Hydra(nn.Module):
    """Hydra's features (Dempster, Schmidt and Webb, 2023): x, (T, N, C) or (N, T, C) when
    batch-first, to (N, F) features. Random kernels of 9 taps in groups of ``kernels``, over
    the series and over its first difference at each dilation, read sums of a few channels
    (mix); at each step the kernel of a group that responds most adds its response to its
    feature, the one that responds least adds one to its count (the first kernel where they
    tie). Each feature is the square root of its positive part; zeros fill the rest of F. A
    sequence is read zero-padded to the steps it was fitted on (length), its steps from its
    length on zeroed. Nothing here is learned: rnn-designer fitted the buffers to training
    data, and load() reads them."""

    def __init__(self, channels, num_features, kernels, max_dilations, batch_first=False):
        super().__init__()
        self.num_features, self.kernels, self.batch_first = num_features, kernels, batch_first
        rows = num_features // (2 * kernels)
        self.register_buffer("weights", torch.zeros(rows * kernels, 9))
        self.register_buffer("mix", torch.zeros(rows, channels))
        self.register_buffer("dilations", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("length", torch.zeros((), dtype=torch.int64))
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))

    @staticmethod
    def compete(z):
        """(N, g, k, T) -> the sums of each kernel's responses where it responds most in its
        group, the counts of the steps where it responds least; each (N, g, k)."""
        top, at_top = z.max(2)
        low, at_low = z.min(2)
        most = z.new_zeros(z.shape[:3]).scatter_add_(2, at_top, top)
        least = z.new_zeros(z.shape[:3]).scatter_add_(2, at_low, torch.ones_like(low))
        return most, least

    def forward(self, x, lengths=None):
        x = fitted_series(x, lengths, int(self.length), self.batch_first)  # (N, C, T)
        n, k = x.shape[0], self.kernels
        used = [d for d in self.dilations.tolist() if d > 0]
        g = max(1, self.num_features // (len(used) * 2 * 2 * k))  # groups a view and dilation
        views = (x, torch.diff(x, dim=2) if x.shape[2] > 1 else torch.zeros_like(x))
        out, row = [], 0
        for d in used:
            for v in views:
                summed = torch.einsum("gc,nct->ngt", self.mix[row:row + g], v)
                w = self.weights[row * k:(row + g) * k].unsqueeze(1)  # (g k, 1, 9)
                with torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled,
                                                allow_tf32=False):  # full fp32
                    z = torch.nn.functional.conv1d(summed, w, padding=4 * d, dilation=d,
                                                   groups=g)
                out.extend(self.compete(z.view(n, g, k, -1)))
                row += g
        made = torch.cat([o.reshape(n, -1) for o in out], 1).clamp(min=0).sqrt()
        return torch.nn.functional.pad(made, (0, self.num_features - made.shape[1]))
'''


def hydra_source() -> str:
    """The helper's text: the ``Hydra`` class."""
    return MODULE


def hydra(writer, name, var, layer, module, p, x, comment) -> str:
    """Write a Hydra layer into ``writer`` (a ``pytorch_code`` writer): its attribute and
    buffers; returns the expression of its call."""
    writer.helpers |= {"fitted_series", "hydra"}
    used, g = module.plan()
    about = (f"{comment}: {module.channels} channels -> {module.num_features} features, "
             f"{g} groups of {module.kernels} kernels a view at dilations "
             f"{', '.join(str(d) for d in used)}; fitted by rnn-designer, nothing learned")
    first = ", batch_first=True" if p["batch_first"] else ""
    make = (f"Hydra({module.channels}, {module.num_features}, {module.kernels}, "
            f"{module.max_dilations}{first})")
    writer.init += [about, f"self.{var} = {make}"]
    for key, value in module.state_dict().items():
        writer.weights[f"{var}.{key}"] = value
    return f"self.{var}({x}, {writer._in(name, 1)})"
