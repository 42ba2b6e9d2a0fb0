"""The classic cells' exports: ONNX, PyTorch code and prototxt, writers and readers; importing
this package registers them."""
from designer.cells.classic.exports import caffe, onnx, pytorch  # noqa: F401  (each registers)
