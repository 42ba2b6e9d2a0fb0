"""The window's side of the user's own sequences: File > New from Data (a preview of the file,
then the project ``rnn-designer init`` would make), and what the Generate panel shows for a
forecasting run (its forecasts, the baselines and a roll-out) or a classifier (the confusion
matrix and per-class accuracy)."""
