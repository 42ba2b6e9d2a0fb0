"""The Experiments view: a search's trials (live from ``rnn-designer search --json`` and from
its Optuna study), the objective's history, parallel coordinates, parameter importances and
the Pareto front; Use Best puts a trial's parameters into the design as one undoable step."""
