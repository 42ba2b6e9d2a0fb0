"""The classic cells' exports; importing this package registers them."""
from designer.cells.classic.exports import caffe, onnx, pytorch  # noqa: F401  (registers its writers)
