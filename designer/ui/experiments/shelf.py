"""The four charts of the Experiments view, side by side where there is room (a wide window,
the tab undocked or maximised), else as tabs, so that none is squeezed unreadable.

:meth:`ChartShelf.draw` shapes the rows with `designer.search.analysis` and hands each chart
its part.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter, QStackedWidget, QTabWidget

from designer.search import analysis as A
from designer.search import charts as C

from designer.ui.experiments.charts import HistoryChart, ParetoChart
from designer.ui.experiments.parallel import ImportanceChart, ParallelChart

WIDE = 1150          # pixels: at least this wide, the charts stand side by side
TITLES = ("History", "Parallel coordinates", "Importance", "Pareto front")


class ChartShelf(QStackedWidget):
    """See the module's docstring; ``trial_clicked(number)`` from any chart."""

    trial_clicked = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.history = HistoryChart()
        self.parallel = ParallelChart()
        self.importance = ImportanceChart()
        self.pareto = ParetoChart()
        self.row = QSplitter(Qt.Horizontal)
        self.row.setChildrenCollapsible(False)
        self.tabs = QTabWidget(documentMode=True)
        self.tabs.setTabPosition(QTabWidget.South)
        self.addWidget(self.row)
        self.addWidget(self.tabs)
        for chart in self.charts():
            chart.trial_clicked.connect(self.trial_clicked)
        self.wide: bool | None = None
        self.arrange(True)

    def charts(self) -> tuple:
        return self.history, self.parallel, self.importance, self.pareto

    def arrange(self, wide: bool) -> None:
        """Side by side (``wide``) or as tabs."""
        if wide == self.wide:
            return
        self.wide = wide
        if wide:
            for chart in self.charts():
                self.row.addWidget(chart)
                chart.show()  # a page the tabs hid stays hidden once moved
            self.row.setSizes([300, 520, 300, 300])
            self.setCurrentWidget(self.row)
        else:
            for chart, title in zip(self.charts(), TITLES):
                self.tabs.addTab(chart, title)
            self.setCurrentWidget(self.tabs)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.arrange(event.size().width() >= WIDE)

    def draw(self, rows: list, facts: A.StudyFacts | None, axes: dict, objective: str | None,
             front: list, importances: dict, why: str) -> None:
        """Draw every chart from plain rows (nothing yet: each says what will come)."""
        if objective is None or facts is None:
            for chart in self.charts():
                chart.clear("Trials appear here as the search finishes them.")
            return
        direction = facts.direction(objective)
        self.history.show_history(C.history(rows, objective, direction), objective, direction)
        self.parallel.show_parallel(C.parallel_coordinates(rows, axes, objective, direction))
        self.importance.show_importances(importances, why, objective)
        objectives = facts.objectives
        self.pareto.show_front(C.pareto(rows, objectives, front) if len(objectives) > 1
                               else None, objectives, facts.directions)

    def refresh_theme(self) -> None:
        for chart in self.charts():
            chart.refresh_theme()
