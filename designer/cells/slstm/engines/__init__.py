"""The sLSTM's engines: FUSED and its unrolled units; importing this package registers them."""
from designer.cells.slstm.engines import unrolled  # noqa: F401  (the unrolled net's pieces)
from designer.cells.slstm.engines import readings  # noqa: F401  (its readings, its parity pair)
