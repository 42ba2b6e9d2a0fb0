"""The Output dock: the training log (``window``) and the Generate panel (``generate_panel``)
with its text streams, waveforms and digit grids (``generation``, ``audio_view``, ``digits``)."""
