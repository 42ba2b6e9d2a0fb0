"""The training step: forward, loss, backward and update, eager or captured in a CUDA graph
(:mod:`.cuda_graphs`)."""
