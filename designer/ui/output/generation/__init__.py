"""The Generate panel's views: several text streams side by side, waveforms with their levels,
and playing generated audio."""
