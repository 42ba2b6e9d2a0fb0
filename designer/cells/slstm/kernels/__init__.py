"""The sLSTM's Triton kernels (the FUSED engine on a GPU): `launch` plans and runs them."""
