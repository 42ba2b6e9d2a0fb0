"""The writers of the sequence layers in an exported ``model.py``: Conv1D, BatchNorm and
LayerNorm, SequencePool (and, in :mod:`pytorch_rocket`, MiniRocket). Each takes the
``pytorch_code`` writer, adds the layer's attribute, weights and helpers to it, and returns the
expression of its call; the helpers' text is in :mod:`pytorch_snippets`."""
from __future__ import annotations


def conv1d(writer, name, var, layer, module, p, x, comment) -> str:
    """Conv1D as ``nn.Conv1d`` between the transposes of ``conv_over_time``."""
    c = module.conv
    args = [str(c.in_channels), str(c.out_channels), str(c.kernel_size[0])]
    args += [f"{k}={getattr(c, k)[0]}" for k in ("stride", "dilation")
             if getattr(c, k)[0] != 1]
    args += [f"groups={c.groups}"] * (c.groups != 1) + ["bias=False"] * (c.bias is None)
    writer.init += [f"{comment}: {c.in_channels} -> {c.out_channels} channels, filters of "
                    f"{c.kernel_size[0]} steps, padding {p['padding']} {module.pads}",
                    f"self.{var} = nn.Conv1d({', '.join(args)})"]
    writer.weights[f"{var}.weight"] = c.weight
    if c.bias is not None:
        writer.weights[f"{var}.bias"] = c.bias
    writer.helpers.add("conv_over_time")
    return (f"conv_over_time(self.{var}, {x}, {writer._in(name, 1)}, {module.pads!r}, "
            f"batch_first={p['batch_first']})")


def norm(writer, name, var, layer, module, p, x, comment) -> str:
    """LayerNorm as ``nn.LayerNorm``; BatchNorm as ``nn.BatchNorm1d`` through ``batch_norm``."""
    affine = module.weight is not None
    if layer.type == "LayerNorm":
        c = module.normalized_shape[0]
        writer.init += [f"{comment}: each step's {c} channels to mean 0, variance 1"
                        + (", then scaled and shifted" if affine else ""),
                        f"self.{var} = nn.LayerNorm({c}, eps={module.eps!r}"
                        + ("" if affine else ", elementwise_affine=False") + ")"]
        expr = f"self.{var}({x})"
    else:
        c = module.num_features
        writer.init += [f"{comment}: {c} channels, by the batch's statistics in train(), "
                        "the running ones in eval()",
                        f"self.{var} = nn.BatchNorm1d({c}, eps={module.eps!r}, "
                        f"momentum={module.momentum!r}" + ("" if affine else ", affine=False")
                        + ")"]
        writer.helpers.add("batch_norm")
        expr = (f"batch_norm(self.{var}, {x}, {writer._in(name, 1)}, "
                f"batch_first={p['batch_first']})")
    for key, value in module.state_dict().items():
        writer.weights[f"{var}.{key}"] = value
    return expr


def sequence_pool(writer, name, var, p, x) -> str:
    """SequencePool through ``sequence_pool``, with its attention scorer where it has one."""
    writer.helpers.add("sequence_pool")
    score = writer.net.layers[name].score
    if score is not None:  # attention: the layers that score each step
        parts = ["nn.Tanh()" if not hasattr(m, "weight") else
                 f"nn.Linear({m.in_features}, {m.out_features}"
                 + (", bias=False)" if m.bias is None else ")") for m in score]
        writer.init += [f"# {name} (SequencePool): scores each step for the attention",
                        f"self.{var} = nn.Sequential({', '.join(parts)})"]
        for key, value in score.state_dict().items():
            writer.weights[f"{var}.{key}"] = value
    return (f"sequence_pool({x}, {writer._in(name, 1)}, {p['method']!r}, "
            f"batch_first={p['batch_first']}"
            + (f", score=self.{var})" if score is not None else ")"))
