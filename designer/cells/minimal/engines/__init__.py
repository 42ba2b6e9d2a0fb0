"""MinGRU's and MinLSTM's engines: SCAN (the parallel scan) and their unrolled units; importing
this package registers them."""
from designer.cells.minimal.engines import readings, scan, unrolled  # noqa: F401  (each registers)
