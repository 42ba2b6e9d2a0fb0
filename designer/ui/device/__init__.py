"""The Device dock: the training GPU through NVML, or the CPU and memory (``panel``)."""
