"""What the cells' export tests hold an export against: our own net's logits and the state it
leaves, on a padded batch."""
import torch

LENGTHS = torch.tensor([7, 3, 0, 5])  # a 0: no output, the state as it came in


def logits_and_state(net, data: torch.Tensor, lengths: torch.Tensor | None = LENGTHS):
    """``net``'s ``ip1`` output and the state its ``rnn1`` leaves, on ``data`` (T=7, N=4) with
    ``lengths`` (``None``: every step counts)."""
    feeds = {"data.data": data} if lengths is None else {"data.data": data,
                                                         "data.lengths": lengths}
    with torch.no_grad():
        out = net(feeds, want=("ip1",))
    return out.blobs[("ip1", 0)], out.state["rnn1"]


def export_model_py(source, out, packages: set, layer: str) -> str:
    """Export ``source`` as model.py into ``out``, importing no more than ``packages`` and
    building ``rnn1`` as a ``layer``; its code."""
    from designer.exchange.pytorch_export.code import export_pytorch
    from tests.exchange.pytorch_export.test_code import imported_packages
    export_pytorch(source, out)
    assert imported_packages(out) <= packages
    code = (out / "model.py").read_text()
    assert f"self.rnn1 = {layer}(" in code
    return code


def same_as_ours(model, net, data: torch.Tensor, tol: float) -> None:
    """model.py's ``model`` gives ``net``'s logits and the state it leaves on the padded batch,
    and its logits on the whole batch (without lengths every step counts), within ``tol``."""
    with torch.no_grad():
        theirs, state = model(data, LENGTHS)
        whole, _ = model(data)
    ref, ref_state = logits_and_state(net, data)
    assert (theirs - ref).abs().max() < tol
    mine = state["rnn1"] if isinstance(state["rnn1"], (tuple, list)) else (state["rnn1"],)
    assert len(mine) == len(ref_state)
    assert all((a - b).abs().max() < tol for a, b in zip(mine, ref_state))
    ref_whole, _ = logits_and_state(net, data, None)
    assert (whole - ref_whole).abs().max() < tol
