"""Generated text, one column per stream, side by side; each column gets the prime in bold and
then its characters as they arrive."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget


class TextStreams(QWidget):
    """``count`` read-only text views in a horizontal splitter, headed ``Stream k`` when there
    is more than one."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.views: list[QPlainTextEdit] = []
        self.headers: list[QLabel] = []
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.splitter)
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
            self.splitter.addWidget(column)
            self.views.append(view)
            self.headers.append(header)
        while len(self.views) > count:
            self.views.pop()
            self.headers.pop()
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
        for view in self.views:
            view.clear()
            cursor = view.textCursor()
            cursor.insertText(prime, bold)
            view.setTextCursor(cursor)

    def append(self, pieces: list[str]) -> None:
        """Add each stream's new characters at the end of its column."""
        for view, piece in zip(self.views, pieces):
            cursor = view.textCursor()
            cursor.movePosition(QTextCursor.End)
            cursor.insertText(piece, QTextCharFormat())
            view.setTextCursor(cursor)
            view.ensureCursorVisible()

    def texts(self) -> list[str]:
        return [v.toPlainText() for v in self.views]
