"""MinGRU's and MinLSTM's exports: ONNX and PyTorch code; importing this package registers
them."""
