"""The Generate panel's pages for the user's own sequences: a forecasting run's forecasts and
roll-out (`ForecastChart`), a classifier's confusion matrix (`ConfusionChart`). The panel
picks the page by the run's data kind (``series``, ``classes``) and asks this for the job, the
worker and the words that go with a result."""
from __future__ import annotations

from PySide6.QtCore import QObject

from designer.ui.sequences.confusion_chart import ConfusionChart
from designer.ui.sequences.forecast_chart import ForecastChart, baseline_label, number
from designer.ui.sequences.peer_text import peer_status
from designer.ui.sequences.workers import ScoreWorker

SEQUENCE_KINDS = ("series", "classes")


class SequenceResults(QObject):
    """The two pages, and what the panel needs to fill them.

    Parameters
    ----------
    start
        ``start(extra) -> bool``: the panel's own ``generate``, called with the settings of a
        new roll-out (False when a job is still running: the request then waits for it).
    busy_changed
        The panel's signal that a job started or ended.
    """

    def __init__(self, start, busy_changed, parent=None) -> None:
        super().__init__(parent)
        self.forecast = ForecastChart()
        self.confusion = ConfusionChart()
        self._start = start
        self._pending: dict | None = None
        self.shown_run: str | None = None  # the run folder the pages show
        self.forecast.rollout_requested.connect(self._rollout)
        busy_changed.connect(self._busy_changed)

    @property
    def pages(self) -> tuple:
        return (self.forecast, self.confusion)

    def job(self, kind: str) -> dict:
        """The settings a scoring job of ``kind`` carries besides the run and device."""
        return self.forecast.job() if kind == "series" else {}

    def worker(self, job: dict) -> ScoreWorker:
        return ScoreWorker(job)

    def loading(self, job: dict) -> str:
        if job.get("scores", True):
            return "Scoring the test split, and the non-deep peer beside it\u2026"
        return "Rolling out\u2026"

    def select(self, run) -> None:
        """Another run was picked: a result of the one before is not left on show."""
        folder = str(run.run_dir) if run is not None and run.run_dir else None
        if self.shown_run is not None and folder != self.shown_run:
            self.shown_run, self._pending = None, None
            self.forecast.clear()
            self.confusion.clear()

    def show(self, result: dict) -> tuple[str, str]:
        """Draw ``result``; returns the panel's status line and the log's."""
        self.shown_run = str(result["run_dir"])
        if result["kind"] == "classes":
            report = result["report"]
            self.confusion.show_result(report)
            text = f"test accuracy {report['accuracy']:.2%} on {report['n']:,} sequences"
            text += peer_status(report.get("peer"), "classify")
            return text[:1].upper() + text[1:], text
        self.forecast.show_result(result)
        ro = result["rollout"]
        rolled = (f"rolled out {len(ro['values']):,} steps" +
                  (f", RMSE {number(ro['rmse'][0])} where the file has the truth"
                   if ro["rmse"] and ro["rmse"][0] is not None else ""))
        if "report" not in result:
            return rolled[:1].upper() + rolled[1:], rolled
        report = result["report"]
        base = report["baseline"]
        text = (f"test RMSE {number(report['rmse'])} ({', '.join(report['targets'])}) against "
                f"{baseline_label(base['name'], base.get('period', 0))} "
                f"{number(base['rmse'])}")
        for b in report["baselines"][1:]:
            text += f" and {baseline_label(b['name'], b.get('period', 0))} {number(b['rmse'])}"
        text += peer_status(report.get("peer"), "forecast")
        return text[:1].upper() + text[1:], f"{text}; {rolled}"

    # ------------------------------------------------------------------ roll-outs --
    def _rollout(self, settings: dict) -> None:
        extra = {**settings, "scores": False}
        if not self._start(extra):
            self._pending = extra  # after the running job; the latest request wins

    def _busy_changed(self, busy: bool) -> None:
        if not busy and self._pending is not None:
            extra, self._pending = self._pending, None
            self._start(extra)

    def refresh_theme(self) -> None:
        self.forecast.refresh_theme()
        self.confusion.refresh_theme()
