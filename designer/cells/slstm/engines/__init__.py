"""The sLSTM's engines: FUSED and its unrolled units; importing this package registers them."""
from designer.cells.slstm.engines import fused  # noqa: F401  (its builder registers)
