"""The classic cells' exports; importing this package registers them."""
from designer.cells.classic.exports import onnx, pytorch  # noqa: F401  (registers its writers)
