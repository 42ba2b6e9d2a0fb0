"""Generated text, one column per stream, side by side; each column gets the prime in bold and
then its characters as they arrive, each coloured by how surprised the model was to write it
(hover one for the model's top guesses there; `designer.ui.inspect.surprise`)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from designer.ui.inspect.surprise import MAX_SCORED, CharToolTips, insert_scored, legend_html


class TextStreams(QWidget):
    """``count`` read-only text views in a horizontal splitter, headed ``Stream k`` when there
    is more than one."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.views: list[QPlainTextEdit] = []
        self.headers: list[QLabel] = []
        self.tips: list[CharToolTips] = []  # each view's hover tool-tips, by character
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.legend = QLabel(legend_html())
        self.legend.setWordWrap(True)
        self.scored: list[int] = []          # characters coloured, per column
        self.surprise_sum: list[float] = []  # their surprise, summed, per column
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.splitter, 1)
        lay.addWidget(self.legend)
        self.set_count(1)

    @property
    def count(self) -> int:
        return len(self.views)

    def set_count(self, count: int) -> None:
        """Show ``count`` columns (the first is kept, with what it holds)."""
        while len(self.views) < count:
            column = QWidget()
            lay = QVBoxLayout(column)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(2)
            header = QLabel(f"Stream {len(self.views) + 1}")
            view = QPlainTextEdit()
            view.setReadOnly(True)
            view.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
            view.setPlaceholderText("Generated text streams here.")
            lay.addWidget(header)
            lay.addWidget(view, 1)
            self.tips.append(CharToolTips(view))
            self.splitter.addWidget(column)
            self.views.append(view)
            self.headers.append(header)
        while len(self.views) > count:
            self.views.pop()
            self.headers.pop()
            self.tips.pop()
            column = self.splitter.widget(self.splitter.count() - 1)
            column.hide()
            column.setParent(None)
            column.deleteLater()
        for header in self.headers:
            header.setVisible(count > 1)
        self.splitter.setSizes([1000] * count)

    def start(self, prime: str) -> None:
        """Clear every column and write the prime in bold."""
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Bold)
        self.scored = [0] * len(self.views)
        self.surprise_sum = [0.0] * len(self.views)
        for view in self.views:
            view.clear()
            cursor = view.textCursor()
            cursor.insertText(prime, bold)
            view.setTextCursor(cursor)

    def append(self, pieces: list[str], scores: list | None = None) -> None:
        """Add each stream's new characters at the end of its column, coloured by ``scores``
        (per stream ``{"surprise": [...], "top": [...]}``, one entry per character) when
        they match the pieces."""
        if len(self.scored) != len(self.views):
            self.scored = [0] * len(self.views)
            self.surprise_sum = [0.0] * len(self.views)
        for k, (view, piece) in enumerate(zip(self.views, pieces)):
            cursor = view.textCursor()
            cursor.movePosition(QTextCursor.End)
            sc = scores[k] if scores and k < len(scores) else None
            if sc is not None and len(sc["surprise"]) == len(piece):
                self.scored[k] += insert_scored(cursor, piece, sc["surprise"], sc["top"],
                                                budget=MAX_SCORED - self.scored[k])
                self.surprise_sum[k] += sum(sc["surprise"])
            else:
                cursor.insertText(piece, QTextCharFormat())
            view.setTextCursor(cursor)
            view.ensureCursorVisible()

    def mean_surprise(self, written: int) -> float | None:
        """The model's own surprise, in nats a character, over the ``written`` characters
        of each column (``None`` when nothing was scored)."""
        if not written or not any(self.scored):
            return None
        return sum(self.surprise_sum) / (written * len(self.views))

    def texts(self) -> list[str]:
        return [v.toPlainText() for v in self.views]
