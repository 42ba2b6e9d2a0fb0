"""The Charts dock: live loss, accuracy, learning-rate and tokens/s charts of every run
(``plots``, ``curves``, ``chart_range``) and the runs table under them (``runs_table``)."""
