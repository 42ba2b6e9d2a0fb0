"""The output window: generated text streams in; audio runs get a waveform and Save WAV;
MNIST runs get their held-out accuracy and a few predictions."""
import numpy as np
import pytest

from designer.ui.shell import actions
from tests.conftest import DATA, need_data
from tests.ui.conftest import train_and_wait


def generate_and_wait(qtbot, panel, timeout=60_000) -> None:
    with qtbot.waitSignal(panel.busy_changed, timeout=timeout,
                          check_params_cb=lambda busy: not busy):
        assert panel.generate()


@pytest.fixture
def trained(qtbot, tiny):
    """The tiny Char-RNN after a finished run, with the Generate panel in front."""
    run = train_and_wait(qtbot, tiny)
    actions.show_generate(tiny)
    return tiny, run


def test_generated_text_streams_into_the_output_window(qtbot, trained):
    w, run = trained
    panel = w.training.output.generate
    assert w.training.output.currentWidget() is panel and panel.current_run() is run
    panel.prime.setText("First")
    panel.length.setValue(3000)
    panel.seed.setValue(7)
    generate_and_wait(qtbot, panel)
    text = panel.text_view.toPlainText()
    assert text.startswith("First") and len(text) == len("First") + 3000
    assert panel.chunks >= 2 and panel.streamed == 3000  # it arrived in pieces, as made
    assert text == "First" + panel.result["text"]
    assert "3,000 characters" in panel.status.text()
    generate_and_wait(qtbot, panel)                       # the same seed writes the same
    assert panel.text_view.toPlainText() == text


def test_several_streams_side_by_side_and_a_hint_for_a_loop(qtbot, trained):
    w, _ = trained
    panel = w.training.output.generate
    assert panel.temperature.value() == 0.8  # the text data layer's default
    panel.prime.setText("First")
    panel.length.setValue(200)
    panel.streams.setValue(3)
    panel.seed.setValue(1)
    generate_and_wait(qtbot, panel)
    texts = panel.texts.texts()
    assert len(texts) == 3 and all(t.startswith("First") and len(t) == 205 for t in texts)
    assert texts == ["First" + t for t in panel.result["texts"]] and len(set(texts)) == 3
    assert all(not h.isHidden() for h in panel.texts.headers)
    status = panel.status.text()
    assert "200 characters x 3 streams in " in status and " on CPU, " in status
    assert "characters/s" in status and panel.hint.isHidden()
    panel.temperature.setValue(0.0)  # always the likeliest: a barely trained model loops
    panel.streams.setValue(1)
    generate_and_wait(qtbot, panel)
    assert panel.texts.count == 1 and panel.texts.headers[0].isHidden()
    assert not panel.hint.isHidden() and "over and over; try temperature 0.8" in \
        panel.hint.text()
    assert "hint: the model repeats" in w.training.output.log.toPlainText()


def test_generation_can_be_stopped(qtbot, trained):
    w, _ = trained
    panel = w.training.output.generate
    panel.length.setValue(1_000_000)
    with qtbot.waitSignal(panel.busy_changed, timeout=60_000,
                          check_params_cb=lambda busy: not busy):
        panel.generate()
        qtbot.waitUntil(lambda: panel.streamed > 0, timeout=60_000)
        panel.stop_button.click()
    assert panel.result["stopped"] and 0 < len(panel.result["text"]) < 1_000_000


def test_a_prime_the_model_never_saw_is_one_sentence(qtbot, trained):
    w, _ = trained
    panel = w.training.output.generate
    panel.prime.setText("\u03a9 speak")
    generate_and_wait(qtbot, panel)
    assert "the prime holds '\u03a9', which the model never saw" in panel.status.text()
    assert "generation failed" in w.training.output.log.toPlainText()
    assert panel.go.isEnabled()


def test_without_a_run_generate_says_what_to_do(tiny):
    panel = tiny.training.output.generate
    assert not panel.go.isEnabled() and not panel.generate()
    assert "Train a run first" in panel.status.text()


# ----------------------------------------------------------------------------------- audio --
def audio_project(folder):
    """A Char-RNN on a tone, saved (the generation tests' own)."""
    from tests.training.trained.test_generate import audio_project as tone
    tone(folder)
    return folder / "tone.json"


