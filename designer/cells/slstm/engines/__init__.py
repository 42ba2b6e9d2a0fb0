"""The sLSTM's engines: FUSED and its unrolled units; importing this package registers them."""
