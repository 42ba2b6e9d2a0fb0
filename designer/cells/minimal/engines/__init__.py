"""MinGRU's and MinLSTM's engines: SCAN (the parallel scan) and their unrolled units; importing
this package registers them."""
from designer.cells.minimal.engines import unrolled  # noqa: F401  (the unrolled net's pieces)
from designer.cells.minimal.engines import readings  # noqa: F401  (its readings, its parity pair)
