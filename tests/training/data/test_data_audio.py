"""WAV audio: any common encoding read to mono, quantised to classes, and written back."""
from __future__ import annotations

import struct
import sys

import numpy as np
import pytest
import soundfile as sf
import torch

from designer.training.data import DataError, open_source
from designer.training.data.audio import AudioSource, codec_to_wav
from designer.training.data.quantize import (Quantizer, mu_law_decode, mu_law_encode,
                                             uniform_decode, uniform_encode)
from designer.training.data.wavfile import read_header, read_wav
from tests.conftest import need_data
from tests.training.helpers import layer, one_sentence, refused, same_batches, save_and_load

RATE = 8000


def tone(frames=4000, channels=1, peak=0.8) -> np.ndarray:
    """A chirp with some noise: every class range gets used a little."""
    t = np.arange(frames) / RATE
    x = peak * np.sin(2 * np.pi * (200 + 300 * t) * t) * np.linspace(0.2, 1, frames)
    x += 0.01 * np.random.default_rng(0).standard_normal(frames)
    x = np.clip(x, -peak, peak)
    return x if channels == 1 else np.stack([x, -0.5 * x], axis=1)


def wav_layer(path, **params):
    return layer("WavAudio", file=str(path), **{"seq_len": 50, "batch_size": 4, **params})


def riff(fmt: bytes, data: bytes, declared: int | None = None) -> bytes:
    """A RIFF/WAVE file made by hand, its data chunk claiming ``declared`` bytes."""
    size = len(data) if declared is None else declared
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + \
        struct.pack("<I", size) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def pcm_fmt(tag=1, channels=1, bits=16, rate=RATE) -> bytes:
    align = channels * bits // 8
    return struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits)


# ----------------------------------------------------------------------------- encodings --
ENCODINGS = [("WAV", "PCM_U8", 1 / 128), ("WAV", "PCM_16", 1e-4), ("WAV", "PCM_24", 1e-6),
             ("WAV", "PCM_32", 1e-8), ("WAV", "FLOAT", 1e-7), ("WAV", "DOUBLE", 1e-12),
             ("WAVEX", "PCM_24", 1e-6), ("WAVEX", "FLOAT", 1e-7), ("RF64", "PCM_16", 1e-4)]


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("container, subtype, tolerance", ENCODINGS,
                         ids=[f"{c}-{s}" for c, s, _ in ENCODINGS])
@pytest.mark.parametrize("decoder", ["soundfile", "numpy"])
def test_every_pcm_and_float_encoding_reads_to_mono(tmp_path, container, subtype, tolerance,
                                                    channels, decoder):
    x = tone(channels=channels)
    path = tmp_path / "tone.wav"
    sf.write(path, x, RATE, subtype=subtype, format=container)
    wav = read_wav(path, use_soundfile=decoder == "soundfile")
    expected = x if channels == 1 else x.mean(axis=1)
    assert wav.rate == RATE and wav.channels == channels and wav.samples.dtype == np.float32
    assert np.abs(wav.samples - expected).max() <= tolerance + 1e-7
    assert (len(wav.notes) == 1 and "mixed to mono" in wav.notes[0]) == (channels == 2)


def test_big_endian_rifx_reads_with_both_decoders(tmp_path):
    path = tmp_path / "rifx.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16", endian="BIG")
    assert path.read_bytes()[:4] == b"RIFX"
    a, b = read_wav(path), read_wav(path, use_soundfile=False)
    assert np.array_equal(a.samples, b.samples)


def test_soundfile_encodings_beyond_pcm_are_read_when_it_is_there(tmp_path):
    path = tmp_path / "ulaw.wav"
    sf.write(path, tone(), RATE, subtype="ULAW")
    assert read_wav(path).encoding == "mu-law"
    with pytest.raises(DataError) as e:
        read_wav(path, use_soundfile=False)
    assert "without the soundfile package" in one_sentence(e.value, path)


def test_without_soundfile_the_numpy_decoder_gives_the_same_source(tmp_path, monkeypatch):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16")
    with_sf = open_source(wav_layer(path), seed=1)
    monkeypatch.setitem(sys.modules, "soundfile", None)       # import soundfile now fails
    without = open_source(wav_layer(path), seed=1)
    assert same_batches([with_sf.next_batch() for _ in range(3)],
                        [without.next_batch() for _ in range(3)])


# ------------------------------------------------------------------------------ bad files --
def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.wav"
    path.write_bytes(b"")
    refused(wav_layer(path), path, "is empty")


def test_a_file_that_is_not_a_wav_is_refused(tmp_path):
    path = tmp_path / "notes.wav"
    path.write_text("this is not audio\n" * 10)
    refused(wav_layer(path), path, "is not a WAV file", "RIFF/WAVE")


