"""Tensor helpers every engine shares: weight fillers and the recurrent state's layout
(time-major inputs, lengths, zero states)."""
