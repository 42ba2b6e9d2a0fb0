"""The RG-LRU's engines: SCAN (the linear scan) and its unrolled unit; importing this package
registers them."""
from designer.cells.rglru.engines import readings, scan, unrolled  # noqa: F401  (each registers)
