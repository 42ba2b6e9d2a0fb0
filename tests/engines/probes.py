"""What the engine tests probe a layer or a net with: a padded batch beside the same batch
with junk after each sequence's end, and the bytes a forward pass keeps for backward."""
import torch


def padded_and_junk(lengths: torch.Tensor, steps: int, features: int):
    """A (steps, N, features) batch of noise, zero after each sequence's ``lengths``, and a
    copy with large noise there instead (what a padded step must never be read as)."""
    x = torch.randn(steps, len(lengths), features)
    for n, k in enumerate(lengths.tolist()):
        x[k:, n] = 0.0
    junk = x.clone()
    for n, k in enumerate(lengths.tolist()):
        junk[k:, n] = torch.randn(steps - k, features) * 100
    return x, junk


def saved_bytes(run, *left_out: torch.Tensor) -> int:
    """Bytes of the tensors saved for backward while ``run()`` runs, each storage once, those
    of ``left_out`` (weights, the batch: counted elsewhere) not counted."""
    skip = {t.untyped_storage().data_ptr() for t in left_out}
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in skip:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        run()
    return sum(seen.values())
