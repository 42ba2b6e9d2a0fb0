"""File > Import and File > Export: prototxt in; ONNX, PyTorch code, prototxt and pictures out.

``actions.install`` adds the menu entries; the exports that need torch run in a worker thread
(``worker``), the import (pure Python) and the pictures (Qt only) in the GUI thread.
"""
