"""The classic cells' engines: cuDNN (torch.nn), PERSIST, AUTO, and the unrolled net's fused
step executors; importing this package registers their builder (and the LSTMUnit building block's), their
weight converter, their unrolled net's pieces, their readings and their parity pair."""
from designer.cells.classic.engines import builder, convert, readings, unrolled  # noqa: F401  (each registers)
