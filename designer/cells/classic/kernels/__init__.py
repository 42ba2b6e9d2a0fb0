"""The classic cells' kernels: the unrolled net's fused LSTM and GRU/RNN steps (Triton) and
PERSIST's persistent kernels (CUDA C++ through NVRTC, or Triton)."""
