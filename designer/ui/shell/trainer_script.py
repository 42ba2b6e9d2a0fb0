"""``rnn-designer gui PROJECT --train-steps N --screenshot OUT.png``: train and generate through
the window exactly as a user would (Train, then the Generate panel), waiting on signals."""
from __future__ import annotations

import sys

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from designer.ui.shell import actions

PRIMES = ("ROMEO:\n", "First Citizen:\n", "\n")


def wait_for(signal, timeout_ms: int | None = None) -> None:
    """Run the event loop until ``signal`` fires (or the timeout passes)."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    if timeout_ms is not None:
        QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal.disconnect(loop.quit)


def train_then_generate(window, steps: int, device: str | None = None,
                        generate_length: int = 700) -> int:
    """Train ``steps`` steps, then generate; returns 0, 1 (the run failed) or 2 (it could
    not start). Problems are printed as one line on stderr."""
    controller = window.training
    run = controller.train(steps=steps, device=device)
    if run is None:
        print(f"rnn-designer: {window.statusBar().currentMessage() or 'training did not start'}",
              file=sys.stderr)
        return 2
    if controller.busy:
        wait_for(controller.run_ended)
    if run.state in ("failed", "nan"):  # already logged to stderr, in one line
        return 1
    panel = controller.output.generate
    panel.select_run(run)
    if run.kind == "text":
        vocab = _vocab(run)
        panel.prime.setText(next((p for p in PRIMES if set(p) <= vocab), "")
                            .replace("\n", "\\n"))
        panel.length.setValue(generate_length)
    elif run.kind == "audio":
        panel.seconds.setValue(1.0)
    panel.seed.setValue(1)
    actions.show_generate(window)
    if panel.generate():
        wait_for(panel.busy_changed)
    panel.text_view.verticalScrollBar().setValue(0)  # show the prime the text follows
    if run.kind in ("series", "classes"):  # the forecast or the confusion matrix: room for it
        window.resizeDocks([window.output_dock, window.charts_dock],
                           [int(window.width() * 0.58), int(window.width() * 0.42)],
                           Qt.Horizontal)
        window.resizeDocks([window.output_dock], [int(window.height() * 0.5)], Qt.Vertical)
        QApplication.processEvents()  # the docks take their sizes before the net is fitted
    if controller.charts.panel is not None:
        controller.charts.panel.refresh()
    window.view.fit()  # the docks grew while training: fit the net to what is left
    return 0


def _vocab(run) -> set:
    """The characters a text run's corpus holds (read from its checkpoint's meta)."""
    import json
    from pathlib import Path
    try:
        pointer = json.loads((Path(run.run_dir) / "last.json").read_text())
        meta = json.loads((Path(run.run_dir) / pointer["checkpoint"] / "meta.json").read_text())
        return set(meta["data"]["vocab"])
    except (OSError, ValueError, KeyError, TypeError):
        return set("\n")
