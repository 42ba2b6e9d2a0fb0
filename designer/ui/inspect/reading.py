"""What a sequence run makes of the sequence it reads, drawn above the heatmap on its time axis:

- a classifier: the probability of every class after each step (its prediction if the
  sequence ended there), the true class drawn thick and named;
- a forecaster: the window it read, in the target's own units, and after it the forecast
  and the truth.

Both draw on a `pyqtgraph.PlotItem` the step charts own; step t spans x in [t, t + 1], as
the heatmap's column for that step does.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

PALETTE = ("#2f7de1", "#e8590c", "#2e9d57", "#7048e8", "#d6336c", "#0c8599", "#f08c00",
           "#5c940d", "#862e9c", "#495057")
HISTORY, FORECAST, TRUTH = "#2f7de1", "#e8590c", "#2e9d57"


def class_color(k: int) -> QColor:
    return QColor(PALETTE[k % len(PALETTE)])


def draw_leaning(plot: pg.PlotItem, leaning: np.ndarray, classes: list, target: int | None,
                 text_color: str) -> dict:
    """One line per class over the steps; returns ``{class index: curve}``."""
    plot.clear()
    t_, k_ = leaning.shape
    x = np.arange(t_) + 0.5
    final = int(np.argmax(leaning[-1]))
    leaders = {int(k) for k in leaning.argmax(1)}  # classes the net favoured at some step
    curves = {}
    for k in range(k_):
        color = class_color(k)
        if k == target:
            pen = pg.mkPen(color, width=3.2)
        elif k == final:
            pen = pg.mkPen(color, width=2, style=Qt.DashLine)
        elif k in leaders:
            pen = pg.mkPen(color, width=2)
        else:
            color.setAlpha(150)
            pen = pg.mkPen(color, width=1.2)
        symbol = "o" if t_ <= 60 and k in (target, final) else None
        curves[k] = plot.plot(x, leaning[:, k], pen=pen, symbol=symbol, symbolSize=5,
                              symbolBrush=pen.color(), symbolPen=pg.mkPen(pen.color()))
        curves[k].setZValue(3 if k == target else 2 if k == final else 1)
    for k, words in ((target, "true class"), (final, "the net's answer")):
        if k is None or (words == "the net's answer" and k == target):
            continue
        label = pg.TextItem(f"{classes[k]} ({words})", color=class_color(k), anchor=(1, 1.1))
        label.setPos(x[-1], float(leaning[-1, k]))
        plot.addItem(label)
    plot.setYRange(0, 1, padding=0.03)
    plot.setLabel("left", "p(class)", **{"font-size": "8pt"})
    if k_ <= len(PALETTE):  # every class named in its colour
        named = "  ".join(
            f"<span style='color:{class_color(k).name()}'>"
            + (f"<b>\u2501 {classes[k]} (true)</b>" if k == target else f"\u2500 {classes[k]}")
            + "</span>" for k in range(k_))
    else:
        named = (f"<span style='color:{class_color(target).name()}'>\u2501 the true class "
                 f"{classes[target]}</span>, thin lines the other classes"
                 if target is not None else "a line per class")
    plot.setTitle(f"The class the net leans to after each step (its answer if the sequence "
                  f"ended there): {named}", size="8pt", color=text_color)
    return curves


def draw_window(plot: pg.PlotItem, info: dict, forecast: np.ndarray, text_color: str) -> dict:
    """The window's target values, then the forecast and the truth; returns the curves
    (``history``, ``forecast``, ``truth``, of the first target)."""
    plot.clear()
    history = np.asarray(info["history"], np.float64)
    truth = np.asarray(info["truth"], np.float64)
    known = np.asarray(info["known"], bool)
    t_, h = len(history), len(truth)
    x = np.arange(t_) + 0.5
    ahead = t_ + np.arange(h) + 0.5
    curves = {}
    for j, name in enumerate(info["targets"]):
        dim = j > 0
        hist = plot.plot(x, history[:, j], pen=pg.mkPen(HISTORY, width=1.2 if dim else 2))
        joined = np.concatenate([[x[-1]], ahead])
        fc = plot.plot(joined, np.concatenate([[history[-1, j]], forecast[:, j]]),
                       pen=pg.mkPen(FORECAST, width=2.2), symbol="o", symbolSize=6,
                       symbolBrush=FORECAST, symbolPen=pg.mkPen(FORECAST))
        seen = np.where(known[:, j], truth[:, j], np.nan)
        tr = plot.plot(ahead, seen, pen=pg.mkPen(TRUTH, width=1.5, style=Qt.DashLine),
                       symbol="s", symbolSize=6, symbolBrush=TRUTH, symbolPen=pg.mkPen(TRUTH),
                       connect="finite")
        if j == 0:
            curves = {"history": hist, "forecast": fc, "truth": tr}
    line = pg.InfiniteLine(pos=t_, angle=90, pen=pg.mkPen("#8a8a8a", width=1,
                                                          style=Qt.DotLine))
    plot.addItem(line)
    plot.setXRange(0, t_ + h, padding=0.01)
    plot.enableAutoRange(axis="y")
    names = ", ".join(info["targets"])
    plot.setLabel("left", names if len(names) <= 14 else "value", **{"font-size": "8pt"})
    plot.setTitle(f"The window read (<span style='color:{HISTORY}'>\u2501 {names}</span>) and "
                  f"after it the <span style='color:{FORECAST}'>\u25cf forecast</span> and "
                  f"the <span style='color:{TRUTH}'>\u25a0 truth</span>, {h} step"
                  f"{'s' if h > 1 else ''} ahead", size="8pt", color=text_color)
    return curves
