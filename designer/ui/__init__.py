"""The designer window: the only package that imports PySide6 and pyqtgraph.

One subpackage per part of the window (docs/development.md, "Where things are"): ``shell``
starts the app and holds the window, its menus and files; ``editor`` the palette and the
canvas; ``forms`` the Properties dock; ``problems`` the Problems dock; ``unrolled`` the unrolled
view; ``train`` the Train toolbar; ``output``, ``charts`` and ``device`` the docks training
fills; ``inspect`` the Inspect view; ``exchange`` File > Import/Export; ``help`` Help >
Documentation; ``resume`` continuing a run; ``memory`` the memory estimate; ``runs`` the runs
and worker threads; ``look`` themes and icons. torch is
imported only inside the worker threads, when a run or a generation starts; pyqtgraph only when
the charts, the device panel or a waveform are first shown.
"""
