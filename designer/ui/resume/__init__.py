"""Continuing a run from its last checkpoint, from the runs table or File > Open Run...: the
run's own project and data, the device and engine picked in the toolbar (a different engine
converts the weights, as ``rnn-designer train --resume`` does)."""
from designer.ui.resume.continuing import ask_and_continue, continue_run, default_until, open_run

__all__ = ["ask_and_continue", "continue_run", "default_until", "open_run"]
