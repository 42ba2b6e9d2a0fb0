"""Measuring the engines: ``parity`` (two engines, one function), ``bench`` (their speed),
``trace`` and the readings Inspect shows, and the engine commands (``parity``, ``unroll``,
``bench``)."""
