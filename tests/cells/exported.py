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
