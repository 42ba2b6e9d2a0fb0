"""The Train toolbar: Train / Pause / Resume / Stop (``trainer``), the device and engine
pickers, and the Charts and Device docks it fills, built on first need (``panels``)."""
