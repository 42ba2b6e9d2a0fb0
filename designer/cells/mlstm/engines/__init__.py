"""The mLSTM's engines: CHUNK (the chunkwise-parallel form) and its unrolled net; importing this
package registers them."""
from designer.cells.mlstm.engines import chunk, readings, unrolled  # noqa: F401  (each registers)
