"""Starting from a data file: the first look at it (its head, a scan of the whole, the task it
suggests) and ``rnn-designer init``, the ready-to-train project sized from it."""
