"""The run itself: the training loop and its step records, the run folder and its checkpoints,
resuming, the stop/pause controls, divergence, the learning-rate schedule, the first step's
notes, whether a net fits and the smoke step, and data-parallel runs (their processes and their
launcher)."""
