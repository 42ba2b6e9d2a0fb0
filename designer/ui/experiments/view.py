"""The Experiments view: a search's trials and what they say.

On top, the controls (Search, Stop, the objective the charts follow, Use Best) and a status
line; then the trials table (`table`); under it four charts: the objective by trial with the
best so far, parallel coordinates, importances and two objectives' Pareto front (`charts`).

The rows come from two places: the JSON lines of a search this window runs (`process`), at
once, and the study's storage (`reader`, off the GUI thread) when a project that has a study
is opened and again after each finished trial, which also brings the importances and the
Pareto front (both from Optuna). Clicking a trial opens its run folder in the training charts
(``trial_opened``); Use Best puts the best trial's parameters into the design as one undoable
step (`use_best`).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter,
                               QVBoxLayout, QWidget)

from designer.graph.errors import GraphError
from designer.search import analysis as A
from designer.ui.look import resources

from designer.ui.experiments.launch import SearchDialog, SearchOptions, gpu_count, space_problem
from designer.ui.experiments.process import SearchProcess, search_command
from designer.ui.experiments.reader import StudyReader
from designer.ui.experiments.shelf import ChartShelf
from designer.ui.experiments.table import TrialsTable, ensemble_note, summary
from designer.ui.experiments.use_best import trained_values, use_params

REDRAW_MS = 100     # charts redraw at most this often while lines stream in
REREAD_MS = 400     # the study is read again this long after the last finished trial
FOLLOW_MS = 2000    # and this often while a search runs, from its "study" line on


class ExperimentsView(QWidget):
    """See the module's docstring.

    Parameters
    ----------
    doc
        The window's `Document` (its project's search section and path, its undo stack).
    prepare
        Called before a search starts: saves the project and returns its path, or ``None``
        when the user would not save (then nothing starts).
    devices
        Called for the device picker's choices (``DeviceChoice``s) when the dialog opens.

    Signals
    -------
    trial_opened(str)
        A trial's run folder, to open in the training charts.
    message(str)
        A sentence for the window's status bar.
    search_started(SearchOptions), search_ended(int): a search began; it ended (its exit code).
    study_read(StudyReading)
        The study was read from its storage.
    """

    trial_opened = Signal(str)
    message = Signal(str)
    search_started = Signal(object)
    search_ended = Signal(int)
    study_read = Signal(object)

    def __init__(self, doc, prepare=None, devices=None, parent=None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.prepare = prepare or (lambda: str(doc.path) if doc.path else None)
        self.devices = devices or (list)
        self.launcher: list | None = None   # what runs "designer" (tests put a fake here)
        self.options = SearchOptions()
        self.facts: A.StudyFacts | None = None
        self.axes: dict = {}
        self._study_axes = False
        self.front: list = []
        self.importances: dict = {}
        self.importance_reason = ""
        self.last_error = ""
        self.ended_note = ""   # how the last search ended, before the summary
        self.project = doc.path  # the project file the trials are of

        self.process = SearchProcess(self)
        self.process.event.connect(self.take_event)
        self.process.note.connect(self._note)
        self.process.failed.connect(self._failed)
        self.process.ended.connect(self._ended)
        self.reader = StudyReader(self)
        self.reader.read_done.connect(self._read)
        self.reader.read_failed.connect(self._read_failed)

        self.search_button = resources.themed(QPushButton("Search\u2026"), "search")
        self.search_button.setToolTip("Search the parameters marked “Search over” in "
                                      "Properties: each trial trains the design once")
        self.search_button.clicked.connect(lambda: self.start_search())
        self.stop_button = resources.themed(QPushButton("Stop"), "stop")
        self.stop_button.setToolTip("Stop the search (the trials under way end; a second "
                                    "Stop ends them at once); Search goes on with the study")
        self.stop_button.clicked.connect(self.stop_search)
        self.objective = QComboBox()
        self.objective.setToolTip("The objective the history, parallel coordinates, "
                                  "importances and Use Best follow")
        self.objective.currentIndexChanged.connect(self._objective_changed)
        self.use_button = QPushButton("Use Best")
        self.use_button.setToolTip("Put the best trial's parameters into the design (one "
                                   "step: Ctrl+Z takes them back)")
        self.use_button.clicked.connect(self.use_best)
        self.status = QLabel(wordWrap=True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.setContentsMargins(8, 6, 8, 2)
        for w in (self.search_button, self.stop_button, QLabel("  Objective"), self.objective,
                  self.use_button):
            bar.addWidget(w)
        bar.addWidget(self.status, 1)

        self.table = TrialsTable()
        self.table.clicked.connect(lambda index: self.open_trial(self.table.row_at(index)))
        self.table.trial_activated.connect(self.open_trial)
        self.table.use_requested.connect(self.use_trial)
        self.charts = ChartShelf()
        self.charts.trial_clicked.connect(self._chart_clicked)
        self.split = split = QSplitter(Qt.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.charts)
        split.setSizes([300, 380])
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(bar)
        lay.addWidget(split, 1)

        self._redraw = QTimer(self, singleShot=True, interval=REDRAW_MS)
        self._redraw.timeout.connect(self.redraw)
        self._reread = QTimer(self, singleShot=True, interval=REREAD_MS)
        self._reread.timeout.connect(self.read_study)
        self._follow = QTimer(self, interval=FOLLOW_MS)
        self._follow.timeout.connect(lambda: self.read_study(importance=False))
        doc.path_changed.connect(self.project_changed)
        doc.settings_changed.connect(self._settings_changed)
        self.project_changed()

    # ----------------------------------------------------------------------- the project --
    @property
    def rows(self) -> list:
        return self.table.trials.rows

    def project_changed(self) -> None:
        """Another project (or a new path): forget the trials, read its study if it has one."""
        if self.process.running():
            return  # the search in progress keeps its rows (and its project)
        self.project = self.doc.path
        self.facts, self._study_axes = None, False
        self.last_error = self.ended_note = ""
        self.front, self.importances, self.importance_reason = [], {}, ""
        self.table.trials.clear()
        self._settings_changed("search")
        path = self.doc.path
        if path is not None and A.has_study(path):
            self.facts = A.StudyFacts(A.default_study(path), A.default_storage(path), [], [])
            self.say(f"Reading the study of {Path(path).name}\u2026")
            self.read_study()
        else:
            self.say("Mark parameters “Search over” in Properties, then press Search."
                     if not self.doc.project.search else
                     f"{len(self.doc.project.search)} parameters marked to search over; "
                     "press Search.")
        self.redraw()
        self._update_actions()

    def _settings_changed(self, section: str) -> None:
        if section == "search" and not self._study_axes:  # until trials bring their own
            self.axes = A.axes_of_search(self.doc.project.search)
            self.table.trials.set_columns(self.table.trials.objectives, list(self.axes))

    def read_study(self, importance: bool = True) -> None:
        """Read the study (rows, importances, Pareto front) off the GUI thread (without
        ``importance``: the trials only, to follow those training)."""
        if self.facts is not None and self.facts.storage:
            self.reader.read(self.facts.storage, self.facts.study, self.current_objective(),
                             importance)

    def _read(self, reading: A.StudyReading) -> None:
        facts = reading.facts
        if self.facts is not None and self.facts.trials is not None:
            facts.trials = self.facts.trials
        self._set_facts(facts)
        if reading.axes:
            self.axes, self._study_axes = reading.axes, True
        # the study's own parameters (a search with --steps leaves solver.max_steps out)
        params = list(dict.fromkeys(list(self.axes) + [k for r in reading.rows
                                                       for k in r.params]))
        self.table.trials.set_columns(facts.objectives, params, keep=not reading.axes)
        self.table.trials.replace(reading.rows)
        self.front = reading.front
        if reading.importances is not None:  # None: a quick look, the last ones stand
            self.importances, self.importance_reason = reading.importances, \
                reading.importance_reason
        if not self.last_error:
            self.say(self._summary(running=True) if self.process.running() else
                     self.ended_note + self._summary())
        self.redraw()
        self.study_read.emit(reading)

    def _read_failed(self, text: str) -> None:
        self.importance_reason = text
        if not self.process.running():
            self.say(text)
        self.redraw()

    # ------------------------------------------------------------------------ the search --
    def start_search(self, options: SearchOptions | None = None) -> bool:
        """Save the project, then run ``rnn-designer search`` (asks for the options when
        none are given). False when it did not start."""
        if self.process.running():
            self.message.emit("A search is already running; stop it first")
            return False
        problem = space_problem(self.doc.project)
        if problem:
            self._failed(problem)
            return False
        if options is None:
            dialog = SearchDialog(self.options, gpu_count(self.devices()),
                                  self.doc.project.name, len(self.rows), self)
            if dialog.exec() != SearchDialog.Accepted:
                return False
            options = dialog.options()
        path = self.prepare()
        if not path:
            return False
        self.project = self.doc.path
        self.options = options
        self.last_error = self.ended_note = ""
        if self.facts is None:
            self.facts = A.StudyFacts(A.default_study(path), A.default_storage(path),
                                      list(options.objectives),
                                      [A.DIRECTIONS[o] for o in options.objectives])
        self.facts.trials = None
        command = search_command(path, launcher=self.launcher, **options.arguments())
        self.process.start(command, cwd=Path(path).parent)
        self.say(f"Searching {Path(path).name}: {options.trials} trials\u2026")
        self.search_started.emit(options)
        self._update_actions()
        return True

    def stop_search(self) -> None:
        if self.process.stop():
            self.stop_button.setText("Stop Now")
            self.say("Stopping the search: the trials under way end, then it stops (Stop "
                     "again ends them at once)\u2026" if self.process.stops == 1 else
                     "Ending the search now\u2026")

    def take_event(self, event: dict) -> None:
        """One JSON line of the search."""
        kind = event.get("kind")
        if kind == "study":  # the search has opened its study: it can be read from now on
            self._set_facts(A.facts_from_event(event))
            self.table.trials.set_columns(self.facts.objectives, list(self.axes))
            if self.process.running():
                self._follow.start()
        elif kind == "trial":
            objectives = (self.facts.objectives if self.facts
                          else list(event.get("values") or ["value"]))
            self.table.trials.upsert(A.row_from_event(event, objectives))
            self.say(self._summary(running=self.process.running()))
            self._update_actions()
            self._redraw.start()
            self._reread.start()
        elif kind == "best":
            self.say(self._summary() + ensemble_note(event.get("run_dirs") or [],
                                                     event.get("ensemble")))
        elif event.get("message"):  # stopping, a worker's news, an error of one trial
            text = str(event["message"])
            self.say(text[:1].upper() + text[1:], error=kind == "error")
            self.message.emit(text)

    def _set_facts(self, facts: A.StudyFacts) -> None:
        self.facts = facts
        current = self.current_objective()
        self.objective.blockSignals(True)
        self.objective.clear()
        for name in facts.objectives:
            self.objective.addItem(name, name)
        if current in facts.objectives:
            self.objective.setCurrentIndex(facts.objectives.index(current))
        self.objective.blockSignals(False)

    def _note(self, text: str) -> None:
        self.status.setToolTip(text)
        self.message.emit(text[:1].upper() + text[1:])

    def _failed(self, sentence: str) -> None:
        sentence = sentence[:1].upper() + sentence[1:]
        self.last_error = sentence
        self.say(sentence, error=True)
        self.message.emit(sentence)

    def _ended(self, code: int) -> None:
        self._follow.stop()
        if not self.last_error:
            stopped = self.process.stops > 0
            self.ended_note = ("Search stopped; Search goes on with the same study. "
                               if stopped else "Search finished. ")
            self.say(self.ended_note + self._summary())
            self.message.emit("Search stopped" if stopped else "Search finished")
        self.stop_button.setText("Stop")
        self._update_actions()
        self.search_ended.emit(code)
        self.read_study()

    # ----------------------------------------------------------------------------- trials --
    def current_objective(self) -> str | None:
        if self.objective.count():
            return self.objective.currentData()
        return self.facts.objectives[0] if self.facts and self.facts.objectives else None

    def best(self) -> A.TrialRow | None:
        objective = self.current_objective()
        if objective is None or self.facts is None:
            return None
        return A.best_row(self.rows, objective, self.facts.direction(objective))

    def open_trial(self, row: A.TrialRow | None) -> None:
        if row is None:
            return
        if not row.run_dir:
            self.message.emit(f"Trial {row.number} has no run folder")
            return
        self.trial_opened.emit(str(row.run_dir))

    def use_trial(self, row: A.TrialRow | None) -> bool:
        """Put ``row``'s parameters into the design (one undo step)."""
        if row is None:
            self.message.emit("There is no complete trial to use yet")
            return False
        if self.project != self.doc.path:
            self._failed(f"these trials are {Path(self.project or '?').name}'s; open it to "
                         "use them")
            return False
        params, steps = trained_values(self.doc.project, row)
        try:
            n = use_params(self.doc, params, f"Use trial {row.number}'s parameters")
        except GraphError as e:
            self._failed(f"trial {row.number} cannot be used: {e}")
            return False
        self.message.emit(f"Used trial {row.number}'s parameters ({n} change"
                          f"{'s' * (n != 1)}{'; ' + steps if steps else ''}; Ctrl+Z takes "
                          "them back)" if n else
                          f"The design already has trial {row.number}'s parameters")
        return True

    def use_best(self) -> bool:
        return self.use_trial(self.best())

    def _chart_clicked(self, number: int) -> None:
        if self.table.select_number(number):
            self.open_trial(self.table.selected())

    # ---------------------------------------------------------------------------- drawing --
    def _objective_changed(self, *_) -> None:
        self.redraw()
        self.read_study()

    def redraw(self) -> None:
        """Draw the charts and mark the best trial, from the rows (plain data)."""
        best = self.best()
        self.table.trials.set_best(best.number if best else None, self.front)
        self.charts.draw(self.rows, self.facts, self.axes, self.current_objective(),
                         self.front, self.importances, self.importance_reason)
        self._update_actions()

    def say(self, text: str, error: bool = False) -> None:
        from designer.ui.look import theme
        self.status.setStyleSheet(f"color: {theme.colors.error.name()};" if error else "")
        self.status.setText(text)

    def _summary(self, running: bool = False) -> str:
        return summary(self.rows, self.facts, self.current_objective(), self.best(), running)

    def _update_actions(self) -> None:
        running = self.process.running()
        self.search_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.use_button.setEnabled(self.best() is not None)

    def refresh_theme(self) -> None:
        self.charts.refresh_theme()
        self.redraw()

    def shutdown(self) -> None:
        """Stop a search (killed: the window is going) and end the reading thread."""
        if self.process.running():
            self.process.stop()               # Ctrl-C: the trials under way end...
            if not self.process.wait(5000):
                self.process.stop()           # ...or are ended now
                self.process.wait(5000)
        self.reader.shutdown()
