"""The Train toolbar: Train / Pause / Resume / Stop (``trainer``, and what each state of a run
shows: ``states``), the device and engine pickers, the Charts and Device docks it fills, built
on first need (``panels``), and a data-parallel run's child processes, followed like a worker
thread (``processes``)."""
