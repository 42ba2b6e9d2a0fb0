"""The tabs beside the Design canvas: the unrolled view of a recurrent layer (one tab per
layer) and the Inspect view (one tab), opened, renamed and closed.

`ViewTabs` is mixed into `MainWindow`; it uses the window's ``tabs``, ``doc``, ``scene`` and
``training``, and keeps the open views in ``unrolled`` (layer name -> view) and ``inspect_view``.
"""
from __future__ import annotations

from PySide6.QtWidgets import QSizePolicy

from designer.ui.look import resources


class ViewTabs:
    """The `MainWindow` methods that open and close the unrolled and Inspect tabs."""

    def only_the_shown_tab_sizes(self, index: int = -1) -> None:
        """Only the tab shown asks for room: Qt sizes a tab widget by the largest of its pages,
        so a hidden Inspect tab would keep the canvas (and the docks beside it) as tall as the
        Inspect view needs. The pages behind are laid out again when shown."""
        for i in range(self.tabs.count()):
            page = self.tabs.widget(i)
            rule = QSizePolicy.Preferred if i == self.tabs.currentIndex() else \
                QSizePolicy.Ignored
            if page.sizePolicy().verticalPolicy() != rule:
                page.setSizePolicy(rule, rule)

    def show_unrolled(self, name: str, steps: int | None = None):
        """Open (or bring forward) the unrolled view of a recurrent layer.

        Raises ``ValueError`` with a sentence when the layer cannot be unrolled.
        """
        from designer.engines.expansion.expand import expand
        from designer.ui.unrolled.view import UnrolledView
        if name not in self.doc.graph:
            raise ValueError(f"there is no layer named '{name}'")
        expand(self.doc.graph, name, steps=1)  # raises ValueError when it cannot unroll
        if name in self.unrolled:
            view = self.unrolled[name]
            if steps is not None:
                view.set_steps(steps)
        else:
            view = UnrolledView(self.doc, name, steps=steps, weights_for=self._weights_for)
            view.closed.connect(self._forget_unrolled)
            view.renamed.connect(self._unrolled_renamed)
            self.unrolled[name] = view
            self.tabs.addTab(view, resources.icon("unroll"), f"Unrolled: {name}")
        self.tabs.setCurrentWidget(view)
        return view

    def _weights_for(self, layer: str):
        """The latest run of this session (or added folder) that has a checkpoint and a
        recurrent layer ``layer`` of the same type and size as the drawn one: its run folder
        and label, or ``None`` (the parity chart then uses freshly initialised weights)."""
        drawn = self.doc.graph.layer(layer)
        params = drawn.effective_params()
        run = self.training.runs.latest_trained_layer(
            layer, drawn.type, params.get("num_output"), params.get("num_layers", 1))
        return None if run is None else (run.run_dir, f"run #{run.number}")

    def show_unrolled_safely(self, name: str | None = None) -> None:
        names = self.scene.selected_names()
        name = name or (names[0] if names else None)
        if name is None:
            return
        try:
            self.show_unrolled(name)
        except ValueError as e:
            self.statusBar().showMessage(str(e), 8000)
            self.alert("Cannot unroll this layer", str(e))

    def _unrolled_renamed(self, old: str, new: str) -> None:
        view = self.unrolled.pop(old, None)
        if view is not None:
            self.unrolled[new] = view
            self.tabs.setTabText(self.tabs.indexOf(view), f"Unrolled: {new}")

    def _forget_unrolled(self, name: str) -> None:
        view = self.unrolled.pop(name, None)
        if view is not None:
            self.tabs.removeTab(self.tabs.indexOf(view))
            view.deleteLater()

    def show_inspect(self, run=None):
        """Open (or bring forward) the Inspect view, on ``run`` if given (else the latest)."""
        from designer.ui.inspect.view import InspectView
        if self.inspect_view is None:
            view = InspectView(self.training.runs)
            self.inspect_view = view
            index = self.tabs.addTab(view, resources.icon("inspect"), "Inspect")
            self.tabs.tabBar().setTabData(index, "inspect")
            if self.training.run is not None and self.training.tap is not None:
                view.follow_run(self.training.run, self.training.tap)
        if run is not None:
            self.inspect_view.select_run(run)
        self.tabs.setCurrentWidget(self.inspect_view)
        return self.inspect_view

    def _close_inspect(self) -> None:
        view, self.inspect_view = self.inspect_view, None
        if view is not None:
            view.shutdown()
            self.tabs.removeTab(self.tabs.indexOf(view))
            view.deleteLater()

    def _close_tab(self, index: int) -> None:
        view = self.tabs.widget(index)
        if view is not None and view is self.inspect_view:
            self._close_inspect()
            return
        if view is not None and view is self.experiments_view:
            self._close_experiments()
            return
        for name, w in list(self.unrolled.items()):
            if w is view:
                self._forget_unrolled(name)

    def _close_unrolled(self, *_) -> None:
        for name in list(self.unrolled):
            self._forget_unrolled(name)
