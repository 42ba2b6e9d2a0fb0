"""The classic cells' engines: cuDNN (torch.nn), PERSIST, AUTO, and the unrolled net's fused
step executors; importing this package registers them."""
from designer.cells.classic.engines import unrolled  # noqa: F401  (the unrolled net's pieces)
from designer.cells.classic.engines import readings  # noqa: F401  (its readings, its parity pair)