@pytest.mark.parametrize("decoder", [True, False])
def test_a_truncated_data_chunk_is_refused(tmp_path, decoder):
    path = tmp_path / "cut.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16")
    path.write_bytes(path.read_bytes()[:3000])
    with pytest.raises(DataError) as e:
        AudioSource(path, wav_layer(path).effective_params(), use_soundfile=decoder)
    text = one_sentence(e.value, path)
    assert "is truncated" in text and "declares 8,000 bytes" in text and "only 2,956" in text


def test_a_file_cut_inside_its_header_is_refused(tmp_path):
    path = tmp_path / "stub.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16")
    path.write_bytes(path.read_bytes()[:30])
    refused(wav_layer(path), path, "truncated")
    path.write_bytes(riff(pcm_fmt(), b"")[:36])          # a header and no data chunk at all
    refused(wav_layer(path), path, "has no data chunk")


def test_a_wav_without_samples_is_refused(tmp_path):
    path = tmp_path / "silent.wav"
    path.write_bytes(riff(pcm_fmt(), b""))
    refused(wav_layer(path), path, "holds no audio samples")


def test_a_silent_wav_is_refused(tmp_path):
    path = tmp_path / "zeros.wav"
    sf.write(path, np.zeros(2000), RATE, subtype="PCM_16")
    refused(wav_layer(path), path, "is silent")


@pytest.mark.parametrize("decoder", [True, False])
@pytest.mark.parametrize("tag, name", [(0x0055, "MPEG Layer 3"), (0x2000, "AC-3"),
                                       (0x1234, "format 0x1234")])
def test_an_unsupported_encoding_is_refused(tmp_path, tag, name, decoder):
    path = tmp_path / "odd.wav"
    path.write_bytes(riff(pcm_fmt(tag=tag), bytes(range(256)) * 8))
    with pytest.raises(DataError) as e:
        AudioSource(path, wav_layer(path).effective_params(), use_soundfile=decoder)
    text = one_sentence(e.value, path)
    assert "uses an audio encoding that cannot be read" in text and name in text
    assert f"0x{tag:04X}" in text and "convert it to 16-bit PCM" in text


def test_a_damaged_format_chunk_is_refused(tmp_path):
    path = tmp_path / "zero.wav"
    path.write_bytes(riff(pcm_fmt(channels=0), b"\0" * 100))
    refused(wav_layer(path), path, "damaged format chunk", "0 channels")


def test_float_samples_that_are_not_numbers_are_refused(tmp_path):
    path = tmp_path / "nan.wav"
    x = tone().astype(np.float32)
    x[10] = np.nan
    path.write_bytes(riff(pcm_fmt(tag=3, bits=32), x.tobytes()))
    refused(wav_layer(path), path, "not numbers")


def test_loud_float_samples_are_clipped_with_a_note(tmp_path):
    path = tmp_path / "loud.wav"
    x = (tone() * 2).astype(np.float32)
    path.write_bytes(riff(pcm_fmt(tag=3, bits=32), x.tobytes()))
    wav = read_wav(path, use_soundfile=False)
    assert wav.samples.max() == 1.0 and "were clipped" in wav.notes[0]


def test_a_missing_file_says_where_it_looked(tmp_path):
    refused(layer("WavAudio", file="nowhere.wav"), "nowhere.wav", "was not found",
            folder=tmp_path, project_dir=tmp_path)


def test_a_recording_shorter_than_one_sequence_is_refused(tmp_path):
    path = tmp_path / "blip.wav"
    sf.write(path, tone(frames=60), RATE, subtype="PCM_16")
    refused(wav_layer(path, seq_len=100, val_fraction=0.0), path, "too short", "60 samples")


# ---------------------------------------------------------------------------- quantising --
def test_mu_law_round_trips_within_half_a_step():
    x = np.random.default_rng(1).uniform(-1, 1, 100_000)
    classes = mu_law_encode(x)
    assert classes.min() >= 0 and classes.max() <= 255
    assert np.array_equal(mu_law_encode(mu_law_decode(np.arange(256))), np.arange(256))
    compand = lambda v: np.sign(v) * np.log1p(255 * np.abs(v)) / np.log1p(255)  # noqa: E731
    assert np.abs(compand(x) - compand(mu_law_decode(classes))).max() <= 1 / 255 + 1e-9
    assert np.abs(x - mu_law_decode(classes)).max() < 0.025
    small = np.linspace(-0.001, 0.001, 101)                  # fine steps near silence
    assert np.abs(small - mu_law_decode(mu_law_encode(small))).max() < 1e-4
    assert mu_law_encode(np.array([-1.0, 0.0, 1.0])).tolist() == [0, 128, 255]


