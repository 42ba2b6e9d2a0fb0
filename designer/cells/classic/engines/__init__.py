"""The classic cells' engines: cuDNN (torch.nn), PERSIST, AUTO, and the unrolled net's fused
step executors; importing this package registers their builder and their weight converter."""
from designer.cells.classic.engines import builder, convert  # noqa: F401  (they register)
