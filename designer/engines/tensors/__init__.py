"""Tensor helpers every engine shares: weight fillers, the recurrent state's layout (time-major
inputs, lengths, zero states) and the linear scan of the cells whose gates read only the
input."""
