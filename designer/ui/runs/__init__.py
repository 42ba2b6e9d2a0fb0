"""Training runs as the window keeps them: a run's metric series (``run``, ``series``), the
runs of the session and the added run folders (``run_list``), and the worker threads that
train and generate (``worker``)."""
