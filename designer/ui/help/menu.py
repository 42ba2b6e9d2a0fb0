"""Help > Documentation (F1): open the documentation site in the browser, at the section of the
selected layer in the layer reference, or at its home page.

A site that is current (or the one the packaged app ships) opens at once. One that the code has
outgrown is built first by ``rnn-designer docs --no-open`` in a child process, so the window
stays responsive; the status bar says so, and the page opens when the build is done. A build
that cannot be made is told in one sentence.
"""
from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QProcess, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence

from designer.docs import site

PREFIX = "rnn-designer: "


def add_to_help_menu(w, menu, actions) -> None:
    """Add Documentation (F1) to ``menu``, and ``w.documentation`` to the window."""
    w.documentation = Documentation(w)
    act = QAction("&Documentation", w)
    act.setShortcuts(list(dict.fromkeys(
        [QKeySequence("F1"), *QKeySequence.keyBindings(QKeySequence.HelpContents)])))
    act.setStatusTip("Open the documentation in your browser: the selected layer's section of "
                     "the layer reference, or the home page")
    act.triggered.connect(lambda checked=False: w.documentation.open())
    menu.addAction(act)
    actions.documentation = act


class Documentation(QObject):
    """What Help > Documentation does in one window.

    ``opener`` opens a URL (the desktop's browser by default); ``launcher`` runs ``designer``
    (by default this Python with ``-m designer``; the packaged app reads it as its own command
    line).
    """

    def __init__(self, window, opener=None, launcher: list[str] | None = None) -> None:
        super().__init__(window)
        self.w = window
        self.opener = opener or QDesktopServices.openUrl
        self.launcher = list(launcher or [sys.executable, "-m", "designer"])
        self.process: QProcess | None = None
        self.opened: list[str] = []  # the URLs opened, for the tests and the log

    def selected_layer(self) -> str | None:
        """The type of the first selected layer, if any."""
        names = self.w.scene.selected_names()
        return self.w.doc.graph.layer(names[0]).type if names else None

    def open(self) -> None:
        layer = self.selected_layer()
        if site.up_to_date():
            self._open(site.page(layer=layer).as_uri())
            return
        if self.process is not None:
            self.w.show_message("The documentation is being built; it opens when it is done")
            return
        args = self.launcher[1:] + ["docs", "--no-open"] + (["--layer", layer] if layer else [])
        self.process = QProcess(self)
        self.process.finished.connect(self._built)
        self.process.start(self.launcher[0], args)
        self.w.show_message("Building the documentation (a few seconds); it opens in your "
                            "browser when it is done")

    def _built(self, code: int, status=None) -> None:
        proc, self.process = self.process, None
        out = bytes(proc.readAllStandardOutput()).decode("utf-8", "replace").split()
        err = bytes(proc.readAllStandardError()).decode("utf-8", "replace").splitlines()
        proc.deleteLater()
        if code == 0 and out:
            self._open(out[-1])
            return
        said = [line[len(PREFIX):] for line in err if line.startswith(PREFIX)]
        text = said[-1] if said else f"the documentation did not build (exit code {code})"
        self.w.alert("The documentation cannot be opened", text[:1].upper() + text[1:])

    def _open(self, url: str) -> None:
        self.opened.append(url)
        if not self.opener(QUrl(url)):
            self.w.alert("The documentation cannot be opened",
                         f"No web browser opened it; it is at {url}")
            return
        self.w.show_message(f"Opened the documentation in your browser: {url}")
