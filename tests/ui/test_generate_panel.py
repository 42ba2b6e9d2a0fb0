"""The Generate panel without training: each kind of data brings its own defaults; audio shows
its levels, fits or fixes the scale, plays through the audio extra where it can and says why
where it cannot."""
import types

import numpy as np
import pytest

from designer.ui.output.audio_view import AudioView
from designer.ui.output.generate_panel import GeneratePanel
from designer.ui.output.generation import playback
from designer.ui.runs.run import Run
from designer.ui.runs.run_list import RunList


def project_of(data_type: str) -> dict:
    return {"name": data_type, "graph": {"layers": [{"name": "data", "type": data_type}]}}


def test_each_kind_starts_from_its_data_layers_defaults_and_keeps_the_users(qtbot, tmp_path):
    runs = RunList()
    text, audio = Run(1, "text", project_of("CharText")), Run(2, "audio", project_of("WavAudio"))
    for run in (text, audio):
        run.run_dir = tmp_path
        runs.add(run)
    panel = GeneratePanel(runs)
    qtbot.addWidget(panel)
    panel.select_run(text)
    assert panel.kind == "text" and panel.temperature.value() == 0.8
    panel.select_run(audio)
    assert panel.kind == "audio" and panel.temperature.value() == 1.0
    assert "near-silence below 1" in panel.temperature.toolTip()
    panel.temperature.setValue(1.1)
    panel.select_run(text)
    assert panel.temperature.value() == 0.8
    panel.select_run(audio)
    assert panel.temperature.value() == 1.1  # what the user chose for audio stays
    assert panel.form.isRowVisible(panel.streams) and panel.form.isRowVisible(panel.device)
    assert panel.device.currentData() == "auto" and panel.device.itemText(0) == "As trained"
    audio.device = "cuda:0"
    audio.device_name = "NVIDIA H200"
    panel._run_picked()
    assert panel.device.itemText(0) == "As trained (H200)"


def audio_result(tmp_path, streams=2, rate=8000) -> dict:
    from designer.training.data.wavfile import write_wav
    t = np.arange(800) / rate
    loud = 0.5 * np.sin(2 * np.pi * 440 * t)
    quiet = 0.002 * np.sin(2 * np.pi * 440 * t)
    samples = [loud, quiet][:streams]
    paths = [str(write_wav(tmp_path / f"s{k}.wav", s, rate)) for k, s in enumerate(samples)]
    return {"kind": "audio", "samples": samples, "paths": paths, "rate": rate,
            "reference_rms": 0.1}


@pytest.fixture
def no_playback(monkeypatch):
    def missing():
        raise ModuleNotFoundError("no module")
    monkeypatch.setattr(playback, "_import_sounddevice", missing)
    monkeypatch.setattr(playback, "_import_qt_multimedia", missing)


def test_the_waveforms_show_levels_and_fit_or_fix_the_scale(qtbot, tmp_path, no_playback):
    view = AudioView()
    qtbot.addWidget(view)
    view.show_result(audio_result(tmp_path))
    wave = view.wave
    assert len(wave.plots) == 2 and not view.stream.isHidden()
    assert wave.titles[0] == ("Stream 1 \u00b7 peak -6.0 dBFS \u00b7 RMS -9.0 dBFS (training "
                              "audio: RMS -20.0 dBFS)")
    assert wave.titles[1].startswith("Stream 2 \u00b7 peak -54.0 dBFS \u00b7 RMS -57.0 dBFS")
    low, high = wave.plots[1].getViewBox().viewRange()[1]
    assert high == pytest.approx(0.0022, rel=0.01) and low == pytest.approx(-high)
    view.fixed.setChecked(True)
    assert wave.plots[1].getViewBox().viewRange()[1] == pytest.approx([-1.0, 1.0])
    view.fixed.setChecked(False)
    assert wave.plots[1].getViewBox().viewRange()[1][1] == pytest.approx(0.0022, rel=0.01)
    view.show_result(audio_result(tmp_path, streams=1))
    assert len(wave.plots) == 1 and view.stream.isHidden()
    assert wave.titles[0].startswith("peak -6.0 dBFS")


def test_without_a_player_the_button_says_how_to_get_one(qtbot, tmp_path, no_playback):
    view = AudioView()
    qtbot.addWidget(view)
    assert not view.play.isEnabled() and view.play.toolTip() == "Generate audio first"
    view.show_result(audio_result(tmp_path))
    assert not view.can_play and not view.play.isEnabled()
    assert "pip install 'rnn-designer[audio]'" in view.play.toolTip()
    view.toggle_play()  # nothing happens, nothing breaks
    assert not view.player.playing


def test_a_missing_portaudio_or_output_device_is_named(qtbot, monkeypatch):
    def no_portaudio():
        raise OSError("PortAudio library not found")

    def no_qt():
        raise ModuleNotFoundError("PySide6.QtMultimedia")
    monkeypatch.setattr(playback, "_import_sounddevice", no_portaudio)
    monkeypatch.setattr(playback, "_import_qt_multimedia", no_qt)
    ok, why = playback.Player().support()
    assert not ok and "PortAudio library (on Debian or Ubuntu: sudo apt install libportaudio2)" \
        in why
    fake = types.SimpleNamespace(query_devices=lambda kind: (_ for _ in ()).throw(
        ValueError("No output device")))
    monkeypatch.setattr(playback, "_import_sounddevice", lambda: fake)
    ok, why = playback.Player().support()
    assert not ok and why == "No audio output device was found; save the WAV instead"


def test_play_sends_the_chosen_stream_to_sounddevice_and_stop_stops(qtbot, tmp_path,
                                                                    monkeypatch):
    calls = []
    fake = types.SimpleNamespace(
        query_devices=lambda kind: {"name": "speakers", "max_output_channels": 2},
        play=lambda data, rate: calls.append(("play", data, rate)),
        stop=lambda: calls.append(("stop",)))
    monkeypatch.setattr(playback, "_import_sounddevice", lambda: fake)
    view = AudioView()
    qtbot.addWidget(view)
    result = audio_result(tmp_path)
    view.show_result(result)
    assert view.can_play and view.play.isEnabled() and "sounddevice" in view.play.toolTip()
    view.stream.setCurrentIndex(1)
    view.play.click()
    (what, data, rate), = calls
    assert what == "play" and rate == 8000 and data.dtype == np.float32
    assert np.allclose(data, result["samples"][1])
    assert view.play.text() == "Stop" and view.player.playing
    view.play.click()
    assert calls[-1] == ("stop",) and view.play.text() == "Play"
    view.play.click()  # and playing to the end flips it back by itself
    qtbot.waitUntil(lambda: view.play.text() == "Play", timeout=60_000)


def test_in_a_laptops_short_dock_the_settings_scroll_and_the_summary_stays_in_sight(qtbot):
    """The Output dock of a 1366x768 screen is about 475x290: the settings scroll, while
    Generate, Stop and what the last generation did stay whole below them."""
    runs = RunList()
    runs.add(Run(1, "text", project_of("CharText")))
    panel = GeneratePanel(runs)
    qtbot.addWidget(panel)
    panel.resize(475, 290)
    panel.show()
    qtbot.waitExposed(panel)
    panel.status.setText("400 characters in 0.2 s on CPU, 3,179 characters/s; the model's own "
                         "surprise 1.87 nats a character")
    qtbot.wait(20)
    for widget in (panel.go, panel.stop_button, panel.status):
        seen = widget.visibleRegion().boundingRect()
        assert seen == widget.rect(), f"{widget!r} shows {seen} of {widget.rect()}"
