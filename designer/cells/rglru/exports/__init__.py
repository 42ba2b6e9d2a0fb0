"""The RG-LRU's exports: ONNX, PyTorch code and prototxt; importing this package registers
them."""
from designer.cells.rglru.exports import caffe, onnx, pytorch  # noqa: F401  (each registers)