def test_uniform_buckets_span_the_files_range_and_return_centres():
    x = np.random.default_rng(2).uniform(-0.3, 0.7, 10_000)
    q = Quantizer.for_samples("uniform_128", x)
    classes = q.encode(x)
    assert classes.min() == 0 and classes.max() == 127
    width = (x.max() - x.min()) / 128
    assert np.abs(x - q.decode(classes)).max() <= width / 2 + 1e-12
    assert np.array_equal(uniform_encode(uniform_decode(np.arange(128), -0.3, 0.7), -0.3, 0.7),
                          np.arange(128))
    assert Quantizer.from_dict(q.to_dict()) == q
    with pytest.raises(ValueError):
        q.decode([128])


@pytest.mark.parametrize("quantization, classes", [("mu_law_256", 256), ("uniform_128", 128)])
def test_generated_classes_become_a_wav_that_reads_back(tmp_path, quantization, classes):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16")
    source = open_source(wav_layer(path, quantization=quantization))
    assert source.num_classes == classes and source.vocab is None
    generated = torch.randint(0, classes, (3000,), generator=torch.Generator().manual_seed(0))
    out = source.to_wav(generated, tmp_path / "generated.wav")
    info = sf.info(out)
    assert (info.samplerate, info.channels, info.subtype, info.frames) == \
        (RATE, 1, "PCM_16", 3000)
    back = source.quantizer.encode(read_wav(out).samples)
    assert np.array_equal(back, generated.numpy())
    assert np.allclose(source.classes_to_samples(generated), source.quantizer.decode(generated))
    again = codec_to_wav(generated.tolist(), tmp_path / "again.wav", source.codec)
    assert again.read_bytes() == out.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.wav", "generated.wav",
                                                          "tone.wav"]


def test_to_wav_writes_nothing_when_it_cannot(tmp_path):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16")
    source = open_source(wav_layer(path))
    with pytest.raises(DataError) as e:
        source.to_wav([1, 2, 3], tmp_path / "no" / "such" / "out.wav")
    assert "cannot be written" in one_sentence(e.value, tmp_path / "no" / "such" / "out.wav")
    with pytest.raises(ValueError):
        source.to_wav([1, 2, 999], tmp_path / "out.wav")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tone.wav"]
    old = tmp_path / "keep.wav"
    old.write_bytes(b"old")
    with pytest.raises(ValueError):
        source.to_wav([-1], old)
    assert old.read_bytes() == b"old"


def test_class_histogram_entropy_is_the_unigram_baseline(tmp_path):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(), RATE, subtype="PCM_16")
    source = open_source(wav_layer(path, val_fraction=0.2))
    train = source.quantizer.encode(read_wav(path).samples)[:source.split_size("train")]
    p = np.bincount(train) / len(train)
    p = p[p > 0]
    assert source.class_histogram_entropy() == pytest.approx(float(-(p * np.log(p)).sum()))
    assert 0 < source.class_histogram_entropy() < np.log(256)


# ------------------------------------------------------------------------------- batches --
@pytest.mark.parametrize("batching", ["random", "stream"])
def test_audio_batches_are_reproducible_and_resumable(tmp_path, batching):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(frames=8000), RATE, subtype="PCM_16")
    params = dict(batching=batching, seq_len=40, batch_size=8)
    whole = open_source(wav_layer(path, **params), seed=4)
    expected = [whole.next_batch() for _ in range(25)]
    first = open_source(wav_layer(path, **params), seed=4)
    got = [first.next_batch() for _ in range(9)]
    resumed = open_source(wav_layer(path, **params), seed=4)
    resumed.load_state_dict(save_and_load(first.state_dict(), tmp_path))
    got += [resumed.next_batch() for _ in range(16)]
    assert same_batches(got, expected)
    assert resumed.carries_state == (batching == "stream")
    batch = expected[0]
    assert batch["data"].shape == (40, 8) and batch["data"].dtype == torch.int64
    assert batch["cont"].dtype == torch.float32 and torch.equal(batch["data"][1:],
                                                                batch["label"][:-1])


# ---------------------------------------------------------------------------- real audio --
@need_data("speech_8k.wav")
@pytest.mark.parametrize("quantization", ["mu_law_256", "uniform_128"])
def test_the_speech_file_opens_with_its_header_and_splits(quantization):
    # how fast it opens is bench_data_open.py's to record, not a unit test's
    source = open_source(layer("WavAudio", quantization=quantization), seed=0)
    assert source.kind == "audio" and source.sample_rate == 8000
    assert source.split_size("train") + source.split_size("val") == 1_404_893
    assert read_header(source.path).encoding == "16-bit PCM"
    line = source.describe()
    assert "speech_8k.wav" in line and "175.6 s" in line and "8,000 Hz" in line
    batch = source.next_batch()
    assert batch["data"].shape == (100, 32) and int(batch["data"].max()) < source.num_classes
    assert source.class_histogram_entropy() < np.log(source.num_classes)
