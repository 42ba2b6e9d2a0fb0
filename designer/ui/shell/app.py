"""Start the designer: the QApplication, the theme, the window; or render it to a PNG and exit.

``main(args, default_project)`` is what ``rnn-designer [PROJECT]`` and ``rnn-designer gui``
call. Nothing on the way to a visible window imports torch.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

SCREENSHOT_SIZE = (1440, 900)
STARTUP_PROBE = "RNN_DESIGNER_STARTUP_PROBE"  # benchmarks: print when visible, then quit


def make_app(argv: list[str] | None = None):
    """The QApplication, set up once: names, icon, Fusion style and the chosen theme; the
    recurrent cells loaded (their specs: the window reads projects)."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from designer import __version__
    from designer.cells import load
    from designer.ui.look import resources, theme

    load()

    _quiet_qt_warnings()
    _log_to_stderr()
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else [sys.argv[0]])
    app.setOrganizationName("rnn-designer")
    app.setApplicationName("rnn-designer")
    app.setApplicationDisplayName(resources.APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("rnn-designer")
    app.setWindowIcon(resources.app_icon())
    theme.apply(app, QSettings().value("theme", "system"))
    return app


def _log_to_stderr() -> None:
    """Training errors and warnings go to stderr as ``rnn-designer: ...`` lines (the window
    shows them too)."""
    import logging
    log = logging.getLogger("designer")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("rnn-designer: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.WARNING)
        log.propagate = False


def _quiet_qt_warnings() -> None:
    """Hide the offscreen platform's notice about size hints; pass everything else on."""
    from PySide6.QtCore import qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        if "propagateSizeHints" in message:
            return
        print(message, file=sys.stderr)

    qInstallMessageHandler(handler)


def main(args, default_project: str) -> int:
    """Open the designer window (or, with ``--screenshot``, render it and exit)."""
    steps = getattr(args, "train_steps", None)
    device = getattr(args, "device", None)
    if steps is not None and steps < 1:
        print("rnn-designer: --train-steps must be at least 1", file=sys.stderr)
        return 2
    path = args.project or default_project
    inspect = getattr(args, "inspect", None)
    if inspect and not Path(inspect).is_dir():
        print(f"rnn-designer: {inspect} is not a run folder (no such folder)", file=sys.stderr)
        return 2
    if args.screenshot:
        return screenshot(path, args.screenshot, unrolled=args.unrolled, train_steps=steps,
                          device=device, inspect=inspect)
    return run_window(path, unrolled=args.unrolled, quiet_missing=args.project is None,
                      train_steps=steps, device=device, inspect=inspect)


def run_window(path: str | None, unrolled: str | None = None,
               quiet_missing: bool = False, train_steps: int | None = None,
               device: str | None = None, inspect: str | None = None) -> int:
    from PySide6.QtCore import QTimer

    from designer.ui.shell.main_window import MainWindow

    app = make_app()
    window = MainWindow()
    _report_bugs_in(window)
    window.show()

    def load() -> None:
        if path and (Path(path).exists() or not quiet_missing):
            window.files.open_path(path, confirmed=True)
        if unrolled:
            window.show_unrolled_safely(unrolled)
        if inspect:
            from designer.ui.runs.run import RunError
            try:
                window.show_inspect(window.training.runs.add_folder(inspect))
            except RunError as e:
                window.alert("Cannot inspect this folder", str(e))
        if device:
            window.training.target.list_gpus()
            window.training.device_picker.select(device)
        if train_steps is not None:  # start training right away, as if Train were pressed
            window.training.train(steps=train_steps, device=device)
        if os.environ.get(STARTUP_PROBE):  # benchmarks: the time the loaded window is painted
            window.repaint()
            heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "pyqtgraph"})
            print(f"visible {time.time():.6f} {','.join(heavy) or '-'} {window.windowTitle()}",
                  flush=True)
            window.doc.stack.setClean()
            app.quit()

    QTimer.singleShot(0, load)
    return app.exec()


