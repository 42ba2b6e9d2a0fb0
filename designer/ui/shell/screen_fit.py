"""The window on its screen: it opens inside the screen's available geometry, a geometry kept
from a larger monitor is brought back inside it, and nothing it shows can grow it.

Qt grows a top-level window to the minimum size of what it holds (a view with a tall minimum
opened in a tab, say, pushes the status bar below a laptop's screen). The window's own minimum
is therefore set explicitly, small enough for a 1366x768 screen: Qt then never raises it, and
each view is laid out to work in what it is given.
"""
from __future__ import annotations

from PySide6.QtCore import QMargins, QRect, QSize, QTimer
from PySide6.QtGui import QGuiApplication

PREFERRED = QSize(1440, 900)   # the size the window opens at where the screen has room
SMALLEST = QSize(720, 500)     # the window's own minimum (no view's minimum can raise it)
# a window manager's frame before the window is shown (a title bar and thin borders); the
# real one is read once the window is on the screen
GUESSED_FRAME = QMargins(4, 30, 4, 4)
SETTLE_MS = (0, 150, 600)      # when to look again: the frame arrives after the window maps


def available(window) -> QRect:
    """The available geometry (without panels and docks) of the screen the window is on."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def frame_margins(window) -> QMargins:
    """The window manager's frame around the window (a guess before it is shown)."""
    if not window.isVisible():
        return GUESSED_FRAME
    outer, inner = window.frameGeometry(), window.geometry()
    return QMargins(inner.left() - outer.left(), inner.top() - outer.top(),
                    outer.right() - inner.right(), outer.bottom() - inner.bottom())


def room(window) -> QSize:
    """The largest size the window itself can have with its frame inside the screen."""
    area, m = available(window), frame_margins(window)
    return QSize(area.width() - m.left() - m.right(), area.height() - m.top() - m.bottom())


def guard(window, on_screen: bool = True) -> None:
    """Set the window's minimum explicitly (what it holds can then never grow it); on a
    screen, no larger than the screen's room."""
    least = SMALLEST.boundedTo(room(window)) if on_screen else SMALLEST
    window.setMinimumSize(least.expandedTo(QSize(200, 150)))


def open_size(window) -> QSize:
    """The size a first start opens at: the preferred size, or the screen's room."""
    return PREFERRED.boundedTo(room(window))


def place(window) -> None:
    """A first start: the window's opening size, centred in the screen's room (once shown,
    again with the window manager's real frame)."""
    window.setProperty("placed_by_us", True)
    size = open_size(window)
    window.resize(size)
    area, m = available(window), frame_margins(window)
    outer = QSize(size.width() + m.left() + m.right(), size.height() + m.top() + m.bottom())
    window.move(area.left() + max(0, (area.width() - outer.width()) // 2),
                area.top() + max(0, (area.height() - outer.height()) // 2))


def keep_inside(window) -> bool:
    """Bring the window's frame inside the screen's available geometry (a geometry kept
    from a larger monitor, a frame thicker than guessed); whether it had to change."""
    if window.isMaximized() or window.isFullScreen() or not window.isVisible():
        return False
    area, frame = available(window), window.frameGeometry()
    if area.contains(frame):
        return False
    space = room(window)
    size = window.size().boundedTo(space)
    if size != window.size():
        window.resize(size)
    frame = window.frameGeometry()
    x = min(max(frame.left(), area.left()), area.right() + 1 - frame.width())
    y = min(max(frame.top(), area.top()), area.bottom() + 1 - frame.height())
    if (x, y) != (frame.left(), frame.top()):
        window.move(x, y)
    return True


def settle(window) -> None:
    """Keep the window inside its screen once shown, as soon as its frame is known (a window
    placed by `place` is placed again with it, filling the room it was meant to)."""
    guard(window)

    def look() -> None:
        if not window.isVisible():
            return
        guard(window)
        if window.property("placed_by_us") and frame_margins(window) != GUESSED_FRAME \
                and window.size() == open_size_for(window, GUESSED_FRAME):
            place(window)
        keep_inside(window)

    for ms in SETTLE_MS:
        QTimer.singleShot(ms, window, look)


def open_size_for(window, margins: QMargins) -> QSize:
    """The opening size had the frame been ``margins``."""
    area = available(window)
    return PREFERRED.boundedTo(QSize(area.width() - margins.left() - margins.right(),
                                     area.height() - margins.top() - margins.bottom()))
