"""Levels of generated audio, and the hints for near-silence and for text in a short loop."""
import math

import numpy as np
import pytest

from designer.training.trained.quality import (audio_hint, dbfs_text, is_near_silence, levels,
                                       text_hint, text_loop)

RNG = np.random.default_rng(0)
SPEECH = 0.09 * RNG.standard_normal(8000)                       # about -21 dBFS RMS
COLLAPSED = RNG.choice([0.0, 6e-5, -6e-5], size=8000)           # what mu-law silence decodes to


def test_levels_in_dbfs():
    lv = levels(np.array([0.5, -0.25, 0.0, 0.0]))
    assert lv.peak_dbfs == pytest.approx(-6.0206, abs=1e-3)
    assert lv.rms_dbfs == pytest.approx(20 * math.log10(math.sqrt(0.3125 / 4)), abs=1e-3)
    assert str(levels(np.zeros(10))) == "peak -inf dBFS, RMS -inf dBFS"
    assert levels([]).rms_dbfs == -math.inf and dbfs_text(-21.04) == "-21.0 dBFS"


def test_near_silence_by_level_by_share_of_the_training_audio_and_by_stuck_values():
    assert is_near_silence(COLLAPSED) and not is_near_silence(SPEECH)
    quiet = 0.001 * RNG.standard_normal(8000)                    # -60 dBFS
    assert is_near_silence(quiet)
    murmur = 0.004 * RNG.standard_normal(8000)                   # -48 dBFS: not silent...
    assert not is_near_silence(murmur)
    assert is_near_silence(murmur, reference_rms=0.09)           # ...but 4% of the speech
    assert not is_near_silence(SPEECH, reference_rms=0.09)
    offset = np.full(8000, 0.3)                                  # a constant is silent too
    assert is_near_silence(offset)
    square = np.tile([0.5, -0.5], 4000)                          # two values, loud: stuck
    assert is_near_silence(square) and not is_near_silence(square[:50])


def test_the_audio_hint_names_the_level_and_what_to_try():
    assert audio_hint([SPEECH], 1.0, 1.0) is None
    hint = audio_hint([COLLAPSED], 0.8, 1.0)
    assert hint.startswith("the model wrote near-silence (RMS -8") and \
        hint.endswith("; try temperature 1.0")
    assert audio_hint([COLLAPSED], 1.0, 1.0).endswith(" even at temperature 1.0; it may need "
                                                      "more training")
    assert "near-silence in stream 2 (RMS" in audio_hint([SPEECH, COLLAPSED], 0.8, 1.0)
    assert "in every stream" in audio_hint([COLLAPSED, COLLAPSED], 0.8, 1.0)
    some = [COLLAPSED, SPEECH, COLLAPSED, SPEECH, COLLAPSED]
    assert "near-silence in streams 1, 3 and 5 (RMS" in audio_hint(some, 0.8, 1.0)
    assert "near-silence in 4 of 5 streams (RMS" in audio_hint([SPEECH] + [COLLAPSED] * 4,
                                                               0.8, 1.0)


@pytest.mark.parametrize("text, unit", [
    ("Once upon a time the the the the the the the the", "the "),
    ("ROMEO:\n" + "\n" * 40, "\n"),
    ("KING: " + "my lord, my lord, " * 6, "my lord, "),
    ("It is the east, and Juliet is the sun. Arise, fair sun, and kill the envious moon.",
     None),
    ("abab", None),                                              # too short to call
    ("the " * 12 + "and then the story went on, as stories do, to its end.", None),
    ("Now: " + "".join(chr(65 + i % 26) for i in range(200)), "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
])
def test_a_short_loop_is_found_at_the_end_of_a_text(text, unit):
    assert text_loop(text) == unit


def test_a_period_longer_than_forty_characters_is_not_a_short_loop():
    verse = "Shall I compare thee to a summer's day, my love?\n"  # 49 characters
    assert text_loop(verse * 5) is None and text_loop(verse * 5, max_period=60) == verse


def test_the_text_hint_shows_the_loop_and_what_to_try():
    assert text_hint(["a fine, varied line of verse for the stage"], 0.8, 0.8) is None
    hint = text_hint(["so " + "the " * 30], 0.0, 0.8)
    assert hint == "the model repeats 'the ' over and over; try temperature 0.8"
    hint = text_hint(["a fine line", "\n" * 50], 0.8, 0.8)
    assert hint == ("the model repeats newlines over and over in stream 2; try a higher "
                    "temperature, or train it longer")
