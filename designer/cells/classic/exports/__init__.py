"""The classic cells' exports; importing this package registers them."""
from designer.cells.classic.exports import onnx  # noqa: F401  (registers its writers)
