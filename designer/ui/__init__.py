"""The designer window: the only package that imports PySide6 (and, later, pyqtgraph).

``app.main`` starts it; ``main_window.MainWindow`` is the window; ``editor`` holds the node
editor (document, undo commands, scene and items); ``unrolled_view`` draws the expansion of a
recurrent layer. Nothing here imports torch.
"""
