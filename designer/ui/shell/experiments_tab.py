"""The Experiments tab beside the Design canvas, and what a search asks of the window.

`ExperimentsTab` is mixed into `MainWindow`: it opens the tab (by hand, or by itself, without
taking the focus, when a project that has a search study is opened), saves the project before
a search, hands the view the device picker's choices, opens a clicked trial's run folder in
the training charts, and shows every GPU in the Device panel while a search runs.
"""
from __future__ import annotations

from designer.ui.look import resources


class ExperimentsTab:
    """The `MainWindow` methods of the Experiments tab (``experiments_view``)."""

    experiments_view = None

    def show_experiments(self, focus: bool = True):
        """Open (or bring forward, with ``focus``) the Experiments view."""
        from designer.ui.experiments.view import ExperimentsView
        if self.experiments_view is None:
            view = ExperimentsView(self.doc, prepare=self._save_for_search,
                                   devices=self._device_choices)
            view.trial_opened.connect(self._open_trial_run)
            view.message.connect(self.show_message)
            view.search_started.connect(self._search_started)
            view.search_ended.connect(self._search_ended)
            self.experiments_view = view
            index = self.tabs.addTab(view, resources.icon("search"), "Experiments")
            self.tabs.tabBar().setTabData(index, "search")
        if focus:
            self.tabs.setCurrentWidget(self.experiments_view)
        return self.experiments_view

    def start_search(self) -> bool:
        """The Search action: the Experiments view asks for the options, then starts."""
        return self.show_experiments().start_search()

    def stop_search(self) -> None:
        if self.experiments_view is not None:
            self.experiments_view.stop_search()

    def _project_has_study(self) -> None:
        """A project was opened: show its study, if it has one, in the Experiments tab."""
        from designer.search.analysis import has_study
        if self.experiments_view is None and self.doc.path and has_study(self.doc.path):
            self.show_experiments(focus=False)

    def _close_experiments(self) -> None:
        if self.experiments_view is not None and self.experiments_view.process.running():
            self.show_message("A search is running: stop it before closing its tab")
            return
        view, self.experiments_view = self.experiments_view, None
        if view is not None:
            view.shutdown()
            self.tabs.removeTab(self.tabs.indexOf(view))
            view.deleteLater()

    # ----------------------------------------------------------------------- the search --
    def _save_for_search(self) -> str | None:
        """The project's path once it is saved (a search reads the file), or ``None``."""
        unsaved = self.doc.path is None or self.doc.is_modified()
        if unsaved and not self.files.save():
            return None
        return str(self.doc.path)

    def _device_choices(self) -> list:
        self.training.target.list_gpus()
        picker = self.training.device_picker
        return [picker.itemData(i) for i in range(picker.count())]

    def _open_trial_run(self, folder: str) -> None:
        self.training.charts.add_folder(folder)

    def _search_started(self, options) -> None:
        """Every GPU in the Device panel (the search spreads trials over them)."""
        self.act.stop_search.setEnabled(True)
        choices = self._device_choices()
        every = next((c for c in choices if c.processes > 1), None)
        gpus = [c for c in choices if c.device.startswith("cuda:")]
        self.training.device.watch(every.monitor if every is not None else
                                   gpus[0].monitor if gpus else "cpu")
        self.device_dock.show()
        self.device_dock.raise_()
        self.training.device.ensure()

    def _search_ended(self, code: int) -> None:
        self.act.stop_search.setEnabled(False)
        if self.training.job is None:  # no run of the window's own: back to its device
            self.training.device.watch(self.training.device_picker.choice().monitor)
