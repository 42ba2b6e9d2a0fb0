"""The mLSTM's exports: ONNX and PyTorch code; importing this package registers them."""
from designer.cells.mlstm.exports import onnx, pytorch  # noqa: F401  (each registers)
