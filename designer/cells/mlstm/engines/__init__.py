"""The mLSTM's engines: CHUNK (the chunkwise-parallel form) and its unrolled net; importing this
package registers them."""
from designer.cells.mlstm.engines import unrolled  # noqa: F401  (the unrolled net's pieces)
from designer.cells.mlstm.engines import readings  # noqa: F401  (its readings, its parity pair)
