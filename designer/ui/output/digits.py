"""A grid of MNIST digits with the model's guess under each (green when right, red with the
true label when wrong)."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

CELL = 56        # pixels per digit (28 x 2)
LABEL_H = 18
GAP = 8


class DigitGrid(QWidget):
    """Draws ``images`` (k, 28, 28) in [0, 1] with ``predicted`` and ``truth`` labels."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.predicted: list[int] = []
        self.truth: list[int] = []
        self._qimages: list[QImage] = []
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)

    def set_predictions(self, images, predicted, truth) -> None:
        import numpy as np
        self.predicted = [int(p) for p in predicted]
        self.truth = [int(t) for t in truth]
        self._qimages = []
        for img in np.asarray(images, dtype=np.float32):
            gray = np.ascontiguousarray((255 * (1.0 - np.clip(img, 0, 1))).astype(np.uint8))
            q = QImage(gray.data, gray.shape[1], gray.shape[0], gray.strides[0],
                       QImage.Format_Grayscale8).copy()  # copy: own the pixels
            self._qimages.append(q)
        self.updateGeometry()
        self.update()

    @property
    def correct(self) -> int:
        return sum(p == t for p, t in zip(self.predicted, self.truth))

    def _columns(self) -> int:
        return max(1, (self.width() - GAP) // (CELL + GAP))

    def sizeHint(self) -> QSize:
        n = len(self._qimages)
        cols = min(max(n, 1), 8)
        rows = -(-n // cols) if n else 1
        return QSize(GAP + cols * (CELL + GAP), GAP + rows * (CELL + LABEL_H + GAP))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        cols = max(1, (width - GAP) // (CELL + GAP))
        rows = -(-len(self._qimages) // cols) if self._qimages else 1
        return GAP + rows * (CELL + LABEL_H + GAP)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        pal = self.palette()
        light = pal.color(QPalette.Base).lightness() > 128
        good, bad = (QColor("#2e9d57"), QColor("#d93b3b")) if light else \
            (QColor("#5cc98a"), QColor("#ff6b6b"))
        font = QFont(self.font())
        font.setBold(True)
        p.setFont(font)
        cols = self._columns()
        for i, img in enumerate(self._qimages):
            r, c = divmod(i, cols)
            x, y = GAP + c * (CELL + GAP), GAP + r * (CELL + LABEL_H + GAP)
            p.drawImage(QRect(x, y, CELL, CELL), img)
            ok = self.predicted[i] == self.truth[i]
            p.setPen(good if ok else bad)
            p.drawRect(QRect(x, y, CELL - 1, CELL - 1))
            text = f"{self.predicted[i]}" + ("" if ok else f" (is {self.truth[i]})")
            p.drawText(QRect(x - GAP // 2, y + CELL, CELL + GAP, LABEL_H), Qt.AlignCenter, text)
        p.end()