def test_an_audio_run_draws_its_waveform_and_saves_a_wav(qtbot, window, tmp_path):
    from designer.training.data.wavfile import read_wav
    window.notify = lambda *a, **k: None
    assert window.files.open_path(audio_project(tmp_path), confirmed=True)
    run = train_and_wait(qtbot, window)
    assert run.state == "finished" and run.kind == "audio"
    panel = window.training.output.generate
    assert panel.kind == "audio" and panel.go.text() == "Generate"
    assert panel.form.isRowVisible(panel.seconds) and not panel.form.isRowVisible(panel.prime)
    panel.seconds.setValue(0.05)
    generate_and_wait(qtbot, panel)
    assert panel.temperature.value() == 1.0  # the audio data layer's default
    x, y = panel.audio.curve.getData()
    assert len(x) == 400 and x[-1] == pytest.approx(399 / 8000) and np.abs(y).max() <= 1.0
    title = panel.audio.wave.titles[0]
    assert title.startswith("peak ") and " dBFS \u00b7 RMS " in title
    assert title.endswith("(training audio: RMS -9.0 dBFS)")
    if not panel.audio.can_play:  # no Qt Multimedia or no speaker: say why instead
        assert not panel.audio.play.isEnabled() and panel.audio.play.toolTip()
    assert panel.audio.save.isEnabled()
    saved = panel.save_wav(str(tmp_path / "generated"))  # .wav is added
    assert saved == tmp_path / "generated.wav"
    assert read_wav(saved).rate == 8000 and len(read_wav(saved).samples) == 400
    assert panel.status.text() == f"Saved generated audio to {saved}"
    assert panel.save_wav(str(tmp_path / "no" / "such" / "folder.wav")) is None
    assert "cannot be written" in panel.status.text()

    panel.seconds.setValue(60)  # a long one, stopped once it is under way
    with qtbot.waitSignal(panel.busy_changed, timeout=60_000,
                          check_params_cb=lambda busy: not busy):
        panel.generate()
        qtbot.waitUntil(lambda: panel.status.text().startswith("Generating"), timeout=60_000)
        panel.stop_button.click()
    assert panel.result["stopped"] and panel.status.text() == "Stopped"
    assert panel.audio.curve.getData()[0].size == 400  # the last waveform stays


# ----------------------------------------------------------------------------------- MNIST --
def mnist_project(folder):
    from designer.graph import Graph
    from designer.graph.project import Project
    g = Graph(project_dir=folder)
    g.add_layer("MnistRows", "data", {"folder": str(DATA / "mnist"), "batch_size": 50})
    g.add_layer("LSTM", "lstm1", {"num_output": 16, "batch_first": True})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10, "axis": 1})
    g.add_layer("SoftmaxWithLoss", "loss", {"axis": 1})
    g.add_layer("Accuracy", "accuracy", {"axis": 1})
    for a, b in [("data.data", "lstm1.x"), ("lstm1.y", "ip1.x"), ("ip1.y", "loss.logits"),
                 ("data.label", "loss.label"), ("ip1.y", "accuracy.logits"),
                 ("data.label", "accuracy.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    return Project(g, "digits", "", {"base_lr": 0.01, "max_steps": 8},
                   {"log_interval": 2, "eval_interval": 4, "eval_batches": 2,
                    "sample_interval": 0, "device": "cpu"}).save(folder / "digits.json")


@need_data("mnist/t10k-images-idx3-ubyte.gz")
def test_an_mnist_run_shows_accuracy_charts_and_predictions(qtbot, window, tmp_path):
    window.notify = lambda *a, **k: None
    assert window.files.open_path(mnist_project(tmp_path), confirmed=True)
    run = train_and_wait(qtbot, window)
    assert run.state == "finished" and run.has("accuracy") and run.has("val_accuracy")
    charts = window.training.charts.panel
    charts.refresh()
    assert not charts.accuracy_widget.isHidden()
    panel = window.training.output.generate
    assert panel.kind == "mnist" and panel.go.text() == "Predict"
    panel.count.setValue(12)
    generate_and_wait(qtbot, panel)
    result = panel.result
    assert result["images"].shape == (12, 28, 28) and result["evaluated"] == 1000
    assert 0.0 <= result["accuracy"] <= 1.0 and "Held-out accuracy" in panel.accuracy.text()
    assert len(panel.digits.predicted) == 12 and panel.digits.grab().width() > 0
