"""The sLSTM's exports: ONNX and PyTorch code; importing this package registers them."""
from designer.cells.slstm.exports import caffe, onnx, pytorch  # noqa: F401  (registers its writers)