def screenshot(path: str, out: str, unrolled: str | None = None,
               size: tuple[int, int] = SCREENSHOT_SIZE, train_steps: int | None = None,
               device: str | None = None, inspect: str | None = None) -> int:
    """Render the window with ``path`` loaded (and the unrolled view of a layer) to ``out``.

    With ``train_steps``, first train that many steps exactly as the Train button does (the
    worker thread, the live charts), then generate from the run in the Generate panel, and
    picture the window with the charts and the output filled.
    """
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from designer.graph.project import ProjectError, load
    from designer.ui.shell.main_window import MainWindow

    out_path = Path(out)
    if not out_path.resolve().parent.is_dir():
        print(f"rnn-designer: {out}: the folder {out_path.resolve().parent} does not exist",
              file=sys.stderr)
        return 2
    try:
        project = load(path)
    except ProjectError as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return 2
    app = make_app()
    from designer.ui.look import theme
    theme.apply(app, "light")
    with tempfile.TemporaryDirectory() as tmp:  # keep the user's window layout out of it
        settings = QSettings(str(Path(tmp) / "screenshot.ini"), QSettings.IniFormat)
        settings.setValue("problems/smoke_step", False)  # a picture need not run the net
        window = MainWindow(settings=settings, restore=False, on_screen=False)
        window.resize(*size)
        window.doc.replace(project)
        window.show()
        _settle(app)
        window.view.fit()
        if unrolled:
            for dock in (window.problems_dock, window.history_dock, window.output_dock,
                         window.charts_dock):
                dock.hide()
            window.scene.select_layers([unrolled])
            try:
                window.show_unrolled(unrolled)
            except ValueError as e:
                print(f"rnn-designer: {project.path}: {e}", file=sys.stderr)
                window.close()
                return 2
        else:
            first = next((n for n in project.graph.topological_order()
                          if project.graph.layer(n).spec.category == "Recurrent"), None)
            if first:
                window.scene.select_layers([first])
        code = 0
        if inspect:
            code = _inspect_run(window, inspect)
            if code == 2:
                window.close()
                return 2
        if train_steps is not None:
            from designer.ui.shell.trainer_script import train_then_generate
            code = train_then_generate(window, train_steps, device)
            if code == 2:
                window.close()
                return 2
        _settle(app)
        pixmap = window.grab()
        window.doc.stack.setClean()
        window.close()
    if not pixmap.save(str(out_path), "PNG"):
        print(f"rnn-designer: {out}: cannot be written", file=sys.stderr)
        return 1
    print(f"wrote {out} ({pixmap.width()}x{pixmap.height()})")
    QApplication.processEvents()
    return code


def _inspect_run(window, folder: str) -> int:
    """Open the Inspect view on a run folder and wait for its first picture; 0, 1 (the
    inspection failed: said on stderr) or 2 (not a run folder)."""
    from PySide6.QtCore import Qt

    from designer.ui.runs.run import RunError
    from designer.ui.shell.trainer_script import wait_for
    try:
        run = window.training.runs.add_folder(folder)
    except RunError as e:
        print(f"rnn-designer: {e}", file=sys.stderr)
        return 2
    for dock in (window.problems_dock, window.history_dock, window.output_dock,
                 window.charts_dock, window.palette_dock, window.properties_dock,
                 window.device_dock):
        dock.hide()
    view = window.show_inspect(run)
    if view.result is None:
        wait_for(view.inspected)
    if view.result is None:
        print(f"rnn-designer: {folder}: {view.status.text()}", file=sys.stderr)
        return 1
    seen = view.result["inspection"]
    words = [lv for lv in seen.layers if "f" in lv.gates] or seen.layers
    view.level.setCurrentIndex(view.level.findData(words[-1].name))
    view.quantity.setCurrentIndex(view.quantity.findData("c"))
    if seen.probe.kind == "text":  # the preset pattern some unit follows best
        from designer.ui.inspect.search import PRESETS, PatternError, find_units
        values = view.unit_panel.values
        best = (0.0, None)
        for _, regex in PRESETS:
            try:
                _, ranked = find_units(values, seen.probe.text, regex, 1)
            except PatternError:
                continue
            best = max(best, (abs(ranked[0][1]), regex), key=lambda b: b[0])
        if best[1] is not None:
            view.unit_panel.pattern.setEditText(best[1])
            view.unit_panel.search()
            unit = view.unit_panel.results.item(0).data(Qt.UserRole)
            view.unit_panel.show_unit(unit)
            view.charts.set_unit(unit)
    return 0


def _report_bugs_in(window) -> None:
    """A bug in a slot should not end the session: say so in the status bar, keep running,
    and leave the details on stderr for a bug report."""
    import traceback

    def hook(kind, value, tb) -> None:
        traceback.print_exception(kind, value, tb)
        window.statusBar().showMessage(f"Internal error: {value} (details on the terminal); "
                                       "your work is unchanged and can be saved", 20000)

    sys.excepthook = hook


def _settle(app, rounds: int = 6) -> None:
    """Let queued work (deferred refreshes, layouts) run before a picture is taken."""
    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.01)
