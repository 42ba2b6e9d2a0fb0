"""``rnn-designer search``: studies and trials on Optuna, above training and below the window.

- `space`: what a search varies (a project's ``search`` section, or ``--space FILE``), checked
  against the project's layers and settings, and suggested for an Optuna trial;
- `design`: a trial's values applied to a copy of the project (parameters, retyped layers, a
  branch switched off);
- `study`: the storage, sampler, pruner and objectives of a study, and what it has done;
- `trial`: one trial as one ordinary run folder, reported to Optuna as it trains;
- `worker` and `runner`: the long-lived worker processes (one or more per GPU, or on the CPU)
  and the process that starts, watches and stops them;
- `command`: the command line's side (its output, ``--best-out``).

Nothing here imports Qt: a search runs on GPU machines that have no window.
"""
