"""The window itself: starting the app (``app``), the main window that docks every room,
its menus, toolbars and shortcuts (``actions``), New/Open/Save (``files``), the unrolled and
Inspect tabs (``tabs``), and the scripted train-then-generate run behind
``rnn-designer gui --train-steps``."""
