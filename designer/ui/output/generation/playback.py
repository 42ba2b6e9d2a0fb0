"""Playing generated audio, where the platform can.

Two backends, tried in this order:

- **sounddevice** (PortAudio), the ``audio`` extra: ``pip install 'rnn-designer[audio]'``.
  Small, plays the samples straight from memory; its wheels carry PortAudio on Windows and
  macOS, and on Linux it uses the system's (``libportaudio2``).
- **Qt Multimedia** (``QSoundEffect``), when PySide6-Addons happens to be installed (it comes
  with the full ``PySide6`` package); it plays the generated WAV file.

Nothing is imported until audio is first shown, so the window starts as fast without them.
When neither can play, :func:`support` says why in one sentence, for the Play button.
"""
from __future__ import annotations

import importlib

from PySide6.QtCore import QObject, QTimer, QUrl, Signal

EXTRA = "pip install 'rnn-designer[audio]'"


def _import_sounddevice():
    """The sounddevice module (a separate function, so tests can put a fake in its place)."""
    return importlib.import_module("sounddevice")


def _import_qt_multimedia():
    return importlib.import_module("PySide6.QtMultimedia")


def _find() -> tuple[str | None, object, str]:
    """``(backend name, module, why not)``: the first backend that can play here."""
    why = ""
    try:
        sd = _import_sounddevice()
    except ModuleNotFoundError:
        sd = None
    except OSError:  # the wheel is there, PortAudio is not (Linux)
        sd = None
        why = ("Playing sound through sounddevice needs the PortAudio library (on Debian or "
               "Ubuntu: sudo apt install libportaudio2); save the WAV meanwhile")
    except Exception as e:  # noqa: BLE001 - a broken install must not break the window
        sd = None
        why = f"sounddevice cannot be loaded ({e}); save the WAV instead"
    if sd is not None:
        try:
            sd.query_devices(kind="output")
            return "sounddevice", sd, ""
        except Exception:  # noqa: BLE001 - PortAudioError or ValueError: no output device
            why = "No audio output device was found; save the WAV instead"
    try:
        qtm = _import_qt_multimedia()
    except ImportError as e:
        if not why:
            if isinstance(e, ModuleNotFoundError):
                why = (f"Playing sound needs the audio extra ({EXTRA}); save the WAV and play "
                       "it with another program meanwhile")
            else:  # Qt Multimedia is installed but a system library it needs is not
                why = (f"Qt Multimedia cannot be loaded ({e}); install the audio extra "
                       f"({EXTRA}) or save the WAV")
        return None, None, why
    if not qtm.QMediaDevices.audioOutputs():
        return None, None, why or "No audio output device was found; save the WAV instead"
    return "qt", qtm, ""


class Player(QObject):
    """Plays one piece of audio at a time.

    Signals
    -------
    playing_changed(bool)
        Playback started or ended (by itself or by ``stop``).
    """

    playing_changed = Signal(bool)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._found: tuple | None = None
        self._effect = None
        self.playing = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self._set_playing(False))

    def support(self) -> tuple[bool, str]:
        """Whether sound can be played here, and if not, why (looked up once, when asked)."""
        if self._found is None:
            self._found = _find()
        name, _, why = self._found
        if name is None:
            return False, why
        via = "sounddevice" if name == "sounddevice" else "Qt Multimedia"
        return True, f"Play the generated audio (through {via})"

    @property
    def backend(self) -> str | None:
        """``sounddevice``, ``qt`` or ``None`` (nothing can play here)."""
        self.support()
        return self._found[0]

    def play(self, samples, rate: int, path: str | None = None) -> bool:
        """Start playing ``samples`` (floats in [-1, 1]) at ``rate``; ``path`` is the same
        audio as a WAV (Qt Multimedia plays files). False when nothing can play here."""
        ok, _ = self.support()
        if not ok:
            return False
        self.stop()
        name, module, _ = self._found
        if name == "sounddevice":
            import numpy as np
            module.play(np.asarray(samples, dtype=np.float32), int(rate))
            self._timer.start(int(1000 * len(samples) / rate) + 100)
        else:
            self._effect = module.QSoundEffect(self)
            self._effect.playingChanged.connect(
                lambda: self._set_playing(self._effect.isPlaying()))
            self._effect.setSource(QUrl.fromLocalFile(path))
            self._effect.play()
        self._set_playing(True)
        return True

    def stop(self) -> None:
        if not self.playing:
            return
        name, module, _ = self._found
        if name == "sounddevice":
            module.stop()
        elif self._effect is not None:
            self._effect.stop()
        self._timer.stop()
        self._set_playing(False)

    def _set_playing(self, on: bool) -> None:
        if on != self.playing:
            self.playing = on
            self.playing_changed.emit(on)
