"""Using a trained run: generating text and audio from it, scoring it on its test split,
predicting for new files, a forecaster's roll-out, inspecting it from the command line, and
whether what it writes is worth reading or hearing."""
