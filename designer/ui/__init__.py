"""The designer window: the only package that imports PySide6 and pyqtgraph.

``app.main`` starts it; ``main_window.MainWindow`` is the window; ``editor`` holds the node
editor (document, undo commands, scene and items); ``unrolled_view`` draws the expansion of a
recurrent layer; ``trainer`` trains the project from the window (``worker`` threads, ``plots``
and ``device_panel`` charts, ``output_window`` with the Generate panel). torch is imported only
inside the worker threads, when a run or a generation starts; pyqtgraph only when the charts,
the device panel or a waveform are first shown.
"""
