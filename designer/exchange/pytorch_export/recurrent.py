"""What a cell's PyTorch writer shares: a recurrent layer written as an attribute of the class
its cell copies into ``model.py``, with its weights, and the expression of its call."""
from __future__ import annotations


def write_cell_layer(writer, name: str, var: str, module, p: dict, x: str, comment: str, *,
                     cls: str, helper: str, fused: str, engine: str = "SCAN",
                     first: tuple = ()) -> str:
    """Write the layer ``name`` into ``writer`` (a ``pytorch_code`` writer) as
    ``self.<var> = <cls>(*first, E, H, ...)``: ``helper`` names the text that defines ``cls``,
    ``fused`` what the cell's own engine, ``engine``, is called (``"the parallel scan"``).
    Returns the expression of its call."""
    e, h, levels = module.input_size, module.hidden, module.levels
    args = [*first, str(e), str(h)]
    if levels > 1:
        args.append(f"num_layers={levels}")
    if levels > 1 and p.get("dropout_ratio", 0.0):
        args.append(f"dropout={p['dropout_ratio']!r}")
    args += ["batch_first=True"] * bool(p.get("batch_first"))
    args += ["bidirectional=True"] * bool(p.get("bidirectional"))
    how = (f"{fused}, which {cls} runs" if writer.net.engines.get(name) == engine else
           f"the unrolled Caffe engine, whose tensors {cls} holds; its scan computes the same")
    writer.helpers.add(helper)
    writer.init += [f"{comment}: {e} -> {h}" + (f", {levels} stacked layers" if levels > 1
                                                 else ""), f"# trained on {how}",
                    f"self.{var} = {cls}({', '.join(args)})"]
    for key, value in module.named_parameters():
        writer.weights[f"{var}.{key}"] = value.detach()
    lengths = writer._in(name, 2) if len(writer.net.wiring[name]) > 2 else "None"
    return f"self.{var}({x}, state.get({name!r}), {lengths})"
