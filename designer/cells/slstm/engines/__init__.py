"""The sLSTM's engines: FUSED and its unrolled units; importing this package registers them."""
from designer.cells.slstm.engines import fused, readings, unrolled  # noqa: F401  (each registers)
