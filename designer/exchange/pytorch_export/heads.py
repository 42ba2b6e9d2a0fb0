"""A recurrent layer in heads that torch.nn lacks, written into ``model.py`` as its cell's own
class: the constructor line, the weights and the call. The classes themselves are the cells'
(``designer/cells/<cell>/exports/pytorch.py``)."""
from __future__ import annotations


def head_cell(writer, name: str, var: str, module, p: dict, x: str, comment: str, cls: str,
              helper: str, fused: tuple[str, str], extra: list[str]) -> str:
    """Write a ``cls`` layer into ``writer`` (a ``pytorch_code`` writer): its attribute, made
    with the sizes, heads, levels, dropout and layout every such cell takes plus ``extra``
    arguments; its weights; the ``helper`` class's text. ``fused``: the engine name whose
    run the class reproduces and how to say so. Returns the expression of its call."""
    e, h, levels = module.input_size, module.hidden, module.levels
    args = [str(e), str(h), f"num_heads={module.heads}"]
    if levels > 1:
        args.append(f"num_layers={levels}")
    if levels > 1 and p.get("dropout_ratio", 0.0):
        args.append(f"dropout={p['dropout_ratio']!r}")
    args += ["batch_first=True"] * bool(p.get("batch_first")) + extra
    engine, runs = fused
    how = runs if writer.net.engines.get(name) == engine else \
        f"the unrolled Caffe engine, whose tensors {cls} holds; it computes the same"
    writer.helpers.add(helper)
    writer.init += [f"{comment}: {e} -> {h} in {module.heads} heads" +
                    (f", {levels} stacked layers" if levels > 1 else ""), f"# trained on {how}",
                    f"self.{var} = {cls}({', '.join(args)})"]
    for key, value in module.named_parameters():
        writer.weights[f"{var}.{key}"] = value.detach()
    lengths = writer._in(name, 2) if len(writer.net.wiring[name]) > 2 else "None"
    return f"self.{var}({x}, state.get({name!r}), {lengths})"
